//! Applying patches to a source tree that is a hardlink farm of a pristine
//! tree: exactly with `git apply`, or with `patch -F` when fuzz is allowed.

use super::Patch;
use super::diff::{self, FileDiff};
use crate::events::Events;
pub use crate::record::kernel::FuzzedHunk;
use anyhow::{Context, Result, anyhow, bail};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::path::{Component, Path};
use std::process::{Command, Output, Stdio};
use std::sync::LazyLock;

const GIT_APPLY: &str = "git apply";

/// The fuzz suggested when exact application fails: GNU patch's default,
/// and what the stock three lines of context allow at most.
const SUGGESTED_FUZZ: u8 = 3;

/// What applying a list of patches did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Applied {
    pub fuzzed: Vec<FuzzedHunk>,
    /// Repo-relative paths, each once, in the order patches touched them.
    pub touched: Vec<String>,
    /// "git apply" when every patch applied exactly (or there were none),
    /// else "patch -F<max_fuzz>".
    pub method: String,
}

/// Apply `patches` in order to `tree`. Every file is unlinked from the
/// pristine tree before it changes. Fuzz up to `max_fuzz` is allowed only
/// when exact application fails; each fuzzed hunk becomes a warning. On
/// error the tree may hold some of the patches and should be discarded.
pub fn apply(tree: &Path, patches: &[Patch], max_fuzz: u8, events: &Events) -> Result<Applied> {
    let mut applied = Applied {
        fuzzed: vec![],
        touched: vec![],
        method: GIT_APPLY.to_string(),
    };
    for p in patches {
        let touched = super::touched_files(&p.diff);
        check_inside(p, &touched)?;
        let outcome = apply_one(tree, p, &touched, max_fuzz)?;
        if outcome.used_patch {
            applied.method = format!("patch -F{max_fuzz}");
        }
        for h in &outcome.fuzzed {
            events.warn(format!(
                "{}: hunk #{} of {} ({}) applied with fuzz {}",
                h.patch, h.hunk, h.file, h.header, h.fuzz
            ));
        }
        applied.fuzzed.extend(outcome.fuzzed);
        for t in touched {
            if !applied.touched.contains(&t) {
                applied.touched.push(t);
            }
        }
    }
    Ok(applied)
}

struct Outcome {
    used_patch: bool,
    fuzzed: Vec<FuzzedHunk>,
}

/// Paths come from a mail; one that climbs out of the tree would make the
/// hardlink breaking below write outside it.
fn check_inside(p: &Patch, touched: &[String]) -> Result<()> {
    for t in touched {
        let inside = !t.is_empty()
            && Path::new(t)
                .components()
                .all(|c| matches!(c, Component::Normal(_)));
        if !inside {
            bail!(
                "patch '{}' touches {t}, which is outside the source tree",
                p.name()
            );
        }
    }
    Ok(())
}

fn apply_one(tree: &Path, p: &Patch, touched: &[String], max_fuzz: u8) -> Result<Outcome> {
    let file = diff_file(p)?;
    let check = git_apply(tree, file.path(), true)?;
    if check.status.success() {
        break_links(tree, touched)?;
        let out = git_apply(tree, file.path(), false)?;
        if !out.status.success() {
            bail!(
                "patch '{}': git apply failed after its check passed: {}",
                p.name(),
                stderr(&out)
            );
        }
        return Ok(Outcome {
            used_patch: false,
            fuzzed: vec![],
        });
    }
    if max_fuzz == 0 {
        return Err(exact_refusal(tree, p, file.path(), &stderr(&check)));
    }
    fuzzy(tree, p, file.path(), touched, max_fuzz)
}

/// The diff in a temp file outside the tree, for `git apply` and `patch -i`.
fn diff_file(p: &Patch) -> Result<tempfile::NamedTempFile> {
    let file = tempfile::Builder::new()
        .prefix("lab-patch-")
        .suffix(".diff")
        .tempfile()
        .context("creating a temp file for a patch")?;
    std::fs::write(file.path(), &p.diff).context("writing a patch to a temp file")?;
    Ok(file)
}

/// `git apply` run inside `tree`, with no git configuration but its
/// defaults: a repository above the tree (say, the project's checkout) or
/// the user's ~/.gitconfig could otherwise set `apply.whitespace=error`
/// and make the same patch apply on one machine and not on another.
fn git_apply(tree: &Path, diff: &Path, check_only: bool) -> Result<Output> {
    let mut cmd = Command::new("git");
    cmd.arg("apply");
    if check_only {
        cmd.arg("--check");
    }
    cmd.arg(diff)
        .current_dir(tree)
        .env("LC_ALL", "C")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null());
    let abs = tree
        .canonicalize()
        .with_context(|| format!("resolving {}", tree.display()))?;
    if let Some(parent) = abs.parent() {
        cmd.env("GIT_CEILING_DIRECTORIES", parent);
    }
    cmd.output()
        .with_context(|| format!("running {}", crate::util::describe(&cmd)))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

/// Why an exact-only application failed: the failing hunks as GNU patch
/// sees them without fuzz, and whether fuzz would have helped, so the
/// user learns whether `fuzz:` is worth setting before another run.
fn exact_refusal(tree: &Path, p: &Patch, diff: &Path, git_err: &str) -> anyhow::Error {
    let strict = match run_patch(tree, diff, 0, true) {
        Ok(run) => run,
        Err(e) => return e.context(format!("patch '{}' does not apply: {git_err}", p.name())),
    };
    if strict.failed().is_empty() {
        return anyhow!("patch '{}' does not apply: git apply: {git_err}", p.name());
    }
    let hint = match run_patch(tree, diff, SUGGESTED_FUZZ, true) {
        Ok(run) if run.ok => format!(
            "it might apply with fuzz; set `fuzz: {SUGGESTED_FUZZ}` on the variant to allow patch -F{SUGGESTED_FUZZ}"
        ),
        _ => format!("it does not apply with fuzz {SUGGESTED_FUZZ} either"),
    };
    anyhow!("{}; {hint}", describe_failures(p, &strict))
}

/// `patch -F` after a dry run that must show no failed hunk, so a patch
/// that does not apply leaves the tree as it was.
fn fuzzy(tree: &Path, p: &Patch, diff: &Path, touched: &[String], max_fuzz: u8) -> Result<Outcome> {
    let dry = run_patch(tree, diff, max_fuzz, true)?;
    if !dry.failed().is_empty() {
        bail!("{} even with fuzz {max_fuzz}", describe_failures(p, &dry));
    }
    if !dry.ok {
        bail!(
            "patch '{}' does not apply: patch -F{max_fuzz}: {}",
            p.name(),
            dry.tail()
        );
    }
    break_links(tree, touched)?;
    let real = run_patch(tree, diff, max_fuzz, false)?;
    if !real.ok {
        bail!(
            "patch '{}': patch -F{max_fuzz} failed after a clean dry run, so {} may be half patched: {}",
            p.name(),
            tree.display(),
            real.tail()
        );
    }
    Ok(Outcome {
        used_patch: true,
        fuzzed: fuzzed_hunks(p, &real),
    })
}

/// What GNU patch said about one hunk it did not apply exactly.
#[derive(Debug, Clone, PartialEq)]
struct HunkReport {
    file: String,
    /// Which of the diff's sections for `file` this is (0 unless a diff
    /// patches one file twice).
    occurrence: usize,
    n: usize,
    ok: bool,
    fuzz: u32,
    offset: i64,
}

/// One run of GNU patch.
struct PatchRun {
    ok: bool,
    hunks: Vec<HunkReport>,
    output: String,
}

impl PatchRun {
    fn failed(&self) -> Vec<&HunkReport> {
        self.hunks.iter().filter(|h| !h.ok).collect()
    }

    fn tail(&self) -> String {
        let lines: Vec<&str> = self.output.trim().lines().collect();
        lines[lines.len().saturating_sub(10)..].join(" / ")
    }
}

/// GNU patch in `tree`: `-f` so it never asks (and never guesses that a
/// patch is reversed), C locale and literal names so its report parses,
/// no backups and no reject files to litter the tree.
fn run_patch(tree: &Path, diff: &Path, fuzz: u8, dry_run: bool) -> Result<PatchRun> {
    let mut cmd = Command::new("patch");
    cmd.args(["-p1", "-f", &format!("-F{fuzz}"), "--quoting-style=literal"]);
    if dry_run {
        cmd.arg("--dry-run");
    } else {
        cmd.args(["--no-backup-if-mismatch", "--reject-file=-"]);
    }
    cmd.arg("-i")
        .arg(diff)
        .current_dir(tree)
        .env("LC_ALL", "C")
        .env_remove("POSIXLY_CORRECT")
        .stdin(Stdio::null());
    let out = cmd
        .output()
        .with_context(|| format!("running {}", crate::util::describe(&cmd)))?;
    let output = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(PatchRun {
        ok: out.status.success(),
        hunks: parse_report(&output),
        output,
    })
}

/// GNU patch's report: "patching file X" (or "checking file X" in a dry
/// run), then a line for every hunk that was not applied exactly as
/// written: "Hunk #N succeeded at L with fuzz F (offset O lines)." or
/// "Hunk #N FAILED at L."
fn parse_report(output: &str) -> Vec<HunkReport> {
    static FILE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:patching|checking) (?:file|symbolic link) (.+?)(?: \((?:renamed|copied) from .+\))?$")
            .expect("valid regex")
    });
    static HUNK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^Hunk #(\d+) (\w+) at \d+(?: with fuzz (\d+))?(?: \(offset (-?\d+) lines?\))?")
            .expect("valid regex")
    });
    let mut seen: Vec<String> = vec![];
    let mut hunks = vec![];
    for line in output.lines() {
        if let Some(c) = FILE.captures(line) {
            seen.push(c[1].to_string());
        } else if let (Some(c), Some(file)) = (HUNK.captures(line), seen.last()) {
            let number = |i: usize| c.get(i).map_or("0", |m| m.as_str());
            hunks.push(HunkReport {
                file: file.clone(),
                occurrence: seen.iter().filter(|s| *s == file).count() - 1,
                n: number(1).parse().unwrap_or(0),
                ok: &c[2] == "succeeded",
                fuzz: number(3).parse().unwrap_or(0),
                offset: number(4).parse().unwrap_or(0),
            });
        }
    }
    hunks
}

/// "patch 'S': hunk #2 (@@ … @@) of f does not apply", for every failed hunk.
fn describe_failures(p: &Patch, run: &PatchRun) -> String {
    let files = diff::files(&p.diff);
    let parts: Vec<String> = run
        .failed()
        .into_iter()
        .map(|h| match header(&files, h) {
            Some(header) => format!("hunk #{} ({header}) of {} does not apply", h.n, h.file),
            None => format!("hunk #{} of {} does not apply", h.n, h.file),
        })
        .collect();
    format!("patch '{}': {}", p.name(), parts.join("; "))
}

fn fuzzed_hunks(p: &Patch, run: &PatchRun) -> Vec<FuzzedHunk> {
    let files = diff::files(&p.diff);
    run.hunks
        .iter()
        .filter(|h| h.ok && h.fuzz > 0)
        .map(|h| FuzzedHunk {
            patch: p.name().to_string(),
            file: h.file.clone(),
            hunk: h.n,
            header: header(&files, h).unwrap_or_default().to_string(),
            fuzz: h.fuzz,
            offset: h.offset,
        })
        .collect()
}

/// The `@@` line of a hunk patch reported, from the diff itself.
fn header<'a>(files: &'a [FileDiff], h: &HunkReport) -> Option<&'a str> {
    let file = files.iter().filter(|f| f.is(&h.file)).nth(h.occurrence)?;
    file.hunks.get(h.n.checked_sub(1)?).map(String::as_str)
}

/// Give every existing file a patch will change its own inode, so the
/// pristine tree it is hardlinked to stays pristine. New files need
/// nothing; deleting a link leaves the pristine file in place.
fn break_links(tree: &Path, touched: &[String]) -> Result<()> {
    touched.iter().try_for_each(|t| break_link(&tree.join(t)))
}

fn break_link(path: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = path.symlink_metadata() else {
        return Ok(());
    };
    if !meta.is_file() || meta.nlink() < 2 {
        return Ok(());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".lab-unlink-")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temp file in {}", dir.display()))?;
    std::fs::copy(path, tmp.path()).with_context(|| format!("copying {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("replacing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn break_links_gives_a_linked_file_its_own_copy() {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let d = tempfile::tempdir().unwrap();
        let (pristine, farm) = (d.path().join("pristine"), d.path().join("farm"));
        std::fs::create_dir_all(&pristine).unwrap();
        std::fs::create_dir_all(&farm).unwrap();
        std::fs::write(pristine.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(pristine.join("run.sh"), PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::hard_link(pristine.join("run.sh"), farm.join("run.sh")).unwrap();
        let touched = ["run.sh".to_string(), "new.c".to_string()];
        break_links(&farm, &touched).unwrap();
        let (p, f) = (
            std::fs::metadata(pristine.join("run.sh")).unwrap(),
            std::fs::metadata(farm.join("run.sh")).unwrap(),
        );
        assert_ne!(p.ino(), f.ino());
        assert_eq!((p.nlink(), f.nlink()), (1, 1));
        assert_eq!(f.mode() & 0o777, 0o755);
        assert_eq!(std::fs::read(farm.join("run.sh")).unwrap(), b"#!/bin/sh\n");
        let names: Vec<_> = std::fs::read_dir(&farm)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names, vec!["run.sh"], "no temp file left, no new file made");
    }

    #[test]
    fn parses_gnu_patch_reports() {
        let out = "checking file drivers/md/dm-delay.c\n\
Hunk #1 succeeded at 15 with fuzz 3.\n\
Hunk #2 succeeded at 48 (offset -4 lines).\n\
Hunk #3 FAILED at 88.\n\
patching file b.c (renamed from a.c)\n\
Hunk #1 succeeded at 7 with fuzz 1 (offset 1 line).\n\
1 out of 5 hunks FAILED\n";
        let r = parse_report(out);
        let f = |file: &str, n, ok, fuzz, offset| HunkReport {
            file: file.into(),
            occurrence: 0,
            n,
            ok,
            fuzz,
            offset,
        };
        assert_eq!(
            r,
            vec![
                f("drivers/md/dm-delay.c", 1, true, 3, 0),
                f("drivers/md/dm-delay.c", 2, true, 0, -4),
                f("drivers/md/dm-delay.c", 3, false, 0, 0),
                f("b.c", 1, true, 1, 1),
            ]
        );
    }

    #[test]
    fn a_second_section_for_one_file_counts_as_another_occurrence() {
        let r = parse_report("patching file x\npatching file x\nHunk #1 FAILED at 3.\n");
        assert_eq!(r[0].occurrence, 1);
    }
}
