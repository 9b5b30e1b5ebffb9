//! `lab new` as a user runs it: mail in, matrix out, and the matrix
//! accepted by `lab plan` and `lab claims check` with no further edits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lab"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn a_mail_becomes_a_matrix_that_plans_and_binds_every_claim() {
    let t = tempfile::tempdir().unwrap();
    // The mail beside the matrices, as a user keeps them.
    std::fs::create_dir_all(t.path().join("mails")).unwrap();
    let mail = t.path().join("mails/dm-delay.mbox");
    std::fs::copy(
        repo().join("tests/data/patches/dm-delay-ns-expiry.mbox"),
        &mail,
    )
    .unwrap();
    let o = lab(
        t.path(),
        &["new", "--mail", "mails/dm-delay.mbox", "--name", "dmd"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // The one-screen summary: cells, runnable, claims, what was inferred.
    let s = text(&o);
    assert!(s.contains("  cells     8\n  runnable  yes\n"), "{s}");
    assert!(
        s.contains("  claims    1 kept, binding 8 value(s); every kept claim binds\n"),
        "{s}"
    );
    assert!(s.contains("  inferred (check these first):\n"), "{s}");
    assert!(
        s.lines()
            .all(|l| l.chars().count() <= 72 || l.starts_with("next:")),
        "{s}"
    );
    let yaml = std::fs::read_to_string(t.path().join("matrices/dmd.yaml")).unwrap();
    // The mail is named relative to the matrix, so the two move together.
    assert!(yaml.contains("mail: ../mails/dm-delay.mbox"), "{yaml}");

    let o = lab(t.path(), &["plan", "matrices/dmd.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("arm64-hz100-after:delay=20"),
        "{}",
        text(&o)
    );
    let o = lab(t.path(), &["claims", "check", "matrices/dmd.yaml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        text(&o).contains("8 of 8 claimed value(s) bound"),
        "{}",
        text(&o)
    );

    // A second draft does not overwrite the first without --force.
    let o = lab(
        t.path(),
        &["new", "--mail", "mails/dm-delay.mbox", "--name", "dmd"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(
        text(&o).contains("matrices/dmd.yaml exists; give --force"),
        "{}",
        text(&o)
    );
    // `--out -` writes to stdout.
    let o = lab(
        t.path(),
        &["new", "--mail", "mails/dm-delay.mbox", "--out", "-"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("# Drafted by `lab new`"));
}

#[test]
fn a_missing_mail_or_a_bad_name_is_a_usage_error() {
    let t = tempfile::tempdir().unwrap();
    let o = lab(t.path(), &["new", "--mail", "/nonexistent/x.eml"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(text(&o).contains("/nonexistent/x.eml"), "{}", text(&o));
    let mail = repo().join("tests/data/new/prose-only-nvme.eml");
    let o = lab(
        t.path(),
        &["new", "--mail", mail.to_str().unwrap(), "--name", "../x"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
}

/// A mail whose fio opens a device nothing in the mail makes: the draft
/// is written for the reviewer to finish, and `lab new` exits 2 saying
/// what it could not work out, never 0 and never "a bug in lab new".
#[test]
fn a_draft_that_cannot_run_is_written_and_exits_2_saying_why() {
    let t = tempfile::tempdir().unwrap();
    let mail = t.path().join("m.eml");
    std::fs::write(
        &mail,
        "From: A <a@example.org>\nSubject: [PATCH] md: faster resync\n\
         Message-ID: <x@example.org>\n\n\
         fio --name=r --rw=randread --bs=4k --filename=/dev/mapper/cache0\n\n\
         before: 100k IOPS\nafter: 120k IOPS\n",
    )
    .unwrap();
    let o = lab(t.path(), &["new", "--mail", "m.eml", "--out", "d.yaml"]);
    let all = text(&o);
    assert_eq!(o.status.code(), Some(2), "{all}");
    assert!(
        all.contains("could not work out what the mail's fio job opens"),
        "{all}"
    );
    let words = all.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("filename '/dev/mapper/cache0'"), "{all}");
    assert!(!all.contains("a bug in lab new"), "{all}");
    assert!(t.path().join("d.yaml").exists());
}
