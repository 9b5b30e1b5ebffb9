//! `lab claims check`: what every claimed value of a matrix binds to,
//! before anything is built or booted.

use crate::matrix::claims::{self as bind, Target};
use crate::matrix::{Matrix, Plan};
use crate::results::claim_sources::{self, ClaimBindings};
use anyhow::Result;
use std::io::Write;
use std::path::PathBuf;

/// The bindings as `lab claims check` prints them.
pub fn render(claims: &[ClaimBindings]) -> String {
    let mut s = String::new();
    for c in claims {
        let subject = c
            .table
            .and_then(|t| t.origin.subject.as_ref())
            .map(|s| format!(" \"{s}\""))
            .unwrap_or_default();
        s.push_str(&format!("claim {}: {}{subject}\n", c.claim, c.source));
        if let Some(p) = &c.problem {
            s.push_str(&format!("  unbound: claim {}: {p}\n", c.claim));
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
        s.push_str(&format!("; {whole} claim(s) that bind nothing"));
    }
    s.push('\n');
    s
}

/// `lab claims check`: 0 when every value binds, 1 when some do not.
/// Binds through `claim_sources::bind_all`, as the report does.
pub fn check(
    matrix: &Matrix,
    plan: &Plan,
    mails: &[PathBuf],
    claim_mails: &[PathBuf],
    out: &mut dyn Write,
) -> Result<i32> {
    let (sources, problems) = claim_sources::gather(matrix, mails, claim_mails);
    let metrics = bind::command_metrics(matrix);
    let claims = claim_sources::bind_all(&matrix.claims, &sources, &problems, plan, &metrics);
    out.write_all(render(&claims).as_bytes())?;
    let bad = claims
        .iter()
        .any(|c| c.problem.is_some() || c.unbound() > 0);
    Ok(i32::from(bad))
}
