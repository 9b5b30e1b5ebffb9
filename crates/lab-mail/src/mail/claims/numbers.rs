//! Numbers and units as mails write them: `13.3k`, `4.17M`, `1,234,567`,
//! `13.8e9`, `12.5%`, `± 3%`, `3151us`, `250 k IOPS`.
//!
//! Multipliers are applied by moving the decimal point in the digits,
//! never by float multiplication, so `4.17M` is exactly 4170000.

use crate::mail::model::{Unit, Value};
pub use crate::units::{count_unit, parse_unit};
use regex::Regex;
use std::sync::LazyLock;

static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
        .expect("constant regex")
});

/// A number at the start of `s`, the rest after it, and the end of the
/// bare number (before any multiplier). Commas between thousands are
/// dropped, and a `k`, `K`, `M`, `G` right after the digits (with no
/// letter after it) scales it exactly.
fn number_prefix(s: &str) -> Option<(f64, &str, usize)> {
    // Most cells are words: no regex search for them.
    if !s
        .trim_start_matches(['+', '-', '.'])
        .starts_with(|c: char| c.is_ascii_digit())
    {
        return None;
    }
    let end = number_len(s)?;
    let written = &s[..end];
    let digits: std::borrow::Cow<str> = match written.contains(',') {
        true => written.replace(',', "").into(),
        false => written.into(),
    };
    let rest = &s[end..];
    if let Some((power, tail)) = multiplier(rest)
        && !digits.contains(['e', 'E'])
    {
        return Some((shift(&digits, power)?, tail, end));
    }
    Some((finite(&digits)?, rest, end))
}

/// The length of the number [`NUMBER`] finds at the start of `s`. A
/// cell is read by hand, byte by byte, as the pattern reads it: the
/// pattern's search costs hundreds of instructions to start, and
/// numbers are read half a million times in a 4 MB message. Text that
/// is not ASCII goes to the pattern, whose `\d` takes any script's
/// digits.
fn number_len(s: &str) -> Option<usize> {
    if !s.is_ascii() {
        return NUMBER.find(s).map(|m| m.end());
    }
    let b = s.as_bytes();
    let digits_from = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let sign = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let lead = digits_from(sign);
    let mut i = sign + lead;
    // `1,234,567`: one to three digits, then groups of a comma and three.
    let group_at = |i: usize| b.get(i) == Some(&b',') && digits_from(i + 1) >= 3;
    if (1..=3).contains(&lead) && group_at(i) {
        while group_at(i) {
            i += 4;
        }
    }
    if lead > 0 {
        if b.get(i) == Some(&b'.') && digits_from(i + 1) > 0 {
            i += 1 + digits_from(i + 1);
        }
    } else if b.get(i) == Some(&b'.') && digits_from(i + 1) > 0 {
        i += 1 + digits_from(i + 1);
    } else {
        return None;
    }
    // `5.727e+09`: an exponent, when digits follow.
    if matches!(b.get(i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let n = digits_from(i + 1 + sign);
        if n > 0 {
            i += 1 + sign + n;
        }
    }
    Some(i)
}

/// The number the digits write, when an f64 holds it: `1e999` would be
/// infinite and `1e-400` would read as 0, so neither is a number.
pub fn finite(digits: &str) -> Option<f64> {
    let v: f64 = digits.parse().ok()?;
    let zero_written = digits
        .split(['e', 'E'])
        .next()
        .is_some_and(|m| m.bytes().all(|b| !(b'1'..=b'9').contains(&b)));
    (v.is_finite() && (v != 0.0 || zero_written)).then_some(v)
}

/// `k` → 3 decimal places, when no letter follows (`4KiB` is a unit).
fn multiplier(rest: &str) -> Option<(usize, &str)> {
    let mut chars = rest.chars();
    let power = match chars.next()? {
        'k' | 'K' => 3,
        'M' => 6,
        'G' => 9,
        'T' => 12,
        _ => return None,
    };
    let tail = chars.as_str();
    let next = tail.chars().next();
    let ok = next.is_none_or(|c| !c.is_alphanumeric())
        || (next == Some(' ') || tail.starts_with("IOPS") || tail.starts_with("iops"));
    ok.then_some((power, tail))
}

/// `digits` × 10^power, by moving the decimal point in the text.
fn shift(digits: &str, power: usize) -> Option<f64> {
    let (sign, unsigned) = match digits.strip_prefix(['+', '-']) {
        Some(u) => (&digits[..1], u),
        None => ("", digits),
    };
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let mut frac = frac.to_string();
    while frac.len() < power {
        frac.push('0');
    }
    let (moved, rest) = frac.split_at(power);
    format!("{sign}{int}{moved}.{rest}0").parse().ok()
}

/// What a table cell holds.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A number; `plain` when it had no multiplier, unit or spread.
    Number {
        value: f64,
        unit: Option<Unit>,
        spread_pct: Option<f64>,
        plain: bool,
    },
    /// `N/A`, `n/a`, `-`.
    NotApplicable,
    Text,
}

impl Cell {
    pub fn is_number(&self) -> bool {
        matches!(self, Cell::Number { .. })
    }

    /// The cell as a claimed value; text is Missing.
    pub fn value(&self) -> Value {
        match self {
            Cell::Number {
                value,
                unit,
                spread_pct,
                ..
            } => Value::Number {
                value: *value,
                unit: unit.clone(),
                spread_pct: *spread_pct,
            },
            Cell::NotApplicable => Value::NotApplicable,
            Cell::Text => Value::Missing,
        }
    }
}

/// A cell: a number with an optional unit and `± x%` spread, a
/// not-applicable mark, or text.
pub fn parse_cell(raw: &str) -> Cell {
    const NA: [&str; 8] = ["-", "--", "—", "–", "n/a", "na", "?", "n.a."];
    let cell = raw.trim();
    if NA.iter().any(|na| cell.eq_ignore_ascii_case(na)) {
        return Cell::NotApplicable;
    }
    // `~32%`, `≈1.2M`: an approximate number is still the cell's value.
    if let Some(rest) = cell.strip_prefix(['~', '≈'])
        && let c @ Cell::Number { .. } = parse_cell(rest)
    {
        return c;
    }
    // `_556879872_`: a cell of a table drawn with underscores, padded
    // with them (a symbol such as `_raw_spin_lock` is no number inside).
    if cell.starts_with('_') || cell.ends_with('_') {
        let inner = cell.trim_matches('_').trim();
        if !inner.is_empty()
            && inner.len() < cell.len()
            && let c @ Cell::Number { .. } = parse_cell(inner)
        {
            return c;
        }
    }
    // `143 000`, `275 456 KiB/s`: groups of three digits set apart by
    // a space (or a no-break or thin one) are one number.
    if let Some(joined) = spaced_thousands(cell) {
        return parse_cell(&joined);
    }
    if let Some(secs) = clock_secs(cell) {
        return Cell::Number {
            value: secs,
            unit: parse_unit("s"),
            spread_pct: None,
            plain: false,
        };
    }
    // `(+8%)`, `(-1.5 ms)`: a change in brackets. A bare `(2)` is a
    // footnote mark.
    if let Some(inner) = cell.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
        return match parse_cell(inner) {
            c @ Cell::Number { plain: false, .. } => c,
            _ => Cell::Text,
        };
    }
    // `74.4%%`: a doubled percent sign is a typo for one.
    if let Some(single) = cell.strip_suffix("%%") {
        return parse_cell(&format!("{single}%"));
    }
    // `+ 4.5%`, `- 12 ms`: a sign set apart from its number.
    if let Some(sign) = cell.chars().next().filter(|c| *c == '+' || *c == '-')
        && let Some(rest) = cell[1..].strip_prefix(' ')
        && rest.trim_start().starts_with(|c: char| c.is_ascii_digit())
    {
        return parse_cell(&format!("{sign}{}", rest.trim_start()));
    }
    let spread_mark = || cell.split_once('±').or_else(|| cell.split_once("+-"));
    let (main, spread) = match (cell.contains(['±', '+'])).then(spread_mark).flatten() {
        Some((m, s)) => match spread_of(s) {
            Some(p) => (m.trim(), Some(p)),
            None => return Cell::Text,
        },
        None => (cell, None),
    };
    let Some((value, rest, number_end)) = number_prefix(main) else {
        return Cell::Text;
    };
    let plain = spread.is_none() && number_end == main.len();
    let rest = rest.trim();
    let unit = if rest.is_empty() {
        None
    } else {
        match parse_unit(rest) {
            Some(u) => Some(u),
            None => return Cell::Text,
        }
    };
    Cell::Number {
        value,
        unit,
        spread_pct: spread,
        plain,
    }
}

/// `143 000 IOPS` as `143000 IOPS`: None unless the cell opens with
/// such digit groups.
fn spaced_thousands(cell: &str) -> Option<String> {
    static GROUPS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^([+-]?\d{1,3}(?:[ \u{a0}\u{2009}\u{202f}]\d{3})+)(?:$|[^\d])")
            .expect("constant regex")
    });
    // Most cells hold no space between digits: look before the regex.
    let b = cell.as_bytes();
    if !b
        .first()
        .is_some_and(|c| c.is_ascii_digit() || *c == b'+' || *c == b'-')
        || !cell.contains([' ', '\u{a0}', '\u{2009}', '\u{202f}'])
    {
        return None;
    }
    let m = GROUPS.captures(cell)?.get(1)?;
    let digits: String = m.as_str().chars().filter(|c| !c.is_whitespace()).collect();
    Some(format!("{digits}{}", &cell[m.end()..]))
}

/// A duration on a clock face, `0:02.04` (m:ss) or `1:02:03.5`
/// (h:mm:ss), as `time` prints it: seconds. Only with a fraction of a
/// second: `12:00:01` is as likely a time of day (sar's rows).
pub(super) fn clock_secs(cell: &str) -> Option<f64> {
    static CLOCK: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(\d{1,3}):([0-5]\d)(?::([0-5]\d))?(\.\d{1,9})$")
            .expect("constant regex")
    });
    // Most cells are no clock: look for its colon before the regex.
    if !cell.starts_with(|c: char| c.is_ascii_digit()) || !cell.bytes().take(4).any(|b| b == b':') {
        return None;
    }
    let c = CLOCK.captures(cell)?;
    let n = |i: usize| {
        c.get(i)
            .map_or(Some(0.0), |m| m.as_str().parse::<f64>().ok())
    };
    // The seconds with their fraction as written, so `0:01.39` is 1.39,
    // not 1 + 0.39.
    let secs = |i: usize| format!("{}{}", &c[i], &c[4]).parse::<f64>().ok();
    Some(match c.get(3) {
        Some(_) => n(1)? * 3600.0 + n(2)? * 60.0 + secs(3)?,
        None => n(1)? * 60.0 + secs(2)?,
    })
}

/// `3%` → 3.
fn spread_of(s: &str) -> Option<f64> {
    let s = s.trim().strip_suffix('%')?.trim();
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand reading finds what the pattern finds, on every string
    /// of up to five characters from the pattern's alphabet and more.
    #[test]
    fn number_len_reads_as_the_pattern() {
        let alphabet = ['1', '0', ',', '.', 'e', '+', '-', 'k', ' '];
        let mut words = vec![String::new()];
        for _ in 0..5 {
            let longer: Vec<String> = words
                .iter()
                .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                .collect();
            words.extend(longer);
        }
        words.extend(
            [
                "1,234,567.89e-3",
                "12,3456",
                "1234,567",
                "1,23",
                "٣",
                "1٣",
                "-.5E+2x",
            ]
            .map(String::from),
        );
        for w in &words {
            assert_eq!(number_len(w), NUMBER.find(w).map(|m| m.end()), "{w:?}");
        }
    }

    fn num(s: &str) -> (f64, Option<String>, Option<f64>) {
        match parse_cell(s) {
            Cell::Number {
                value,
                unit,
                spread_pct,
                ..
            } => (value, unit.map(|u| u.symbol.into_owned()), spread_pct),
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn clock_durations_are_seconds_and_times_of_day_are_not() {
        assert_eq!(num("0:02.04").0, 2.04);
        assert!((num("1:02:03.5").0 - 3723.5).abs() < 1e-9);
        assert_eq!(num("0:13.45").1.as_deref(), Some("s"));
        assert!(!matches!(parse_cell("12:00:01"), Cell::Number { value, .. } if value > 43000.0));
    }

    #[test]
    fn multipliers_scale_exactly_in_decimal() {
        assert_eq!(num("4.17M").0, 4170000.0);
        assert_eq!(num("13.3k").0, 13300.0);
        assert_eq!(num("1.2G").0, 1200000000.0);
        assert_eq!(num("13.8e9").0, 13800000000.0);
        assert_eq!(num("1,234,567").0, 1234567.0);
        assert_eq!(num("-0.5K").0, -500.0);
        assert_eq!(num("0.001M").0, 1000.0);
    }

    #[test]
    fn units_and_spreads() {
        assert_eq!(num("12.5%"), (12.5, Some("%".into()), None));
        assert_eq!(num("123456 ± 3%"), (123456.0, None, Some(3.0)));
        assert_eq!(num("3151us"), (3151.0, Some("us".into()), None));
        assert_eq!(num("250 k IOPS"), (250.0, Some("KIOPS".into()), None));
        assert_eq!(num("120k IOPS"), (120000.0, Some("IOPS".into()), None));
        assert_eq!(num("1000KiB/s"), (1000.0, Some("KiB/s".into()), None));
        assert_eq!(parse_cell("N/A"), Cell::NotApplicable);
        assert_eq!(parse_cell("n/a"), Cell::NotApplicable);
        assert_eq!(parse_cell("-"), Cell::NotApplicable);
        assert_eq!(parse_cell("4864671c2222f"), Cell::Text);
        assert_eq!(parse_cell("6.12.117"), Cell::Text);
        assert_eq!(parse_cell("v6"), Cell::Text);
        // Out of f64's range: no silent infinity, no silent zero.
        assert_eq!(parse_cell("1e999"), Cell::Text);
        assert_eq!(parse_cell("1e-400"), Cell::Text);
        assert_eq!(num("0.0").0, 0.0);
        assert_eq!(num("0e5").0, 0.0);
        // A sign set apart from its number.
        assert_eq!(num("+ 4.5%"), (4.5, Some("%".into()), None));
        assert_eq!(num("- 12 ms"), (-12.0, Some("ms".into()), None));
        assert_eq!(parse_cell("+ x"), Cell::Text);
    }
}
