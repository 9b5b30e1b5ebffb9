//! From stored results to the report model.

use super::claim_match::{self, ClaimStatus};
use super::stats::{self, Summary, Verdict};
use super::{
    AaNoise, CellSummary, Comparison, Completeness, Flag, FlagKind, Group, KernelProvenance,
    LatencySeries, MatrixSummary, MetricInfo, MetricStats, Outcome, PatchProvenance, Provenance,
    RepProblem, RepRef, Report, ReportKind, Settings, VariantInfo,
};
use crate::matrix::expand::AxisValues;
use crate::record::guest::is_jiffies;
use crate::record::knob::KnobStatus;
use crate::record::problem::{Problem, ProblemKind};
use crate::results::{BootRecord, CellRecord, CellStatus, LAB_VERSION, Manifest};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod cells;
mod provenance;
use cells::{first_line, group};
pub(in crate::report) use provenance::distinct;
use provenance::{completeness_of, kernel_of, patches_of, provenance};

const LEVEL: f64 = 0.95;
const RESAMPLES: usize = 2000;
const SEED: u64 = 0x1ab_5eed;
const ALPHA: f64 = 0.05;
use super::stats::MIN_RUNS;
const DEFAULT_NOISE: f64 = 0.05;
const DEFAULT_MAX_CV: f64 = 0.10;
const SCHEMA: u32 = 1;

/// One run as the builder reads it.
struct Side<'a> {
    m: &'a Manifest,
    cells: &'a [CellRecord],
    dir: &'a Path,
    /// The run's name in a comparison.
    label: String,
}

impl Side<'_> {
    fn boot(&self, boot: &str, rep: u32) -> Option<&BootRecord> {
        // The last record wins: a resumed run appends a new attempt.
        self.m
            .boots
            .iter()
            .rev()
            .find(|b| b.boot == boot && b.rep == rep)
    }
}

/// One cell of a group, before its statistics.
struct Entry<'a> {
    side: usize,
    group: String,
    config: String,
    run_key: String,
    run_axes: Vec<String>,
    axes: AxisValues,
    /// The cell's own axes, `variant` included.
    full: AxisValues,
    variant: String,
    cell: String,
    kernel: String,
    arch: String,
    planned: Vec<u32>,
    records: Vec<&'a CellRecord>,
}

/// Accumulates flags, joining repetitions of the same flag.
#[derive(Default)]
struct Flags(Vec<Flag>);

impl Flags {
    fn set_value(&mut self, kind: FlagKind, message: &str, value: f64) {
        if let Some(f) = self
            .0
            .iter_mut()
            .find(|f| f.kind == kind && f.message == message)
        {
            f.value = Some(value);
        }
    }

    fn add(&mut self, kind: FlagKind, message: String, metric: Option<&str>, rep: Option<u32>) {
        let found = self
            .0
            .iter_mut()
            .find(|f| f.kind == kind && f.message == message && f.metric.as_deref() == metric);
        let f = match found {
            Some(f) => f,
            None => {
                self.0.push(Flag {
                    kind,
                    message,
                    metric: metric.map(String::from),
                    reps: vec![],
                    value: None,
                });
                self.0.last_mut().expect("just pushed")
            }
        };
        if let Some(r) = rep
            && !f.reps.contains(&r)
        {
            f.reps.push(r);
            f.reps.sort_unstable();
        }
    }
}

/// The report of one run. Reads fio's raw JSON under `run_dir` for the
/// latency distributions, and nothing else.
pub fn build(manifest: &Manifest, cells: &[CellRecord], run_dir: &Path) -> Report {
    let side = Side {
        m: manifest,
        cells,
        dir: run_dir,
        label: manifest.run_id.clone(),
    };
    let sides = [side];
    let mut problems = Vec::new();
    let variants = variant_order(manifest, cells);
    let baseline = match &manifest.matrix.verdict.baseline {
        Some(b) if variants.contains(b) => b.clone(),
        Some(b) => {
            problems.push(Problem::new(
                ProblemKind::Baseline,
                format!(
                    "verdict.baseline '{b}' is not a variant of this run; using '{}'",
                    variants.first().cloned().unwrap_or_default()
                ),
            ));
            variants.first().cloned().unwrap_or_default()
        }
        None => variants.first().cloned().unwrap_or_default(),
    };
    let settings = settings(manifest, baseline);
    let entries = run_entries(&sides[0], 0);
    let mut report = assemble(
        ReportKind::Run,
        &sides,
        entries,
        &variants,
        settings,
        problems,
    );
    report.variants = variants
        .iter()
        .map(|v| VariantInfo {
            name: v.clone(),
            baseline: *v == report.settings.baseline,
            patches: patches_of(manifest, v),
            kernel: kernel_of(manifest, v),
        })
        .collect();
    report.claims = claim_match::check_claims(manifest, &mut report, MIN_RUNS);
    report.aa_noise = aa_noise(&report);
    report.outcome = outcome(&report);
    report
}

/// Two runs of the same cells, `a` as the baseline, matched by cell id.
pub fn build_compare(
    a: (&Manifest, &[CellRecord], &Path),
    b: (&Manifest, &[CellRecord], &Path),
) -> Report {
    // Short names for the table columns; the ids are in the title.
    let (la, lb) = ("a".to_string(), "b".to_string());
    let sides = [
        Side {
            m: a.0,
            cells: a.1,
            dir: a.2,
            label: la.clone(),
        },
        Side {
            m: b.0,
            cells: b.1,
            dir: b.2,
            label: lb.clone(),
        },
    ];
    let problems = Vec::new();
    let mut settings = settings(b.0, la.clone());
    if b.0.matrix.metrics.is_empty() && !a.0.matrix.metrics.is_empty() {
        settings.gate = a.0.matrix.metrics.clone();
    }
    let mut entries = Vec::new();
    for (i, s) in sides.iter().enumerate() {
        for mut e in run_entries(s, i) {
            // In a comparison the group is the cell itself, and its
            // "variants" are the two runs.
            e.group = e.cell.clone();
            e.config = config_label(&e.full, &e.run_axes, true);
            e.axes = e.full.clone();
            e.variant = s.label.clone();
            entries.push(e);
        }
    }
    let variants = vec![la.clone(), lb.clone()];
    let mut report = assemble(
        ReportKind::Compare,
        &sides,
        entries,
        &variants,
        settings,
        problems,
    );
    report.title = format!(
        "{}: run {} against {}",
        b.0.matrix.name, b.0.run_id, a.0.run_id
    );
    report.baseline_run = Some(a.0.run_id.clone());
    report.baseline_provenance = Some(provenance(&sides[0]));
    report.variants = vec![
        VariantInfo {
            name: la,
            baseline: true,
            patches: None,
            kernel: None,
        },
        VariantInfo {
            name: lb,
            baseline: false,
            patches: None,
            kernel: None,
        },
    ];
    // Kernels that differ between the runs are worth saying.
    for g in &mut report.groups {
        if let [ca, cb] = &g.cells[..] {
            let key = |m: &Manifest, k: &str| m.kernels.get(k).map(|b| b.key.0.clone());
            if let (Some(x), Some(y)) = (key(a.0, &ca.kernel), key(b.0, &cb.kernel))
                && x != y
            {
                g.flags.push(Flag {
                    kind: FlagKind::KernelDiffers,
                    message: "the kernel builds differ between the runs".into(),
                    metric: None,
                    reps: vec![],
                    value: None,
                });
            }
        }
    }
    // So do the machines: a change is the patch's only on the same one.
    report.context_diffs = super::context::differences((a.0, a.1), (b.0, b.1));
    if !report.context_diffs.is_empty() {
        let what: Vec<&str> = report
            .context_diffs
            .iter()
            .map(|d| d.what.as_str())
            .collect();
        for g in report.groups.iter_mut().filter(|g| g.cells.len() == 2) {
            g.flags.push(Flag {
                kind: FlagKind::HostDiffers,
                message: format!("the runs differ in {}", what.join(", ")),
                metric: None,
                reps: vec![],
                value: None,
            });
        }
    }
    report.outcome = outcome(&report);
    report
}

fn settings(m: &Manifest, baseline: String) -> Settings {
    let v = &m.matrix.verdict;
    // Checked when the matrix was read: a bad value never gets here.
    let noise = v.noise.map_or(DEFAULT_NOISE, |p| p.fraction());
    let max_cv = v.max_cv.map_or(DEFAULT_MAX_CV, |p| p.fraction());
    Settings {
        noise,
        max_cv,
        alpha: ALPHA,
        level: LEVEL,
        resamples: RESAMPLES,
        seed: SEED,
        min_runs: MIN_RUNS,
        baseline,
        gate: v.gate.clone(),
        timing: m.matrix.timing,
    }
}

/// Variants in the order the plan lists them, then any the records add.
fn variant_order(m: &Manifest, cells: &[CellRecord]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let names = m
        .plan
        .kernels
        .iter()
        .map(|k| &k.variant)
        .chain(m.plan.cells.iter().map(|c| &c.variant))
        .chain(cells.iter().map(|c| &c.variant));
    for v in names {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    out
}

fn without(axes: &AxisValues, drop: &[&str]) -> AxisValues {
    AxisValues(
        axes.0
            .iter()
            .filter(|(n, _)| !drop.contains(&n.as_str()))
            .cloned()
            .collect(),
    )
}

/// The kernel and boot axes of a cell, and `variant` when `keep_variant`.
fn config_label(axes: &AxisValues, run_axes: &[String], keep_variant: bool) -> String {
    let mut drop: Vec<&str> = run_axes.iter().map(String::as_str).collect();
    if !keep_variant {
        drop.push("variant");
    }
    without(axes, &drop).label()
}

fn run_key(axes: &AxisValues, run_axes: &[String]) -> String {
    AxisValues(
        axes.0
            .iter()
            .filter(|(n, _)| run_axes.contains(n))
            .cloned()
            .collect(),
    )
    .label()
}

/// The cells of one run: planned ones first, in plan order, then any
/// recorded cell the plan does not know.
fn run_entries<'a>(s: &Side<'a>, side: usize) -> Vec<Entry<'a>> {
    let plan = &s.m.plan;
    let mut planned: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    if plan.schedule.is_empty() {
        for c in &plan.cells {
            planned.insert(&c.id, (1..=plan.repetitions).collect());
        }
    } else {
        for sb in &plan.schedule {
            for c in plan.cells_of_boot(&sb.boot) {
                planned.entry(&c.id).or_default().push(sb.rep);
            }
        }
    }
    let mut out: Vec<Entry> = Vec::new();
    let make = |cell: &str,
                axes: &AxisValues,
                run_axes: Vec<String>,
                variant: &str,
                kernel: &str,
                arch: &str| {
        let group_axes = without(axes, &["variant"]);
        Entry {
            side,
            group: group_axes.label(),
            config: config_label(axes, &run_axes, false),
            run_key: run_key(axes, &run_axes),
            run_axes,
            axes: group_axes,
            full: axes.clone(),
            variant: variant.to_string(),
            cell: cell.to_string(),
            kernel: kernel.to_string(),
            arch: arch.to_string(),
            planned: vec![],
            records: vec![],
        }
    };
    for c in &plan.cells {
        let run_axes = c.run_axes.0.iter().map(|(n, _)| n.clone()).collect();
        let mut e = make(
            &c.id,
            &c.axes,
            run_axes,
            &c.variant,
            &c.kernel,
            c.arch.name(),
        );
        let mut reps = planned.get(c.id.as_str()).cloned().unwrap_or_default();
        reps.sort_unstable();
        reps.dedup();
        e.planned = reps;
        out.push(e);
    }
    for r in s.cells {
        if let Some(e) = out.iter_mut().find(|e| e.cell == r.cell) {
            e.records.push(r);
            continue;
        }
        // Not in the plan: the axes after `variant` are the run axes,
        // as the plan writes them.
        let run_axes = r
            .axes
            .0
            .iter()
            .skip_while(|(n, _)| n != "variant")
            .skip(1)
            .map(|(n, _)| n.clone())
            .collect();
        let mut e = make(&r.cell, &r.axes, run_axes, &r.variant, &r.kernel, &r.arch);
        e.records.push(r);
        out.push(e);
    }
    for e in &mut out {
        e.records.sort_by_key(|r| r.rep);
    }
    out
}

fn metric_names(sides: &[Side], settings: &Settings) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let shown = &sides.last().expect("a side").m.matrix.metrics;
    let mut push = |m: &String| {
        if !out.contains(m) {
            out.push(m.clone());
        }
    };
    if shown.is_empty() {
        for s in sides {
            for c in s.cells.iter().filter(|c| c.status == CellStatus::Done) {
                c.metrics.iter().for_each(|m| push(&m.name));
            }
        }
    } else {
        shown.iter().for_each(&mut push);
    }
    settings.gate.iter().for_each(&mut push);
    out
}

fn assemble(
    kind: ReportKind,
    sides: &[Side],
    entries: Vec<Entry>,
    variants: &[String],
    mut settings: Settings,
    mut problems: Vec<Problem>,
) -> Report {
    let main = sides.last().expect("a side");
    let names = metric_names(sides, &settings);
    if settings.gate.is_empty() {
        settings.gate = names.clone();
    }
    // A bound (a derived metric of axis values only) is drawn beside
    // each shown metric of its unit, so it needs its statistics too.
    let bounds: Vec<&crate::matrix::derived::DerivedSpec> =
        main.m.plan.derived.iter().filter(|d| d.bound).collect();
    let stat_names = stat_names(kind, main, &names, &bounds);
    let lower: BTreeSet<&String> = main.m.matrix.verdict.lower_is_better.iter().collect();

    // Groups in order of first appearance, variants in variant order.
    let mut order: Vec<String> = Vec::new();
    let mut by_group: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
    for e in entries {
        if !order.contains(&e.group) {
            order.push(e.group.clone());
        }
        by_group.entry(e.group.clone()).or_default().push(e);
    }
    let rank = |v: &str| variants.iter().position(|x| x == v).unwrap_or(usize::MAX);
    let mut groups = Vec::new();
    for id in order {
        let mut es = by_group.remove(&id).unwrap_or_default();
        es.sort_by_key(|e| rank(&e.variant));
        groups.push(group(sides, &es, &stat_names, &names, &settings, &lower));
    }
    let metrics = metric_infos(sides, &groups, &names, &settings, &lower, &bounds);
    let completeness = completeness_all(sides);
    if sides.iter().all(|s| s.m.plan.cells.is_empty()) {
        problems.push(Problem::new(
            ProblemKind::EmptyPlan,
            "the run's plan has no cells",
        ));
    }

    let groups_seen: Vec<(String, String)> = groups
        .iter()
        .map(|g| (g.config.clone(), g.run_key.clone()))
        .collect();
    Report {
        schema_version: SCHEMA,
        kind,
        title: format!("{}: {}", main.m.matrix.name, main.m.run_id),
        run_id: main.m.run_id.clone(),
        baseline_run: None,
        matrix: MatrixSummary {
            name: main.m.matrix.name.clone(),
            description: main.m.matrix.description.clone(),
            path: main.m.matrix.path.clone(),
            hash: main.m.matrix.hash.clone(),
            filter: main.m.matrix.filter.clone(),
            shard: main.m.matrix.shard.clone(),
        },
        settings,
        metrics,
        variants: vec![],
        groups,
        claims: vec![],
        aa_noise: vec![],
        completeness,
        provenance: provenance(main),
        baseline_provenance: None,
        problems,
        outcome: Outcome {
            exit_code: 0,
            regressions: vec![],
            unmet_claims: vec![],
            incomplete: vec![],
        },
        knobs: sides
            .iter()
            .flat_map(|s| super::knobs::collect(s.cells))
            .collect(),
        excluded: excluded(&main.m.plan, &groups_seen),
        context_diffs: vec![],
    }
}

/// The metrics whose statistics the report needs: the shown ones, those
/// claims name (even when not shown), and the bounds drawn beside them.
fn stat_names(
    kind: ReportKind,
    main: &Side,
    names: &[String],
    bounds: &[&crate::matrix::derived::DerivedSpec],
) -> Vec<String> {
    let mut stat_names = names.to_vec();
    if kind == ReportKind::Run {
        for m in main
            .m
            .matrix
            .claims
            .iter()
            .flat_map(claim_match::metrics_of)
        {
            if !stat_names.contains(&m) {
                stat_names.push(m);
            }
        }
    }
    for b in bounds {
        if !stat_names.contains(&b.name) {
            stat_names.push(b.name.clone());
        }
    }
    stat_names
}

/// Each shown metric with its unit, the unit it is shown in, its
/// direction, whether it gates, and the bound drawn beside it.
fn metric_infos(
    sides: &[Side],
    groups: &[Group],
    names: &[String],
    settings: &Settings,
    lower: &BTreeSet<&String>,
    bounds: &[&crate::matrix::derived::DerivedSpec],
) -> Vec<MetricInfo> {
    names
        .iter()
        .map(|n| {
            let unit = sides
                .iter()
                .flat_map(|s| s.cells.iter())
                .flat_map(|c| c.metrics.iter())
                .find(|m| &m.name == n)
                .map(|m| m.unit.clone())
                .unwrap_or_default();
            let medians = groups
                .iter()
                .flat_map(|g| g.cells.iter())
                .flat_map(|c| c.metrics.iter())
                .filter(|m| &m.metric == n)
                .filter_map(|m| m.summary.map(|s| s.median));
            let (display_unit, scale) = super::numbers::display_unit(&unit, medians);
            MetricInfo {
                name: n.clone(),
                unit: unit.clone(),
                display_unit,
                scale,
                lower_is_better: lower.contains(n) || stats::lower_is_better(n),
                gated: settings.gate.contains(n),
                bound: bounds
                    .iter()
                    .find(|b| b.unit == unit && b.name != *n)
                    .map(|b| b.name.clone()),
            }
        })
        .collect()
}

/// What was planned and done on every side, cells named by their side
/// when a comparison has two.
fn completeness_all(sides: &[Side]) -> Completeness {
    let mut completeness = Completeness {
        planned: 0,
        done: 0,
        missing: vec![],
        failed: vec![],
        boot_errors: vec![],
    };
    for s in sides {
        let prefix = if sides.len() > 1 {
            format!("{}: ", s.label)
        } else {
            String::new()
        };
        let c = completeness_of(s);
        completeness.planned += c.planned;
        completeness.done += c.done;
        completeness
            .missing
            .extend(c.missing.into_iter().map(|mut r| {
                r.cell = format!("{prefix}{}", r.cell);
                r
            }));
        completeness
            .failed
            .extend(c.failed.into_iter().map(|mut r| {
                r.cell = format!("{prefix}{}", r.cell);
                r
            }));
        completeness
            .boot_errors
            .extend(c.boot_errors.into_iter().map(|b| format!("{prefix}{b}")));
    }
    completeness
}

/// The plan's excluded combinations, one per table row: variants fold
/// together, and a row that still has a cell of another variant is not
/// excluded as a whole.
fn excluded(plan: &crate::matrix::Plan, seen: &[(String, String)]) -> Vec<super::Excluded> {
    let run_axes: Vec<String> = plan
        .cells
        .first()
        .map(|c| c.run_axes.0.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default();
    let mut out: Vec<super::Excluded> = Vec::new();
    for axes in &plan.excluded {
        let e = super::Excluded {
            config: config_label(axes, &run_axes, false),
            run_key: run_key(axes, &run_axes),
        };
        if !out.contains(&e) && !seen.iter().any(|(c, k)| *c == e.config && *k == e.run_key) {
            out.push(e);
        }
    }
    out
}

fn seed_for(parts: &[&str]) -> u64 {
    let mut h = blake3::Hasher::new();
    h.update(&SEED.to_le_bytes());
    for p in parts {
        h.update(p.as_bytes());
        h.update(&[0]);
    }
    let bytes: [u8; 8] = h.finalize().as_bytes()[..8].try_into().expect("8 bytes");
    u64::from_le_bytes(bytes)
}

fn aa_noise(report: &Report) -> Vec<AaNoise> {
    let mut out = Vec::new();
    let vs = &report.variants;
    for (i, a) in vs.iter().enumerate() {
        for b in &vs[i + 1..] {
            // The same kernel under two names, or it is no A/A.
            let (Some(ka), Some(kb)) = (&a.kernel, &b.kernel) else {
                continue;
            };
            if ka != kb {
                continue;
            }
            for m in &report.metrics {
                let mut changes: Vec<f64> = Vec::new();
                for g in &report.groups {
                    let med = |v: &str| {
                        g.cells
                            .iter()
                            .find(|c| c.variant == v)?
                            .metrics
                            .iter()
                            .find(|x| x.metric == m.name)?
                            .summary
                            .map(|s| s.median)
                    };
                    if let (Some(x), Some(y)) = (med(&a.name), med(&b.name))
                        && x != 0.0
                    {
                        changes.push((y / x - 1.0).abs());
                    }
                }
                let Some(s) = Summary::of(&changes) else {
                    continue;
                };
                out.push(AaNoise {
                    variants: [a.name.clone(), b.name.clone()],
                    metric: m.name.clone(),
                    cells: changes.len(),
                    median_abs_change: s.median,
                    max_abs_change: s.max,
                    exceeds_noise: s.max > report.settings.noise,
                });
            }
        }
    }
    out
}

fn outcome(r: &Report) -> Outcome {
    let mut regressions = Vec::new();
    for g in &r.groups {
        for c in g.comparisons.iter().filter(|c| c.regression) {
            regressions.push(format!(
                "{} {}: {} worse than {} ({})",
                c.metric,
                g.id,
                c.variant,
                c.base_variant,
                super::numbers::opt_change(c.change)
            ));
        }
    }
    let unmet_claims = r
        .claims
        .iter()
        .filter(|c| c.status == ClaimStatus::NotReproduced)
        .map(|c| {
            format!(
                "claim {} {} {}={} {}: claimed {} {}, measured {} (ratio {})",
                c.claim,
                c.config,
                c.row_axis,
                c.row_key,
                c.column,
                super::numbers::opt_value(c.claimed),
                c.unit,
                super::numbers::opt_value(c.measured),
                super::numbers::ratio(c.ratio)
            )
        })
        .collect();
    let mut incomplete = Vec::new();
    let c = &r.completeness;
    if c.done < c.planned || !c.missing.is_empty() {
        incomplete.push(format!(
            "{} of {} planned cell repetitions have a finished result",
            c.done, c.planned
        ));
    }
    if !c.failed.is_empty() {
        incomplete.push(format!(
            "{} cell repetition(s) failed or were interrupted",
            c.failed.len()
        ));
    }
    if !c.boot_errors.is_empty() {
        incomplete.push(format!("{} boot(s) failed", c.boot_errors.len()));
    }
    for (g, c) in super::untrusted(r) {
        incomplete.push(format!(
            "{} {}: {} against {} untrusted, measured on a contended host: {}",
            c.metric,
            g.id,
            c.variant,
            c.base_variant,
            c.untrusted.join(", ")
        ));
    }
    let alone = super::contended_alone(r).count();
    if alone > 0 {
        let cells: usize = r
            .groups
            .iter()
            .filter(|g| g.comparisons.is_empty())
            .map(|g| g.cells.len())
            .sum();
        incomplete.push(format!(
            "{alone} of {cells} cell(s) without a comparison were measured on a contended host: their timings may be inflated; run them again on a quiet host, or on one with more cores than the guest has vCPUs"
        ));
    }
    incomplete.extend(r.problems.iter().map(Problem::to_string));
    let mut o = Outcome {
        exit_code: 0,
        regressions,
        unmet_claims,
        incomplete,
    };
    o.exit_code = super::exit_code(r);
    o
}
