//! `lab run`: the whole pipeline for a plan. Builds kernels and images,
//! boots each kernel once per repetition block, runs its cells in
//! order, and records each cell the moment it ends.
//!
//! This is the runner; it emits events and writes the run store. What a
//! person sees is drawn from those by the UI and the report.

pub mod cell;
pub mod script;

use crate::cache::Cache;
use crate::events::Events;
use crate::guest::boot::{self, Booted};
use crate::host::pressure::Thresholds;
use crate::kernel::{BuildOptions, KernelBuild};
use crate::matrix::{Arch, Matrix, Plan, ScheduledBoot};
use crate::results::{BootRecord, CellStatus, ImageInfo, Manifest, MatrixInfo, RunDir};
use crate::vm::{Accel, BootConfig};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

pub struct RunOptions {
    pub results_root: PathBuf,
    /// Continue this run instead of starting a new one.
    pub resume: Option<String>,
    /// With resume: run failed cells again too.
    pub rerun_failed: bool,
    /// VMs at once.
    pub jobs: usize,
    pub accel: Option<Accel>,
    pub mails: Vec<PathBuf>,
    /// Mails that claims read (`--claims`), besides the patch mails.
    pub claim_mails: Vec<PathBuf>,
    pub filter: Option<String>,
    pub shard: Option<String>,
    pub ready_timeout: Option<Duration>,
    pub cell_timeout: Duration,
}

/// Everything a boot needs, prepared once per run.
struct Prepared {
    kernels: BTreeMap<String, KernelBuild>,
    initrd: BTreeMap<Arch, PathBuf>,
    accel: BTreeMap<Arch, crate::vm::accel::Choice>,
    keys: crate::guest::keys::Keys,
}

pub async fn run(
    cache: &Cache,
    matrix: &Matrix,
    plan: &Plan,
    opts: &RunOptions,
    events: &Events,
) -> Result<RunDir> {
    // Before a run directory exists: a missing mail leaves nothing behind.
    crate::kernel::build::check_patches(matrix, &plan.kernels, &opts.mails)?;
    let claims = crate::results::claim_sources::gather(matrix, &opts.mails, &opts.claim_mails);
    let wrong = crate::results::claim_sources::unit_errors(matrix, plan, &claims.0);
    if !wrong.is_empty() {
        anyhow::bail!("{}: {}", matrix.path.display(), wrong.join("; "));
    }
    let (run, mut manifest, plan) = open_run(matrix, plan, opts)?;
    for p in &claims.1 {
        events.warn(p.to_string());
    }
    manifest.claim_sources = claims.0;
    events.note(format!("run {} in {}", run.id(), run.path.display()));
    let per_vm = plan
        .boots
        .iter()
        .map(|b| b.cpus as usize)
        .max()
        .unwrap_or(1);
    if opts.jobs == 1 && matrix.timing && per_vm >= crate::util::ncpus() {
        // Measured: 2 vCPUs on 2 cores, QEMU waited 13-14% of each cell.
        events.warn(format!(
            "a guest of {per_vm} vCPUs on a {}-core host: QEMU's own threads will wait for a core, and timing cells will be flagged contended; give the guest fewer vCPUs or the host more cores",
            crate::util::ncpus()
        ));
    }
    if opts.jobs > 1 && matrix.timing && opts.jobs * per_vm + 1 > crate::util::ncpus() {
        events.warn(format!(
            "--jobs {} runs timing cells in parallel VMs on a {}-core host: they will share cores, and a loaded guest can lose its TSC and fall back to jiffies",
            opts.jobs,
            crate::util::ncpus()
        ));
    }

    let prepared = prepare(cache, matrix, &plan, opts, events, &mut manifest).await?;
    run.write_manifest(&manifest)?;

    let (done, failed) = run.finished()?;
    let pending = |cell: &str, rep: u32| {
        let k = (cell.to_string(), rep);
        !done.contains(&k) && (opts.rerun_failed || !failed.contains(&k))
    };
    let work: Vec<&ScheduledBoot> = plan
        .schedule
        .iter()
        .filter(|s| plan.cells_of_boot(&s.boot).any(|c| pending(&c.id, s.rep)))
        .collect();
    let total_cells: usize = work
        .iter()
        .map(|s| {
            plan.cells_of_boot(&s.boot)
                .filter(|c| pending(&c.id, s.rep))
                .count()
        })
        .sum();
    let skipped = plan.cells.len() * plan.repetitions as usize - total_cells;
    if skipped > 0 {
        events.note(format!("{skipped} cell repetition(s) already recorded; running the {total_cells} that are missing"));
    }
    events.started("cells", "cells", Some(total_cells as u64));
    let counter = Mutex::new(0u64);
    let manifest = Mutex::new(manifest);
    let ctx = BootCtx {
        run: &run,
        plan: &plan,
        matrix,
        opts,
        prepared: &prepared,
        events,
        counter: &counter,
        manifest: &manifest,
        pending: &pending,
    };
    use futures::StreamExt;
    let results: Vec<Result<()>> = futures::stream::iter(work.iter().map(|s| ctx.run_boot(s)))
        .buffered(opts.jobs.max(1))
        .collect()
        .await;
    let manifest = manifest.into_inner().unwrap();
    run.write_manifest(&manifest)?;
    let n = run.write_records()?;
    events.finished(
        "cells",
        true,
        false,
        0.0,
        format!("{n} metric values stored"),
    );
    for r in results {
        r?;
    }
    crate::interrupt::check()?;
    Ok(run)
}

fn open_run(matrix: &Matrix, plan: &Plan, opts: &RunOptions) -> Result<(RunDir, Manifest, Plan)> {
    let hash = crate::util::hash_bytes(matrix.text.as_bytes());
    if let Some(id) = &opts.resume {
        let run = RunDir::open(&opts.results_root, id)?;
        let m = run.read_manifest()?;
        if m.matrix.hash != hash {
            bail!(
                "{} changed since run {} started (matrix hash {} then, {} now); resume needs the same matrix, or start a new run",
                matrix.path.display(),
                run.id(),
                crate::util::prefix(&m.matrix.hash, 12),
                crate::util::prefix(&hash, 12)
            );
        }
        if m.matrix.filter != opts.filter || m.matrix.shard != opts.shard {
            bail!(
                "run {} was started with --filter {:?} --shard {:?}; resume it with the same selection",
                run.id(),
                m.matrix.filter.clone().unwrap_or_default(),
                m.matrix.shard.clone().unwrap_or_default()
            );
        }
        // Plan again from the matrix (same bytes, same selection) rather
        // than trusting the stored copy, and check the two agree.
        let ids = |p: &Plan| p.cells.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        if ids(plan) != ids(&m.plan) {
            bail!(
                "run {} planned other cells than {} gives now; start a new run",
                run.id(),
                matrix.path.display()
            );
        }
        return Ok((run, m, plan.clone()));
    }
    let run = RunDir::create(&opts.results_root, &matrix.name)?;
    let m = Manifest {
        schema_version: crate::results::MANIFEST_SCHEMA,
        lab_version: crate::results::LAB_VERSION.to_string(),
        run_id: run.id(),
        created: crate::util::now_rfc3339(),
        matrix: MatrixInfo::of(matrix, opts.filter.clone(), opts.shard.clone()),
        plan: plan.clone(),
        host: crate::results::host::HostInfo::read(),
        kernels: BTreeMap::new(),
        images: BTreeMap::new(),
        boots: vec![],
        claim_sources: vec![],
    };
    run.write_manifest(&m)?;
    Ok((run, m, plan.clone()))
}

async fn prepare(
    cache: &Cache,
    matrix: &Matrix,
    plan: &Plan,
    opts: &RunOptions,
    events: &Events,
    manifest: &mut Manifest,
) -> Result<Prepared> {
    // Images build beside the kernels: neither needs the other, and on a
    // fresh machine mmdebstrap's downloads would otherwise wait for make.
    let arches: BTreeSet<Arch> = plan.boots.iter().map(|b| b.arch).collect();
    let images: Vec<_> = arches
        .iter()
        .map(|&arch| (arch, spawn_image(cache, matrix, plan, arch, events)))
        .collect();
    // Kernels before any boot: a patch that does not apply stops the run.
    let bopts = BuildOptions {
        mails: opts.mails.clone(),
        jobs: crate::util::ncpus(),
    };
    let (built, failed) = {
        let (c, m, k, e) = (
            cache.clone(),
            matrix.clone(),
            plan.kernels.clone(),
            events.clone(),
        );
        tokio::task::spawn_blocking(move || crate::kernel::build_all(&c, &m, &k, &bopts, &e))
            .await?
    };
    let mut built_images = BTreeMap::new();
    let mut image_error = None;
    for (arch, task) in images {
        match task.await? {
            Ok(img) => {
                built_images.insert(arch, img);
            }
            Err(e) => {
                image_error.get_or_insert(e.context(format!("guest image {arch}")));
            }
        }
    }
    crate::interrupt::check()?;
    if let Some((id, e)) = failed.into_iter().next() {
        return Err(e.context(format!("kernel {id}")));
    }
    if let Some(e) = image_error {
        return Err(e);
    }
    let kernels: BTreeMap<String, KernelBuild> =
        built.into_iter().map(|b| (b.kernel.clone(), b)).collect();
    manifest.kernels = kernels.clone();

    let keys = boot::instance_keys(cache)?;
    let mut initrd = BTreeMap::new();
    let mut accel = BTreeMap::new();
    for (arch, img) in built_images {
        manifest.images.insert(
            arch.to_string(),
            ImageInfo {
                arch: arch.to_string(),
                sha256: img.sha256.clone(),
                key: img.key.0.clone(),
                packages: img.packages.clone(),
            },
        );
        initrd.insert(arch, boot::initrd(cache, &img.path, &keys)?);
        let kernel = plan
            .boots
            .iter()
            .find(|b| b.arch == arch)
            .and_then(|b| kernels.get(&b.kernel))
            .context("a kernel for the arch")?;
        let choice = crate::vm::accel::choose(arch, opts.accel, &kernel.image, cache).await?;
        events.note(format!(
            "{arch}: accelerator {} ({})",
            choice.accel, choice.reason
        ));
        if choice.accel == crate::vm::Accel::Tcg && opts.accel.is_none() {
            eprintln!(
                "warning: {arch} guests run under TCG ({}): slow, and its latencies are not \
                 hardware latencies (every report names the accelerator); a runner with KVM \
                 sets LAB_ACCEL=kvm to make this an error",
                choice.reason
            );
        }
        accel.insert(arch, choice);
    }
    Ok(Prepared {
        kernels,
        initrd,
        accel,
        keys,
    })
}

/// The arch's guest image, built on a blocking thread. `image: {extras}`
/// (or `perf:`) is a separate cached image, and a cell naming an
/// ioengine whose library is stubbed gets the real one back.
fn spawn_image(
    cache: &Cache,
    matrix: &Matrix,
    plan: &Plan,
    arch: Arch,
    events: &Events,
) -> tokio::task::JoinHandle<Result<crate::image::ImageBuild>> {
    let (c, e) = (cache.clone(), events.clone());
    let extras = matrix.image_extras.clone();
    let engines: BTreeSet<String> = plan
        .cells
        .iter()
        .filter_map(|c| c.workload.as_ref())
        .flat_map(crate::bench::fio::engines)
        .collect();
    tokio::task::spawn_blocking(move || {
        let names: Vec<&str> = extras.iter().map(String::as_str).collect();
        let engines: Vec<String> = engines.into_iter().collect();
        let recipe = crate::image::recipe::default_recipe()
            .with_extras(&names)?
            .for_engines(&engines);
        crate::image::build_recipe(&c, arch, &recipe, false, &e)
    })
}

struct BootCtx<'a, P: Fn(&str, u32) -> bool> {
    run: &'a RunDir,
    plan: &'a Plan,
    matrix: &'a Matrix,
    opts: &'a RunOptions,
    prepared: &'a Prepared,
    events: &'a Events,
    counter: &'a Mutex<u64>,
    manifest: &'a Mutex<Manifest>,
    pending: &'a P,
}

impl<P: Fn(&str, u32) -> bool> BootCtx<'_, P> {
    async fn run_boot(&self, s: &ScheduledBoot) -> Result<()> {
        if crate::interrupt::interrupted() {
            return Ok(());
        }
        let spec = self.plan.boot(&s.boot).context("scheduled boot in plan")?;
        let cells: Vec<_> = self
            .plan
            .cells_of_boot(&s.boot)
            .filter(|c| (self.pending)(&c.id, s.rep))
            .collect();
        let kernel = &self.prepared.kernels[&spec.kernel];
        let choice = &self.prepared.accel[&spec.arch];
        let cfg = BootConfig {
            arch: spec.arch,
            kernel: kernel.image.clone(),
            initrd: self.prepared.initrd[&spec.arch].clone(),
            cpus: spec.cpus,
            memory: spec.memory,
            accel: choice.accel,
            null_blk: spec.null_blk.clone(),
            nvme: spec.nvme.clone(),
            cmdline: spec.cmdline.clone(),
        };
        let dir = self.run.boot_dir(&s.boot, s.rep);
        let deadline = self
            .opts
            .ready_timeout
            .or(spec.ready_timeout.map(Duration::from_secs))
            .unwrap_or_else(|| boot::default_deadline(&cfg));
        let ev = format!("boot {} #{}", s.boot, s.rep);
        self.events.started(
            &ev,
            &format!("booting {} (rep {}, {})", s.boot, s.rep, cfg.accel),
            None,
        );
        let mut record = BootRecord {
            boot: s.boot.clone(),
            rep: s.rep,
            kernel: spec.kernel.clone(),
            variant: spec.variant.clone(),
            arch: spec.arch.to_string(),
            accel: cfg.accel,
            accel_reason: choice.reason.clone(),
            qemu_version: String::new(),
            qemu_command: vec![],
            console_log: dir
                .join("console.log")
                .strip_prefix(&self.run.path)
                .unwrap_or(&dir)
                .display()
                .to_string(),
            probes: None,
            ready_secs: None,
            started: crate::util::now_rfc3339_ms(),
            ending: None,
            error: None,
            clock_events: vec![],
        };
        let booted = boot::boot(&cfg, &dir, &self.prepared.keys, deadline)
            .await
            .and_then(|b| verify_boot(b, kernel));
        let mut booted = match booted {
            Ok(b) => b,
            Err(e) => {
                let msg = format!("{e:#}");
                self.events
                    .finished(&ev, false, false, 0.0, first_line(&msg));
                record.error = Some(msg.clone());
                self.fail_cells(&cells, s.rep, &format!("the boot failed: {msg}"))?;
                self.push_boot(record)?;
                return Ok(());
            }
        };
        record.qemu_version = booted.vm.qemu_version.clone();
        record.qemu_command = booted.vm.command.clone();
        record.ready_secs = Some(booted.ready_secs);
        self.events.finished(
            &ev,
            true,
            false,
            booted.ready_secs,
            format!(
                "ready; clocksource {} of [{}], HZ {}",
                booted.probes.clocksource,
                booted.probes.available_clocksources.join(" "),
                booted
                    .probes
                    .hz_config
                    .map(|h| h.to_string())
                    .unwrap_or("?".into())
            ),
        );
        let mut dead: Option<String> = None;
        for c in &cells {
            if let Some(why) = &dead {
                self.fail_cells(std::slice::from_ref(c), s.rep, why)?;
                continue;
            }
            if crate::interrupt::interrupted() {
                break;
            }
            let out = self.run_cell(&mut booted, c, s.rep).await;
            self.run.write_cell(&out.record)?;
            self.run.write_records()?;
            let n = {
                let mut g = self.counter.lock().unwrap();
                *g += 1;
                *g
            };
            self.events
                .count("cells", &summary(&out.record, &self.matrix.metrics), n);
            for f in &out.record.flags {
                self.events.warn(format!("{} rep {}: {f}", c.id, s.rep));
            }
            if out.boot_dead {
                dead = Some(format!(
                    "not run: the boot died during {}: {}",
                    c.id,
                    first_line(out.record.error.as_deref().unwrap_or(""))
                ));
            }
        }
        booted.vm.console.scan();
        record.clock_events = booted.vm.console.clock_lines.clone();
        // Taken after the cells: they fill in the fio version.
        record.probes = Some(booted.probes.clone());
        let ending = booted.shutdown().await;
        record.ending = Some(ending.how);
        self.push_boot(record)
    }

    /// One cell repetition; a timing cell measured on a contended host is
    /// run again once the host is quiet, up to the matrix's retries.
    async fn run_cell(
        &self,
        booted: &mut Booted,
        c: &crate::matrix::CellSpec,
        rep: u32,
    ) -> cell::Outcome {
        let policy = &self.matrix.contention;
        let th = Thresholds {
            psi_some_pct: policy.psi_some_pct,
            qemu_wait_pct: policy.qemu_wait_pct,
            others_cpu_pct: policy.others_cpu_pct,
        };
        let timing = self.matrix.timing;
        // With several VMs of our own the contention is ours: waiting for
        // a quiet host would never end, so such cells are only marked.
        let retries = if self.opts.jobs > 1 {
            0
        } else {
            policy.retries
        };
        let mut earlier = Vec::new();
        loop {
            let mut out = cell::run(
                booted,
                self.run,
                c,
                rep,
                &th,
                self.opts.cell_timeout,
                self.matrix.perf.as_ref(),
            )
            .await;
            let contended = out
                .record
                .contention
                .as_ref()
                .filter(|x| x.contended && timing && out.record.status == CellStatus::Done)
                .cloned();
            let Some(found) = contended else {
                out.record.contended_attempts = earlier;
                return out;
            };
            if out.boot_dead || earlier.len() as u32 >= retries || crate::interrupt::interrupted() {
                out.record.contended_attempts = earlier;
                return out;
            }
            let wait = Duration::from_secs(policy.quiet_wait_secs);
            let ev = format!("quiet {} #{rep}", c.id);
            self.events.started(
                &ev,
                &format!(
                    "{} rep {rep}: contended ({}); waiting up to {} s for a quiet host, then attempt {} of {}",
                    c.id,
                    found.figures(),
                    wait.as_secs(),
                    earlier.len() + 2,
                    retries + 1
                ),
                None,
            );
            let below = policy.psi_some_pct;
            let (psi, quiet) =
                tokio::task::spawn_blocking(move || crate::host::pressure::wait_quiet(below, wait))
                    .await
                    .unwrap_or((None, false));
            self.events.finished(
                &ev,
                quiet,
                false,
                0.0,
                match (quiet, psi) {
                    (true, Some(p)) => format!("host quiet (CPU pressure {p:.1}%)"),
                    (true, None) => "no CPU pressure counter; re-running".to_string(),
                    (false, p) => format!(
                        "host still busy (CPU pressure {}); re-running anyway",
                        p.map_or("?".into(), |p| format!("{p:.0}%"))
                    ),
                },
            );
            earlier.push(found);
        }
    }

    fn fail_cells(&self, cells: &[&crate::matrix::CellSpec], rep: u32, why: &str) -> Result<()> {
        for c in cells {
            let mut r = cell::blank_record(c, rep);
            r.status = CellStatus::Failed;
            r.error = Some(why.to_string());
            self.run.write_cell(&r)?;
            self.events
                .warn(format!("{} rep {rep}: {}", c.id, first_line(why)));
        }
        Ok(())
    }

    fn push_boot(&self, r: BootRecord) -> Result<()> {
        let mut m = self.manifest.lock().unwrap();
        m.boots.retain(|b| !(b.boot == r.boot && b.rep == r.rep));
        m.boots.push(r);
        self.run.write_manifest(&m)
    }
}

/// The guest must run the kernel lab built: same build id, same HZ.
fn verify_boot(b: Booted, k: &KernelBuild) -> Result<Booted> {
    check_probes(&b.probes, &k.kernel, k.build_id.as_deref(), k.hz)?;
    Ok(b)
}

/// What the guest said about itself against what lab built: the build
/// id, the HZ its config says and the HZ its jiffies ran at.
fn check_probes(
    p: &crate::guest::probe::Probes,
    kernel: &str,
    build_id: Option<&str>,
    hz: Option<u32>,
) -> Result<()> {
    if let (Some(want), Some(got)) = (build_id, &p.build_id)
        && want != got
    {
        bail!("the guest runs build id {got}, but lab built {want} for {kernel}");
    }
    if let (Some(want), Some(got)) = (hz, p.hz_config)
        && want != got
    {
        bail!("the guest reports CONFIG_HZ={got}, but {kernel} was built with HZ={want}");
    }
    if let (Some(want), Some(got)) = (hz, p.hz_measured)
        && want != got
    {
        bail!("the guest's jiffies advanced at {got} Hz, but {kernel} was built with HZ={want}");
    }
    Ok(())
}

fn summary(r: &crate::results::CellRecord, shown: &[String]) -> String {
    // What the kernel did with each knob, e.g. "io_poll_delay=10 honoured".
    let knobs: String = r
        .knobs
        .iter()
        .map(|k| {
            let name = k.path.rsplit('/').next().unwrap_or(&k.path);
            format!("; {name}={} {}", k.wanted, k.status.word())
        })
        .collect();
    summary_line(r, shown) + &knobs
}

/// A cell's line in the progress: the matrix's first metric it has (a
/// job that measures no latency has a zero `lat_mean`), else a mean
/// latency, else its first metric.
fn summary_line(r: &crate::results::CellRecord, shown: &[String]) -> String {
    match r.status {
        CellStatus::Done => {
            let m = shown
                .iter()
                .find_map(|s| r.metrics.iter().find(|m| &m.name == s))
                .or_else(|| r.metrics.iter().find(|m| m.name.ends_with("lat_mean")))
                .or(r.metrics.first());
            match m {
                Some(m) if m.unit == "ns" => format!(
                    "{} rep {}: {} {:.3} ms",
                    r.cell,
                    r.rep,
                    m.name,
                    m.value / 1e6
                ),
                Some(m) => format!(
                    "{} rep {}: {} {:.1} {}",
                    r.cell, r.rep, m.name, m.value, m.unit
                ),
                None => format!("{} rep {}: done", r.cell, r.rep),
            }
        }
        _ => format!(
            "{} rep {}: {}",
            r.cell,
            r.rep,
            first_line(r.error.as_deref().unwrap_or("failed"))
        ),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guest_whose_ticks_ran_at_another_hz_is_refused() {
        let mut p = crate::guest::probe::Probes {
            build_id: Some("ab".into()),
            hz_config: Some(100),
            hz_measured: Some(100),
            ..Default::default()
        };
        assert!(check_probes(&p, "k", Some("ab"), Some(100)).is_ok());
        p.hz_measured = Some(250);
        let e = check_probes(&p, "k", Some("ab"), Some(100)).unwrap_err();
        assert!(e.to_string().contains("jiffies advanced at 250 Hz"), "{e}");
        p.hz_measured = None;
        assert!(check_probes(&p, "k", Some("ab"), Some(100)).is_ok());
        let e = check_probes(&p, "k", Some("cd"), Some(100)).unwrap_err();
        assert!(e.to_string().contains("build id ab"), "{e}");
    }
}

#[cfg(test)]
mod progress_tests {
    use super::summary_line;
    use crate::bench::Metric;

    /// The progress line shows the matrix's own first metric when the
    /// cell has it: a fio job with gtod_reduce measures no latency, and
    /// its zero lat_mean said nothing.
    #[test]
    fn the_progress_line_shows_the_matrixs_first_metric() {
        let r: crate::results::CellRecord = serde_json::from_value(serde_json::json!({
            "cell": "x86_64-before:dev=null_blk", "rep": 1, "boot": "b", "kernel": "k",
            "variant": "before", "arch": "x86_64", "axes": {}, "status": "done",
            "error": null, "started": "", "secs": 1.0, "host_load": [0.0, 0.0, 0.0],
            "host_cores": 2, "clocksource_before": "tsc", "clocksource_after": "tsc",
            "knobs": [], "steps": [], "metrics": [], "fio_json": null, "flags": [],
            "perf": [], "guest_secs": null
        }))
        .unwrap();
        let mut r = r;
        r.metrics = vec![
            Metric::new("read.lat_mean", 0.0, "ns"),
            Metric::new("read.iops", 72047.0, "IOPS"),
        ];
        let shown = ["read.iops".to_string(), "cpu.sys".to_string()];
        assert_eq!(
            summary_line(&r, &shown),
            "x86_64-before:dev=null_blk rep 1: read.iops 72047.0 IOPS"
        );
        assert_eq!(
            summary_line(&r, &[]),
            "x86_64-before:dev=null_blk rep 1: read.lat_mean 0.000 ms"
        );
    }
}
