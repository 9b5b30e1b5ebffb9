//! How big a plan may get. The count is taken from the axes before the
//! expansion, so `repetitions: 1000000000` or six axes of twenty values
//! are refused in microseconds instead of aborting on a failed
//! allocation after half a minute.

use super::Matrix;
use anyhow::{Result, bail};

/// Cell runs (cells × repetitions) a plan may hold without `--max-cells`.
pub const DEFAULT_MAX_CELLS: usize = 100_000;

/// Above this many cell runs, planning warns with a wall-time estimate.
pub const WARN_CELLS: u128 = 1_000;

/// Each factor of the plan's size: a name and its number of values.
pub fn factors(m: &Matrix) -> Vec<(String, u128)> {
    let mut f = vec![("arch".to_string(), m.arches.len() as u128)];
    f.extend(
        m.kernel_axes
            .iter()
            .map(|a| (a.name.clone(), a.values.len() as u128)),
    );
    f.push(("variant".into(), m.variants.len() as u128));
    f.extend(
        m.boot_axes
            .iter()
            .chain(&m.run_axes)
            .map(|a| (a.name.clone(), a.values.len() as u128)),
    );
    f
}

/// Cells, and cell runs (cells × repetitions), saturating.
pub fn count(m: &Matrix) -> (u128, u128) {
    let cells = factors(m)
        .iter()
        .fold(1u128, |acc, (_, n)| acc.saturating_mul(*n));
    (cells, cells.saturating_mul(m.repetitions as u128))
}

/// Refuse a plan above `max` cell runs, naming the count and the axes.
pub fn check_size(m: &Matrix, max: usize) -> Result<()> {
    let (cells, runs) = count(m);
    if runs <= max as u128 {
        return Ok(());
    }
    let axes = factors(m)
        .iter()
        .filter(|(_, n)| *n > 1)
        .map(|(a, n)| format!("{a} ({n})"))
        .collect::<Vec<_>>()
        .join(" × ");
    bail!(
        "{}: the plan has {cells} cells × {} repetitions = {runs} cell runs, above the limit of {max}; \
         the axes behind it: {axes}. Use fewer axis values or repetitions (the limit holds before --filter), or raise --max-cells",
        m.path.display(),
        m.repetitions
    )
}

/// A warning for a large plan, with its estimated wall time: builds,
/// boots at the measured TCG boot time, and each cell's own runtime.
pub fn warning(plan: &super::Plan) -> Option<String> {
    let runs = plan.cells.len() as u128 * plan.repetitions as u128;
    if runs <= WARN_CELLS {
        return None;
    }
    let secs: f64 = plan
        .kernels
        .iter()
        .map(|k| super::shard::kernel_cost(plan, k))
        .sum();
    Some(format!(
        "the plan has {runs} cell runs ({} cells × {} repetitions); estimated wall time {} \
         (builds, {} boots at about {:.0} s each, and each cell's runtime)",
        plan.cells.len(),
        plan.repetitions,
        crate::util::human_secs(secs),
        plan.schedule.len(),
        plan.boots
            .first()
            .map(|b| super::shard::boot_secs(b.arch))
            .unwrap_or(0.0),
    ))
}
