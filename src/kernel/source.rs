//! Kernel sources: a pristine, read-only tree per source identity.
//!
//! A tarball is identified by its blake3, a git tree by the commit its
//! ref resolves to. Variants never write into the pristine tree: they get
//! a hardlink farm of it (see `worktree`), so a dozen variants cost one
//! extraction and almost no disk.

use crate::cache::{Cache, KeyBuilder};
use crate::events::Events;
use crate::matrix::Source;
pub use crate::record::kernel::SourceId;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Debug)]
pub struct SourceTree {
    pub id: SourceId,
    /// The pristine tree. Never written to.
    pub path: PathBuf,
}

/// The tarball to read: the path itself or, for a package that only
/// another Debian release ships (Debian 11's linux-source-5.10) and that
/// the host does not have, lab's fetched copy in the cache.
fn tarball(
    cache: &Cache,
    path: &Path,
    debian_package: Option<&str>,
    events: &Events,
) -> Result<PathBuf> {
    if path.is_file() {
        return Ok(path.to_path_buf());
    }
    match debian_package {
        Some(pkg) => match super::debian::release_for(pkg) {
            Some(r) => super::debian::fetch(cache, r, events),
            None => bail!(
                "kernel source {} is missing: install Debian's {pkg} (apt-get install {pkg}, or lab doctor --install)",
                path.display()
            ),
        },
        None => bail!("kernel source tarball {} does not exist", path.display()),
    }
}

/// Identify a source without extracting it. A Debian source from another
/// release is fetched here, at build time, once.
pub fn identify(cache: &Cache, src: &Source, events: &Events) -> Result<SourceId> {
    match src {
        Source::Tarball {
            path,
            debian_package,
        } => {
            let path = tarball(cache, path, debian_package.as_deref(), events)?;
            Ok(SourceId {
                kind: "tarball".into(),
                location: path.display().to_string(),
                git_ref: None,
                hash: crate::util::hash_file(&path)?,
                version: String::new(),
            })
        }
        Source::Git { repo, git_ref } => {
            let commit = crate::util::run_output(
                Command::new("git")
                    .arg("-C")
                    .arg(repo)
                    .args(["rev-parse", "--verify"])
                    .arg(format!("{git_ref}^{{commit}}")),
            )
            .with_context(|| format!("resolving ref '{git_ref}' in git tree {}", repo.display()))?;
            Ok(SourceId {
                kind: "git".into(),
                location: repo.display().to_string(),
                git_ref: Some(git_ref.clone()),
                hash: commit.trim().to_string(),
                version: String::new(),
            })
        }
    }
}

/// Extract (once) and return the pristine tree.
pub fn ensure(cache: &Cache, src: &Source, events: &Events) -> Result<SourceTree> {
    let mut id = identify(cache, src, events)?;
    let key = KeyBuilder::new("source")
        .field("kind", &id.kind)
        .field("hash", &id.hash)
        .finish();
    let ev = format!("source-{}", key.short());
    let start = Instant::now();
    let (entry, cached) = cache.get_or_make("source", &key, &id.location, |tmp| {
        events.started(&ev, &format!("extracting {}", id.location), None);
        let tree = tmp.join("tree");
        std::fs::create_dir(&tree)?;
        match src {
            Source::Tarball { .. } => {
                let path = Path::new(&id.location);
                let mut cmd = Command::new("tar");
                cmd.arg("-xf")
                    .arg(path)
                    .arg("-C")
                    .arg(&tree)
                    .arg("--strip-components=1");
                crate::util::run_output(&mut cmd)
                    .with_context(|| format!("extracting {}", path.display()))?;
            }
            Source::Git { repo, .. } => {
                let sh = format!(
                    "git -C {} archive --format=tar {} | tar -x -C {}",
                    crate::util::shell_quote(&repo.display().to_string()),
                    id.hash,
                    crate::util::shell_quote(&tree.display().to_string())
                );
                crate::util::run_output(Command::new("sh").arg("-c").arg(&sh))?;
            }
        }
        crate::interrupt::check()?;
        if !tree.join("Makefile").is_file() || !tree.join("Kconfig").is_file() {
            bail!(
                "{} does not look like a kernel tree (no top-level Makefile and Kconfig)",
                id.location
            );
        }
        Ok(())
    })?;
    let path = entry.join("tree");
    id.version = kernel_version(&path).unwrap_or_default();
    if !cached {
        events.finished(
            &ev,
            true,
            false,
            start.elapsed().as_secs_f64(),
            format!("linux {}", id.version),
        );
    }
    Ok(SourceTree { id, path })
}

/// VERSION.PATCHLEVEL.SUBLEVEL from the top Makefile.
pub fn kernel_version(tree: &Path) -> Option<String> {
    let mk = std::fs::read_to_string(tree.join("Makefile")).ok()?;
    let get = |k: &str| {
        mk.lines().find_map(|l| {
            l.strip_prefix(k)
                .map(|r| r.trim_start_matches([' ', '=']).trim().to_string())
        })
    };
    Some(format!(
        "{}.{}.{}",
        get("VERSION")?,
        get("PATCHLEVEL")?,
        get("SUBLEVEL")?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let st = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=lab", "-c", "user.email=lab@localhost"])
            .args(args)
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }

    fn makefile(sublevel: u32) -> String {
        format!("VERSION = 6\nPATCHLEVEL = 99\nSUBLEVEL = {sublevel}\n")
    }

    /// A two-commit repository shaped like a kernel tree, tag v1 on the first.
    fn repo() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        std::fs::write(d.path().join("Makefile"), makefile(1)).unwrap();
        std::fs::write(d.path().join("Kconfig"), "mainmenu \"t\"\n").unwrap();
        git(d.path(), &["add", "."]);
        git(d.path(), &["commit", "-qm", "one"]);
        git(d.path(), &["tag", "v1"]);
        std::fs::write(d.path().join("Makefile"), makefile(2)).unwrap();
        git(d.path(), &["commit", "-qam", "two"]);
        // Uncommitted edits are not part of any ref.
        std::fs::write(d.path().join("Makefile"), makefile(3)).unwrap();
        d
    }

    fn src(repo: &Path, r: &str) -> Source {
        Source::Git {
            repo: repo.to_path_buf(),
            git_ref: r.into(),
        }
    }

    #[test]
    fn a_git_source_is_the_commit_its_ref_names() {
        let r = repo();
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(cache_dir.path()).unwrap();
        let ev = Events::silent();

        let v1 = ensure(&cache, &src(r.path(), "v1"), &ev).unwrap();
        assert_eq!(v1.id.kind, "git");
        assert_eq!(v1.id.hash.len(), 40, "{}", v1.id.hash);
        assert_eq!(v1.id.version, "6.99.1");
        assert_eq!(
            std::fs::read_to_string(v1.path.join("Makefile")).unwrap(),
            makefile(1)
        );

        let head = ensure(&cache, &src(r.path(), "HEAD"), &ev).unwrap();
        assert_eq!(head.id.version, "6.99.2", "committed, not the work tree");
        assert_ne!(head.id.hash, v1.id.hash);
        assert_ne!(head.path, v1.path);

        // The same commit by another name is the same cache entry.
        let again = ensure(&cache, &src(r.path(), "HEAD~1"), &ev).unwrap();
        assert_eq!(again.path, v1.path);
        assert_eq!(again.id.hash, v1.id.hash);
    }

    #[test]
    fn a_git_ref_that_does_not_resolve_names_the_ref_and_the_tree() {
        let r = repo();
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(cache_dir.path()).unwrap();
        let err = identify(&cache, &src(r.path(), "no-such-ref"), &Events::silent()).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("'no-such-ref'"), "{msg}");
        assert!(msg.contains(&r.path().display().to_string()), "{msg}");
    }

    #[test]
    fn a_git_tree_that_is_not_a_kernel_is_refused() {
        let r = repo();
        git(r.path(), &["rm", "-q", "Kconfig"]);
        git(r.path(), &["commit", "-qm", "no kconfig"]);
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(cache_dir.path()).unwrap();
        let err = ensure(&cache, &src(r.path(), "HEAD"), &Events::silent()).unwrap_err();
        assert!(
            format!("{err:#}").contains("does not look like a kernel tree"),
            "{err:#}"
        );
    }
}
