//! `lab watch` on a local public-inbox archive built from the fixture
//! mails of tests/data/watch/ (one commit per message, as public-inbox
//! v2 stores them): classification, drafts and their checks, the budget,
//! a real run on the kernels the suite builds, the reply in the outbox,
//! and restarts (a second pass, new commits, and `kill -9` mid-run).

mod common;

use lab::watch::state::{State, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Timing runs must not share the two cores with another VM.
static ONE_VM: Mutex<()> = Mutex::new(());

const PATCH: &str = "20261031161158.94403-1-snitzer@kernel.org";
const TESTED: &str = "a1b2c3d4-tested@example.org";
const COVER: &str = "20241204102740.91733-1-tomasz.wielgus@example.org";

fn fixtures() -> PathBuf {
    common::repo().join("tests/data/watch")
}

/// A git repository with one commit per fixture, each adding the file `m`.
fn archive(dir: &Path, names: &[&str]) {
    if !dir.join(".git").exists() {
        git(dir, &["init", "-q"]);
    }
    for n in names {
        std::fs::copy(fixtures().join(n), dir.join("m")).unwrap();
        git(dir, &["add", "m"]);
        git(dir, &["commit", "-q", "--allow-empty", "-m", n]);
    }
}

fn git(dir: &Path, args: &[&str]) {
    std::fs::create_dir_all(dir).unwrap();
    let st = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=list", "-c", "user.email=list@example.org"])
        .args(args)
        .status()
        .unwrap();
    assert!(st.success(), "git {args:?}");
}

const FIRST: [&str; 12] = [
    "01-dm-delay-patch.eml",
    "02-dmcrypt-series-0.eml",
    "03-dmcrypt-series-1.eml",
    "04-dmcrypt-series-2.eml",
    "05-dmcrypt-series-3.eml",
    "06-mq-deadline-bfq-cover.eml",
    "07-bfq-patch-7-of-8.eml",
    "08-mq-deadline-tested-reply.eml",
    "09-dm-delay-tested-reply.eml",
    "10-syzbot-kasan-report.eml",
    "11-malformed.eml",
    "13-dmcrypt-tested-reply.eml",
];

/// The per-mail budget: the tested reply's x86_64 slice on cached
/// kernels fits (about 95 s estimated; all four delays, 148 s, do not); any slice that needs a kernel
/// build, or an arm64 guest, does not.
const BUDGET: &str = "120s";

fn watch(args: &[&str], dir: &Path) -> Output {
    Command::new(common::lab_bin())
        .arg("watch")
        .args(args)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn ok(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        o.status.success(),
        "exit {:?}\nstderr:\n{err}\nstdout:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout)
    );
    err
}

fn status(dir: &Path, id: &str) -> Status {
    let s = State::open(&dir.join("state.sqlite")).unwrap();
    s.get(id)
        .unwrap()
        .unwrap_or_else(|| panic!("no row for {id}"))
        .status
}

fn outbox(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir.join("outbox/new"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// No VM: every fixture classified, drafted and budgeted; a second pass
/// and a resend change nothing; two new commits are the only ones read.
#[test]
fn every_fixture_gets_its_state_and_restarts_read_only_new_commits() {
    let t = tempfile::tempdir().unwrap();
    let (repo, dir) = (t.path().join("list"), t.path().join("watch"));
    archive(&repo, &FIRST);
    let args = ["--once", "--no-run", "--budget-mail", BUDGET];
    let mut a: Vec<&str> = vec![repo.to_str().unwrap()];
    a.extend(args);
    let err = ok(&watch(&a, &dir));
    assert!(err.contains("12 new message(s)"), "{err}");
    let want = [
        (PATCH, Status::OverBudget),
        (COVER, Status::OverBudget),
        (
            "20241204102740.91733-2-tomasz.wielgus@example.org",
            Status::InSeries,
        ),
        (
            "20241204102740.91733-4-tomasz.wielgus@example.org",
            Status::InSeries,
        ),
        ("20240123174021.1967461-8-axboe@kernel.dk", Status::Waiting),
        (
            "c67b93f8-22c2-4ecd-b5e7-d7830c2f6aac@kernel.dk",
            Status::Ignored,
        ),
        (TESTED, Status::Queued),
        (
            "6759aa72.050a0220.17f54a.003c.GAE@google.com",
            Status::Ignored,
        ),
    ];
    for (id, st) in want {
        assert_eq!(status(&dir, id), st, "{id}");
    }
    let s = State::open(&dir.join("state.sqlite")).unwrap();
    assert_eq!(s.with_status(Status::Malformed).unwrap().len(), 1);
    // The five with numbers of their own are drafted: three patches (one
    // a series, drafted at its cover letter) and two replies.
    let drafted: Vec<String> = s
        .recent(100)
        .unwrap()
        .into_iter()
        .filter(|r| r.work.matrix.is_some())
        .map(|r| r.msgid)
        .collect();
    assert_eq!(drafted.len(), 5, "{drafted:?}");
    let tested = s.get(TESTED).unwrap().unwrap();
    // Cut to the slice the cache can run, which measures the reply's
    // own values (x86_64, delay 1, before and after).
    assert_eq!(tested.work.filter.as_deref(), Some("arch=x86_64,delay=1"));
    assert!(tested.work.estimate_secs.unwrap() <= 150.0);
    assert_eq!(tested.work.claims, Some(2));
    let patch = s.get(PATCH).unwrap().unwrap();
    assert!(patch.reason.contains("per-mail budget"), "{}", patch.reason);
    drop(s);

    // A second pass: nothing new, nothing changes.
    let err = ok(&watch(&a, &dir));
    assert!(err.contains("0 new message(s)"), "{err}");
    assert_eq!(status(&dir, TESTED), Status::Queued);

    // Two new commits: a resend of the patch (same Message-ID) and a
    // review without numbers. Only they are read.
    archive(
        &repo,
        &["01-dm-delay-patch.eml", "12-reviewed-by-reply.eml"],
    );
    let err = ok(&watch(&a, &dir));
    assert!(err.contains("1 new message(s)"), "{err}");
    assert!(err.contains("seen before"), "{err}");
    assert_eq!(status(&dir, "b7e1-reviewed@example.org"), Status::Ignored);
    let s = State::open(&dir.join("state.sqlite")).unwrap();
    assert_eq!(s.seen_again(PATCH).unwrap(), 1);
    assert_eq!(s.recent(100).unwrap().len(), 13);

    // status, show and retry.
    let st = ok(&watch(&["status"], &dir));
    let out = String::from_utf8_lossy(&watch(&["status"], &dir).stdout).to_string();
    assert!(
        out.contains("13 message(s)") && out.contains("queued"),
        "{st}{out}"
    );
    let show = watch(&["show", &format!("<{TESTED}>")], &dir);
    let show_out = String::from_utf8_lossy(&show.stdout).to_string();
    assert!(show_out.contains("arch=x86_64,delay=1"), "{show_out}");
    assert_eq!(
        watch(&["show", "nobody@example.org"], &dir).status.code(),
        Some(3)
    );
    ok(&watch(&["retry", PATCH], &dir));
    assert_eq!(status(&dir, PATCH), Status::New);
    // Retrying one patch of a series retries the series, at its head.
    let err = ok(&watch(
        &["retry", "20241204102740.91733-3-tomasz.wielgus@example.org"],
        &dir,
    ));
    assert!(err.contains("3 other message(s) of its series"), "{err}");
    assert_eq!(status(&dir, COVER), Status::New);
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains(TESTED) && html.contains("over-budget"));
}

/// Real kernels, QEMU, SSH and fio: the tested reply's slice runs, and
/// its reply lands in the outbox, threaded and at most 72 columns.
/// Killed with SIGKILL mid-run, the robot resumes that run on restart.
#[test]
fn a_reply_with_results_is_run_and_answered_and_a_killed_run_resumes() {
    let _one = ONE_VM.lock().unwrap_or_else(|e| e.into_inner());
    // The x86_64 HZ=100 kernels before and after the patch.
    common::small_kernels();
    let t = tempfile::tempdir().unwrap();
    let (repo, dir) = (t.path().join("list"), t.path().join("watch"));
    archive(
        &repo,
        &["01-dm-delay-patch.eml", "09-dm-delay-tested-reply.eml"],
    );
    let args = |once: bool| {
        let mut v = vec![
            repo.to_str().unwrap().to_string(),
            "--budget-mail".into(),
            BUDGET.into(),
            "--dir".into(),
            dir.to_str().unwrap().to_string(),
        ];
        if once {
            v.push("--once".into());
        }
        v
    };
    // First start: killed once a cell is recorded.
    let mut child = Command::new(common::lab_bin())
        .arg("watch")
        .args(args(true))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(t.path().join("first.log")).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(900);
    let runs = dir.join("runs");
    let recorded = || -> bool { glob_cells(&runs) > 0 };
    while !recorded() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!(
                "lab watch ended ({st}) before a cell was recorded:\n{}",
                std::fs::read_to_string(t.path().join("first.log")).unwrap()
            );
        }
        assert!(Instant::now() < deadline, "no cell recorded in 15 minutes");
        std::thread::sleep(Duration::from_millis(200));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
    assert_eq!(status(&dir, TESTED), Status::Running);
    assert!(outbox(&dir).is_empty());

    // Restart: the run is resumed, not started again.
    let out = Command::new(common::lab_bin())
        .arg("watch")
        .args(args(true))
        .output()
        .unwrap();
    let err = ok(&out);
    assert!(err.contains("resuming run"), "{err}");
    assert!(err.contains("already recorded"), "{err}");
    let slug_dirs: Vec<_> = std::fs::read_dir(&runs).unwrap().flatten().collect();
    assert_eq!(slug_dirs.len(), 1, "one message ran");
    let run = common::only_run(&slug_dirs[0].path());
    // Every cell repetition once: none measured twice.
    let mut seen = std::collections::BTreeSet::new();
    for c in run.cells().unwrap() {
        assert!(
            seen.insert((c.cell.clone(), c.rep)),
            "{} rep {} twice",
            c.cell,
            c.rep
        );
    }
    assert_eq!(seen.len(), 6, "2 cells x 3 repetitions: {seen:?}");

    let s = State::open(&dir.join("state.sqlite")).unwrap();
    let row = s.get(TESTED).unwrap().unwrap();
    assert_eq!(row.status, Status::Replied, "{}", row.reason);
    assert!(
        row.work
            .verdict
            .as_deref()
            .unwrap_or("")
            .contains("judged value(s) reproduced")
    );
    assert_eq!(s.get(PATCH).unwrap().unwrap().status, Status::OverBudget);
    drop(s);

    // The reply: a mail threaded under the tester's, quoting its table,
    // with lab's numbers beside the claimed ones.
    let replies = outbox(&dir);
    assert_eq!(replies.len(), 1, "{replies:?}");
    let text = std::fs::read_to_string(&replies[0]).unwrap();
    let m = mailparse::parse_mail(text.as_bytes()).unwrap();
    use mailparse::MailHeaderMap;
    let h = |k: &str| m.headers.get_first_value(k).unwrap_or_default();
    assert_eq!(h("In-Reply-To"), format!("<{TESTED}>"));
    assert!(h("References").contains(PATCH) && h("References").contains(TESTED));
    assert!(h("Subject").starts_with("Re: [PATCH] dm-delay"));
    assert!(h("To").contains("Ada Tester"));
    let body = m.get_body().unwrap();
    assert!(body.contains("wrote:\n>"), "{body}");
    assert!(body.contains(">          1       9.98    1.14"), "{body}");
    assert!(body.contains("Only a slice ran"), "{body}");
    assert!(body.contains("Verdict:"), "{body}");
    for l in body.lines() {
        assert!(l.chars().count() <= 72, "over 72 columns: {l:?}");
    }
    let html = std::fs::read_to_string(dir.join("index.html")).unwrap();
    assert!(html.contains("report.html") && html.contains("replied"));
    eprintln!("{text}");

    // A third start: nothing new, nothing run or answered twice.
    let err = ok(&Command::new(common::lab_bin())
        .arg("watch")
        .args(args(true))
        .output()
        .unwrap());
    assert!(err.contains("0 new message(s)"), "{err}");
    assert_eq!(outbox(&dir).len(), 1);
    assert_eq!(std::fs::read_dir(slug_dirs[0].path()).unwrap().count(), 1);
}

/// Cell repetitions recorded so far (`cells/CELL/rep-N/cell.json`)
/// under any run of `runs/`.
fn glob_cells(runs: &Path) -> usize {
    let ls = |p: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(p)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default()
    };
    let mut n = 0;
    for m in ls(runs) {
        for r in ls(&m) {
            for c in ls(&r.join("cells")) {
                n += ls(&c)
                    .iter()
                    .filter(|rep| rep.join("cell.json").is_file())
                    .count();
            }
        }
    }
    n
}
