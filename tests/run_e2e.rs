//! End to end: `lab run` builds, boots, runs fio through dm-delay and
//! stores results, with the real binary, kernel, QEMU, SSH and fio.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Timing runs must not share the two cores with another VM.
static ONE_VM: Mutex<()> = Mutex::new(());

fn lab(args: &[&str], results: &Path) -> std::process::Output {
    Command::new(common::lab_bin())
        .args(args)
        .arg("--results")
        .arg(results)
        .arg("--mail")
        .arg(common::shared_mail())
        .output()
        .unwrap()
}

fn mean_ms(run: &lab::results::RunDir, variant: &str) -> f64 {
    let v: Vec<f64> = run
        .records()
        .unwrap()
        .iter()
        .filter(|r| r.variant == variant && r.metric == "write.lat_mean")
        .map(|r| r.value / 1e6)
        .collect();
    assert!(!v.is_empty(), "no records for {variant}");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Matrix lines that boot the A/A matrix's kernel.
const AA_KERNEL: &str = "version: 1
kernel: {source: debian-6.12, fragments: [base]}
kernel_axes: {arch: [x86_64], hz: {100: [hz100]}}
boot: {cpus: 1, memory: 1024}
";

/// The A/A matrix's kernel (x86_64 HZ=100, unpatched) built or cached,
/// and a temp dir holding a matrix `text` that boots it, as `name`.
fn matrix_on_aa_kernel(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    common::build_matrix(&common::repo().join("tests/data/matrices/aa.yaml"), None);
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join(name);
    std::fs::write(&m, text).unwrap();
    (dir, m)
}

#[test]
fn dm_delay_one_ms_before_and_after_the_patch() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    common::small_kernels();
    let results = tempfile::tempdir().unwrap();
    let m = common::repo().join("tests/data/matrices/small.yaml");
    let out = lab(&["run", m.to_str().unwrap()], results.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "lab run failed:\n{stderr}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let run = common::only_run(results.path());
    let before = mean_ms(&run, "before");
    let after = mean_ms(&run, "after");
    eprintln!("1 ms delay at HZ=100: before {before:.2} ms, after {after:.2} ms");
    // Unpatched, a 1 ms delay waits for the next 10 ms tick.
    assert!(before > 7.0, "before: {before:.2} ms");
    // Patched, it is about the requested delay.
    assert!(after < 2.0 && after < before / 3.0, "after: {after:.2} ms");

    let manifest = run.read_manifest().unwrap();
    assert_eq!(manifest.boots.len(), 2);
    for b in &manifest.boots {
        let p = b.probes.as_ref().expect("probes stored with the boot");
        assert!(!p.clocksource.is_empty());
        assert!(
            !p.clocksource.contains("jiffies"),
            "boot {} ran on {}",
            b.boot,
            p.clocksource
        );
        assert_eq!(p.hz_config, Some(100));
        assert_eq!(p.hz_measured, Some(100));
        // What fio printed in the boot's first cell.
        assert_eq!(p.fio_version.as_deref(), Some("fio-3.33"));
        assert!(
            b.qemu_version.starts_with(|c: char| c.is_ascii_digit()),
            "{}",
            b.qemu_version
        );
        assert_eq!(b.ending.as_deref(), Some("qmp-quit"));
        assert!(run.path.join(&b.console_log).is_file());
    }
    let after_k = &manifest.kernels["x86_64-hz100-after"];
    assert_eq!(after_k.fuzzed.len(), 1);
    assert!(manifest.host.cores > 0);
    for c in run.cells().unwrap() {
        let fio = run.path.join(c.fio_json.as_deref().unwrap());
        assert!(fio.is_file(), "raw fio output kept");
        // Not on a jiffies clock, before or after: the report would flag
        // it from these two fields (the run no longer words it twice).
        for cs in [&c.clocksource_before, &c.clocksource_after] {
            assert!(!cs.is_empty() && !cs.contains("jiffies"), "{cs}");
        }
        assert!(
            c.flags.iter().all(|f| !f.detail.contains("jiffies")),
            "{:?}",
            c.flags
        );
        // Contention is measured over every cell, from the host's PSI and
        // QEMU's own scheduler statistics.
        let p = c.contention.as_ref().expect("contention recorded");
        assert!(p.secs > 0.0 && p.qemu_cpu_pct.is_some(), "{p:?}");
    }
}

/// Interrupt a run after its first cell, resume it, and compare with an
/// uninterrupted run of the same matrix.
#[test]
fn an_interrupted_run_resumes_without_rerunning_finished_cells() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    common::small_kernels();
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("resume.yaml");
    let text =
        std::fs::read_to_string(common::repo().join("tests/data/matrices/small.yaml")).unwrap();
    std::fs::write(
        &m,
        text.replace("delay: [1]", "delay: [1, 2]")
            .replace("number_ios: 200", "number_ios: 50"),
    )
    .unwrap();
    // The matrix moved: its kconfigs are found through the built-in copies.
    let results = dir.path().join("results");

    let mut child = Command::new(common::lab_bin())
        .args(["run", m.to_str().unwrap(), "--results"])
        .arg(&results)
        .arg("--mail")
        .arg(common::shared_mail())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let done = std::fs::read_dir(&results)
            .ok()
            .and_then(|mut rd| rd.next())
            .and_then(|e| e.ok())
            .map(|e| {
                lab::results::RunDir { path: e.path() }
                    .cells()
                    .unwrap_or_default()
                    .len()
            })
            .unwrap_or(0);
        if done >= 1 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(600), "no cell finished");
        std::thread::sleep(Duration::from_millis(100));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    let run = common::only_run(&results);
    let finished: Vec<_> = run
        .cells()
        .unwrap()
        .into_iter()
        .filter(|c| c.status == lab::results::CellStatus::Done)
        .collect();
    assert!(
        !finished.is_empty() && finished.len() < 4,
        "{} cells finished before the interrupt",
        finished.len()
    );
    let stamps: Vec<String> = finished.iter().map(|c| c.started.clone()).collect();

    let id = run.id();
    let keys = |r: &lab::results::RunDir| {
        r.read_manifest()
            .unwrap()
            .kernels
            .values()
            .map(|k| k.key.clone())
            .collect::<Vec<_>>()
    };
    let kernels_before = keys(&run);
    let out = lab(&["run", m.to_str().unwrap(), "--resume", &id], &results);
    // A loaded host may leave the resumed cells contended: lab then
    // rightly withholds a clean result (exit 2) and says so.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        ran_or_contended(&out),
        "resume failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        keys(&run),
        kernels_before,
        "the resumed run booted other kernels"
    );
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 4);
    assert!(
        cells
            .iter()
            .all(|c| c.status == lab::results::CellStatus::Done)
    );
    // The cells that finished before the interrupt were not run again.
    for s in &stamps {
        assert!(
            cells.iter().any(|c| &c.started == s),
            "cell started at {s} was rerun"
        );
    }
    let resumed = run.records().unwrap();

    let fresh = dir.path().join("fresh");
    let out = lab(&["run", m.to_str().unwrap()], &fresh);
    assert!(out.status.success());
    let straight = common::only_run(&fresh).records().unwrap();
    let key = |r: &lab::results::Record| (r.cell.clone(), r.rep, r.metric.clone());
    let mut a: Vec<_> = resumed.iter().map(key).collect();
    let mut b: Vec<_> = straight.iter().map(key).collect();
    a.sort();
    b.sort();
    assert_eq!(
        a, b,
        "the resumed run has the same cells and records as an uninterrupted one"
    );
}

/// Two shards of an A/A matrix (two kernels, one per shard), merged,
/// report the same cells and record counts as one unsharded run.
#[test]
fn a_two_shard_run_merged_equals_an_unsharded_run() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let text = std::fs::read_to_string(common::repo().join("tests/data/matrices/aa.yaml")).unwrap();
    let (dir, m) = matrix_on_aa_kernel(
        "aa1.yaml",
        &text
            .replace("repetitions: 3", "repetitions: 1")
            .replace("delay: [1, 5]", "delay: [1]"),
    );
    let m = m.to_str().unwrap();

    let whole = dir.path().join("whole");
    let out = lab(&["run", m], &whole);
    assert!(
        ran_or_contended(&out),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 1..=2 {
        let shard = format!("{i}/2");
        let out = lab(
            &["run", m, "--shard", &shard],
            &dir.path().join(format!("shard-{i}")),
        );
        assert!(
            ran_or_contended(&out),
            "shard {shard}: exit {:?}\n{}\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let merged = dir.path().join("merged");
    let out = Command::new(common::lab_bin())
        .args(["merge"])
        .arg(dir.path().join("shard-1"))
        .arg(dir.path().join("shard-2"))
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "merge: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let whole = common::only_run(&whole);
    let merged = lab::results::RunDir { path: merged };
    let cells = |r: &lab::results::RunDir| {
        let mut v: Vec<_> = r
            .cells()
            .unwrap()
            .into_iter()
            .map(|c| (c.cell, c.rep, c.status))
            .collect();
        v.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        v
    };
    assert_eq!(cells(&merged), cells(&whole));
    assert_eq!(cells(&merged).len(), 2);
    assert_eq!(
        merged.records().unwrap().len(),
        whole.records().unwrap().len()
    );
    // The merged run reports like any other.
    let report = Command::new(common::lab_bin())
        .args(["report"])
        .arg(&merged.path)
        .args(["--format", "text"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("x86_64-hz100") || text.contains("hz=100"),
        "{text}"
    );
    assert!(
        ran_or_contended(&report),
        "{text}\n{}",
        String::from_utf8_lossy(&report.stderr)
    );
}

/// A run (or its report) that succeeded, or that lab withheld (exit 2)
/// because cells were measured on a contended host, as its report on
/// stdout says ("contended host"; stderr's progress lines mention
/// contention even when a retry was quiet, so they are not asked): what
/// a test about sharding, merging or resuming, not about timing,
/// accepts on a loaded 2-core runner. Contention is a flag, not a
/// status, so the cells and records such a test compares are the same
/// either way.
fn ran_or_contended(out: &std::process::Output) -> bool {
    out.status.success()
        || (out.status.code() == Some(2)
            && String::from_utf8_lossy(&out.stdout).contains("contended host"))
}

/// A cell that hangs is ended by `--cell-timeout`; its boot is ended with
/// it, the cells left on that boot are failed, not lost, and the run
/// still finishes, fails, and leaves no QEMU behind.
#[test]
fn a_hung_cell_times_out_and_the_run_still_ends() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, m) = matrix_on_aa_kernel(
        "hang.yaml",
        &format!(
            "{AA_KERNEL}{}",
            r#"name: hang
variants: [{name: a}]
run_axes: {secs: [600, 0]}
workload:
  command:
    run: "sleep {{ secs }}; echo slept {{ secs }}"
    metrics: [{name: slept, regex: "slept (\\d+)", unit: s}]
repetitions: 1
"#
        ),
    );
    let results = dir.path().join("results");
    let t = Instant::now();
    let out = Command::new(common::lab_bin())
        .args([
            "run",
            m.to_str().unwrap(),
            "--cell-timeout",
            "5",
            "--results",
        ])
        .arg(&results)
        .output()
        .unwrap();
    let secs = t.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "a failed cell fails the run:\n{stderr}"
    );
    assert!(secs < 300.0, "the run took {secs:.0} s");

    let run = common::only_run(&results);
    let mut cells = run.cells().unwrap();
    cells.sort_by(|a, b| a.started.cmp(&b.started));
    let ids: Vec<_> = cells.iter().map(|c| c.cell.as_str()).collect();
    assert_eq!(ids, ["x86_64-hz100-a:secs=600", "x86_64-hz100-a:secs=0"]);
    let hung = &cells[0];
    assert_eq!(hung.status, lab::results::CellStatus::Failed);
    assert_eq!(hung.error.as_deref(), Some("timed out after 5 s"));
    assert!(hung.secs >= 5.0 && hung.secs < 60.0, "{}", hung.secs);
    let next = &cells[1];
    assert_eq!(next.status, lab::results::CellStatus::Failed);
    let why = next.error.as_deref().unwrap_or("");
    assert!(
        why.starts_with("not run: the boot died during x86_64-hz100-a:secs=600"),
        "{why}"
    );
    assert!(
        run.records().unwrap().is_empty(),
        "no numbers from failed cells"
    );

    let manifest = run.read_manifest().unwrap();
    assert_eq!(manifest.boots.len(), 1);
    assert!(manifest.boots[0].ending.is_some(), "the boot was ended");
    let path = results.display().to_string();
    assert!(common::qemus(&path).is_empty(), "QEMU left running");
}

/// `--jobs 2` boots two kernels at once: their cells overlap in time, and
/// the run records what a one-at-a-time run records.
#[test]
fn two_jobs_run_two_boots_at_once() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    // Untimed: the cells only wait, so sharing the cores does not matter.
    let (dir, m) = matrix_on_aa_kernel(
        "jobs.yaml",
        &format!(
            "{AA_KERNEL}{}",
            r#"name: jobs
variants: [{name: a}, {name: b}]
run_axes: {n: [1, 2]}
workload:
  command:
    run: "sleep 4; echo n={{ n }}"
    metrics: [{name: n, regex: "n=(\\d+)"}]
repetitions: 1
timing: false
"#
        ),
    );
    let results = dir.path().join("results");
    let out = Command::new(common::lab_bin())
        .args(["run", m.to_str().unwrap(), "--jobs", "2", "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("share cores"),
        "untimed cells: no warning\n{stderr}"
    );

    let run = common::only_run(&results);
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 4);
    assert!(
        cells
            .iter()
            .all(|c| c.status == lab::results::CellStatus::Done)
    );
    let mut records: Vec<(String, f64)> = run
        .records()
        .unwrap()
        .into_iter()
        .map(|r| (r.cell, r.value))
        .collect();
    records.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        records,
        [
            ("x86_64-hz100-a:n=1".to_string(), 1.0),
            ("x86_64-hz100-a:n=2".to_string(), 2.0),
            ("x86_64-hz100-b:n=1".to_string(), 1.0),
            ("x86_64-hz100-b:n=2".to_string(), 2.0),
        ]
    );
    // Each boot's cells span [first start, last start + its secs]; with
    // two jobs the spans of the two boots overlap.
    let span = |variant: &str| {
        let mine: Vec<_> = cells.iter().filter(|c| c.variant == variant).collect();
        let t = |c: &lab::results::CellRecord| {
            chrono::DateTime::parse_from_rfc3339(&c.started)
                .unwrap()
                .timestamp() as f64
        };
        let start = mine.iter().map(|c| t(c)).fold(f64::MAX, f64::min);
        let end = mine.iter().map(|c| t(c) + c.secs).fold(f64::MIN, f64::max);
        (start, end)
    };
    let (a, b) = (span("a"), span("b"));
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "the boots ran one after the other: a {a:?}, b {b:?}"
    );
}

/// mkfs and mount from the matrix, for XFS and for ext4 (the `ext4`
/// fragment): fio writes through each file system, and teardown unmounts
/// it, or the ext4 cell's mkfs on the device XFS held would refuse.
/// The same cells run in a `cgroup` step's group (one kernel for both
/// tests: a tinyconfig build is minutes): the plan adds the block
/// throttle to the kernel, the guest writes `io.max` and reads it back,
/// fio runs in the group, and the kernel holds its writes to 1 MiB/s,
/// decided from what fio measured against the unlimited cells.
#[test]
fn file_systems_are_made_mounted_and_torn_down() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let m = dir.path().join("fs.yaml");
    std::fs::write(
        &m,
        r#"version: 1
name: fs
kernel: {source: debian-6.12, fragments: [base, ext4]}
variants: [{name: a}]
kernel_axes: {arch: [x86_64], hz: {100: [hz100]}}
boot:
  cpus: 1
  memory: 1024
  null_blk: {nr_devices: 1, gb: 1, memory_backed: 1}
run_axes: {fs: [xfs, ext4], wbps: [max, 1MiB/s]}
setup:
  - mkfs: {fs: "{{ fs }}", device: /dev/nullb0}
  - mount: {device: /dev/nullb0, dir: /mnt/lab, fs: "{{ fs }}"}
  - shell: {run: "grep -q '^/dev/nullb0 /mnt/lab {{ fs }} ' /proc/mounts"}
  - cgroup: {name: lab, device: /dev/nullb0, wbps: "{{ wbps }}"}
workload:
  fio: {filename: /mnt/lab/f, rw: write, bs: 4k, direct: 1, ioengine: psync, runtime: 3, time_based: 1, size: 16M}
metrics: [write.lat_mean, write.bw_kib]
repetitions: 1
timing: false
"#,
    )
    .unwrap();
    common::build_matrix(&m, None);
    let results = dir.path().join("results");
    let out = Command::new(common::lab_bin())
        .args(["run", m.to_str().unwrap(), "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let run = common::only_run(&results);
    let manifest = run.read_manifest().unwrap();
    let k = &manifest.kernels["x86_64-hz100-a"];
    assert!(
        k.fragments.iter().any(|f| f.name == "ext4"),
        "{:?}",
        k.fragments
    );
    assert!(
        k.fragments.iter().any(|f| f.name == "cgroups"),
        "{:?}",
        k.fragments
    );
    let mut cells = run.cells().unwrap();
    cells.sort_by(|a, b| a.started.cmp(&b.started));
    assert_eq!(cells.len(), 4);
    for c in &cells {
        assert_eq!(c.status, lab::results::CellStatus::Done, "{:?}", c.error);
        let fs = c
            .axes
            .0
            .iter()
            .find(|(k, _)| k == "fs")
            .unwrap()
            .1
            .to_string();
        assert!(
            c.steps[0].command.starts_with(&format!("mkfs.{fs} ")),
            "{:?}",
            c.steps[0].command
        );
        assert!(c.flags.is_empty(), "{:?}", c.flags);
    }
    let records = run.records().unwrap();
    let lat = records
        .iter()
        .filter(|r| r.metric == "write.lat_mean")
        .count();
    assert_eq!(lat, 4);
    for c in &cells {
        assert!(c.steps[3].command.contains("io.max"), "{:?}", c.steps[3]);
    }
    let bw = |fs: &str, wbps: &str| {
        records
            .iter()
            .find(|r| {
                r.metric == "write.bw_kib"
                    && r.cell.contains(&format!(":fs={fs},"))
                    && r.cell.contains(&format!("wbps={wbps}"))
            })
            .map(|r| r.value)
            .unwrap_or_else(|| panic!("{fs} {wbps}: {records:?}"))
    };
    for fs in ["xfs", "ext4"] {
        let (limited, free) = (bw(fs, "1MiB/s"), bw(fs, "max"));
        assert!(
            limited > 512.0 && limited < 1300.0,
            "{fs}: {limited} KiB/s limited"
        );
        assert!(free > 2048.0, "{fs}: {free} KiB/s unlimited");
    }
}

/// A claim on a derived metric (`iops = read.iops + write.iops`) binds in
/// `lab claims check`, and the report of a real run binds it the same
/// way: the values come out judged, never "unknown metric" or unbound.
#[test]
fn a_claim_on_a_derived_metric_is_judged_in_the_report() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    let (dir, m) = matrix_on_aa_kernel(
        "derived.yaml",
        &format!(
            "{AA_KERNEL}{}",
            r#"name: derived
variants: [{name: a}]
run_axes: {delay: [1]}
setup:
  - dm: {name: zeros, target: zero, sectors: 2097152}
  - dm: {name: slow, target: delay, device: /dev/mapper/zeros, read_ms: "{{ delay }}", write_ms: "{{ delay }}"}
workload:
  fio: {filename: /dev/mapper/slow, options: --rw=randwrite --direct=1 --bs=4k --number_ios=60}
derived:
  iops: "read.iops + write.iops"
metrics: [iops]
repetitions: 3
# What is tested is the binding, not the timing: on a busy CI host a
# contended cell would be shown, not judged.
timing: false
claims:
  - {source: {mail: claim.txt}, table: 1, rows: variant,
     aliases: {"Theoretical maximum": "-"}, metric: iops, unit: IOPS,
     tolerance: 50%, conditions: {delay: 1}}
"#
        ),
    );
    // At HZ=100 a 1 ms dm-delay write waits for the next 10 ms tick.
    std::fs::write(
        dir.path().join("claim.txt"),
        "From: t@example.org\nSubject: [PATCH] dm delay: test\n\n\
         fio --name=w --rw=randwrite --direct=1 --bs=4k\n\
         Theoretical maximum: 1000 IOPS\n\
         a: 100 IOPS\n",
    )
    .unwrap();
    let check = Command::new(common::lab_bin())
        .args(["claims", "check", m.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(0), "{text}");
    assert!(text.contains("-> iops of x86_64-hz100-a:delay=1"), "{text}");

    let results = dir.path().join("results");
    let out = Command::new(common::lab_bin())
        .args(["run", m.to_str().unwrap(), "--results"])
        .arg(&results)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let run = common::only_run(&results);
    let report = Command::new(common::lab_bin())
        .args(["report"])
        .arg(&run.path)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let claims = json["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{claims:#?}");
    let c = &claims[0];
    let status = c["status"].as_str().unwrap();
    assert!(
        status == "reproduced" || status == "not reproduced",
        "{c:#}"
    );
    assert_eq!(c["metric"], "iops");
    assert_eq!(c["cell"], "x86_64-hz100-a:delay=1");
    let measured = c["measured"].as_f64().unwrap();
    assert!(measured > 20.0 && measured < 1000.0, "{measured}");
    assert_eq!(c["theoretical_max"], "Theoretical maximum: 1000 IOPS");
    assert_eq!(report.status.code(), out.status.code());
}
