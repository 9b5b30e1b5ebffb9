//! The kernel's own histograms: what `cat .../events/*/hist` prints for
//! a hist trigger (Documentation/trace/histogram.rst). One entry a
//! line, its keys in braces, then its values by name:
//! `{ pid: 1189, delta2: ~ 500040-500049 } hitcount: 10  bytes: 4096`.
//! A key that is a stack trace spreads the entry over many lines, from
//! `{ pid: 61, stacktrace:` to `} hitcount: 28`. The keys (a pid, a
//! bucket's range, a call chain) name the row and are never values;
//! each named value is a column.

use super::Draft;
use super::lines::Line;
use crate::mail::model::{ClaimKind, Column, Row, Value};
use regex::Regex;
use std::sync::LazyLock;

/// The values after an entry's closing brace: `hitcount: 10 bytes: 4`.
static VALUES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\}\s*((?:[A-Za-z_][\w.]*:\s*-?\d+\s*)+)$").expect("constant regex")
});
static VALUE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([A-Za-z_][\w.]*):\s*(-?\d+)").expect("constant regex"));

/// The longest call chain an entry may hold before it is no entry: the
/// kernel prints at most 16 frames (HIST_STACKTRACE_DEPTH).
const MAX_FRAMES: usize = 64;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    if let Some(end) = totals(lines, i) {
        // The histogram's own bookkeeping: events seen, entries, and
        // entries dropped when its map was full. Nothing measured.
        return Some(Draft {
            start: i,
            end,
            ..Draft::default()
        });
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut j = i;
    while let Some((row, next)) = entry(lines, j, &mut names) {
        rows.push(row);
        j = next;
    }
    if rows.is_empty() {
        return None;
    }
    for r in &mut rows {
        r.values.resize(names.len(), Value::Missing);
    }
    Some(Draft {
        kind: Some(ClaimKind::Table),
        key_columns: vec!["key".into()],
        columns: names
            .into_iter()
            .map(|name| Column { name, unit: None })
            .collect(),
        rows,
        start: i,
        end: j,
        ..Draft::default()
    })
}

/// The end of a `Totals:` block of `Hits:`, `Entries:` and `Dropped:`
/// lines that starts at line `i`.
fn totals(lines: &[Line], i: usize) -> Option<usize> {
    if lines[i].text.trim() != "Totals:" {
        return None;
    }
    let names = ["Hits:", "Entries:", "Dropped:"];
    let all = names.iter().enumerate().all(|(k, name)| {
        lines.get(i + 1 + k).is_some_and(|l| {
            l.text
                .trim()
                .strip_prefix(name)
                .is_some_and(|n| n.trim().bytes().all(|b| b.is_ascii_digit()))
        })
    });
    all.then_some(i + 1 + names.len())
}

/// The entry that starts at line `i`, and the line after it; `names`
/// gathers the value names in the order first seen.
fn entry(lines: &[Line], i: usize, names: &mut Vec<String>) -> Option<(Row, usize)> {
    let text = lines.get(i)?.text.trim();
    let open = text.strip_prefix('{')?;
    let (keys, close, next) = match open.split_once('}') {
        Some((keys, _)) => (keys, text.get(text.find('}')?..)?, i + 1),
        None => {
            // A multi-line entry: frames, then the closing brace.
            let end = (i + 1..lines.len().min(i + 2 + MAX_FRAMES))
                .find(|&k| lines[k].text.trim_start().starts_with('}'))?;
            (open, lines[end].text, end + 1)
        }
    };
    let vals = VALUES.captures(close)?;
    let mut values = vec![Value::Missing; names.len()];
    for c in VALUE.captures_iter(&vals[1]) {
        let k = match names.iter().position(|n| *n == c[1]) {
            Some(k) => k,
            None => {
                names.push(c[1].to_string());
                values.push(Value::Missing);
                names.len() - 1
            }
        };
        values[k] = Value::Number {
            value: c[2].parse().ok()?,
            unit: None,
            spread_pct: None,
        };
    }
    let key = keys
        .split(',')
        .map(|k| {
            k.replacen(':', " ", 1)
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|k| !k.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let line = lines[next - 1].no;
    Some((
        Row {
            keys: vec![key],
            unit: None,
            values,
            line,
        },
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::extract_text;
    use crate::mail::model::Value;

    fn number(v: &Value) -> Option<f64> {
        match v {
            Value::Number { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// Keys in braces name the rows, the counts after them are values,
    /// and an entry over a call chain is one row.
    #[test]
    fn hist_trigger_entries_are_rows() {
        let t = extract_text(
            "# event histogram\n#\n\n\
             { pid:       2114, delta2: ~ 10-19 } hitcount:          1\n\
             { pid:       1389, delta2: ~ 160-169 } hitcount:          7  bytes_req:  4096\n\
             { pid:         61, stacktrace:\n         schedule+0x72/0x110\n         pipe_read+0x318/0x420\n\
             } hitcount:         28\n\nTotals:\n    Hits: 36\n    Entries: 3\n    Dropped: 0\n",
        );
        let h = t
            .iter()
            .find(|t| t.columns.first().is_some_and(|c| c.name == "hitcount"))
            .unwrap_or_else(|| panic!("{t:#?}"));
        assert_eq!(h.rows.len(), 3, "{h:#?}");
        assert_eq!(h.rows[0].keys, ["pid 2114, delta2 ~ 10-19"]);
        assert_eq!(h.columns[1].name, "bytes_req");
        assert_eq!(number(&h.rows[1].values[1]), Some(4096.0));
        assert_eq!(number(&h.rows[2].values[0]), Some(28.0));
        assert!(matches!(h.rows[0].values[1], Value::Missing));
        // No pid or bucket bound is a value anywhere.
        let all: Vec<f64> = t
            .iter()
            .flat_map(|t| {
                t.rows
                    .iter()
                    .flat_map(|r| r.values.iter().filter_map(number))
            })
            .collect();
        assert!(
            !all.contains(&2114.0) && !all.contains(&160.0) && !all.contains(&36.0),
            "{all:?}"
        );
    }

    /// A brace with no closing line in reach, or none of `name: N` after
    /// it, is no entry (C code, JSON).
    #[test]
    fn braces_of_code_are_no_entries() {
        let lines = super::super::lines::readable("{ int x = 1; }\n{ \"a\": 2 }\n");
        assert!(super::at(&lines, 0).is_none());
        assert!(super::at(&lines, 1).is_none());
    }
}
