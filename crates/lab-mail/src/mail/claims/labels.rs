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
    // Most lines are no label: say so before building anything.
    label_value(lines[i].text)?;
    let mut d = Draft::one_value(ClaimKind::LabelValues, &["label"], i);
    let mut j = i;
    let mut arrows = false;
    while let Some(lv) = lines.get(j).and_then(|l| label_value(l.text)) {
        // A line of several pairs under a setting (`nr_sched_batch = 1:`
        // over `read iops: 1  write iops: 2`) is a table's row.
        if j > i && super::pairs::at(lines, j).is_some() {
            break;
        }
        if is_parameter(&lv.label) {
            d.conditions.insert(lv.label, lv.raw);
        } else if !lv.parts.is_empty() {
            for (name, cell) in lv.parts {
                d.rows.push(Row {
                    unit: label_unit(&name),
                    keys: vec![name],
                    values: vec![cell.value()],
                    line: lines[j].no,
                });
            }
        } else {
            let unit = label_unit(&lv.label);
            let (first, extra) = if lv.after.is_none() {
                more_values(&lv.label, &lv.raw, lines[j].no)
            } else {
                (None, Vec::new())
            };
            let mut values = vec![lv.cell.value()];
            if let Some(after) = lv.after {
                arrows = true;
                values.push(after.value());
            }
            let key = match first {
                Some(name) => format!("{} / {name}", lv.label),
                None => lv.label,
            };
            d.rows.push(Row {
                keys: vec![key],
                unit,
                values,
                line: lines[j].no,
            });
            d.rows.extend(extra);
        }
        j += 1;
    }
    d.end = j;
    // A setting alone over such a row is that row's caption.
    if d.rows.is_empty() && j > i && j < lines.len() && super::pairs::at(lines, j).is_some() {
        return None;
    }
    // `writeback: 41.7 s -> 12.9 s`: the list says before and after.
    if arrows {
        d.columns = ["before", "after"]
            .map(|name| Column {
                name: name.into(),
                unit: None,
            })
            .to_vec();
        for r in &mut d.rows {
            r.values.resize(2, crate::mail::model::Value::Missing);
        }
    }
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
    // One line is a claim only when it names its unit, or says what it
    // measured (hackbench's `Time: 4.401`). A run of parameters alone
    // is taken, so it is read once, but claims nothing.
    let measured = d.rows.len() == 1 && d.rows[0].keys.first().is_some_and(|k| names_a_measure(k));
    let enough = d.rows.len() >= 2 || (d.rows.len() == 1 && with_units == 1) || measured;
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

/// A label that names what a run measured: `Time`, `Elapsed`, `Avg
/// latency`, `Throughput`, `Score`.
fn names_a_measure(label: &str) -> bool {
    const MEASURES: [&str; 11] = [
        "time",
        "elapsed",
        "latency",
        "throughput",
        "bandwidth",
        "iops",
        "speed",
        "score",
        "average",
        "mean",
        "median",
    ];
    let l = label.trim().to_lowercase();
    MEASURES
        .iter()
        .any(|m| l == *m || l.ends_with(&format!(" {m}")))
}

/// The values after the first on a `label: value` line, each a row of
/// its own under the label: `2.58M IOPS per core (34.9 usec avg
/// latency)`, `953 MiB/s  after: 1350 MiB/s, ~41% perf improvement`.
/// The row is named by the number's own name or the words before it;
/// in a list of `number name` items (`262 total, 2 running`), by the
/// words after it, the first value too (returned first).
fn more_values(label: &str, raw: &str, no: usize) -> (Option<String>, Vec<Row>) {
    use super::tokens::{Convention, Tok, scan};
    let conv = Convention::of(std::iter::once(raw));
    let toks = scan(raw, conv);
    if super::measures::never_row(raw, &toks) {
        return (None, Vec::new());
    }
    if let Some(items) = named_after(raw, conv) {
        let mut items = items.into_iter();
        let first = items.next().map(|(name, _)| name);
        let rows = items
            .map(|(name, n)| Row::number(vec![format!("{label} / {name}")], n.value, n.unit, no))
            .collect();
        return (first, rows);
    }
    let mut out = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let mut first = true;
    for t in &toks {
        match t {
            Tok::Word { text, .. } => words.push(text),
            Tok::Num(n) if n.parameter || n.knob => words.clear(),
            Tok::Num(n) => {
                if !std::mem::replace(&mut first, false) {
                    let name = n.name.clone().unwrap_or_else(|| words.join(" "));
                    let name = name.trim_matches(|c: char| !c.is_alphanumeric());
                    let name = if name.is_empty() { "more" } else { name };
                    let keys = vec![format!("{label} / {name}")];
                    out.push(Row::number(keys, n.value, n.unit.clone(), no));
                }
                words.clear();
            }
        }
    }
    (None, out)
}

/// `262 total, 2 running, 260 sleeping` (top), `16005.3 total, 8737.7
/// free`: items set apart by `, ` (or `; `, `. `), each a number then
/// the words that name it. None unless every item is one.
fn named_after(
    raw: &str,
    conv: super::tokens::Convention,
) -> Option<Vec<(String, super::tokens::Num)>> {
    use super::tokens::{Tok, scan};
    static ITEMS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[,;.]\s+").expect("constant regex"));
    let items: Vec<&str> = ITEMS
        .split(raw.trim().trim_end_matches(['.', ',', ';']))
        .collect();
    if items.len() < 2 {
        return None;
    }
    items
        .iter()
        .map(|item| {
            let mut toks = scan(item, conv).into_iter();
            let Some(Tok::Num(n)) = toks.next().filter(|t| match t {
                Tok::Num(n) => !n.parameter && !n.knob,
                Tok::Word { .. } => false,
            }) else {
                return None;
            };
            let words: Vec<&str> = toks
                .map(|t| match t {
                    Tok::Word { text, .. } => Some(text),
                    Tok::Num(_) => None,
                })
                .collect::<Option<_>>()?;
            (!words.is_empty()).then(|| (words.join(" "), n))
        })
        .collect()
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

/// One `label: value` line.
struct LabelValue {
    label: String,
    cell: Cell,
    /// The value as written (a parameter's value may be a word).
    raw: String,
    /// `41.7 s -> 12.9 s`: the value after the arrow.
    after: Option<Cell>,
    /// `min/avg/max = 1.2/3.4/5.6 ms`: each name with its value.
    parts: Vec<(String, Cell)>,
}

/// `label: value` or `label = value`: a label of a letter and at most
/// 40 more characters (a bracketed part holding a colon counts as one),
/// the separator with a space after it, and the value.
static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    // A colon in brackets is part of the label, no separator:
    // `Elapsed (wall clock) time (h:mm:ss or m:ss): 0:02.04`.
    Regex::new(r"^\s*(?:[-*•]\s+)?([A-Za-z](?:[A-Za-z0-9 _./()%+-]|\([^()\n:]{0,15}:[^()\n]{0,15}\)){0,40}?)\s*[:=]\s+(\S.*?)\s*$")
        .expect("constant regex")
});

/// The label and the value of a `label: value` line, as
/// [`LABEL_VALUE`] captures them.
fn split_label(line: &str) -> Option<(&str, &str)> {
    // The pattern needs a separator with a space after it; most lines
    // have none, and capturing is the dear part of a regex.
    let separated = line
        .match_indices([':', '='])
        .any(|(k, _)| line[k + 1..].starts_with(char::is_whitespace));
    if !separated {
        return None;
    }
    // The label's bound, `{0,40}`, makes a pattern so big that the
    // engine clears kilobytes of state for every line it captures in (a
    // tenth of all the work on a big thread). The same pattern without
    // the bound finds the same match whenever its label is that short,
    // as a lazy repetition tries the shortest label first; the bounded
    // one decides only for a longer label.
    static UNBOUNDED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&LABEL_VALUE.as_str().replacen("{0,40}?", "*?", 1)).expect("constant regex")
    });
    let c = UNBOUNDED.captures(line)?;
    let c = match c[1].chars().count() <= 41 {
        true => c,
        false => LABEL_VALUE.captures(line)?,
    };
    Some((c.get(1)?.as_str(), c.get(2)?.as_str()))
}

/// `label: value ...` where value starts with a number (and a unit); the
/// words after it (`(avg of 3 runs)`) are not part of it. A value may be
/// a change, `before -> after`.
fn label_value(line: &str) -> Option<LabelValue> {
    let (label, value) = split_label(line)?;
    // A sysctl setting or a traced call is `name = value` too.
    if super::never::never_claims(line) {
        return None;
    }
    let label = label.trim().to_string();
    let value = value.trim();
    let arrow = ["-->", "->", "→", "=>"]
        .iter()
        .find_map(|a| value.split_once(a))
        .and_then(|(l, r)| Some((leading_cell(l)?, leading_cell(r)?)));
    if let Some((before, after)) = arrow {
        return Some(LabelValue {
            label,
            cell: before,
            raw: value.to_string(),
            after: Some(after),
            parts: Vec::new(),
        });
    }
    if let Some(parts) = slash_parts(&label, value) {
        return Some(LabelValue {
            label,
            cell: parts[0].1.clone(),
            raw: value.to_string(),
            after: None,
            parts,
        });
    }
    if let Some(cell) = leading_cell(value) {
        return Some(LabelValue {
            label,
            cell,
            raw: value.to_string(),
            after: None,
            parts: Vec::new(),
        });
    }
    // A parameter may have a value that is not a number (`disk: 1HDD`).
    is_parameter(&label).then(|| LabelValue {
        label,
        cell: Cell::Text,
        raw: value.to_string(),
        after: None,
        parts: Vec::new(),
    })
}

/// `min/avg/max/mdev = 0.045/0.061/0.078/0.012 ms` (ping) or `= 119.1 us
/// / 754.9 us / 2.67 ms / 1.02 ms` (ioping): as many names as values,
/// both split at `/`. A value without a unit takes the last one's; a
/// `/` inside a unit (`MB/s`) splits nothing. Words before the names
/// (`rtt`) prefix each.
fn slash_parts(label: &str, value: &str) -> Option<Vec<(String, Cell)>> {
    let (prefix, names) = match label.rsplit_once(' ') {
        Some((p, n)) => (format!("{p} "), n),
        None => (String::new(), label),
    };
    let names: Vec<&str> = names.split('/').collect();
    if names.len() < 2 || names.iter().any(|n| n.is_empty()) {
        return None;
    }
    let mut texts: Vec<String> = Vec::new();
    for part in value.split('/') {
        let t = part.trim();
        match texts.last_mut() {
            Some(last) if !t.starts_with(|c: char| c.is_ascii_digit()) => {
                last.push('/');
                last.push_str(t);
            }
            _ => texts.push(t.to_string()),
        }
    }
    if texts.len() != names.len() {
        return None;
    }
    let mut cells: Vec<Cell> = Vec::with_capacity(texts.len());
    for t in &texts {
        match parse_cell(t) {
            c @ Cell::Number { .. } => cells.push(c),
            _ => return None,
        }
    }
    let last_unit = match cells.last() {
        Some(Cell::Number { unit: Some(u), .. }) => Some(u.clone()),
        _ => None,
    };
    Some(
        names
            .iter()
            .zip(cells)
            .map(|(n, mut c)| {
                if let Cell::Number { unit: u @ None, .. } = &mut c {
                    *u = last_unit.clone();
                }
                (format!("{prefix}{n}"), c)
            })
            .collect(),
    )
}

/// The number (and unit) in the first 1-3 words of `value`.
fn leading_cell(value: &str) -> Option<Cell> {
    // `sync speed: about 180MB/s`: a hedge says how exact it is.
    const HEDGES: [&str; 8] = [
        "about",
        "around",
        "approximately",
        "approx.",
        "roughly",
        "nearly",
        "almost",
        "~",
    ];
    let mut words: Vec<&str> = value.split_whitespace().collect();
    if words.len() > 1 && HEDGES.contains(&words[0].to_lowercase().as_str()) {
        words.remove(0);
    }
    (1..=words.len().min(3)).rev().find_map(|n| {
        let text = words[..n].join(" ");
        let cell = parse_cell(text.trim_end_matches([',', ';']));
        matches!(cell, Cell::Number { .. }).then_some(cell)
    })
}

/// A benchmark's parameter rather than a result.
pub(super) fn is_parameter(label: &str) -> bool {
    const PARAMETERS: [&str; 36] = [
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
        "testtime",
        "period",
    ];
    let l = label.trim().to_lowercase();
    // `Run time`, `Number of threads`, `test_time`: one name however
    // it is spelled.
    let squeezed: String = l
        .trim_start_matches("number of ")
        .chars()
        .filter(|c| !matches!(c, ' ' | '_' | '-'))
        .collect();
    // `failed: 0`, `skipped: 0`: how a test run went, not what it measured.
    const STATUS: [&str; 5] = ["failed", "skipped", "passed", "errors", "warnings"];
    // `Count: 76` above a histogram's buckets, `samples: 30`: how many
    // numbers a statistic is of, not one of them.
    const SAMPLES: [&str; 3] = ["count", "samples", "n"];
    // `Node size`, `Sector size`, `io_size`: what was set up, not measured.
    PARAMETERS.contains(&l.as_str())
        || SAMPLES.contains(&l.as_str())
        || PARAMETERS.contains(&squeezed.as_str())
        || STATUS.contains(&squeezed.as_str())
        || l.starts_with("nr_")
        || l.ends_with("_size")
        || l.ends_with(" size")
        || describes_machine(&l)
}

/// Takes out of `drafts` the rows read from a line that is only `Label:
/// N` under a label that names a parameter (`Number of threads: 128`,
/// `Concurrent Users: 50`), or under a label that gives the value to
/// something (`set to`): whatever layout took the line (two such lines
/// under a title read as a grid), it says what was run.
pub(super) fn drop_parameter_lines(block: &[Line], drafts: &mut [Draft]) {
    let text = |no: usize| super::index_in(block, no).map(|i| block[i].text);
    for d in drafts
        .iter_mut()
        .filter(|d| d.kind != Some(ClaimKind::Prose))
    {
        // `(With the granularity set to  15ms`: a sentence cut as a row.
        d.rows.retain(|r| {
            !text(r.line).is_some_and(|t| names_a_parameter(t) || is_share_done(t))
                && !r
                    .keys
                    .last()
                    .is_some_and(|k| super::prose::ends_assigning(k))
        });
    }
}

fn names_a_parameter(line: &str) -> bool {
    // Most lines end in no lone whole number: say so before the regex.
    let lone = line
        .rsplit_once([':', '='])
        .map(|(_, v)| v.trim())
        .is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()));
    if !lone {
        return false;
    }
    let Some(lv) = label_value(line) else {
        return false;
    };
    let whole = matches!(parse_cell(&lv.raw), Cell::Number { value, plain: true, .. } if value.fract() == 0.0);
    let last = lv.label.rsplit(' ').next().unwrap_or("").to_lowercase();
    lv.after.is_none()
        && lv.parts.is_empty()
        && whole
        && (is_parameter(&lv.label)
            || super::tokens::PARAMETER_WORDS.contains(&last.as_str())
            || super::tokens::PARAMETER_NAMES.contains(&last.as_str()))
}

/// `Resync Status : 49% complete`: how far a run has got.
fn is_share_done(line: &str) -> bool {
    static DONE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[^:=]+[:=]\s*[\d.]+\s*%\s*(?:complete|completed|done)\s*$")
            .expect("constant regex")
    });
    line.contains('%') && DONE.is_match(line)
}

/// lscpu's and the like's lines describe the machine the numbers were
/// taken on (`CPU(s): 128`, `Thread(s) per core: 2`, `CPU max MHz:
/// 2200.0000`, `Stepping: 2`): what it is, never what it measured.
fn describes_machine(l: &str) -> bool {
    const PARTS: [&str; 10] = [
        "cpu", "cpus", "core", "socket", "numa", "thread", "l1d", "l1i", "l2", "l3",
    ];
    // fio's `cpu : usr=34.96%, ...` measures: a part alone is no
    // description, a part with what it is (`CPU family`) is.
    let first = l.split([' ', '(']).next().unwrap_or("");
    // `CPU usage`, `CPU time`, `core util%`: what the CPU did.
    const DID: [&str; 7] = ["usage", "util", "load", "time", "idle", "busy", "%"];
    let described = l.split_whitespace().count() >= 2 && !DID.iter().any(|w| l.contains(w));
    l.contains("(s)")
        || matches!(l, "bogomips" | "stepping")
        || PARTS.contains(&first) && described
        || l.ends_with(" sizes")
        || label_unit(l).is_some_and(|u| u.kind == crate::mail::model::UnitKind::Frequency)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unbounded pattern with its length check reads every line as
    /// the bounded pattern alone does.
    #[test]
    fn split_label_reads_as_the_bounded_pattern() {
        let long = format!("{}: 5 ms", "a".repeat(41));
        let longer = format!("{}: 5 ms", "a".repeat(42));
        let grouped = format!(
            "{} (h:mm:ss or m:ss){}: 0:02.04",
            "b".repeat(30),
            "c".repeat(9)
        );
        let lines = [
            "before: 120k IOPS",
            "- p99 latency = 3151 us",
            "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:02.04",
            "nr_task: 1",
            "no separator here",
            "a:b",
            "  read : io=1024MB, bw=5000KB/s",
            long.as_str(),
            longer.as_str(),
            grouped.as_str(),
            "x = ",
            "1abc: 4",
        ];
        for line in lines {
            let bounded = LABEL_VALUE
                .captures(line)
                .map(|c| (c.get(1).unwrap().as_str(), c.get(2).unwrap().as_str()));
            assert_eq!(split_label(line), bounded, "{line}");
        }
        assert!(split_label(&long).is_some() && split_label(&longer).is_none());
    }
}
