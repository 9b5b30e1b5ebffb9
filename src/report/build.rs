//! From stored results to the report model.

use super::claim_match::{self, ClaimStatus};
use super::stats::{self, Summary, Verdict};
use super::{
    AaNoise, CellSummary, Comparison, Completeness, Flag, FlagKind, Group, KernelProvenance,
    LatencySeries, MatrixSummary, MetricInfo, MetricStats, Outcome, PatchProvenance, Provenance,
    RepProblem, RepRef, Report, ReportKind, Settings, VariantInfo,
};
use crate::guest::knob::KnobStatus;
use crate::guest::probe::is_jiffies;
use crate::matrix::expand::AxisValues;
use crate::results::{BootRecord, CellRecord, CellStatus, LAB_VERSION, Manifest};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

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
            problems.push(format!(
                "verdict.baseline '{b}' is not a variant of this run; using '{}'",
                variants.first().cloned().unwrap_or_default()
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
        },
        VariantInfo {
            name: lb,
            baseline: false,
            patches: None,
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
    mut problems: Vec<String>,
) -> Report {
    let main = sides.last().expect("a side");
    let names = metric_names(sides, &settings);
    if settings.gate.is_empty() {
        settings.gate = names.clone();
    }
    // Claims need their metric's statistics even when it is not shown.
    let mut stat_names = names.clone();
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
    // A bound (a derived metric of axis values only) is drawn beside
    // each shown metric of its unit, so it needs its statistics too.
    let bounds: Vec<&crate::matrix::derived::DerivedSpec> =
        main.m.plan.derived.iter().filter(|d| d.bound).collect();
    for b in &bounds {
        if !stat_names.contains(&b.name) {
            stat_names.push(b.name.clone());
        }
    }
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

    let metrics = names
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
        .collect();

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
    if sides.iter().all(|s| s.m.plan.cells.is_empty()) {
        problems.push("the run's plan has no cells".into());
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

fn samples(e: &Entry, metric: &str) -> (Vec<f64>, Vec<u32>) {
    let mut values = Vec::new();
    let mut reps = Vec::new();
    for r in e.records.iter().filter(|r| r.status == CellStatus::Done) {
        if let Some(m) = r.metrics.iter().find(|m| m.name == metric)
            && m.value.is_finite()
        {
            values.push(m.value);
            reps.push(r.rep);
        }
    }
    (values, reps)
}

fn group(
    sides: &[Side],
    es: &[Entry],
    stat_names: &[String],
    names: &[String],
    settings: &Settings,
    lower: &BTreeSet<&String>,
) -> Group {
    let first = &es[0];
    let cells: Vec<CellSummary> = es
        .iter()
        .map(|e| cell_summary(&sides[e.side], e, stat_names, settings))
        .collect();
    let mut comparisons = Vec::new();
    let mut flags = Flags::default();
    let base = es.iter().position(|e| e.variant == settings.baseline);
    match base {
        None => flags.add(
            FlagKind::Missing,
            format!("no {} cell to compare with", settings.baseline),
            None,
            None,
        ),
        Some(bi) => {
            for (i, e) in es.iter().enumerate().filter(|(i, _)| *i != bi) {
                for m in names {
                    comparisons.push(compare(
                        (&es[bi], &cells[bi]),
                        (e, &cells[i]),
                        m,
                        settings,
                        lower.contains(m) || stats::lower_is_better(m),
                    ));
                }
            }
        }
    }
    let latency = es
        .iter()
        .flat_map(|e| latency_series(&sides[e.side], e))
        .collect();
    Group {
        id: first.group.clone(),
        config: first.config.clone(),
        run_key: first.run_key.clone(),
        run_axes: first.run_axes.clone(),
        axes: first.axes.clone(),
        cells,
        comparisons,
        flags: flags.0,
        latency,
    }
}

fn cell_summary(s: &Side, e: &Entry, names: &[String], settings: &Settings) -> CellSummary {
    let mut flags = Flags::default();
    let mut clocksources: Vec<String> = Vec::new();
    let mut accels: Vec<String> = Vec::new();
    let push = |v: &mut Vec<String>, x: &str| {
        if !x.is_empty() && !v.iter().any(|y| y == x) {
            v.push(x.to_string());
        }
    };
    let mut reps_done = Vec::new();
    let mut reps_failed = Vec::new();
    let timing = s.m.matrix.timing;
    for r in &e.records {
        let rep = Some(r.rep);
        match r.status {
            CellStatus::Done => reps_done.push(r.rep),
            CellStatus::Failed | CellStatus::Interrupted => {
                let status = if r.status == CellStatus::Failed {
                    "failed"
                } else {
                    "interrupted"
                };
                reps_failed.push(RepProblem {
                    cell: r.cell.clone(),
                    rep: r.rep,
                    status: status.into(),
                    error: r.error.clone(),
                });
                let msg = match &r.error {
                    Some(err) => format!("{status}: {}", first_line(err)),
                    None => status.to_string(),
                };
                flags.add(FlagKind::Failed, msg, None, rep);
            }
        }
        for cs in [&r.clocksource_before, &r.clocksource_after] {
            push(&mut clocksources, cs);
            if is_jiffies(cs) {
                flags.add(
                    FlagKind::JiffiesClocksource,
                    format!("guest clocksource {cs}: times advance in ticks"),
                    None,
                    rep,
                );
            }
        }
        if !r.clocksource_before.is_empty()
            && !r.clocksource_after.is_empty()
            && r.clocksource_before != r.clocksource_after
        {
            flags.add(
                FlagKind::JiffiesClocksource,
                format!(
                    "clocksource changed from {} to {} during the cell",
                    r.clocksource_before, r.clocksource_after
                ),
                None,
                rep,
            );
        }
        if let Some(b) = s.boot(&r.boot, r.rep) {
            push(&mut accels, b.accel.name());
            if let Some(p) = &b.probes {
                push(&mut clocksources, &p.clocksource);
                if is_jiffies(&p.clocksource) {
                    flags.add(
                        FlagKind::JiffiesClocksource,
                        format!("guest booted on clocksource {}", p.clocksource),
                        None,
                        rep,
                    );
                }
            }
            for ev in b
                .clock_events
                .iter()
                .filter(|l| crate::vm::console::is_clock_trouble(l))
            {
                flags.add(
                    FlagKind::ClockEvent,
                    format!("console: {}", ev.trim()),
                    None,
                    rep,
                );
            }
        }
        let knobs = r
            .knobs
            .iter()
            .chain(r.steps.iter().filter_map(|st| st.knob.as_ref()));
        let mut seen = BTreeSet::new();
        for k in knobs.filter(|k| k.status == KnobStatus::Ignored) {
            if !seen.insert(&k.path) {
                continue;
            }
            let why = k.reason.as_deref().unwrap_or("the kernel did not apply it");
            let known = k
                .known
                .as_deref()
                .map(|w| format!("; {w}"))
                .unwrap_or_default();
            flags.add(
                FlagKind::KnobIgnored,
                format!(
                    "knob {} ignored (wrote {}, reads {}): {why}{known}",
                    k.path, k.wanted, k.after
                ),
                None,
                rep,
            );
        }
        if timing && r.host_cores > 0 && r.host_load[0] > r.host_cores as f64 {
            let message = format!(
                "host load {:.1} above its {} cores during a timing cell",
                r.host_load[0], r.host_cores
            );
            flags.add(FlagKind::HostLoad, message.clone(), None, rep);
            flags.set_value(FlagKind::HostLoad, &message, r.host_load[0]);
        }
        if let Some(c) = r.contention.as_ref().filter(|c| timing && c.contended) {
            flags.add(
                FlagKind::Contended,
                format!(
                    "measured on a contended host: {}",
                    c.reason.as_deref().unwrap_or("")
                ),
                None,
                rep,
            );
        }
        for c in &r.contended_attempts {
            flags.add(
                FlagKind::Retried,
                format!("re-run: an earlier attempt was contended ({})", c.figures()),
                None,
                rep,
            );
        }
        for f in &r.flags {
            flags.add(FlagKind::Run, f.clone(), None, rep);
        }
    }
    let done: BTreeSet<u32> = e.records.iter().map(|r| r.rep).collect();
    let missing: Vec<u32> = e
        .planned
        .iter()
        .copied()
        .filter(|r| !done.contains(r))
        .collect();
    for r in &missing {
        flags.add(FlagKind::Missing, "no result".into(), None, Some(*r));
    }
    let metrics = names
        .iter()
        .map(|name| {
            let (values, reps) = samples(e, name);
            let summary = Summary::of(&values);
            let ci = stats::bootstrap_median_ci(
                &values,
                settings.level,
                settings.resamples,
                seed_for(&[&s.label, &e.cell, name]),
            )
            .map(|(a, b)| [a, b]);
            if let Some(sm) = summary
                && sm.n >= 2
                && sm.cv > settings.max_cv
            {
                flags.add(
                    FlagKind::HighCv,
                    format!(
                        "{name}: CV {} above {}",
                        super::numbers::percent(sm.cv),
                        super::numbers::percent(settings.max_cv)
                    ),
                    Some(name),
                    None,
                );
            }
            MetricStats {
                metric: name.clone(),
                samples: values,
                reps,
                summary,
                median_ci: ci,
            }
        })
        .collect();
    CellSummary {
        variant: e.variant.clone(),
        cell: e.cell.clone(),
        kernel: e.kernel.clone(),
        arch: e.arch.clone(),
        reps_planned: e.planned.clone(),
        reps_done,
        reps_failed,
        metrics,
        flags: flags.0,
        clocksources,
        accels,
        secs: e
            .records
            .iter()
            .map(|r| r.secs)
            .filter(|s| s.is_finite())
            .sum(),
        uncounted: uncounted(&e.records),
    }
}

/// The perf events no repetition counted, with perf's status.
fn uncounted(records: &[&CellRecord]) -> Vec<(String, String)> {
    use crate::bench::perf::PerfStatus;
    let mut out: Vec<(String, String)> = Vec::new();
    let all = records.iter().flat_map(|r| &r.perf);
    for p in all.clone().filter(|p| p.status != PerfStatus::Counted) {
        let metric = format!("perf.{}", p.event);
        let counted = all
            .clone()
            .any(|q| q.event == p.event && q.status == PerfStatus::Counted);
        if !counted && !out.iter().any(|(m, _)| *m == metric) {
            let why = match p.status {
                PerfStatus::NotSupported => "not supported",
                PerfStatus::NotCounted => "not counted",
                _ => "not printed",
            };
            out.push((metric, why.to_string()));
        }
    }
    out
}

fn first_line(s: &str) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() > 120 {
        format!("{}...", line.chars().take(117).collect::<String>())
    } else {
        line.to_string()
    }
}

fn compare(
    (be, bc): (&Entry, &CellSummary),
    (ne, nc): (&Entry, &CellSummary),
    metric: &str,
    settings: &Settings,
    lower_is_better: bool,
) -> Comparison {
    let (base, _) = samples(be, metric);
    let (new, _) = samples(ne, metric);
    let median = |c: &CellSummary| {
        c.metrics
            .iter()
            .find(|m| m.metric == metric)
            .and_then(|m| m.summary.map(|s| s.median))
    };
    let change = stats::relative_change(
        &base,
        &new,
        settings.level,
        settings.resamples,
        seed_for(&[
            &bc.cell,
            &nc.cell,
            &be.side.to_string(),
            &ne.side.to_string(),
            metric,
        ]),
    );
    let mw = (!base.is_empty() && !new.is_empty()).then(|| stats::mann_whitney(&new, &base));
    // A sample from a contended host says as much about the host as about
    // the kernel: no better or worse may come out of it.
    let untrusted: Vec<String> = [be, ne]
        .iter()
        .flat_map(|e| e.records.iter())
        .filter(|r| r.status == CellStatus::Done)
        .filter_map(|r| {
            let c = r.contention.as_ref().filter(|c| c.contended)?;
            Some(format!("{} rep {} ({})", r.cell, r.rep, c.figures()))
        })
        .collect();
    let verdict = match stats::verdict(&base, &new, lower_is_better, settings.noise, settings.alpha)
    {
        Verdict::TooFewRuns => Verdict::TooFewRuns,
        _ if settings.timing && !untrusted.is_empty() => Verdict::Untrusted,
        v => v,
    };
    let gated = settings.gate.iter().any(|g| g == metric);
    let mut flags = Flags::default();
    let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<String>>();
    for (kind, what, b, n) in [
        (
            FlagKind::ClocksourceMismatch,
            "on different clocksources",
            &bc.clocksources,
            &nc.clocksources,
        ),
        (
            FlagKind::AccelMismatch,
            "with different accelerators",
            &bc.accels,
            &nc.accels,
        ),
    ] {
        if !b.is_empty() && !n.is_empty() && set(b) != set(n) {
            flags.add(
                kind,
                format!(
                    "measured {what}: {} {}, {} {}",
                    bc.variant,
                    b.join("+"),
                    nc.variant,
                    n.join("+")
                ),
                None,
                None,
            );
        }
    }
    Comparison {
        metric: metric.to_string(),
        base_variant: bc.variant.clone(),
        variant: nc.variant.clone(),
        base_cell: bc.cell.clone(),
        cell: nc.cell.clone(),
        base_median: median(bc),
        median: median(nc),
        change: change.map(|c| c.ratio_median).filter(|x| x.is_finite()),
        change_ci: change
            .map(|c| [c.ci.0, c.ci.1])
            .filter(|c| c.iter().all(|x| x.is_finite())),
        mann_whitney_p: mw.map(|m| m.p_two_sided),
        mann_whitney_exact: mw.is_some_and(|m| m.exact),
        welch_p: stats::welch_t(&new, &base)
            .map(|w| w.p_two_sided)
            .filter(|p| p.is_finite()),
        verdict,
        untrusted,
        gated,
        regression: gated && verdict == Verdict::Worse,
        flags: flags.0,
    }
}

/// fio's clat percentiles of each finished repetition, the median per
/// percentile across them.
fn latency_series(s: &Side, e: &Entry) -> Vec<LatencySeries> {
    let mut per_dir: BTreeMap<String, Vec<BTreeMap<String, f64>>> = BTreeMap::new();
    for r in e.records.iter().filter(|r| r.status == CellStatus::Done) {
        let Some(rel) = &r.fio_json else { continue };
        let Ok(text) = std::fs::read_to_string(s.dir.join(rel)) else {
            continue;
        };
        let Ok(json) = crate::bench::fio::parse_output(&text) else {
            continue;
        };
        let Some(job) = json.get("jobs").and_then(|j| j.get(0)) else {
            continue;
        };
        for dir in ["read", "write", "trim"] {
            let Some(d) = job.get(dir) else { continue };
            if d.get("total_ios").and_then(|v| v.as_u64()).unwrap_or(0) == 0 {
                continue;
            }
            let Some(p) = d
                .get("clat_ns")
                .and_then(|c| c.get("percentile"))
                .and_then(|p| p.as_object())
            else {
                continue;
            };
            let map: BTreeMap<String, f64> = p
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect();
            if !map.is_empty() {
                per_dir.entry(dir.to_string()).or_default().push(map);
            }
        }
    }
    per_dir
        .into_iter()
        .map(|(dir, reps)| {
            let keys: BTreeSet<&String> = reps.iter().flat_map(|m| m.keys()).collect();
            let mut points: Vec<[f64; 2]> = keys
                .into_iter()
                .filter_map(|k| {
                    let pct: f64 = k.trim().parse().ok()?;
                    let vals: Vec<f64> = reps.iter().filter_map(|m| m.get(k).copied()).collect();
                    Some([pct, Summary::of(&vals)?.median])
                })
                .collect();
            points.sort_by(|a, b| a[0].total_cmp(&b[0]));
            LatencySeries {
                variant: e.variant.clone(),
                cell: e.cell.clone(),
                dir,
                points,
                reps: reps.len(),
            }
        })
        .collect()
}

fn completeness_of(s: &Side) -> Completeness {
    let plan = &s.m.plan;
    let mut planned: BTreeSet<(String, u32)> = BTreeSet::new();
    if plan.schedule.is_empty() {
        for c in &plan.cells {
            for rep in 1..=plan.repetitions {
                planned.insert((c.id.clone(), rep));
            }
        }
    } else {
        for sb in &plan.schedule {
            for c in plan.cells_of_boot(&sb.boot) {
                planned.insert((c.id.clone(), sb.rep));
            }
        }
    }
    let status: BTreeMap<(String, u32), CellStatus> = s
        .cells
        .iter()
        .map(|c| ((c.cell.clone(), c.rep), c.status))
        .collect();
    let done = planned
        .iter()
        .filter(|k| status.get(*k) == Some(&CellStatus::Done))
        .count();
    let missing = planned
        .iter()
        .filter(|k| !status.contains_key(*k))
        .map(|(cell, rep)| RepRef {
            cell: cell.clone(),
            rep: *rep,
        })
        .collect();
    let failed = s
        .cells
        .iter()
        .filter(|c| c.status != CellStatus::Done)
        .map(|c| RepProblem {
            cell: c.cell.clone(),
            rep: c.rep,
            status: if c.status == CellStatus::Failed {
                "failed".into()
            } else {
                "interrupted".into()
            },
            error: c.error.clone(),
        })
        .collect();
    // A boot counts as failed when its last attempt did.
    let mut last: BTreeMap<(&str, u32), &BootRecord> = BTreeMap::new();
    for b in &s.m.boots {
        last.insert((&b.boot, b.rep), b);
    }
    let boot_errors = last
        .values()
        .filter_map(|b| {
            b.error
                .as_ref()
                .map(|e| format!("boot {} rep {}: {}", b.boot, b.rep, first_line(e)))
        })
        .collect();
    Completeness {
        planned: planned.len(),
        done,
        missing,
        failed,
        boot_errors,
    }
}

pub(super) fn distinct(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !i.is_empty() && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn short(hash: &str) -> &str {
    crate::util::prefix(hash, 12)
}

fn provenance(s: &Side) -> Provenance {
    let m = s.m;
    // Kernels in plan order, then any other recorded build.
    let mut ids: Vec<&String> = m.plan.kernels.iter().map(|k| &k.id).collect();
    ids.extend(m.kernels.keys());
    let ids = distinct(ids.into_iter().cloned());
    let kernels: Vec<KernelProvenance> = ids
        .iter()
        .filter_map(|id| m.kernels.get(id))
        .map(|k| KernelProvenance {
            kernel: k.kernel.clone(),
            variant: k.variant.clone(),
            arch: k.arch.name().to_string(),
            source: source_label(&k.source),
            hz: k.hz,
            patches: k
                .patches
                .iter()
                .map(|p| PatchProvenance {
                    subject: p.subject.clone(),
                    hash: p.hash.clone(),
                    message_id: p.message_id.clone(),
                })
                .collect(),
            apply_method: k.apply_method.clone(),
            fuzzed: k
                .fuzzed
                .iter()
                .map(|f| {
                    format!(
                        "{}: hunk {} needed fuzz {} (offset {})",
                        f.file, f.hunk, f.fuzz, f.offset
                    )
                })
                .collect(),
            config_hash: k.config_hash.clone(),
            build_id: k.build_id.clone(),
        })
        .collect();
    let sources = distinct(kernels.iter().map(|k| k.source.clone()));
    let mut hz = distinct(kernels.iter().filter_map(|k| k.hz.map(|h| h.to_string())));
    if hz.is_empty() {
        hz = distinct(
            m.plan
                .kernels
                .iter()
                .filter_map(|k| k.axes.get("hz").map(|v| v.to_string()))
                .chain(
                    m.boots
                        .iter()
                        .filter_map(|b| b.probes.as_ref()?.hz_config.map(|h| h.to_string())),
                ),
        );
    }
    let arches = distinct(
        m.plan
            .kernels
            .iter()
            .map(|k| k.arch.name().to_string())
            .chain(s.cells.iter().map(|c| c.arch.clone())),
    );
    let qemu = distinct(
        m.boots
            .iter()
            .map(|b| format!("{} ({})", b.qemu_version.trim(), b.accel.name())),
    );
    let clocksources = distinct(
        m.boots
            .iter()
            .filter_map(|b| b.probes.as_ref().map(|p| p.clocksource.clone()))
            .chain(
                s.cells
                    .iter()
                    .flat_map(|c| [c.clocksource_before.clone(), c.clocksource_after.clone()]),
            ),
    );
    let fio = distinct(
        m.boots
            .iter()
            .filter_map(|b| b.probes.as_ref()?.fio_version.clone()),
    );
    let h = &m.host;
    let host = [
        h.hostname.clone(),
        h.cpu_model.clone(),
        if h.cores > 0 {
            format!("{} cores", h.cores)
        } else {
            String::new()
        },
        if h.mem_total_mib > 0 {
            format!("{} MiB", h.mem_total_mib)
        } else {
            String::new()
        },
        h.os.clone(),
        if h.kernel.is_empty() {
            String::new()
        } else {
            format!("Linux {}", h.kernel)
        },
    ]
    .into_iter()
    .filter(|x| !x.is_empty())
    .collect::<Vec<_>>()
    .join(", ");
    Provenance {
        run_id: m.run_id.clone(),
        created: m.created.clone(),
        lab_version: m.lab_version.clone(),
        report_lab_version: LAB_VERSION.to_string(),
        kernels,
        sources,
        hz,
        arches,
        qemu,
        clocksources,
        repetitions: m.matrix.repetitions.max(m.plan.repetitions),
        host,
        host_cores: h.cores,
        fio,
    }
}

fn source_label(s: &crate::kernel::source::SourceId) -> String {
    let version = if s.version.is_empty() {
        "linux".to_string()
    } else {
        format!("linux {}", s.version)
    };
    let what = match &s.git_ref {
        Some(r) => format!("git {} {r}", s.location),
        None => Path::new(&s.location)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| s.location.clone()),
    };
    format!("{version} ({what}, {})", short(&s.hash))
}

/// A variant's patches: the hashes its kernel builds record, or failing
/// those, the patch list the matrix file gives it.
fn patches_of(m: &Manifest, variant: &str) -> Option<Vec<String>> {
    if let Some(k) = m.kernels.values().find(|k| k.variant == variant) {
        return Some(k.patches.iter().map(|p| p.hash.clone()).collect());
    }
    #[derive(serde::Deserialize)]
    struct MatrixVariants {
        variants: Vec<VariantPatches>,
    }
    #[derive(serde::Deserialize)]
    struct VariantPatches {
        name: String,
        #[serde(default)]
        patches: Vec<crate::matrix::schema::PatchDef>,
    }
    let parsed: MatrixVariants = crate::util::from_yaml(&m.matrix.text).ok()?;
    let v = parsed.variants.into_iter().find(|v| v.name == variant)?;
    Some(
        v.patches
            .iter()
            .map(|p| serde_json::to_string(p).unwrap_or_default())
            .collect(),
    )
}

fn aa_noise(report: &Report) -> Vec<AaNoise> {
    let mut out = Vec::new();
    let vs = &report.variants;
    for (i, a) in vs.iter().enumerate() {
        for b in &vs[i + 1..] {
            let (Some(pa), Some(pb)) = (&a.patches, &b.patches) else {
                continue;
            };
            if pa != pb {
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
    incomplete.extend(r.problems.iter().cloned());
    let mut o = Outcome {
        exit_code: 0,
        regressions,
        unmet_claims,
        incomplete,
    };
    o.exit_code = super::exit_code(r);
    o
}
