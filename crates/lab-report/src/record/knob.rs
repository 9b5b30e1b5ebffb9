//! A knob write as stored in a run, and the verdict on it, decided from
//! what the running kernel did (`guest::knob` makes the writes and
//! read-backs; its header says why each piece of evidence is needed).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KnobStatus {
    /// The kernel kept the value (and a probe value when one was needed).
    #[serde(alias = "applied")]
    Honoured,
    /// The read-back differs from the write, or the kernel logged, right
    /// after the write, that it ignores it.
    Ignored,
    /// The knob already read the wanted value and no probe write was
    /// possible, so nothing shows what the kernel does with it.
    Unverified,
}

impl KnobStatus {
    pub fn word(self) -> &'static str {
        match self {
            KnobStatus::Honoured => "honoured",
            KnobStatus::Ignored => "ignored",
            KnobStatus::Unverified => "unverified",
        }
    }
}

/// A second value written when the knob already had the wanted one.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ProbeWrite {
    pub wrote: String,
    pub read_back: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Knob {
    pub path: String,
    pub wanted: String,
    pub before: String,
    pub after: String,
    pub status: KnobStatus,
    /// What the kernel did that decided the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeWrite>,
    /// Kernel log lines between this knob's write and its last read-back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<String>,
    /// Why the kernel ignores it, from what is known about the version:
    /// given only when the kernel's own behaviour said so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known: Option<String>,
}

/// Knobs the kernel is known to accept and ignore, from the version
/// where that was checked in the source. Explanations only.
const KNOWN_IGNORED: &[(&str, (u32, u32), &str)] = &[
    (
        "queue/io_poll_delay",
        (6, 12),
        "hybrid polling is gone: the kernel accepts any write and always reads -1",
    ),
    (
        "queue/io_poll",
        (6, 1),
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

/// The probe for a knob that already reads `wanted`: another integer
/// (-1 → 0, a boolean's other value, else n → n+1: a boolean such as
/// 5.10's io_poll reads 2 back as 1). Only integers: a choice knob has
/// no safe guess.
pub fn probe_value(wanted: &str, before: &str) -> Option<String> {
    if shown_value(before) != wanted.trim() {
        return None;
    }
    let w: i64 = wanted.trim().parse().ok()?;
    Some(
        match w {
            -1 => 0,
            0 => 1,
            1 => 0,
            n => n + 1,
        }
        .to_string(),
    )
}

/// A log line that says a write was ignored.
fn says_ignored(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    l.contains("ignored") || l.contains("ignoring")
}

/// Decide what a write did, from the kernel's behaviour: the read-back,
/// the probe write, and the log lines of this write's window only.
pub fn judge(
    path: &str,
    wanted: &str,
    before: &str,
    after: &str,
    probe: Option<ProbeWrite>,
    kernel: Option<(u32, u32)>,
    log_window: &[String],
) -> Knob {
    let (before, after) = (shown_value(before), shown_value(after));
    let wanted = wanted.trim().to_string();
    let (status, reason) = if after != wanted {
        (
            KnobStatus::Ignored,
            Some(format!("wrote '{wanted}', read back '{after}'")),
        )
    } else if let Some(line) = log_window.iter().find(|l| says_ignored(l)) {
        (
            KnobStatus::Ignored,
            Some(format!(
                "the kernel logged after this write: {}",
                line.trim()
            )),
        )
    } else if let Some(p) = probe.as_ref().filter(|p| p.read_back != p.wrote) {
        (
            KnobStatus::Ignored,
            Some(format!(
                "it already read '{wanted}', and a probe write of '{}' read back '{}': the knob keeps no value",
                p.wrote, p.read_back
            )),
        )
    } else if probe.is_none() && before == wanted {
        (
            KnobStatus::Unverified,
            Some(format!(
                "it already read '{wanted}' and no probe write was possible, so nothing shows what the kernel does with it"
            )),
        )
    } else {
        (KnobStatus::Honoured, None)
    };
    let known = match status {
        KnobStatus::Honoured => None,
        _ => known_ignored(path, kernel).map(str::to_string),
    };
    Knob {
        path: path.to_string(),
        wanted,
        before,
        after,
        status,
        reason,
        probe,
        log: log_window.to_vec(),
        known,
    }
}
