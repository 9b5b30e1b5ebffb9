//! Knobs: sysfs and procfs files that tune the block layer.
//!
//! Some knobs accept any write and do nothing (in 6.12, `io_poll_delay`
//! always reads -1; `io_poll` logs that writes are ignored). A run that
//! says "with hybrid polling" on such a kernel reports a fiction.
//!
//! Whether a knob is honoured is decided by what the running kernel did:
//! the value read back after the write, a probe write when the knob
//! already had the wanted value (else a knob that stores nothing would
//! look fine), and the kernel log lines that appeared between this
//! knob's write and its last read-back. Log lines from an earlier knob
//! never count against a later one. The list of known-ignored knobs only
//! explains a verdict; it never makes one.

use super::ssh::Session;
pub use crate::record::knob::{
    Knob, KnobStatus, ProbeWrite, judge, known_ignored, probe_value, shown_value, version_of,
};
use anyhow::{Result, bail};

/// A mark in the kernel log unique to one write, so the log lines after
/// it belong to that write only.
fn log_mark() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    format!(
        "lab-knob-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

async fn read(s: &Session, q: &str, what: &str) -> Result<String> {
    Ok(s.exec(&format!("cat {q}")).await?.check(what)?.stdout)
}

/// Write a knob, read it back (with a probe write when it already had
/// the value), and read the kernel log of exactly this window.
pub async fn set(s: &Session, path: &str, value: &str, kernel: Option<(u32, u32)>) -> Result<Knob> {
    let q = crate::util::shell_quote(path);
    let v = crate::util::shell_quote(value);
    let before = read(s, &q, &format!("reading {path}")).await?;
    let mark = log_mark();
    let w = s
        .exec(&format!("echo {mark} > /dev/kmsg; echo {v} > {q}"))
        .await?;
    if !w.ok() {
        bail!("writing '{value}' to {path} failed: {}", w.stderr.trim());
    }
    let mut after = read(s, &q, &format!("reading {path} back")).await?;
    let mut probe = None;
    if shown_value(&after) == value.trim()
        && let Some(p) = probe_value(value, &before)
    {
        let pw = s
            .exec(&format!("echo {} > {q}", crate::util::shell_quote(&p)))
            .await?;
        if pw.ok() {
            let got = read(s, &q, &format!("reading {path} after a probe")).await?;
            s.exec(&format!("echo {v} > {q}"))
                .await?
                .check(&format!("writing '{value}' to {path} after a probe"))?;
            after = read(s, &q, &format!("reading {path} back")).await?;
            probe = Some(ProbeWrite {
                wrote: p,
                read_back: shown_value(&got),
            });
        }
    }
    let log = s
        .exec(&format!(
            "dmesg | sed -n '/{mark}/,$p' | sed 1d | tail -n 20"
        ))
        .await?
        .stdout;
    let lines: Vec<String> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect();
    Ok(judge(path, value, &before, &after, probe, kernel, &lines))
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

    const DELAY: &str = "/sys/block/nvme0n1/queue/io_poll_delay";
    const POLL: &str = "/sys/block/nvme0n1/queue/io_poll";
    const POLL_LOG: &str = "[   12.3] writes to the poll attribute are ignored.";

    fn probe(wrote: &str, read_back: &str) -> Option<ProbeWrite> {
        Some(ProbeWrite {
            wrote: wrote.into(),
            read_back: read_back.into(),
        })
    }

    #[test]
    fn io_poll_delay_on_6_1_is_honoured_for_every_value() {
        // 6.1 stores -1, 0 and 10; -1 is its default, so it takes a probe.
        let k = judge(DELAY, "-1", "-1", "-1", probe("0", "0"), Some((6, 1)), &[]);
        assert_eq!(k.status, KnobStatus::Honoured, "{k:?}");
        assert_eq!((k.reason, k.known), (None, None));
        for v in ["0", "10"] {
            let k = judge(DELAY, v, "-1", v, None, Some((6, 1)), &[]);
            assert_eq!(k.status, KnobStatus::Honoured, "{v}: {k:?}");
        }
    }

    #[test]
    fn one_knob_is_honoured_on_6_1_and_ignored_on_6_12() {
        let on61 = judge(DELAY, "10", "-1", "10", None, Some((6, 1)), &[]);
        let on612 = judge(DELAY, "10", "-1", "-1", None, Some((6, 12)), &[]);
        assert_eq!(on61.status, KnobStatus::Honoured);
        assert_eq!(on612.status, KnobStatus::Ignored);
        assert_eq!(on612.reason.as_deref(), Some("wrote '10', read back '-1'"));
        assert!(on612.known.unwrap().contains("always reads -1"));
        // -1 reads back on 6.12 too; the probe shows the knob keeps nothing.
        let k = judge(
            DELAY,
            "-1",
            "-1",
            "-1",
            probe("0", "-1"),
            Some((6, 12)),
            &[],
        );
        assert_eq!(k.status, KnobStatus::Ignored, "{k:?}");
        assert!(
            k.reason
                .unwrap()
                .contains("probe write of '0' read back '-1'")
        );
    }

    #[test]
    fn io_poll_is_honoured_on_5_10_and_ignored_on_6_1() {
        // 5.10 stores the flag: the probe (0) reads back 0.
        let k = judge(POLL, "1", "1", "1", probe("0", "0"), Some((5, 10)), &[]);
        assert_eq!(k.status, KnobStatus::Honoured, "{k:?}");
        let k = judge(POLL, "0", "1", "0", None, Some((5, 10)), &[]);
        assert_eq!(k.status, KnobStatus::Honoured, "{k:?}");
        // 6.1 keeps reading 1 whatever is written.
        let k = judge(POLL, "0", "1", "1", None, Some((6, 1)), &[POLL_LOG.into()]);
        assert_eq!(k.status, KnobStatus::Ignored);
        assert_eq!(k.reason.as_deref(), Some("wrote '0', read back '1'"));
        assert!(k.known.unwrap().contains("writes to the poll attribute"));
    }

    #[test]
    fn the_list_of_known_ignored_knobs_never_decides() {
        // A 6.12 kernel that (say, patched) keeps the value is honoured.
        let k = judge(DELAY, "10", "-1", "10", None, Some((6, 12)), &[]);
        assert_eq!(k.status, KnobStatus::Honoured);
        assert_eq!(k.known, None);
    }

    #[test]
    fn a_log_line_counts_only_in_its_own_write_s_window() {
        // io_poll on 6.1 reads back 1 but logs that the write was ignored.
        let poll = judge(
            POLL,
            "1",
            "1",
            "1",
            probe("0", "1"),
            Some((6, 1)),
            &[POLL_LOG.to_string()],
        );
        assert_eq!(poll.status, KnobStatus::Ignored);
        assert!(
            poll.reason
                .as_deref()
                .unwrap()
                .contains("logged after this write: [   12.3] writes to the poll attribute")
        );
        assert_eq!(poll.log, [POLL_LOG]);
        // The delay knob written next has its own, empty window.
        let delay = judge(DELAY, "0", "-1", "0", None, Some((6, 1)), &[]);
        assert_eq!(delay.status, KnobStatus::Honoured);
        // An unrelated log line in the window does not count.
        let k = judge(
            DELAY,
            "0",
            "-1",
            "0",
            None,
            Some((6, 1)),
            &["nvme nvme0: 1/0/2 default/read/poll queues".into()],
        );
        assert_eq!(k.status, KnobStatus::Honoured);
    }

    #[test]
    fn a_knob_already_at_the_value_with_no_probe_is_unverified() {
        let k = judge(
            "/sys/block/nullb0/queue/scheduler",
            "none",
            "[none] mq-deadline",
            "[none] mq-deadline",
            None,
            Some((6, 12)),
            &[],
        );
        assert_eq!(k.status, KnobStatus::Unverified);
        assert_eq!(k.status.word(), "unverified");
    }

    #[test]
    fn a_knob_that_reads_back_is_honoured() {
        let k = judge(
            "/sys/block/nullb0/queue/scheduler",
            "none",
            "[mq-deadline] none",
            "[none] mq-deadline",
            None,
            Some((6, 12)),
            &[],
        );
        assert_eq!(k.status, KnobStatus::Honoured);
        assert_eq!(
            (k.before.as_str(), k.after.as_str()),
            ("mq-deadline", "none")
        );
    }

    #[test]
    fn probes_are_integers_next_to_the_wanted_value() {
        assert_eq!(probe_value("-1", "-1\n").as_deref(), Some("0"));
        assert_eq!(probe_value("1", "1").as_deref(), Some("0"));
        assert_eq!(probe_value("0", "0").as_deref(), Some("1"));
        assert_eq!(probe_value("10", "10").as_deref(), Some("11"));
        assert_eq!(probe_value("10", "-1"), None, "the write itself shows it");
        assert_eq!(probe_value("none", "[none] mq-deadline"), None);
    }

    #[test]
    fn old_records_read_applied_as_honoured() {
        let k: Knob = serde_json::from_str(
            r#"{"path":"p","wanted":"1","before":"0","after":"1","status":"applied"}"#,
        )
        .unwrap();
        assert_eq!(k.status, KnobStatus::Honoured);
        assert_eq!(serde_json::to_value(k.status).unwrap(), "honoured");
    }

    #[test]
    fn versions_parse() {
        assert_eq!(version_of("6.12.117"), Some((6, 12)));
        assert_eq!(version_of("6.1.0-26-amd64"), Some((6, 1)));
        assert_eq!(version_of("x"), None);
    }
}
