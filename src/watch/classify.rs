//! What a new message is: a patch (or a series' cover letter), a reply,
//! something else, or not a mail at all; and whether its author's own
//! text holds numbers. Pure: bytes in, a row out.

use super::state::{Kind, Row, Status, Work};
use crate::mail::claims as mail_claims;
use crate::mail::message;
use crate::mail::model::Value;
use std::sync::LazyLock;

/// `[PATCH v3 2/5]`, `[RFC PATCH 0/3]`, `[PATCH net-next]`: the tag of a
/// patch mail, its version and its place in a series.
static TAG: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)^\s*\[([^\]]*\b(?:PATCH\w*|RFC)\b[^\]]*)\]").expect("valid regex")
});
static PART: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"\b(\d{1,4})/(\d{1,4})\s*$").expect("valid regex"));
static VERSION: LazyLock<regex::Regex> =
    LazyLock::new(|| regex::Regex::new(r"(?i)\bv(\d{1,3})\b").expect("valid regex"));

/// The key of a mail without a usable Message-ID: its bytes' hash, so a
/// resend of the same bytes is still recognised.
pub fn fallback_id(raw: &[u8]) -> String {
    format!(
        "sha:{}",
        crate::util::prefix(&crate::util::hash_bytes(raw), 24)
    )
}

/// The row for a message first seen now; `mail` is where its raw bytes
/// are stored, relative to the watch directory.
pub fn classify(raw: &[u8], mail: &str, now: i64) -> Row {
    let malformed = |why: String| Row {
        msgid: fallback_id(raw),
        subject: String::new(),
        author: String::new(),
        date: String::new(),
        refs: vec![],
        kind: Kind::Malformed,
        series: None,
        part: None,
        total: None,
        numbers: 0,
        mail: mail.into(),
        first_seen: now,
        status: Status::Malformed,
        reason: why,
        work: Work::default(),
    };
    // Past an mbox's `From ` line, a mail starts with its headers.
    let body = strip_from_line(raw);
    if !message::looks_like_mail(body) {
        return malformed("no mail headers".into());
    }
    let m = match std::panic::catch_unwind(|| message::parse(body)) {
        Ok(Ok(m)) => m,
        Ok(Err(e)) => return malformed(format!("not a readable mail: {e:#}")),
        Err(_) => return malformed("the mail parser failed on it".into()),
    };
    let Some(msgid) = m.message_id.clone().filter(|id| !id.trim().is_empty()) else {
        return malformed("no Message-ID, so no reply could point at it".into());
    };
    let numbers = own_numbers(body);
    let tag = TAG.captures(&m.subject).map(|c| c[1].to_string());
    let (part, total) = tag
        .as_deref()
        .and_then(|t| PART.captures(t))
        .map_or((None, None), |c| (c[1].parse().ok(), c[2].parse().ok()));
    let reply = message::is_reply(&m.subject);
    let kind = match (&tag, reply) {
        (Some(_), false) => Kind::Patch,
        (_, true) => Kind::Reply,
        (None, false) if !m.refs.is_empty() => Kind::Reply,
        _ => Kind::Other,
    };
    // A numbered series is keyed by its thread root (the cover letter,
    // or patch 1 when there is none) and its version, so a v2 sent in
    // reply to v1 is a series of its own.
    let series = (kind == Kind::Patch && total.is_some_and(|t: u32| t > 1)).then(|| {
        let root = m.refs.first().cloned().unwrap_or_else(|| msgid.clone());
        let v = tag
            .as_deref()
            .and_then(|t| VERSION.captures(t))
            .map_or("1".to_string(), |c| c[1].to_string());
        format!("{root}#v{v}")
    });
    Row {
        msgid,
        subject: m.subject.clone(),
        author: m.author.clone().unwrap_or_default(),
        date: m.date.clone().unwrap_or_default(),
        refs: m.refs.clone(),
        kind,
        series,
        part,
        total,
        numbers,
        mail: mail.into(),
        first_seen: now,
        status: Status::New,
        reason: String::new(),
        work: Work::default(),
    }
}

/// The raw mail without an mbox `From ` separator line.
pub fn strip_from_line(raw: &[u8]) -> &[u8] {
    if raw.starts_with(b"From ") {
        match raw.iter().position(|&b| b == b'\n') {
            Some(i) => &raw[i + 1..],
            None => &[],
        }
    } else {
        raw
    }
}

/// Numbers in tables the mail's author wrote (not in quoted text).
fn own_numbers(raw: &[u8]) -> u32 {
    let Ok(Ok(tables)) = std::panic::catch_unwind(|| mail_claims::extract(raw)) else {
        return 0;
    };
    tables
        .iter()
        .filter(|t| t.quote_depth == 0)
        .flat_map(|t| &t.rows)
        .flat_map(|r| &r.values)
        .filter(|v| matches!(v, Value::Number { .. }))
        .count()
        .try_into()
        .unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mail(subject: &str, extra: &str, body: &str) -> Vec<u8> {
        format!(
            "From: A <a@example.org>\nSubject: {subject}\nMessage-ID: <id1@example.org>\n{extra}\n{body}"
        )
        .into_bytes()
    }

    #[test]
    fn a_series_patch_is_keyed_by_its_root_and_version() {
        let r = classify(
            &mail(
                "[PATCH v2 3/5] blk-mq: x",
                "In-Reply-To: <cover@x>\nReferences: <cover@x>\n",
                "text\n",
            ),
            "m",
            1,
        );
        assert_eq!(r.kind, Kind::Patch);
        assert_eq!((r.part, r.total), (Some(3), Some(5)));
        assert_eq!(r.series.as_deref(), Some("cover@x#v2"));
        assert_eq!(r.numbers, 0);
    }

    #[test]
    fn replies_others_and_numbers() {
        let body =
            "Results:\n\n\tdelay\tbefore\tafter\n\t1\t9.97\t1.16\n\t2\t9.97\t2.38\n\n> \tq\t1\t2\n";
        let r = classify(&mail("Re: [PATCH] x", "In-Reply-To: <p@x>\n", body), "m", 1);
        assert_eq!(r.kind, Kind::Reply);
        assert_eq!(r.numbers, 4, "{r:?}");
        let o = classify(&mail("Weekly status", "", "nothing\n"), "m", 1);
        assert_eq!(o.kind, Kind::Other);
        let single = classify(&mail("[PATCH] dm: y", "", "z\n"), "m", 1);
        assert_eq!((single.kind, single.series), (Kind::Patch, None));
    }

    #[test]
    fn not_a_mail_is_malformed_and_keyed_by_its_bytes() {
        let r = classify(b"\x00\x01 garbage", "m", 1);
        assert_eq!(r.status, Status::Malformed);
        assert!(r.msgid.starts_with("sha:"));
        assert_eq!(r.msgid, classify(b"\x00\x01 garbage", "n", 2).msgid);
        let no_id = classify(b"From: a@b\nSubject: hi\n\nbody\n", "m", 1);
        assert_eq!(no_id.status, Status::Malformed, "{no_id:?}");
    }
}
