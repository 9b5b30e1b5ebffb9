//! Claimed against measured: each value a matrix's claims bind (see
//! `matrix::claims`) beside the median of the cell that measures it.
//!
//! Kept apart from the statistics so that what a claim's status means
//! is in one place: the statuses are [`ClaimStatus`], never strings.

use super::{CellSummary, ClaimCheck, Flag, Group, Report};
use crate::matrix::claims::{self as bind, Binding, Target};
use crate::matrix::schema::ClaimDef;
use crate::record::problem::{Problem, ProblemKind};
use crate::results::Manifest;
use serde::{Deserialize, Serialize};

/// What became of one claimed value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClaimStatus {
    /// Measured within the claim's tolerance.
    #[serde(rename = "reproduced")]
    Reproduced,
    /// Measured outside the tolerance, under the claim's conditions.
    #[serde(rename = "not reproduced")]
    NotReproduced,
    /// Measured, but under another arch, HZ or clocksource than the
    /// claim: the value and the ratio are shown, not judged.
    #[serde(rename = "other conditions")]
    OtherConditions,
    /// No cell of the matrix measures it; the reasons say why.
    #[serde(rename = "unbound")]
    Unbound,
    /// Cells of the matrix measure it, but the run's `--filter` left
    /// them out: run them to check it.
    #[serde(rename = "not in this run")]
    NotInRun,
    /// The mail says N/A; the matrix leaves the combination out.
    #[serde(rename = "not applicable")]
    NotApplicable,
    /// A cell should measure it but has no finished result.
    #[serde(rename = "no data")]
    NoData,
    /// Fewer finished repetitions than a judgement needs.
    #[serde(rename = "too few runs")]
    TooFewRuns,
    /// Measured on a contended host: shown, not judged.
    #[serde(rename = "contended")]
    Contended,
}

impl ClaimStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Reproduced => "reproduced",
            ClaimStatus::NotReproduced => "not reproduced",
            ClaimStatus::OtherConditions => "other conditions",
            ClaimStatus::Unbound => "unbound",
            ClaimStatus::NotInRun => "not in this run",
            ClaimStatus::NotApplicable => "not applicable",
            ClaimStatus::NoData => "no data",
            ClaimStatus::TooFewRuns => "too few runs",
            ClaimStatus::Contended => "contended",
        }
    }
}

impl std::fmt::Display for ClaimStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every claimed value of the run's matrix against what was measured.
/// Values are bound by `claim_sources::bind_all` with the matrix's own
/// metrics, as `lab plan` and `lab claims check` bind them. What keeps a
/// whole claim from being checked is also a problem of the report; its
/// values are still listed, as `unbound`.
pub(super) fn check_claims(m: &Manifest, report: &mut Report, min_runs: usize) -> Vec<ClaimCheck> {
    let metrics = m.matrix.metric_defs(&m.plan);
    let filter = m
        .matrix
        .filter
        .as_deref()
        .and_then(|f| crate::matrix::Filter::parse(f).ok());
    let bound = crate::results::claim_sources::bind_all(
        &m.matrix.claims,
        &m.claim_sources,
        &[],
        &m.plan,
        &metrics,
    );
    let mut out = Vec::new();
    for (def, cb) in m.matrix.claims.iter().zip(bound) {
        let n = cb.claim;
        let tolerance = crate::units::parse_percent(&def.tolerance.value).unwrap_or_else(|e| {
            report.problems.push(Problem::of_claim(
                n,
                ProblemKind::ClaimTolerance,
                format!("tolerance '{}': {e}", def.tolerance.value),
            ));
            0.0
        });
        let mut base = ClaimCheck {
            claim: n,
            source: cb.source.clone(),
            subject: None,
            message_id: None,
            table: def.table.value,
            caption: None,
            theoretical_max: None,
            metric: def
                .metric
                .as_ref()
                .map(|m| m.value.clone())
                .unwrap_or_default(),
            unit: def
                .unit
                .as_ref()
                .map(|u| u.value.clone())
                .unwrap_or_default(),
            tolerance,
            conditions: def
                .conditions
                .iter()
                .map(|(k, v)| format!("{k}={}", bind::condition_text(v)))
                .collect::<Vec<_>>()
                .join(", "),
            group: String::new(),
            config: String::new(),
            row_axis: String::new(),
            row_key: String::new(),
            column: String::new(),
            binds: String::new(),
            variant: String::new(),
            cell: None,
            claimed: None,
            measured: None,
            ratio: None,
            status: ClaimStatus::Unbound,
            reasons: vec![],
        };
        let Some(table) = cb.table else {
            let why = cb.problem.unwrap_or_default();
            report
                .problems
                .push(Problem::of_claim(n, ProblemKind::ClaimUnbound, why.clone()));
            base.reasons.push(why);
            out.push(base);
            continue;
        };
        base.subject.clone_from(&table.origin.subject);
        base.message_id.clone_from(&table.origin.message_id);
        base.caption.clone_from(&table.caption);
        // A row of the table that is a bound ("Theoretical maximum") is
        // the reference; a sentence near the table only when it has none.
        base.theoretical_max = bind::reference_rows(def, table)
            .into_iter()
            .next()
            .or_else(|| table.theoretical_max.clone());
        for b in &cb.values {
            let outside = filter.as_ref().is_some_and(|f| outside_filter(f, b));
            out.extend(check_value(m, report, def, &base, b, min_runs, outside));
        }
    }
    out
}

/// Whether a value names an axis value that the run's `--filter` left
/// out: it is "not in this run", not unbound.
fn outside_filter(f: &crate::matrix::Filter, b: &Binding) -> bool {
    b.axes.iter().any(|(a, v)| {
        f.0.iter()
            .any(|(k, vals)| k == a && !vals.iter().any(|x| bind::same_value(x, v)))
    })
}

/// One claimed value: a check per cell it binds to, or one saying why
/// it binds to none.
fn check_value(
    m: &Manifest,
    report: &mut Report,
    def: &ClaimDef,
    base: &ClaimCheck,
    b: &Binding,
    min_runs: usize,
    outside_filter: bool,
) -> Vec<ClaimCheck> {
    let mut c = base.clone();
    c.row_axis.clone_from(&b.row_keys);
    c.row_key.clone_from(&b.row);
    c.column.clone_from(&b.column);
    c.binds = bind::label(&b.axes);
    c.claimed = b.claimed;
    c.metric.clone_from(&b.metric);
    if !b.unit.is_empty() {
        c.unit.clone_from(&b.unit);
    }
    c.variant = b
        .axes
        .iter()
        .find(|(a, _)| a == "variant")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let cells = match &b.target {
        Target::Cells(cells) => cells,
        Target::Unbound(_) if outside_filter => {
            c.status = ClaimStatus::NotInRun;
            c.reasons.push(format!(
                "not in this run: its filter ({}) leaves out {}",
                m.matrix.filter.as_deref().unwrap_or_default(),
                c.binds
            ));
            return vec![c];
        }
        Target::Unbound(why) | Target::WrongUnit(why) => {
            c.reasons.push(why.clone());
            return vec![c];
        }
        Target::Excluded => {
            c.status = ClaimStatus::NotApplicable;
            c.reasons.push(format!(
                "N/A in the mail; the plan has no cell with {}",
                c.binds
            ));
            return vec![c];
        }
        Target::NotApplicable(cells) => {
            c.status = ClaimStatus::NotApplicable;
            c.reasons.push(format!(
                "N/A in the mail, yet the plan measures {}",
                cells.join(", ")
            ));
            return vec![c];
        }
    };
    let mut out = Vec::new();
    for id in cells {
        let mut c = c.clone();
        c.cell = Some(id.clone());
        let Some(gi) = report
            .groups
            .iter()
            .position(|g| g.cells.iter().any(|x| &x.cell == id))
        else {
            c.status = ClaimStatus::NoData;
            c.reasons
                .push(format!("no result for cell {id} in this run"));
            out.push(c);
            continue;
        };
        let g = &report.groups[gi];
        let cell = g.cells.iter().find(|x| &x.cell == id);
        c.group = g.id.clone();
        c.config = g.config.clone();
        if let Some(cell) = cell {
            c.variant.clone_from(&cell.variant);
        }
        let mut mismatches = Vec::new();
        // An axis condition holds or fails for the whole group; the
        // clocksource is the one condition a single cell can break.
        let mut group_wide = false;
        for (k, v) in &def.conditions {
            match condition_mismatch(k, &bind::condition_text(v), g, cell, m) {
                Ok(Some(why)) => {
                    group_wide |= k != "clocksource";
                    mismatches.push(why)
                }
                Ok(None) => {}
                Err(note) => c.reasons.push(note),
            }
        }
        let summary = cell.and_then(|x| {
            x.metrics
                .iter()
                .find(|s| s.metric == b.metric)
                .and_then(|s| s.summary)
        });
        if let Some(sm) = summary {
            let measured = sm.median * b.from_stored;
            c.measured = Some(measured);
            c.ratio = b.claimed.filter(|x| *x != 0.0).map(|x| measured / x);
        }
        c.status = if !mismatches.is_empty() {
            ClaimStatus::OtherConditions
        } else if summary.is_none() || c.ratio.is_none() {
            ClaimStatus::NoData
        } else if summary.is_some_and(|s| s.n < min_runs) {
            ClaimStatus::TooFewRuns
        } else if cell.is_some_and(|x| x.flags.iter().any(|f| f.kind == super::FlagKind::Contended))
        {
            c.reasons
                .push("measured on a contended host: shown, not judged".into());
            ClaimStatus::Contended
        } else if c.ratio.is_some_and(|r| (r - 1.0).abs() <= base.tolerance) {
            ClaimStatus::Reproduced
        } else {
            ClaimStatus::NotReproduced
        };
        if summary.is_none() {
            c.reasons.push(format!("no finished {} in {id}", b.metric));
        }
        c.reasons.extend(mismatches);
        if group_wide {
            let msg = format!(
                "claim {} was measured under {}; shown as other conditions here",
                c.claim, c.conditions
            );
            let g = &mut report.groups[gi];
            if !g.flags.iter().any(|f| f.message == msg) {
                g.flags.push(Flag {
                    kind: super::FlagKind::ClaimConditions,
                    message: msg,
                    metric: Some(b.metric.clone()),
                    reps: vec![],
                    value: None,
                });
            }
        }
        out.push(c);
    }
    out
}

/// Why a claim's condition does not hold for a cell, if it does not.
fn condition_mismatch(
    key: &str,
    want: &str,
    g: &Group,
    cell: Option<&CellSummary>,
    m: &Manifest,
) -> Result<Option<String>, String> {
    if key == "clocksource" {
        let Some(c) = cell else { return Ok(None) };
        let other = c.clocksources.iter().any(|cs| !bind::same_value(cs, want));
        return Ok(other.then(|| {
            format!(
                "claim measured on clocksource {want}, this cell on {}",
                c.clocksources.join("+")
            )
        }));
    }
    let have = g.axes.get(key).map(|v| v.to_string()).or_else(|| {
        let c = cell?;
        match key {
            "arch" => Some(c.arch.clone()),
            "hz" => m.kernels.get(&c.kernel)?.hz.map(|h| h.to_string()),
            _ => None,
        }
    });
    match have {
        Some(h) if bind::same_value(&h, want) => Ok(None),
        Some(h) => Ok(Some(format!(
            "claim made for {key}={want}, this cell has {key}={h}"
        ))),
        None => Err(format!(
            "condition {key}={want} not checked: the cell has no such axis"
        )),
    }
}

/// The metrics a claim reads, so the report computes their statistics
/// even when the matrix does not show them.
pub(super) fn metrics_of(def: &ClaimDef) -> Vec<String> {
    def.metric
        .iter()
        .map(|m| m.value.clone())
        .chain(def.metrics.values().cloned())
        .collect()
}
