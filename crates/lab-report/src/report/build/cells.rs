//! Per-cell summaries, group comparisons and latency series.

use super::*;

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

pub(super) fn group(
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
        clock_flags(s, r, &mut flags, &mut clocksources, &mut accels);
        knob_flags(r, &mut flags);
        host_flags(r, timing, &mut flags);
        for f in &r.flags {
            flags.add(FlagKind::Run, f.detail.clone(), None, rep);
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
    let metrics = metric_stats(s, e, names, settings, &mut flags);
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

/// Add `x` to `v` unless it is empty or there already.
fn push(v: &mut Vec<String>, x: &str) {
    if !x.is_empty() && !v.iter().any(|y| y == x) {
        v.push(x.to_string());
    }
}

/// A repetition's clock: jiffies before or after, a change during the
/// cell, the boot's clocksource and console clock events; and the
/// clocksources and accelerators it ran on.
fn clock_flags(
    s: &Side,
    r: &CellRecord,
    flags: &mut Flags,
    clocksources: &mut Vec<String>,
    accels: &mut Vec<String>,
) {
    let rep = Some(r.rep);
    for cs in [&r.clocksource_before, &r.clocksource_after] {
        push(clocksources, cs);
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
        push(accels, b.accel.name());
        if let Some(p) = &b.probes {
            push(clocksources, &p.clocksource);
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
            .filter(|l| crate::record::guest::is_clock_trouble(l))
        {
            flags.add(
                FlagKind::ClockEvent,
                format!("console: {}", ev.trim()),
                None,
                rep,
            );
        }
    }
}

/// Knobs the kernel ignored, each once.
fn knob_flags(r: &CellRecord, flags: &mut Flags) {
    let rep = Some(r.rep);
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
}

/// The host during a timing cell: load, measured contention, and
/// earlier attempts that were contended.
fn host_flags(r: &CellRecord, timing: bool, flags: &mut Flags) {
    let rep = Some(r.rep);
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
}

/// Per-metric samples, summary and median CI; a CV above the matrix's
/// limit is flagged.
fn metric_stats(
    s: &Side,
    e: &Entry,
    names: &[String],
    settings: &Settings,
    flags: &mut Flags,
) -> Vec<MetricStats> {
    names
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
                        crate::report::numbers::percent(sm.cv),
                        crate::report::numbers::percent(settings.max_cv)
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
        .collect()
}

/// The perf events no repetition counted, with perf's status.
fn uncounted(records: &[&CellRecord]) -> Vec<(String, String)> {
    use crate::record::bench::PerfStatus;
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

pub(super) fn first_line(s: &str) -> String {
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
    // A sample from a contended host says as much about the host as
    // about the kernel, up to how much time other processes took from
    // QEMU: no better or worse may come out of it when that could explain
    // the change.
    let contended: Vec<(&CellRecord, &crate::record::host::Contention)> = [be, ne]
        .iter()
        .flat_map(|e| e.records.iter())
        .filter(|r| r.status == CellStatus::Done)
        .filter_map(|r| Some((*r, r.contention.as_ref().filter(|c| c.contended)?)))
        .collect();
    let effect = contended
        .iter()
        .map(|(_, c)| c.max_effect())
        .fold(0.0, f64::max);
    let measured_change = change.map(|c| c.ratio_median).filter(|x| x.is_finite());
    let explains = measured_change.is_none_or(|c| c.abs() <= effect + settings.noise);
    let untrusted: Vec<String> = contended
        .iter()
        .filter(|_| explains)
        .map(|(r, c)| format!("{} rep {} ({})", r.cell, r.rep, c.figures()))
        .collect();
    let verdict = match stats::verdict(&base, &new, lower_is_better, settings.noise, settings.alpha)
    {
        Verdict::TooFewRuns => Verdict::TooFewRuns,
        _ if settings.timing && !untrusted.is_empty() => Verdict::Untrusted,
        v => v,
    };
    let gated = settings.gate.iter().any(|g| g == metric);
    let mut flags = Flags::default();
    if settings.timing && !contended.is_empty() {
        let change_text = measured_change.map_or("the change".to_string(), |c| {
            format!("a {:+.1}% change", c * 100.0)
        });
        let message = if explains {
            format!(
                "contention could move these timings by up to {:.0}%, enough to explain {change_text}: no verdict",
                effect * 100.0
            )
        } else {
            format!(
                "contention could move these timings by up to {:.0}%, not enough to explain {change_text}: the verdict stands",
                effect * 100.0
            )
        };
        flags.add(FlagKind::Contended, message.clone(), Some(metric), None);
        flags.set_value(FlagKind::Contended, &message, effect * 100.0);
    }
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
        let Ok(json) = crate::record::fio::parse_output(&text) else {
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
