//! What each kernel did with each knob write: honoured, ignored or
//! unverified, as the running kernel showed it (read-back, probe, and
//! its log in the write's own window), one line per kernel, knob and
//! value. A reviewer sees at once that `io_poll_delay` took its values
//! on 6.1 and did nothing on 6.12.

use crate::record::knob::KnobStatus;
use crate::results::CellRecord;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnobLine {
    /// The kernel id, with its release when the cell recorded one.
    pub kernel: String,
    /// The knob's last path component, e.g. `io_poll_delay`.
    pub knob: String,
    pub wanted: String,
    pub read_back: String,
    pub status: KnobStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Cells (over repetitions) that wrote this value.
    pub cells: usize,
}

/// One line per (kernel, knob, value written, status), in first-seen order.
pub fn collect(cells: &[CellRecord]) -> Vec<KnobLine> {
    let mut out: Vec<KnobLine> = Vec::new();
    for c in cells {
        // `knobs` repeats the setup steps' knobs; old records may have
        // only the steps.
        let from_steps: Vec<&crate::record::knob::Knob> =
            c.steps.iter().filter_map(|s| s.knob.as_ref()).collect();
        let ks: Vec<&crate::record::knob::Knob> = if c.knobs.is_empty() {
            from_steps
        } else {
            c.knobs.iter().collect()
        };
        for k in ks {
            let knob = k.path.rsplit('/').next().unwrap_or(&k.path).to_string();
            if let Some(l) = out.iter_mut().find(|l| {
                l.kernel == c.kernel
                    && l.knob == knob
                    && l.wanted == k.wanted
                    && l.status == k.status
            }) {
                l.cells += 1;
                continue;
            }
            out.push(KnobLine {
                kernel: c.kernel.clone(),
                knob,
                wanted: k.wanted.clone(),
                read_back: k.after.clone(),
                status: k.status,
                reason: k.reason.clone(),
                cells: 1,
            });
        }
    }
    out
}

/// The "Knobs" section of the text report.
pub fn lines(knobs: &[KnobLine]) -> Vec<String> {
    knobs
        .iter()
        .map(|l| {
            let why = match (&l.status, &l.reason) {
                (KnobStatus::Honoured, _) | (_, None) => String::new(),
                (_, Some(r)) => format!(": {r}"),
            };
            format!(
                "{} {}={} read {} -> {}{why}",
                l.kernel,
                l.knob,
                l.wanted,
                l.read_back,
                l.status.word()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::knob::judge;

    fn cell(kernel: &str, k: crate::record::knob::Knob) -> CellRecord {
        CellRecord {
            cell: format!("{kernel}:x"),
            rep: 1,
            boot: kernel.into(),
            kernel: kernel.into(),
            variant: "stock".into(),
            arch: "x86_64".into(),
            axes: Default::default(),
            status: crate::results::CellStatus::Done,
            error: None,
            started: String::new(),
            secs: 1.0,
            host_load: [0.0; 3],
            host_cores: 2,
            clocksource_before: "tsc".into(),
            clocksource_after: "tsc".into(),
            knobs: vec![k.clone()],
            steps: vec![crate::record::guest::StepRecord {
                step: "knob".into(),
                command: "echo".into(),
                secs: 0.0,
                knob: Some(k),
            }],
            metrics: vec![],
            fio_json: None,
            flags: vec![],
            perf: vec![],
            contention: None,
            contended_attempts: vec![],
            guest_secs: None,
        }
    }

    #[test]
    fn one_knob_honoured_on_6_1_and_ignored_on_6_12() {
        let p = "/sys/block/nvme0n1/queue/io_poll_delay";
        let cells = [
            cell(
                "x86_64-k6.1",
                judge(p, "10", "-1", "10", None, Some((6, 1)), &[]),
            ),
            cell(
                "x86_64-k6.1",
                judge(p, "10", "-1", "10", None, Some((6, 1)), &[]),
            ),
            cell(
                "x86_64-k6.12",
                judge(p, "10", "-1", "-1", None, Some((6, 12)), &[]),
            ),
        ];
        let k = collect(&cells);
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].status, k[0].cells), (KnobStatus::Honoured, 2));
        assert_eq!(k[1].status, KnobStatus::Ignored);
        assert_eq!(
            lines(&k),
            [
                "x86_64-k6.1 io_poll_delay=10 read 10 -> honoured",
                "x86_64-k6.12 io_poll_delay=10 read -1 -> ignored: wrote '10', read back '-1'"
            ]
        );
    }
}
