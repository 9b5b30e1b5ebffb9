//! Host contention never becomes a verdict it could explain: `lab run`
//! with a CPU hog on every host core, real kernel, QEMU, SSH and fio.

mod common;

use lab::report::stats::Verdict;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// One busy thread per host core until dropped, and never longer than
/// `max`: a test that dies cannot leave the host loaded.
struct Hog {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Hog {
    fn start(max: Duration) -> Hog {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..lab::util::ncpus())
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let t = Instant::now();
                    let mut x = 1u64;
                    while !stop.load(Ordering::Relaxed) && t.elapsed() < max {
                        for _ in 0..10_000 {
                            x = std::hint::black_box(
                                x.wrapping_mul(6364136223846793005).wrapping_add(1),
                            );
                        }
                    }
                })
            })
            .collect();
        Hog { stop, threads }
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[test]
fn a_cpu_hog_makes_every_cell_contended_no_verdict_and_no_jiffies_clock() {
    common::small_kernels();
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::repo().join("tests/data/matrices/small.yaml"))
        .unwrap()
        .replace("repetitions: 1", "repetitions: 3\ncontention: {retries: 0}")
        // At 20 ms the patch changes little (the mail: +6%), which the
        // load can explain; at 1 ms it divides the latency by about 8.
        .replace("delay: [1]", "delay: [1, 20]")
        .replace("name: small", "name: contended");
    let m = dir.path().join("contended.yaml");
    std::fs::write(&m, text).unwrap();
    let results = dir.path().join("results");

    let hog = Hog::start(Duration::from_secs(900));
    let out = std::process::Command::new(common::lab_bin())
        .args(["run", m.to_str().unwrap(), "--results"])
        .arg(&results)
        .arg("--mail")
        .arg(common::shared_mail())
        .output()
        .unwrap();
    drop(hog);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The 20 ms comparison is untrusted, so the run is incomplete: exit 2.
    assert_eq!(out.status.code(), Some(2), "{stderr}\n{stdout}");

    let run = common::only_run(&results);
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 12, "2 variants x 2 delays x 3 repetitions");
    for c in &cells {
        let p = c.contention.as_ref().expect("contention measured per cell");
        eprintln!("{} rep {}: {}", c.cell, c.rep, p.figures());
        // Measured over the cell itself, so the first cell counts too.
        assert!(p.contended, "{} rep {} not detected: {p:?}", c.cell, c.rep);
        assert!(p.secs > 0.0);
        assert!(
            p.psi_some_pct.is_some() && p.qemu_wait_pct.is_some(),
            "{p:?}"
        );
        // What made it contended: other processes (the hog) took CPU.
        let others = p
            .others_cpu_pct
            .expect("other processes' CPU time measured");
        assert!(others > 20.0, "{p:?}");
        assert!(p.max_effect() > 0.0);
    }
    // The loaded guests kept a real clocksource: the base config gives
    // x86_64 HPET and the ACPI PM timer for when the TSC is lost, so
    // a loaded boot never counts time in ticks.
    let manifest = run.read_manifest().unwrap();
    assert!(!manifest.boots.is_empty());
    for b in &manifest.boots {
        let p = b.probes.as_ref().expect("probed");
        assert!(
            !lab::guest::probe::is_jiffies(&p.clocksource),
            "{}: {}",
            b.boot,
            p.clocksource
        );
        assert!(
            p.available_clocksources
                .iter()
                .any(|c| c == "hpet" || c == "acpi_pm"),
            "{}: no fallback clocksource in {:?}",
            b.boot,
            p.available_clocksources
        );
    }
    for c in &cells {
        assert!(
            !lab::guest::probe::is_jiffies(&c.clocksource_after),
            "{}",
            c.cell
        );
    }
    let report = lab::report::load(&run).unwrap();
    let comparisons: Vec<_> = report.groups.iter().flat_map(|g| &g.comparisons).collect();
    assert!(!comparisons.is_empty());
    for g in &report.groups {
        for c in &g.comparisons {
            assert!(!c.regression);
            let flag = c
                .flags
                .iter()
                .find(|f| f.kind == lab::report::FlagKind::Contended)
                .unwrap_or_else(|| panic!("{}: no contention flag: {c:?}", g.id));
            let effect = flag.value.unwrap() / 100.0;
            let change = c.change.unwrap().abs();
            if c.verdict == Verdict::Untrusted {
                assert_eq!(
                    c.untrusted.len(),
                    6,
                    "each contended sample named: {:?}",
                    c.untrusted
                );
                assert!(change <= effect + 0.05, "{}: {change} {effect}", g.id);
                assert!(
                    flag.message.contains("enough to explain"),
                    "{}",
                    flag.message
                );
            } else {
                // Contention cannot explain this change: the verdict stands.
                assert!(change > effect + 0.05, "{}: {change} {effect}", g.id);
                assert!(
                    flag.message.contains("not enough to explain"),
                    "{}",
                    flag.message
                );
            }
        }
    }
    let untrusted = report
        .groups
        .iter()
        .find(|g| g.run_key == "delay=20")
        .unwrap();
    assert_eq!(untrusted.comparisons[0].verdict, Verdict::Untrusted);
    assert_eq!(lab::report::exit_code(&report), 2);
    let text = lab::report::render(&report, lab::report::Format::Text).unwrap();
    assert!(text.contains("untrusted"), "{text}");
    assert!(text.contains("contended"), "{text}");
}
