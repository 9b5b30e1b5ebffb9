//! The reply a reviewer would send: headers that thread it under the
//! mail (`In-Reply-To`, `References`), the mail's table quoted, and
//! `lab report --format reply` below it, every line of lab's own text at
//! most 72 columns. It goes into an outbox maildir; nothing is sent.

use super::state::Row;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The parts of a reply, before it is a mail.
pub struct Reply<'a> {
    pub to: &'a Row,
    /// The raw mail replied to, for its To and Cc and its tables.
    pub raw: &'a [u8],
    /// `From:` of the robot.
    pub from: &'a str,
    /// What the budget cut, if anything.
    pub note: &'a str,
    /// `lab report --format reply` of the run.
    pub body: &'a str,
    /// The run directory, named in a header for the reviewer.
    pub run_dir: &'a str,
    /// `Date:`, RFC 2822, and a token that makes the Message-ID unique.
    pub date: String,
    pub token: String,
}

/// The whole reply mail, headers and body.
pub fn compose(r: &Reply) -> String {
    let subject = if crate::mail::message::is_reply(&r.to.subject) {
        r.to.subject.clone()
    } else {
        format!("Re: {}", r.to.subject)
    };
    let (to_list, cc_list) = recipients(r.raw, &r.to.author, r.from);
    let mut refs = r.to.refs.clone();
    refs.push(r.to.msgid.clone());
    refs.dedup();
    let mut h = vec![
        format!("From: {}", one_line(r.from)),
        format!("To: {}", one_line(&to_list)),
    ];
    if !cc_list.is_empty() {
        h.push(format!("Cc: {}", one_line(&cc_list)));
    }
    h.push(format!("Subject: {}", one_line(&subject)));
    h.push(format!("Date: {}", r.date));
    h.push(format!(
        "Message-ID: <lab-watch.{}.{}@localhost>",
        r.token,
        crate::util::prefix(&crate::util::hash_bytes(r.to.msgid.as_bytes()), 12)
    ));
    h.push(format!("In-Reply-To: <{}>", one_line(&r.to.msgid)));
    h.push(fold(
        "References:",
        &refs
            .iter()
            .map(|x| format!("<{}>", one_line(x)))
            .collect::<Vec<_>>(),
    ));
    h.push(format!("X-Lab-Run: {}", one_line(r.run_dir)));
    h.push("MIME-Version: 1.0".into());
    h.push("Content-Type: text/plain; charset=utf-8".into());
    h.push("Content-Transfer-Encoding: 8bit".into());
    let mut body = String::new();
    let who = if r.to.author.is_empty() {
        "you".to_string()
    } else {
        one_line(&r.to.author)
    };
    if r.to.date.is_empty() {
        body.push_str(&format!("{who} wrote:\n"));
    } else {
        body.push_str(&format!("On {}, {who} wrote:\n", one_line(&r.to.date)));
    }
    for l in quoted_tables(r.raw) {
        body.push_str(&format!("> {l}\n").replace("> \n", ">\n"));
    }
    body.push('\n');
    let intro = "lab reran the numbers of this mail in QEMU: the kernels \
                 before and after the patch, built from the same tree and \
                 config. The mail's values are beside lab's below.";
    for l in crate::util::wrap_words(intro, 72) {
        body.push_str(&l);
        body.push('\n');
    }
    if !r.note.is_empty() {
        body.push('\n');
        for l in crate::util::wrap_words(&format!("Only a slice ran: {}.", r.note), 72) {
            body.push_str(&l);
            body.push('\n');
        }
    }
    body.push('\n');
    body.push_str(r.body.trim_end());
    body.push_str("\n\n-- \nDrafted by lab watch and not sent: a person reads it first.\n");
    format!("{}\n\n{body}", h.join("\n"))
}

/// The mail's author, and its To and Cc, without the robot itself.
fn recipients(raw: &[u8], author: &str, from: &str) -> (String, String) {
    use mailparse::MailHeaderMap;
    let body = super::classify::strip_from_line(raw);
    let (mut to, mut cc) = (Vec::new(), Vec::new());
    if let Ok((headers, _)) = mailparse::parse_headers(body) {
        for (k, list) in [("To", &mut to), ("Cc", &mut cc)] {
            for v in headers.get_all_values(k) {
                list.extend(v.split(',').map(|s| s.trim().to_string()));
            }
        }
    }
    let mut cc: Vec<String> = to.into_iter().chain(cc).collect();
    cc.retain(|a| !a.is_empty() && a != from && a != author);
    cc.dedup();
    (author.to_string(), cc.join(", "))
}

/// The lines of the mail's own tables (not its quotes), each with the
/// few caption lines above it, as `lab claims extract` found them.
fn quoted_tables(raw: &[u8]) -> Vec<String> {
    let body = super::classify::strip_from_line(raw);
    let Ok(m) = crate::mail::message::parse(body) else {
        return vec![];
    };
    let Some(text) = m.plain_texts().next() else {
        return vec![];
    };
    let lines: Vec<&str> = text.lines().collect();
    let tables = crate::mail::claims::extract_text(text);
    let mut out: Vec<String> = Vec::new();
    for t in tables.iter().filter(|t| t.quote_depth == 0).take(3) {
        let start = t.line.saturating_sub(1).min(lines.len());
        // The caption: up to three lines right above, or above one blank.
        let c = if start > 0 && lines[start - 1].trim().is_empty() {
            start - 1
        } else {
            start
        };
        let mut top = c;
        while top > 0 && c - top < 3 && !lines[top - 1].trim().is_empty() {
            top -= 1;
        }
        if top == c {
            top = start;
        }
        let mut end = start;
        while end < lines.len() && !lines[end].trim().is_empty() && end - start < 40 {
            end += 1;
        }
        if !out.is_empty() {
            out.push(String::new());
        }
        out.extend(lines[top..end.max(top)].iter().map(|l| l.to_string()));
    }
    // Quoted text is the mail's own; a line past 72 columns (with "> ")
    // is cut rather than rewrapped, which would break a table.
    out.into_iter()
        .map(|l| super::index::clip(&expand_tabs(&l), 70))
        .collect()
}

/// Tabs to spaces at 8-column stops, as a mail reader shows them.
fn expand_tabs(l: &str) -> String {
    let mut out = String::new();
    for ch in l.chars() {
        if ch == '\t' {
            let n = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', n));
        } else {
            out.push(ch);
        }
    }
    out
}

/// A header value on one line, control bytes escaped.
fn one_line(s: &str) -> String {
    crate::util::escape_controls(&s.replace(['\r', '\n'], " ")).into_owned()
}

/// `References:` folded at 72 columns.
fn fold(name: &str, items: &[String]) -> String {
    let mut out = name.to_string();
    let mut col = out.len();
    for i in items {
        if col + 1 + i.len() > 72 && col > name.len() {
            out.push_str("\n ");
            col = 1;
        } else {
            out.push(' ');
            col += 1;
        }
        out.push_str(i);
        col += i.len();
    }
    out
}

/// Deliver into a maildir the way maildir writers do: write in `tmp/`,
/// then rename into `new/`, so a reader never sees half a mail.
pub fn deliver(outbox: &Path, name: &str, text: &str) -> Result<PathBuf> {
    for d in ["tmp", "new", "cur"] {
        std::fs::create_dir_all(outbox.join(d))
            .with_context(|| format!("creating {}", outbox.join(d).display()))?;
    }
    let tmp = outbox.join("tmp").join(name);
    let dst = outbox.join("new").join(name);
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &dst).with_context(|| format!("moving {} into new/", tmp.display()))?;
    Ok(dst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::state::{Kind, Status, Work};

    #[test]
    fn a_reply_threads_under_the_mail_and_quotes_its_table() {
        let raw = b"From: Ann <ann@example.org>\nTo: Bob <bob@example.org>\nCc: list@vger.kernel.org\nSubject: [PATCH] dm: x\nMessage-ID: <p1@example.org>\nDate: Mon, 2 Nov 2026 09:40:12 +0100\n\nMean latency in ms:\n\n\tdelay\tbefore\tafter\n\t1\t9.97\t1.16\n\t2\t9.97\t2.38\n\nSigned-off-by: Ann\n";
        let row = Row {
            msgid: "p1@example.org".into(),
            subject: "[PATCH] dm: x".into(),
            author: "Ann <ann@example.org>".into(),
            date: "Mon, 2 Nov 2026 09:40:12 +0100".into(),
            refs: vec!["c0@example.org".into()],
            kind: Kind::Patch,
            series: None,
            part: None,
            total: None,
            numbers: 4,
            mail: "m".into(),
            first_seen: 0,
            status: Status::Running,
            reason: String::new(),
            work: Work::default(),
        };
        let text = compose(&Reply {
            to: &row,
            raw,
            from: "lab watch <lab@localhost>",
            note: "",
            body: "Claim 1 ...\nVerdict: acceptable.",
            run_dir: "runs/x",
            date: "Tue, 3 Nov 2026 10:00:00 +0000".into(),
            token: "t1".into(),
        });
        let m = mailparse::parse_mail(text.as_bytes()).unwrap();
        use mailparse::MailHeaderMap;
        let h = |k: &str| m.headers.get_first_value(k).unwrap();
        assert_eq!(h("Subject"), "Re: [PATCH] dm: x");
        assert_eq!(h("In-Reply-To"), "<p1@example.org>");
        assert_eq!(h("References"), "<c0@example.org> <p1@example.org>");
        assert_eq!(h("To"), "Ann <ann@example.org>");
        assert_eq!(h("Cc"), "Bob <bob@example.org>, list@vger.kernel.org");
        let body = m.get_body().unwrap();
        assert!(body.contains("> Mean latency in ms:"), "{body}");
        assert!(body.contains(">         1       9.97    1.16"), "{body}");
        assert!(body.contains("Verdict: acceptable."));
        assert!(body.lines().all(|l| l.chars().count() <= 72), "{body}");
    }
}
