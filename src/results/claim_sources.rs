//! The mails a run's claims read: found, read and extracted once, when
//! the run starts (and by `lab claims check`), so a report later needs
//! only the run directory.

use super::ClaimSource;
use crate::matrix::Matrix;
use crate::matrix::schema::{ClaimDef, ClaimSourceDef, PatchDef};
use std::path::{Path, PathBuf};

/// The sources of every claim of `matrix`. `mails` are the `--mail`
/// files, `claim_mails` the `--claims` files; both are searched for a
/// message-id. A claim whose mail cannot be found or read has no source
/// and its reason is in the second list, `claim N: why`.
pub fn gather(
    matrix: &Matrix,
    mails: &[PathBuf],
    claim_mails: &[PathBuf],
) -> (Vec<ClaimSource>, Vec<String>) {
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
            Err(e) => problems.push(format!("claim {n}: {e}")),
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
            Ok((String::new(), f.display().to_string(), tables_of(&f)?))
        }
        Some(ClaimSourceDef::MessageId { message_id }) => {
            let id = bare(message_id);
            for f in searched {
                let tables: Vec<_> = tables_of(f)?
                    .into_iter()
                    .filter(|t| t.origin.message_id.as_deref().map(bare) == Some(id))
                    .collect();
                if !tables.is_empty() {
                    return Ok((String::new(), format!("{} <{id}>", f.display()), tables));
                }
            }
            Err(format!(
                "no table of message <{id}> in the --mail or --claims files ({})",
                list(searched)
            ))
        }
        None => {
            let Some(v) = def
                .from_variant
                .as_ref()
                .and_then(|v| matrix.variant(&v.value))
            else {
                return Err("no source and no from_variant".into());
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
                    return Ok((v.name.clone(), f.display().to_string(), tables_of(f)?));
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
    let raw = std::fs::read(f).map_err(|e| format!("reading {}: {e}", f.display()))?;
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

/// The claims whose units cannot measure their metrics, one message
/// each naming the claim and both units: an error before a run starts.
pub fn unit_errors(
    matrix: &Matrix,
    plan: &crate::matrix::Plan,
    sources: &[ClaimSource],
) -> Vec<String> {
    let commands = crate::matrix::claims::command_metrics(matrix);
    let mut out: Vec<String> = Vec::new();
    for (i, def) in matrix.claims.iter().enumerate() {
        let Some(s) = of_claim(sources, i + 1, def) else {
            continue;
        };
        let Some(t) = s.tables.get(def.table.value.saturating_sub(1)) else {
            continue;
        };
        for b in crate::matrix::claims::bind(i + 1, def, t, plan, &commands) {
            if let crate::matrix::claims::Target::WrongUnit(e) = b.target
                && !out.contains(&e)
            {
                out.push(e);
            }
        }
    }
    out
}
