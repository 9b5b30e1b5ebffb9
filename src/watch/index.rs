//! `lab watch status` and the outbox's `index.html`: one row per
//! message, with its state, the claims its draft bound, the verdict and
//! where the reply is. Pure renderers over the state's rows.

use super::state::{Row, Status};

/// The row's cells, as both renderers show them.
struct Cells {
    when: String,
    msgid: String,
    subject: String,
    status: &'static str,
    claims: String,
    verdict: String,
    reply: String,
    reason: String,
}

fn cells(r: &Row) -> Cells {
    let claims = match (r.work.bound, r.work.claims) {
        (Some(b), Some(c)) => format!("{c} ({b} values)"),
        _ => "-".into(),
    };
    let when = chrono::DateTime::from_timestamp(r.first_seen, 0)
        .map(|t| t.format("%m-%d %H:%M").to_string())
        .unwrap_or_default();
    Cells {
        when,
        msgid: r.msgid.clone(),
        subject: r.subject.clone(),
        status: r.status.as_str(),
        claims,
        verdict: r.work.verdict.clone().unwrap_or_else(|| "-".into()),
        reply: r.work.reply.clone().unwrap_or_else(|| "-".into()),
        reason: r.reason.clone(),
    }
}

/// At most `n` characters, control bytes escaped, a cut marked `~`: a
/// table cell or a quoted line that must keep its width.
pub(super) fn clip(s: &str, n: usize) -> String {
    let s = crate::util::escape_controls(s);
    if s.chars().count() > n {
        s.chars().take(n - 1).collect::<String>() + "~"
    } else {
        s.into_owned()
    }
}

/// A plain-text table, widest columns clipped so a row stays on one
/// line of a wide terminal; the reason goes on a line of its own.
pub fn text(rows: &[Row], counts: &[(Status, u32)]) -> String {
    let head = [
        "seen",
        "message-id",
        "subject",
        "state",
        "claims",
        "verdict",
        "reply",
    ];
    let body: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            let c = cells(r);
            [
                c.when,
                clip(&c.msgid, 28),
                clip(&c.subject, 40),
                c.status.to_string(),
                c.claims,
                clip(&c.verdict, 30),
                clip(&c.reply, 40),
            ]
        })
        .collect();
    let mut width = head.map(str::len);
    for b in &body {
        for (i, c) in b.iter().enumerate() {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |cols: &[String]| {
        let mut s = String::new();
        for (i, c) in cols.iter().enumerate() {
            if i + 1 == cols.len() {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  ", w = width[i]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&head.map(String::from));
    for (b, r) in body.iter().zip(rows) {
        out.push_str(&line(b));
        if !r.reason.is_empty() {
            out.push_str(&format!("    {}\n", clip(&r.reason, 200)));
        }
    }
    let total: Vec<String> = counts
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    out.push_str(&format!(
        "{} message(s): {}\n",
        counts.iter().map(|c| c.1).sum::<u32>(),
        if total.is_empty() {
            "none yet".into()
        } else {
            total.join(", ")
        }
    ));
    out
}

fn esc(s: &str) -> String {
    crate::util::escape_controls(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `index.html`: the same table, each row linked to its run's report
/// and its reply (paths relative to the watch directory).
pub fn html(
    rows: &[Row],
    counts: &[(Status, u32)],
    report_of: &dyn Fn(&Row) -> Option<String>,
) -> String {
    let mut s = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <title>lab watch</title>\n<style>\n\
         body{font-family:sans-serif;margin:1.5em}\n\
         table{border-collapse:collapse}\n\
         td,th{border:1px solid #bbb;padding:.25em .5em;text-align:left;vertical-align:top}\n\
         td.reason{color:#555;font-size:90%}\n\
         .replied{background:#eef8ee}.draft-failed,.run-failed,.malformed{background:#fbeeee}\n\
         .over-budget,.waiting,.queued,.running{background:#fff8e5}\n\
         </style></head><body>\n<h1>lab watch</h1>\n",
    );
    let total: Vec<String> = counts
        .iter()
        .map(|(st, n)| format!("{n} {}", st.as_str()))
        .collect();
    s.push_str(&format!("<p>{}</p>\n", esc(&total.join(", "))));
    s.push_str("<table>\n<tr><th>seen</th><th>message</th><th>state</th><th>claims</th><th>verdict</th><th>report</th><th>reply</th></tr>\n");
    for r in rows {
        let c = cells(r);
        let report = match report_of(r) {
            Some(p) => format!("<a href=\"{}\">report</a>", esc(&p)),
            None => "-".into(),
        };
        let reply = match &r.work.reply {
            Some(p) => format!("<a href=\"{}\">reply</a>", esc(p)),
            None => "-".into(),
        };
        s.push_str(&format!(
            "<tr class=\"{st}\"><td>{}</td><td>{}<br><small>&lt;{}&gt;</small></td><td>{st}</td><td>{}</td><td>{}</td><td>{report}</td><td>{reply}</td></tr>\n",
            esc(&c.when),
            esc(&c.subject),
            esc(&c.msgid),
            esc(&c.claims),
            esc(&c.verdict),
            st = c.status,
        ));
        if !c.reason.is_empty() {
            s.push_str(&format!(
                "<tr class=\"{}\"><td></td><td class=\"reason\" colspan=\"6\">{}</td></tr>\n",
                c.status,
                esc(&clip(&c.reason, 500))
            ));
        }
    }
    s.push_str("</table>\n</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::state::{Kind, Work};

    #[test]
    fn hostile_subjects_are_escaped_in_both_renderers() {
        let r = Row {
            msgid: "a@b".into(),
            subject: "<script>alert(1)</script>\x1b[31m".into(),
            author: String::new(),
            date: String::new(),
            refs: vec![],
            kind: Kind::Patch,
            series: None,
            part: None,
            total: None,
            numbers: 0,
            mail: "m".into(),
            first_seen: 0,
            status: Status::Replied,
            reason: "why".into(),
            work: Work {
                reply: Some("outbox/new/x".into()),
                ..Work::default()
            },
        };
        let h = html(std::slice::from_ref(&r), &[(Status::Replied, 1)], &|_| None);
        assert!(!h.contains("<script>") && h.contains("&lt;script&gt;"));
        assert!(!h.contains('\x1b'));
        let t = text(&[r], &[(Status::Replied, 1)]);
        assert!(!t.contains('\x1b') && t.contains("replied") && t.contains("1 replied"));
    }
}
