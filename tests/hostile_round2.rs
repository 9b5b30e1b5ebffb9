//! Issue 27, round two: the security items and the inputs that need a
//! file system of their own (links, FIFOs, device nodes, archives). Each
//! runs the release-like binary as a user would; each security test
//! fails without its fix (the comment above it says what it caught).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const LAB: &str = env!("CARGO_BIN_EXE_lab");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lab(dir: &Path, args: &[&str]) -> Output {
    Command::new(LAB)
        .args(args)
        .current_dir(dir)
        .env("LAB_CACHE", dir.join("cache"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn copy_run(to: &Path) -> PathBuf {
    let dest = to.join("aa");
    let st = Command::new("cp")
        .arg("-r")
        .arg(repo().join("tests/data/runs/aa-20261130-001338"))
        .arg(&dest)
        .status()
        .unwrap();
    assert!(st.success());
    dest
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Before: `ln -s ~/.ssh RUN/boots; lab merge RUN --out M` copied the
/// keys into M, and a symlinked file was recreated as a link to them.
#[test]
fn merge_follows_no_symlink_out_of_a_shard() {
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("id_ed25519"), "PRIVATE KEY").unwrap();

    let run = copy_run(d.path());
    std::fs::remove_dir_all(run.join("boots")).unwrap();
    std::os::unix::fs::symlink(&secret, run.join("boots")).unwrap();
    let o = lab(d.path(), &["merge", "aa", "--out", "M"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("aa/boots: not a directory or regular file"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join("M").exists());

    // A symlinked file deep in a cell.
    std::fs::remove_dir_all(&run).unwrap();
    let run = copy_run(d.path());
    let cell = std::fs::read_dir(run.join("cells"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    std::os::unix::fs::symlink(secret.join("id_ed25519"), cell.join("rep-1/stolen.log")).unwrap();
    let o = lab(d.path(), &["merge", "aa", "--out", "M"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("stolen.log"), "{}", stderr(&o));
    assert!(!d.path().join("M").exists());

    // A FIFO would block the copy: refused at once.
    std::fs::remove_file(cell.join("rep-1/stolen.log")).unwrap();
    let fifo = cell.join("rep-1/pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let t = Instant::now();
    let o = lab(d.path(), &["merge", "aa", "--out", "M"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(10));
}

/// A report reads cells where they are: a `cells` symlinked elsewhere is
/// named, never read through.
#[test]
fn report_reads_no_cells_through_a_symlink() {
    let d = tempfile::tempdir().unwrap();
    let run = copy_run(d.path());
    std::fs::rename(run.join("cells"), d.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(d.path().join("elsewhere"), run.join("cells")).unwrap();
    let o = lab(d.path(), &["report", "aa"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a symlink where lab writes a directory"),
        "{}",
        stderr(&o)
    );
}

const KEY: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// An export of one kernel entry holding `bzImage` (as `make` says), and
/// the tar built from it. `files` is entry.json's hash map.
fn archive(dir: &Path, make: impl FnOnce(&Path), files: serde_json::Value) -> PathBuf {
    let root = dir.join("export");
    let entry = root.join("kernel").join(KEY);
    std::fs::create_dir_all(&entry).unwrap();
    make(&entry);
    let info = serde_json::json!({"kind": "kernel", "key": KEY, "created": "2026-12-01T00:00:00Z",
        "label": "x86_64 hz=100", "bytes": 1, "files": files});
    std::fs::write(entry.join("entry.json"), info.to_string()).unwrap();
    let index = serde_json::json!({"format": 1, "lab_version": "0", "created": "x",
        "entries": [["kernel", KEY]], "pointers": []});
    std::fs::write(root.join("lab-cache-export.json"), index.to_string()).unwrap();
    let tar = dir.join("x.tar");
    let st = Command::new("tar")
        .arg("-cf")
        .arg(&tar)
        .arg("-C")
        .arg(&root)
        .args(["lab-cache-export.json", "kernel"])
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::remove_dir_all(&root).unwrap();
    tar
}

fn hash(data: &[u8]) -> String {
    blake3::hash(data).to_hex().to_string()
}

fn imported(d: &Path) -> bool {
    d.join("cache/kernel").join(KEY).exists()
}

/// Import an archive of one entry made by `make` with entry.json's
/// `files`, into an empty cache: the directory, lab's output, the time.
fn import(
    make: impl FnOnce(&Path),
    files: serde_json::Value,
) -> (tempfile::TempDir, Output, Duration) {
    let d = tempfile::tempdir().unwrap();
    let tar = archive(d.path(), make, files);
    let t = Instant::now();
    let o = lab(d.path(), &["cache", "import", tar.to_str().unwrap()]);
    (d, o, t.elapsed())
}

/// The import is refused at once (exit 3, naming why), and nothing of
/// the entry reaches the cache.
fn refused(make: impl FnOnce(&Path), files: serde_json::Value, why: &str) {
    let (d, o, took) = import(make, files);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains(why), "{}", stderr(&o));
    assert!(!imported(d.path()));
    assert!(took < Duration::from_secs(10));
}

/// Before: a symlink entry out of the cache was imported and listed as
/// valid; a name like `../../dev/zero` in entry.json hung the hash; a
/// file whose hash did not match was imported; setuid bits were kept.
#[test]
fn cache_import_trusts_nothing_it_unpacks() {
    // A good entry imports.
    let (d, o, _) = import(
        |e| std::fs::write(e.join("bzImage"), "kernel").unwrap(),
        serde_json::json!({"bzImage": hash(b"kernel")}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(imported(d.path()));

    // A symlink to a host file.
    refused(
        |e| std::os::unix::fs::symlink("/etc/passwd", e.join("bzImage")).unwrap(),
        serde_json::json!({}),
        "bzImage is a symlink, device or FIFO",
    );
    // A hash that does not match.
    refused(
        |e| std::fs::write(e.join("bzImage"), "evil").unwrap(),
        serde_json::json!({"bzImage": hash(b"kernel")}),
        "does not match the blake3",
    );
    // An artifact with no hash at all.
    refused(
        |e| std::fs::write(e.join("bzImage"), "evil").unwrap(),
        serde_json::json!({}),
        "bzImage has no blake3",
    );
    // entry.json naming a file outside the entry.
    refused(
        |_| {},
        serde_json::json!({"../../../../dev/zero": "00"}),
        "not a file of the entry",
    );

    // setuid and setgid bits are cleared.
    let (d, o, _) = import(
        |e| {
            let p = e.join("bzImage");
            std::fs::write(&p, "kernel").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o6755)).unwrap();
        },
        serde_json::json!({"bzImage": hash(b"kernel")}),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let mode = std::fs::metadata(d.path().join("cache/kernel").join(KEY).join("bzImage"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7000, 0, "mode {mode:o}");
}

/// A device node in an archive (tar makes one when run as root).
#[test]
fn cache_import_refuses_a_device_node() {
    if !is_root() {
        eprintln!("skipped: making a device node needs root");
        return;
    }
    refused(
        |e| {
            let st = Command::new("mknod")
                .arg(e.join("bzImage"))
                .args(["c", "1", "3"])
                .status()
                .unwrap();
            assert!(st.success());
        },
        serde_json::json!({}),
        "bzImage is a symlink, device or FIFO",
    );
}

/// Terminal escapes from a run directory or a cache entry are printed as
/// `\x1b`, never raw.
#[test]
fn run_ids_and_labels_cannot_drive_the_terminal() {
    let d = tempfile::tempdir().unwrap();
    let run = copy_run(d.path());
    let m = run.join("manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["run_id"] = serde_json::json!("x\u{1b}]0;pwned\u{7}\u{1b}[2J");
    v["matrix"]["path"] = serde_json::json!("m\u{1b}[31m.yaml");
    std::fs::write(&m, v.to_string()).unwrap();
    for format in ["text", "md", "reply", "junit", "html"] {
        let o = lab(d.path(), &["report", "aa", "--format", format]);
        assert!(
            matches!(o.status.code(), Some(0..=2)),
            "{format}: {}",
            stderr(&o)
        );
        let out = [o.stdout.as_slice(), o.stderr.as_slice()].concat();
        assert!(
            !out.contains(&0x1b) && !out.contains(&0x07),
            "{format}: raw escape"
        );
    }

    let entry = d.path().join("cache/kernel").join(KEY);
    std::fs::create_dir_all(&entry).unwrap();
    std::fs::write(
        entry.join("entry.json"),
        serde_json::json!({"kind": "kernel", "key": KEY, "created": "x",
            "label": "x\u{1b}]0;pwned\u{7}", "bytes": 1})
        .to_string(),
    )
    .unwrap();
    let o = lab(d.path(), &["cache", "ls"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        !text.contains('\u{1b}') && text.contains("\\x1b]0;pwned"),
        "{text}"
    );
}

/// A FIFO, /dev/zero or a directory where a file is expected: exit 3
/// naming it, at once (before: hangs, or reading until memory ran out).
#[test]
fn fifos_devices_and_directories_are_refused_not_read() {
    let d = tempfile::tempdir().unwrap();
    assert!(
        Command::new("mkfifo")
            .arg(d.path().join("fifo"))
            .status()
            .unwrap()
            .success()
    );
    for args in [
        vec!["plan", "fifo"],
        vec!["plan", "/dev/zero"],
        vec!["plan", "."],
        vec!["claims", "extract", "fifo"],
        vec!["claims", "extract", "/dev/zero"],
        vec!["new", "--mail", "/dev/zero", "--out", "d.yaml"],
        vec!["new", "--mail", "fifo", "--out", "d.yaml"],
    ] {
        let t = Instant::now();
        let o = lab(d.path(), &args);
        assert_eq!(o.status.code(), Some(3), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("regular file") || stderr(&o).contains("is a directory"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(t.elapsed() < Duration::from_secs(10), "{args:?}");
    }
}

fn nested_mime(depth: usize) -> String {
    let mut s = String::from("From: a@b\nSubject: x\nMIME-Version: 1.0\n");
    for i in 0..depth {
        s += &format!("Content-Type: multipart/mixed; boundary=\"b{i}\"\n\n--b{i}\n");
    }
    s += "Content-Type: text/plain\n\n  delay before after\n  1 9.97 1.16\n  2 9.97 2.38\n";
    for i in (0..depth).rev() {
        s += &format!("\n--b{i}--\n");
    }
    s
}

const TABLE: &str = "\n  delay  before  after\n  1      9.97    1.16\n  2      9.97    2.38\n";

/// `lab new` on valid but odd mails drafts (0) or says the draft is
/// unfinished (2); a mail it cannot parse is the user's (3); never 4.
#[test]
fn lab_new_is_never_a_bug_on_odd_mails() {
    let d = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, String, &[i32])> = vec![
        ("nested MIME", nested_mime(1000), &[3]),
        (
            "ANSI in a caption",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\n\u{1b}[31mWrite latency\u{1b}[0m, ms:\n{TABLE}"
            ),
            &[0, 2],
        ),
        (
            "control bytes in the subject",
            format!("From: a@b\nSubject: [PATCH] a\u{1b}]0;t\u{7}b\n{TABLE}"),
            &[0, 2],
        ),
        (
            "a 300-character word in the subject",
            format!("From: a@b\nSubject: [PATCH] {}\n{TABLE}", "w".repeat(300)),
            &[0, 2],
        ),
        (
            "a caption of 80 lines",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\n{}{TABLE}",
                (0..80)
                    .map(|i| format!("caption line {i}\n"))
                    .collect::<String>()
            ),
            &[0, 2],
        ),
        (
            "a dd size of 100000 factors",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\ndd if=/dev/zero of=/mnt/f bs={}1\n{TABLE}",
                "1x".repeat(100_000)
            ),
            &[0, 2],
        ),
        (
            "20 fio options of 16 alternatives each",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\nfio --name=a --filename=/dev/nullb0 {}\n{TABLE}",
                (0..20)
                    .map(|i| format!("--o{i}={{{}}} ", (0..16).map(|n| n.to_string()).collect::<Vec<_>>().join(",")))
                    .collect::<String>()
            ),
            &[0, 2],
        ),
        (
            "500 dd outputs that disagree on one cell",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\ndd if=/mnt/t/f of=/dev/null bs=4k count=10\n\n{}",
                (0..500)
                    .map(|i| format!("dd /mnt/t/f{i} 4k\n10+0 records in\n10+0 records out\n40960 bytes (41 kB, 40 KiB) copied, 0.01 s, {} MB/s\n\n", 100 + 7 * i))
                    .collect::<String>()
            ),
            &[0, 2],
        ),
        (
            "2000 lists of the same rows under captions that differ",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\nfio --name=w --rw=write --filename=/dev/nvme0n1 --bs=$BS\n\n{}",
                (0..2000)
                    .map(|i| format!("For {} kernel {i}, with the change:\n4k:  bw={}MiB/s\n16k: bw={}MiB/s\n\n", if i % 2 == 0 { "unmodified" } else { "modified" }, 900 + i, 2000 + i))
                    .collect::<String>()
            ),
            &[0, 2],
        ),
        (
            "a long shell variable expanded many times in one command",
            format!(
                "From: a@b\nSubject: [PATCH] x\n\nx=\"{}\"\nfio --name=w --rw=read {}--filename=/dev/nvme0n1\n",
                "A".repeat(4000),
                "--description=$x ".repeat(2000)
            ),
            &[0, 2],
        ),
    ];
    for (what, mail, codes) in cases {
        std::fs::write(d.path().join("m.eml"), &mail).unwrap();
        let o = lab(
            d.path(),
            &["new", "--mail", "m.eml", "--out", "d.yaml", "--force"],
        );
        let code = o.status.code().unwrap_or(-1);
        assert!(codes.contains(&code), "{what}: exit {code}: {}", stderr(&o));
        if code != 3 {
            let yaml = std::fs::read(d.path().join("d.yaml")).unwrap();
            assert!(!yaml.contains(&0x1b), "{what}: raw ESC in the draft");
            let o = lab(d.path(), &["plan", "d.yaml"]);
            assert_eq!(o.status.code(), Some(0), "{what}: {}", stderr(&o));
        }
    }
}

/// Before: `lab new --out DEVICE --force` replaced the device node with
/// a regular file, and `--out -` into a closed pipe said "wrote stdout".
#[test]
fn lab_new_writes_only_files_and_says_when_stdout_is_gone() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("m.eml"),
        format!("From: a@b\nSubject: x\n{TABLE}"),
    )
    .unwrap();
    let node = d.path().join("node");
    let made = if is_root() {
        Command::new("mknod")
            .arg(&node)
            .args(["c", "1", "3"])
            .status()
            .unwrap()
    } else {
        Command::new("mkfifo").arg(&node).status().unwrap()
    };
    assert!(made.success());
    let o = lab(
        d.path(),
        &["new", "--mail", "m.eml", "--out", "node", "--force"],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    assert!(!std::fs::symlink_metadata(&node).unwrap().is_file());

    let mut child = Command::new(LAB)
        .args(["new", "--mail", "m.eml", "--out", "-"])
        .current_dir(d.path())
        .env("LAB_CACHE", d.path().join("cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writing the draft to stdout"),
        "{}",
        stderr(&o)
    );
}

/// A manifest from a newer lab is read, with a warning saying so.
#[test]
fn a_newer_manifest_is_read_with_a_warning() {
    let d = tempfile::tempdir().unwrap();
    let run = copy_run(d.path());
    let m = run.join("manifest.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["schema_version"] = serde_json::json!(99);
    std::fs::write(&m, v.to_string()).unwrap();
    let o = lab(d.path(), &["report", "aa"]);
    assert!(matches!(o.status.code(), Some(0..=2)), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("written by a newer lab (layout 99"),
        "{}",
        stderr(&o)
    );
}
