//! Hostile input to the real binary: every probe of issue 13 that needs
//! no VM. Each row is an input, the exit code, and the words the message
//! must hold (file, line, key). docs/robustness.md lists the same rows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const LAB: &str = env!("CARGO_BIN_EXE_lab");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A small valid matrix; rows replace one line of it.
const BASE: &str = "\
version: 1
name: t
variants:
  - name: before
  - name: after
kernel_axes:
  arch: [x86_64]
  hz: {100: [hz100]}
boot: {cpus: 1, memory: 1024}
run_axes:
  delay: [1, 2]
setup:
  - dm: {name: d, target: delay, device: /dev/nullb0, read_ms: \"{{ delay }}\", write_ms: \"{{ delay }}\"}
workload:
  fio: {filename: /dev/mapper/d, rw: write, number_ios: 10}
repetitions: 1
";

fn with(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    BASE.replacen(from, to, 1)
}

/// Run lab with `args` in `dir`, with an empty cache in `dir` too.
fn lab(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(LAB);
    c.args(args)
        .current_dir(dir)
        .env("LAB_CACHE", dir.join("cache"))
        .stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

struct Row {
    name: &'static str,
    /// The matrix written to m.yaml, if the row uses one.
    matrix: Option<String>,
    args: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
    code: i32,
    words: Vec<&'static str>,
}

fn plan_row(name: &'static str, matrix: String, code: i32, words: &[&'static str]) -> Row {
    Row {
        name,
        matrix: Some(matrix),
        args: vec!["plan".into(), "m.yaml".into()],
        env: vec![],
        code,
        words: words.to_vec(),
    }
}

fn cmd_row(name: &'static str, args: &[&str], code: i32, words: &[&'static str]) -> Row {
    Row {
        name,
        matrix: Some(BASE.to_string()),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: vec![],
        code,
        words: words.to_vec(),
    }
}

fn rows() -> Vec<Row> {
    let aa = repo().join("tests/data/runs/aa-20261130-001338");
    let aa = aa.to_str().unwrap().to_string();
    let five_axes: String = (0..5)
        .map(|i| {
            let vals: Vec<String> = (0..20).map(|v| v.to_string()).collect();
            format!("  x{i}: [{}]\n", vals.join(", "))
        })
        .collect();
    vec![
        plan_row(
            "valid",
            BASE.into(),
            0,
            &["4 cells:", "x86_64-hz100-after:delay=2"],
        ),
        plan_row(
            "repetitions 1e9",
            with("repetitions: 1", "repetitions: 1000000000"),
            3,
            &["m.yaml", "4 cells × 1000000000 repetitions", "--max-cells"],
        ),
        plan_row(
            "5 axes of 20 values",
            with(
                "  delay: [1, 2]\n",
                &format!("  delay: [1, 2]\n{five_axes}"),
            ),
            3,
            &[
                "12800000 cells",
                "x0 (20) × x1 (20)",
                "above the limit of 100000",
            ],
        ),
        plan_row(
            "nvme serial with QEMU option syntax",
            with(
                "boot: {cpus: 1, memory: 1024}",
                "boot: {cpus: 1, memory: 1024, nvme: [{serial: \"x,drive=foo,addr=0x99\"}]}",
            ),
            3,
            &["m.yaml", "boot.nvme[0].serial", "is not an NVMe serial"],
        ),
        plan_row(
            "fio on a dm device no step makes",
            with("filename: /dev/mapper/d,", "filename: \"/dev/mapper/d-{{ delay }}ms\","),
            3,
            &[
                "m.yaml:15:",
                "workload: filename '/dev/mapper/d-1ms'",
                "no setup step makes it",
                "/dev/mapper/d",
            ],
        ),
        plan_row(
            "fio on a file under no mount",
            with("filename: /dev/mapper/d,", "filename: /mnt/f,"),
            3,
            &["m.yaml:15:", "filename '/mnt/f'", "not under a directory a mount step mounts"],
        ),
        plan_row(
            "fio on a file of a mount, with no size to make it",
            with(
                "  - dm: {name: d, target: delay, device: /dev/nullb0, read_ms: \"{{ delay }}\", write_ms: \"{{ delay }}\"}",
                "  - mkfs: {fs: xfs, device: /dev/nullb0}\n  - mount: {device: /dev/nullb0, dir: /mnt/x}",
            )
            .replace("filename: /dev/mapper/d,", "filename: /mnt/x/f,"),
            3,
            &["m.yaml:", "filename '/mnt/x/f'", "fio makes a file only when told its size"],
        ),
        plan_row(
            "fio on an NVMe namespace the boot lacks",
            with("filename: /dev/mapper/d,", "filename: /dev/nvme0n1,"),
            3,
            &["m.yaml", "filename '/dev/nvme0n1'", "known: /dev/nullb0, /dev/mapper/d"],
        ),
        plan_row(
            "a cgroup limit that is no rate, a name that is no directory, a second cgroup",
            with(
                "workload:",
                "  - cgroup: {name: lab, device: /dev/mapper/d, rbps: \"{{ delay }}0 IOPS\"}\nworkload:",
            ),
            3,
            &["m.yaml:14:", "cgroup.rbps '10 IOPS'", "a rate such as 10MB/s"],
        ),
        plan_row(
            "a cgroup named with a path",
            with("workload:", "  - cgroup: {name: ../x, device: /dev/nullb0, wbps: max}\nworkload:"),
            3,
            &["m.yaml:14:", "cgroup.name '../x'"],
        ),
        plan_row(
            "two cgroups in a cell",
            with(
                "workload:",
                "  - cgroup: {name: a, device: /dev/nullb0, wbps: max}\n  - cgroup: {name: b, device: /dev/nullb0, wbps: max}\nworkload:",
            ),
            3,
            &["m.yaml:15:", "runs in one cgroup"],
        ),
        plan_row(
            "a cgroup on a device nothing makes",
            with("workload:", "  - cgroup: {name: a, device: /dev/nvme0n1, wiops: 5k IOPS}\nworkload:"),
            3,
            &["m.yaml:14:", "cgroup.device '/dev/nvme0n1'"],
        ),
        plan_row(
            "fio numjobs that is no number (lkp's 50%)",
            with("filename: /dev/mapper/d,", "filename: /dev/mapper/d, numjobs: \"50%\","),
            3,
            &["m.yaml:15:", "numjobs '50%': fio takes a whole number"],
        ),
        plan_row(
            "duplicate axis value",
            with("delay: [1, 2]", "delay: [1, 1]"),
            3,
            &["m.yaml", "axis 'delay' has the value '1' twice"],
        ),
        plan_row(
            "duplicate axis value, number and string",
            with("delay: [1, 2]", "delay: [1, \"1\"]"),
            3,
            &["axis 'delay' has the value '1' twice"],
        ),
        plan_row(
            "values that share a directory",
            with("delay: [1, 2]", "delay: [1, 2]\n  tag: [\"a/b\", \"a b\"]"),
            3,
            &["would share the directory", "tag=a_b"],
        ),
        plan_row(
            "name with ..",
            with("name: t", "name: \"../../x\""),
            3,
            &["m.yaml", "name '../../x' names the run directory"],
        ),
        plan_row(
            "fragment path",
            with("hz: {100: [hz100]}", "hz: {100: [../../etc/passwd]}"),
            3,
            &[
                "m.yaml:8:",
                "unknown fragment '../../etc/passwd'",
                "no '/' or '..'",
            ],
        ),
        plan_row(
            "knob outside sysfs",
            with(
                "setup:\n",
                "setup:\n  - knob: {path: /etc/passwd, value: 1}\n",
            ),
            3,
            &["knob path '/etc/passwd' is outside /sys and /proc"],
        ),
        plan_row(
            "missing diff",
            with(
                "  - name: after\n",
                "  - name: after\n    patches: [{diff: nosuch.diff}]\n",
            ),
            3,
            &["variant 'after'", "nosuch.diff does not exist"],
        ),
        plan_row(
            "missing tarball",
            with(
                "version: 1\n",
                "version: 1\nkernel: {source: {tarball: nosuch.tar.xz}}\n",
            ),
            3,
            &["kernel.source: tarball", "nosuch.tar.xz does not exist"],
        ),
        plan_row(
            "fragment with a bad line",
            with("hz: {100: [hz100]}", "hz: {100: [bad]}"),
            3,
            &[
                "bad.config:2: fragment 'bad'",
                "'HZ=100' is not a kconfig line",
            ],
        ),
        plan_row(
            "verdict.noise: lots",
            format!("{BASE}verdict: {{noise: lots}}\n"),
            3,
            &["m.yaml:17:", "'lots' is not a percentage"],
        ),
        plan_row(
            "cpus: 0",
            with("cpus: 1", "cpus: 0"),
            3,
            &["boot.cpus is 0"],
        ),
        plan_row(
            "memory: 1",
            with("memory: 1024", "memory: 1"),
            3,
            &["boot.memory is 1 MiB", "at least 128"],
        ),
        plan_row(
            "duplicate key",
            with("name: t\n", "name: t\nname: u\n"),
            3,
            &["m.yaml:3:1: name: a key appears twice in one mapping"],
        ),
        plan_row(
            "not a matrix",
            "hello world\nthis is: text\n".into(),
            3,
            &["m.yaml:1:1:", "not a lab matrix", "version: 1"],
        ),
        plan_row(
            "wrong type, with the key once",
            with("memory: 1024", "memory: -1"),
            3,
            &["m.yaml:9:", "memory: expected a whole number, 0 or more, not '-1'"],
        ),
        plan_row(
            "a list where one value goes",
            with("{100: [hz100]}", "{100: [hz100]}\nboot_axes: {q: [[1]]}"),
            3,
            &["m.yaml:9:", "expected one value (a number, a string or true/false)"],
        ),
        plan_row(
            "a run axis no template reads: its cells would all be the same",
            with("  delay: [1, 2]\n", "  delay: [1, 2]\n  jobs: [1, 4]\n"),
            3,
            &["m.yaml:12:3:", "run_axes.jobs is read by no template", "{{ jobs }}"],
        ),
        plan_row(
            "template error at the matrix's line",
            with("read_ms: \"{{ delay }}\"", "read_ms: \"{{ nosuch }}\""),
            3,
            &["m.yaml:13:", "template '{{ nosuch }}'", "nosuch"],
        ),
        Row {
            name: "HTML-only mail",
            matrix: Some(
                "From: a@b\nSubject: x\nContent-Type: text/html\n\n<table><tr><td>1</td></tr></table>\n"
                    .into(),
            ),
            args: vec!["claims".into(), "extract".into(), "m.yaml".into()],
            env: vec![],
            code: 0,
            words: vec!["no tables of numbers", "only an HTML part", "text/plain"],
        },
        cmd_row(
            "--shards 0",
            &["plan", "m.yaml", "--shards", "0", "--format", "json"],
            3,
            &["--shards", "0"],
        ),
        cmd_row(
            "--shards 2^64-1",
            &["plan", "m.yaml", "--shards", "18446744073709551615", "--format", "github-matrix"],
            3,
            &["--shards", "not in 1..=1000"],
        ),
        plan_row(
            "derived: 20000 nested parentheses",
            format!(
                "{BASE}derived:\n  deep: \"{}1{}\"\n",
                "(".repeat(20_000),
                ")".repeat(20_000)
            ),
            3,
            &["m.yaml", "nested deeper than 64"],
        ),
        plan_row(
            "a template that loops 10^10 times",
            with(
                "read_ms: \"{{ delay }}\"",
                "read_ms: \"{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}\"",
            ),
            3,
            &["m.yaml", "fuel"],
        ),
        cmd_row(
            "--mail /nonexistent",
            &["plan", "m.yaml", "--mail", "/nonexistent"],
            3,
            &["--mail /nonexistent: no such file"],
        ),
        cmd_row("unknown subcommand", &["nosuch"], 3, &["nosuch"]),
        cmd_row(
            "missing matrix",
            &["plan", "nosuch.yaml"],
            3,
            &["nosuch.yaml"],
        ),
        cmd_row(
            "--max-cells lets a big plan through",
            &["plan", "m.yaml", "--max-cells", "10"],
            0,
            &["4 cells:"],
        ),
        cmd_row(
            "report of no run",
            &["report", "nosuch"],
            3,
            &["no run 'nosuch'"],
        ),
        cmd_row(
            "claims extract of no file",
            &["claims", "extract", "/nonexistent.mbox"],
            3,
            &["/nonexistent.mbox"],
        ),
        Row {
            name: "merge into an input",
            matrix: None,
            args: vec![
                "merge".into(),
                aa.clone(),
                "--out".into(),
                format!("{aa}/cells/zz"),
            ],
            env: vec![],
            code: 3,
            words: vec!["/cells/zz is inside the input"],
        },
        Row {
            name: "LAB_CACHE empty",
            matrix: None,
            args: vec!["cache".into(), "ls".into()],
            env: vec![("LAB_CACHE", "")],
            code: 3,
            words: vec!["LAB_CACHE is set but empty"],
        },
        // Issue 27, round two: silently wrong input, messages, exit codes.
        plan_row(
            "a typo in verdict.gate",
            format!("{BASE}verdict: {{gate: [write.lat_meen]}}\n"),
            3,
            &["m.yaml:", "verdict.gate: 'write.lat_meen' is no metric", "write.lat_mean"],
        ),
        plan_row(
            "an empty metric name",
            format!("{BASE}metrics: [\"\", nosuch]\n"),
            3,
            &["m.yaml:", "metrics: '' is no metric"],
        ),
        plan_row(
            "40 comment lines after variants:",
            with("variants:\n", &format!("variants:\n{}", "  # c\n".repeat(40))),
            0,
            &["4 cells:"],
        ),
        plan_row(
            "two YAML documents",
            format!("{BASE}---\n{BASE}"),
            3,
            &["m.yaml:", "one YAML document"],
        ),
        plan_row(
            ".nan as an axis value",
            with("delay: [1, 2]", "delay: [.nan]"),
            3,
            &["m.yaml:11:", ".nan is not a finite number"],
        ),
        plan_row(
            "a claim source of neither form",
            format!("{BASE}claims:\n  - source: {{nosuch: 1}}\n"),
            3,
            &["m.yaml:", "{mail: FILE} or {message-id: ID}"],
        ),
        plan_row(
            "a name of 10,000 characters",
            with("name: t", &format!("name: {}", "n".repeat(10_000))),
            3,
            &["name is 10000 characters long", "at most 100"],
        ),
        cmd_row("run -j 0", &["run", "m.yaml", "-j", "0"], 3, &["--jobs", "1..=64"]),
        cmd_row(
            "run --shard 5/4",
            &["run", "m.yaml", "--shard", "5/4"],
            3,
            &["--shard '5/4'", "1 to 4"],
        ),
        cmd_row(
            "run --shard 1/100000000",
            &["run", "m.yaml", "--shard", "1/100000000"],
            3,
            &["1 to 1000"],
        ),
        cmd_row(
            "run --rerun-failed without --resume",
            &["run", "m.yaml", "--rerun-failed"],
            3,
            &["--resume"],
        ),
        cmd_row(
            "run --resume of no run",
            &["run", "m.yaml", "--resume", "nosuch"],
            3,
            &["--resume: no run 'nosuch'"],
        ),
        cmd_row(
            "run --claims of no file",
            &["run", "m.yaml", "--claims", "/nonexistent.eml"],
            3,
            &["--claims /nonexistent.eml: no such file"],
        ),
        cmd_row(
            "run --results a file",
            &["run", "m.yaml", "--results", "m.yaml"],
            3,
            &["--results m.yaml: exists and is not a directory"],
        ),
        cmd_row(
            "report --out a file",
            &["report", &aa, "--out", "m.yaml"],
            3,
            &["--out m.yaml: exists and is not a directory"],
        ),
        cmd_row(
            "merge --out a file",
            &["merge", &aa, "--out", "m.yaml"],
            3,
            &["--out m.yaml: exists and is not a directory"],
        ),
        cmd_row(
            "merge --out a non-empty directory",
            &["merge", &aa, "--out", "kconfigs"],
            3,
            &["--out kconfigs: exists and is not empty"],
        ),
        cmd_row(
            "cache import of no archive",
            &["cache", "import", "nosuch.tar"],
            3,
            &["nosuch.tar: no such archive"],
        ),
        cmd_row(
            "cache import of a file that is not tar",
            &["cache", "import", "kconfigs/bad.config"],
            3,
            &["name the archive .tar"],
        ),
        cmd_row(
            "cache export to a name without an extension",
            &["cache", "export", "out"],
            3,
            &["out: name the archive .tar"],
        ),
        Row {
            name: "LAB_CACHE names a file",
            matrix: Some(BASE.to_string()),
            args: vec!["cache".into(), "ls".into()],
            env: vec![("LAB_CACHE", "m.yaml")],
            code: 3,
            words: vec!["LAB_CACHE=m.yaml is not a directory"],
        },
        Row {
            name: "cache ls does not create the cache",
            matrix: None,
            args: vec!["cache".into(), "ls".into()],
            env: vec![],
            code: 0,
            words: vec!["no cache yet", "does not exist"],
        },
    ]
}

#[test]
fn bad_inputs_exit_with_their_code_and_name_the_problem() {
    let mut failed = Vec::new();
    for row in rows() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("kconfigs")).unwrap();
        std::fs::write(
            d.path().join("kconfigs/bad.config"),
            "CONFIG_HZ_100=y\nHZ=100\n",
        )
        .unwrap();
        if let Some(m) = &row.matrix {
            std::fs::write(d.path().join("m.yaml"), m).unwrap();
        }
        let args: Vec<&str> = row.args.iter().map(|s| s.as_str()).collect();
        let out = lab(d.path(), &args, &row.env);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let code = out.status.code();
        let missing: Vec<&&str> = row.words.iter().filter(|w| !text.contains(**w)).collect();
        if code != Some(row.code) || !missing.is_empty() || text.contains("panicked") {
            failed.push(format!(
                "{}: exit {code:?} (want {}), missing {missing:?}:\n{text}",
                row.name, row.code
            ));
        }
        // Nothing here may create the cache.
        assert!(
            !d.path().join("cache").exists(),
            "{}: created the cache",
            row.name
        );
    }
    assert!(
        !repo()
            .join("tests/data/runs/aa-20261130-001338/cells/zz")
            .exists()
    );
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn help_names_the_exit_codes_and_usage_errors_exit_3() {
    let d = tempfile::tempdir().unwrap();
    let out = lab(d.path(), &["--help"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("3 usage or input error, 4 internal or environment error"),
        "{help}"
    );
    let out = lab(d.path(), &["plan"], &[]);
    assert_eq!(out.status.code(), Some(3));
}

/// A copy of the stored A/A run, to edit.
fn copy_run(to: &Path) -> PathBuf {
    let from = repo().join("tests/data/runs/aa-20261130-001338");
    let dest = to.join("aa");
    let st = Command::new("cp")
        .arg("-r")
        .arg(&from)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(st.success());
    dest
}

fn edit_json(path: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn reports_survive_huge_seconds_and_multibyte_hashes() {
    let d = tempfile::tempdir().unwrap();
    let run = copy_run(d.path());
    let cell = run.join("cells/x86_64-hz100-a_delay=1/rep-1/cell.json");
    edit_json(&cell, |v| v["secs"] = serde_json::json!(1e308));
    edit_json(&run.join("manifest.json"), |v| {
        v["matrix"]["hash"] = serde_json::json!("éééééééééééééééé");
    });
    let out_dir = d.path().join("out");
    let out = lab(
        d.path(),
        &[
            "report",
            run.to_str().unwrap(),
            "--format",
            "junit,text",
            "--out",
            out_dir.to_str().unwrap(),
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert!(matches!(out.status.code(), Some(0..=2)), "{out:?}");
    let xml = std::fs::read_to_string(out_dir.join("report.junit.xml"))
        .or_else(|_| std::fs::read_to_string(out_dir.join("report.xml")))
        .unwrap();
    assert!(xml.contains("<testsuites"), "{xml}");

    // Two "shards" whose matrix hashes differ, one of them not hex.
    let other = d.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let run2 = copy_run(&other);
    edit_json(&run2.join("manifest.json"), |v| {
        v["matrix"]["hash"] = serde_json::json!("ü".repeat(20));
    });
    let out = lab(
        d.path(),
        &[
            "merge",
            run.to_str().unwrap(),
            run2.to_str().unwrap(),
            "--out",
            "merged",
        ],
        &[],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("ran different matrices") && err.contains("éééééééééééé "),
        "{err}"
    );
    assert!(!d.path().join("merged").exists());
}

/// A plan with many cells, and `--max-cells` to allow it.
fn big_matrix(dir: &Path, values: usize) -> PathBuf {
    let vals: Vec<String> = (0..values).map(|v| v.to_string()).collect();
    let m = with(
        "  delay: [1, 2]\n",
        &format!("  delay: [1, 2]\n  n: [{}]\n", vals.join(", ")),
    )
    .replace(
        "number_ios: 10}",
        "number_ios: 10, description: \"{{ n }}\"}",
    );
    let p = dir.join("big.yaml");
    std::fs::write(&p, m).unwrap();
    p
}

#[test]
fn plan_into_a_closed_pipe_exits_0_quietly() {
    let d = tempfile::tempdir().unwrap();
    let m = big_matrix(d.path(), 5000);
    let mut child = Command::new(LAB)
        .args(["plan", m.to_str().unwrap(), "--max-cells", "1000000"])
        .env("LAB_CACHE", d.path().join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read one line, as `head -1` does, and close the pipe.
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with("matrix t "), "{line}");
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("Broken pipe"),
        "{err}"
    );
}

/// SIGTERM stops a long command within 2 s, with the interrupted code.
#[test]
fn sigterm_stops_plan_within_2_s() {
    let d = tempfile::tempdir().unwrap();
    let m = big_matrix(d.path(), 49_000);
    let child = Command::new(LAB)
        .args([
            "plan",
            m.to_str().unwrap(),
            "--format",
            "json",
            "--max-cells",
            "1000000",
        ])
        .env("LAB_CACHE", d.path().join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    term_within_2_s(child, "plan");
}

/// Sends SIGTERM half a second after the start and checks that the
/// command ends within 2 s of it, with the interrupted code and word.
fn term_within_2_s(mut child: std::process::Child, what: &str) {
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "{what} ended before the signal"
    );
    let sent = Instant::now();
    unsafe { libc_kill(child.id() as i32, 15) };
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(2),
            "{what} still running 2 s after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{what}: {status:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

/// SIGTERM stops the extraction of claims from a big thread within 2 s
/// (CI job timeouts send SIGTERM).
#[test]
fn sigterm_stops_claims_extract_within_2_s() {
    let d = tempfile::tempdir().unwrap();
    let mail = d.path().join("thread.mbox");
    let mut mbox = String::new();
    let mut n = 0;
    while mbox.len() < 40 << 20 {
        n += 1;
        mbox += &format!(
            "From x@y Mon Nov 30 10:00:00 2026\nSubject: [PATCH {n}] t\nMessage-ID: <m{n}@x>\n\n\
             Write latency, ms:\n\n  delay  before  after\n  1  {n}.5  1.2\n  2  9.9  2.4\n\n\
             writeback: {n} s -> 12.9 s\nflush: 3 s -> 1 s\n\n"
        );
    }
    std::fs::write(&mail, mbox).unwrap();
    let child = Command::new(LAB)
        .args([
            "claims",
            "extract",
            mail.to_str().unwrap(),
            "--format",
            "json",
        ])
        .env("LAB_CACHE", d.path().join("cache"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    term_within_2_s(child, "claims extract");
}

/// SIGTERM during `lab merge` leaves neither the output nor a temp dir.
#[test]
fn sigterm_during_merge_leaves_nothing_half_written() {
    let d = tempfile::tempdir().unwrap();
    let run = copy_run(d.path());
    // Make the copy slow: many small console files to copy.
    let boots = run.join("boots/pad");
    std::fs::create_dir_all(&boots).unwrap();
    for i in 0..20_000 {
        std::fs::write(boots.join(format!("pad-{i}.log")), "x").unwrap();
    }
    let mut child = Command::new(LAB)
        .args(["merge", run.to_str().unwrap(), "--out", "merged"])
        .current_dir(d.path())
        .env("LAB_CACHE", d.path().join("cache"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the temp directory appears, then stop it.
    let start = Instant::now();
    let tmp_seen = loop {
        let tmp = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains(".merged.merging-"));
        if tmp || child.try_wait().unwrap().is_some() || start.elapsed() > Duration::from_secs(20) {
            break tmp;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(tmp_seen, "merge ended before it could be interrupted");
    let sent = Instant::now();
    unsafe { libc_kill(child.id() as i32, 15) };
    let status = child.wait().unwrap();
    assert!(sent.elapsed() < Duration::from_secs(2));
    assert_eq!(status.code(), Some(130), "{status:?}");
    let left: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("merg"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
