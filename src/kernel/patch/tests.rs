//! End-to-end tests with the real tools: git, GNU patch, tar, cp.

use super::*;
use crate::events::{Events, Recorder};
use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::sync::OnceLock;

const DM_DELAY: &str = "drivers/md/dm-delay.c";
const DM_DELAY_SUBJECT: &str =
    "[PATCH] dm-delay: do not round a short delay up to the next timer tick";
const DM_DELAY_ID: &str = "20261031161158.94403-1-snitzer@kernel.org";
const COVER_ID: &str = "cover.1795992121.git.ada@example.org";

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/patches")
        .join(name)
}

fn mail_def(path: &Path) -> PatchDef {
    PatchDef::Mail {
        mail: path.display().to_string(),
    }
}

fn dm_delay_patch() -> Patch {
    let mut p = load(&mail_def(&data("dm-delay-ns-expiry.mbox")), &[]).unwrap();
    assert_eq!(p.len(), 1);
    p.remove(0)
}

/// Debian's linux-source-6.12 dm-delay.c: from the extracted tree when it
/// is there, else pulled out of the tarball once into a cache in the temp
/// directory (about 20 s).
fn dm_delay_612() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let extracted = Path::new("/tmp/k/linux-source-6.12").join(DM_DELAY);
        if extracted.exists() {
            return extracted;
        }
        let tarball = Path::new("/usr/src/linux-source-6.12.tar.xz");
        assert!(
            tarball.exists(),
            "neither {} nor {} exists; install linux-source-6.12",
            extracted.display(),
            tarball.display()
        );
        let cached = std::env::temp_dir().join("lab-test-6.12-dm-delay.c");
        if !cached.exists() {
            let tmp = tempfile::tempdir().unwrap();
            let member = format!("linux-source-6.12/{DM_DELAY}");
            run(Command::new("tar")
                .arg("-xJf")
                .arg(tarball)
                .arg("-C")
                .arg(tmp.path())
                .arg(&member));
            // Same file system as `cached`, so the rename is atomic.
            std::fs::rename(tmp.path().join(&member), &cached).unwrap();
        }
        cached
    })
    .clone()
}

fn run(cmd: &mut Command) -> String {
    crate::util::run_output(cmd.env("LC_ALL", "C")).unwrap()
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap()
}

/// A temp tree holding 6.12's dm-delay.c.
fn dm_delay_tree() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(t.path().join("drivers/md")).unwrap();
    std::fs::copy(dm_delay_612(), t.path().join(DM_DELAY)).unwrap();
    t
}

/// A hardlink farm of `pristine`, made the way the kernel stage makes it.
fn farm(pristine: &Path) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let dest = t.path().join("farm");
    run(Command::new("cp").arg("-al").arg(pristine).arg(&dest));
    t
}

/// The diff `git diff` makes between two sets of files; user config is
/// kept out since settings such as diff.noprefix change the format.
fn git_diff(before: &[(&str, &str)], after: &[(&str, &str)]) -> String {
    let repo = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        run(Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(repo.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1"))
    };
    git(&["init", "-q"]);
    for (rel, text) in before {
        write(repo.path(), rel, text);
    }
    git(&["add", "-A"]);
    git(&["commit", "-qm", "base"]);
    for (rel, _) in before {
        std::fs::remove_file(repo.path().join(rel)).unwrap();
    }
    for (rel, text) in after {
        write(repo.path(), rel, text);
    }
    git(&["add", "-A"]);
    git(&["diff", "--cached"])
}

fn diff_patch(diff: String) -> Patch {
    Patch::new("test.diff", "[PATCH] test", None, diff)
}

fn numbered(n: std::ops::Range<u32>) -> String {
    n.map(|i| format!("line {i}\n")).collect()
}

// 1. The shared mail.
#[test]
fn loads_the_dm_delay_mail() {
    let p = dm_delay_patch();
    assert_eq!(p.subject, DM_DELAY_SUBJECT);
    assert!(p.subject.contains("dm-delay"));
    assert_eq!(p.message_id.as_deref(), Some(DM_DELAY_ID));
    assert!(p.diff.starts_with("diff --git a/drivers/md/dm-delay.c"));
    assert!(
        p.diff.ends_with(
            " \tspin_lock(&dc->delayed_bios_lock);\n \tif (unlikely(!dc->may_delay)) {\n"
        )
    );
    assert!(!p.diff.contains("2.44.0"));
    assert_eq!(p.hash, crate::util::hash_bytes(p.diff.as_bytes()));
    assert_eq!(touched_files(&p.diff), vec![DM_DELAY]);
    let h = hunks(&p.diff);
    let headers: Vec<&str> = h.iter().map(|(_, _, hd)| hd.as_str()).collect();
    assert_eq!(
        headers,
        vec![
            "@@ -15,6 +15,7 @@",
            "@@ -51,7 +52,15 @@ struct dm_delay_info {",
            "@@ -83,6 +92,13 @@ static void flush_bios(struct bio *bio)",
            "@@ -98,7 +114,7 @@ static void flush_delayed_bios(struct delay_c *dc, bool flush_all)",
            "@@ -322,7 +338,10 @@ static int delay_bio(struct delay_c *dc, struct delay_class *c, struct bio *bio)",
        ]
    );
    assert!(
        h.iter()
            .enumerate()
            .all(|(i, (f, n, _))| f == DM_DELAY && *n == i + 1)
    );
}

// 2. Against 6.12 it needs fuzz 3.
#[test]
fn dm_delay_without_fuzz_names_hunk_1_and_suggests_fuzz() {
    let tree = dm_delay_tree();
    let before = read(tree.path(), DM_DELAY);
    let err = apply(tree.path(), &[dm_delay_patch()], 0, &Events::silent())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        format!(
            "patch '{DM_DELAY_SUBJECT}': hunk #1 (@@ -15,6 +15,7 @@) of {DM_DELAY} does not apply; \
             it might apply with fuzz; set `fuzz: 3` on the variant to allow patch -F3"
        )
    );
    assert_eq!(
        read(tree.path(), DM_DELAY),
        before,
        "a refused patch changes nothing"
    );
}

#[test]
fn dm_delay_with_fuzz_2_is_still_refused() {
    let tree = dm_delay_tree();
    let err = apply(tree.path(), &[dm_delay_patch()], 2, &Events::silent())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "hunk #1 (@@ -15,6 +15,7 @@) of {DM_DELAY} does not apply even with fuzz 2"
        )),
        "{err}"
    );
}

#[test]
fn dm_delay_applies_with_fuzz_3_and_warns() {
    let tree = dm_delay_tree();
    let rec = Recorder::default();
    let applied = apply(
        tree.path(),
        &[dm_delay_patch()],
        3,
        &rec.attach(Events::silent()),
    )
    .unwrap();
    let hunk1 = FuzzedHunk {
        patch: DM_DELAY_SUBJECT.into(),
        file: DM_DELAY.into(),
        hunk: 1,
        header: "@@ -15,6 +15,7 @@".into(),
        fuzz: 3,
        offset: 0,
    };
    assert_eq!(applied.fuzzed, vec![hunk1]);
    assert_eq!(applied.method, "patch -F3");
    assert_eq!(applied.touched, vec![DM_DELAY]);
    assert_eq!(
        rec.warnings(),
        vec![format!(
            "{DM_DELAY_SUBJECT}: hunk #1 of {DM_DELAY} (@@ -15,6 +15,7 @@) applied with fuzz 3"
        )]
    );
    let text = read(tree.path(), DM_DELAY);
    assert!(text.contains("u64 expires_ns;"));
    assert!(text.contains("#include <linux/timekeeping.h>\n"));
    assert!(
        text.contains(
            "static bool delay_expired(struct delay_c *dc, struct dm_delay_info *delayed)"
        )
    );
    // Neither backups nor rejects are left behind.
    let names: Vec<_> = std::fs::read_dir(tree.path().join("drivers/md"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec!["dm-delay.c"]);
}

// 3. The pristine tree behind a hardlink farm is never changed.
#[test]
fn fuzzed_apply_into_a_farm_leaves_the_pristine_file_alone() {
    let pristine = dm_delay_tree();
    let original = std::fs::read(pristine.path().join(DM_DELAY)).unwrap();
    let farm = farm(pristine.path());
    let tree = farm.path().join("farm");
    let ino = |root: &Path| std::fs::metadata(root.join(DM_DELAY)).unwrap().ino();
    assert_eq!(ino(&tree), ino(pristine.path()), "cp -al links");
    apply(&tree, &[dm_delay_patch()], 3, &Events::silent()).unwrap();
    assert_eq!(
        std::fs::read(pristine.path().join(DM_DELAY)).unwrap(),
        original
    );
    assert_ne!(ino(&tree), ino(pristine.path()));
    assert!(read(&tree, DM_DELAY).contains("expires_ns"));
}

/// A patch that edits, creates and deletes, against a base whose context
/// differs from `tree_text` in its first line when `fuzz` is set.
fn farm_edit_create_delete(fuzz: bool) {
    let base = numbered(0..10);
    let diff = git_diff(
        &[("src/a.c", &base), ("src/old.c", "old\n")],
        &[
            ("src/a.c", &base.replace("line 5\n", "line five\n")),
            ("src/new.c", "new\n"),
        ],
    );
    let in_tree = if fuzz {
        base.replace("line 2\n", "line two\n")
    } else {
        base
    };
    let pristine = tempfile::tempdir().unwrap();
    write(pristine.path(), "src/a.c", &in_tree);
    write(pristine.path(), "src/old.c", "old\n");
    let farm = farm(pristine.path());
    let tree = farm.path().join("farm");
    let applied = apply(&tree, &[diff_patch(diff)], 3, &Events::silent()).unwrap();
    assert_eq!(applied.method, if fuzz { "patch -F3" } else { "git apply" });
    assert_eq!(applied.fuzzed.len(), usize::from(fuzz));
    assert_eq!(applied.touched, vec!["src/a.c", "src/new.c", "src/old.c"]);
    assert_eq!(read(pristine.path(), "src/a.c"), in_tree);
    assert_eq!(read(pristine.path(), "src/old.c"), "old\n");
    assert!(!pristine.path().join("src/new.c").exists());
    assert!(read(&tree, "src/a.c").contains("line five\n"));
    assert_eq!(read(&tree, "src/new.c"), "new\n");
    assert!(!tree.join("src/old.c").exists());
}

#[test]
fn new_and_deleted_files_in_a_farm_with_git_apply() {
    farm_edit_create_delete(false);
}

#[test]
fn new_and_deleted_files_in_a_farm_with_patch() {
    farm_edit_create_delete(true);
}

// 4. A clean patch goes through git apply.
#[test]
fn a_clean_patch_applies_with_git_apply() {
    let base = numbered(0..30);
    let diff = git_diff(
        &[("lib/x.c", &base)],
        &[(
            "lib/x.c",
            &base.replace("line 20\n", "line 20\nline 20.5\n"),
        )],
    );
    let tree = tempfile::tempdir().unwrap();
    write(tree.path(), "lib/x.c", &base);
    let rec = Recorder::default();
    let applied = apply(
        tree.path(),
        &[diff_patch(diff)],
        3,
        &rec.attach(Events::silent()),
    )
    .unwrap();
    assert_eq!(applied.method, "git apply");
    assert!(applied.fuzzed.is_empty());
    assert!(rec.warnings().is_empty());
    assert_eq!(
        read(tree.path(), "lib/x.c"),
        base.replace("line 20\n", "line 20\nline 20.5\n")
    );
}

#[test]
fn git_apply_ignores_the_config_of_a_repository_above_the_tree() {
    // The tree lies inside a git repository, as a tree under the project
    // checkout would, whose config refuses whitespace errors.
    let outer = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| run(Command::new("git").args(args).current_dir(outer.path()));
    git(&["init", "-q"]);
    git(&["config", "apply.whitespace", "error"]);
    let tree = outer.path().join("build/tree");
    let base = numbered(0..5);
    write(&tree, "f.c", &base);
    let after = base.replace("line 2\n", "line II \n");
    let diff = git_diff(&[("f.c", &base)], &[("f.c", &after)]);
    let applied = apply(&tree, &[diff_patch(diff)], 0, &Events::silent()).unwrap();
    assert_eq!(applied.method, "git apply");
    assert_eq!(read(&tree, "f.c"), after);
}

// 5. A hunk that no fuzz can place.
fn two_hunk_patch_on_a_rewritten_tail() -> (tempfile::TempDir, Patch) {
    let base = numbered(0..30);
    let diff = git_diff(
        &[("src/f.txt", &base)],
        &[(
            "src/f.txt",
            &base
                .replace("line 2\n", "line two\n")
                .replace("line 25\n", "line 25b\n"),
        )],
    );
    let tree = tempfile::tempdir().unwrap();
    write(
        tree.path(),
        "src/f.txt",
        &(numbered(0..15) + "something else entirely\n"),
    );
    (tree, diff_patch(diff))
}

#[test]
fn an_unplaceable_hunk_is_named_even_with_fuzz() {
    let (tree, patch) = two_hunk_patch_on_a_rewritten_tail();
    let err = apply(tree.path(), &[patch], 3, &Events::silent())
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "patch '[PATCH] test': hunk #2 (@@ -23,7 +23,7 @@ line 21) of src/f.txt does not apply even with fuzz 3"
    );
    assert!(!tree.path().join("src/f.txt.rej").exists());
}

#[test]
fn an_unplaceable_hunk_without_fuzz_does_not_suggest_fuzz() {
    let (tree, patch) = two_hunk_patch_on_a_rewritten_tail();
    let err = apply(tree.path(), &[patch], 0, &Events::silent())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("hunk #2 (@@ -23,7 +23,7 @@ line 21) of src/f.txt does not apply"),
        "{err}"
    );
    assert!(
        err.ends_with("it does not apply with fuzz 3 either"),
        "{err}"
    );
}

#[test]
fn a_path_outside_the_tree_is_refused() {
    let diff = "--- a/../escape.c\n+++ b/../escape.c\n@@ -1 +1 @@\n-a\n+b\n".to_string();
    let tree = tempfile::tempdir().unwrap();
    let err = apply(tree.path(), &[diff_patch(diff)], 3, &Events::silent())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("touches ../escape.c, which is outside the source tree"),
        "{err}"
    );
}

// 6. Message-IDs.
#[test]
fn a_message_id_falls_back_to_the_matrix_s_own_mail_file() {
    // `lab new` writes {message-id, mail}: no --mail and no b4 needed.
    let def = PatchDef::MessageId {
        message_id: DM_DELAY_ID.into(),
        mail: Some(data("dm-delay-ns-expiry.mbox").display().to_string()),
    };
    let p = load(&def, &[]).unwrap();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].subject, DM_DELAY_SUBJECT);
}

#[test]
fn a_message_id_is_found_in_a_mail_file_with_or_without_brackets() {
    let mails = [data("series.mbox"), data("dm-delay-ns-expiry.mbox")];
    for id in [format!("<{DM_DELAY_ID}>"), DM_DELAY_ID.to_string()] {
        let p = load(
            &PatchDef::MessageId {
                message_id: id,
                mail: None,
            },
            &mails,
        )
        .unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].origin, DM_DELAY_ID);
        assert_eq!(p[0].subject, DM_DELAY_SUBJECT);
        assert_eq!(p[0].diff, dm_delay_patch().diff);
    }
}

#[test]
fn a_cover_letter_id_stands_for_its_series() {
    let def = PatchDef::MessageId {
        message_id: format!("<{COVER_ID}>"),
        mail: None,
    };
    let p = load(&def, &[data("series.mbox")]).unwrap();
    let subjects: Vec<&str> = p.iter().map(|p| p.subject.as_str()).collect();
    assert_eq!(
        subjects,
        vec![
            "[PATCH 1/3] hello: add a comma after the greeting",
            "[PATCH 2/3] hello: take the greeting as an argument",
            "[PATCH 3/3] hello: move the default greeting to greet.h",
        ]
    );
}

#[test]
fn an_unknown_message_id_without_b4_says_to_pass_the_mail() {
    let err = load_message_id("<nowhere@example.org>", &[data("series.mbox")], None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "patch nowhere@example.org: not in any --mail file, and b4 is not installed (apt-get install b4). Pass the mail with --mail FILE."
    );
}

#[test]
fn b4_failing_is_reported_with_its_stderr() {
    let err = load_message_id("nowhere@example.org", &[], Some(&data("fake-b4")))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("patch nowhere@example.org: not in any --mail file, and b4 failed: "),
        "{err}"
    );
    assert!(
        err.contains("Temporary failure in name resolution"),
        "{err}"
    );
    assert!(err.ends_with("Pass the mail with --mail FILE."), "{err}");
}

#[test]
fn b4_output_gives_the_series_or_the_one_patch_asked_for() {
    let b4 = data("fake-b4");
    let series = load_message_id(COVER_ID, &[], Some(&b4)).unwrap();
    assert_eq!(series.len(), 3);
    let one = load_message_id(
        "3d0c545efd988d04500bbd7b285a0c69666003f3.1795992121.git.ada@example.org",
        &[],
        Some(&b4),
    )
    .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(
        one[0].subject,
        "[PATCH 2/3] hello: take the greeting as an argument"
    );
}

#[test]
fn a_missing_mail_file_is_named() {
    let def = PatchDef::MessageId {
        message_id: DM_DELAY_ID.into(),
        mail: None,
    };
    let err = load(&def, &[PathBuf::from("/nonexistent/x.mbox")]).unwrap_err();
    assert!(
        format!("{err:#}").contains("/nonexistent/x.mbox: no such file"),
        "{err:#}"
    );
}

// 7. A series with a cover letter and a reviewer's reply.
#[test]
fn a_series_mbox_gives_its_patches_in_order_and_they_apply() {
    let patches = load(&mail_def(&data("series.mbox")), &[]).unwrap();
    let numbers: Vec<&str> = patches.iter().map(|p| &p.subject[..10]).collect();
    assert_eq!(numbers, vec!["[PATCH 1/3", "[PATCH 2/3", "[PATCH 3/3"]);
    assert!(
        patches
            .iter()
            .all(|p| p.origin == data("series.mbox").display().to_string())
    );
    assert_eq!(
        patches[0].message_id.as_deref(),
        Some("73cb1e63944388b7cbc0010497c8887a02808d9b.1795992121.git.ada@example.org")
    );
    assert!(
        patches
            .iter()
            .all(|p| p.diff.ends_with("\n") && !p.diff.contains("2.47.3"))
    );
    let farm = farm(&data("series-base"));
    let tree = farm.path().join("farm");
    let applied = apply(&tree, &patches, 0, &Events::silent()).unwrap();
    assert_eq!(applied.method, "git apply");
    assert_eq!(applied.touched, vec!["src/hello.c", "src/greet.h"]);
    let hello = read(&tree, "src/hello.c");
    assert!(hello.contains("#include \"greet.h\"\n"));
    assert!(hello.contains("\t\tgreet(DEFAULT_GREETING, argv[i]);\n"));
    assert!(read(&tree, "src/greet.h").contains("#define DEFAULT_GREETING \"hello\""));
    assert!(read(&data("series-base"), "src/hello.c").contains("printf(\"hello %s\\n\", name);"));
}

#[test]
fn a_series_out_of_order_in_the_mbox_is_sorted() {
    let mut mails = mail::split_mbox(&std::fs::read(data("series.mbox")).unwrap());
    mails.reverse();
    let reversed: Vec<u8> = mails
        .iter()
        .flat_map(|m| [b"From x@y Thu Jan  1 00:00:00 1970\n".as_slice(), m, b"\n"].concat())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reversed.mbox");
    std::fs::write(&path, reversed).unwrap();
    let p = load(&mail_def(&path), &[]).unwrap();
    let numbers: Vec<&str> = p.iter().map(|p| &p.subject[..10]).collect();
    assert_eq!(numbers, vec!["[PATCH 1/3", "[PATCH 2/3", "[PATCH 3/3"]);
}

#[test]
fn a_mail_without_a_diff_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("talk.eml");
    std::fs::write(
        &path,
        "Subject: [PATCH 0/1] just a cover\n\nNo diff here.\n",
    )
    .unwrap();
    let err = load(&mail_def(&path), &[]).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("no patch found in {}", path.display())),
        "{err}"
    );
}

#[test]
fn a_missing_patch_file_is_named() {
    for def in [
        PatchDef::Mail {
            mail: "/nonexistent/p.mbox".into(),
        },
        PatchDef::Diff {
            diff: "/nonexistent/p.mbox".into(),
        },
    ] {
        let err = load(&def, &[]).unwrap_err().to_string();
        assert!(err.ends_with("/nonexistent/p.mbox: no such file"), "{err}");
    }
}

// 8. A plain `diff -ruN` file.
#[test]
fn a_plain_diff_loads_and_applies() {
    let path = data("plain.diff");
    let p = load(
        &PatchDef::Diff {
            diff: path.display().to_string(),
        },
        &[],
    )
    .unwrap();
    assert_eq!(p.len(), 1);
    let p = &p[0];
    assert_eq!(p.subject, "");
    assert_eq!(p.name(), path.display().to_string());
    assert_eq!(p.message_id, None);
    assert!(p.diff.starts_with("--- a/README\t1970-01-01"));
    assert!(p.diff.ends_with(" \tprintf(\"hello %s\\n\", name);\n"));
    assert_eq!(touched_files(&p.diff), vec!["README", "src/hello.c"]);
    assert_eq!(
        hunks(&p.diff),
        vec![
            ("README".to_string(), 1, "@@ -0,0 +1 @@".to_string()),
            ("src/hello.c".to_string(), 1, "@@ -1,6 +1,6 @@".to_string()),
        ]
    );
    let farm = farm(&data("series-base"));
    let tree = farm.path().join("farm");
    let applied = apply(&tree, std::slice::from_ref(p), 0, &Events::silent()).unwrap();
    assert_eq!(applied.method, "git apply");
    assert_eq!(
        read(&tree, "README"),
        "hello: greets each name on its command line.\n"
    );
    assert!(read(&tree, "src/hello.c").contains("given on the command line. */"));
}

#[test]
fn a_diff_file_without_a_diff_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.diff");
    std::fs::write(&path, "nothing to see\n").unwrap();
    let err = load(
        &PatchDef::Diff {
            diff: path.display().to_string(),
        },
        &[],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(&format!("no patch found in {}", path.display())),
        "{err}"
    );
}

/// A text file that holds a series as `[PATCH n/m]` sections, each with
/// its diff, gives one patch per section, in order; the text between
/// them is not part of any diff.
#[test]
fn a_series_pasted_in_a_text_file_is_its_patches() {
    let p = load(&mail_def(&data("series-in-text.txt")), &[]).unwrap();
    let names: Vec<&str> = p.iter().map(|p| p.name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].contains("block: add foo") && names[1].contains("block: use foo"),
        "{names:?}"
    );
    assert_eq!(touched_files(&p[0].diff), ["block/foo.c"]);
    assert_eq!(touched_files(&p[1].diff), ["block/bar.c"]);
    assert!(!p[1].diff.contains("fio --name"), "{}", p[1].diff);
}
