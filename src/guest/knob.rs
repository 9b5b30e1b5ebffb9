//! Knobs: sysfs and procfs files that tune the block layer.
//!
//! Some knobs accept any write and do nothing (in 6.12, `io_poll_delay`
//! always reads -1; `io_poll` logs that writes are ignored). A run that
//! says "with hybrid polling" on such a kernel reports a fiction, so
//! every write is read back, and a knob that did not take is recorded
//! as `ignored`, never as applied.

use super::ssh::Session;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum KnobStatus {
    Applied,
    Ignored,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Knob {
    pub path: String,
    pub wanted: String,
    pub before: String,
    pub after: String,
    pub status: KnobStatus,
    /// Why a knob counts as ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Knobs the kernel is known to accept and ignore, from the version
/// where that was checked in the source.
const KNOWN_IGNORED: &[(&str, (u32, u32), &str)] = &[
    (
        "queue/io_poll_delay",
        (6, 12),
        "hybrid polling is gone: the kernel accepts any write and always reads -1",
    ),
    (
        "queue/io_poll",
        (6, 12),
        "the kernel ignores writes (\"writes to the poll attribute are ignored\"); polling is set by driver parameters such as nvme.poll_queues",
    ),
];

/// `6.12.117` → (6, 12)
pub fn version_of(uname_r: &str) -> Option<(u32, u32)> {
    let mut it = uname_r.split(['.', '-']);
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

pub fn known_ignored(path: &str, kernel: Option<(u32, u32)>) -> Option<&'static str> {
    let k = kernel?;
    KNOWN_IGNORED
        .iter()
        .find(|(suffix, since, _)| path.ends_with(suffix) && k >= *since)
        .map(|(_, _, why)| *why)
}

/// The value a knob shows: for choice knobs like `[none] mq-deadline`,
/// the bracketed choice.
pub fn shown_value(raw: &str) -> String {
    let t = raw.trim();
    if let (Some(a), Some(b)) = (t.find('['), t.find(']'))
        && a < b
    {
        return t[a + 1..b].to_string();
    }
    t.to_string()
}

/// Decide what a write did, from the values before and after.
pub fn judge(
    path: &str,
    wanted: &str,
    before: &str,
    after: &str,
    kernel: Option<(u32, u32)>,
    kernel_log: &str,
) -> Knob {
    let (before, after) = (shown_value(before), shown_value(after));
    let mut reason = None;
    if let Some(why) = known_ignored(path, kernel) {
        reason = Some(why.to_string());
    } else if after != wanted.trim() {
        reason = Some(format!("wrote '{}', read back '{after}'", wanted.trim()));
    } else if kernel_log.contains("are ignored") {
        reason = Some("the kernel logged that the write was ignored".into());
    }
    Knob {
        path: path.to_string(),
        wanted: wanted.trim().to_string(),
        before,
        after,
        status: if reason.is_some() {
            KnobStatus::Ignored
        } else {
            KnobStatus::Applied
        },
        reason,
    }
}

/// Write a knob and read it back.
pub async fn set(s: &Session, path: &str, value: &str, kernel: Option<(u32, u32)>) -> Result<Knob> {
    let q = crate::util::shell_quote(path);
    let before = s
        .exec(&format!("cat {q}"))
        .await?
        .check(&format!("reading {path}"))?
        .stdout;
    let mark = "lab-knob-mark";
    let w = s
        .exec(&format!(
            "echo {mark} > /dev/kmsg; echo {} > {q}",
            crate::util::shell_quote(value)
        ))
        .await?;
    if !w.ok() {
        bail!("writing '{value}' to {path} failed: {}", w.stderr.trim());
    }
    let after = s
        .exec(&format!("cat {q}"))
        .await?
        .check(&format!("reading {path} back"))?
        .stdout;
    let log = s
        .exec(&format!("dmesg | sed -n '/{mark}/,$p' | tail -n 20"))
        .await?
        .stdout;
    Ok(judge(path, value, &before, &after, kernel, &log))
}

/// Put a knob back as it was before the cell.
pub async fn restore(s: &Session, k: &Knob) -> Result<()> {
    if k.before == k.after {
        return Ok(());
    }
    let q = crate::util::shell_quote(&k.path);
    s.exec(&format!(
        "echo {} > {q}",
        crate::util::shell_quote(&k.before)
    ))
    .await?
    .check(&format!("restoring {}", k.path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_poll_delay_on_6_12_is_ignored_even_when_it_reads_back() {
        let k = judge(
            "/sys/block/nvme0n1/queue/io_poll_delay",
            "-1",
            "-1",
            "-1",
            Some((6, 12)),
            "",
        );
        assert_eq!(k.status, KnobStatus::Ignored);
        assert!(k.reason.unwrap().contains("always reads -1"));
        let k = judge(
            "/sys/block/nvme0n1/queue/io_poll_delay",
            "10",
            "-1",
            "-1",
            Some((6, 1)),
            "",
        );
        assert_eq!(k.status, KnobStatus::Ignored, "read-back differs");
    }

    #[test]
    fn a_knob_that_reads_back_is_applied() {
        let k = judge(
            "/sys/block/nullb0/queue/scheduler",
            "none",
            "[mq-deadline] none",
            "[none] mq-deadline",
            Some((6, 12)),
            "",
        );
        assert_eq!(k.status, KnobStatus::Applied);
        assert_eq!(
            (k.before.as_str(), k.after.as_str()),
            ("mq-deadline", "none")
        );
    }

    #[test]
    fn a_logged_ignore_is_ignored() {
        let k = judge(
            "/sys/block/x/queue/nomerges",
            "2",
            "0",
            "2",
            Some((6, 12)),
            "writes to the poll attribute are ignored.",
        );
        assert_eq!(k.status, KnobStatus::Ignored);
    }

    #[test]
    fn versions_parse() {
        assert_eq!(version_of("6.12.117"), Some((6, 12)));
        assert_eq!(version_of("6.1.0-26-amd64"), Some((6, 1)));
        assert_eq!(version_of("x"), None);
    }
}
