//! The patches among mails: which mails of a thread to apply, in which
//! order. Reading the mails themselves (mbox, MIME, Message-IDs, b4) is
//! `crate::mail::message`'s job.

use super::diff;
use crate::mail::message::{self, Message};
use anyhow::{Result, bail};
use std::path::Path;

pub(super) use crate::mail::message::{b4_am, normalize_msgid};

/// One mail, reduced to what choosing and applying patches needs.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Mail {
    pub subject: String,
    /// Without angle brackets.
    pub message_id: Option<String>,
    /// In-Reply-To and References, without angle brackets: how a series'
    /// patches point at their cover letter.
    pub refs: Vec<String>,
    /// The diff in the body, if any.
    pub diff: Option<String>,
}

impl Mail {
    /// The diff is in the first part that holds one: inline in a plain
    /// mail, or an attachment in a multipart one.
    fn from_message(m: Message) -> Mail {
        let diff = m.parts.iter().find_map(|p| diff::extract(&p.text));
        Mail {
            subject: m.subject,
            message_id: m.message_id,
            refs: m.refs,
            diff,
        }
    }

    /// `[PATCH 2/3]` → 2. The cover letter is 0.
    fn number(&self) -> Option<u32> {
        message::patch_number(&self.subject)
    }

    /// A reply may carry a reviewer's diff, which is not part of the series.
    fn is_reply(&self) -> bool {
        message::is_reply(&self.subject)
    }

    /// A mail to apply: it has a diff, is not a reply and is not a cover letter.
    fn is_patch(&self) -> bool {
        self.diff.is_some() && !self.is_reply() && self.number() != Some(0)
    }
}

/// Every mail in an mbox or single-mail file; a missing file is an error
/// that names it.
pub(super) fn read_file(path: &Path) -> Result<Vec<Mail>> {
    Ok(message::read_file(path)?
        .into_iter()
        .flat_map(message::patch_sections)
        .map(Mail::from_message)
        .collect())
}

/// Every mail in mbox data.
pub(super) fn parse_mbox(data: &[u8]) -> Result<Vec<Mail>> {
    Ok(message::parse_mbox(data)?
        .into_iter()
        .map(Mail::from_message)
        .collect())
}

#[cfg(test)]
pub(super) fn split_mbox(data: &[u8]) -> Vec<Vec<u8>> {
    crate::mail::mbox::messages(data)
        .into_iter()
        .map(|m| m.into_owned())
        .collect()
}

#[cfg(test)]
fn parse_one(raw: &[u8]) -> Result<Mail> {
    Ok(Mail::from_message(message::parse(raw)?))
}

/// The patches among `mails`, in series order when every one is numbered
/// (a lore thread mbox may list them in arrival order). Two patches with
/// the same number mean two versions of a series were mixed, which would
/// apply both, so that is an error.
pub(super) fn series<'a>(mails: impl IntoIterator<Item = &'a Mail>) -> Result<Vec<&'a Mail>> {
    let mut patches: Vec<&Mail> = mails.into_iter().filter(|m| m.is_patch()).collect();
    if patches.iter().all(|m| m.number().is_some()) {
        patches.sort_by_key(|m| m.number());
        if let Some(w) = patches.windows(2).find(|w| w[0].number() == w[1].number()) {
            bail!(
                "two patches are numbered {}: '{}' and '{}' (more than one version of a series?); keep one",
                w[0].number().unwrap_or_default(),
                w[0].subject,
                w[1].subject
            );
        }
    }
    Ok(patches)
}

/// The patches a Message-ID stands for among `mails`: the patch itself,
/// or for a cover letter the series that replies to it. `None` when no
/// mail has that id.
pub(super) fn select<'a>(mails: &'a [Mail], msgid: &str) -> Option<Result<Vec<&'a Mail>>> {
    let found = mails
        .iter()
        .find(|m| m.message_id.as_deref() == Some(msgid))?;
    if found.diff.is_some() {
        return Some(Ok(vec![found]));
    }
    let replies = mails.iter().filter(|m| m.refs.iter().any(|r| r == msgid));
    Some(series(replies))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(subject: &str, id: &str, refs: &[&str], diff: bool) -> Mail {
        Mail {
            subject: subject.into(),
            message_id: Some(id.into()),
            refs: refs.iter().map(|s| s.to_string()).collect(),
            diff: diff.then(|| "diff --git a/f b/f\n".to_string()),
        }
    }

    #[test]
    fn mboxrd_from_lines_are_unescaped_and_split() {
        let mbox = b"From a@b Thu Jan  1 00:00:00 1970\nSubject: one\n\n>From here\n>>From there\n\nFrom b@c Thu Jan  1 00:00:00 1970\nSubject: two\n\nbody\n";
        let parts = split_mbox(mbox);
        assert_eq!(parts.len(), 2);
        let first = String::from_utf8(parts[0].clone()).unwrap();
        assert!(first.contains("\nFrom here\n>From there\n"), "{first}");
        assert!(String::from_utf8_lossy(&parts[1]).starts_with("Subject: two"));
    }

    #[test]
    fn a_single_mail_is_not_split_at_body_from_lines() {
        let one = b"Subject: x\n\nhello\n\nFrom the top\n";
        assert_eq!(split_mbox(one).len(), 1);
    }

    #[test]
    fn headers_are_unfolded_and_ids_bare() {
        let raw = b"Subject: [PATCH 2/3] a long\n\tsubject\nMessage-ID: <x@y>\nIn-Reply-To: <c@y>\nReferences: <r@y>\n <c@y>\n\nno diff\n";
        let m = parse_one(raw).unwrap();
        assert_eq!(m.subject, "[PATCH 2/3] a long subject");
        assert_eq!(m.message_id.as_deref(), Some("x@y"));
        assert_eq!(m.refs, vec!["c@y", "r@y", "c@y"]);
        assert_eq!(m.diff, None);
        assert_eq!(m.number(), Some(2));
    }

    #[test]
    fn a_diff_in_a_base64_attachment_is_found() {
        let raw = "Subject: [PATCH] x\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"B\"\n\n--B\nContent-Type: text/plain\n\nSee attached.\n--B\nContent-Type: text/x-patch\nContent-Transfer-Encoding: base64\n\nZGlmZiAtLWdpdCBhL2YgYi9mCi0tLSBhL2YKKysrIGIvZgpAQCAtMSArMSBAQAotYQorYgo=\n--B--\n";
        let m = parse_one(raw.as_bytes()).unwrap();
        assert_eq!(
            m.diff.as_deref(),
            Some("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n")
        );
    }

    #[test]
    fn series_sorts_by_number_and_skips_cover_and_replies() {
        let mails = [
            mail("[PATCH v2 2/2] b", "2", &["0"], true),
            mail("[PATCH v2 0/2] cover", "0", &[], false),
            mail("Re: [PATCH v2 1/2] a", "r", &["1"], true),
            mail("[PATCH v2 1/2] a", "1", &["0"], true),
        ];
        let s: Vec<&str> = series(&mails)
            .unwrap()
            .iter()
            .map(|m| m.subject.as_str())
            .collect();
        assert_eq!(s, vec!["[PATCH v2 1/2] a", "[PATCH v2 2/2] b"]);
    }

    #[test]
    fn two_versions_of_one_number_are_refused() {
        let mails = [
            mail("[PATCH 1/2] a", "1", &[], true),
            mail("[PATCH v2 1/2] a", "2", &[], true),
        ];
        let err = series(&mails).unwrap_err().to_string();
        assert!(err.contains("two patches are numbered 1"), "{err}");
    }

    #[test]
    fn select_takes_a_patch_or_a_cover_letters_series() {
        let mails = [
            mail("[PATCH 0/2] cover", "c", &[], false),
            mail("[PATCH 2/2] b", "p2", &["c"], true),
            mail("[PATCH 1/2] a", "p1", &["c"], true),
        ];
        let subjects = |id| -> Vec<String> {
            select(&mails, id)
                .unwrap()
                .unwrap()
                .iter()
                .map(|m| m.subject.clone())
                .collect()
        };
        assert_eq!(subjects("p2"), vec!["[PATCH 2/2] b"]);
        assert_eq!(subjects("c"), vec!["[PATCH 1/2] a", "[PATCH 2/2] b"]);
        assert!(select(&mails, "nope").is_none());
    }
}
