//! Fault injection with the real binary, kernel and QEMU: a guest that
//! dies mid-cell leaves an incomplete run (exit 2) that `--resume
//! --rerun-failed` completes, and no QEMU behind; a damaged cache entry
//! is found by its hash and made again.

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

/// The run under `results` once its first cell is stored (10 min at most).
fn first_cell_stored(results: &std::path::Path) -> lab::results::RunDir {
    let t = Instant::now();
    loop {
        let run = std::fs::read_dir(results)
            .ok()
            .and_then(|rd| rd.flatten().find(|e| e.path().is_dir()))
            .map(|e| lab::results::RunDir { path: e.path() });
        if let Some(run) = run
            && !run.cells().unwrap_or_default().is_empty()
        {
            return run;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "no cell finished");
        std::thread::sleep(Duration::from_millis(50));
    }
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
    let run = first_cell_stored(&results);
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

/// A damaged cache entry is found by its blake3, named, and made again;
/// the guest then boots from the new one.
#[test]
fn a_truncated_initrd_in_the_cache_is_found_named_and_made_again() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let k = common::kernel(&common::small_kernels(), "x86_64-hz100-before");
    common::image(lab::matrix::Arch::X86_64);
    // A cache of its own (the image and keys copied), so damaging it
    // cannot disturb the tests running beside this one.
    let real = common::cache().root().to_path_buf();
    let tmp = tempfile::tempdir().unwrap();
    for d in ["image", "image-latest", "keys"] {
        let ok = Command::new("cp")
            .arg("-a")
            .arg(real.join(d))
            .arg(tmp.path())
            .status()
            .unwrap();
        assert!(ok.success(), "copying {d}");
    }
    let boot = || {
        Command::new(common::lab_bin())
            .args(["boot", "--kernel"])
            .arg(&k.image)
            .args(["--arch", "x86_64", "--", "true"])
            .env("LAB_CACHE", tmp.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    let o = boot();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let initrds: Vec<_> = std::fs::read_dir(tmp.path().join("initrd"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("initrd.img"))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(initrds.len(), 1, "{initrds:?}");
    let size = std::fs::metadata(&initrds[0]).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&initrds[0])
        .unwrap();
    f.set_len(size / 2).unwrap();
    drop(f);

    let o = boot();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("is damaged: initrd.img (") && stderr.contains("does not match the blake3"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::metadata(&initrds[0]).unwrap().len(),
        size,
        "made again, whole"
    );
}

/// Unmounts a test's tmpfs however the test ends.
struct Mounted(std::path::PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Results on a file system that fills mid-run: an error naming the
/// path, no half-written file, and `--resume` completes once there is
/// room again. It mounts a tmpfs, so it needs root, as scripts/test has.
#[test]
fn a_full_results_file_system_is_named_and_resume_completes() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    assert!(
        Command::new("id").arg("-u").output().unwrap().stdout == b"0\n",
        "this test mounts a tmpfs: run the suite as root (scripts/test does)"
    );
    let (dir, m) = sleeper("[1, 2, 3, 4]");
    let results = dir.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16m", "tmpfs"])
        .arg(&results)
        .status()
        .unwrap();
    assert!(ok.success(), "mounting a tmpfs at {}", results.display());
    let _mounted = Mounted(results.clone());
    let child = lab_run(&m, &[], &results)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let run = first_cell_stored(&results);
    // Fill what is left: the write stops at ENOSPC with the disk full.
    let filler = results.join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 32 << 20]);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // An environment error (4), not an input one or an incomplete run.
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("No space left on device") && err.contains(&run.path.display().to_string()),
        "{err}"
    );
    // Nothing half-written: every JSON file and record line parses.
    for e in walk(&run.path) {
        let name = e.display().to_string();
        if name.ends_with(".json") {
            let text = std::fs::read_to_string(&e).unwrap();
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|x| panic!("{name} is half-written: {x}"));
        }
        if name.ends_with(".jsonl") {
            for l in std::fs::read_to_string(&e).unwrap().lines() {
                serde_json::from_str::<serde_json::Value>(l)
                    .unwrap_or_else(|x| panic!("{name}: a half-written line: {x}"));
            }
        }
    }
    std::fs::remove_file(&filler).unwrap();
    let out = lab_run(&m, &["--resume", &run.id()], &results)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(slept(&run), [1.0, 2.0, 3.0, 4.0]);
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A guest that stops answering mid-cell (its network taken down from
/// inside the cell) fails that cell within the cell timeout, named as a
/// lost connection, and the run says it is incomplete.
#[test]
fn a_guest_that_stops_answering_fails_its_cell_as_a_lost_connection() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    common::build_matrix(&common::repo().join("tests/data/matrices/aa.yaml"), None);
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("mute.yaml");
    std::fs::write(
        &m,
        r#"version: 1
name: mute
kernel: {source: debian-6.12, fragments: [base]}
kernel_axes: {arch: [x86_64], hz: {100: [hz100]}}
boot: {cpus: 1, memory: 1024}
variants: [{name: a}]
run_axes: {n: [1]}
workload:
  command:
    run: "for d in /sys/class/net/*; do [ ${d##*/} = lo ] || ip link set dev ${d##*/} down; done; sleep 600; echo n 1"
    metrics: [{name: n, regex: "n (\\d+)", unit: count}]
repetitions: 1
timing: false
"#,
    )
    .unwrap();
    let results = dir.path().join("results");
    let t = Instant::now();
    let out = lab_run(&m, &["--cell-timeout", "120"], &results)
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        secs < 120,
        "took {secs} s: the lost guest was not noticed before the cell timeout"
    );
    let run = common::only_run(&results);
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 1);
    let e = cells[0].error.clone().unwrap_or_default();
    assert!(e.contains("lost the connection to the guest"), "{e}");
}
