//! `lab run`: the main job.

use super::MatrixArgs;
use crate::run::{RunOptions, run};
use crate::vm::Accel;
use anyhow::Result;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Clone, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    pub m: MatrixArgs,
    /// Where run directories go.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Continue an earlier run (its id or directory): only missing cells run.
    #[arg(long)]
    pub resume: Option<String>,
    /// With --resume, run the failed cells again too.
    #[arg(long, requires = "resume")]
    pub rerun_failed: bool,
    /// VMs at once (1 to 64). More than one shares cores between timing cells.
    #[arg(long, short = 'j', default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// Force the accelerator instead of probing. A CI runner with KVM
    /// sets LAB_ACCEL=kvm, so a KVM that stopped working fails the job
    /// instead of running TCG for hours.
    #[arg(long, env = "LAB_ACCEL", value_parser = parse_accel_or_probe)]
    pub accel: Option<AccelArg>,
    /// Run shard i of N (whole kernels per shard): e.g. 2/4.
    #[arg(long)]
    pub shard: Option<String>,
    /// Seconds from launch to SSH before a boot fails (1 to 86400).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub ready_timeout: Option<u64>,
    /// A mail whose tables claims read (mbox, mail, commit message or
    /// text), besides the patch mails; repeatable.
    #[arg(long = "claims")]
    pub claims: Vec<PathBuf>,
    /// When the run ends, done or failed, write the kernel and image
    /// entries it used to this archive (as `lab cache export`): the CI
    /// hand-over to the next night, without a step that must run after
    /// a failing one.
    #[arg(long)]
    pub export_cache: Option<PathBuf>,
    /// Seconds one cell may take before it fails and its boot is ended
    /// (1 to 604800).
    #[arg(long, default_value_t = 900,
          value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub cell_timeout: u64,
}

/// `--accel`/`LAB_ACCEL` for `lab run`: kvm, tcg, or empty (or `probe`)
/// for lab's own probe, so a CI file can pass an unset variable.
#[derive(Clone, Copy, Debug)]
pub struct AccelArg(pub Option<Accel>);

pub fn parse_accel_or_probe(s: &str) -> Result<AccelArg, String> {
    match s {
        "" | "probe" => Ok(AccelArg(None)),
        _ => parse_accel(s)
            .map(|a| AccelArg(Some(a)))
            .map_err(|e| format!("{e}, or probe")),
    }
}

pub fn parse_accel(s: &str) -> Result<Accel, String> {
    match s {
        "kvm" => Ok(Accel::Kvm),
        "tcg" => Ok(Accel::Tcg),
        _ => Err(format!("'{s}': use kvm or tcg")),
    }
}

/// Everything the user gave that can be checked before a kernel is
/// built: a mistake found after a 20-minute build is a mistake found late.
fn check_args(a: &RunArgs) -> Result<()> {
    use crate::error::input_error;
    for c in &a.claims {
        crate::util::read_input(c, "--claims", crate::util::MAX_MAIL_INPUT)?;
    }
    if let Ok(m) = std::fs::metadata(&a.results)
        && !m.is_dir()
    {
        return Err(input_error(format!(
            "--results {}: exists and is not a directory",
            a.results.display()
        )));
    }
    if let Some(r) = &a.resume {
        crate::results::RunDir::open(&a.results, r)
            .map_err(|e| input_error(format!("--resume: {e:#}")))?;
    }
    Ok(())
}

pub fn run_cmd(a: &RunArgs) -> Result<i32> {
    check_args(a)?;
    let (matrix, plan) = super::load_plan(&a.m)?;
    let plan = match &a.shard {
        Some(s) => super::shard_plan(&plan, s)?,
        None => plan,
    };
    let cache = crate::cache::Cache::open_default()?;
    let timeline = crate::events::Timeline::default();
    let events = timeline.attach(super::ui::attach(crate::events::Events::silent()));
    let start = std::time::Instant::now();
    let opts = RunOptions {
        results_root: a.results.clone(),
        resume: a.resume.clone(),
        rerun_failed: a.rerun_failed,
        jobs: a.jobs as usize,
        accel: a.accel.and_then(|x| x.0),
        mails: a.m.mail.clone(),
        claim_mails: a.claims.clone(),
        filter: a.m.filter.clone(),
        shard: a.shard.clone(),
        ready_timeout: a.ready_timeout.map(Duration::from_secs),
        cell_timeout: Duration::from_secs(a.cell_timeout),
    };
    if let Some(f) = &a.export_cache {
        crate::cache::transfer::compression_flag(f).map_err(crate::error::input)?;
    }
    let rt = tokio::runtime::Runtime::new()?;
    let result = rt.block_on(run(&cache, &matrix, &plan, &opts, &events));
    if let Some(f) = &a.export_cache {
        export_used(&cache, f, result.as_ref().ok());
    }
    let dir = result?;
    let kernels: Vec<String> = plan.kernels.iter().map(|k| k.id.clone()).collect();
    eprintln!("{}", timeline.line(&kernels, start.elapsed().as_secs_f64()));
    super::finish_run(&dir)
}

/// `--export-cache`: the kernels and images of the run's manifest, or
/// every kernel and image entry when the run left no manifest. A failed
/// export is a warning: the run's own result decides the exit code.
fn export_used(
    cache: &crate::cache::Cache,
    file: &std::path::Path,
    dir: Option<&crate::results::RunDir>,
) {
    let keys: Vec<String> = dir
        .and_then(|d| d.read_manifest().ok())
        .map(|m| {
            m.kernels
                .values()
                .map(|k| k.key.0.clone())
                .chain(m.images.values().map(|i| i.key.clone()))
                .collect()
        })
        .unwrap_or_default();
    let kinds = ["kernel".to_string(), "image".to_string()];
    match crate::cache::transfer::export_from(cache, file, &kinds, &keys) {
        Ok(idx) => eprintln!(
            "exported {} cache entries and {} pointers to {}",
            idx.entries.len(),
            idx.pointers.len(),
            file.display()
        ),
        Err(e) => eprintln!(
            "warning: --export-cache {}: {}",
            file.display(),
            crate::cli::printable(&format!("{e:#}"))
        ),
    }
}
