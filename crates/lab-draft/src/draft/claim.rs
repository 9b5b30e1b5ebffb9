//! A mail's tables as `claims:` entries: which columns are before and
//! after, what the rows are (an axis, the variants, or metrics), what
//! the numbers measure, and under which conditions.
//!
//! A table whose numbers can't be tied to the matrix is no claim: the
//! reason goes into a comment, never a guess.

use super::facts;
use crate::mail::{ClaimTable, UnitKind};
use regex::Regex;
use std::sync::LazyLock;

/// Which side of a before/after comparison a column or row label is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
    /// A difference, ratio or spread: not a measured value.
    Derived,
    Unknown,
}

/// The side a column or row label names.
pub fn side(label: &str) -> Side {
    let l = label.trim().to_ascii_lowercase();
    let words: Vec<&str> = l
        .split(|c: char| c.is_whitespace() || "()[]:,".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |x: &str| words.contains(&x);
    const DERIVED: [&str; 13] = [
        "diff",
        "delta",
        "change",
        "%",
        "ratio",
        "speedup",
        "gain",
        "improvement",
        "+/-",
        "stddev",
        "%change",
        "%diff",
        "regression",
    ];
    // Prose: "from 330 usec to 262 usec".
    match l.as_str() {
        "from" => return Side::Before,
        "to" => return Side::After,
        _ => {}
    }
    if DERIVED.iter().any(|d| has(d)) || l.starts_with('%') || l.ends_with('%') || l == "±" {
        return Side::Derived;
    }
    const BEFORE: [&str; 17] = [
        "previous",
        "prior",
        "existing",
        "before",
        "base",
        "baseline",
        "unpatched",
        "vanilla",
        "orig",
        "original",
        "old",
        "stock",
        "upstream",
        "mainline",
        "without",
        "w/o",
        "default",
    ];
    const AFTER: [&str; 11] = [
        "after", "patched", "patch", "new", "with", "w/", "fixed", "+patch", "series", "proposed",
        "modified",
    ];
    if BEFORE.iter().any(|b| has(b))
        || l.starts_with("w/o")
        || l.starts_with("no ")
        || l.starts_with("-patch")
    {
        return Side::Before;
    }
    if AFTER.iter().any(|a| has(a)) || l.starts_with("w/") || l.starts_with('+') {
        return Side::After;
    }
    Side::Unknown
}

/// A label that states a bound or reference rather than a measurement:
/// `Theoretical maximum`, `line rate`, `ideal`.
pub fn names_bound(label: &str) -> bool {
    const WORDS: [&str; 7] = [
        "theoretical",
        "maximum",
        "limit",
        "ideal",
        "bound",
        "line rate",
        "expected",
    ];
    let l = label.to_ascii_lowercase();
    WORDS.iter().any(|w| l.contains(w))
}

/// Whether a row label is named with the patch's own distinctive words
/// (`Kthread` in "dm-delay: flush delayed bios from a kthread"): that
/// row is the patched kernel. Short and common words do not count.
pub fn names_the_patch(label: &str, subject: &str) -> bool {
    const COMMON: [&str; 12] = [
        "block", "patch", "with", "from", "into", "when", "this", "that", "the", "and", "for",
        "use",
    ];
    let words = |s: &str| -> Vec<String> {
        s.to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 4 && !COMMON.contains(w))
            .map(String::from)
            .collect()
    };
    let subject = words(subject);
    let label = words(label);
    !label.is_empty() && label.iter().all(|w| subject.contains(w))
}

/// A label without its before/after words: `p99 latency before` →
/// `p99 latency`.
fn strip_side(label: &str) -> String {
    label
        .split_whitespace()
        .filter(|w| !matches!(side(w), Side::Before | Side::After))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a table's rows stand for.
#[derive(Clone, Debug, PartialEq)]
pub enum Rows {
    /// Values of an axis, from this key column (by name).
    Axis { column: String, axis: String },
    /// Values of several axes, one per key column, in order.
    Axes(Vec<String>),
    /// Before and after.
    Variants,
    /// Each row is a metric: label → metric.
    Metrics(Vec<(String, String)>),
    /// One row, one cell set: the values need no row key.
    Single,
}

impl Rows {
    /// Whether the rows are values of `axis`.
    fn runs_over(&self, axis: &str) -> bool {
        match self {
            Rows::Axis { axis: a, .. } => a == axis,
            Rows::Axes(axes) => axes.iter().any(|a| a == axis),
            _ => false,
        }
    }
}

/// A claim as the draft writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimDraft {
    pub table: usize,
    /// The table's caption, or its first key, for the comment.
    pub about: String,
    pub rows: Rows,
    /// Label → variant, for rows or columns named otherwise.
    pub aliases: Vec<(String, String)>,
    /// Row label → its variant, for `p99 before: 1205 usec` rows.
    pub row_variants: Vec<(String, String)>,
    /// Rows lab measures nothing for, and why.
    pub skipped: Vec<(String, String)>,
    pub columns: Vec<(String, String)>,
    /// Column → metric, for a table whose columns measure different
    /// things (`IOPS`, `sys`); `-` for a column lab measures nothing for.
    pub column_metrics: Vec<(String, String)>,
    /// The one row's label was read with the columns' names (`lat (usec)`
    /// with `avg`): it names what they measure, not a cell.
    pub row_is_family: bool,
    /// The group headers above the rows are the variants (`Base:`,
    /// `Patched:`): `group_axis: variant`, aliases naming them.
    pub group_variants: bool,
    /// The variant every value belongs to when no column names one.
    pub from_variant: Option<String>,
    /// `from_variant` is `after` because nothing said otherwise: no
    /// column, row or caption named a side.
    pub variant_by_default: bool,
    pub metric: Option<String>,
    pub unit: Option<String>,
    /// The unit is lab's reading of bare `155K` numbers, not the mail's.
    pub inferred_unit: bool,
    pub conditions: Vec<(String, String)>,
}

/// What the matrix offers a claim: its axes and the directions of its
/// workloads (`read`, `write`, `both`).
pub struct Ctx<'a> {
    pub axes: &'a [(String, Vec<String>)],
    pub directions: Vec<&'static str>,
    /// Commands that became workloads: text, axis, value.
    pub measured_by: &'a [(String, String, String)],
    /// The subjects of the mail's messages, `[PATCH]` tags and all.
    pub subject: &'a str,
    /// Tables (from 1) whose numbers the mail writes with a multiplier
    /// and no unit (`155K`).
    pub bare_multiplied: &'a [usize],
}

/// The values of the matrix's axes a caption names, one per axis that
/// it names exactly one value of: `1ms` or `1 ms` for delay, `QD32` or
/// `iodepth=32` for iodepth, `8 jobs` for numjobs, a word for a word
/// value (`nvme0n1`, `randread`).
fn caption_values(caption: &str, ctx: &Ctx) -> Vec<(String, String)> {
    let toks: Vec<String> = caption
        .to_ascii_lowercase()
        .split(|c: char| c.is_whitespace() || ",;:()[]".contains(c))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end_matches('.').to_string())
        .collect();
    let has = |t: &str| toks.iter().any(|x| x == t);
    let pair = |a: &str, b: &[&str]| {
        toks.windows(2)
            .any(|w| w[0] == a && b.contains(&w[1].as_str()))
    };
    let mut out = Vec::new();
    for (axis, values) in ctx.axes {
        if values.len() < 2 || axis == "arch" || axis == "hz" {
            continue;
        }
        let named: Vec<&String> = values
            .iter()
            .filter(|v| {
                let v = v.to_ascii_lowercase();
                let numeric = v.parse::<f64>().is_ok();
                match axis.as_str() {
                    "delay" => has(&format!("{v}ms")) || pair(&v, &["ms", "msec"]),
                    "iodepth" => {
                        has(&format!("qd{v}"))
                            || has(&format!("qd={v}"))
                            || has(&format!("iodepth={v}"))
                    }
                    "numjobs" => {
                        pair(&v, &["jobs", "job", "threads", "thread"])
                            || has(&format!("numjobs={v}"))
                    }
                    _ if numeric => has(&format!("{axis}={v}")),
                    _ => has(&v),
                }
            })
            .collect();
        if let [one] = named[..] {
            out.push((axis.clone(), one.clone()));
        }
    }
    out
}

/// The axis value of the workload a caption's command became: the
/// numbers under `$ fio ...` are that job's.
fn measured_by(caption: &str, ctx: &Ctx) -> Option<(String, String)> {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let cap = norm(caption);
    ctx.measured_by
        .iter()
        .find(|(quote, ..)| {
            let q = norm(quote);
            !q.is_empty() && cap.contains(&q)
        })
        .map(|(_, a, v)| (a.clone(), v.clone()))
}

static UNIT_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\bin |\(|\[)\s*(ms|msec|us|usec|µs|ns|nsec|s|sec|[kmg]i?b/s|iops|k ?iops)\s*[)\],]?")
        .expect("valid regex")
});

/// Unit words that are units wherever they stand in a caption (`ms`
/// or `s` alone may be a delay or a duration).
static UNIT_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[\s(\[,])(k ?iops|iops|[kmg]i?b/s|usecs?|msecs?|nsecs?|µs)(?:$|[\s)\],.;:])",
    )
    .expect("valid regex")
});

/// The unit a caption names: "mean latency in ms", "(usec)", "[MiB/s]",
/// "(4k random read, KIOPS, ...)".
pub fn caption_unit(caption: &str) -> Option<String> {
    UNIT_WORD
        .captures(caption)
        .or_else(|| UNIT_ANYWHERE.captures(caption))
        .map(|c| c[1].to_string())
}

/// Programs whose numbers a mail shows under their command line; lab
/// measures with fio only.
const PROGRAMS: [&str; 16] = [
    "fio",
    "dd",
    "mkfs",
    "xfs_io",
    "hdparm",
    "iozone",
    "bonnie++",
    "dbench",
    "pgbench",
    "sysbench",
    "fs_mark",
    "filebench",
    "t/io_uring",
    "io_uring",
    "blktests",
    "stress-ng",
];

/// The program a caption runs, when the caption is a command line
/// (`# dd if=/dev/loop0 ...`, `$ time mkfs.ext4 ...`).
fn caption_program(caption: &str) -> Option<String> {
    let first = caption.lines().next()?.trim();
    let (cmd, prompted) = match first
        .strip_prefix("# ")
        .or_else(|| first.strip_prefix("$ "))
    {
        Some(c) => (c, true),
        None => (first, false),
    };
    let mut words = cmd.split_whitespace();
    let mut w = words.next()?;
    // Wrappers, their options and a CPU list (`taskset -c 1,2`).
    let cpus = |w: &str| w.chars().all(|c| c.is_ascii_digit() || ",-".contains(c));
    while ["time", "sudo", "taskset", "perf", "numactl", "stat"].contains(&w)
        || w.starts_with('-')
        || cpus(w)
    {
        w = words.next()?;
    }
    let prog = w.rsplit('/').next().unwrap_or(w);
    let known = PROGRAMS
        .iter()
        .any(|p| prog == *p || prog.starts_with(&format!("{p}.")));
    (known || (prompted && cmd.contains(" -"))).then(|| prog.to_string())
}

/// A lone number in a sentence (`sees 10 ms each time`) names neither a
/// side nor a cell: drafting it, or reading the setup from its sentence,
/// would guess both.
pub fn names_no_cell(t: &ClaimTable) -> bool {
    t.kind == crate::mail::ClaimKind::Prose
        && t.columns.len() == 1
        && side(&t.columns[0].name) == Side::Unknown
}

/// Draft the claim for table `n` (from 1); Err says why there is none.
pub fn draft(n: usize, t: &ClaimTable, ctx: &Ctx) -> Result<ClaimDraft, String> {
    let caption = t.caption.clone().unwrap_or_default();
    // fio's t/io_uring is drafted as a fio job.
    if let Some(p) = caption_program(&caption)
        && p != "fio"
        && p != "io_uring"
    {
        return Err(format!(
            "its numbers come from `{p}`, and lab measures with fio"
        ));
    }
    if names_no_cell(t) {
        return Err("a single number in a sentence names no variant or cell".into());
    }
    let about = if caption.is_empty() {
        format!("table at line {} of message {}", t.line, t.origin.message)
    } else {
        caption.lines().map(str::trim).collect::<Vec<_>>().join(" ")
    };
    let mut c = ClaimDraft {
        table: n,
        about,
        rows: Rows::Single,
        aliases: vec![],
        row_variants: vec![],
        skipped: vec![],
        columns: vec![],
        column_metrics: vec![],
        row_is_family: false,
        group_variants: false,
        from_variant: None,
        variant_by_default: false,
        metric: None,
        unit: None,
        inferred_unit: false,
        conditions: vec![],
    };
    let sides = column_sides(t);
    columns(&mut c, t, &sides, ctx);
    group_variants(&mut c, t);
    let rows_are_variants = rows(&mut c, t, &caption, ctx)?;
    // A claim has one `metrics:` map: when the rows name the metrics,
    // the columns cannot name them too.
    if matches!(c.rows, Rows::Metrics(_)) {
        c.column_metrics.clear();
    }
    if c.columns.is_empty() && !rows_are_variants {
        one_variant_columns(&mut c, t, &sides, &caption)?;
    }
    // The one row of `lat (usec): min=.., avg=..` under "Baseline:" is
    // that variant's: its label says what, the caption whose.
    if c.row_is_family
        && c.row_variants.is_empty()
        && let ([r], Some(v)) = (t.rows.as_slice(), c.from_variant.clone())
        && let Some(label) = r.keys.last()
    {
        c.row_variants.push((label.clone(), v));
    }
    metric_and_unit(&mut c, t, &caption, n, ctx)?;
    conditions(&mut c, &caption, ctx)?;
    Ok(c)
}

/// Two tables of one message with the same rows and conditions, each of
/// one variant, the first not saying whose numbers they are: a mail shows the
/// problem first and the patched numbers after it ("... shows this
/// quite easily:", then "With that in place, the same test case now
/// does:"). The first becomes the unpatched kernel's. More than two
/// such tables are left as they are.
pub fn order_sides(claims: &mut [ClaimDraft], tables: &[ClaimTable]) {
    let shape = |c: &ClaimDraft| {
        tables.get(c.table.wrapping_sub(1)).map(|t| {
            let keys: Vec<&Vec<String>> = t.rows.iter().map(|r| &r.keys).collect();
            // Tables under two commands measure two workloads.
            (t.origin.message, keys, c.conditions.clone())
        })
    };
    let patched: Vec<usize> = (0..claims.len())
        .filter(|&i| {
            claims[i].from_variant.as_deref() == Some("after") && shape(&claims[i]).is_some()
        })
        .collect();
    for &a in &patched {
        let same: Vec<usize> = patched
            .iter()
            .copied()
            .filter(|&b| shape(&claims[b]) == shape(&claims[a]))
            .collect();
        if same.len() != 2 || same[0] != a || !claims[a].variant_by_default {
            continue;
        }
        let c = &mut claims[a];
        c.from_variant = Some("before".into());
        c.variant_by_default = false;
        for (_, v) in c.columns.iter_mut().chain(c.row_variants.iter_mut()) {
            if v == "after" {
                *v = "before".into();
            }
        }
    }
}

/// Which side each column is: before, after, derived (a ratio) or
/// unknown. lkp's columns are the base commit and the tested one.
fn column_sides(t: &ClaimTable) -> Vec<Side> {
    // Columns: before and after, else every value is the patched kernel's.
    let sides: Vec<Side> = t.columns.iter().map(|col| side(&col.name)).collect();
    // lkp's columns are the base commit and the tested one.
    if t.kind == crate::mail::ClaimKind::Lkp {
        let values: Vec<usize> = (0..sides.len())
            .filter(|i| sides[*i] != Side::Derived)
            .collect();
        let mut s = sides.clone();
        if let (Some(&f), Some(&l)) = (values.first(), values.last())
            && f != l
        {
            s[f] = Side::Before;
            s[l] = Side::After;
        }
        s
    } else {
        sides
    }
}

/// Columns that are before and after become the two variants' columns;
/// columns that are neither may each name a metric.
fn columns(c: &mut ClaimDraft, t: &ClaimTable, sides: &[Side], ctx: &Ctx) {
    let before = sides.contains(&Side::Before);
    let after = sides.contains(&Side::After);
    if before && after {
        for (col, s) in t.columns.iter().zip(sides) {
            match s {
                Side::Before => c.columns.push((col.name.clone(), "before".into())),
                Side::After => c.columns.push((col.name.clone(), "after".into())),
                _ => {}
            }
        }
    }
    if !before && !after {
        (c.column_metrics, c.row_is_family) = column_metrics(t, sides, ctx, &mut c.skipped);
    }
}

/// Row groups headed `Base:` and `Patched:` are the two variants.
fn group_variants(c: &mut ClaimDraft, t: &ClaimTable) {
    if t.key_columns.len() >= 2 {
        let mut groups: Vec<&str> = t
            .rows
            .iter()
            .filter_map(|r| r.keys.first().map(String::as_str))
            .collect();
        groups.dedup();
        let gs: Vec<Side> = groups.iter().map(|g| side(g)).collect();
        if gs.contains(&Side::Before)
            && gs.contains(&Side::After)
            && gs.iter().all(|s| matches!(s, Side::Before | Side::After))
        {
            c.group_variants = true;
            for (g, s) in groups.iter().zip(&gs) {
                let v = if *s == Side::Before {
                    "before"
                } else {
                    "after"
                };
                if !g.eq_ignore_ascii_case(v) && !c.aliases.iter().any(|(a, _)| a == g) {
                    c.aliases.push((g.to_string(), v.into()));
                }
            }
        }
    }
}

/// The rows: variants, variants said per row, repeated samples, axes,
/// one axis, or metrics. True when the rows are the variants.
fn rows(c: &mut ClaimDraft, t: &ClaimTable, caption: &str, ctx: &Ctx) -> Result<bool, String> {
    let last_keys: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.keys.last().map(String::as_str))
        .collect();
    // A row that states a bound (`Theoretical maximum`) is nobody's
    // measurement; a row named with the patch's own words (`Kthread`
    // for "... from a kthread") is the patched kernel.
    let bound = |k: &str| names_bound(k);
    // ... but a row that is a value of an axis (`null_blk` under a
    // subject "null_blk: ...") is a cell, whatever the subject says.
    let on_axis = row_axis(t, ctx).is_some();
    let patch = |k: &str| !on_axis && names_the_patch(k, ctx.subject);
    let row_sides: Vec<Side> = last_keys
        .iter()
        .map(|k| match side(k) {
            Side::Unknown if !bound(k) && patch(k) => Side::After,
            s => s,
        })
        .collect();
    let pure = |k: &str| strip_side(k).is_empty() || bound(k) || patch(k);
    let kept: Vec<(&&str, &Side)> = last_keys
        .iter()
        .zip(&row_sides)
        .filter(|(k, _)| !bound(k))
        .collect();
    let rows_are_variants = !kept.is_empty()
        && last_keys.iter().all(|k| pure(k))
        && kept
            .iter()
            .all(|(_, s)| matches!(s, Side::Before | Side::After))
        && kept.iter().any(|(_, s)| **s == Side::Before)
        && kept.iter().any(|(_, s)| **s == Side::After);
    // Rows that say their variant (`p99 latency before: 1205 usec`),
    // among others that don't (`lat: 5 -> 4`).
    let sided = !rows_are_variants
        && t.rows.len() == last_keys.len()
        && row_sides
            .iter()
            .any(|s| matches!(s, Side::Before | Side::After));
    if rows_are_variants {
        if !c.columns.is_empty() {
            return Err("both its rows and its columns look like before and after".into());
        }
        c.rows = Rows::Variants;
        for (k, s) in last_keys.iter().zip(&row_sides) {
            let v = if bound(k) {
                crate::matrix::claims::SKIP
            } else if *s == Side::Before {
                "before"
            } else {
                "after"
            };
            if !k.eq_ignore_ascii_case(v) && !c.aliases.iter().any(|(a, _)| a == k) {
                c.aliases.push((k.to_string(), v.into()));
            }
        }
    } else if sided {
        c.rows = metric_rows(t, caption, ctx, c)?;
        for (r, s) in t.rows.iter().zip(&row_sides) {
            let label = r.keys.join(" ");
            match s {
                Side::Before => c.row_variants.push((label, "before".into())),
                Side::After => c.row_variants.push((label, "after".into())),
                _ => {}
            }
        }
    } else if t
        .rows
        .iter()
        .all(|r| r.keys.iter().all(|k| k.trim().is_empty()))
    {
        // Rows without keys: repeated samples of one measurement
        // (`IOPS=891.49K` printed once a second).
        c.rows = Rows::Single;
    } else if let Some((axes, aliases)) = row_axes(t, ctx) {
        c.rows = Rows::Axes(axes);
        c.aliases.extend(aliases);
    } else if let Some((column, axis, aliases)) = row_axis(t, ctx) {
        c.rows = Rows::Axis { column, axis };
        c.aliases.extend(aliases);
    } else if t.rows.len() == 1 && c.row_is_family && !c.column_metrics.is_empty() {
        // One row whose label the column metrics were read with.
        c.rows = Rows::Single;
    } else if t.rows.len() > 1 || t.rows.iter().any(|r| !r.keys.is_empty()) {
        if !c.column_metrics.is_empty() {
            // The columns are the metrics: the rows must be something
            // the matrix varies.
            return Err(format!(
                "its rows ({}) match no axis of the matrix",
                t.rows
                    .iter()
                    .map(|r| r.keys.join(" / "))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        // Rows labelled by what they measure: `read IOPS`, `p99 lat`.
        c.rows = metric_rows(t, caption, ctx, c)?;
    }
    Ok(rows_are_variants)
}

/// Columns that are not before and after: one value column is one
/// variant's (the patched kernel's, or the one the caption names), or
/// each column names a metric of that variant.
fn one_variant_columns(
    c: &mut ClaimDraft,
    t: &ClaimTable,
    sides: &[Side],
    caption: &str,
) -> Result<(), String> {
    // One value column of a mail that patches: the patched kernel's;
    // or columns that each name a metric, all of one variant.
    let values = t
        .columns
        .iter()
        .zip(sides)
        .filter(|(_, s)| **s != Side::Derived)
        .count();
    if values != 1 && c.column_metrics.is_empty() {
        return Err(format!(
            "its columns ({}) are not before and after",
            t.columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // "Before:" over a pasted fio output says whose numbers they are.
    let short = caption
        .trim()
        .trim_end_matches(':')
        .split_whitespace()
        .count()
        <= 6;
    // ... and so do a long caption's last words ("we have the following
    // baseline:").
    let words: Vec<&str> = caption
        .trim()
        .trim_end_matches(':')
        .split_whitespace()
        .collect();
    let tail = words[words.len().saturating_sub(3)..].join(" ");
    let (whole, last) = (side(caption.trim().trim_end_matches(':')), side(&tail));
    let v = match (whole, last) {
        (Side::Before, _) if short => "before",
        (_, Side::Before) => "before",
        _ => "after",
    };
    c.from_variant = Some(v.into());
    c.variant_by_default = whole != Side::After && last != Side::After && v == "after";
    if c.column_metrics.is_empty() {
        let col = t
            .columns
            .iter()
            .zip(sides)
            .find(|(_, s)| **s != Side::Derived)
            .map(|(c, _)| c.name.clone());
        c.columns.push((col.unwrap_or_default(), v.into()));
    } else {
        for (col, m) in &c.column_metrics {
            if m != crate::matrix::claims::SKIP {
                c.columns.push((col.clone(), v.into()));
            }
        }
    }
    Ok(())
}

/// The metric of a table whose rows and columns do not name it, and the
/// unit when no value carries one.
fn metric_and_unit(
    c: &mut ClaimDraft,
    t: &ClaimTable,
    caption: &str,
    n: usize,
    ctx: &Ctx,
) -> Result<(), String> {
    if !matches!(c.rows, Rows::Metrics(_)) && c.column_metrics.is_empty() {
        let words = format!(
            "{} {} {}",
            t.key_columns.join(" "),
            t.columns
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            t.rows.first().map(|r| unit_words(t, r)).unwrap_or_default()
        );
        let unit = t
            .rows
            .first()
            .and_then(|r| value_unit(t, r))
            .map(|u| u.kind)
            .or_else(|| {
                caption_unit(caption)
                    .and_then(|u| crate::matrix::claims::parse_unit(&u))
                    .map(|u| u.kind)
            });
        c.metric = Some(match metric(&words, caption, unit, ctx) {
            // `155K  162K` under no unit and no word: block-layer mails
            // write I/O rates so; bandwidth and latency carry units.
            Err(_) if unit.is_none() && ctx.bare_multiplied.contains(&n) => {
                c.unit = Some("IOPS".into());
                c.inferred_unit = true;
                metric("IOPS", "", None, ctx)?
            }
            other => other?,
        });
    }
    let has_unit = matches!(c.rows, Rows::Metrics(_))
        || t.unit.is_some()
        || t.columns.iter().any(|c| c.unit.is_some())
        || t.rows.iter().any(|r| r.unit.is_some());
    // Columns that measure different things cannot share the caption's
    // one unit.
    if !has_unit && !c.inferred_unit && c.column_metrics.is_empty() {
        c.unit = caption_unit(caption);
    }
    Ok(())
}

/// Conditions from the caption: an axis value it names, the command
/// above the numbers, an arch or HZ.
fn conditions(c: &mut ClaimDraft, caption: &str, ctx: &Ctx) -> Result<(), String> {
    // "Results at 1ms:", "QD32 numbers": the caption names one value of
    // an axis the rows and columns do not run over.
    for (axis, value) in caption_values(caption, ctx) {
        if !c.rows.runs_over(&axis) && !c.conditions.iter().any(|(a, _)| a == &axis) {
            c.conditions.push((axis, value));
        }
    }
    match measured_by(caption, ctx) {
        Some(cond) => c.conditions.push(cond),
        // Several commands became an axis: numbers that name none of
        // them (no command above them, no row or column of that axis)
        // would bind to cells that measure other things.
        None if !ctx.measured_by.is_empty() => {
            let axis = &ctx.measured_by[0].1;
            if !c.rows.runs_over(axis) {
                return Err(format!(
                    "the mail ran several commands (axis {axis}), and no command above the \
                     numbers says which one they are from"
                ));
            }
        }
        None => {}
    }
    let f = facts::of_text(caption);
    if let [a] = &f.arch[..] {
        c.conditions.push(("arch".into(), a.value.to_string()));
    }
    if let [h] = &f.hz[..] {
        c.conditions.push(("hz".into(), h.value.to_string()));
    }
    Ok(())
}

/// Columns that each name what they measure (`IOPS`, `sys`, `lat
/// (us)`), when there are two or more and at least two name a metric
/// lab has: column → metric, `-` for the others (with the reason kept).
/// Empty when the columns are not of that kind.
fn column_metrics(
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
    let family = match t.rows.as_slice() {
        [r] => r
            .keys
            .last()
            .map(|k| k.trim().to_string())
            .unwrap_or_default(),
        _ => String::new(),
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
        let own = row_metric(&col.name, unit, "", ctx);
        let named = match own {
            Err(_) if !family.is_empty() && !col.name.starts_with('#') => {
                row_metric(&format!("{family} {}", col.name), unit, "", ctx)
            }
            r => r,
        };
        // `#2` is a column the mail left unnamed: its unit alone is no
        // reason to read the row as a family of metrics.
        by_family |= named.is_ok() && !family.is_empty() && !col.name.starts_with('#');
        match named {
            Ok(m) if !out.iter().any(|(_, x)| *x == m) => out.push((col.name.clone(), m)),
            Ok(m) => why.push((col.name.clone(), format!("{m} is another column's"))),
            Err(w) => why.push((col.name.clone(), w)),
        }
    }
    // Two metrics at least, or one read with its row's label, or one
    // beside columns that name nothing lab measures (`IOPS` and `Lock
    // contention`): a column that only repeats another's metric (`v6.1`,
    // `v6.2` by their unit) is no metric of its own.
    let lone = out.len() == 1
        && !why.is_empty()
        && why.iter().all(|(_, w)| !w.ends_with("is another column's"));
    if out.len() < 2 && (out.is_empty() || !by_family) && !lone {
        return (vec![], false);
    }
    for (col, w) in why {
        out.push((col.clone(), crate::matrix::claims::SKIP.into()));
        skipped.push((col, w));
    }
    (out, by_family)
}

/// `rows: metric`: each row's metric from its label (the last key),
/// with rows lab measures nothing for mapped to [`SKIP`] and their
/// reasons kept. Rows keyed by more than the label must share the rest.
fn metric_rows(
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
    let lasts: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.keys.last().map(String::as_str))
        .collect();
    let unique = (1..lasts.len()).all(|i| !lasts[..i].contains(&lasts[i]));
    // fio's output: [job, section, metric]; one job, and labels that
    // tell the rows apart, read with their section (`read IOPS`).
    let one_job = heads.iter().all(|h| h.first() == heads[0].first());
    if heads.windows(2).any(|w| w[0] != w[1]) && !(unique && one_job) {
        let groups: Vec<String> = heads.iter().map(|h| h.join(" / ")).collect();
        let mut g = groups.clone();
        g.dedup();
        return Err(format!(
            "its row groups ({}) match no axis of the matrix",
            g.join("; ")
        ));
    }
    let mut metrics: Vec<(String, String)> = Vec::new();
    for r in &t.rows {
        let Some(label) = r.keys.last() else {
            return Err("a row has no label".into());
        };
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
        let section = r
            .keys
            .len()
            .checked_sub(2)
            .and_then(|i| r.keys.get(i).filter(|_| i > 0));
        let words = match section {
            Some(s) => format!("{s} {}", strip_side(label)),
            None => strip_side(label),
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
const PERF_EVENTS: [&str; 12] = [
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
fn row_metric(
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
fn lkp_metric(name: &str) -> Result<String, String> {
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
                "50%" => "p50",
                "99%" => "p99",
                "99.9%" => "p99_9",
                _ => return Err(format!("lab's fio reports no '{name}'")),
            };
            format!("{kind}_{stat}")
        }
        _ => return Err(format!("lab's fio reports no '{name}'")),
    };
    Ok(format!("{dir}.{m}"))
}

/// The unit of a row's values, leaving out difference columns (`+6.6%`).
fn value_unit<'a>(t: &'a ClaimTable, r: &'a crate::mail::Row) -> Option<&'a crate::mail::Unit> {
    (0..t.columns.len())
        .filter(|i| side(&t.columns[*i].name) != Side::Derived)
        .find_map(|i| t.unit_of(r, i))
}

/// The unit symbols of a row, as words a metric is read from.
fn unit_words(t: &ClaimTable, r: &crate::mail::Row) -> String {
    value_unit(t, r)
        .map(|u| u.symbol.to_string())
        .unwrap_or_default()
}

/// A key column, the axis it runs over, and aliases for keys written
/// otherwise.
type RowAxis = (String, String, Vec<(String, String)>);

/// The axis a table's rows run over: the key column named like an axis,
/// or whose values are all one axis's values; with aliases for keys
/// written otherwise (`QD32` for 32).
fn row_axis(t: &ClaimTable, ctx: &Ctx) -> Option<RowAxis> {
    (0..t.key_columns.len()).find_map(|i| key_axis(t, i, ctx))
}

/// Axes in column order, and the aliases of their keys.
type RowAxes = (Vec<String>, Vec<(String, String)>);

/// Rows keyed by several columns, each a value of one of the matrix's
/// axes (`io_poll  io_poll_delay  threads`): the axes in column order,
/// with the aliases of all. None unless every key column is an axis and
/// there are two or more.
fn row_axes(t: &ClaimTable, ctx: &Ctx) -> Option<RowAxes> {
    if t.key_columns.len() < 2 {
        return None;
    }
    let mut axes = Vec::new();
    let mut aliases = Vec::new();
    for i in 0..t.key_columns.len() {
        let (_, axis, a) = key_axis(t, i, ctx)?;
        if axes.contains(&axis) {
            return None;
        }
        axes.push(axis);
        aliases.extend(a);
    }
    Some((axes, aliases))
}

/// The axis key column `i` runs over, when it is one.
fn key_axis(t: &ClaimTable, i: usize, ctx: &Ctx) -> Option<RowAxis> {
    use crate::matrix::claims::same_value;
    let col = t.key_columns.get(i)?;
    let keys: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.keys.get(i).map(String::as_str))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let named = axis_named(col);
    for (axis, values) in ctx.axes {
        let mut aliases = Vec::new();
        let all_in = keys.iter().all(|k| {
            if values.iter().any(|v| same_value(v, k)) {
                return true;
            }
            let n = super::axes::lead_number(k);
            let hit = values.iter().find(|v| n.as_deref() == Some(v.as_str()));
            if let Some(v) = hit {
                aliases.push((k.to_string(), v.clone()));
            }
            hit.is_some()
        });
        // A column named after another of the matrix's axes is that axis's.
        let other = named
            .as_ref()
            .is_some_and(|n| n != axis && ctx.axes.iter().any(|(a, _)| a == n));
        if all_in && !other {
            return Some((col.clone(), axis.clone(), aliases));
        }
    }
    None
}

/// The axis a key column's name stands for: `QD` → iodepth.
pub fn axis_named(column: &str) -> Option<String> {
    let l = column.trim().to_ascii_lowercase();
    let l = l.split('(').next().unwrap_or("").trim();
    let name = match l {
        "iodepth" | "qd" | "queue depth" | "depth" | "io depth" | "iod" => "iodepth",
        "numjobs" | "jobs" | "threads" | "nr_jobs" | "procs" | "processes" | "tasks"
        | "nr_task" => "numjobs",
        "bs" | "block size" | "blocksize" | "io size" | "bsize" => "bs",
        "rw" | "pattern" | "io pattern" | "workload" | "test" | "mode" | "job" => "wl",
        "delay" | "delay ms" | "dm-delay" => "delay",
        "hz" | "config_hz" => "hz",
        "arch" | "architecture" => "arch",
        "" => return None,
        other => return Some(other.replace(' ', "_")),
    };
    Some(name.to_string())
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
        None => match kind_of(&own).or_else(|| kind_of(&cap)) {
            Some(k) => k,
            None => return Err("its words name no IOPS, bandwidth, latency or CPU".into()),
        },
    };
    if kind == "cpu" {
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
    let pct = if any(&["p99.9", "99.9th", "99.9%", "p999"]) {
        "p99_9"
    } else if any(&["p99", "99th", "99%", "99.00th", "tail"]) {
        "p99"
    } else if any(&["p50", "median", "50th", "50.00th"]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_of_labels() {
        for b in [
            "before",
            "Baseline",
            "unpatched",
            "w/o patch",
            "v6.12 (base)",
            "stock",
        ] {
            assert_eq!(side(b), Side::Before, "{b}");
        }
        for a in ["after", "patched", "w/ patch", "+patch", "with series"] {
            assert_eq!(side(a), Side::After, "{a}");
        }
        for d in ["diff", "%change", "delta", "speedup"] {
            assert_eq!(side(d), Side::Derived, "{d}");
        }
        assert_eq!(side("iodepth"), Side::Unknown);
    }

    #[test]
    fn metrics_from_words() {
        let ctx = Ctx {
            axes: &[],
            directions: vec!["read"],
            measured_by: &[],
            subject: "",
            bare_multiplied: &[],
        };
        let time = Some(UnitKind::Time);
        assert_eq!(metric("IOPS", "", None, &ctx).unwrap(), "read.iops");
        assert_eq!(
            metric("p99 latency", "", time, &ctx).unwrap(),
            "read.lat_p99"
        );
        assert_eq!(
            metric("MiB/s", "randwrite", None, &ctx).unwrap(),
            "write.bw"
        );
        assert_eq!(
            metric(
                "mean latency in ms",
                "single 4 KiB direct writes",
                time,
                &ctx
            )
            .unwrap(),
            "write.lat_mean"
        );
        assert_eq!(
            metric("fsync latency (us)", "", time, &ctx).unwrap(),
            "sync.lat_mean"
        );
        // The unit wins over a caption that names throughput too.
        assert_eq!(
            metric("", "latency at p99, and throughput in MB/s", time, &ctx).unwrap(),
            "read.lat_p99"
        );
        let mixed = Ctx {
            axes: &[],
            directions: vec!["read", "write"],
            measured_by: &[],
            subject: "",
            bare_multiplied: &[],
        };
        assert_eq!(metric("MiB/s", "", None, &mixed).unwrap(), "bw.total");
        assert!(metric("latency", "", time, &mixed).is_err());
        assert!(metric("apples", "", None, &ctx).is_err());
        assert!(metric("bios submitted", "", Some(UnitKind::Count), &ctx).is_err());
        assert_eq!(
            row_metric("ctx switches", None, "", &ctx).unwrap(),
            "perf.context-switches"
        );
        assert_eq!(
            row_metric("fio.write_iops", None, "", &ctx).unwrap(),
            "write.iops"
        );
        assert_eq!(
            row_metric("fio.write_clat_99%_us", None, "", &ctx).unwrap(),
            "write.clat_p99"
        );
        assert!(row_metric("fio.time.voluntary_context_switches", None, "", &ctx).is_err());
        assert_eq!(
            caption_unit("mean latency in ms (300 writes each)").as_deref(),
            Some("ms")
        );
        assert_eq!(
            caption_unit("Results (4k random read, KIOPS, mean of 3)").as_deref(),
            Some("KIOPS")
        );
        assert_eq!(caption_unit("a 5 ms delay, 4k writes"), None);
        assert_eq!(axis_named("QD").as_deref(), Some("iodepth"));
        assert_eq!(
            caption_program("# dd if=/dev/loop0 of=/dev/null bs=1M").as_deref(),
            Some("dd")
        );
        assert_eq!(
            caption_program("$ time mkfs.ext4 /dev/x").as_deref(),
            Some("mkfs.ext4")
        );
        assert_eq!(
            caption_program("# fio --name=rr --rw=randread").as_deref(),
            Some("fio")
        );
        assert_eq!(caption_program("Results (KIOPS, higher is better):"), None);
    }
}
