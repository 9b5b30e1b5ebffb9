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

mod caption;
mod keys;
mod metrics;
mod sides;

use caption::*;
pub use caption::{caption_program, caption_unit, commands_above, names_no_cell};
pub use keys::axis_named;
use keys::*;
pub use metrics::metric;
use metrics::*;
pub use sides::*;

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
    /// Numbered runs of one measurement: every row binds to one cell set.
    Runs,
}

impl Rows {
    /// Whether the rows are values of `axis`.
    pub(super) fn runs_over(&self, axis: &str) -> bool {
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
    /// The axis the columns are values of (`IOPS (IRQ mode)` and `IOPS
    /// (iopoll=1 mode)` of `hipri`); None when they are variants.
    pub column_axis: Option<String>,
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
    /// Programs other than fio whose commands became workloads.
    pub measured_with: &'a [String],
    /// For each table (from 1), the caption of the table just above it
    /// that names one of those commands, when its own names none: a
    /// command's output read as several tables (`submitter=...` lines,
    /// then `IOPS=...` lines, then `Maximum IOPS=`) is one command's.
    pub above: &'a [Option<String>],
    /// The subjects of the mail's messages, `[PATCH]` tags and all.
    pub subject: &'a str,
    /// Tables (from 1) whose numbers the mail writes with a multiplier
    /// and no unit (`155K`).
    pub bare_multiplied: &'a [usize],
    /// The device lab has for one the mail names (`/dev/ram0` is
    /// `/dev/nullb0`), so a caption names the axis value it measured.
    pub device: &'a dyn Fn(&str) -> String,
}

/// Draft the claim for table `n` (from 1); Err says why there is none.
pub fn draft(n: usize, t: &ClaimTable, ctx: &Ctx) -> Result<ClaimDraft, String> {
    let caption = t.caption.clone().unwrap_or_default();
    // fio's t/io_uring and dd are drafted as fio jobs.
    if let Some(p) = caption_program(&caption)
        && p != "fio"
        && p != "io_uring"
        && !ctx.measured_with.contains(&p)
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
        column_axis: None,
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
    // that variant's: its label says what, the caption whose. So are
    // rows that repeat one label (dd's amount copied, once a run).
    let labels: Vec<Option<&String>> = t.rows.iter().map(|r| r.keys.last()).collect();
    if c.row_is_family
        && c.row_variants.is_empty()
        && let (Some(Some(label)), Some(v)) = (labels.first(), c.from_variant.clone())
        && labels.iter().all(|l| *l == Some(*label))
    {
        c.row_variants.push(((*label).clone(), v));
    }
    metric_and_unit(&mut c, t, &caption, n, ctx)?;
    // A sentence's caption runs on past it: a command after its
    // numbers ran after them, and is no condition of theirs.
    let above_numbers = if t.kind == crate::mail::ClaimKind::Prose {
        before_command_below(&caption, ctx)
    } else {
        caption.clone()
    };
    conditions(&mut c, &above_numbers, ctx)?;
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
        claims[a].set_variant("before");
    }
}

impl ClaimDraft {
    /// The variant a claim that said none belongs to, as something else
    /// decided (its place among the tables): every `after` it took by
    /// default becomes `v`.
    pub(super) fn set_variant(&mut self, v: &str) {
        self.from_variant = Some(v.into());
        self.variant_by_default = false;
        for (_, x) in self.columns.iter_mut().chain(self.row_variants.iter_mut()) {
            if x == "after" {
                *x = v.into();
            }
        }
    }

    /// `axis = value` where the claim's cells were measured, as something
    /// around its table says (a knob set above it, a caption heading its
    /// section), unless its rows run over that axis or it has a value of
    /// it already.
    pub fn measured_at(&mut self, axis: &str, value: &str) {
        if !self.rows.runs_over(axis) && !self.conditions.iter().any(|(a, _)| a == axis) {
            self.conditions.push((axis.to_string(), value.to_string()));
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
        // One measure in each mode of a switch the matrix varies.
        if let Some((opt, cols)) = super::knob_axes::mode_columns(t)
            && ctx.axes.iter().any(|(a, _)| a == opt)
        {
            c.column_axis = Some(opt.to_string());
            c.columns = cols;
            return;
        }
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
    // What is left of a label without its side words (`commit` of
    // `commit reverted`) may name the patch, too.
    // Rows that say nothing apart but their side (`before: read`,
    // `after : read`) under columns that name the metrics are the
    // variants: the shared words say which of fio's lines they are.
    let shared = !c.column_metrics.is_empty() && sides::shared_rest(&last_keys).is_some();
    let pure = |k: &str| {
        let rest = strip_side(k);
        rest.is_empty() || shared || bound(k) || patch(k) || patch(&rest)
    };
    let kept: Vec<(&&str, &Side)> = last_keys
        .iter()
        .zip(&row_sides)
        .filter(|(k, _)| !bound(k))
        .collect();
    // Under columns of an axis, one row that says its side (`with
    // patchset`) is that variant's.
    let one_side = c.column_axis.is_some();
    // One row that says its side, under columns that name what it
    // measures (`after : clat (usec): min=4, max=193481, avg=188.83`,
    // `with the patch, IOPS=218k, BW=852MiB/s`), is that kernel's.
    let one_sided_family = kept.len() == 1
        && t.rows.len() == 1
        && (c.row_is_family
            || c.column_metrics
                .iter()
                .filter(|(_, m)| m != crate::matrix::claims::SKIP)
                .count()
                >= 2);
    let rows_are_variants = !kept.is_empty()
        && (one_sided_family || last_keys.iter().all(|k| pure(k)))
        && kept
            .iter()
            .all(|(_, s)| matches!(s, Side::Before | Side::After))
        && (one_side
            || one_sided_family
            || (kept.iter().any(|(_, s)| **s == Side::Before)
                && kept.iter().any(|(_, s)| **s == Side::After)));
    // Rows that say their variant (`p99 latency before: 1205 usec`),
    // among others that don't (`lat: 5 -> 4`).
    let sided = !rows_are_variants
        && t.rows.len() == last_keys.len()
        && row_sides
            .iter()
            .any(|s| matches!(s, Side::Before | Side::After));
    if rows_are_variants {
        if !c.columns.is_empty() && c.column_axis.is_none() {
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
    } else if !c.column_metrics.is_empty() && sides::shared_by_runs(&last_keys).is_some() {
        // Numbered runs of one line (`(1) iops : min=7986, ...,
        // avg=12505.76`, `(2) iops : ...`): samples too, keyed by run.
        c.rows = Rows::Runs;
    } else if let Some((axes, aliases)) = row_axes(t, ctx) {
        c.rows = Rows::Axes(axes);
        c.aliases.extend(aliases);
    } else if let Some((column, axis, aliases)) = row_axis(t, ctx) {
        c.rows = Rows::Axis { column, axis };
        c.aliases.extend(aliases);
    } else if !c.column_metrics.is_empty()
        && ((t.rows.len() == 1 && c.row_is_family)
            || t.rows.iter().all(|r| r.keys.iter().all(|k| is_amount(k))))
    {
        // One row whose label the column metrics were read with, or rows
        // that are output themselves (dd's `4294967296 bytes (4.3 GB)
        // copied,` once a run): they name what they measure, not a cell;
        // several are repeated samples of it.
        c.row_is_family = true;
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
    // Rows that name their metrics (fio's `READ: bw=...`, `WRITE:
    // bw=...`) over several columns: the column named as the metrics'
    // kind (`bw` for `read.bw`, `write.bw`) holds their values.
    let named = match &c.rows {
        Rows::Metrics(ms) if values != 1 && c.column_metrics.is_empty() => {
            let kinds: Vec<&str> = ms
                .iter()
                .filter(|(_, m)| m != crate::matrix::claims::SKIP)
                .filter_map(|(_, m)| m.split_once('.').map(|(_, k)| k))
                .collect();
            t.columns
                .iter()
                .find(|col| {
                    let n = col.name.trim().to_ascii_lowercase();
                    !kinds.is_empty() && kinds.iter().all(|k| *k == n)
                })
                .map(|col| col.name.clone())
        }
        _ => None,
    };
    if values != 1 && c.column_metrics.is_empty() && named.is_none() {
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
        let col = named.or_else(|| {
            t.columns
                .iter()
                .zip(sides)
                .find(|(_, s)| **s != Side::Derived)
                .map(|(c, _)| c.name.clone())
        });
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
fn conditions(c: &mut ClaimDraft, quoted: &str, ctx: &Ctx) -> Result<(), String> {
    // Axis values are lab's devices; the commands are quoted as the
    // mail wrote them.
    let caption = &(ctx.device)(quoted);
    // "Results at 1ms:", "QD32 numbers": the caption names one value of
    // an axis the rows and columns do not run over.
    for (axis, value) in caption_values(caption, ctx) {
        if !c.rows.runs_over(&axis) && !c.conditions.iter().any(|(a, _)| a == &axis) {
            c.conditions.push((axis, value));
        }
    }
    let mut measured = measured_by(quoted, ctx);
    if measured.is_empty()
        && let Some(Some(above)) = ctx.above.get(c.table.wrapping_sub(1))
    {
        measured = measured_by(above, ctx);
    }
    if !measured.is_empty() {
        for (axis, value) in measured {
            if !c.rows.runs_over(&axis) && !c.conditions.iter().any(|(a, _)| a == &axis) {
                c.conditions.push((axis, value));
            }
        }
    } else if !ctx.measured_by.is_empty() {
        // Several commands became an axis: numbers that name none of
        // them (no command above them, no row or column of that axis)
        // would bind to cells that measure other things.
        // A caption that names the value itself ("Results at 1ms:") says.
        let axis = &ctx.measured_by[0].1;
        if !c.rows.runs_over(axis) && !c.conditions.iter().any(|(a, _)| a == axis) {
            return Err(format!(
                "the mail ran several commands (axis {axis}), and no command above the \
                 numbers says which one they are from"
            ));
        }
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

/// A row label that is itself output, an amount a tool reports before
/// its rates (`4294967296 bytes (4.3 GB, 4.0 GiB) copied,`): numbers
/// with their units and at most one other word, so it names no cell.
fn is_amount(label: &str) -> bool {
    let words: Vec<&str> = label
        .split(|c: char| c.is_whitespace() || ",;:()[]".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let number = |w: &str| w.parse::<f64>().is_ok();
    let size = |w: &str| {
        let w = w
            .strip_suffix('B')
            .unwrap_or(w.strip_suffix("bytes").unwrap_or("-"));
        let w = w.strip_suffix('i').unwrap_or(w);
        w.is_empty() || (w.len() == 1 && "kKMGTP".contains(w))
    };
    let unit = |w: &str| crate::units::parse_unit(w).is_some() || size(w);
    let numbers = words.iter().filter(|w| number(w)).count();
    let others = words.iter().filter(|w| !number(w) && !unit(w)).count();
    numbers >= 2 && others <= 1
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

    /// A row named after the subject's own word is the patched kernel,
    /// unless the word is what the row measures.
    #[test]
    fn rows_named_by_the_patch() {
        let subject = "[PATCH] dm delay: use a kthread instead of timers";
        assert!(names_the_patch("Kthread", subject));
        let subject = "[PATCH] xfs: Remove i_rwsem lock in buffered read";
        assert!(!names_the_patch("READ", subject));
    }

    #[test]
    fn metrics_from_words() {
        let ctx = Ctx {
            axes: &[],
            directions: vec!["read"],
            measured_by: &[],
            measured_with: &[],
            above: &[],
            subject: "",
            bare_multiplied: &[],
            device: &|s| s.to_string(),
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
            measured_with: &[],
            above: &[],
            subject: "",
            bare_multiplied: &[],
            device: &|s| s.to_string(),
        };
        assert_eq!(metric("MiB/s", "", None, &mixed).unwrap(), "bw.total");
        assert!(metric("latency", "", time, &mixed).is_err());
        assert!(metric("apples", "", None, &ctx).is_err());
        // A latency's maximum is no mean; an IOPS maximum is still IOPS.
        let e = metric("", "the maximum latency is reduced from 7.667s", time, &ctx).unwrap_err();
        assert_eq!(e, "lab keeps no maximum latency");
        assert_eq!(metric("Maximum IOPS", "", None, &ctx).unwrap(), "read.iops");
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
