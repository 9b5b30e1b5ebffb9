//! One cell on a live boot: setup, workload, read-backs, teardown.
use crate::bench::{self, Metric};
use crate::guest::boot::Booted;
use crate::guest::ssh::Output;
use crate::guest::{probe, setup};
use crate::host::pressure::{Sample, Thresholds};
use crate::matrix::perf::Perf;
use crate::matrix::{CellSpec, Workload};
use crate::record::{RunFlag, RunFlagKind};
use crate::results::{CellRecord, CellStatus, RunDir};
use anyhow::{Context, Result};
use std::time::Instant;

/// What a cell's run produced, before it becomes a record.
pub struct Outcome {
    pub record: CellRecord,
    /// The guest or QEMU failed: the boot cannot run more cells.
    pub boot_dead: bool,
}

pub fn blank_record(cell: &CellSpec, rep: u32) -> CellRecord {
    CellRecord {
        cell: cell.id.clone(),
        rep,
        boot: cell.boot.clone(),
        kernel: cell.kernel.clone(),
        variant: cell.variant.clone(),
        arch: cell.arch.to_string(),
        axes: cell.axes.clone(),
        status: CellStatus::Failed,
        error: None,
        started: crate::util::now_rfc3339_ms(),
        secs: 0.0,
        host_load: crate::results::host::load_average(),
        host_cores: crate::util::ncpus(),
        clocksource_before: String::new(),
        clocksource_after: String::new(),
        knobs: vec![],
        steps: vec![],
        metrics: vec![],
        fio_json: None,
        flags: vec![],
        contention: None,
        contended_attempts: vec![],
        guest_secs: None,
        perf: vec![],
    }
}

pub async fn run(
    b: &mut Booted,
    run: &RunDir,
    cell: &CellSpec,
    rep: u32,
    th: &Thresholds,
    timeout: std::time::Duration,
    perf: Option<&Perf>,
) -> Outcome {
    let mut rec = blank_record(cell, rep);
    let start = Instant::now();
    let clock_lines_before = b.vm.console.clock_lines.len();
    // Over exactly the cell's wall time, so its first second counts.
    let pressure = Sample::now(b.vm.pid());
    let result = tokio::time::timeout(timeout, body(b, run, cell, rep, &mut rec, perf)).await;
    rec.secs = start.elapsed().as_secs_f64();
    rec.contention = Some(pressure.finish(th));
    let mut boot_dead = false;
    match result {
        Ok(Ok(())) => rec.status = CellStatus::Done,
        Ok(Err(e)) => {
            if e.is::<crate::interrupt::Interrupted>() || crate::interrupt::interrupted() {
                rec.status = CellStatus::Interrupted;
                rec.error = Some("interrupted".into());
            } else {
                rec.error = Some(format!("{e:#}"));
            }
        }
        Err(_) => {
            rec.error = Some(format!("timed out after {} s", timeout.as_secs()));
            boot_dead = true;
        }
    }
    // A panic or oops during the cell makes its numbers worthless. A
    // QEMU that lab's own Ctrl-C ended is no failure: the cell was
    // interrupted, and `--resume` runs it again.
    // A cell that finished before the signal keeps its result.
    let stopped = rec.status == CellStatus::Interrupted || crate::interrupt::interrupted();
    if stopped && rec.status != CellStatus::Done {
        rec.status = CellStatus::Interrupted;
        rec.error = Some("interrupted".into());
    } else if !stopped && let Err(e) = b.vm.check() {
        rec.status = CellStatus::Failed;
        rec.error = Some(format!("{e:#}"));
        boot_dead = true;
    }
    flag(&mut rec, b, clock_lines_before);
    Outcome {
        record: rec,
        boot_dead,
    }
}

async fn body(
    b: &mut Booted,
    run: &RunDir,
    cell: &CellSpec,
    rep: u32,
    rec: &mut CellRecord,
    perf: Option<&Perf>,
) -> Result<()> {
    let dir = run.cell_dir(&cell.id, rep);
    std::fs::create_dir_all(&dir)?;
    if let Some(script) = super::script::plan(cell, perf)? {
        return body_script(b, run, cell, &dir, rec, &script).await;
    }
    let kernel = crate::guest::knob::version_of(&b.probes.uname_r);
    rec.clocksource_before = probe::clocksource(&b.ssh).await?;
    let (steps, undo) = setup::apply(&b.ssh, &cell.setup, kernel).await?;
    rec.knobs = steps.iter().filter_map(|s| s.knob.clone()).collect();
    rec.steps = steps;
    let workload = workload(b, run, cell, &dir, rec, perf).await;
    rec.clocksource_after = probe::clocksource(&b.ssh).await.unwrap_or_default();
    let teardown = setup::teardown(&b.ssh, undo).await;
    finish(rec, cell, workload, teardown.err())
}

/// The cell in one round trip (`run::script`).
async fn body_script(
    b: &mut Booted,
    run: &RunDir,
    cell: &CellSpec,
    dir: &std::path::Path,
    rec: &mut CellRecord,
    script: &super::script::CellScript,
) -> Result<()> {
    let out = b.ssh.script(&script.text).await?;
    let ran = script.parse(&out.stdout, &out.stderr).map_err(|e| {
        let err = out.stderr.trim();
        if err.is_empty() {
            e
        } else {
            e.context(err.to_string())
        }
    })?;
    rec.clocksource_before = ran.clocksource_before.clone();
    rec.clocksource_after = ran.clocksource_after.clone();
    rec.guest_secs = Some(crate::results::GuestSecs {
        setup: ran.steps.iter().map(|r| r.secs).sum(),
        workload: ran.workload.as_ref().map_or(0.0, |w| w.secs),
        teardown: ran.undos.iter().map(|(_, r)| r.secs).sum(),
    });
    let (steps, failed) = script.step_records(&ran);
    rec.steps = steps;
    if let Some(e) = failed {
        return Err(e);
    }
    let workload = match &ran.workload {
        None => Ok(vec![]),
        Some(w) => read_workload(
            run,
            cell,
            dir,
            rec,
            Output {
                stdout: w.output.clone(),
                stderr: ran.workload_stderr.clone(),
                status: Some(w.status),
                signal: None,
                secs: w.secs,
            },
            &mut b.probes.fio_version,
        ),
    };
    finish(rec, cell, workload, script.teardown_error(&ran))
}

/// Metrics from the workload, derived ones, and a teardown flag.
fn finish(
    rec: &mut CellRecord,
    cell: &CellSpec,
    workload: Result<Vec<Metric>>,
    teardown: Option<anyhow::Error>,
) -> Result<()> {
    rec.metrics = workload?;
    bench::derive(&mut rec.metrics, cell, &mut rec.flags);
    if let Some(e) = teardown {
        rec.flags.push(RunFlag::new(
            RunFlagKind::Teardown,
            format!("teardown failed ({e:#}); later cells on this boot may not start clean"),
        ));
    }
    Ok(())
}

async fn workload(
    b: &mut Booted,
    run: &RunDir,
    cell: &CellSpec,
    dir: &std::path::Path,
    rec: &mut CellRecord,
    perf: Option<&Perf>,
) -> Result<Vec<Metric>> {
    let out = match &cell.workload {
        None => return Ok(vec![]),
        Some(Workload::Fio(def)) => {
            let fio = setup::in_cgroup(&cell.setup, bench::fio::command_line(def));
            b.ssh.exec(&perf_wrap(perf, &fio)).await?
        }
        Some(Workload::Command(def)) => {
            let run = format!("sh -c {}", crate::util::shell_quote(&def.run));
            match perf {
                Some(_) => {
                    let run = setup::in_cgroup(&cell.setup, run);
                    b.ssh.exec(&perf_wrap(perf, &run)).await?
                }
                None => {
                    let run = setup::in_cgroup(&cell.setup, def.run.clone());
                    b.ssh.exec(&run).await?
                }
            }
        }
    };
    let mut m = read_workload(run, cell, dir, rec, out, &mut b.probes.fio_version)?;
    m.extend(perf_counts(b, perf, rec).await?);
    Ok(m)
}

/// The workload's output kept beside the cell, and its metrics. The
/// boot's fio version is the one the first fio run printed.
fn read_workload(
    run: &RunDir,
    cell: &CellSpec,
    dir: &std::path::Path,
    rec: &mut CellRecord,
    out: Output,
    fio_version: &mut Option<String>,
) -> Result<Vec<Metric>> {
    match &cell.workload {
        None => Ok(vec![]),
        Some(Workload::Fio(def)) => {
            let raw = dir.join("fio.json");
            crate::util::atomic_write(&raw, out.stdout.as_bytes())?;
            rec.fio_json = Some(
                raw.strip_prefix(&run.path)
                    .unwrap_or(&raw)
                    .display()
                    .to_string(),
            );
            let out = out.check("fio")?;
            let json = bench::fio::parse_output(&out.stdout).context("fio output")?;
            if fio_version.is_none() {
                *fio_version = bench::fio::version(&json);
            }
            bench::fio::metrics(&json, !def.jobs.is_empty())
        }
        Some(Workload::Command(def)) => {
            crate::util::atomic_write(&dir.join("output.txt"), out.stdout.as_bytes())?;
            let out = out.check(&def.run)?;
            bench::command_metrics(def, &out.stdout)
        }
    }
}

/// The workload's command inside `perf stat`, when the matrix asks.
fn perf_wrap(perf: Option<&Perf>, cmd: &str) -> String {
    match perf {
        Some(p) => bench::perf::wrap(&p.events, p.system_wide, cmd),
        None => cmd.to_string(),
    }
}

/// perf's counts after a wrapped workload: counted events as metrics;
/// every event, counted or not, in the record; the others flagged.
async fn perf_counts(b: &Booted, perf: Option<&Perf>, rec: &mut CellRecord) -> Result<Vec<Metric>> {
    let Some(p) = perf else { return Ok(vec![]) };
    let counts = bench::perf::collect(&b.ssh, p).await?;
    rec.flags.extend(bench::perf::flags(&counts));
    let m = bench::perf::metrics(&counts);
    rec.perf = counts;
    Ok(m)
}

/// Conditions that make a cell's timing suspect. They are recorded with
/// the cell; the report shows them and never drops them.
fn flag(rec: &mut CellRecord, b: &Booted, clock_lines_before: usize) {
    // A jiffies clocksource, before or after, and a change during the
    // cell are decided by the report from the clocksources recorded
    // with the cell: one fact, one flag.
    for line in b.vm.console.clock_lines.iter().skip(clock_lines_before) {
        if crate::vm::console::is_clock_trouble(line) {
            rec.flags.push(RunFlag::new(
                RunFlagKind::ClockEvent,
                format!("console during the cell: {line}"),
            ));
        }
    }
    // Ignored knobs are not repeated here: the cell's knob records carry
    // their status and reason, and the report flags them from there.
    // Host load and contention are recorded as numbers with the cell;
    // the report flags them once, from there.
}
