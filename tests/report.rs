//! `lab report` over stored run directories, through the public API.
//!
//! [`check_run`] loads any run directory, renders every format and checks
//! what must hold for every run: text under 80 columns, a self-contained
//! HTML page, JUnit that is well-formed XML with standard attributes, a
//! JSON model that reads back, and an exit code that agrees with the
//! model. A stored real run needs only a test calling it, e.g.
//!
//! ```ignore
//! #[test]
//! fn stored_dm_delay_run() {
//!     let r = check_run(&data("runs/dm-delay-20261101-120000"));
//!     assert_eq!(exit_code(&r), 0);
//! }
//! ```

use lab::report::{Format, Report, exit_code, render, testing};
use lab::results::RunDir;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[allow(dead_code)]
fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// Every format of a run's report, with the checks every run must pass.
fn render_all(dir: &Path) -> (Report, BTreeMap<&'static str, String>) {
    let run = RunDir::open(Path::new("/nonexistent"), &dir.display().to_string()).unwrap();
    let report = lab::report::load(&run).unwrap();
    let out = Format::ALL
        .iter()
        .map(|f| (f.name(), render(&report, *f).unwrap()))
        .collect();
    (report, out)
}

fn check_run(dir: &Path) -> Report {
    let (report, out) = render_all(dir);

    let text = &out["text"];
    for line in text.lines() {
        assert!(line.chars().count() < 80, "text line too long: {line}");
    }

    let html = &out["html"];
    assert!(html.contains("<svg"));
    for bad in ["src=\"http", "<link", "<script src", "href=\"http"] {
        assert!(!html.contains(bad), "HTML refers outside itself: {bad}");
    }

    let xml = &out["junit"];
    check_junit(xml);
    assert_eq!(
        xml.matches("<failure").count(),
        report.outcome.regressions.len() + report.outcome.unmet_claims.len()
    );

    let back: Report = serde_json::from_str(&out["json"]).unwrap();
    assert_eq!(back.groups.len(), report.groups.len());
    assert_eq!(exit_code(&back), exit_code(&report));
    assert_eq!(report.outcome.exit_code, exit_code(&report));

    assert!(out["md"].starts_with("# "));

    // Every claimed value is in every format, unbound ones included.
    let reply = &out["reply"];
    for line in reply.lines() {
        assert!(line.chars().count() <= 72, "reply line too long: {line}");
    }
    for c in &report.claims {
        let status = c.status.to_string();
        assert!(out["text"].contains(&status), "text lacks {status}");
        assert!(out["md"].contains(&status), "md lacks {status}");
        assert!(out["html"].contains(&status), "html lacks {status}");
        assert!(xml.contains(&format!(": {status}")), "junit lacks {status}");
    }
    report
}

/// Well-formed, and only the attributes JUnit schemas agree on.
fn check_junit(xml: &str) {
    let allowed: &[(&str, &[&str])] = &[
        (
            "testsuites",
            &["name", "tests", "failures", "errors", "time"],
        ),
        (
            "testsuite",
            &["name", "tests", "failures", "errors", "time"],
        ),
        ("testcase", &["name", "classname", "time"]),
        ("failure", &["message", "type"]),
        ("error", &["message", "type"]),
    ];
    for (name, attrs) in lab::report::testing::xml_elements(xml) {
        let (_, allowed_attrs) = allowed
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("unexpected element <{name}>"));
        for attr in attrs {
            assert!(
                allowed_attrs.contains(&attr.as_str()),
                "<{name}> has attribute {attr}"
            );
        }
    }
    // xmllint, when installed, checks it as XML too.
    if let Ok(out) = std::process::Command::new("xmllint")
        .args(["--noout", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(xml.as_bytes())?;
            child.wait_with_output()
        })
    {
        assert!(
            out.status.success(),
            "xmllint: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn synthetic_dm_delay_run() {
    let d = tempfile::tempdir().unwrap();
    let run = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let r = check_run(&run.path);
    assert_eq!(exit_code(&r), 0);
    let verdicts: Vec<&str> = r
        .groups
        .iter()
        .map(|g| g.comparisons[0].verdict.as_str())
        .collect();
    assert_eq!(verdicts, ["better", "better", "better", "no change"]);
}

#[test]
fn synthetic_regression_fails_ci() {
    let d = tempfile::tempdir().unwrap();
    let mut s = testing::before_after(3).unwrap();
    for c in s
        .cells
        .iter_mut()
        .filter(|c| c.variant == "after" && c.cell.ends_with("delay=20"))
    {
        c.metrics[0].value = 26e6 + f64::from(c.rep);
    }
    let run = testing::write(d.path(), &s).unwrap();
    let r = check_run(&run.path);
    assert_eq!(exit_code(&r), 1);
}

/// The report model as JSON, for assertions that read like the report.
fn model(r: &Report) -> serde_json::Value {
    serde_json::to_value(r).unwrap()
}

fn verdicts(r: &Report) -> Vec<(String, String)> {
    let m = model(r);
    let mut out = Vec::new();
    for g in m["groups"].as_array().unwrap() {
        for c in g["comparisons"].as_array().unwrap() {
            out.push((
                c["cell"].as_str().unwrap().to_string(),
                c["verdict"].as_str().unwrap().to_string(),
            ));
        }
    }
    out
}

/// A real arm64 HZ=100 dm-delay run (3 repetitions, TCG), stored as lab
/// wrote it: the patch wins for 1, 2 and 5 ms, and the mail's arm64
/// claims are reproduced within the matrix's 15%.
#[test]
fn stored_arm64_dm_delay_run() {
    let r = check_run(&data("runs/dm-delay-20261130-001024"));
    assert_eq!(exit_code(&r), 0);
    let v = verdicts(&r);
    for d in ["1", "2", "5"] {
        let cell = format!("arm64-hz100-after:delay={d}");
        assert!(
            v.contains(&(cell.clone(), "better".into())),
            "{cell}: {v:?}"
        );
    }
    assert!(
        v.contains(&("arm64-hz100-after:delay=20".into(), "no change".into())),
        "{v:?}"
    );
    let m = model(&r);
    let claims = m["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 8);
    assert!(
        claims.iter().all(|c| c["status"] == "reproduced"),
        "{claims:?}"
    );
    let (_, out) = render_all(&data("runs/dm-delay-20261130-001024"));
    let text = &out["text"];
    assert!(
        text.contains("1.16") && text.contains("9.97"),
        "claimed values beside the measured:\n{text}"
    );
    assert!(
        text.contains("arch_sys_counter"),
        "the clocksource is in the provenance:\n{text}"
    );
    let claimed: Vec<(String, String, Option<f64>)> = r
        .claims
        .iter()
        .map(|c| (c.row_key.clone(), c.column.clone(), c.claimed))
        .collect();
    assert_eq!(claimed[0], ("1".into(), "before".into(), Some(9.97)));
    assert_eq!(claimed[7], ("20".into(), "after".into(), Some(21.29)));
    assert!(
        r.claims
            .iter()
            .all(|c| c.unit == "ms" && c.metric == "write.lat_mean")
    );
}

/// `--format reply` of the stored arm64 run: the mail's table with the
/// measured numbers beside it, the verdict, one line of environment,
/// all within 72 columns.
#[test]
fn reply_of_the_stored_dm_delay_run() {
    let (r, out) = render_all(&data("runs/dm-delay-20261130-001024"));
    let reply = &out["reply"];
    for line in reply.lines() {
        assert!(line.chars().count() <= 72, "too long: {line:?}\n{reply}");
    }
    assert!(
        reply.contains(
            "Claim 1, table 1, measured on arch=arm64,hz=100: write.lat_mean in ms,\ntolerance 15%.\n"
        ),
        "{reply}"
    );
    let lines: Vec<&str> = reply.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("delay"))
        .unwrap();
    let words = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        words(lines[header]),
        ["delay", "before", "lab", "after", "lab"]
    );
    // Each row: the claimed value, then the lab's median in the same unit.
    for (i, (delay, before, after)) in [
        ("1", "9.97", "1.16"),
        ("2", "9.97", "2.38"),
        ("5", "9.99", "5.85"),
        ("20", "20.06", "21.29"),
    ]
    .iter()
    .enumerate()
    {
        let w = words(lines[header + 1 + i]);
        assert_eq!(
            (w[0].as_str(), w[1].as_str(), w[3].as_str()),
            (*delay, *before, *after),
            "{reply}"
        );
        let measured = |col: &str| {
            r.claims
                .iter()
                .find(|c| c.row_key == *delay && c.column == col)
                .and_then(|c| c.measured)
                .unwrap()
        };
        let lab_before: f64 = w[2].parse().unwrap();
        let lab_after: f64 = w[4].parse().unwrap();
        assert!(
            (lab_before - measured("before")).abs() < 0.01 * measured("before"),
            "{reply}"
        );
        assert!(
            (lab_after - measured("after")).abs() < 0.01 * measured("after"),
            "{reply}"
        );
    }
    assert!(
        reply.contains("Of 8 claimed value(s) checked against this run: 8 reproduced."),
        "{reply}"
    );
    assert!(reply.contains("Verdict: acceptable"), "{reply}");
    let env = lines.iter().find(|l| l.starts_with("Env: ")).unwrap();
    assert!(env.starts_with("Env: arm64, HZ=100, linux 6.12"), "{env}");
    assert!(
        env.contains("tcg") && env.ends_with("clocksource arch_sys_counter"),
        "{env}"
    );
}

/// A claim with no `source:` and no `from_variant` reads the one mail
/// given with `--mail`: the same 8 values bind as through the patch
/// mail. With no mail, or two, it says what to give.
#[test]
fn a_claim_without_a_source_reads_the_one_mail_given() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("matrices/dm-delay.yaml"))
        .unwrap()
        .replace("from_variant: after", "row_variants: {}")
        .replace("    tolerance: 15%\n", "");
    assert!(!text.contains("from_variant"), "{text}");
    let m = lab::matrix::Matrix::parse(&root.join("matrices/dm-delay.yaml"), &text).unwrap();
    assert_eq!(m.claims[0].tolerance.value, "15%");
    let plan = m.plan().unwrap();
    let mail = root.join("tests/data/patches/dm-delay-ns-expiry.mbox");
    let metrics = lab::matrix::claims::command_metrics(&m);
    let bound = |mails: &[std::path::PathBuf]| {
        let (sources, problems) = lab::results::claim_sources::gather(&m, mails, &[]);
        let claims =
            lab::results::claim_sources::bind_all(&m.claims, &sources, &problems, &plan, &metrics);
        (claims[0].values.len(), claims[0].unbound(), problems)
    };
    let (values, unbound, problems) = bound(std::slice::from_ref(&mail));
    assert_eq!((values, unbound), (8, 0), "{problems:?}");
    let (_, _, problems) = bound(&[]);
    assert!(
        problems[0]
            .detail
            .contains("no source: give source: {mail: FILE}, from_variant, or one --mail file"),
        "{problems:?}"
    );
    let (_, _, problems) = bound(&[mail.clone(), mail]);
    assert!(
        problems[0]
            .detail
            .contains("no source, and 2 --mail/--claims files"),
        "{problems:?}"
    );
}

/// `lab claims check` on the dm-delay matrix and the repo's copy of the
/// patch mail: all 8 values bind, each to the 6 cells (3 HZ x 2 arches)
/// of its delay and variant, on write.lat_mean.
#[test]
fn claims_check_binds_the_dm_delay_mail() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let m = lab::matrix::Matrix::load(&root.join("matrices/dm-delay.yaml")).unwrap();
    let plan = m.plan().unwrap();
    let mail = root.join("tests/data/patches/dm-delay-ns-expiry.mbox");
    let (sources, problems) =
        lab::results::claim_sources::gather(&m, std::slice::from_ref(&mail), &[]);
    let metrics = lab::matrix::claims::command_metrics(&m);
    let claims =
        lab::results::claim_sources::bind_all(&m.claims, &sources, &problems, &plan, &metrics);
    assert_eq!(claims.len(), 1);
    let values = &claims[0].values;
    assert_eq!(values.len(), 8);
    assert_eq!(claims[0].unbound(), 0);
    for b in values {
        assert_eq!(b.metric, "write.lat_mean");
        assert_eq!(b.unit, "ms");
        assert_eq!(b.from_stored, 1e-6);
        let lab::matrix::claims::Target::Cells(cells) = &b.target else {
            panic!("{b:?}");
        };
        assert_eq!(cells.len(), 6, "{cells:?}");
        let suffix = format!("-{}:delay={}", b.column, b.row);
        assert!(cells.iter().all(|c| c.ends_with(&suffix)), "{cells:?}");
    }
    let mut out = Vec::new();
    let code = lab::report::claim_bind::check(&m, &plan, &[mail], &[], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("  1 [before] delay=1, variant=before: 9.97 ms\n    -> write.lat_mean of x86_64-hz100-before:delay=1, "), "{text}");
    assert!(text.ends_with("8 of 8 claimed value(s) bound\n"), "{text}");

    // Without the mail, nothing binds, and the reason says which mail.
    let mut out = Vec::new();
    let code = lab::report::claim_bind::check(&m, &plan, &[], &[], &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(code, 1);
    assert!(text.contains("unbound: claim 1: the patch mail of variant 'after' is not among the --mail or --claims files (none given)"), "{text}");
}

/// A real A/A run: the same kernel under two names gives no change, and
/// the report states the lab's own noise.
#[test]
fn stored_aa_run_shows_no_change_and_the_noise() {
    let r = check_run(&data("runs/aa-20261130-001338"));
    assert_eq!(exit_code(&r), 0);
    let v = verdicts(&r);
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|(_, verdict)| verdict == "no change"), "{v:?}");
    let m = model(&r);
    let noise = &m["aa_noise"][0];
    assert_eq!(noise["variants"], serde_json::json!(["a", "b"]));
    assert!(noise["max_abs_change"].as_f64().unwrap() < 0.05);
    let (_, out) = render_all(&data("runs/aa-20261130-001338"));
    assert!(out["text"].contains("A/A noise"), "{}", out["text"]);
}

/// A real nvme-poll slice on 6.12: every cell that wrote io_poll_delay
/// carries the ignored-knob flag.
#[test]
fn stored_nvme_poll_run_flags_the_ignored_knob() {
    let r = check_run(&data("runs/nvme-poll-20261130-001708"));
    let m = model(&r);
    let mut flagged = 0;
    for g in m["groups"].as_array().unwrap() {
        for c in g["cells"].as_array().unwrap() {
            let kinds: Vec<&str> = c["flags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["kind"].as_str().unwrap())
                .collect();
            assert!(kinds.contains(&"knob-ignored"), "{}: {kinds:?}", c["cell"]);
            assert!(c["flags"].to_string().contains("io_poll_delay"));
            flagged += 1;
        }
    }
    assert_eq!(flagged, 6);
}

/// The JUnit files of the stored real runs pass a schema check.
#[test]
fn junit_of_stored_runs_passes_the_schema() {
    let xsd = data("junit/junit.xsd");
    for run in [
        "runs/dm-delay-20261130-001024",
        "runs/aa-20261130-001338",
        "runs/nvme-poll-20261130-001708",
    ] {
        let (_, out) = render_all(&data(run));
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("report.junit.xml");
        std::fs::write(&f, &out["junit"]).unwrap();
        let o = std::process::Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&xsd)
            .arg(&f)
            .output()
            .expect("xmllint (Debian's libxml2-utils) must be installed: lab doctor --install");
        assert!(
            o.status.success(),
            "{run}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// A claim whose `columns:` name no column of its table binds nothing:
/// `lab claims check` says which names and which columns there are, and
/// it is never "0 of 0 bound" and fine (issue 27).
#[test]
fn claims_check_names_columns_that_match_no_column() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("matrices/dm-delay.yaml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "columns: {before: before, after: after}",
        "columns: {nosuch: after}",
    );
    assert!(text.contains("nosuch"));
    let m = lab::matrix::Matrix::parse(&path, &text).unwrap();
    let plan = m.plan().unwrap();
    let mail = root.join("tests/data/patches/dm-delay-ns-expiry.mbox");
    let (sources, problems) =
        lab::results::claim_sources::gather(&m, std::slice::from_ref(&mail), &[]);
    let metrics = lab::matrix::claims::command_metrics(&m);
    let claims =
        lab::results::claim_sources::bind_all(&m.claims, &sources, &problems, &plan, &metrics);
    let p = claims[0].problem.as_deref().unwrap_or("");
    assert!(
        p.contains("columns: nosuch name no column of table 1"),
        "{p}"
    );
    assert!(p.contains("its columns: before, after"), "{p}");
}
