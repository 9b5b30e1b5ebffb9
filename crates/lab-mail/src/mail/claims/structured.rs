//! Output that names every number: JSON pasted as printed (fio's
//! `--output-format=json`, any tool's), one `"key" : value` per line,
//! and job files (`[global]`, `bs=4k`), which name only settings.
//!
//! A JSON number is read with the path of keys above it (`jobs / write
//! / clat_ns / 99.000000`). The objects that hold settings (`global
//! options`, `job options`) and the keys of bookkeeping (time stamps,
//! versions, ids, error codes, sample counts and how long the run was
//! set to take) are not results.

use super::Draft;
use super::lines::Line;
use super::numbers::parse_unit;
use crate::mail::model::{ClaimKind, Row};

/// The most lines one document is read for: a pasted JSON report is
/// thousands of lines, not millions.
const MAX_LINES: usize = 200_000;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let t = lines[i].text.trim();
    if t == "{" || t == "[" {
        return json(lines, i);
    }
    job_file(lines, i)
}

/// Keys whose numbers are the run's bookkeeping, not its results.
const BOOKKEEPING: [&str; 20] = [
    // fio's latency target, as set (`latency_target` and its window,
    // depth and percentile); its `latency_us` buckets are objects.
    "latency_target",
    "latency_window",
    "latency_depth",
    "latency_percentile",
    "timestamp",
    "timestamp_ms",
    "time",
    "version",
    "fio version",
    "groupid",
    "error",
    "eta",
    "elapsed",
    "runtime",
    "job_runtime",
    "n",
    "samples",
    "short_ios",
    "drop_ios",
    "pid",
];

fn json(lines: &[Line], i: usize) -> Option<Draft> {
    // A document: the next line is a key or another opening.
    let next = lines.get(i + 1)?.text.trim_start();
    if !(next.starts_with('"') || next.starts_with('{')) {
        return None;
    }
    let mut d = Draft::one_value(ClaimKind::Table, &["key"], i);
    let mut path: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut j = i;
    while j < lines.len().min(i + MAX_LINES) {
        let line = &lines[j];
        j += 1;
        let t = line.text.trim();
        if t.is_empty() {
            continue;
        }
        let (key, rest) = match t.strip_prefix('"').and_then(|r| r.split_once('"')) {
            Some((k, r)) => (Some(k), r.trim_start().strip_prefix(':').map(str::trim)),
            None => (None, Some(t)),
        };
        let rest = rest.unwrap_or("");
        if rest.starts_with('{') || rest.starts_with('[') {
            depth += 1;
            path.push(key.unwrap_or("").to_string());
        } else if let (Some(k), Some(v)) = (key, number(rest)) {
            let settings = path.iter().any(|p| p.ends_with("options"));
            let lower = k.to_lowercase();
            if !settings && !BOOKKEEPING.contains(&lower.as_str()) && !lower.ends_with("_samples") {
                push(&mut d, &path, k, v, line.no);
            }
        }
        // `"x" : { }` and `[1, 2]` close on the line they open; a
        // string's brackets are text.
        if !rest.starts_with('"') {
            let closes = rest.bytes().filter(|b| *b == b'}' || *b == b']').count();
            for _ in 0..closes.min(depth) {
                depth -= 1;
                path.pop();
            }
        }
        if depth == 0 {
            break;
        }
    }
    d.end = j;
    Some(d)
}

/// A JSON number, with or without a trailing comma; quoted numbers are
/// settings (`"iodepth" : "32"`), not results.
fn number(rest: &str) -> Option<f64> {
    let r = rest.trim_end_matches(',').trim();
    if r.starts_with('"') {
        return None;
    }
    r.parse().ok().filter(|v: &f64| v.is_finite())
}

fn push(d: &mut Draft, path: &[String], key: &str, v: f64, no: usize) {
    // `clat_ns` / `lat_us`: the unit is in the object's name.
    let unit = path
        .iter()
        .rev()
        .chain(std::iter::once(&key.to_string()))
        .find_map(|p| p.rsplit_once('_').and_then(|(_, u)| time_unit(u)));
    let name: Vec<&str> = path
        .iter()
        .map(String::as_str)
        .filter(|p| !p.is_empty())
        .chain(std::iter::once(key))
        .collect();
    d.rows
        .push(Row::number(vec![name.join(" / ")], v, unit, no));
}

fn time_unit(u: &str) -> Option<crate::mail::model::Unit> {
    matches!(u, "ns" | "us" | "ms")
        .then(|| parse_unit(u))
        .flatten()
}

/// A fio job file: `[section]` headers over `key=value` settings and
/// bare flags (`group_reporting`). It claims nothing; it is taken so
/// that no other layout reads its settings as results.
fn job_file(lines: &[Line], i: usize) -> Option<Draft> {
    let first = lines[i].text.trim();
    // `echo '[global]` starts a job file given on standard input.
    let first = first.rsplit('\'').next().unwrap_or(first);
    if !is_section(first) {
        return None;
    }
    let mut j = i + 1;
    let mut settings = 0;
    while j < lines.len() {
        let t = lines[j].text.trim();
        let t = t.split('\'').next().unwrap_or(t);
        if is_setting(t) {
            settings += 1;
        } else if !(t.is_empty() || is_section(t) || is_flag(t)) {
            break;
        }
        // A job file on stdin ends at its closing quote.
        let closed = lines[j].text.contains('\'');
        j += 1;
        if closed {
            break;
        }
    }
    (settings >= 1).then(|| Draft {
        start: i,
        end: j,
        ..Draft::default()
    })
}

fn is_section(t: &str) -> bool {
    t.len() > 2
        && t.starts_with('[')
        && t.ends_with(']')
        && t[1..t.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:/".contains(&b))
}

fn is_setting(t: &str) -> bool {
    t.split_once('=').is_some_and(|(k, v)| {
        let k = k.trim();
        !k.is_empty()
            && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && !v.trim().contains(' ')
    })
}

fn is_flag(t: &str) -> bool {
    !t.is_empty() && t.len() < 40 && t.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}
