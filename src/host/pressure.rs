//! Host CPU contention, measured while a timing cell runs.
//!
//! The 1-minute load average lags by tens of seconds, so a cell that
//! starts just after a CPU hog reads as quiet. Two counters that the
//! kernel keeps exactly are read at the cell's start and end instead:
//! - the host's CPU pressure (`/proc/pressure/cpu`, `some total`): the
//!   time in which at least one runnable task waited for a CPU;
//! - the QEMU process's own scheduler statistics
//!   (`/proc/<pid>/task/*/schedstat`): time on a CPU and time spent
//!   runnable but waiting on a run queue. Under TCG a guest's clock is
//!   QEMU's, so QEMU waiting is guest time that was not emulated.

use serde::{Deserialize, Serialize};
use std::time::Instant;

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
}

impl Default for Thresholds {
    /// Measured on the 2-core TCG host (docs/fidelity.md): a quiet
    /// dm-delay cell shows under 1% of either, one CPU hog per core
    /// shows 40% and more.
    fn default() -> Self {
        Thresholds {
            psi_some_pct: 10.0,
            qemu_wait_pct: 5.0,
        }
    }
}

/// The counters at one instant.
#[derive(Clone, Debug)]
pub struct Sample {
    at: Instant,
    psi: Option<Psi>,
    qemu: Option<Sched>,
    pid: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Psi {
    pub some_avg10: f64,
    /// Microseconds.
    pub some_total: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Sched {
    cpu_ns: u64,
    wait_ns: u64,
}

impl Sample {
    /// Read the counters now; `pid` is QEMU's.
    pub fn now(pid: Option<u32>) -> Sample {
        Sample {
            at: Instant::now(),
            psi: read_psi(),
            qemu: pid.and_then(read_sched),
            pid,
        }
    }

    /// What happened between this sample and now.
    pub fn finish(&self, th: &Thresholds) -> Contention {
        let end = Sample::now(self.pid);
        let wall = end.at.duration_since(self.at).as_secs_f64();
        let pct = |d: f64, unit_per_sec: f64| (wall > 0.0).then(|| 100.0 * d / unit_per_sec / wall);
        let psi_some_pct = match (self.psi, end.psi) {
            (Some(a), Some(b)) => pct(b.some_total.saturating_sub(a.some_total) as f64, 1e6),
            _ => None,
        };
        let (qemu_cpu_pct, qemu_wait_pct) = match (self.qemu, end.qemu) {
            (Some(a), Some(b)) => (
                pct(b.cpu_ns.saturating_sub(a.cpu_ns) as f64, 1e9),
                pct(b.wait_ns.saturating_sub(a.wait_ns) as f64, 1e9),
            ),
            _ => (None, None),
        };
        let mut c = Contention {
            secs: wall,
            psi_some_pct,
            psi_avg10: self
                .psi
                .zip(end.psi)
                .map(|(a, b)| [a.some_avg10, b.some_avg10]),
            qemu_cpu_pct,
            qemu_wait_pct,
            contended: false,
            reason: None,
        };
        c.judge(th);
        c
    }
}

impl Contention {
    /// Set `contended` and `reason` from the measured values.
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
        self.contended = !why.is_empty();
        self.reason = (!why.is_empty()).then(|| why.join("; "));
    }

    /// A short figure for tables: `psi 43%, qemu wait 31%`.
    pub fn figures(&self) -> String {
        let f = |x: Option<f64>| x.map_or("?".to_string(), |v| format!("{v:.0}%"));
        format!(
            "psi {}, qemu wait {}",
            f(self.psi_some_pct),
            f(self.qemu_wait_pct)
        )
    }
}

/// The host's CPU pressure now; None where the kernel has no PSI.
pub fn read_psi() -> Option<Psi> {
    parse_psi(&std::fs::read_to_string("/proc/pressure/cpu").ok()?)
}

fn parse_psi(text: &str) -> Option<Psi> {
    let some = text.lines().find(|l| l.starts_with("some "))?;
    let field = |name: &str| {
        some.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    Some(Psi {
        some_avg10: field("avg10")?.parse().ok()?,
        some_total: field("total")?.parse().ok()?,
    })
}

/// QEMU's CPU and run-queue wait time, summed over its threads (the vCPU
/// threads come and go with the guest's CPUs, so each is read each time).
fn read_sched(pid: u32) -> Option<Sched> {
    let mut sum = Sched {
        cpu_ns: 0,
        wait_ns: 0,
    };
    let mut any = false;
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .ok()?
        .flatten()
    {
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        if let Some((cpu, wait)) = parse_schedstat(&text) {
            sum.cpu_ns += cpu;
            sum.wait_ns += wait;
            any = true;
        }
    }
    any.then_some(sum)
}

fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    Some((it.next()?.parse().ok()?, it.next()?.parse().ok()?))
}

/// Wait until the host's CPU pressure (`some avg10`) is at most
/// `below_pct`, or `max` has passed, or lab is interrupted. Returns the
/// last pressure read and whether the host became quiet.
pub fn wait_quiet(below_pct: f64, max: std::time::Duration) -> (Option<f64>, bool) {
    let start = Instant::now();
    loop {
        let now = read_psi().map(|p| p.some_avg10);
        match now {
            None => return (None, true),
            Some(p) if p <= below_pct => return (Some(p), true),
            Some(_) if start.elapsed() >= max || crate::interrupt::interrupted() => {
                return (now, false);
            }
            Some(_) => std::thread::sleep(std::time::Duration::from_millis(500)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_and_schedstat_parse_as_the_kernel_writes_them() {
        let psi = "some avg10=7.83 avg60=14.62 avg300=38.88 total=595037683\n\
                   full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(
            parse_psi(psi),
            Some(Psi {
                some_avg10: 7.83,
                some_total: 595037683
            })
        );
        assert_eq!(parse_psi("full avg10=1 total=2\n"), None);
        assert_eq!(parse_schedstat("1234 567 89\n"), Some((1234, 567)));
        assert_eq!(parse_schedstat("x"), None);
    }

    #[test]
    fn either_threshold_makes_a_cell_contended_and_says_which() {
        let th = Thresholds::default();
        let mut c = Contention {
            psi_some_pct: Some(3.0),
            qemu_wait_pct: Some(0.5),
            ..Default::default()
        };
        c.judge(&th);
        assert!(!c.contended);
        assert_eq!(c.reason, None);
        c.qemu_wait_pct = Some(31.0);
        c.judge(&th);
        assert!(c.contended);
        assert_eq!(
            c.reason.as_deref(),
            Some("QEMU waited for a CPU 31% of the cell (threshold 5%)")
        );
        c.psi_some_pct = Some(44.0);
        c.judge(&th);
        assert!(
            c.reason
                .as_deref()
                .unwrap()
                .starts_with("host CPU pressure 44%")
        );
        assert_eq!(c.figures(), "psi 44%, qemu wait 31%");
    }

    #[test]
    fn a_busy_thread_of_our_own_shows_in_its_schedstat() {
        // Real counters: this process burns CPU for 200 ms, so its own
        // schedstat CPU time must grow by a large share of that.
        let pid = std::process::id();
        let s = Sample::now(Some(pid));
        let t = Instant::now();
        let mut x = 0u64;
        while t.elapsed().as_millis() < 200 {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let c = s.finish(&Thresholds::default());
        assert!(c.secs >= 0.2);
        let cpu = c
            .qemu_cpu_pct
            .expect("schedstat is readable for our own pid");
        assert!(cpu > 30.0, "cpu {cpu}%");
    }
}
