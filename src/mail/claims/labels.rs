//! `label: value unit` lists: `before: 120k IOPS`, `p99 latency: 3151 us`.
//! Several may sit in one mail, each under the command line that made
//! the numbers (fio, dd, dmsetup), which becomes its caption. A label
//! that names a benchmark parameter (`runtime: 300s`, `nr_task: 1`) is a
//! condition of the claim, not a claimed result.

use super::Draft;
use super::grid::label_unit;
use super::lines::Line;
use super::numbers::{Cell, parse_cell};
use crate::mail::model::{ClaimKind, Column, Row};
use regex::Regex;
use std::sync::LazyLock;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    if i > 0 && lines[i - 1].text.trim() == "parameters:" {
        return None;
    }
    let mut d = Draft {
        kind: Some(ClaimKind::LabelValues),
        key_columns: vec!["label".into()],
        columns: vec![Column {
            name: "value".into(),
            unit: None,
        }],
        start: i,
        ..Draft::default()
    };
    let mut j = i;
    while let Some((label, cell)) = lines.get(j).and_then(|l| label_value(&l.text)) {
        if is_parameter(&label) {
            d.conditions.insert(label, cell.1);
        } else {
            let unit = label_unit(&label);
            d.rows.push(Row {
                keys: vec![label],
                unit,
                values: vec![cell.0.value()],
                line: lines[j].no,
            });
        }
        j += 1;
    }
    d.end = j;
    let with_units = d
        .rows
        .iter()
        .filter(|r| {
            r.unit.is_some()
                || matches!(
                    &r.values[0],
                    crate::mail::model::Value::Number { unit: Some(_), .. }
                )
        })
        .count();
    // One line is a claim only when it names its unit. A run of
    // parameters alone is taken, so it is read once, but claims nothing.
    let enough = d.rows.len() >= 2 || (d.rows.len() == 1 && with_units == 1);
    if !enough {
        d.rows.clear();
        if d.conditions.is_empty() {
            return None;
        }
    }
    d.unit = common_unit(&d.rows);
    d.unit_from_caption = with_units == 0;
    Some(d)
}

/// The unit every value names, when they all name the same.
fn common_unit(rows: &[Row]) -> Option<crate::mail::model::Unit> {
    let mut units = rows.iter().map(|r| match &r.values[0] {
        crate::mail::model::Value::Number { unit: Some(u), .. } => Some(u),
        _ => r.unit.as_ref(),
    });
    let first = units.next()??;
    units
        .all(|u| u.is_some_and(|u| u.symbol == first.symbol))
        .then(|| first.clone())
}

/// `label: value ...` where value starts with a number (and a unit); the
/// words after it (`(avg of 3 runs)`) are not part of it.
fn label_value(line: &str) -> Option<(String, (Cell, String))> {
    static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:[-*•]\s+)?([A-Za-z][A-Za-z0-9 _./()%+-]{0,40}?)\s*[:=]\s+(\S.*?)\s*$")
            .expect("constant regex")
    });
    let c = LABEL_VALUE.captures(line)?;
    let label = c[1].trim().to_string();
    let value = c[2].trim();
    let words: Vec<&str> = value.split_whitespace().collect();
    for n in (1..=words.len().min(3)).rev() {
        let text = words[..n].join(" ");
        let text = text.trim_end_matches([',', ';']);
        let cell = parse_cell(text);
        if matches!(cell, Cell::Number { .. }) {
            return Some((label, (cell, value.to_string())));
        }
    }
    // A parameter may have a value that is not a number (`disk: 1HDD`).
    is_parameter(&label).then(|| (label, (Cell::Text, value.to_string())))
}

/// A benchmark's parameter rather than a result.
fn is_parameter(label: &str) -> bool {
    const PARAMETERS: [&str; 34] = [
        "runtime",
        "disk",
        "fs",
        "nr_task",
        "test_size",
        "testcase",
        "test",
        "rw",
        "bs",
        "ioengine",
        "iodepth",
        "numjobs",
        "size",
        "cpufreq_governor",
        "nr_threads",
        "mode",
        "direct",
        "time_based",
        "ramp_time",
        "config",
        "compiler",
        "test machine",
        "filesize",
        "nr_cpu",
        "nr_cpus",
        "threads",
        "jobs",
        "block size",
        "queue depth",
        "delay",
        "hz",
        "ucode",
        "kconfig",
        "rootfs",
    ];
    let l = label.trim().to_lowercase();
    PARAMETERS.contains(&l.as_str()) || l.starts_with("nr_") || l.ends_with("_size")
}
