//! The command line: parse arguments, call the pipeline, set the exit code.

mod boot_cmd;
mod build_cmd;
mod cache_cmd;
mod claims_cmd;
mod doctor_cmd;
mod image_cmd;
mod new_cmd;
mod plan_cmd;
mod run_cmd;
pub mod ui;
mod watch_cmd;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "lab",
    version,
    about = "Reproduce block-layer and device-mapper patch claims in QEMU",
    after_help = crate::error::EXIT_CODES_HELP
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// Options every command that reads a matrix shares.
#[derive(clap::Args, Clone, Debug)]
pub struct MatrixArgs {
    /// The matrix file, e.g. matrices/dm-delay.yaml
    pub file: PathBuf,
    /// Select a slice: axis=value pairs, comma separated (arch=x86_64,hz=100).
    #[arg(long, short = 'f')]
    pub filter: Option<String>,
    /// A patch mail (mbox or single mail) to use for a variant's message-id.
    #[arg(long)]
    pub mail: Vec<PathBuf>,
    /// Refuse a plan with more cells than this.
    #[arg(long, default_value_t = crate::matrix::limits::DEFAULT_MAX_CELLS)]
    pub max_cells: usize,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Print the kernels, boots and cells a matrix expands to. No side effects.
    Plan {
        #[command(flatten)]
        m: MatrixArgs,
        /// github-matrix goes with --shards.
        #[arg(long, value_enum, default_value_t = plan_cmd::PlanFormat::Text)]
        format: plan_cmd::PlanFormat,
        /// Split the kernels into N shards of about equal cost (1 to 1000).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1000))]
        shards: Option<u64>,
    },
    /// Draft a matrix from a patch mail: variants, kernel, setup, fio
    /// workloads and claims, with comments for what it inferred.
    New(Box<new_cmd::NewArgs>),
    /// Build every kernel of the (filtered) matrix; cached builds are reused.
    Build {
        #[command(flatten)]
        m: MatrixArgs,
        /// Parallel make jobs (default: the number of cores; 1 to 1024).
        #[arg(long, short = 'j', value_parser = clap::value_parser!(u16).range(1..=1024))]
        jobs: Option<u16>,
    },
    /// Build, boot and measure everything in the matrix; write results/<run-id>/.
    Run(Box<run_cmd::RunArgs>),
    /// Boot one kernel, run a command over SSH, end the guest.
    Boot(Box<boot_cmd::BootArgs>),
    /// Guest images.
    #[command(subcommand)]
    Image(ImageCmd),
    /// Report on a stored run: statistics, claims, verdicts. Exit 1 on a
    /// regression or unmet claim, 2 on an incomplete run.
    Report {
        /// A run id under --results, or a run directory.
        run: String,
        /// Comma list of text, md, html, json, junit, reply.
        #[arg(long, default_value = "text", value_delimiter = ',', value_parser = report_format)]
        format: Vec<crate::report::Format>,
        /// Where files go (default: the run directory).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Compare the same cells across two runs (the first is the baseline).
    Compare {
        a: String,
        b: String,
        /// Comma list of text, md, html, json, junit, reply.
        #[arg(long, default_value = "text", value_delimiter = ',', value_parser = report_format)]
        format: Vec<crate::report::Format>,
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
    /// Claims: the numeric tables of patch mails.
    #[command(subcommand)]
    Claims(ClaimsCmd),
    /// Combine the run directories of a sharded run into one.
    Merge {
        /// Run directories, or directories holding runs.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Follow a mailing list: draft, check, run and reply to each new
    /// patch mail with numbers. Replies go to an outbox; nothing is sent.
    Watch(Box<watch_cmd::WatchArgs>),
    /// Check the host: tools, packages, KVM, disk. --install fixes what apt can.
    Doctor {
        #[arg(long)]
        install: bool,
        /// Boot a kernel from the cache to see whether KVM works (writes
        /// a probe entry into the cache). Without it, doctor only reads.
        #[arg(long)]
        probe_kvm: bool,
    },
    /// The build cache (LAB_CACHE, default ~/.cache/lab).
    #[command(subcommand)]
    Cache(CacheCmd),
}

#[derive(Subcommand)]
pub enum ImageCmd {
    /// Build (or verify) the guest initramfs; the same inputs give the same sha256.
    Build {
        #[arg(long, value_parser = arch)]
        arch: Option<crate::matrix::Arch>,
        /// An image recipe (default: the built-in images/lab.yaml).
        #[arg(long)]
        recipe: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum ClaimsCmd {
    /// Print the claims of a mail, mbox thread, patch or text file.
    Extract {
        mail: PathBuf,
        /// yaml (reads back as claims), json or text (re-aligned tables).
        #[arg(long, default_value = "yaml", value_parser = claims_format)]
        format: crate::mail::claims::render::Format,
    },
    /// Show what every claimed value of a matrix binds to; builds and
    /// boots nothing. Exit 1 when a value binds to no cell.
    Check {
        #[command(flatten)]
        m: MatrixArgs,
        /// A mail whose tables claims read; repeatable.
        #[arg(long = "claims")]
        claims: Vec<PathBuf>,
    },
}

#[derive(Subcommand)]
pub enum CacheCmd {
    /// List cache entries.
    Ls,
    /// Remove old entries.
    Gc {
        /// Keep the N newest entries of each kind.
        #[arg(long)]
        keep: Option<usize>,
        /// Shrink the cache to this size (e.g. 20G): least recently used
        /// build roots first, then the oldest entries.
        #[arg(long)]
        max_size: Option<String>,
        /// Remove the build roots (work trees that make a new variant's
        /// build incremental); the kernels built in them stay cached.
        #[arg(long)]
        build_roots: bool,
    },
    /// Write entries to a tarball (.tar, .tar.gz, .tar.zst) for another machine or CI job.
    Export {
        file: PathBuf,
        /// Only entries of this kind (kernel, image, …); repeatable.
        #[arg(long)]
        kind: Vec<String>,
        /// Only these keys (prefixes are enough).
        keys: Vec<String>,
    },
    /// Add the entries of an exported tarball.
    Import {
        file: PathBuf,
        /// A missing archive is no error (a CI job's first night).
        #[arg(long)]
        missing_ok: bool,
    },
}

/// Print a line to stdout, returning the error (a closed pipe) instead
/// of panicking as `println!` does; `main` turns a closed pipe into 0.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `outln!` without the newline.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `--format` of report and compare: the names and aliases
/// `report::Format` reads (md, txt, xml ...).
fn report_format(s: &str) -> Result<crate::report::Format, String> {
    crate::report::Format::parse(s).map_err(|e| e.to_string())
}

/// `--format` of `claims extract`.
fn claims_format(s: &str) -> Result<crate::mail::claims::render::Format, String> {
    crate::mail::claims::render::Format::parse(s).map_err(|e| e.to_string())
}

/// `--arch`: the names of the arch table (x86_64, amd64, arm64, aarch64).
fn arch(s: &str) -> Result<crate::matrix::Arch, String> {
    crate::matrix::Arch::parse(s).ok_or_else(|| format!("use {}", crate::matrix::Arch::known("or")))
}

pub fn main() -> i32 {
    use crate::error::{Kind, classify, exit, is_broken_pipe};
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Usage errors exit 3; --help and --version are fine.
            let code = if e.use_stderr() {
                exit::INPUT
            } else {
                exit::OK
            };
            let _ = e.print();
            return code;
        }
    };
    crate::interrupt::install(interrupt_mode(&cli.cmd));
    match run(cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => exit::OK,
        Err(_) if crate::interrupt::interrupted() => {
            // The error is what the interrupt caused (a temp file removed
            // under a writer); the watcher exits with 130.
            crate::interrupt::settle();
            eprintln!("{}", crate::interrupt::MESSAGE);
            exit::INTERRUPTED
        }
        Err(e) => match classify(&e) {
            Kind::Interrupted => {
                eprintln!("{}", crate::interrupt::MESSAGE);
                exit::INTERRUPTED
            }
            kind => {
                eprintln!("error: {}", printable(&format!("{e:#}")));
                kind.exit_code()
            }
        },
    }
}

/// An error or warning as printed: control bytes from inputs escaped
/// (newlines kept), and at most 4,000 characters, so a message that
/// quotes a hostile input can neither drive the terminal nor flood it.
/// Rust's " (os error N)" suffix is left out: the words before it say it.
pub fn printable(msg: &str) -> String {
    static OS_ERROR: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r" \(os error \d+\)").expect("a regex"));
    let msg = OS_ERROR.replace_all(msg, "");
    let safe = crate::util::escape_controls_keep_lines(&msg);
    crate::util::clip(&safe, 4000).into_owned()
}

/// Commands that own children and finished work (`run`, `build`,
/// `boot`) wind down themselves; every other command stops at once.
fn interrupt_mode(cmd: &Cmd) -> crate::interrupt::Mode {
    match cmd {
        Cmd::Run(_) | Cmd::Build { .. } | Cmd::Boot(_) | Cmd::Watch(_) => {
            crate::interrupt::Mode::Cooperative
        }
        _ => crate::interrupt::Mode::Immediate,
    }
}

fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Plan { m, format, shards } => plan_cmd::plan(&m, format, shards.map(|n| n as usize)),
        Cmd::New(a) => new_cmd::new(&a),
        Cmd::Build { m, jobs } => build_cmd::build(&m, jobs.map(usize::from)),
        Cmd::Run(a) => run_cmd::run_cmd(&a),
        Cmd::Watch(a) => watch_cmd::watch_cmd(&a),
        Cmd::Boot(a) => boot_cmd::boot_cmd(&a),
        Cmd::Image(ImageCmd::Build { arch, recipe }) => image_cmd::build(arch, recipe),
        Cmd::Report {
            run,
            format,
            out,
            results,
        } => crate::report::cmd::report(
            &run,
            &results,
            &format,
            out.as_deref(),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Compare {
            a,
            b,
            format,
            out,
            results,
        } => crate::report::cmd::compare(
            &a,
            &b,
            &results,
            &format,
            out.as_deref(),
            &mut std::io::stdout().lock(),
        ),
        Cmd::Claims(ClaimsCmd::Extract { mail, format }) => {
            claims_cmd::extract(&mail, format, &mut std::io::stdout().lock())
        }
        Cmd::Claims(ClaimsCmd::Check { m, claims }) => {
            let (matrix, plan) = load_plan(&m)?;
            crate::report::claim_bind::check(
                &matrix,
                &plan,
                &m.mail,
                &claims,
                &mut std::io::stdout().lock(),
            )
        }
        Cmd::Merge { dirs, out } => {
            let run = crate::results::merge::merge(&dirs, &out)?;
            crate::outln!("merged {} run(s) into {}", dirs.len(), run.path.display())?;
            Ok(0)
        }
        Cmd::Doctor { install, probe_kvm } => doctor_cmd::doctor(install, probe_kvm),
        Cmd::Cache(c) => match c {
            CacheCmd::Ls => cache_cmd::ls(),
            CacheCmd::Gc {
                keep,
                max_size,
                build_roots,
            } => cache_cmd::gc(keep, max_size.as_deref(), build_roots),
            CacheCmd::Export { file, kind, keys } => cache_cmd::export(&file, &kind, &keys),
            CacheCmd::Import { file, missing_ok } => cache_cmd::import(&file, missing_ok),
        },
    }
}

/// Load a matrix and apply `--filter`. Every error here is the user's
/// input: the matrix, its fragments and patches, `--filter`, `--mail`.
pub fn load_plan(m: &MatrixArgs) -> Result<(crate::matrix::Matrix, crate::matrix::Plan)> {
    load_plan_inner(m).map_err(crate::error::input)
}

fn load_plan_inner(m: &MatrixArgs) -> Result<(crate::matrix::Matrix, crate::matrix::Plan)> {
    for mail in &m.mail {
        if !mail.is_file() {
            anyhow::bail!("--mail {}: no such file", mail.display());
        }
    }
    let matrix = crate::matrix::Matrix::load_limited(&m.file, m.max_cells)?;
    let plan = matrix.plan()?;
    let plan = match &m.filter {
        Some(f) => {
            let f = crate::matrix::Filter::parse(f)?;
            f.check(&matrix, &plan)?;
            f.apply(&plan)
        }
        None => plan,
    };
    if let Some(w) = crate::matrix::limits::warning(&plan) {
        eprintln!("warning: {}", printable(&w.to_string()));
    }
    Ok((matrix, plan))
}

/// Narrow a plan to one shard (`i/N`).
pub fn shard_plan(plan: &crate::matrix::Plan, shard: &str) -> Result<crate::matrix::Plan> {
    let (i, n) = crate::matrix::shard::parse_shard_arg(shard).map_err(crate::error::input)?;
    Ok(crate::matrix::shard::select(plan, i, n))
}

/// What `lab run` prints when it ends: the before/after tables, and the
/// report's exit code (2 when cells are missing).
pub fn finish_run(dir: &crate::results::RunDir) -> Result<i32> {
    crate::report::write_markdown(dir)?;
    let manifest = dir.read_manifest()?;
    let cells = dir.cells()?;
    let report = crate::report::build(&manifest, &cells, &dir.path);
    println!("{}", crate::report::text_summary(&report));
    println!(
        "results: {}  (lab report {} --format text|md|html|json|junit)",
        dir.path.display(),
        dir.id()
    );
    Ok(crate::report::exit_code(&report))
}
