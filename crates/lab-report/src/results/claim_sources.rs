//! The mails a run's claims read: found, read and extracted once, when
//! the run starts (and by `lab claims check`), so a report later needs
//! only the run directory.

use super::ClaimSource;
use crate::matrix::Matrix;
use crate::matrix::schema::{ClaimDef, ClaimSourceDef, PatchDef};
use crate::record::problem::{Problem, ProblemKind};
use std::path::{Path, PathBuf};

/// The sources of every claim of `matrix`. `mails` are the `--mail`
/// files, `claim_mails` the `--claims` files; both are searched for a
/// message-id. A claim whose mail cannot be found or read has no source
/// and its reason is in the second list, `claim N: why`.
pub fn gather(
    matrix: &Matrix,
    mails: &[PathBuf],
    claim_mails: &[PathBuf],
) -> (Vec<ClaimSource>, Vec<Problem>) {
    let mut out: Vec<ClaimSource> = Vec::new();
    let mut problems = Vec::new();
    let searched: Vec<&PathBuf> = mails.iter().chain(claim_mails).collect();
    let dir = matrix.path.parent().unwrap_or(Path::new("."));
    for (i, def) in matrix.claims.iter().enumerate() {
        let n = i + 1;
        match source_of(def, matrix, dir, &searched) {
            Ok((variant, origin, tables)) => {
                if let Some(s) = out
                    .iter_mut()
                    .find(|s| s.origin == origin && s.variant == variant)
                {
                    s.claims.push(n);
                } else {
                    out.push(ClaimSource {
                        claims: vec![n],
                        variant,
                        origin,
                        tables,
                    });
                }
            }
            Err(e) => problems.push(Problem::of_claim(
                n,
                ProblemKind::ClaimSource,
                e.to_string(),
            )),
        }
    }
    (out, problems)
}

type Found = (String, String, Vec<crate::mail::ClaimTable>);

fn source_of(
    def: &ClaimDef,
    matrix: &Matrix,
    dir: &Path,
    searched: &[&PathBuf],
) -> Result<Found, String> {
    match &def.source {
        Some(ClaimSourceDef::Mail { mail }) => {
            let f = dir.join(mail);
            let shown = crate::util::display_path(&f);
            Ok((String::new(), shown, tables_of(&f)?))
        }
        Some(ClaimSourceDef::MessageId { message_id }) => {
            let id = bare(message_id);
            for f in searched {
                let tables: Vec<_> = tables_of(f)?
                    .into_iter()
                    .filter(|t| t.origin.message_id.as_deref().map(bare) == Some(id))
                    .collect();
                if !tables.is_empty() {
                    return Ok((
                        String::new(),
                        format!("{} <{id}>", crate::util::display_path(f)),
                        tables,
                    ));
                }
            }
            Err(format!(
                "no table of message <{id}> in the --mail or --claims files ({})",
                list(searched)
            ))
        }
        None if def.from_variant.is_none() => match searched {
            // A reviewer checking one mail's numbers gives that mail and
            // no source: the claim reads it.
            [only] => Ok((
                String::new(),
                crate::util::display_path(only),
                tables_of(only)?,
            )),
            [] => {
                Err("no source: give source: {mail: FILE}, from_variant, or one --mail file".into())
            }
            _ => Err(format!(
                "no source, and {} --mail/--claims files ({}): say which with source: {{mail: FILE}} or {{message-id: ID}}",
                searched.len(),
                list(searched)
            )),
        },
        None => {
            let Some(v) = def
                .from_variant
                .as_ref()
                .and_then(|v| matrix.variant(&v.value))
            else {
                return Err("from_variant names no variant".into());
            };
            for p in &v.patches {
                let files: Vec<PathBuf> = match p {
                    PatchDef::Mail { mail } => vec![PathBuf::from(mail)],
                    PatchDef::MessageId { message_id, mail } => {
                        let id = bare(message_id);
                        let own = mail.iter().map(PathBuf::from);
                        searched
                            .iter()
                            .map(|m| m.to_path_buf())
                            .chain(own)
                            .filter(|m| std::fs::read_to_string(m).is_ok_and(|t| t.contains(id)))
                            .collect()
                    }
                    PatchDef::Diff { .. } => vec![],
                };
                if let Some(f) = files.first() {
                    return Ok((v.name.clone(), crate::util::display_path(f), tables_of(f)?));
                }
            }
            Err(format!(
                "the patch mail of variant '{}' is not among the --mail or --claims files ({})",
                v.name,
                list(searched)
            ))
        }
    }
}

fn tables_of(f: &Path) -> Result<Vec<crate::mail::ClaimTable>, String> {
    let raw = crate::util::read_input(f, "reading", crate::util::MAX_MAIL_INPUT)
        .map_err(|e| format!("{e:#}"))?;
    crate::mail::claims::extract(&raw).map_err(|e| format!("{}: {e:#}", f.display()))
}

fn bare(id: &str) -> &str {
    id.trim().trim_matches(['<', '>'])
}

fn list(files: &[&PathBuf]) -> String {
    if files.is_empty() {
        "none given".into()
    } else {
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The source claim `n` (from 1) reads in a run's manifest: the one
/// recorded for it, or for a run recorded before claims were numbered,
/// the patch mail of its `from_variant`.
pub fn of_claim<'a>(
    sources: &'a [ClaimSource],
    n: usize,
    def: &ClaimDef,
) -> Option<&'a ClaimSource> {
    sources.iter().find(|s| s.claims.contains(&n)).or_else(|| {
        let v = def.from_variant.as_ref()?;
        sources
            .iter()
            .find(|s| s.claims.is_empty() && s.variant == v.value)
    })
}

/// One claim of a matrix, bound: its source and table, and what each of
/// its values binds to. `lab claims check`, the check before a run and
/// the report all bind through [`bind_all`], so a claim that binds in
/// the plan binds in the report.
#[derive(Debug)]
pub struct ClaimBindings<'a> {
    /// From 1.
    pub claim: usize,
    /// The mail the claim reads, as a person reads its path.
    pub source: String,
    /// The table its values come from.
    pub table: Option<&'a crate::mail::ClaimTable>,
    /// Why the claim has no values to bind, when it has none.
    pub problem: Option<String>,
    pub values: Vec<crate::matrix::claims::Binding>,
}

impl ClaimBindings<'_> {
    /// Values that bind to no cell, wrong units included.
    pub fn unbound(&self) -> usize {
        use crate::matrix::claims::Target;
        self.values
            .iter()
            .filter(|b| matches!(b.target, Target::Unbound(_) | Target::WrongUnit(_)))
            .count()
    }
}

/// Every claim of `claims` bound to the cells of `plan`: the one binding
/// of lab. `sources` are the mails' tables (read by [`gather`] before a
/// run, stored in its manifest after), `problems` what `gather` could
/// not read, and `metrics` the matrix's own metric names and units
/// (`matrix::claims::command_metrics`: derived, perf and command metrics).
pub fn bind_all<'a>(
    claims: &[ClaimDef],
    sources: &'a [ClaimSource],
    problems: &[Problem],
    plan: &crate::matrix::Plan,
    metrics: &[crate::matrix::schema::CommandMetricDef],
) -> Vec<ClaimBindings<'a>> {
    let mut out = Vec::new();
    for (i, def) in claims.iter().enumerate() {
        let n = i + 1;
        let mut cb = ClaimBindings {
            claim: n,
            source: crate::matrix::claims::source_label(def),
            table: None,
            problem: None,
            values: vec![],
        };
        let Some(source) = of_claim(sources, n, def) else {
            cb.problem = Some(problems.iter().find(|p| p.claim == Some(n)).map_or_else(
                || format!("no mail tables were recorded for claim {n} ({})", cb.source),
                |p| p.detail.clone(),
            ));
            out.push(cb);
            continue;
        };
        cb.source.clone_from(&source.origin);
        let Some(table) = source.tables.get(def.table.value.saturating_sub(1)) else {
            cb.problem = Some(format!(
                "{} has {} table(s), not a table {}",
                source.origin,
                source.tables.len(),
                def.table.value
            ));
            out.push(cb);
            continue;
        };
        cb.table = Some(table);
        cb.values = crate::matrix::claims::bind(n, def, table, plan, metrics);
        // `columns:` that name no column of the table bind nothing: that
        // is a claim read wrong, never "0 of 0 bound" and fine.
        let unknown: Vec<&str> = def
            .columns
            .keys()
            .filter(|k| table.column(k).is_none())
            .map(String::as_str)
            .collect();
        if cb.values.is_empty() && !unknown.is_empty() {
            let have: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
            cb.problem = Some(format!(
                "columns: {} name no column of table {} (its columns: {})",
                unknown.join(", "),
                def.table.value,
                have.join(", ")
            ));
        }
        out.push(cb);
    }
    out
}

/// The claims whose units cannot measure their metrics, one message
/// each naming the claim and both units: an error before a run starts.
pub fn unit_errors(
    matrix: &Matrix,
    plan: &crate::matrix::Plan,
    sources: &[ClaimSource],
) -> Vec<String> {
    let metrics = crate::matrix::claims::command_metrics(matrix);
    let mut out: Vec<String> = Vec::new();
    for c in bind_all(&matrix.claims, sources, &[], plan, &metrics) {
        for b in c.values {
            if let crate::matrix::claims::Target::WrongUnit(e) = b.target
                && !out.contains(&e)
            {
                out.push(e);
            }
        }
    }
    out
}
