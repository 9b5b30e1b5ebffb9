//! Host CPU contention, measured while a timing cell runs.
//!
//! The 1-minute load average lags by tens of seconds, so a cell that
//! starts just after a CPU hog reads as quiet. Counters that the kernel
//! keeps exactly are read at the cell's start and end instead:
//! - the host's CPU pressure (`/proc/pressure/cpu`, `some total`): the
//!   time in which at least one runnable task waited for a CPU;
//! - the QEMU process's own scheduler statistics
//!   (`/proc/<pid>/task/*/schedstat`): time on a CPU and time spent
//!   runnable but waiting on a run queue. Under TCG a guest's clock is
//!   QEMU's, so QEMU waiting is guest time that was not emulated;
//! - the host's busy CPU time (`/proc/stat`) less QEMU's and lab's own:
//!   what *other* processes took.
//!
//! Pressure and QEMU's wait alone also count QEMU's threads waiting for
//! each other: a timer-heavy guest on a 2-core host shows 5-19% of both
//! with nothing else running (docs/fidelity.md), and the flag would fire
//! on the experiment itself. So a cell is contended only when other
//! processes took CPU time *and* QEMU or the host waited; the share of
//! the cell that QEMU waited while others ran bounds how far its timing
//! can have moved ([`Contention::max_effect`]).

pub use crate::record::host::{Contention, Thresholds};
use std::time::Instant;

/// The counters at one instant.
#[derive(Clone, Debug)]
pub struct Sample {
    at: Instant,
    psi: Option<Psi>,
    qemu: Option<Sched>,
    /// The host's busy CPU time, in ns, all CPUs together.
    host_busy_ns: Option<u64>,
    /// lab's own CPU time (all its threads), in ns.
    own_ns: Option<u64>,
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
            host_busy_ns: read_host_busy_ns(),
            own_ns: read_own_cpu_ns(),
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
        // Busy host time, less QEMU's and lab's own: what others took.
        let others_cpu_pct = match (self.host_busy_ns, end.host_busy_ns, self.qemu, end.qemu) {
            (Some(h0), Some(h1), Some(q0), Some(q1)) => {
                let own = match (self.own_ns, end.own_ns) {
                    (Some(a), Some(b)) => b.saturating_sub(a),
                    _ => 0,
                };
                let qemu = q1.cpu_ns.saturating_sub(q0.cpu_ns);
                let others = h1
                    .saturating_sub(h0)
                    .saturating_sub(qemu)
                    .saturating_sub(own);
                pct(others as f64, 1e9)
            }
            _ => None,
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
            others_cpu_pct,
            contended: false,
            reason: None,
        };
        c.judge(th);
        c
    }
}

/// The host's busy CPU time in ns, all CPUs: `/proc/stat`'s first line,
/// everything but idle and iowait (guest time is inside user).
fn read_host_busy_ns() -> Option<u64> {
    parse_stat_busy(&std::fs::read_to_string("/proc/stat").ok()?)
        .map(|ticks| ticks.saturating_mul(1_000_000_000) / clock_ticks())
}

fn parse_stat_busy(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .take(8)
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq steal
    (f.len() == 8).then(|| f[0] + f[1] + f[2] + f[5] + f[6] + f[7])
}

/// lab's own CPU time (utime + stime of all its threads), in ns.
fn read_own_cpu_ns() -> Option<u64> {
    parse_own_stat(&std::fs::read_to_string("/proc/self/stat").ok()?)
        .map(|ticks| ticks.saturating_mul(1_000_000_000) / clock_ticks())
}

fn parse_own_stat(text: &str) -> Option<u64> {
    // The command name may hold spaces and parentheses: fields count
    // from the last ')'. utime and stime are fields 14 and 15.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf reads a constant of the running system.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
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

    /// QEMU waiting for its own threads (a timer-heavy guest on 2 cores)
    /// is the experiment; waiting while other processes ran is contention.
    #[test]
    fn only_time_that_other_processes_took_makes_a_cell_contended() {
        let th = Thresholds::default();
        // Measured on a quiet 2-core host, dm-delay on 6.1, one vCPU.
        let mut quiet = Contention {
            psi_some_pct: Some(12.0),
            qemu_wait_pct: Some(17.0),
            others_cpu_pct: Some(3.0),
            ..Default::default()
        };
        quiet.judge(&th);
        assert!(!quiet.contended, "{:?}", quiet.reason);
        assert_eq!(quiet.max_effect(), 0.0);
        // One CPU hog: others take a core, and QEMU waits.
        let mut hog = Contention {
            psi_some_pct: Some(45.0),
            qemu_wait_pct: Some(20.0),
            others_cpu_pct: Some(99.0),
            ..Default::default()
        };
        hog.judge(&th);
        assert!(hog.contended);
        assert!(
            hog.reason
                .as_deref()
                .unwrap()
                .starts_with("other processes took 99% of a core (threshold 20%)"),
            "{:?}",
            hog.reason
        );
        assert!((hog.stolen() - 0.20).abs() < 1e-9);
        assert!((hog.max_effect() - 0.25).abs() < 1e-9);
        assert_eq!(hog.figures(), "others 99%, psi 45%, qemu wait 20%");
        // Others busy on a core QEMU did not want: no wait, no contention.
        let mut beside = Contention {
            psi_some_pct: Some(1.0),
            qemu_wait_pct: Some(0.5),
            others_cpu_pct: Some(100.0),
            ..Default::default()
        };
        beside.judge(&th);
        assert!(!beside.contended);
    }

    #[test]
    fn proc_stat_and_own_stat_parse_as_the_kernel_writes_them() {
        let stat = "cpu  4705 356 584 3699 23 0 12 5 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n";
        assert_eq!(parse_stat_busy(stat), Some(4705 + 356 + 584 + 12 + 5));
        assert_eq!(parse_stat_busy("cpu  1 2\n"), None);
        let own = "1234 (lab (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 31 0 0 20 0 9 0";
        assert_eq!(parse_own_stat(own), Some(281));
        assert_eq!(parse_own_stat("garbage"), None);
        // Both read on this host.
        assert!(read_host_busy_ns().is_some());
        assert!(read_own_cpu_ns().is_some());
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
