//! Patches: read from mails and diffs, applied with git apply, or patch -F when allowed.
//!
//! A patch under test is usually a mail written against a newer tree than
//! the one being built, so exact application is tried first and fuzz is
//! only used when the variant allows it, with every fuzzed hunk reported:
//! a fuzzed hunk may land somewhere its author did not mean.

mod apply;
mod diff;
mod mail;
#[cfg(test)]
mod tests;

pub use apply::{Applied, FuzzedHunk, apply};

use crate::matrix::schema::PatchDef;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// One patch, ready to apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Patch {
    /// The file it came from, or the Message-ID it was asked for by.
    pub origin: String,
    /// The mail's subject; empty for a plain diff.
    pub subject: String,
    /// The mail's own Message-ID, without `<>`.
    pub message_id: Option<String>,
    /// The unified diff, from its first `diff --git`/`---` line to the end
    /// of its last hunk (the mail signature is dropped).
    pub diff: String,
    /// blake3 hex of `diff`, so a cache key changes exactly when the
    /// change does, not when a mail header does.
    pub hash: String,
}

impl Patch {
    fn new(origin: &str, subject: &str, message_id: Option<String>, diff: String) -> Patch {
        Patch {
            origin: origin.to_string(),
            subject: subject.to_string(),
            message_id,
            hash: crate::util::hash_bytes(diff.as_bytes()),
            diff,
        }
    }

    /// How messages name the patch: its subject, or where it came from.
    pub fn name(&self) -> &str {
        if self.subject.is_empty() {
            &self.origin
        } else {
            &self.subject
        }
    }
}

/// Resolve one PatchDef to patches. `mails` are extra local mail files
/// (the CLI's `--mail`); a Message-ID is looked up among them first, and
/// only then fetched with `b4` if that is installed.
pub fn load(def: &PatchDef, mails: &[PathBuf]) -> Result<Vec<Patch>> {
    match def {
        PatchDef::Mail { mail } => load_mail(Path::new(mail)),
        PatchDef::Diff { diff } => load_diff(Path::new(diff)).map(|p| vec![p]),
        PatchDef::MessageId { message_id, mail } => {
            // The matrix's own file comes after the user's --mail files.
            let mut files = mails.to_vec();
            files.extend(mail.iter().map(PathBuf::from).filter(|f| f.is_file()));
            load_message_id(message_id, &files, crate::util::which("b4").as_deref())
        }
    }
}

/// The files a diff touches: old and new paths, `a/`/`b/` stripped, each
/// once, in diff order.
pub fn touched_files(diff: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for f in diff::files(diff) {
        for p in [f.old, f.new].into_iter().flatten() {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// Every hunk of a diff as (file, number within that file from 1, `@@`
/// line): the numbering GNU patch uses in "Hunk #N FAILED".
pub fn hunks(diff: &str) -> Vec<(String, usize, String)> {
    diff::files(diff)
        .iter()
        .flat_map(|f| {
            f.hunks
                .iter()
                .enumerate()
                .map(|(i, h)| (f.name().to_string(), i + 1, h.clone()))
        })
        .collect()
}

/// Every patch in an mbox, in series order; the cover letter and replies
/// are skipped.
fn load_mail(path: &Path) -> Result<Vec<Patch>> {
    let mails = mail::read_file(path)?;
    let origin = path.display().to_string();
    let patches = mail::series(&mails).with_context(|| format!("patches in {origin}"))?;
    if patches.is_empty() {
        bail!(
            "no patch found in {origin}: none of its {} mail(s) holds a diff (a `diff --git` or `--- a/` line), other than replies and cover letters",
            mails.len()
        );
    }
    Ok(patches.into_iter().map(|m| from_mail(&origin, m)).collect())
}

fn from_mail(origin: &str, m: &mail::Mail) -> Patch {
    let diff = m.diff.clone().unwrap_or_default();
    Patch::new(origin, &m.subject, m.message_id.clone(), diff)
}

/// A plain unified diff; anything before its first file header (such as
/// a `git format-patch` mail header) is ignored.
fn load_diff(path: &Path) -> Result<Patch> {
    let data = crate::util::read_input(path, "patch file", crate::util::MAX_MAIL_INPUT)?;
    let text = String::from_utf8_lossy(&data);
    let Some(diff) = diff::extract(&text) else {
        bail!(
            "no patch found in {}: it has no `diff --git` or `---`/`+++` lines",
            path.display()
        );
    };
    Ok(Patch::new(&path.display().to_string(), "", None, diff))
}

/// A Message-ID: from a `--mail` file when one holds it, else from b4.
/// `b4` is the program to run, `None` when it is not installed.
fn load_message_id(raw: &str, mails: &[PathBuf], b4: Option<&Path>) -> Result<Vec<Patch>> {
    let id = mail::normalize_msgid(raw);
    for path in mails {
        let found = mail::read_file(path).with_context(|| format!("--mail {}", path.display()))?;
        if let Some(picked) = mail::select(&found, &id) {
            let picked = picked.with_context(|| format!("patch {id} in {}", path.display()))?;
            if picked.is_empty() {
                bail!(
                    "patch {id}: the mail in {} holds no diff, and no patch in that file replies to it",
                    path.display()
                );
            }
            return Ok(picked.into_iter().map(|m| from_mail(&id, m)).collect());
        }
    }
    fetch_with_b4(&id, b4)
}

/// Fetch with `b4 am`. Its mbox holds the whole series; when the id is one
/// patch of it, only that patch is kept, as with a `--mail` file.
fn fetch_with_b4(id: &str, b4: Option<&Path>) -> Result<Vec<Patch>> {
    let Some(b4) = b4 else {
        bail!(
            "patch {id}: not in any --mail file, and b4 is not installed (apt-get install b4). Pass the mail with --mail FILE."
        );
    };
    let mbox = mail::b4_am(b4, id).map_err(|e| {
        anyhow::anyhow!(
            "patch {id}: not in any --mail file, and b4 failed: {e}. Pass the mail with --mail FILE."
        )
    })?;
    let mails = mail::parse_mbox(&mbox).with_context(|| format!("parsing b4's mbox for {id}"))?;
    let picked = match mail::select(&mails, id) {
        Some(picked) => picked?,
        None => mail::series(&mails)?,
    };
    if picked.is_empty() {
        bail!("patch {id}: b4 am returned no patch. Pass the mail with --mail FILE.");
    }
    Ok(picked.into_iter().map(|m| from_mail(id, m)).collect())
}
