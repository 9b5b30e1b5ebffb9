//! Fault injection with the real binary, kernel and QEMU: a guest that
//! dies mid-cell leaves an incomplete run (exit 2) that `--resume
//! --rerun-failed` completes, and no QEMU behind.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One VM at a time: the tests share two cores.
static ONE_VM: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A matrix on the A/A kernel whose cells sleep `secs` seconds each.
fn sleeper(secs: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    common::build_matrix(&common::repo().join("tests/data/matrices/aa.yaml"), None);
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("sleep.yaml");
    std::fs::write(
        &m,
        format!(
            r#"version: 1
name: sleep
kernel: {{source: debian-6.12, fragments: [base]}}
kernel_axes: {{arch: [x86_64], hz: {{100: [hz100]}}}}
boot: {{cpus: 1, memory: 1024}}
variants: [{{name: a}}]
run_axes: {{secs: {secs}}}
workload:
  command:
    run: "sleep {{{{ secs }}}}; echo slept {{{{ secs }}}}"
    metrics: [{{name: slept, regex: "slept (\\d+)", unit: s}}]
repetitions: 1
timing: false
"#
        ),
    )
    .unwrap();
    (dir, m)
}

/// `lab run MATRIX [extra…] --results RESULTS`.
fn lab_run(m: &std::path::Path, extra: &[&str], results: &std::path::Path) -> Command {
    let mut c = Command::new(common::lab_bin());
    c.arg("run")
        .arg(m)
        .args(extra)
        .arg("--results")
        .arg(results);
    c
}

/// The seconds each stored cell slept, sorted.
fn slept(run: &lab::results::RunDir) -> Vec<f64> {
    let mut v: Vec<f64> = run.records().unwrap().iter().map(|r| r.value).collect();
    v.sort_by(f64::total_cmp);
    v
}

#[test]
fn qemu_killed_mid_cell_is_an_incomplete_run_that_resume_completes() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, m) = sleeper("[8, 0]");
    let results = dir.path().join("results");
    let mut child = lab_run(&m, &[], &results)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the boot to be ready, then for the 8 s cell to be under way.
    let mut log = String::new();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let t = Instant::now();
    for line in lines.by_ref() {
        let line = line.unwrap();
        log += &line;
        log.push('\n');
        if line.contains("ready;") {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "no boot:\n{log}");
    }
    std::thread::sleep(Duration::from_secs(3));
    let needle = results.display().to_string();
    let pids = common::qemus(&needle);
    assert_eq!(pids.len(), 1, "one QEMU for the run:\n{log}");
    let killed = Instant::now();
    unsafe { libc::kill(pids[0], libc::SIGKILL) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    let log = format!("{log}{}", rest.join("\n"));
    assert_eq!(status.code(), Some(2), "an incomplete run:\n{log}");
    assert!(
        killed.elapsed() < Duration::from_secs(60),
        "lab took {:?} to notice:\n{log}",
        killed.elapsed()
    );
    assert!(common::qemus(&needle).is_empty(), "QEMU left running");

    let run = common::only_run(&results);
    let cells = run.cells().unwrap();
    let failed: Vec<_> = cells
        .iter()
        .filter(|c| c.status == lab::results::CellStatus::Failed)
        .collect();
    assert_eq!(failed.len(), 2, "{cells:?}");
    let eight = failed.iter().find(|c| c.cell.ends_with("secs=8")).unwrap();
    assert!(eight.error.is_some(), "the failure is named");
    assert!(
        run.records().unwrap().is_empty(),
        "no numbers from a dead guest"
    );

    // Resume, running the failed cells again: the run completes.
    let out = lab_run(&m, &["--resume", &run.id(), "--rerun-failed"], &results)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 2, "{cells:?}");
    assert!(
        cells
            .iter()
            .all(|c| c.status == lab::results::CellStatus::Done),
        "{cells:?}"
    );
    assert_eq!(slept(&run), [0.0, 8.0]);
}

/// SIGKILL gives lab no chance to clean up: QEMU still dies with it (its
/// parent-death signal), what was stored stays readable, and `--resume`
/// runs only the cells that did not finish.
#[test]
fn lab_killed_mid_run_resumes_to_the_same_records() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, m) = sleeper("[0, 1, 2, 3]");
    let results = dir.path().join("results");
    let mut child = lab_run(&m, &[], &results)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let run = loop {
        let run = std::fs::read_dir(&results)
            .ok()
            .and_then(|mut rd| rd.next())
            .and_then(|e| e.ok())
            .map(|e| lab::results::RunDir { path: e.path() });
        if let Some(run) = run
            && !run.cells().unwrap_or_default().is_empty()
        {
            break run;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "no cell finished");
        std::thread::sleep(Duration::from_millis(50));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let needle = results.display().to_string();
    let t = Instant::now();
    while !common::qemus(&needle).is_empty() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "QEMU outlived lab by 5 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = run.cells().unwrap();
    assert!(
        !before.is_empty() && before.len() < 4,
        "{} cells before the kill",
        before.len()
    );
    let out = lab_run(&m, &["--resume", &run.id()], &results)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let after = run.cells().unwrap();
    assert_eq!(after.len(), 4, "{after:?}");
    for c in before
        .iter()
        .filter(|c| c.status == lab::results::CellStatus::Done)
    {
        assert!(
            after
                .iter()
                .any(|a| a.cell == c.cell && a.started == c.started),
            "{} was run again",
            c.cell
        );
    }
    assert_eq!(slept(&run), [0.0, 1.0, 2.0, 3.0]);
}
