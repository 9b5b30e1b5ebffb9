//! The kernel test robot's (lkp-tests) comparison tables:
//!
//! ```text
//! a1b2c3d4e5f6a7b8 f6e7d8c9b0a1b2c3
//! ---------------- ---------------------------
//!          %stddev     %change         %stddev
//!              \          |                \
//!     188.67 ±  3%     -12.4%     165.33 ±  2%  fio.write_bw_MBps
//! ```
//!
//! Rows are keyed by metric, with base, %change and head columns; an
//! arrow a reader added after a row (`<-----`) marks it, and is no part
//! of it. The
//! `a/b/c:` line over its values and the `parameters:` block above are
//! the claim's conditions, not claimed results.

use super::Draft;
use super::lines::Line;
use super::numbers::{Cell, parse_cell, parse_unit};
use crate::mail::model::{ClaimKind, Column, Row, Unit, Value};
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::LazyLock;

static ROW: LazyLock<Regex> = LazyLock::new(|| {
    let v = r"([+-]?[\d.]+(?:e[+-]?\d+)?[KMGkm]?)(?:\s*±\s*(\d+(?:\.\d+)?)%)?";
    Regex::new(&format!(
        r"^\s*{v}\s+(?:([+-][\d.]+(?:e[+-]?\d+)?%?)\s+)?{v}\s+([A-Za-z][\w.%:/+-]*)(?:\s+(?:<[-=<]+|←)[^\n]*)?\s*$"
    ))
    .expect("constant regex")
});
static HASHES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([0-9a-f]{7,40})\s+([0-9a-f]{7,40})\s*$").expect("constant regex")
});

fn is_stddev(text: &str) -> bool {
    text.contains("%stddev") && text.contains("%change")
}

fn is_dashes(text: &str) -> bool {
    let t = text.trim();
    t.starts_with("----") && t.chars().all(|c| c == '-' || c == ' ')
}

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let h = (i..(i + 3).min(lines.len())).find(|&k| is_stddev(lines[k].text))?;
    if !lines[i..h]
        .iter()
        .all(|l| HASHES.is_match(l.text) || is_dashes(l.text))
    {
        return None;
    }
    let (base, head) = lines[i..h]
        .iter()
        .find_map(|l| HASHES.captures(l.text))
        .map_or(("base".into(), "head".into()), |c| {
            (c[1].to_string(), c[2].to_string())
        });
    let mut d = Draft {
        kind: Some(ClaimKind::Lkp),
        key_columns: vec!["metric".into()],
        columns: vec![
            Column {
                name: base,
                unit: None,
            },
            Column {
                name: "%change".into(),
                unit: None,
            },
            Column {
                name: head,
                unit: None,
            },
        ],
        conditions: conditions_above(lines, i),
        start: i,
        ..Draft::default()
    };
    let mut j = h + 1;
    if lines
        .get(j)
        .is_some_and(|l| l.text.trim().starts_with('\\'))
    {
        j += 1;
    }
    let mut end = j;
    while j < lines.len() {
        if lines[j].is_blank() {
            j += 1;
            continue;
        }
        let Some(c) = ROW.captures(lines[j].text) else {
            break;
        };
        let metric = c[6].to_string();
        let change = c
            .get(3)
            .map_or(Value::Missing, |m| parse_cell(m.as_str()).value());
        d.rows.push(Row {
            unit: metric_unit(&metric),
            keys: vec![metric],
            values: vec![value(&c[1], c.get(2)), change, value(&c[4], c.get(5))],
            line: lines[j].no,
        });
        j += 1;
        end = j;
    }
    d.end = end;
    Some(d)
}

fn value(number: &str, spread: Option<regex::Match>) -> Value {
    match parse_cell(number) {
        Cell::Number { value, unit, .. } => Value::Number {
            value,
            unit,
            spread_pct: spread.and_then(|s| s.as_str().parse().ok()),
        },
        _ => Value::Missing,
    }
}

/// `fio.write_bw_MBps` → MB/s, `fio.read_clat_mean_us` → us,
/// `fio.write_iops` → IOPS, `fio.latency_2ms%` → %.
fn metric_unit(metric: &str) -> Option<Unit> {
    if metric.ends_with('%') {
        return parse_unit("%");
    }
    let last = metric.rsplit(['_', '.']).next()?;
    parse_unit(last).filter(|u| u.written != "s")
}

/// The robot's `a/b/c:` line over `x/y/z` values, and its `parameters:`
/// block, within the 80 lines above the table.
fn conditions_above(lines: &[Line], i: usize) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let from = i.saturating_sub(80);
    let mut k = from;
    while k < i {
        let t = lines[k].text.trim();
        if t == "parameters:" {
            k += 1;
            while k < i && (lines[k].is_blank() || lines[k].text.starts_with([' ', '\t'])) {
                if let Some((key, v)) = lines[k].text.trim().split_once(": ") {
                    out.insert(key.trim().to_string(), v.trim().to_string());
                }
                k += 1;
            }
            continue;
        }
        if let Some(names) = t
            .strip_suffix(':')
            .filter(|n| n.contains('/') && !n.contains(' '))
            && let Some(values) = lines.get(k + 1).map(|l| l.text.trim())
        {
            let names: Vec<&str> = names.split('/').collect();
            let values: Vec<&str> = values.split('/').collect();
            if names.len() == values.len() {
                for (n, v) in names.into_iter().zip(values) {
                    out.insert(n.to_string(), v.to_string());
                }
                k += 2;
                continue;
            }
        }
        k += 1;
    }
    out
}
