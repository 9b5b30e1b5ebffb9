//! A draft's own checks before anything runs: `lab new` writes it
//! without failing (a panic in the drafter is caught and recorded), it
//! is runnable as written, it plans, and its claims bind to cells.

use crate::cache::Cache;
use crate::matrix::claims::Target;
use crate::matrix::{Matrix, Plan};
use std::collections::BTreeSet;
use std::path::Path;

/// A draft that passed, with what the budget needs.
pub struct Checked {
    pub plan: Plan,
    pub cells: u32,
    pub claims: u32,
    /// For each bound claim value, the cells that measure it.
    pub values: Vec<Vec<String>>,
    /// Kernel ids of the plan already in lab's cache.
    pub cached: BTreeSet<String>,
}

/// Draft `mbox` into `yaml`, then check it. The error is the reason the
/// draft failed, as the state stores it.
pub fn check(
    mbox: &[u8],
    slug: &str,
    yaml: &Path,
    mbox_path: &Path,
    cache: &Cache,
) -> Result<Checked, String> {
    let opts = crate::draft::Options {
        name: Some(crate::draft::suggested_name(mbox)),
        per_patch: false,
        mail_ref: format!("{slug}.mbox"),
    };
    let drafted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::draft::draft(mbox, &opts, yaml)
    }));
    let d = match drafted {
        Ok(Ok(d)) => d,
        Ok(Err(e)) => return Err(format!("lab new failed: {e:#}")),
        Err(_) => return Err("lab new panicked on this mail (a bug in lab)".into()),
    };
    crate::util::atomic_write(yaml, d.yaml.as_bytes()).map_err(|e| format!("{e:#}"))?;
    if let Some(why) = &d.unrunnable {
        return Err(format!("the draft does not run as written: {why}"));
    }
    if d.claims == 0 || d.values == 0 {
        return Err(format!(
            "no claim of the mail binds to a cell of the draft ({} table(s) left as comments)",
            d.unclaimed.len()
        ));
    }
    let matrix = Matrix::load(yaml).map_err(|e| format!("the draft does not load: {e:#}"))?;
    let plan = matrix
        .plan()
        .map_err(|e| format!("the draft does not plan: {e:#}"))?;
    let (sources, problems) =
        crate::results::claim_sources::gather(&matrix, &[mbox_path.to_path_buf()], &[]);
    let metrics = crate::matrix::claims::command_metrics(&matrix);
    let bound = crate::results::claim_sources::bind_all(
        &matrix.claims,
        &sources,
        &problems,
        &plan,
        &metrics,
    );
    let values: Vec<Vec<String>> = bound
        .iter()
        .flat_map(|c| &c.values)
        .filter_map(|b| match &b.target {
            Target::Cells(c) if !c.is_empty() => Some(under_conditions(&matrix, &plan, b.claim, c)),
            _ => None,
        })
        .collect();
    if values.is_empty() {
        return Err("the draft's claims bind no value to a cell".into());
    }
    let build = crate::kernel::BuildOptions {
        mails: vec![mbox_path.to_path_buf()],
        ..Default::default()
    };
    let cached = crate::kernel::build::cached(cache, &matrix, &plan.kernels, &build);
    Ok(Checked {
        cells: plan.cells.len() as u32,
        claims: d.claims as u32,
        values,
        cached,
        plan,
    })
}

/// The cells of a bound value that meet its claim's conditions
/// (`conditions: {arch: arm64, hz: 100}`): those that can judge it. A
/// value bound to both arches of a draft is judged only on the one the
/// mail measured; the others show it as "other conditions". A condition
/// no axis carries (the clocksource) is decided at run time, and all
/// cells are kept when none meets them.
fn under_conditions(matrix: &Matrix, plan: &Plan, claim: usize, cells: &[String]) -> Vec<String> {
    let Some(def) = matrix.claims.get(claim.wrapping_sub(1)) else {
        return cells.to_vec();
    };
    let conds: Vec<(&str, String)> = def
        .conditions
        .iter()
        .map(|(k, v)| (k.as_str(), crate::matrix::claims::condition_text(v)))
        .collect();
    let meets = |id: &String| {
        plan.cells.iter().find(|c| &c.id == id).is_some_and(|c| {
            conds.iter().all(|(k, v)| match c.axes.get(k) {
                Some(x) => x.to_string() == *v,
                None => true,
            })
        })
    };
    let kept: Vec<String> = cells.iter().filter(|c| meets(c)).cloned().collect();
    if kept.is_empty() {
        cells.to_vec()
    } else {
        kept
    }
}
