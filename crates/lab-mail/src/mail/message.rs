//! One mail, parsed: the headers lab keys things by (subject, author,
//! date, Message-ID, the ids it replies to) and its decoded text parts.
//! Patches (`kernel/patch`) and claims (`mail::claims`) both read mails
//! through this, so an mbox is split and decoded one way.

use anyhow::{Context, Result, bail};
use mailparse::{MailHeaderMap, ParsedMail};
use std::path::Path;
use std::process::{Command, Stdio};

/// One mail, reduced to what patches and claims need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    /// Unfolded, whitespace collapsed.
    pub subject: String,
    /// The From header, as written.
    pub author: Option<String>,
    pub date: Option<String>,
    /// Without angle brackets.
    pub message_id: Option<String>,
    /// In-Reply-To and References, without angle brackets: how a series'
    /// patches point at their cover letter.
    pub refs: Vec<String>,
    /// Every leaf part, decoded, with Unix line ends (mail transport may
    /// have made them CRLF).
    pub parts: Vec<Part>,
}

/// A decoded leaf part of a mail.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Part {
    /// `text/plain`, `text/x-patch`, ...
    pub mimetype: String,
    pub text: String,
}

impl Message {
    /// The text/plain parts: what a person wrote.
    pub fn plain_texts(&self) -> impl Iterator<Item = &str> {
        self.parts
            .iter()
            .filter(|p| p.mimetype == "text/plain")
            .map(|p| p.text.as_str())
    }
}

/// `[PATCH 2/3]`'s 2 (`n`, 1) or 3 (`m`, 2), as written.
fn numbered(subject: &str, group: usize) -> Option<u32> {
    static NUM: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\[[^\]]*?\b(\d+)/(\d+)\]").expect("valid regex")
    });
    NUM.captures(subject.trim_start())?[group].parse().ok()
}

/// `[PATCH 2/3]` → 2; a cover letter is 0; None when unnumbered.
pub fn patch_number(subject: &str) -> Option<u32> {
    numbered(subject, 1)
}

/// The `m` of `[PATCH n/m]`: how many patches the series has.
pub fn series_size(subject: &str) -> Option<u32> {
    numbered(subject, 2)
}

/// A mail or text that holds a series as `[PATCH n/m] subject` sections,
/// each with its diff (pasted, or in a plain text file), as one message
/// per section after the text before the first: what a series in an
/// mbox would be. Anything else comes back as it was.
pub fn patch_sections(m: Message) -> Vec<Message> {
    let Some(i) = m.parts.iter().position(|p| p.mimetype == "text/plain") else {
        return vec![m];
    };
    let text = &m.parts[i].text;
    let mut starts: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let l = line.trim_end();
        if patch_number(l).is_some() && l.starts_with("[PATCH") {
            starts.push((at, l));
        }
        at += line.len();
    }
    let sections: Vec<(&str, &str)> = starts
        .iter()
        .enumerate()
        .map(|(k, (s, subject))| {
            let end = starts.get(k + 1).map_or(text.len(), |n| n.0);
            (*subject, &text[*s..end])
        })
        .collect();
    let with_diff = sections
        .iter()
        .filter(|(_, body)| body.contains("\ndiff --git ") || body.contains("\n--- a/"))
        .count();
    if with_diff == 0 {
        return vec![m];
    }
    let mut lead = m.clone();
    lead.parts[i].text = text[..starts[0].0].to_string();
    let mut out = vec![lead];
    for (subject, body) in sections {
        out.push(Message {
            subject: subject.to_string(),
            author: m.author.clone(),
            date: m.date.clone(),
            message_id: None,
            refs: m.message_id.iter().cloned().collect(),
            parts: vec![Part {
                mimetype: "text/plain".into(),
                text: body.to_string(),
            }],
        });
    }
    out
}

/// A reply (`Re:`, `AW:`) may quote or carry a diff that is not part of
/// the series.
pub fn is_reply(subject: &str) -> bool {
    let s = subject.trim_start().to_ascii_lowercase();
    s.starts_with("re:") || s.starts_with("aw:")
}

/// Every mail in an mbox or single-mail file; a missing file is an error
/// that names it.
pub fn read_file(path: &Path) -> Result<Vec<Message>> {
    let data = crate::util::read_input(path, "the mail", crate::util::MAX_MAIL_INPUT)?;
    parse_mbox(&data).with_context(|| format!("parsing mail in {}", path.display()))
}

/// Every mail in mbox data. Data that does not start with a `From ` line
/// is one mail, so a body line starting "From " cannot split it.
pub fn parse_mbox(data: &[u8]) -> Result<Vec<Message>> {
    super::mbox::messages(data)
        .iter()
        .enumerate()
        .map(|(n, raw)| parse(raw).with_context(|| format!("message {} of the mbox", n + 1)))
        .collect()
}

/// One RFC 822 mail.
pub fn parse(raw: &[u8]) -> Result<Message> {
    let mail = mailparse::parse_mail(raw)?;
    let header = |k: &str| mail.headers.get_first_value(k).unwrap_or_default();
    let collapsed = |k: &str| {
        Some(header(k).split_whitespace().collect::<Vec<_>>().join(" ")).filter(|v| !v.is_empty())
    };
    let refs = format!("{} {}", header("In-Reply-To"), header("References"));
    let mut parts = Vec::new();
    leaves(&mail, &mut parts);
    Ok(Message {
        subject: collapsed("Subject").unwrap_or_default(),
        author: collapsed("From"),
        date: collapsed("Date"),
        message_id: msgids(&header("Message-ID")).into_iter().next(),
        refs: msgids(&refs),
        parts,
    })
}

fn leaves(mail: &ParsedMail, out: &mut Vec<Part>) {
    if mail.subparts.is_empty() {
        // Without a declared charset, mail bodies today are UTF-8 far
        // more often than the us-ascii the RFC presumes (`±`, `µs`).
        let declared = mail.ctype.params.contains_key("charset");
        // Valid UTF-8 and LF line ends, the usual case, are taken as
        // they are: a 50 MB body is not copied twice more.
        let body = match declared {
            true => mail.get_body().ok(),
            false => mail.get_body_raw().ok().map(|b| {
                String::from_utf8(b)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            }),
        };
        if let Some(body) = body {
            let text = if body.contains('\r') {
                body.replace("\r\n", "\n")
            } else {
                body
            };
            out.push(Part {
                mimetype: mail.ctype.mimetype.to_ascii_lowercase(),
                text,
            });
        }
        return;
    }
    for sub in &mail.subparts {
        leaves(sub, out);
    }
}

/// The ids in a header such as References: `<a@b> <c@d>` → [a@b, c@d].
/// A bare id without brackets is taken whole.
pub fn msgids(value: &str) -> Vec<String> {
    if !value.contains('<') {
        let id = normalize_msgid(value);
        return if id.is_empty() { vec![] } else { vec![id] };
    }
    value
        .split('<')
        .skip(1)
        .filter_map(|s| s.split_once('>'))
        .map(|(id, _)| normalize_msgid(id))
        .filter(|id| !id.is_empty())
        .collect()
}

/// A Message-ID as users write it, with or without `<>`, compared bare.
pub fn normalize_msgid(id: &str) -> String {
    id.trim()
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim()
        .to_string()
}

/// A single RFC 822 mail starts with a header line and has at least one
/// header a mail always has; `before: 120k` in plain text has neither.
pub fn looks_like_mail(raw: &[u8]) -> bool {
    const MAIL_HEADERS: [&str; 6] = ["from", "subject", "message-id", "date", "to", "received"];
    let first = raw.split(|&b| b == b'\n').next().unwrap_or_default();
    let Some(colon) = first.iter().position(|&b| b == b':') else {
        return false;
    };
    if colon == 0 || !first[..colon].iter().all(|&b| b.is_ascii_graphic()) {
        return false;
    }
    mailparse::parse_headers(raw).is_ok_and(|(headers, _)| {
        headers
            .iter()
            .any(|h| MAIL_HEADERS.contains(&h.get_key().to_ascii_lowercase().as_str()))
    })
}

/// The mbox `b4 am` makes for a Message-ID: the whole series, with
/// trailers from the thread, written to stdout by `-o -`.
pub fn b4_am(b4: &Path, msgid: &str) -> Result<Vec<u8>> {
    let out = Command::new(b4)
        .args(["am", "-o", "-", msgid])
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {} am", b4.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.trim().lines().rev().take(5).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!("{} ({})", tail.join(" / "), out.status);
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_unfolded_and_ids_bare() {
        let raw = b"From: A <a@b>\nDate: Mon, 2 Nov 2026 10:00:00 +0000\nSubject: [PATCH 2/3] a long\n\tsubject\nMessage-ID: <x@y>\nIn-Reply-To: <c@y>\nReferences: <r@y>\n <c@y>\n\nno diff\r\n";
        let m = parse(raw).unwrap();
        assert_eq!(m.subject, "[PATCH 2/3] a long subject");
        assert_eq!(m.author.as_deref(), Some("A <a@b>"));
        assert_eq!(m.date.as_deref(), Some("Mon, 2 Nov 2026 10:00:00 +0000"));
        assert_eq!(m.message_id.as_deref(), Some("x@y"));
        assert_eq!(m.refs, vec!["c@y", "r@y", "c@y"]);
        assert_eq!(m.plain_texts().collect::<Vec<_>>(), vec!["no diff\n"]);
    }

    #[test]
    fn msgids_accept_brackets_or_none() {
        assert_eq!(msgids(" <a@b> "), vec!["a@b"]);
        assert_eq!(msgids("a@b"), vec!["a@b"]);
        assert_eq!(msgids(""), Vec::<String>::new());
        assert_eq!(normalize_msgid("<x@y>"), "x@y");
    }

    #[test]
    fn mail_or_plain_text() {
        assert!(looks_like_mail(b"From: a@b\nSubject: x\n\nbody\n"));
        assert!(!looks_like_mail(b"before: 120k\nafter: 180k\n"));
        assert!(!looks_like_mail(b"plain words\n"));
    }
}
