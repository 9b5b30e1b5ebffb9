//! `lab plan`: what a matrix will build, boot and measure.

use super::MatrixArgs;
use anyhow::Result;
use comfy_table::{Table, presets::ASCII_MARKDOWN};

/// Bumped when `lab plan --format json` changes shape.
pub const PLAN_SCHEMA_VERSION: u32 = 1;

/// The plan as JSON, with its schema version first.
#[derive(serde::Serialize)]
struct PlanDoc<'a> {
    schema_version: u32,
    #[serde(flatten)]
    plan: &'a crate::matrix::Plan,
}

/// `lab plan --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    Text,
    Json,
    /// The shards as a GitHub Actions matrix (with --shards).
    GithubMatrix,
}

pub fn plan(m: &MatrixArgs, format: PlanFormat, shards: Option<usize>) -> Result<i32> {
    let (matrix, plan) = super::load_plan(m)?;
    if shards.is_some() && format == PlanFormat::Text {
        return Err(crate::error::input_error(
            "--shards goes with --format github-matrix or json",
        ));
    }
    if let Some(n) = shards {
        let sh = crate::matrix::shard::shard(&plan, n);
        match format {
            PlanFormat::GithubMatrix => {
                crate::outln!("{}", crate::matrix::shard::github_matrix(&sh))?
            }
            _ => crate::outln!("{}", serde_json::to_string_pretty(&sh)?)?,
        }
        return Ok(0);
    }
    match format {
        PlanFormat::Json => {
            let doc = PlanDoc {
                schema_version: PLAN_SCHEMA_VERSION,
                plan: &plan,
            };
            crate::outln!("{}", serde_json::to_string_pretty(&doc)?)?
        }
        PlanFormat::Text => print_text(&matrix, &plan)?,
        PlanFormat::GithubMatrix => {
            return Err(crate::error::input_error(
                "--format github-matrix goes with --shards N",
            ));
        }
    }
    Ok(0)
}

fn print_text(matrix: &crate::matrix::Matrix, plan: &crate::matrix::Plan) -> Result<()> {
    crate::outln!("matrix {} ({})", matrix.name, matrix.path.display())?;
    crate::outln!()?;
    crate::outln!("{} kernels:", plan.kernels.len())?;
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).set_header([
        "kernel",
        "arch",
        "variant",
        "source",
        "fragments",
        "built from",
    ]);
    for k in &plan.kernels {
        t.add_row([
            k.id.clone(),
            k.arch.to_string(),
            k.variant.clone(),
            k.source.as_ref().unwrap_or(&matrix.source).label(),
            k.fragments
                .iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            k.base_kernel.clone().unwrap_or_else(|| "-".into()),
        ]);
    }
    crate::outln!("{t}\n")?;
    crate::outln!(
        "{} boots, {} repetition(s) each:",
        plan.boots.len(),
        plan.repetitions
    )?;
    for b in &plan.boots {
        crate::outln!(
            "  {}  cpus={} mem={}M {}",
            b.id,
            b.cpus,
            b.memory,
            b.cmdline
        )?;
    }
    crate::outln!()?;
    if plan.excluded.is_empty() {
        crate::outln!("{} cells:", plan.cells.len())?;
    } else {
        crate::outln!(
            "{} cells ({} before exclude/only, {} excluded):",
            plan.cells.len(),
            plan.cells_before(),
            plan.excluded.len()
        )?;
    }
    for c in &plan.cells {
        crate::outln!("  {}", c.id)?;
    }
    Ok(())
}
