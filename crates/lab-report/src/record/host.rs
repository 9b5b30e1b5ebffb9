//! Host CPU contention as stored with each timing cell, and the rule
//! that decides when it invalidates the cell's timing. It is measured
//! in `host::pressure`.

use serde::{Deserialize, Serialize};

/// What a cell saw of the host, over exactly its own wall time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Contention {
    pub secs: f64,
    /// Share of the cell's wall time in which some host task waited for
    /// a CPU, in percent (from the PSI `some total` counter).
    pub psi_some_pct: Option<f64>,
    /// PSI `some avg10` at the cell's start and end.
    pub psi_avg10: Option<[f64; 2]>,
    /// QEMU's CPU time over the cell's wall time, in percent (100 is one
    /// core busy all the time).
    pub qemu_cpu_pct: Option<f64>,
    /// QEMU's run-queue wait over the cell's wall time, in percent.
    pub qemu_wait_pct: Option<f64>,
    /// CPU time that processes other than this QEMU and lab took over
    /// the cell, in percent of one core (100 is one core busy all the
    /// time). None in records from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_pct: Option<f64>,
    /// Above a threshold: the cell's timing is not the kernel's alone.
    pub contended: bool,
    /// Which threshold was crossed, for people.
    pub reason: Option<String>,
}

/// When a cell counts as contended.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Thresholds {
    /// Host CPU pressure over the cell, percent of wall time.
    pub psi_some_pct: f64,
    /// QEMU's run-queue wait over the cell, percent of wall time.
    pub qemu_wait_pct: f64,
    /// CPU time of other processes over the cell, percent of one core.
    pub others_cpu_pct: f64,
}

impl Default for Thresholds {
    /// The matrix's defaults (`contention:`), measured on the 2-core TCG
    /// host (docs/fidelity.md).
    fn default() -> Self {
        let p = crate::matrix::ContentionPolicy::default();
        Thresholds {
            psi_some_pct: p.psi_some_pct,
            qemu_wait_pct: p.qemu_wait_pct,
            others_cpu_pct: p.others_cpu_pct,
        }
    }
}

impl Contention {
    /// Set `contended` and `reason` from the measured values: other
    /// processes took more than their threshold while QEMU (or, where
    /// QEMU's wait is unknown, the host) waited beyond its own. Where
    /// other processes' time cannot be read (a record from before it was
    /// measured), the waits alone decide, as they did then.
    pub fn judge(&mut self, th: &Thresholds) {
        let mut why = Vec::new();
        if let Some(p) = self.psi_some_pct.filter(|p| *p > th.psi_some_pct) {
            why.push(format!(
                "host CPU pressure {p:.0}% of the cell (threshold {:.0}%)",
                th.psi_some_pct
            ));
        }
        if let Some(w) = self.qemu_wait_pct.filter(|w| *w > th.qemu_wait_pct) {
            why.push(format!(
                "QEMU waited for a CPU {w:.0}% of the cell (threshold {:.0}%)",
                th.qemu_wait_pct
            ));
        }
        if let Some(o) = self.others_cpu_pct {
            if o > th.others_cpu_pct && !why.is_empty() {
                why.insert(
                    0,
                    format!(
                        "other processes took {o:.0}% of a core (threshold {:.0}%)",
                        th.others_cpu_pct
                    ),
                );
            } else {
                // QEMU waiting for its own threads, or others running on
                // a core QEMU did not want: the experiment, not the host.
                why.clear();
            }
        }
        self.contended = !why.is_empty();
        self.reason = (!why.is_empty()).then(|| why.join("; "));
    }

    /// The share of the cell that QEMU waited for a CPU while other
    /// processes ran, as a fraction: at most the smaller of the two.
    /// 0 for a cell that is not contended.
    pub fn stolen(&self) -> f64 {
        if !self.contended {
            return 0.0;
        }
        let wait = self.qemu_wait_pct.or(self.psi_some_pct).unwrap_or(100.0);
        let others = self.others_cpu_pct.unwrap_or(100.0);
        (wait.min(others) / 100.0).clamp(0.0, 0.95)
    }

    /// How far contention can have moved this cell's numbers, as a
    /// relative change: a guest that lost a share `s` of its time may
    /// take up to 1/(1-s) as long, so a time can be up to s/(1-s) higher
    /// and a rate that much lower against the other side.
    pub fn max_effect(&self) -> f64 {
        let s = self.stolen();
        s / (1.0 - s)
    }

    /// A short figure for tables: `others 98%, qemu wait 31%, psi 43%`.
    pub fn figures(&self) -> String {
        let f = |x: Option<f64>| x.map_or("?".to_string(), |v| format!("{v:.0}%"));
        let mut s = format!(
            "psi {}, qemu wait {}",
            f(self.psi_some_pct),
            f(self.qemu_wait_pct)
        );
        if self.others_cpu_pct.is_some() {
            s = format!("others {}, {s}", f(self.others_cpu_pct));
        }
        s
    }
}
