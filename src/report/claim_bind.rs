//! `lab claims check`: what every claimed value of a matrix binds to,
//! before anything is built or booted.

use crate::matrix::claims::{self as bind, Binding, Target};
use crate::matrix::{Matrix, Plan};
use crate::results::claim_sources;
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

/// One claim of the matrix: where its table is, and its values.
#[derive(Debug)]
pub struct ClaimBindings {
    /// From 1.
    pub claim: usize,
    /// The mail, and the table's subject and message-id when known.
    pub source: String,
    /// Why the claim has no values to bind, when it has none.
    pub problem: Option<String>,
    pub values: Vec<Binding>,
}

impl ClaimBindings {
    /// Values that bind to no cell, wrong units included.
    pub fn unbound(&self) -> usize {
        self.values
            .iter()
            .filter(|b| matches!(b.target, Target::Unbound(_) | Target::WrongUnit(_)))
            .count()
    }
}

/// The bindings of every claim of `matrix` over `plan`, its mails read
/// from the patch mails, `mails` (`--mail`) and `claim_mails` (`--claims`).
pub fn bindings(
    matrix: &Matrix,
    plan: &Plan,
    mails: &[PathBuf],
    claim_mails: &[PathBuf],
) -> Vec<ClaimBindings> {
    let (sources, problems) = claim_sources::gather(matrix, mails, claim_mails);
    let commands = bind::command_metrics(matrix);
    let mut out = Vec::new();
    for (i, def) in matrix.claims.iter().enumerate() {
        let n = i + 1;
        let mut cb = ClaimBindings {
            claim: n,
            source: bind::source_label(def),
            problem: None,
            values: vec![],
        };
        let Some(source) = claim_sources::of_claim(&sources, n, def) else {
            cb.problem = problems
                .iter()
                .find(|p| p.starts_with(&format!("claim {n}:")))
                .cloned()
                .or_else(|| Some(format!("claim {n}: no source found")));
            out.push(cb);
            continue;
        };
        cb.source.clone_from(&source.origin);
        let Some(table) = source.tables.get(def.table.value.saturating_sub(1)) else {
            cb.problem = Some(format!(
                "claim {n}: {} has {} table(s), not a table {}",
                source.origin,
                source.tables.len(),
                def.table.value
            ));
            out.push(cb);
            continue;
        };
        if let Some(s) = &table.origin.subject {
            cb.source.push_str(&format!(" \"{s}\""));
        }
        cb.values = bind::bind(n, def, table, plan, &commands);
        out.push(cb);
    }
    out
}

/// The bindings as `lab claims check` prints them.
pub fn render(claims: &[ClaimBindings]) -> String {
    let mut s = String::new();
    for c in claims {
        s.push_str(&format!("claim {}: {}\n", c.claim, c.source));
        if let Some(p) = &c.problem {
            s.push_str(&format!("  unbound: {p}\n"));
        }
        for b in &c.values {
            let claimed = match b.claimed {
                Some(v) => format!("{} {}", crate::report::numbers::value(v), b.unit),
                None => "N/A".into(),
            };
            s.push_str(&format!(
                "  {} [{}] {}: {claimed}\n",
                b.row,
                b.column,
                bind::label(&b.axes)
            ));
            let line = match &b.target {
                Target::Cells(cells) => format!("{} of {}", b.metric, cells.join(", ")),
                Target::Excluded => "not applicable: the plan has no such cell".into(),
                Target::NotApplicable(cells) => {
                    format!("N/A, yet the plan measures {}", cells.join(", "))
                }
                Target::Unbound(why) | Target::WrongUnit(why) => format!("unbound: {why}"),
            };
            s.push_str(&format!("    -> {line}\n"));
        }
    }
    let values: usize = claims.iter().map(|c| c.values.len()).sum();
    let unbound: usize = claims.iter().map(ClaimBindings::unbound).sum();
    let whole = claims.iter().filter(|c| c.problem.is_some()).count();
    s.push_str(&format!(
        "{} of {values} claimed value(s) bound",
        values - unbound
    ));
    if whole > 0 {
        s.push_str(&format!("; {whole} claim(s) with no table to bind"));
    }
    s.push('\n');
    s
}

/// `lab claims check`: 0 when every value binds, 1 when some do not.
pub fn check(
    matrix: &Matrix,
    plan: &Plan,
    mails: &[PathBuf],
    claim_mails: &[PathBuf],
    out: &mut dyn Write,
) -> Result<i32> {
    let claims = bindings(matrix, plan, mails, claim_mails);
    out.write_all(render(&claims).as_bytes())?;
    let bad = claims
        .iter()
        .any(|c| c.problem.is_some() || c.unbound() > 0);
    Ok(i32::from(bad))
}
