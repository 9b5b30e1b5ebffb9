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

fn draft_of(mail_text: &str) -> (Option<i32>, String, String) {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("m.eml"), mail_text).unwrap();
    let o = lab(t.path(), &["new", "--mail", "m.eml", "--out", "d.yaml"]);
    let yaml = std::fs::read_to_string(t.path().join("d.yaml")).unwrap_or_default();
    (o.status.code(), text(&o), yaml)
}

/// What a mail gives that fio, sysfs or the setup cannot take as written
/// (a table cell pasted into an option, a placeholder in a path, a
/// device made by a tool lab does not run) is named in the draft, and
/// the draft still plans: lab new never exits 4 on a stranger's mail.
#[test]
fn values_lab_cannot_use_are_named_and_the_draft_still_plans() {
    let head = "From: A <a@example.org>\nSubject: [PATCH] blk: faster reads\n\
                Message-ID: <y@example.org>\n\n";
    // A value fio would refuse, from a pasted line.
    let (code, out, yaml) = draft_of(&format!(
        "{head}fio --name=r --rw=randread --bs=4k --numjobs=8t --filename=/dev/nullb0\n\n\
         before: 100k IOPS\nafter: 120k IOPS\n"
    ));
    assert_eq!(code, Some(0), "{out}");
    assert!(!yaml.contains("numjobs: 8t"), "{yaml}");
    assert!(
        yaml.contains("numjobs '8t': fio takes a whole number"),
        "{yaml}"
    );
    // A sysfs path with a placeholder the reader fills in.
    let (code, out, yaml) = draft_of(&format!(
        "{head}echo latency > /sys/fs/btrfs/<uuid>/read_policy\n\
         fio --name=r --rw=randread --bs=4k --filename=/dev/nullb0\n\n\
         before: 100k IOPS\nafter: 120k IOPS\n"
    ));
    assert_eq!(code, Some(0), "{out}");
    assert!(!yaml.contains("path: /sys/fs/btrfs/<uuid>"), "{yaml}");
    assert!(yaml.contains("is not one lab can write"), "{yaml}");
    // A loop over such a knob drafts nothing, so its variable is no
    // axis: three cells would all run the same.
    let (code, out, yaml) = draft_of(&format!(
        "{head}for v in 16 64 256; do echo $v > /sys/block/<dev>/queue/nr_requests; done\n\
         fio --name=r --rw=randread --bs=4k --filename=/dev/nullb0\n\n\
         before: 100k IOPS\nafter: 120k IOPS\n"
    ));
    assert_eq!(code, Some(0), "{out}");
    assert!(yaml.contains("is not one lab can write"), "{yaml}");
    assert!(!yaml.contains("run_axes:"), "{yaml}");
    // A file system on a device that a tool lab does not run makes.
    let (code, out, yaml) = draft_of(&format!(
        "{head}integritysetup open /dev/sda integ\n\
         mkfs.xfs /dev/mapper/integ\nmount /dev/mapper/integ /mnt\n\
         fio --name=r --rw=randread --bs=4k --filename=/mnt/f --size=64m\n\n\
         before: 100k IOPS\nafter: 120k IOPS\n"
    ));
    assert_eq!(code, Some(2), "{out}");
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("mkfs.device '/dev/mapper/integ'"), "{out}");
    assert!(!out.contains("a bug in lab new"), "{out}");
    assert!(!yaml.is_empty());
}

/// A table that names one column twice (fio's t/io_uring prints
/// `IOS/call=32/31`) gives one key in the draft's mapping, which YAML
/// requires; the draft plans.
#[test]
fn a_column_named_twice_is_one_key_and_the_draft_plans() {
    let (code, out, yaml) = draft_of(
        "From: A <a@example.org>\nSubject: [PATCH] nvme: fixed buffers\n\
         Message-ID: <z@example.org>\n\n\
         t/io_uring -b512 -d128 -c32 -s32 -p1 -F1 -B1 -n1 /dev/nvme0n1\n\n\
         after:\n\
         IOPS=2.10M, BW=1.02GiB/s, IOS/call=32/31\n\
         IOPS=2.12M, BW=1.03GiB/s, IOS/call=32/32\n",
    );
    assert!(code == Some(0) || code == Some(2), "{out}");
    assert!(!out.contains("a bug in lab new"), "{out}");
    assert!(yaml.contains("IOS/call"), "{yaml}");
    for block in yaml.split("  - source:").skip(1) {
        let keys: Vec<&str> = block
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("IOS/call:"))
            .collect();
        assert!(keys.len() <= 1, "{block}");
    }
}

/// Every real mail of the corpora (written from list archives, not for
/// lab new) drafts without "a bug in lab new": exit 0, or 2 with the
/// draft written and the reason given. Exit 4 on a stranger's mail was
/// what duplicate mapping keys, pasted table cells and placeholders gave.
#[test]
fn no_corpus_mail_makes_lab_new_fail_as_a_bug() {
    let mut mails = Vec::new();
    for corpus in ["tests/data/claims-corpus", "tests/data/drafts-corpus"] {
        let mut stack = vec![repo().join(corpus)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "eml" || x == "mbox") {
                    mails.push(p);
                }
            }
        }
    }
    assert!(mails.len() >= 100, "{} mails", mails.len());
    let t = tempfile::tempdir().unwrap();
    let mut bad = Vec::new();
    for m in &mails {
        let o = lab(
            t.path(),
            &[
                "new",
                "--mail",
                m.to_str().unwrap(),
                "--out",
                "d.yaml",
                "--force",
            ],
        );
        let code = o.status.code();
        if !matches!(code, Some(0 | 2)) || text(&o).contains("a bug in lab new") {
            bad.push(format!(
                "{}: {code:?}: {}",
                m.display(),
                text(&o).lines().next().unwrap_or("")
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
