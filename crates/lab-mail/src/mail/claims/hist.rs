//! Histograms drawn with bars: one bucket a line, its range, its count,
//! sometimes a share, then the bar between pipes. bpftrace prints
//! `[256, 512)   379481 |@@@   |` under `@name[key]:`; bcc's tools print
//! `  0 -> 1   : 12   |****  |` under `usecs : count distribution`; other
//! tools write `0 .. 1 : 25079  45.5% |#####|`, or `5440.000 -
//! 6805.809:     1 ###` with a bar of its own. The range is the row's
//! key: its bounds are never values, which is what a reader that takes
//! the numbers at a line's end got wrong.

use super::Draft;
use super::lines::Line;
use super::numbers::parse_unit;
use crate::mail::model::{ClaimKind, Column, Row, Value};
use regex::Regex;
use std::sync::LazyLock;

/// A bucket line: range, count, optional share, and a bar.
static BUCKET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)^\s*
        (?P<range>
            \[\s*\d[\d.]*\s*[KMGTP]?\s*(?:,\s*\d[\d.]*\s*[KMGTP]?\s*)?[\])]   # [256, 512) or [0]
          | \d[\d.]*\s*[KMGTP]?\s*(?:->|\.\.|\s-\s)\s*\d[\d.]*\s*[KMGTP]?    # 0 -> 1, 0 .. 1, 0 - 1
        )
        \s*:?\s+(?P<count>\d[\d,]*)
        (?:\s+(?P<share>\d+(?:\.\d+)?)\s?%)?
        \s+(?:\|[^|]*\|?|[\#*@=]+)\s*$                                  # |@@@ |, or ###
        ",
    )
    .expect("constant regex")
});

/// A header naming the buckets and their columns: `usecs : count
/// distribution` (bcc), `>=(KB) .. <(KB) : count ratio |distribution|`,
/// or a bpftrace map, `@latency[64]:`.
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:(?P<map>@[\w\[\], .:-]{0,60}):|(?P<key>\S.{0,40}?)\s+:\s+(?P<cols>count\b.*))\s*$",
    )
    .expect("constant regex")
});

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    // Any other line just above the buckets is left to the other
    // layouts (`Percentiles: 90th: 40486.000; ...` holds values), and
    // else becomes the caption of the table found on the next line.
    let header = if BUCKET.is_match(lines[i].text) {
        None
    } else if lines.get(i + 1).is_some_and(|l| BUCKET.is_match(l.text)) {
        Some(HEADER.captures(lines[i].text)?)
    } else {
        return None;
    };
    let first = if header.is_some() { i + 1 } else { i };
    let mut rows = Vec::new();
    let mut j = first;
    while let Some(c) = lines.get(j).and_then(|l| BUCKET.captures(l.text)) {
        rows.push(bucket_row(&c, lines[j].no));
        j += 1;
    }
    if rows.len() < 2 {
        return None;
    }
    let shares = rows.iter().any(|r| r.values.len() == 2);
    if shares {
        for r in &mut rows {
            r.values.resize(2, Value::Missing);
        }
    }
    let (key, names) = names(header.as_ref(), shares);
    let mut columns = vec![Column {
        name: names.0,
        unit: None,
    }];
    if shares {
        columns.push(Column {
            name: names.1,
            unit: parse_unit("%"),
        });
    }
    Some(Draft {
        kind: Some(ClaimKind::Table),
        key_columns: vec![key],
        columns,
        rows,
        start: i,
        end: j,
        ..Draft::default()
    })
}

fn bucket_row(c: &regex::Captures, no: usize) -> Row {
    let number = |s: &str| s.replace(',', "").parse::<f64>().ok();
    let mut values =
        vec![
            c.name("count")
                .and_then(|m| number(m.as_str()))
                .map_or(Value::Missing, |value| Value::Number {
                    value,
                    unit: None,
                    spread_pct: None,
                }),
        ];
    if let Some(value) = c.name("share").and_then(|m| number(m.as_str())) {
        values.push(Value::Number {
            value,
            unit: parse_unit("%"),
            spread_pct: None,
        });
    }
    Row {
        keys: vec![c["range"].split_whitespace().collect::<Vec<_>>().join(" ")],
        unit: None,
        values,
        line: no,
    }
}

/// The bucket column's name and the value columns' names, from the
/// header when it has them.
fn names(header: Option<&regex::Captures>, shares: bool) -> (String, (String, String)) {
    let default = ("count".to_string(), "share".to_string());
    let Some(h) = header else {
        return ("bucket".into(), default);
    };
    if let Some(m) = h.name("map") {
        return (m.as_str().trim().to_string(), default);
    }
    let key = h["key"].trim().to_string();
    // `count  ratio |distribution|`: the words before the bar.
    let cols: Vec<&str> = h["cols"]
        .split('|')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter(|w| *w != "distribution")
        .collect();
    let names = match (cols.as_slice(), shares) {
        ([c, s, ..], true) => (c.to_string(), s.to_string()),
        ([c, ..], _) => (c.to_string(), default.1),
        _ => default,
    };
    (key, names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mail::claims::lines::readable;

    fn read(text: &str) -> Option<Draft> {
        let lines = readable(text);
        (0..lines.len()).find_map(|i| at(&lines, i))
    }

    fn values(d: &Draft) -> Vec<(String, Vec<f64>)> {
        d.rows
            .iter()
            .map(|r| {
                let v = r
                    .values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Number { value, .. } => Some(*value),
                        _ => None,
                    })
                    .collect();
                (r.keys[0].clone(), v)
            })
            .collect()
    }

    #[test]
    fn bucket_bounds_are_keys_and_counts_are_values() {
        let bpf = "next:\n@ns[fio]:\n[128, 256)            11 |          |\n\
                   [256, 512)        242268 |@@        |\n[1K, 2K)  172281 |@@@@      |\n";
        let d = read(bpf).unwrap();
        assert_eq!(d.key_columns, ["@ns[fio]"]);
        assert_eq!(d.start, 1, "the line above the map name is the caption's");
        assert_eq!(
            values(&d),
            [
                ("[128, 256)".to_string(), vec![11.0]),
                ("[256, 512)".to_string(), vec![242268.0]),
                ("[1K, 2K)".to_string(), vec![172281.0]),
            ]
        );
        let bcc = "     usecs               : count     distribution\n\
                   0 -> 1          : 0        |                    |\n\
                   2 -> 3          : 1,204    |*****               |\n";
        let d = read(bcc).unwrap();
        assert_eq!(
            (d.key_columns[0].as_str(), d.columns[0].name.as_str()),
            ("usecs", "count")
        );
        assert_eq!(values(&d)[1], ("2 -> 3".to_string(), vec![1204.0]));
        let seek = "Read seek\n    >=(KB) .. <(KB)     : count       ratio |distribution   |\n\
                    0 .. 1         : 25079       45.5% |########       |\n\
                    1 .. 2         : 0            0.0% |               |\n";
        let d = read(seek).unwrap();
        assert_eq!(d.columns[1].name, "ratio");
        assert_eq!(values(&d)[0], ("0 .. 1".to_string(), vec![25079.0, 45.5]));
    }

    #[test]
    fn a_row_without_a_bar_or_a_single_bucket_is_no_histogram() {
        assert!(read("[128, 256)  11\n[256, 512)  12\n").is_none());
        assert!(read("0 -> 1 : 12 |***|\n\nmore text\n").is_none());
        assert!(read("| a | b |\n|---|---|\n| 1 | 2 |\n").is_none());
    }
}
