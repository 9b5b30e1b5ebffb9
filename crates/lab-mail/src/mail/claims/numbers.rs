//! Numbers and units as mails write them: `13.3k`, `4.17M`, `1,234,567`,
//! `13.8e9`, `12.5%`, `± 3%`, `3151us`, `250 k IOPS`.
//!
//! Multipliers are applied by moving the decimal point in the digits,
//! never by float multiplication, so `4.17M` is exactly 4170000.

use crate::mail::model::{Unit, UnitKind, Value};
use regex::Regex;
use std::sync::LazyLock;

/// The unit a word names, or None. Accepts the spellings mails use:
/// `usec`, `µs`, `KiB/s`, `k IOPS`, `KIOPS`, `ops/s`, `%`, `MBps`.
pub fn parse_unit(word: &str) -> Option<Unit> {
    let w = word.trim();
    // The longest spelling is `microseconds`: a longer word is no unit.
    if w.is_empty() || w.len() > 16 {
        return None;
    }
    let squeezed: String = w.split_whitespace().collect();
    let lower = squeezed.to_lowercase();
    let (symbol, kind, scale): (&str, UnitKind, f64) = match lower.as_str() {
        "ns" | "nsec" | "nsecs" | "nanoseconds" => ("ns", UnitKind::Time, 1.0),
        "us" | "usec" | "usecs" | "µs" | "μs" | "microseconds" => ("us", UnitKind::Time, 1e3),
        "ms" | "msec" | "msecs" | "milliseconds" => ("ms", UnitKind::Time, 1e6),
        "s" | "sec" | "secs" | "seconds" | "second" => ("s", UnitKind::Time, 1e9),
        "min" | "mins" | "minutes" => ("min", UnitKind::Time, 60e9),
        "iops" => ("IOPS", UnitKind::Rate, 1.0),
        "kiops" => ("KIOPS", UnitKind::Rate, 1e3),
        "miops" => ("MIOPS", UnitKind::Rate, 1e6),
        "ops/s" | "op/s" | "ops/sec" | "ops" | "qps" | "/s" => ("ops/s", UnitKind::Rate, 1.0),
        "kops/s" | "kops" => ("kops/s", UnitKind::Rate, 1e3),
        "%" | "percent" => ("%", UnitKind::Percent, 1.0),
        "count" | "counts" | "events" => ("count", UnitKind::Count, 1.0),
        "hz" => ("Hz", UnitKind::Frequency, 1.0),
        "khz" => ("kHz", UnitKind::Frequency, 1e3),
        "mhz" => ("MHz", UnitKind::Frequency, 1e6),
        "ghz" => ("GHz", UnitKind::Frequency, 1e9),
        _ => return throughput(&squeezed, w).or_else(|| per_second(&lower, w)),
    };
    Some(Unit {
        written: w.to_string(),
        symbol: symbol.into(),
        kind,
        scale,
    })
}

/// `KB/s`, `kB/s`, `KiB/s`, `MB/s`, `MiB/s`, `GB/s`, `MB/sec`, `MBps`.
/// `KB` is taken as 1000 bytes, as fio's `kB` is.
fn throughput(squeezed: &str, written: &str) -> Option<Unit> {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([kKMGT]?)(i?)B(?:/s|/sec|ps)$").expect("constant regex"));
    let c = RE.captures(squeezed)?;
    let binary = !c[2].is_empty();
    let (prefix, power) = match &c[1] {
        "" => ("", 0),
        "k" | "K" => (if binary { "Ki" } else { "k" }, 1),
        "M" => (if binary { "Mi" } else { "M" }, 2),
        "G" => (if binary { "Gi" } else { "G" }, 3),
        _ => (if binary { "Ti" } else { "T" }, 4),
    };
    if binary && power == 0 {
        return None;
    }
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    Some(Unit {
        written: written.to_string(),
        symbol: known_symbol(format!("{prefix}B/s")),
        kind: UnitKind::Throughput,
        scale: base.powi(power),
    })
}

/// `calls/s`, `req/s`, `flushes/sec`: things per second, a rate.
fn per_second(lower: &str, written: &str) -> Option<Unit> {
    let thing = lower
        .strip_suffix("/s")
        .or_else(|| lower.strip_suffix("/sec"))?;
    // perf's `K/sec`, `M/sec`: thousands or millions a second.
    let (symbol, scale) = match thing {
        "k" => ("kops/s", 1e3),
        "m" => ("Mops/s", 1e6),
        "g" => ("Gops/s", 1e9),
        _ => ("ops/s", 1.0),
    };
    let word = thing.len() >= 2 || scale > 1.0;
    let word = word && thing.len() <= 12 && thing.chars().all(|c| c.is_ascii_lowercase());
    word.then(|| Unit {
        written: written.to_string(),
        symbol: symbol.into(),
        kind: UnitKind::Rate,
        scale,
    })
}

/// The plain count unit, for perf stat events.
pub fn count_unit(written: &str) -> Unit {
    Unit {
        written: written.to_string(),
        symbol: "count".into(),
        kind: UnitKind::Count,
        scale: 1.0,
    }
}

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
    let m = NUMBER.find(s)?;
    let digits = m.as_str().replace(',', "");
    let rest = &s[m.end()..];
    if let Some((power, tail)) = multiplier(rest)
        && !digits.contains(['e', 'E'])
    {
        return Some((shift(&digits, power)?, tail, m.end()));
    }
    Some((finite(&digits)?, rest, m.end()))
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

/// `3%` → 3.
fn spread_of(s: &str) -> Option<f64> {
    let s = s.trim().strip_suffix('%')?.trim();
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn unit_words() {
        let u = |w: &str| parse_unit(w).map(|u| (u.symbol, u.kind, u.scale));
        assert_eq!(u("usec"), Some(("us".into(), UnitKind::Time, 1e3)));
        assert_eq!(u("µs"), Some(("us".into(), UnitKind::Time, 1e3)));
        assert_eq!(u("ns"), Some(("ns".into(), UnitKind::Time, 1.0)));
        assert_eq!(u("ms"), Some(("ms".into(), UnitKind::Time, 1e6)));
        assert_eq!(u("s"), Some(("s".into(), UnitKind::Time, 1e9)));
        assert_eq!(u("KB/s"), Some(("kB/s".into(), UnitKind::Throughput, 1e3)));
        assert_eq!(u("kB/s"), Some(("kB/s".into(), UnitKind::Throughput, 1e3)));
        assert_eq!(
            u("KiB/s"),
            Some(("KiB/s".into(), UnitKind::Throughput, 1024.0))
        );
        assert_eq!(u("MB/s"), Some(("MB/s".into(), UnitKind::Throughput, 1e6)));
        assert_eq!(
            u("MiB/s"),
            Some(("MiB/s".into(), UnitKind::Throughput, 1048576.0))
        );
        assert_eq!(u("GB/s"), Some(("GB/s".into(), UnitKind::Throughput, 1e9)));
        assert_eq!(u("MBps"), Some(("MB/s".into(), UnitKind::Throughput, 1e6)));
        assert_eq!(u("IOPS"), Some(("IOPS".into(), UnitKind::Rate, 1.0)));
        assert_eq!(u("k IOPS"), Some(("KIOPS".into(), UnitKind::Rate, 1e3)));
        assert_eq!(u("KIOPS"), Some(("KIOPS".into(), UnitKind::Rate, 1e3)));
        assert_eq!(u("ops/s"), Some(("ops/s".into(), UnitKind::Rate, 1.0)));
        assert_eq!(u("%"), Some(("%".into(), UnitKind::Percent, 1.0)));
        assert_eq!(u("GHz"), Some(("GHz".into(), UnitKind::Frequency, 1e9)));
        assert_eq!(u("bogus"), None);
        assert_eq!(u("B"), None);
        assert_eq!(parse_unit("usec").unwrap().written, "usec");
    }
}

/// A symbol built from parts, borrowed when it is a known one.
fn known_symbol(s: String) -> std::borrow::Cow<'static, str> {
    const KNOWN: [&str; 11] = [
        "B/s", "kB/s", "KB/s", "MB/s", "GB/s", "TB/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "KB/s",
    ];
    match KNOWN.iter().find(|k| **k == s) {
        Some(k) => std::borrow::Cow::Borrowed(k),
        None => std::borrow::Cow::Owned(s),
    }
}
