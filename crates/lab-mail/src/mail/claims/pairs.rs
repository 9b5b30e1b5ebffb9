//! Lines made of `Label: value` pairs and nothing else, one line a row:
//! `T: 0 ( 2460) P:95 I:1000 C:  49161 Min:      1 Act:    2 Avg:    2`.
//! Each label is a column. Over several lines with the same labels, a
//! first label whose whole numbers differ on every line numbers the rows
//! (a thread, a run), so it is their key; a label whose whole number is
//! the same on every line ahead of any that varies is what the rows
//! were run with (a priority, an interval), so it is a condition.

use super::Draft;
use super::lines::Line;
use super::numbers::{Cell, parse_cell, parse_unit};
use crate::mail::model::{ClaimKind, Column, Row, Unit, Value};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One label and the numbers after it: the first is its value, any
/// more (in brackets) are notes to it.
struct Pair {
    label: String,
    numbers: Vec<(f64, Option<Unit>, bool)>,
}

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let first = pairs(lines[i].text, 2)?;
    let labels: Vec<String> = first.iter().map(|p| p.label.clone()).collect();
    let labels: Vec<&str> = labels.iter().map(String::as_str).collect();
    let mut rows: Vec<(usize, Vec<Pair>)> = vec![(lines[i].no, first)];
    let mut j = i + 1;
    let mut end = j;
    while j < lines.len() {
        let text = lines[j].text.trim();
        // `[...]`: rows the author left out.
        if matches!(text, "[...]" | "..." | "…" | "[…]") {
            j += 1;
            continue;
        }
        match pairs(text, 2) {
            Some(p)
                if p.iter()
                    .map(|p| p.label.as_str())
                    .eq(labels.iter().copied()) =>
            {
                rows.push((lines[j].no, p));
                j += 1;
                end = j;
            }
            _ => break,
        }
    }
    // Two pairs on a line are common in prose (`Note: see this: ...`);
    // only three lines in a row with the same two labels are a table.
    if labels.len() < 3 && rows.len() < 3 {
        return None;
    }
    let mut d = build(&labels, rows);
    d.start = i;
    d.end = end;
    Some(d)
}

fn build(labels: &[&str], rows: Vec<(usize, Vec<Pair>)>) -> Draft {
    let whole = |p: &Pair| p.numbers.first().filter(|n| n.2).map(|n| n.0);
    let column = |k: usize| rows.iter().map(move |(_, r)| whole(&r[k]));
    let many = rows.len() >= 2;
    // A first label numbering the rows: whole numbers, all different.
    let keyed = many && {
        let v: Option<Vec<f64>> = column(0).collect();
        v.is_some_and(|v| {
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            s.dedup();
            s.len() == v.len()
        })
    };
    // Settings come before results: only the constants ahead of the
    // first number that varies are conditions (`Min: 1` on every line
    // after `C:` is still a result).
    let mut varied = false;
    let constant: Vec<bool> = (0..labels.len())
        .map(|k| {
            if k == 0 && keyed {
                return false;
            }
            let v: Option<Vec<f64>> = column(k).collect();
            let same = many && v.is_some_and(|v| v[0] != 0.0 && v.iter().all(|x| *x == v[0]));
            varied |= !same;
            same && !varied
        })
        .collect();
    let mut d = Draft {
        kind: Some(ClaimKind::Table),
        key_columns: vec![if keyed { labels[0] } else { "key" }.to_string()],
        ..Draft::default()
    };
    let kept: Vec<usize> = (usize::from(keyed)..labels.len())
        .filter(|&k| !constant[k])
        .collect();
    let width: Vec<usize> = kept
        .iter()
        .map(|&k| {
            rows.iter()
                .map(|(_, r)| r[k].numbers.len())
                .max()
                .unwrap_or(1)
        })
        .collect();
    for (&k, &w) in kept.iter().zip(&width) {
        for n in 1..=w {
            d.columns.push(Column {
                name: if n == 1 {
                    labels[k].to_string()
                } else {
                    format!("{} ({n})", labels[k])
                },
                unit: None,
            });
        }
    }
    let mut conditions = BTreeMap::new();
    for (k, _) in constant.iter().enumerate().filter(|(_, c)| **c) {
        if let Some((_, r)) = rows.first() {
            conditions.insert(labels[k].to_string(), r[k].numbers[0].0.to_string());
        }
    }
    d.conditions = conditions;
    for (no, r) in rows {
        let key = if keyed {
            let p = &r[0];
            let notes: Vec<String> = p.numbers[1..].iter().map(|n| n.0.to_string()).collect();
            match notes.is_empty() {
                true => p.numbers[0].0.to_string(),
                false => format!("{} ({})", p.numbers[0].0, notes.join(", ")),
            }
        } else {
            String::new()
        };
        let mut values = Vec::new();
        for (&k, &w) in kept.iter().zip(&width) {
            for n in 0..w {
                values.push(r[k].numbers.get(n).map_or(Value::Missing, |(v, u, _)| {
                    Value::Number {
                        value: *v,
                        unit: u.clone(),
                        spread_pct: None,
                    }
                }));
            }
        }
        d.rows.push(Row {
            keys: vec![key],
            unit: None,
            values,
            line: no,
        });
    }
    d
}

/// The line as `min` or more `Label: value` pairs, with nothing before
/// the first label and nothing but numbers, their units and brackets
/// after each; else None.
fn pairs(text: &str, min: usize) -> Option<Vec<Pair>> {
    static LABEL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|\s)([A-Za-z][\w%/.-]{0,23}):(?:\s|\d|$)").expect("constant regex")
    });
    let text = text.trim();
    // Cheap refusals first: most lines have fewer colons.
    if text.bytes().filter(|&b| b == b':').count() < min {
        return None;
    }
    if let Some(gapped) = gapped_pairs(text, min) {
        return Some(gapped);
    }
    let starts: Vec<(usize, usize, &str)> = LABEL
        .captures_iter(text)
        .filter_map(|c| {
            let m = c.get(1)?;
            Some((m.start(), m.end() + 1, m.as_str()))
        })
        .collect();
    if starts.len() < min || starts[0].0 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(starts.len());
    for (k, &(_, after, label)) in starts.iter().enumerate() {
        let until = starts.get(k + 1).map_or(text.len(), |s| s.0);
        let numbers = numbers(text.get(after..until)?)?;
        out.push(Pair {
            label: label.to_string(),
            numbers,
        });
    }
    Some(out)
}

/// `read iops: 152421\twrite iops: 136959\trw iops: 54593,54581`: pairs
/// set apart by tabs or runs of spaces, so a label may be words.
fn gapped_pairs(text: &str, min: usize) -> Option<Vec<Pair>> {
    static GAP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\t+|\s{2,}").expect("constant regex"));
    static PAIR: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([A-Za-z][\w%/.-]{0,15}(?: [A-Za-z][\w%/.-]{0,15}){1,2}):\s*(\S.*)$")
            .expect("constant regex")
    });
    if !GAP.is_match(text) {
        return None;
    }
    let mut out = Vec::new();
    for part in GAP.split(text) {
        let c = PAIR.captures(part.trim())?;
        out.push(Pair {
            label: c[1].to_string(),
            numbers: numbers(&c[2])?,
        });
    }
    (out.len() >= min).then_some(out)
}

/// The numbers of a pair's text: `49161`, `( 2460)`, `1.2 ms`, or two
/// whole numbers glued by a comma that is no thousands' mark
/// (`54593,54581`: a mixed run's reads and writes); None when anything
/// else is there.
fn numbers(text: &str) -> Option<Vec<(f64, Option<Unit>, bool)>> {
    let mut out: Vec<(f64, Option<Unit>, bool)> = Vec::new();
    for word in text.split_whitespace() {
        let w = word.trim_matches(|c: char| "()[],;".contains(c));
        if w.is_empty() {
            continue;
        }
        // `54593,54581`: two counts, not a decimal (five digits after).
        if let Some((a, b)) = w.split_once(',')
            && !a.is_empty()
            && b.len() != 3
            && b.len() >= 2
            && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit())
        {
            for n in [a, b] {
                out.push((n.parse().ok()?, None, true));
            }
            continue;
        }
        match parse_cell(w) {
            Cell::Number {
                value, unit, plain, ..
            } => out.push((value, unit, plain && value.fract() == 0.0)),
            _ => match (parse_unit(w), out.last_mut()) {
                (Some(u), Some(last)) if last.1.is_none() => {
                    last.1 = Some(u);
                    last.2 = false;
                }
                _ => return None,
            },
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::super::extract_text;
    use crate::mail::model::Value;

    /// Rows numbered by their first label, settings ahead of the
    /// results kept as conditions, results that happen to agree kept.
    #[test]
    fn label_value_pairs_make_rows() {
        let t = extract_text(
            "N: 0 ( 71) Q:9 W:50 Loops: 912 Lo: 1 Hi: 30 ms\n\
             [...]\n\
             N: 4 ( 75) Q:9 W:50 Loops: 907 Lo: 1 Hi: 41 ms\n",
        );
        assert_eq!(t.len(), 1, "{t:#?}");
        let t = &t[0];
        assert_eq!(t.key_columns, ["N"]);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Loops", "Lo", "Hi"]);
        assert_eq!(t.conditions.get("Q").map(String::as_str), Some("9"));
        assert_eq!(t.rows[1].keys, ["4 (75)"]);
        assert!(
            matches!(&t.rows[1].values[2], Value::Number { value, unit: Some(u), .. } if *value == 41.0 && u.symbol == "ms"),
            "{:?}",
            t.rows[1]
        );
        // One line: every pair is a value; prose with colons is no row.
        assert_eq!(
            extract_text("Lo: 1 Avg: 2 Hi: 9\n")[0].rows[0].values.len(),
            3
        );
        assert!(super::pairs("Note: see this: and that: here", 2).is_none());
    }

    /// Pairs set apart by tabs or runs of spaces may have labels of a
    /// few words; `54593,54581` is two counts, and a setting over the
    /// line is its caption.
    #[test]
    fn gapped_pairs_of_words() {
        let t = extract_text(
            "nr_sched_batch = 1:\nread iops: 166449\twrite iops: 139477\trw iops: 55363,55355\n",
        );
        assert_eq!(t.len(), 1, "{t:#?}");
        let names: Vec<&str> = t[0].columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["read iops", "write iops", "rw iops", "rw iops (2)"]);
        assert!(matches!(t[0].rows[0].values[3], Value::Number { value, .. } if value == 55355.0));
        assert_eq!(t[0].caption.as_deref(), Some("nr_sched_batch = 1:"));
    }

    /// Two pairs a line make a table only over three lines with the
    /// same labels; the first label numbers the rows (a sweep).
    #[test]
    fn two_pairs_a_line_over_three_lines() {
        let t = extract_text(
            "batch:  1   files: 731923\nbatch:  2   files: 693020\nbatch:  4   files: 750948\n",
        );
        assert_eq!(t.len(), 1, "{t:#?}");
        assert_eq!(t[0].key_columns, ["batch"]);
        assert_eq!(t[0].rows.len(), 3);
        assert_eq!(t[0].rows[2].keys, ["4"]);
        assert_eq!(t[0].rows[2].values.len(), 1);
        // One or two such lines are left to the other readers.
        let t = extract_text("read: 120 MB/s\nbatch:  1   files: 731923\n");
        assert!(t.iter().all(|t| t.key_columns != ["batch"]), "{t:#?}");
    }
}
