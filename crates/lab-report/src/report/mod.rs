//! Reports: statistics, claims, and the renderers.
//!
//! A report is built from a stored run alone (manifest, cell records and
//! fio's raw JSON) into a [`Report`]: a plain, serializable model that
//! every format renders from. Building is the only step that reads
//! files; rendering is pure, so `json` is the model itself and the other
//! formats are views of it.
//!
//! - `text`: tables under 80 columns with provenance, for a mail reply;
//! - `md`: Markdown with the full statistics (the run writes report.md);
//! - `html`: one self-contained page with inline SVG plots;
//! - `json`: the model, for machines;
//! - `junit`: one test case per compared cell and metric, and per claim;
//! - `reply`: the mail's claims beside the measured numbers, under 72
//!   columns, to paste under the quoted mail.

mod build;
pub mod claim_bind;
mod claim_match;
pub mod cmd;
pub mod context;
mod flags;
mod html;
mod junit;
pub mod knobs;
mod layout;
mod lines;
mod numbers;
mod plot;
mod reply;
mod sanity;
pub mod stats;
#[doc(hidden)]
pub mod testing;
mod text;

#[cfg(test)]
mod excluded_tests;
#[cfg(test)]
mod tests;

use crate::matrix::expand::AxisValues;
use crate::results::{CellRecord, Manifest, RunDir};
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub use crate::record::problem::{Problem, ProblemKind};
pub use build::{build, build_compare};
pub use claim_match::ClaimStatus;

/// Output formats of `lab report` and `lab compare`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Html,
    Text,
    Json,
    Junit,
    /// Plain text under 72 columns, to paste under the quoted mail.
    Reply,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Markdown,
        Format::Html,
        Format::Text,
        Format::Json,
        Format::Junit,
        Format::Reply,
    ];

    pub fn parse(s: &str) -> Result<Format> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "md" | "markdown" => Format::Markdown,
            "html" => Format::Html,
            "text" | "txt" => Format::Text,
            "json" => Format::Json,
            "junit" | "xml" => Format::Junit,
            "reply" => Format::Reply,
            other => {
                bail!("unknown report format '{other}': use md, html, text, json, junit or reply")
            }
        })
    }

    /// The formats asked for, in order, without repeats (`--format
    /// junit,html,junit`).
    pub fn distinct(formats: &[Format]) -> Vec<Format> {
        let mut out = Vec::new();
        for f in formats {
            if !out.contains(f) {
                out.push(*f);
            }
        }
        out
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Text => "text",
            Format::Json => "json",
            Format::Junit => "junit",
            Format::Reply => "reply",
        }
    }

    /// The file a format is written to, after `report` or `compare-<id>`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Text => "txt",
            Format::Json => "json",
            Format::Junit => "junit.xml",
            Format::Reply => "reply.txt",
        }
    }
}

/// Whether a report covers one run or compares two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    Run,
    Compare,
}

/// Everything a report says, ready to render.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Bumped when the model changes shape (`lab report --format json`).
    #[serde(alias = "schema")]
    pub schema_version: u32,
    pub kind: ReportKind,
    pub title: String,
    /// The run reported on; for a comparison, the new run (run-b).
    pub run_id: String,
    /// For a comparison: the baseline run (run-a).
    pub baseline_run: Option<String>,
    pub matrix: MatrixSummary,
    pub settings: Settings,
    pub metrics: Vec<MetricInfo>,
    pub variants: Vec<VariantInfo>,
    pub groups: Vec<Group>,
    pub claims: Vec<ClaimCheck>,
    pub aa_noise: Vec<AaNoise>,
    pub completeness: Completeness,
    pub provenance: Provenance,
    /// For a comparison: the baseline run's provenance.
    pub baseline_provenance: Option<Provenance>,
    /// What kept the lab from checking something it should have.
    pub problems: Vec<Problem>,
    pub outcome: Outcome,
    /// What each kernel did with each knob write.
    #[serde(default)]
    pub knobs: Vec<knobs::KnobLine>,
    /// Combinations the matrix excluded (`exclude:`, `only:`): shown as
    /// `n/a`, never as missing.
    #[serde(default)]
    pub excluded: Vec<Excluded>,
    /// For a comparison: how the two runs' hosts and guests differ.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context_diffs: Vec<context::ContextDiff>,
}

impl Group {
    /// The median of `metric` in any cell of the group (a bound is the
    /// same for every variant).
    pub fn any_median(&self, metric: &str) -> Option<f64> {
        self.cells
            .iter()
            .flat_map(|c| c.metrics.iter())
            .find(|m| m.metric == metric)
            .and_then(|m| m.summary.map(|s| s.median))
    }
}

/// An excluded combination, as a table shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Excluded {
    /// Kernel and boot axes: the table it belongs to.
    pub config: String,
    /// Run axes: its row.
    pub run_key: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixSummary {
    pub name: String,
    pub description: String,
    pub path: String,
    pub hash: String,
    pub filter: Option<String>,
    pub shard: Option<String>,
}

/// The rules the verdicts were made by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// A change of medians within ± this fraction is `no change`.
    pub noise: f64,
    /// A coefficient of variation above this flags a cell.
    pub max_cv: f64,
    /// Mann-Whitney significance level.
    pub alpha: f64,
    /// Confidence level of every interval.
    pub level: f64,
    pub resamples: usize,
    /// Base seed of the bootstrap; each cell and metric derives its own.
    pub seed: u64,
    /// Fewest repetitions per side for a verdict.
    pub min_runs: usize,
    pub baseline: String,
    /// Metrics whose regressions fail CI.
    pub gate: Vec<String>,
    /// Timing matters: a contended sample makes a comparison untrusted.
    #[serde(default = "yes")]
    pub timing: bool,
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricInfo {
    pub name: String,
    /// The unit values are stored in, e.g. `ns`.
    pub unit: String,
    /// The unit values are shown in, e.g. `ms`.
    pub display_unit: String,
    /// Stored value / scale = shown value.
    pub scale: f64,
    pub lower_is_better: bool,
    pub gated: bool,
    /// A derived bound of the same unit (`derived:`, axis values only),
    /// shown beside the measured values.
    #[serde(default)]
    pub bound: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantInfo {
    pub name: String,
    pub baseline: bool,
    /// Patch hashes, in order; None when no kernel build is recorded.
    pub patches: Option<Vec<String>>,
    /// What the variant's kernels are built from: their build keys
    /// (source, patches, final config, compiler, arch), or without
    /// builds, its source and patches. Two variants with the same are an
    /// A/A pair; any difference makes them an A/B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<Vec<String>>,
}

/// Cells that differ only by variant (for a comparison: one cell id in
/// both runs), with their statistics and comparisons.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// The group's axes as a label, e.g. `arch=x86_64,hz=100,delay=1`.
    pub id: String,
    /// Kernel and boot axes, e.g. `arch=x86_64,hz=100`: one table each.
    pub config: String,
    /// Run axes, e.g. `delay=1`: one table row each.
    pub run_key: String,
    /// The run axes' names, e.g. `delay`.
    pub run_axes: Vec<String>,
    pub axes: AxisValues,
    /// One per variant, the baseline first.
    pub cells: Vec<CellSummary>,
    pub comparisons: Vec<Comparison>,
    /// Flags about the group as a whole, e.g. a claim made elsewhere.
    pub flags: Vec<Flag>,
    pub latency: Vec<LatencySeries>,
}

/// One cell (one variant of a group) over its repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellSummary {
    pub variant: String,
    pub cell: String,
    pub kernel: String,
    pub arch: String,
    pub reps_planned: Vec<u32>,
    pub reps_done: Vec<u32>,
    /// Failed and interrupted repetitions.
    pub reps_failed: Vec<RepProblem>,
    pub metrics: Vec<MetricStats>,
    pub flags: Vec<Flag>,
    pub clocksources: Vec<String>,
    pub accels: Vec<String>,
    /// Seconds the cell's repetitions took, together.
    pub secs: f64,
    /// perf events the guest could not count: (`perf.<event>`, why in
    /// perf's words, "not supported"). Shown in place of a value.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uncounted: Vec<(String, String)>,
}

impl CellSummary {
    /// Why `metric` has no value, when perf said so.
    pub fn uncounted(&self, metric: &str) -> Option<&str> {
        self.uncounted
            .iter()
            .find(|(m, _)| m == metric)
            .map(|(_, why)| why.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricStats {
    pub metric: String,
    /// Stored values of the finished repetitions, in rep order.
    pub samples: Vec<f64>,
    pub reps: Vec<u32>,
    pub summary: Option<stats::Summary>,
    /// Bootstrap interval of the median at `settings.level`.
    pub median_ci: Option<[f64; 2]>,
}

/// One variant against the baseline, for one metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub metric: String,
    pub base_variant: String,
    pub variant: String,
    pub base_cell: String,
    pub cell: String,
    pub base_median: Option<f64>,
    pub median: Option<f64>,
    /// median / base median - 1.
    pub change: Option<f64>,
    pub change_ci: Option<[f64; 2]>,
    pub mann_whitney_p: Option<f64>,
    pub mann_whitney_exact: bool,
    pub welch_p: Option<f64>,
    pub verdict: stats::Verdict,
    /// Why the verdict is `untrusted`: the contended samples, named.
    #[serde(default)]
    pub untrusted: Vec<String>,
    pub gated: bool,
    /// `worse` on a gated metric.
    pub regression: bool,
    pub flags: Vec<Flag>,
}

/// A reason to distrust a number. Shown wherever the number is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    pub kind: FlagKind,
    pub message: String,
    /// The metric it concerns, when only one.
    pub metric: Option<String>,
    /// The repetitions it was seen in; empty when it is about all.
    pub reps: Vec<u32>,
    /// The figure behind it (the host's load), for ranges in the legend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
}

/// What kind of distrust a flag carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlagKind {
    /// The guest kept time in ticks.
    JiffiesClocksource,
    /// The console reported clock trouble (an unstable TSC).
    ClockEvent,
    /// Compared variants ran on different clocksources.
    ClocksourceMismatch,
    /// Compared variants ran with different accelerators.
    AccelMismatch,
    /// A knob the kernel did not apply.
    KnobIgnored,
    /// Host load average above its cores.
    HostLoad,
    /// Host CPU contention measured during the cell.
    Contended,
    /// An earlier attempt was contended; the one kept was quiet.
    Retried,
    /// Repetitions vary more than the matrix allows.
    HighCv,
    /// A claim made under other conditions.
    ClaimConditions,
    Failed,
    Missing,
    /// Two runs built a kernel differently.
    KernelDiffers,
    /// The two runs' hosts or guests differ (CPU, QEMU, clocksource,
    /// config, compiler, fio, load).
    HostDiffers,
    /// A flag the run recorded in words.
    Run,
}

impl FlagKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::JiffiesClocksource => "jiffies-clocksource",
            FlagKind::ClockEvent => "clock-event",
            FlagKind::ClocksourceMismatch => "clocksource-mismatch",
            FlagKind::AccelMismatch => "accel-mismatch",
            FlagKind::KnobIgnored => "knob-ignored",
            FlagKind::HostLoad => "host-load",
            FlagKind::Contended => "contended",
            FlagKind::Retried => "retried",
            FlagKind::HighCv => "high-cv",
            FlagKind::ClaimConditions => "claim-conditions",
            FlagKind::Failed => "failed",
            FlagKind::Missing => "missing",
            FlagKind::KernelDiffers => "kernel-differs",
            FlagKind::HostDiffers => "host-differs",
            FlagKind::Run => "run",
        }
    }
}

impl std::fmt::Display for FlagKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// fio's completion-latency percentiles, median across repetitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LatencySeries {
    pub variant: String,
    pub cell: String,
    /// read, write or trim.
    pub dir: String,
    /// (percentile, ns), by percentile.
    pub points: Vec<[f64; 2]>,
    pub reps: usize,
}

/// A claimed number against the measured one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClaimCheck {
    /// The claim's position in the matrix, from 1.
    pub claim: usize,
    /// The mail the table is in: a file, and a message-id when one was picked.
    pub source: String,
    pub subject: Option<String>,
    pub message_id: Option<String>,
    pub table: usize,
    pub caption: Option<String>,
    pub theoretical_max: Option<String>,
    pub metric: String,
    /// The unit the claimed and measured values are in.
    pub unit: String,
    pub tolerance: f64,
    /// e.g. `arch=arm64, hz=100`.
    pub conditions: String,
    pub group: String,
    pub config: String,
    /// The names of the table's key columns, e.g. `delay`.
    pub row_axis: String,
    /// The row's keys as the mail wrote them, e.g. `1`.
    pub row_key: String,
    /// The table column of the value.
    pub column: String,
    /// What the row and column bind to, e.g. `delay=1, variant=after`.
    pub binds: String,
    pub variant: String,
    pub cell: Option<String>,
    /// None for a claimed `N/A`.
    pub claimed: Option<f64>,
    pub measured: Option<f64>,
    /// measured / claimed.
    pub ratio: Option<f64>,
    pub status: ClaimStatus,
    pub reasons: Vec<String>,
}

/// What a claim's values measure, for its heading: `read.iops in IOPS`,
/// or each metric with its unit when its rows are metrics.
pub fn metrics_phrase(checks: &[&ClaimCheck]) -> String {
    let mut seen: Vec<String> = Vec::new();
    for c in checks {
        let p = format!("{} in {}", c.metric, c.unit);
        if !c.metric.is_empty() && !seen.contains(&p) {
            seen.push(p);
        }
    }
    match seen.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The lab's own noise, from two variants with the same patches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AaNoise {
    pub variants: [String; 2],
    pub metric: String,
    pub cells: usize,
    /// Median of |change| over the groups, as a fraction.
    pub median_abs_change: f64,
    pub max_abs_change: f64,
    /// The largest |change| is above the noise threshold.
    pub exceeds_noise: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Completeness {
    /// Planned cell repetitions.
    pub planned: usize,
    /// Planned cell repetitions with a finished record.
    pub done: usize,
    /// Planned cell repetitions with no record at all.
    pub missing: Vec<RepRef>,
    /// Failed or interrupted cell repetitions.
    pub failed: Vec<RepProblem>,
    /// Boots that failed.
    pub boot_errors: Vec<String>,
}

impl Completeness {
    pub fn complete(&self) -> bool {
        self.done >= self.planned
            && self.missing.is_empty()
            && self.failed.is_empty()
            && self.boot_errors.is_empty()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepRef {
    pub cell: String,
    pub rep: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RepProblem {
    pub cell: String,
    pub rep: u32,
    /// failed or interrupted.
    pub status: String,
    pub error: Option<String>,
}

/// Where the numbers came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub run_id: String,
    pub created: String,
    pub lab_version: String,
    /// The lab that rendered the report.
    pub report_lab_version: String,
    pub kernels: Vec<KernelProvenance>,
    pub sources: Vec<String>,
    pub hz: Vec<String>,
    pub arches: Vec<String>,
    /// e.g. `QEMU emulator version 9.2.0 (tcg)`.
    pub qemu: Vec<String>,
    pub clocksources: Vec<String>,
    pub repetitions: u32,
    pub host: String,
    pub host_cores: usize,
    pub fio: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelProvenance {
    pub kernel: String,
    pub variant: String,
    pub arch: String,
    pub source: String,
    pub hz: Option<u32>,
    pub patches: Vec<PatchProvenance>,
    pub apply_method: String,
    /// Hunks that needed fuzz, in words.
    pub fuzzed: Vec<String>,
    pub config_hash: String,
    pub build_id: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatchProvenance {
    pub subject: String,
    pub hash: String,
    pub message_id: Option<String>,
}

/// What CI should make of the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// 0: acceptable; 1: a regression or an unmet claim; 2: incomplete,
    /// or the lab could not check something.
    pub exit_code: i32,
    pub regressions: Vec<String>,
    pub unmet_claims: Vec<String>,
    pub incomplete: Vec<String>,
}

/// Render a report in one format. A run directory may come from a
/// stranger's CI job: its run id, matrix path or a mail's caption can
/// hold terminal escapes, which every format but JSON (which escapes
/// them itself) shows as `\x1b`; XML could not hold them at all.
pub fn render(report: &Report, format: Format) -> Result<String> {
    let text = match format {
        Format::Json => return Ok(serde_json::to_string_pretty(report)? + "\n"),
        Format::Text => text::render_text(report)?,
        Format::Markdown => text::render_markdown(report)?,
        Format::Html => html::render(report)?,
        Format::Junit => junit::render(report)?,
        Format::Reply => reply::render(report),
    };
    Ok(crate::util::escape_controls_keep_lines(&text).into_owned())
}

/// The exit code for CI: 2 when incomplete or the lab failed (it wins,
/// as verdicts on a partial run are not final), 1 for a regression or an
/// unmet claim, else 0.
pub fn exit_code(report: &Report) -> i32 {
    outcome_code(
        !report.completeness.complete()
            || !report.problems.is_empty()
            || untrusted(report).next().is_some()
            || contended_alone(report).next().is_some(),
        report
            .groups
            .iter()
            .any(|g| g.comparisons.iter().any(|c| c.regression)),
        report
            .claims
            .iter()
            .any(|c| c.status == ClaimStatus::NotReproduced),
    )
}

/// Comparisons that gave no verdict because a sample was measured on a
/// contended host: the run is incomplete until they are measured again.
pub fn untrusted(report: &Report) -> impl Iterator<Item = (&Group, &Comparison)> {
    report.groups.iter().flat_map(|g| {
        g.comparisons
            .iter()
            .filter(|c| c.verdict == stats::Verdict::Untrusted)
            .map(move |c| (g, c))
    })
}

/// Cells measured on a contended host that no comparison covers (a run
/// of one variant): their numbers are shown, but the run is no clean
/// result until they are measured again.
pub fn contended_alone(report: &Report) -> impl Iterator<Item = &CellSummary> {
    report
        .groups
        .iter()
        .filter(|g| g.comparisons.is_empty())
        .flat_map(|g| &g.cells)
        .filter(|c| c.flags.iter().any(|f| f.kind == FlagKind::Contended))
}

fn outcome_code(incomplete: bool, regression: bool, unmet: bool) -> i32 {
    if incomplete {
        2
    } else if regression || unmet {
        1
    } else {
        0
    }
}

/// Build the report of a stored run and write report.md into it.
pub fn write_markdown(run: &RunDir) -> Result<()> {
    let manifest = run.read_manifest()?;
    let cells = run.cells()?;
    let report = build(&manifest, &cells, &run.path);
    crate::util::atomic_write(
        &run.path.join("report.md"),
        render(&report, Format::Markdown)?.as_bytes(),
    )
}

/// What `lab run` prints at its end: a before/after table per kernel
/// configuration and metric, the flags under each, and what is missing.
pub fn text_summary(report: &Report) -> String {
    text::summary(report)
}

/// Load a run directory and build its report.
pub fn load(run: &RunDir) -> Result<Report> {
    let manifest: Manifest = run.read_manifest()?;
    let (cells, problems) = checked_cells(run)?;
    let mut r = build(&manifest, &cells, &run.path);
    r.problems.extend(problems);
    Ok(r)
}

/// Load two runs and compare them, `a` as the baseline.
pub fn load_compare(a: &RunDir, b: &RunDir) -> Result<Report> {
    let ((ca, mut pa), (cb, pb)) = (checked_cells(a)?, checked_cells(b)?);
    let (ma, mb) = (a.read_manifest()?, b.read_manifest()?);
    let mut r = build_compare((&ma, &ca, &a.path), (&mb, &cb, &b.path));
    // Nothing to compare is no "acceptable": it is the wrong two runs.
    let both = |g: &Group| g.cells.iter().filter(|c| !c.reps_done.is_empty()).count() == 2;
    if !r.groups.iter().any(both) {
        let ids = |c: &[CellRecord]| {
            let mut v: Vec<&str> = c.iter().map(|c| c.cell.as_str()).collect();
            v.dedup();
            let more = if v.len() > 3 {
                format!(" and {} more", v.len() - 3)
            } else {
                String::new()
            };
            v.truncate(3);
            format!("{}{more}", v.join(", "))
        };
        anyhow::bail!(
            "runs {} and {} have no cell in common (a: {}; b: {})",
            ma.run_id,
            mb.run_id,
            ids(&ca),
            ids(&cb)
        );
    }
    pa.extend(pb);
    r.problems.extend(pa);
    Ok(r)
}

/// A run's cell records, each (cell, repetition) once and no impossible
/// value, with a problem line for each fix; a corrupt records.jsonl is
/// an error naming its line.
fn checked_cells(run: &RunDir) -> Result<(Vec<CellRecord>, Vec<Problem>)> {
    run.check_records()?;
    let mut cells = run.cells()?;
    let mut problems = sanity::dedupe(&mut cells);
    problems.extend(sanity::drop_invalid(&mut cells));
    Ok((cells, problems))
}

/// Render every format of a report in `dir`, as `<stem>.<extension>`.
pub fn write_all(
    report: &Report,
    formats: &[Format],
    dir: &Path,
    stem: &str,
) -> Result<Vec<std::path::PathBuf>> {
    let mut written = Vec::new();
    for &f in formats {
        let path = dir.join(format!("{stem}.{}", f.extension()));
        crate::util::atomic_write(&path, render(report, f)?.as_bytes())?;
        written.push(path);
    }
    Ok(written)
}
