//! What a table's numbers measure: a column's or a row's metric, the
//! metric a table's words name, and the units that decide between them.

use super::*;

/// Columns that each name what they measure (`IOPS`, `sys`, `lat
/// (us)`), when there are two or more and at least two name a metric
/// lab has: column → metric, `-` for the others (with the reason kept).
/// Empty when the columns are not of that kind.
/// Why a column is no metric of its own: an earlier column of the table
/// has its metric (`read.bw is another column's`). The bandwidth twin
/// reads the metric back from it.
const ANOTHER_COLUMNS: &str = " is another column's";

pub(super) fn column_metrics(
    t: &ClaimTable,
    sides: &[Side],
    ctx: &Ctx,
    skipped: &mut Vec<(String, String)>,
) -> (Vec<(String, String)>, bool) {
    let values: Vec<&crate::mail::Column> = t
        .columns
        .iter()
        .zip(sides)
        .filter(|(_, s)| **s != Side::Derived)
        .map(|(c, _)| c)
        .collect();
    if values.len() < 2 {
        return (vec![], false);
    }
    // One row, labelled by what its columns are statistics of: fio's
    // `lat (usec): min=20, max=241, avg=99.81` (columns min, max, avg,
    // stdev) or `READ: bw=4994MiB/s ...`. Its label is read with each
    // column's name (`lat avg`).
    // Rows that differ only by their side (`before: lat (usec)`, `after :
    // lat (usec)`) are one family's, each kernel's.
    let family = match t.rows.as_slice() {
        [r] => r
            .keys
            .last()
            .map(|k| k.trim().to_string())
            .unwrap_or_default(),
        rows => {
            let labels: Vec<&str> = rows
                .iter()
                .map(|r| r.keys.last().map_or("", |k| k.as_str()))
                .collect();
            super::sides::shared_rest(&labels)
                .or_else(|| super::sides::shared_by_runs(&labels))
                .unwrap_or_default()
        }
    };
    // Only a label that names what is measured (`lat (usec)`, `READ`,
    // `clat`): `QD32` is a cell, not a family of metrics.
    // fio's own labels; a benchmark's `Throughput` row is not fio's.
    const FAMILY: [&str; 8] = ["lat", "clat", "slat", "bw", "iops", "read", "write", "trim"];
    let family = if family
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| FAMILY.contains(&w))
    {
        family
    } else {
        String::new()
    };
    let mut out = Vec::new();
    let mut why = Vec::new();
    let mut by_family = false;
    for col in &values {
        let i = t.columns.iter().position(|c| c.name == col.name);
        let unit = i
            .and_then(|i| t.rows.iter().find_map(|r| t.unit_of(r, i)))
            .map(|u| u.kind);
        // The column's own words only: a caption names the table, not
        // each column.
        // The row's label comes first when it names one (`READ` of
        // `READ: bw=...` says whose bandwidth it is, whatever the
        // workload does).
        let own = row_metric(&col.name, unit, "", ctx);
        let named = if family.is_empty() {
            own
        } else {
            let unnamed = col.name.starts_with('#');
            let name = if unnamed { "" } else { col.name.as_str() };
            match row_metric(&format!("{family} {name}"), unit, "", ctx) {
                Ok(m) => Ok(m),
                // `#2` is named by nothing but its row.
                Err(w) if unnamed => Err(w),
                Err(_) => own,
            }
        };
        // An unnamed time of seconds and more (dd's `6.02983 s`) is how
        // long a whole run took: no latency of one I/O.
        let named = if col.name.starts_with('#') && i.is_some_and(|i| whole_seconds(t, i)) {
            Err(
                "an unnamed time of seconds is how long the run took, which lab does not claim"
                    .into(),
            )
        } else {
            named
        };
        // `READ 30898KB/s, 7724, 555us`: the bare count between a cell's
        // bandwidth and its latency is fio's IOPS, as fio prints them.
        let named = match named {
            Err(w) => match iops_between(t, &col.name, unit) {
                Some(base) => row_metric(&format!("{base} iops"), None, "", ctx).map_err(|_| w),
                None => Err(w),
            },
            ok => ok,
        };
        // `#2` is a column the mail left unnamed: its unit alone is no
        // reason to read the row as a family of metrics.
        by_family |= named.is_ok() && !family.is_empty() && !col.name.starts_with('#');
        match named {
            Ok(m) if !out.iter().any(|(_, x)| *x == m) => out.push((col.name.clone(), m)),
            Ok(m) => why.push((col.name.clone(), format!("{m}{ANOTHER_COLUMNS}"))),
            Err(w) => why.push((col.name.clone(), w)),
        }
    }
    twin_bandwidth(t, &mut out, &mut why);
    // Two metrics at least, or one read with its row's label, or one
    // beside columns that name nothing lab measures (`IOPS` and `Lock
    // contention`): a column that only repeats another's metric (`v6.1`,
    // `v6.2` by their unit) is no metric of its own.
    let lone =
        out.len() == 1 && !why.is_empty() && why.iter().all(|(_, w)| !w.ends_with(ANOTHER_COLUMNS));
    if out.len() < 2 && (out.is_empty() || !by_family) && !lone {
        return (vec![], false);
    }
    for (col, w) in why {
        out.push((col.clone(), crate::matrix::claims::SKIP.into()));
        skipped.push((col, w));
    }
    (out, by_family)
}

/// fio prints a bandwidth twice (`BW=894KiB/s (915kB/s)`): a column
/// right after a bandwidth column, the only other one of its metric, is
/// that bandwidth in its own unit, which lab stores under its own name
/// (`read.bw_kb`). A third column of the metric (a group line's
/// `min-max` range) makes none of them a twin.
fn twin_bandwidth(
    t: &ClaimTable,
    out: &mut Vec<(String, String)>,
    why: &mut Vec<(String, String)>,
) {
    let at = |name: &str| t.columns.iter().position(|c| c.name == name);
    let mut i = 0;
    while i < why.len() {
        let (col, w) = &why[i];
        let Some(m) = w.strip_suffix(ANOTHER_COLUMNS) else {
            i += 1;
            continue;
        };
        let once = why.iter().filter(|(_, w2)| w2 == w).count() == 1;
        let first = out.iter().find(|(_, x)| x == m).map(|(c, _)| c.clone());
        let next =
            matches!((first.as_deref().and_then(at), at(col)), (Some(a), Some(b)) if b == a + 1);
        let unit = at(col).and_then(|c| t.rows.iter().find_map(|r| t.unit_of(r, c)));
        let twin = unit
            .and_then(|u| bandwidth_in(m, &u.symbol))
            .filter(|twin| once && next && !out.iter().any(|(_, x)| x == twin));
        match twin {
            Some(twin) => {
                let (col, _) = why.remove(i);
                out.push((col, twin));
            }
            None => i += 1,
        }
    }
}

/// A bandwidth metric (`read.bw`) under the name lab stores it in
/// `symbol`'s unit (`read.bw_kb` for kB/s), if fio prints that unit.
fn bandwidth_in(metric: &str, symbol: &str) -> Option<String> {
    let dir = metric.strip_suffix(".bw")?;
    crate::matrix::derived::FIO_BANDWIDTH
        .iter()
        .find(|(_, _, u)| *u == symbol)
        .map(|(name, ..)| format!("{dir}.{name}"))
}

/// Every value of column `i` is a time of at least a second.
fn whole_seconds(t: &ClaimTable, i: usize) -> bool {
    let mut any = false;
    for r in &t.rows {
        let Some(crate::mail::Value::Number { value, .. }) = r.values.get(i) else {
            continue;
        };
        match t.unit_of(r, i) {
            Some(u) if u.kind == UnitKind::Time && value * u.scale >= 1e9 => any = true,
            _ => return false,
        }
    }
    any
}

/// `rows: metric`: each row's metric from its label (the last key),
/// with rows lab measures nothing for mapped to [`SKIP`] and their
/// reasons kept. Rows keyed by more than the label must share the rest.
pub(super) fn metric_rows(
    t: &ClaimTable,
    caption: &str,
    ctx: &Ctx,
    c: &mut ClaimDraft,
) -> Result<Rows, String> {
    let heads: Vec<&[String]> = t
        .rows
        .iter()
        .map(|r| &r.keys[..r.keys.len().saturating_sub(1)])
        .collect();
    // A row's label with its section (`read IOPS`), when it has one.
    let section_of = |r: &crate::mail::Row| {
        r.keys
            .len()
            .checked_sub(2)
            .and_then(|i| r.keys.get(i).filter(|_| i > 0))
            .cloned()
    };
    let qualified: Vec<String> = t
        .rows
        .iter()
        .filter_map(|r| {
            let label = r.keys.last()?;
            Some(match section_of(r) {
                Some(s) => format!("{s} {label}"),
                None => label.clone(),
            })
        })
        .collect();
    // A row said twice under the same keys (fio's group line gives
    // `bw=573MiB/s (601MB/s)`: one measure in two units) is one row.
    let mut once: Vec<&[String]> = Vec::new();
    let mut lasts_once: Vec<&str> = Vec::new();
    let mut qualified_once: Vec<&str> = Vec::new();
    for (r, q) in t.rows.iter().zip(&qualified) {
        if !once.contains(&r.keys.as_slice()) {
            once.push(&r.keys);
            lasts_once.extend(r.keys.last().map(String::as_str));
            qualified_once.push(q);
        }
    }
    let distinct = |ls: &[&str]| (1..ls.len()).all(|i| !ls[..i].contains(&ls[i]));
    let unique = distinct(&lasts_once);
    // ... and when the labels repeat across sections (fio's `read / IOPS`
    // and `write / IOPS`), the map names each with its section, as the
    // binding reads it.
    let by_section = !unique && distinct(&qualified_once);
    // fio's output: [job, section, metric]; one job, and labels that
    // tell the rows apart, read with their section (`read IOPS`).
    let one_job = heads.iter().all(|h| h.first() == heads[0].first());
    if heads.windows(2).any(|w| w[0] != w[1]) && !((unique || by_section) && one_job) {
        let groups: Vec<String> = heads.iter().map(|h| h.join(" / ")).collect();
        let mut g = groups.clone();
        g.dedup();
        return Err(format!(
            "its row groups ({}) match no axis of the matrix",
            g.join("; ")
        ));
    }
    let mut metrics: Vec<(String, String)> = Vec::new();
    for (r, named) in t.rows.iter().zip(&qualified) {
        let Some(last) = r.keys.last() else {
            return Err("a row has no label".into());
        };
        let label = if by_section { named } else { last };
        if metrics.iter().any(|(l, _)| l == label) {
            continue;
        }
        let unit = value_unit(t, r).map(|u| u.kind);
        if !r
            .values
            .iter()
            .any(|v| matches!(v, crate::mail::Value::Number { .. }))
        {
            metrics.push((label.clone(), crate::matrix::claims::SKIP.into()));
            c.skipped
                .push((label.clone(), "the mail gives no number".into()));
            continue;
        }
        if t.kind == crate::mail::ClaimKind::Fio && sampled(last) {
            metrics.push((label.clone(), crate::matrix::claims::SKIP.into()));
            c.skipped.push((
                label.clone(),
                "fio's statistics of its per-interval samples; the job's own figure is on its IOPS=/BW= line".into(),
            ));
            continue;
        }
        let words = match section_of(r) {
            Some(s) => format!("{s} {}", strip_side(last)),
            None => strip_side(last),
        };
        match row_metric(&words, unit, caption, ctx) {
            Ok(m) => metrics.push((label.clone(), m)),
            Err(why) => {
                metrics.push((label.clone(), crate::matrix::claims::SKIP.into()));
                c.skipped.push((label.clone(), why));
            }
        }
    }
    if metrics
        .iter()
        .all(|(_, m)| m == crate::matrix::claims::SKIP)
    {
        let why = c
            .skipped
            .first()
            .map(|(l, w)| format!("row '{l}': {w}"))
            .unwrap_or_default();
        return Err(why);
    }
    Ok(Rows::Metrics(metrics))
}

/// perf events a row may name, as perf spells them.
pub(super) const PERF_EVENTS: [&str; 12] = [
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "cycles",
    "instructions",
    "branches",
    "branch-misses",
    "cache-misses",
    "cache-references",
    "task-clock",
    "cpu-clock",
    "stalled-cycles-frontend",
];

/// The metric a row label names: an lkp `fio.*` name, a perf event, or
/// words such as `p99 read latency`.
pub(super) fn row_metric(
    label: &str,
    unit: Option<UnitKind>,
    caption: &str,
    ctx: &Ctx,
) -> Result<String, String> {
    let l = label.trim().to_ascii_lowercase();
    if let Some(rest) = l.strip_prefix("fio.") {
        return lkp_metric(rest);
    }
    let l = l
        .strip_prefix("perf-stat.i.")
        .or_else(|| l.strip_prefix("perf-stat.ps."))
        .unwrap_or(&l)
        .to_string();
    let event = match l.as_str() {
        "ctx switches" | "context switches" | "cs" | "ctx-switches" => Some("context-switches"),
        "cpu migrations" | "migrations" => Some("cpu-migrations"),
        "page faults" | "faults" => Some("page-faults"),
        e => PERF_EVENTS.iter().copied().find(|p| *p == e),
    };
    if let Some(e) = event {
        return Ok(format!("perf.{e}"));
    }
    metric(&l, caption, unit, ctx)
}

/// lkp-tests' fio names: `write_iops`, `read_bw_MBps`,
/// `write_clat_mean_us`, `write_clat_99%_us`.
pub(super) fn lkp_metric(name: &str) -> Result<String, String> {
    let mut parts = name.split('_');
    let dir = parts.next().unwrap_or("");
    if !["read", "write"].contains(&dir) {
        return Err(format!("lab's fio reports no '{name}'"));
    }
    let rest: Vec<&str> = parts.collect();
    let m = match rest.as_slice() {
        ["iops"] => "iops".to_string(),
        ["bw", ..] => "bw".to_string(),
        [kind @ ("clat" | "lat"), stat, ..] => {
            let stat = match *stat {
                "mean" => "mean",
                s => match s
                    .strip_suffix('%')
                    .and_then(percent_number)
                    .and_then(kept_percentile)
                {
                    Some(p) => p,
                    None => return Err(format!("lab's fio reports no '{name}'")),
                },
            };
            format!("{kind}_{stat}")
        }
        _ => return Err(format!("lab's fio reports no '{name}'")),
    };
    Ok(format!("{dir}.{m}"))
}

/// The unit of a row's values, leaving out difference columns (`+6.6%`).
pub(super) fn value_unit<'a>(
    t: &'a ClaimTable,
    r: &'a crate::mail::Row,
) -> Option<&'a crate::mail::Unit> {
    (0..t.columns.len())
        .filter(|i| side(&t.columns[*i].name) != Side::Derived)
        .find_map(|i| t.unit_of(r, i))
}

/// The unit symbols of a row, as words a metric is read from.
pub(super) fn unit_words(t: &ClaimTable, r: &crate::mail::Row) -> String {
    value_unit(t, r)
        .map(|u| u.symbol.to_string())
        .unwrap_or_default()
}

/// The metric a table's words name, with the workloads' direction when
/// the words name none. `cpu.total` and `*.total` are derived metrics
/// the draft defines.
pub fn metric(
    words: &str,
    caption: &str,
    unit: Option<UnitKind>,
    ctx: &Ctx,
) -> Result<String, String> {
    let toks_of = |s: &str| -> Vec<String> {
        s.to_ascii_lowercase()
            .split(|c: char| !(c.is_ascii_alphanumeric() || "._/%".contains(c)))
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect()
    };
    let (own, cap) = (toks_of(words), toks_of(caption));
    let toks: Vec<&str> = own.iter().chain(&cap).map(String::as_str).collect();
    let has = |x: &str| toks.contains(&x);
    let any = |xs: &[&str]| xs.iter().any(|x| has(x));
    // The unit decides; then the row's own words; then the caption's.
    let kind_of = |ts: &[String]| -> Option<&'static str> {
        let any = |xs: &[&str]| ts.iter().any(|t| xs.contains(&t.as_str()));
        if any(&["iops", "kiops", "ops/s"]) {
            Some("iops")
        } else if any(&[
            "bandwidth",
            "throughput",
            "bw",
            "mb/s",
            "mib/s",
            "gb/s",
            "gib/s",
            "kb/s",
            "kib/s",
        ]) {
            Some("bw")
        } else if any(&["latency", "lat", "clat", "usec", "msec", "nsec", "µs"]) {
            Some("lat")
        } else if any(&["cpu", "usr", "sys"]) {
            Some("cpu")
        } else {
            None
        }
    };
    // fio's submission latency and its min/max/stdev: lab keeps none.
    if own.iter().any(|t| t == "slat") {
        return Err("lab keeps no submission latency (slat)".into());
    }
    if let Some(t) = own
        .iter()
        .find(|t| ["min", "max", "stdev", "stddev", "dev"].contains(&t.as_str()))
    {
        return Err(format!("lab keeps no latency {t}"));
    }
    let kind = match unit {
        Some(UnitKind::Rate) => "iops",
        Some(UnitKind::Throughput) => "bw",
        Some(UnitKind::Time) => "lat",
        Some(UnitKind::Percent) if any(&["cpu", "usr", "sys", "util"]) => "cpu",
        Some(UnitKind::Percent) => {
            return Err("a percentage of something lab does not measure".into());
        }
        Some(UnitKind::Count | UnitKind::Frequency) => {
            return Err("a count that lab's fio does not report".into());
        }
        Some(UnitKind::Size) => {
            return Err("an amount of data, which lab's fio does not report".into());
        }
        Some(UnitKind::Ratio) => {
            return Err("a ratio of two runs, which lab computes, not measures".into());
        }
        None => match kind_of(&own).or_else(|| kind_of(&cap)) {
            Some(k) => k,
            None => return Err("its words name no IOPS, bandwidth, latency or CPU".into()),
        },
    };
    // A latency's extreme or spread is no mean: lab keeps means and
    // the percentiles of FIO_PERCENTILES, and no other (fio's `clat
    // p1.00`, `99.95th`).
    const NOT_MEAN: [&str; 10] = [
        "maximum", "minimum", "worst", "peak", "highest", "lowest", "min", "max", "stdev", "stddev",
    ];
    if kind == "lat"
        && let Some(t) = toks
            .iter()
            .find(|t| NOT_MEAN.contains(t) || other_percentile(t))
    {
        return Err(format!("lab keeps no {t} latency"));
    }
    if kind == "cpu" {
        // fio's `cpu : usr=15.63%, sys=34.79%, ctx=7333387, majf=0,
        // minf=41`: context switches and page faults are counts.
        if let Some(t) = toks.iter().find(|t| ["ctx", "majf", "minf"].contains(t)) {
            return Err(format!("fio's {t} is a count, not a CPU share"));
        }
        return Ok(
            match (has("usr") || has("user"), has("sys") || has("system")) {
                (true, false) => "cpu.usr".into(),
                (false, true) => "cpu.sys".into(),
                _ => "cpu.total".into(),
            },
        );
    }
    let said = if any(&["fsync", "fdatasync", "sync"]) && kind == "lat" {
        Some("sync")
    } else if any(&["randrw", "mixed", "readwrite"]) {
        Some("both")
    } else if any(&["write", "writes", "randwrite", "written", "seqwrite", "wr"]) {
        Some("write")
    } else if any(&["read", "reads", "randread", "seqread", "rd"]) {
        Some("read")
    } else {
        None
    };
    let dir = match said {
        Some(d) => d,
        None => {
            let mut ds = ctx.directions.clone();
            ds.dedup();
            match ds[..] {
                [d] => d,
                [] => return Err("neither the table nor a workload says read or write".into()),
                _ => "both",
            }
        }
    };
    if dir == "both" {
        return match kind {
            "iops" | "bw" => Ok(format!("{kind}.total")),
            _ => Err("its latency mixes reads and writes; lab measures them apart".into()),
        };
    }
    if kind != "lat" {
        return Ok(format!("{dir}.{kind}"));
    }
    let numbered = toks
        .iter()
        .find_map(|t| percentile(t))
        .and_then(kept_percentile);
    let pct = if let Some(p) = numbered {
        p
    } else if any(&["p999", "99.9%"]) {
        "p99_9"
    } else if any(&["tail", "99%"]) {
        "p99"
    } else if any(&["median", "50%"]) {
        "p50"
    } else {
        "mean"
    };
    let base = if has("clat") || has("completion") {
        "clat"
    } else {
        "lat"
    };
    Ok(format!("{dir}.{base}_{pct}"))
}

/// The percentile a word names: `p99.00` and `99.00th` → 99. (`99%`
/// names one only where a percentile is sure to be meant, as in lkp's
/// `read_clat_99%_us`: elsewhere a percent is a change or a share.)
fn percentile(tok: &str) -> Option<f64> {
    tok.strip_prefix('p')
        .or_else(|| tok.strip_suffix("th"))
        .and_then(percent_number)
}

/// `99.9` of a percentile's digits, from 0 to 100.
fn percent_number(n: &str) -> Option<f64> {
    Some(n)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .and_then(|n| n.parse::<f64>().ok())
        .filter(|v| (0.0..=100.0).contains(v))
}

/// The name lab stores a percentile under (`p90`), if it keeps it:
/// the one list of them is the matrix's [`FIO_PERCENTILES`].
fn kept_percentile(v: f64) -> Option<&'static str> {
    use crate::matrix::derived::FIO_PERCENTILES;
    FIO_PERCENTILES
        .iter()
        .find(|(key, _)| key.parse::<f64>().ok() == Some(v))
        .map(|(_, name)| *name)
}

/// A percentile lab does not keep: `p1.00`, `99.95th`.
fn other_percentile(tok: &str) -> bool {
    percentile(tok).is_some_and(|v| kept_percentile(v).is_none())
}

/// fio's `bw (KiB/s): min=..., avg=...` and `iops : min=...` lines:
/// statistics of the samples it took each interval, not the job's rate.
fn sampled(label: &str) -> bool {
    let mut words = label.split_whitespace();
    let first = words.next().unwrap_or("");
    let last = label.split_whitespace().last().unwrap_or("");
    matches!(first, "bw" | "iops")
        && matches!(last, "min" | "max" | "avg" | "stdev" | "per" | "samples")
}

/// `X (2)` of a cell `X`, `X (2)`, `X (3)` whose first number is a
/// bandwidth and whose third a time, itself with no unit: the count
/// between them is the cell's IOPS. Gives `X`.
fn iops_between<'a>(t: &ClaimTable, name: &'a str, unit: Option<UnitKind>) -> Option<&'a str> {
    let base = name.strip_suffix(" (2)")?;
    let kind = |n: &str| {
        let i = t.columns.iter().position(|c| c.name == n)?;
        t.rows.iter().find_map(|r| t.unit_of(r, i)).map(|u| u.kind)
    };
    let fits = unit.is_none()
        && kind(base) == Some(UnitKind::Throughput)
        && kind(&format!("{base} (3)")) == Some(UnitKind::Time);
    fits.then_some(base)
}

#[cfg(test)]
mod tests {
    /// fio's own output: the 99th percentile in its spelling is one lab
    /// keeps, other percentiles, extremes and per-interval samples are
    /// not, and `ctx`/`majf` are counts.
    #[test]
    fn fio_output_rows_lab_keeps_and_does_not() {
        assert_eq!(super::percentile("p99.00"), Some(99.0));
        assert_eq!(super::percentile("99.90th"), Some(99.9));
        assert!(super::other_percentile("p99.95") && super::other_percentile("p1.00"));
        assert!(!super::other_percentile("p95.00") && super::percentile("90%").is_none());
        assert!(!super::other_percentile("p50.00"));
        assert!(super::sampled("bw avg") && super::sampled("iops stdev"));
        assert!(!super::sampled("BW") && !super::sampled("clat avg"));
    }
}
