//! Repeated samples printed as a list under the lines that name them,
//! as a script prints a Python or JSON array:
//!
//! ```text
//! menu iowait boost
//! /dev/nvme0n1
//! [2584, 2622, 2629]
//! ```
//!
//! Each list is a row keyed by its name lines, each sample a run. A line
//! ending in `:` over the first name (`RK3399:`) names a group that holds
//! until the next such line. A list with no name line above is code, not
//! a result, and is left alone.

use super::Draft;
use super::lines::Line;
use super::numbers::{Cell, parse_cell};
use crate::mail::model::{ClaimKind, Column, Row, Value};

/// The most name lines a list may have above it.
const MAX_NAMES: usize = 3;
/// The longest name line, in bytes: a sentence is no name.
const MAX_NAME: usize = 60;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    // Most lines start no such group: say so before reading ahead.
    if !is_name(lines[i].text) {
        return None;
    }
    let mut j = i;
    let mut group = String::new();
    let mut rows: Vec<Row> = Vec::new();
    while let Some((names, list_at)) = names_then_list(lines, j) {
        let mut names: Vec<&str> = names.iter().map(|n| n.trim()).collect();
        if names.len() > 1 && names[0].ends_with(':') {
            group = names.remove(0).trim_end_matches(':').trim().to_string();
        }
        let mut keys = vec![names.join(" / ")];
        if !group.is_empty() {
            keys.insert(0, group.clone());
        }
        let values = list(lines[list_at].text)?
            .into_iter()
            .map(|c| match c {
                Cell::Number {
                    value,
                    unit,
                    spread_pct,
                    ..
                } => Value::Number {
                    value,
                    unit,
                    spread_pct,
                },
                _ => Value::Missing,
            })
            .collect();
        rows.push(Row {
            keys,
            unit: None,
            values,
            line: lines[list_at].no,
        });
        j = list_at + 1;
    }
    if rows.is_empty() {
        return None;
    }
    let grouped = rows.iter().any(|r| r.keys.len() == 2);
    for r in &mut rows {
        if grouped && r.keys.len() == 1 {
            r.keys.insert(0, String::new());
        }
    }
    let width = rows.iter().map(|r| r.values.len()).max().unwrap_or(0);
    for r in &mut rows {
        r.values.resize(width, Value::Missing);
    }
    let key_columns = if grouped {
        vec!["group".to_string(), "name".to_string()]
    } else {
        vec!["name".to_string()]
    };
    Some(Draft {
        kind: Some(ClaimKind::Table),
        key_columns,
        columns: (1..=width)
            .map(|k| Column {
                name: format!("run {k}"),
                unit: None,
            })
            .collect(),
        rows,
        start: i,
        end: j,
        ..Draft::default()
    })
}

/// From line `i`: 1 to [`MAX_NAMES`] name lines, then a list; the names
/// and where the list is.
fn names_then_list<'a>(lines: &[Line<'a>], i: usize) -> Option<(Vec<&'a str>, usize)> {
    let mut names = Vec::new();
    for (k, l) in lines.iter().enumerate().skip(i).take(MAX_NAMES + 1) {
        if list(l.text).is_some() {
            return (!names.is_empty()).then_some((names, k));
        }
        if !is_name(l.text) {
            return None;
        }
        names.push(l.text);
    }
    None
}

/// A short line of text that is no sentence, no code and no list.
fn is_name(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.len() <= MAX_NAME
        && !t.ends_with(['.', ','])
        && !t.contains(['=', '{', '}', ';'])
        && !t.starts_with('[')
        && t.chars().any(char::is_alphanumeric)
}

/// `[2584, 2622, 2629]`: at least two numbers, set apart by commas, in
/// square brackets, alone on their line.
fn list(text: &str) -> Option<Vec<Cell>> {
    let inner = text.trim().strip_prefix('[')?.strip_suffix(']')?;
    let cells: Vec<Cell> = inner.split(',').map(|p| parse_cell(p.trim())).collect();
    (cells.len() >= 2 && cells.iter().all(|c| matches!(c, Cell::Number { .. }))).then_some(cells)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line<'_>> {
        super::super::lines::readable(text)
    }

    #[test]
    fn named_lists_are_rows_of_runs_and_a_colon_line_groups_them() {
        let text = "RK3399:\nmenu iowait boost\n/dev/nvme0n1\n[2584, 2622, 2629]\n\
                    teo\n/dev/nvme0n1\n[4476, 4478]\n";
        let l = lines(text);
        let d = at(&l, 0).unwrap();
        assert_eq!(d.end, 7);
        assert_eq!(d.key_columns, ["group", "name"]);
        assert_eq!(d.columns.len(), 3);
        assert_eq!(
            d.rows[0].keys,
            ["RK3399", "menu iowait boost / /dev/nvme0n1"]
        );
        assert_eq!(d.rows[1].keys, ["RK3399", "teo / /dev/nvme0n1"]);
        assert_eq!(d.rows[1].values[2], Value::Missing);
    }

    #[test]
    fn a_list_without_a_name_or_with_words_is_none() {
        for text in [
            "[1, 2, 3]\n",
            "x = foo(a)\n[1, 2, 3]\n",
            "This sentence ends here.\n[1, 2]\n",
            "name\n[1, two, 3]\n",
            "name\n[1]\n",
        ] {
            let l = lines(text);
            assert!((0..l.len()).all(|i| at(&l, i).is_none()), "{text}");
        }
    }
}
