//! Claimed against measured: each value a matrix's claims bind (see
//! `matrix::claims`) beside the median of the cell that measures it.
//!
//! Kept apart from the statistics so that what a claim's status means
//! is in one place: the statuses are [`ClaimStatus`], never strings.

use super::{CellSummary, ClaimCheck, Flag, Group, Report};
use crate::matrix::claims::{self as bind, Binding, Target};
use crate::matrix::schema::{ClaimDef, Workload};
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
    /// The mail says N/A; the matrix leaves the combination out.
    #[serde(rename = "not applicable")]
    NotApplicable,
    /// A cell should measure it but has no finished result.
    #[serde(rename = "no data")]
    NoData,
    /// Fewer finished repetitions than a judgement needs.
    #[serde(rename = "too few runs")]
    TooFewRuns,
}

impl ClaimStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStatus::Reproduced => "reproduced",
            ClaimStatus::NotReproduced => "not reproduced",
            ClaimStatus::OtherConditions => "other conditions",
            ClaimStatus::Unbound => "unbound",
            ClaimStatus::NotApplicable => "not applicable",
            ClaimStatus::NoData => "no data",
            ClaimStatus::TooFewRuns => "too few runs",
        }
    }
}

impl std::fmt::Display for ClaimStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every claimed value of the run's matrix against what was measured.
/// What keeps a whole claim from being checked is also a problem of the
/// report; its values are still listed, as `unbound`.
pub(super) fn check_claims(m: &Manifest, report: &mut Report, min_runs: usize) -> Vec<ClaimCheck> {
    let commands: Vec<_> = m
        .plan
        .cells
        .iter()
        .find_map(|c| match &c.workload {
            Some(Workload::Command(c)) => Some(c.metrics.clone()),
            _ => None,
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, def) in m.matrix.claims.iter().enumerate() {
        let n = i + 1;
        let tolerance = crate::util::parse_percent(&def.tolerance.value).unwrap_or_else(|e| {
            report.problems.push(format!(
                "claim {n}: tolerance '{}': {e}",
                def.tolerance.value
            ));
            0.0
        });
        let mut base = ClaimCheck {
            claim: n,
            source: bind::source_label(def),
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
        let source = crate::results::claim_sources::of_claim(&m.claim_sources, n, def);
        let table = source.and_then(|s| s.tables.get(def.table.value.saturating_sub(1)));
        let (Some(source), Some(table)) = (source, table) else {
            let why = match source {
                None => format!(
                    "no mail tables were recorded for claim {n} ({})",
                    base.source
                ),
                Some(s) => format!(
                    "{} has {} table(s), not a table {}",
                    s.origin,
                    s.tables.len(),
                    def.table.value
                ),
            };
            report.problems.push(format!("claim {n}: {why}"));
            base.reasons.push(why);
            out.push(base);
            continue;
        };
        base.source.clone_from(&source.origin);
        base.subject.clone_from(&table.origin.subject);
        base.message_id.clone_from(&table.origin.message_id);
        base.caption.clone_from(&table.caption);
        base.theoretical_max.clone_from(&table.theoretical_max);
        for b in bind::bind(n, def, table, &m.plan, &commands) {
            out.extend(check_value(m, report, def, &base, &b, min_runs));
        }
    }
    out
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
        for (k, v) in &def.conditions {
            match condition_mismatch(k, &bind::condition_text(v), g, cell, m) {
                Ok(Some(why)) => mismatches.push(why),
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
        } else if c.ratio.is_some_and(|r| (r - 1.0).abs() <= base.tolerance) {
            ClaimStatus::Reproduced
        } else {
            ClaimStatus::NotReproduced
        };
        if summary.is_none() {
            c.reasons.push(format!("no finished {} in {id}", b.metric));
        }
        let group_wide = mismatches
            .iter()
            .any(|m| !m.starts_with("claim measured on clocksource"));
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
