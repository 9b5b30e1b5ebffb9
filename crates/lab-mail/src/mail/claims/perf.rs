//! `perf stat` blocks: `13,812,345,678      cycles   #  3.20 GHz`,
//! `1,234.56 msec task-clock`, `1.25 +- 0.01 seconds time elapsed`, with
//! `( +-  0.12% )` spreads from `-r`. Rows are keyed by event; the
//! derived figure after `#` is perf's arithmetic, not a measurement.

use super::Draft;
use super::lines::Line;
use super::numbers::{count_unit, parse_unit};
use super::tokens::{Convention, Tok, scan};
use crate::mail::model::{ClaimKind, Column, Row, Value};
use regex::Regex;
use std::sync::LazyLock;

static EVENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(<not counted>|<not supported>|[\d.,]*\d)(?:\s+\+-\s+(?P<sd>[\d.,]+))?\s+(msec\s+|seconds\s+)?(time elapsed|[A-Za-z][\w\-./:]*)\s*(?:#\s*([\d.,]+)\s*([^(]*?))?\s*(?:\(\s*\+-\s*([\d.,]+)%\s*\))?\s*(?:\(\d+[.,]\d+%\))?\s*$",
    )
    .expect("constant regex")
});
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Performance counter stats for (.*?)(?: \((\d+) runs\))?:\s*$")
        .expect("constant regex")
});

/// Whether a line is a `perf stat` event line (no other table's header).
pub fn is_event(text: &str) -> bool {
    text.trim_start().starts_with(|c: char| c.is_ascii_digit()) && EVENT.is_match(text)
}

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    // An event line starts with a count or `<not ...>`.
    let first = lines[i].text.trim_start();
    if !first.starts_with(|c: char| c.is_ascii_digit() || c == '<')
        || !EVENT.is_match(lines[i].text)
    {
        return None;
    }
    let header = (i > 0)
        .then(|| previous_nonblank(lines, i))
        .flatten()
        .and_then(|h| HEADER.captures(lines[h].text));
    let mut d = Draft::one_value(ClaimKind::PerfStat, &["event"], i);
    if let Some(h) = &header {
        d.caption = Some(caption(lines, i, h[0].trim()));
        d.conditions
            .insert("command".into(), h[1].trim_matches('\'').to_string());
        if let Some(runs) = h.get(2) {
            d.conditions.insert("runs".into(), runs.as_str().into());
        }
    }
    let mut j = i;
    let mut end = i;
    let mut hashes = 0;
    let mut any_derived = false;
    let window = &lines[i..lines.len().min(i + 64)];
    let conv = Convention::of(window.iter().map(|l| l.text));
    while j < lines.len() {
        if lines[j].is_blank() {
            j += 1;
            continue;
        }
        let Some(c) = EVENT.captures(lines[j].text) else {
            break;
        };
        hashes += usize::from(lines[j].text.contains('#') || lines[j].text.contains("+-"));
        let row = event_row(&c, conv, lines[j].no);
        any_derived |= matches!(row.values[1], Value::Number { .. });
        // `15.0577 +- 0.0728 seconds time elapsed`: the spread of `-r`
        // runs in the event's unit, a row of its own.
        let sd = c.name("sd").and_then(|m| number(m.as_str(), conv));
        let sd_row = sd.map(|v| Row {
            keys: vec![format!("{} +-", row.keys[0])],
            unit: row.unit.clone(),
            values: vec![
                Value::Number {
                    value: v,
                    unit: None,
                    spread_pct: None,
                },
                Value::Missing,
            ],
            line: row.line,
        });
        d.rows.push(row);
        d.rows.extend(sd_row);
        j += 1;
        end = j;
        // A line wrapped after the event (`utilized`, `cycle (83,27%)`,
        // `( +-  0.15% )  (85.93%)`) belongs to it, with its spread; a
        // wrapped `#  0.32  stalled` is one more derived figure.
        while let Some(l) = lines.get(j) {
            if let Some(t) = wrapped_tail(l.text) {
                if let (Some(spread), Some(row)) =
                    (t.and_then(|s| number(s, conv)), d.rows.last_mut())
                    && let Some(Value::Number { spread_pct, .. }) = row.values.first_mut()
                {
                    *spread_pct = Some(spread);
                }
            } else if let Some(c) = WRAPPED_DERIVED.captures(l.text)
                && let Some(v) = number(&c[1], conv)
            {
                let event = d.rows.last().map_or(String::new(), |r| r.keys[0].clone());
                d.rows.push(Row {
                    keys: vec![format!("{event} # {}", c[2].trim())],
                    unit: None,
                    values: vec![
                        Value::Missing,
                        Value::Number {
                            value: v,
                            unit: None,
                            spread_pct: None,
                        },
                    ],
                    line: l.no,
                });
                any_derived = true;
            } else {
                break;
            }
            j += 1;
            end = j;
        }
    }
    d.end = end;
    if any_derived {
        d.columns.push(Column {
            name: "derived (#)".into(),
            unit: None,
        });
    } else {
        d.rows.iter_mut().for_each(|r| {
            r.values.truncate(1);
        });
    }
    // Without perf's header, two lines of `value  name  # ...` make it.
    (header.is_some() || (d.rows.len() >= 2 && hashes >= 2)).then_some(d)
}

/// One event line as a row: its count (with a `( +- x% )` spread) and
/// perf's arithmetic after `#` (`1,705 GHz`, `0,35 insn per cycle`), in
/// a column of its own, with the unit it names.
fn event_row(c: &regex::Captures, conv: Convention, no: usize) -> Row {
    let unit = match c.get(3).map(|m| m.as_str().trim()) {
        Some("msec") => parse_unit("msec"),
        Some(_) => parse_unit("seconds"),
        None => Some(count_unit("")),
    };
    let spread = c.get(7).and_then(|s| number(s.as_str(), conv));
    let value = match number(&c[1], conv) {
        Some(v) => Value::Number {
            value: v,
            unit: None,
            spread_pct: spread,
        },
        None => Value::NotApplicable,
    };
    let derived = match c.get(5).and_then(|m| number(m.as_str(), conv)) {
        Some(v) => Value::Number {
            value: v,
            unit: c.get(6).and_then(|w| {
                let w = w.as_str().trim();
                parse_unit(w).or_else(|| parse_unit(w.split_whitespace().next()?))
            }),
            spread_pct: None,
        },
        None => Value::Missing,
    };
    Row {
        keys: vec![c[4].to_string()],
        unit,
        values: vec![value, derived],
        line: no,
    }
}

/// A number of the block, in its convention.
fn number(text: &str, conv: Convention) -> Option<f64> {
    match scan(text.trim(), conv).first()? {
        Tok::Num(n) => Some(n.value),
        Tok::Word { .. } => None,
    }
}

/// `#    0.32  stalled`: perf's arithmetic wrapped onto a line alone.
static WRAPPED_DERIVED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*#\s*([\d.,]+)\s+(\S.*?)\s*$").expect("constant regex"));

/// The end of a wrapped event line: words, the `( +- x% )` spread and
/// perf's multiplexing share, no count. Some(the spread) when it is one.
fn wrapped_tail(text: &str) -> Option<Option<&str>> {
    static TAIL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:[A-Za-z][\w -]*?)?\s*(?:\(\s*\+-\s*([\d.,]+)%\s*\))?\s*(?:\(\d+[.,]\d+%\))?\s*$")
            .expect("constant regex")
    });
    let t = text.trim();
    if t.is_empty()
        || !(t.ends_with("%)") || t.ends_with("% )") || t.split_whitespace().count() <= 3)
    {
        return None;
    }
    TAIL.captures(text).map(|c| c.get(1).map(|m| m.as_str()))
}

fn previous_nonblank(lines: &[Line], i: usize) -> Option<usize> {
    (i.saturating_sub(2)..i)
        .rev()
        .find(|&k| !lines[k].is_blank())
}

/// perf's header line, after the short line above it (`Before:`).
fn caption(lines: &[Line], i: usize, header: &str) -> String {
    let above = previous_nonblank(lines, i)
        .and_then(|h| previous_nonblank(lines, h))
        .map(|p| lines[p].text.trim())
        .filter(|t| t.ends_with(':') && t.split_whitespace().count() <= 4);
    match above {
        Some(a) => format!("{a} {header}"),
        None => header.to_string(),
    }
}
