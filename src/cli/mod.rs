//! The command line: parse arguments, call the pipeline, set the exit code.

mod build_cmd;
mod plan_cmd;
pub mod ui;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "lab",
    version,
    about = "Reproduce block-layer and device-mapper patch claims in QEMU"
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
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Print the kernels, boots and cells a matrix expands to. No side effects.
    Plan {
        #[command(flatten)]
        m: MatrixArgs,
        /// text, json, or github-matrix (with --shards)
        #[arg(long, default_value = "text")]
        format: String,
        /// Split the kernels into N shards of about equal cost.
        #[arg(long)]
        shards: Option<usize>,
    },
    /// Build every kernel of the (filtered) matrix; cached builds are reused.
    Build {
        #[command(flatten)]
        m: MatrixArgs,
        /// Parallel make jobs (default: the number of cores).
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
    },
}

pub fn main() -> i32 {
    let cli = Cli::parse();
    crate::host::interrupt::install();
    match run(cli) {
        Ok(code) => code,
        Err(e) if e.is::<crate::host::interrupt::Interrupted>() => {
            eprintln!(
                "interrupted: nothing half-written was kept; run the same command again to continue"
            );
            130
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}

fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Plan { m, format, shards } => plan_cmd::plan(&m, &format, shards),
        Cmd::Build { m, jobs } => build_cmd::build(&m, jobs),
    }
}

/// Load a matrix and apply `--filter`.
pub fn load_plan(m: &MatrixArgs) -> Result<(crate::matrix::Matrix, crate::matrix::Plan)> {
    let matrix = crate::matrix::Matrix::load(&m.file)?;
    let plan = matrix.plan()?;
    let plan = match &m.filter {
        Some(f) => {
            let f = crate::matrix::Filter::parse(f)?;
            f.check(&matrix, &plan)?;
            f.apply(&plan)
        }
        None => plan,
    };
    Ok((matrix, plan))
}
