//! Plain text (for a mail reply: every line under 80 columns) and
//! Markdown, both from minijinja templates over tables built here.

use super::numbers as num;
use super::stats::Verdict;
use super::{ClaimStatus, Flag, Group, MetricInfo, Report};
use anyhow::Result;
use minijinja::value::Serde;
use serde::Serialize;

pub(super) use super::layout::{Col, col, fit_table, wrap};
pub(super) use super::lines::{
    aa_lines, incomplete_lines, method_lines, outcome_line, provenance_lines, provenance_text,
};

/// Longest line of the text format, so it survives a `> ` quote.
pub const TEXT_WIDTH: usize = 79;

pub(super) fn env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .keep_trailing_newline(true)
            .build()
            .expect("default delimiters"),
    );
    for (name, src) in [
        ("report.txt", include_str!("templates/report.txt")),
        ("report.md", include_str!("templates/report.md")),
        ("report.html", include_str!("templates/report.html")),
    ] {
        env.add_template(name, src)
            .expect("the report templates parse");
    }
    env
}

pub(super) fn shown(v: Option<f64>, m: &MetricInfo) -> String {
    num::opt_value(v.map(|x| x / m.scale))
}

pub(super) fn shown_ci(ci: Option<[f64; 2]>, m: &MetricInfo) -> String {
    match ci {
        Some([a, b]) => format!("{}..{}", num::value(a / m.scale), num::value(b / m.scale)),
        None => "-".into(),
    }
}

/// Configurations in order, each with its groups.
pub(super) fn by_config(r: &Report) -> Vec<(String, Vec<&Group>)> {
    let mut out: Vec<(String, Vec<&Group>)> = Vec::new();
    for g in &r.groups {
        match out.iter_mut().find(|(c, _)| *c == g.config) {
            Some((_, gs)) => gs.push(g),
            None => out.push((g.config.clone(), vec![g])),
        }
    }
    out
}

pub(super) fn flag_text(f: &Flag, who: Option<&str>) -> String {
    let reps = num::reps(&f.reps);
    let mut s = match who {
        Some(w) => format!("{w}: {}", f.message),
        None => f.message.clone(),
    };
    if !reps.is_empty() {
        s.push_str(&format!(" ({reps})"));
    }
    s
}

/// Every flag that concerns one metric of one group, in words.
pub(super) fn group_flags(g: &Group, metric: &str) -> Vec<String> {
    let about = |f: &&Flag| f.metric.as_deref().is_none_or(|m| m == metric);
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: String| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    for f in g.flags.iter().filter(about) {
        push(flag_text(f, None));
    }
    for c in &g.cells {
        for f in c.flags.iter().filter(about) {
            push(flag_text(f, Some(&c.variant)));
        }
    }
    for c in g.comparisons.iter().filter(|c| c.metric == metric) {
        for f in &c.flags {
            push(flag_text(f, None));
        }
    }
    out
}

/// Footnote numbers for flag texts, shared across one table.
#[derive(Default)]
pub(super) struct Notes(pub Vec<String>);

impl Notes {
    pub fn mark(&mut self, texts: &[String]) -> String {
        texts
            .iter()
            .map(|t| {
                let n = match self.0.iter().position(|x| x == t) {
                    Some(i) => i + 1,
                    None => {
                        self.0.push(t.clone());
                        self.0.len()
                    }
                };
                n.to_string()
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn lines(&self) -> Vec<String> {
        self.0
            .iter()
            .enumerate()
            .map(|(i, t)| format!("[{}] {t}", i + 1))
            .collect()
    }
}

#[derive(Serialize)]
struct TableView {
    heading: String,
    table: String,
    notes: Vec<String>,
}

pub(super) fn key_header(groups: &[&Group]) -> String {
    let names = groups
        .iter()
        .find(|g| !g.run_axes.is_empty())
        .map(|g| g.run_axes.join(","))
        .unwrap_or_default();
    if names.is_empty() {
        "cell".into()
    } else {
        names
    }
}

pub(super) fn key_value(g: &Group) -> String {
    if g.run_key.is_empty() {
        return "-".into();
    }
    let vals: Vec<String> = g
        .run_key
        .split(',')
        .map(|kv| kv.split_once('=').map_or(kv, |(_, v)| v).to_string())
        .collect();
    vals.join(",")
}

pub(super) fn metric_heading(m: &MetricInfo, config: &str) -> String {
    let unit = if m.display_unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", m.display_unit)
    };
    let dir = if m.lower_is_better {
        "lower is better"
    } else {
        "higher is better"
    };
    if config.is_empty() {
        format!("{}{unit}, {dir}", m.name)
    } else {
        format!("{}{unit}, {dir}: {config}", m.name)
    }
}

/// The before/after tables of the text format: one per configuration
/// and metric, a row per run-axis value.
fn comparison_tables(r: &Report, max: Option<usize>) -> Vec<TableView> {
    let mut out = Vec::new();
    let base = &r.settings.baseline;
    let others: Vec<&String> = r
        .variants
        .iter()
        .map(|v| &v.name)
        .filter(|v| *v != base)
        .collect();
    for (config, groups) in by_config(r) {
        for m in &r.metrics {
            let mut rows = Vec::new();
            let key = key_header(&groups);
            let median_of = |g: &Group, v: &str| {
                g.cells
                    .iter()
                    .find(|c| c.variant == v)
                    .and_then(|c| c.metrics.iter().find(|x| x.metric == m.name))
                    .and_then(|x| x.summary.map(|s| s.median))
            };
            let cols: Vec<Col> = if others.is_empty() {
                vec![
                    col(key.clone(), false, 0),
                    col("n", true, 2),
                    col("median", true, 0),
                    col("95% CI", true, 3),
                    col("CV", true, 1),
                    col("flags", false, 0),
                ]
            } else if others.len() == 1 {
                vec![
                    col(key.clone(), false, 0),
                    col(base.clone(), true, 0),
                    col(others[0].clone(), true, 0),
                    col("change", true, 0),
                    col("95% CI", true, 3),
                    col("verdict", false, 0),
                    col("flags", false, 0),
                ]
            } else {
                vec![
                    col(key.clone(), false, 0),
                    col("variant", false, 0),
                    col(base.clone(), true, 0),
                    col("median", true, 0),
                    col("change", true, 0),
                    col("95% CI", true, 3),
                    col("verdict", false, 0),
                    col("flags", false, 0),
                ]
            };
            let mut starts: Vec<(usize, &Group)> = Vec::new();
            for g in &groups {
                starts.push((rows.len(), *g));
                let marks = super::flags::codes(g, &m.name);
                if others.is_empty() {
                    for c in &g.cells {
                        let s = c.metrics.iter().find(|x| x.metric == m.name);
                        let sm = s.and_then(|s| s.summary);
                        let median = value_or_why(g, &c.variant, sm.map(|s| s.median), m);
                        rows.push(vec![
                            key_value(g),
                            sm.map(|s| s.n.to_string()).unwrap_or_else(|| "0".into()),
                            median,
                            shown_ci(s.and_then(|s| s.median_ci), m),
                            sm.map(|s| num::percent(s.cv)).unwrap_or_else(|| "-".into()),
                            marks.clone(),
                        ]);
                    }
                    continue;
                }
                let comps: Vec<_> = g
                    .comparisons
                    .iter()
                    .filter(|c| c.metric == m.name)
                    .collect();
                if comps.is_empty() {
                    // No comparison: show what there is.
                    for c in &g.cells {
                        let med = value_or_why(g, &c.variant, median_of(g, &c.variant), m);
                        let (b, n) = if &c.variant == base {
                            (med, "-".into())
                        } else {
                            ("-".into(), med)
                        };
                        let mut row = vec![key_value(g)];
                        if others.len() > 1 {
                            row.push(c.variant.clone());
                        }
                        let why = if &c.variant == base {
                            "no comparison"
                        } else {
                            "no baseline"
                        };
                        row.extend([b, n, "-".into(), "-".into(), why.into(), marks.clone()]);
                        rows.push(row);
                    }
                    continue;
                }
                for c in comps {
                    let mut row = vec![key_value(g)];
                    if others.len() > 1 {
                        row.push(c.variant.clone());
                    }
                    row.extend([
                        value_or_why(g, &c.base_variant, c.base_median, m),
                        value_or_why(g, &c.variant, c.median, m),
                        num::opt_change(c.change),
                        num::change_ci(c.change_ci),
                        if c.regression {
                            format!("{} (!)", c.verdict)
                        } else {
                            c.verdict.to_string()
                        },
                        marks.clone(),
                    ]);
                    rows.push(row);
                }
            }
            let mut cols = cols;
            if let Some(b) = &m.bound {
                // The bound beside the measured values, in their unit.
                cols.insert(1, col(format!("bound {b}"), true, 0));
                for (i, (start, g)) in starts.iter().enumerate() {
                    let end = starts.get(i + 1).map_or(rows.len(), |x| x.0);
                    for row in &mut rows[*start..end] {
                        row.insert(1, shown(g.any_median(b), m));
                    }
                }
            }
            for e in r.excluded.iter().filter(|e| e.config == config) {
                let mut row = vec![excluded_key(&e.run_key)];
                row.extend((2..cols.len()).map(|_| "n/a".to_string()));
                row.push("excluded".into());
                rows.push(row);
            }
            out.push(TableView {
                heading: metric_heading(m, &config),
                table: fit_table(&cols, &rows, max),
                notes: vec![],
            });
        }
    }
    out
}

/// A value for a table, or why there is none when perf said so ("not
/// supported"): never a bare `-` for an event the guest cannot count.
fn value_or_why(g: &Group, variant: &str, v: Option<f64>, m: &MetricInfo) -> String {
    let why = g
        .cells
        .iter()
        .find(|c| c.variant == variant)
        .and_then(|c| c.uncounted(&m.name));
    match (v, why) {
        (None, Some(why)) => why.to_string(),
        _ => shown(v, m),
    }
}

/// `io_poll=0,io_poll_delay=10` → `0,10`, as `key_value` shows a row.
fn excluded_key(run_key: &str) -> String {
    if run_key.is_empty() {
        return "-".into();
    }
    run_key
        .split(',')
        .map(|kv| kv.split_once('=').map_or(kv, |(_, v)| v))
        .collect::<Vec<_>>()
        .join(",")
}

/// A table with a class per row (better, worse, flagged) for HTML.
pub(super) struct Rows {
    pub cols: Vec<Col>,
    pub rows: Vec<Vec<String>>,
    pub classes: Vec<&'static str>,
    pub notes: Notes,
}

/// Every cell of a configuration with its full statistics, for one metric.
pub(super) fn detail_rows(r: &Report, groups: &[&Group], m: &MetricInfo) -> Rows {
    let mut notes = Notes::default();
    let cols = vec![
        col(key_header(groups), false, 0),
        col("variant", false, 0),
        col("n", true, 0),
        col("median", true, 0),
        col("95% CI", true, 0),
        col("mean", true, 0),
        col("sd", true, 0),
        col("CV", true, 0),
        col("change", true, 0),
        col("change 95% CI", true, 0),
        col("p (MW)", true, 0),
        col("p (Welch)", true, 0),
        col("verdict", false, 0),
        col("flags", false, 0),
    ];
    let mut rows = Vec::new();
    let mut classes = Vec::new();
    for g in groups {
        let marks = notes.mark(&group_flags(g, &m.name));
        for c in &g.cells {
            let s = c.metrics.iter().find(|x| x.metric == m.name);
            let sm = s.and_then(|s| s.summary);
            let cmp = g
                .comparisons
                .iter()
                .find(|x| x.metric == m.name && x.variant == c.variant);
            let verdict = match cmp {
                Some(x) => x.verdict.to_string(),
                None if c.variant == r.settings.baseline => "baseline".into(),
                None => "-".into(),
            };
            classes.push(match cmp {
                Some(x) if x.regression => "regression",
                Some(x) if x.verdict == Verdict::Worse => "worse",
                Some(x) if x.verdict == Verdict::Better => "better",
                Some(x) if x.verdict == Verdict::Untrusted => "flagged",
                _ if !marks.is_empty() => "flagged",
                _ => "",
            });
            rows.push(vec![
                key_value(g),
                c.variant.clone(),
                sm.map(|s| s.n.to_string()).unwrap_or_else(|| "0".into()),
                shown(sm.map(|s| s.median), m),
                shown_ci(s.and_then(|s| s.median_ci), m),
                shown(sm.map(|s| s.mean), m),
                shown(sm.map(|s| s.sd), m),
                sm.map(|s| num::percent(s.cv)).unwrap_or_else(|| "-".into()),
                num::opt_change(cmp.and_then(|x| x.change)),
                num::change_ci(cmp.and_then(|x| x.change_ci)),
                num::p_value(cmp.and_then(|x| x.mann_whitney_p)),
                num::p_value(cmp.and_then(|x| x.welch_p)),
                verdict,
                marks.clone(),
            ]);
        }
    }
    Rows {
        cols,
        rows,
        classes,
        notes,
    }
}

/// The Markdown tables: every cell with its full statistics.
fn detail_tables(r: &Report) -> Vec<TableView> {
    let mut out = Vec::new();
    for (config, groups) in by_config(r) {
        for m in &r.metrics {
            let mut t = detail_rows(r, &groups, m);
            for (row, class) in t.rows.iter_mut().zip(&t.classes) {
                if *class == "regression" {
                    let v = row.len() - 2;
                    row[v] = format!("**{}**", row[v]);
                }
            }
            out.push(TableView {
                heading: metric_heading(m, &config),
                table: fit_table(&t.cols, &t.rows, None),
                notes: t.notes.lines(),
            });
        }
    }
    out
}

#[derive(Serialize)]
pub(super) struct ClaimView {
    pub heading: String,
    pub about: Vec<String>,
    pub table: String,
    pub notes: Vec<String>,
}

pub(super) struct ClaimRows {
    pub heading: String,
    pub about: Vec<String>,
    pub rows: Rows,
}

/// One table per claim and configuration: claimed, measured and their
/// ratio side by side.
pub(super) fn claim_rows(r: &Report) -> Vec<ClaimRows> {
    let mut out = Vec::new();
    let mut keys: Vec<(usize, String)> = Vec::new();
    for c in &r.claims {
        let k = (c.claim, c.config.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (n, config) in keys {
        let rows_of: Vec<_> = r
            .claims
            .iter()
            .filter(|c| c.claim == n && c.config == config)
            .collect();
        let first = rows_of[0];
        let mut about = Vec::new();
        let source = match &first.subject {
            Some(s) => format!("\"{s}\""),
            None => first.source.clone(),
        };
        about.push(format!(
            "From {source}, table {}: {}, tolerance {}.",
            first.table,
            super::metrics_phrase(&rows_of),
            num::percent(first.tolerance)
        ));
        if !first.conditions.is_empty() {
            about.push(format!("Claimed under: {}.", first.conditions));
        }
        if let Some(cap) = &first.caption {
            about.push(format!("Caption: {cap}"));
        }
        if let Some(t) = &first.theoretical_max {
            about.push(format!("Bound stated in the mail: {t}"));
        }
        let mut notes = Notes::default();
        let row_head = if first.row_axis.is_empty() {
            "row".to_string()
        } else {
            first.row_axis.clone()
        };
        let cols = vec![
            col(row_head, false, 0),
            col("column", false, 0),
            col(format!("claimed {}", first.unit), true, 0),
            col(format!("measured {}", first.unit), true, 0),
            col("ratio", true, 0),
            col("status", false, 0),
            col("notes", false, 0),
        ];
        let mut classes = Vec::new();
        let rows: Vec<Vec<String>> = rows_of
            .iter()
            .map(|c| {
                classes.push(match c.status {
                    ClaimStatus::Reproduced => "better",
                    ClaimStatus::NotReproduced => "regression",
                    _ => "flagged",
                });
                vec![
                    c.row_key.clone(),
                    c.column.clone(),
                    c.claimed.map(num::value).unwrap_or_else(|| "N/A".into()),
                    num::opt_value(c.measured),
                    num::ratio(c.ratio),
                    c.status.to_string(),
                    notes.mark(&c.reasons),
                ]
            })
            .collect();
        let heading = if config.is_empty() {
            format!("Claim {n}")
        } else {
            format!("Claim {n}: {config}")
        };
        out.push(ClaimRows {
            heading,
            about,
            rows: Rows {
                cols,
                rows,
                classes,
                notes,
            },
        });
    }
    out
}

fn claim_tables(r: &Report, max: Option<usize>) -> Vec<ClaimView> {
    claim_rows(r)
        .into_iter()
        .map(|mut c| {
            let mut notes = c.rows.notes.lines();
            // One note on every row is said once, and its column goes.
            let last: Vec<&String> = c.rows.rows.iter().filter_map(|r| r.last()).collect();
            let same = !last.is_empty() && last.iter().all(|m| *m == last[0]);
            if c.rows.notes.0.len() == 1 && same {
                c.rows.cols.pop();
                for r in c.rows.rows.iter_mut() {
                    r.pop();
                }
                // "other conditions" on every row, and "Claimed under"
                // above, already say what the note would.
                let status = ClaimStatus::OtherConditions.to_string();
                let all_other = c.rows.rows.iter().all(|r| r.last() == Some(&status));
                notes = if all_other {
                    vec![]
                } else {
                    vec![format!("Every row: {}", c.rows.notes.0[0])]
                };
            }
            ClaimView {
                heading: c.heading,
                about: c.about,
                table: fit_table(&c.rows.cols, &c.rows.rows, max),
                notes,
            }
        })
        .collect()
}

fn context(r: &Report, tables: Vec<TableView>, claims: Vec<ClaimView>) -> minijinja::Value {
    let provenance = provenance_text(r);
    minijinja::context! {
        report => Serde(r),
        title => r.title.clone(),
        underline => "=".repeat(r.title.chars().count().min(TEXT_WIDTH)),
        method => method_lines(r),
        tables => Serde(tables),
        claims => Serde(claims),
        aa => aa_lines(r),
        flags => super::flags::legend(r),
        context => super::context::lines(&r.context_diffs),
        incomplete => incomplete_lines(r),
        complete => r.completeness.complete() && r.problems.is_empty(),
        outcome => outcome_line(r),
        knobs => super::knobs::lines(&r.knobs),
        provenance => provenance,
        provenance_pairs => Serde(provenance_lines(r)),
    }
}

pub fn render_text(r: &Report) -> Result<String> {
    let ctx = context(
        r,
        comparison_tables(r, Some(TEXT_WIDTH)),
        claim_tables(r, Some(TEXT_WIDTH)),
    );
    let out = env().get_template("report.txt")?.render(ctx)?;
    Ok(wrap(&out, TEXT_WIDTH))
}

pub fn render_markdown(r: &Report) -> Result<String> {
    let ctx = context(r, detail_tables(r), claim_tables(r, None));
    Ok(env().get_template("report.md")?.render(ctx)?)
}

/// The end-of-run summary: the before/after tables and what is missing.
pub fn summary(r: &Report) -> String {
    let mut out = String::new();
    for t in comparison_tables(r, Some(TEXT_WIDTH)) {
        out.push_str(&t.heading);
        out.push('\n');
        out.push_str(&t.table);
        out.push('\n');
        for n in &t.notes {
            out.push_str(n);
            out.push('\n');
        }
        out.push('\n');
    }
    for l in super::flags::legend(r) {
        out.push_str(&l);
        out.push('\n');
    }
    for l in aa_lines(r) {
        out.push_str(&l);
        out.push('\n');
    }
    if !(r.completeness.complete() && r.problems.is_empty()) {
        for l in incomplete_lines(r) {
            out.push_str(&l);
            out.push('\n');
        }
    }
    for l in super::knobs::lines(&r.knobs) {
        out.push_str(&format!("knob {l}\n"));
    }
    out.push_str(&outcome_line(r));
    out.push('\n');
    wrap(&out, TEXT_WIDTH)
}
