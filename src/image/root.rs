//! Paths inside an extracted Debian tree, resolved as the guest will see
//! them.
//!
//! The tree is a foreign root: its absolute symlinks, such as
//! `lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2`,
//! point into the tree, not into the host. The OS would follow them to
//! the host's `/`, so `Root::resolve` walks a path one component at a
//! time and interprets every link itself. Nothing here reads outside the
//! tree.

use anyhow::{Context, Result, bail};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Linux's limit on symlinks followed in one lookup.
const MAX_LINKS: usize = 40;

#[derive(Clone, Debug)]
pub struct Root {
    dir: PathBuf,
}

/// Where a path leads: the real file or directory, and each symlink on
/// the way there (so an image can keep them as symlinks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// Relative to the root, without any symlink in it.
    pub real: String,
    /// `(link, target)`: the link relative to the root, its target as
    /// written. Each link's parent is a real directory.
    pub links: Vec<(String, String)>,
}

impl Root {
    pub fn new(dir: impl Into<PathBuf>) -> Root {
        Root { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The host path of a real, root-relative path.
    pub fn host_path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// Resolve `path` (relative or absolute, both meaning inside the
    /// root). `Ok(None)` when it does not exist, like ENOENT/ENOTDIR.
    pub fn resolve(&self, path: &str) -> Result<Option<Resolved>> {
        let mut pending: VecDeque<String> = components(path).collect();
        let mut cur: Vec<String> = Vec::new();
        let mut links = Vec::new();
        while let Some(c) = pending.pop_front() {
            match c.as_str() {
                "." => continue,
                // `cur` never holds a symlink, so `..` is plain lexical.
                ".." => {
                    cur.pop();
                    continue;
                }
                _ => cur.push(c),
            }
            let rel = cur.join("/");
            let host = self.dir.join(&rel);
            let meta = match host.symlink_metadata() {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(e).with_context(|| format!("reading {}", host.display())),
            };
            if meta.is_symlink() {
                if links.len() == MAX_LINKS {
                    bail!("{path}: more than {MAX_LINKS} symlinks inside the tree (a loop?)");
                }
                let target = std::fs::read_link(&host)
                    .with_context(|| format!("reading the link {}", host.display()))?;
                let Some(target) = target.to_str() else {
                    bail!("{rel}: symlink target is not UTF-8");
                };
                cur.pop();
                if target.starts_with('/') {
                    cur.clear();
                }
                for t in components(target).collect::<Vec<_>>().into_iter().rev() {
                    pending.push_front(t);
                }
                links.push((rel, target.to_string()));
            } else if !pending.is_empty() && !meta.is_dir() {
                return Ok(None);
            }
        }
        Ok(Some(Resolved {
            real: cur.join("/"),
            links,
        }))
    }
}

fn components(path: &str) -> impl Iterator<Item = String> + '_ {
    path.split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
}

/// `a/b/../c` → `a/c`, without touching the file system. Only valid when
/// no component before a `..` is a symlink.
pub fn lexical_normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            _ => out.push(c),
        }
    }
    out.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root shaped like a Debian bookworm tree.
    fn tree() -> (tempfile::TempDir, Root) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        for dir in ["lib/x86_64-linux-gnu", "lib64", "bin", "sbin", "usr/lib"] {
            std::fs::create_dir_all(p.join(dir)).unwrap();
        }
        std::fs::write(p.join("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), "ld").unwrap();
        symlink(
            "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            p.join("lib64/ld-linux-x86-64.so.2"),
        )
        .unwrap();
        std::fs::write(p.join("bin/kmod"), "kmod").unwrap();
        symlink("/bin/kmod", p.join("sbin/modprobe")).unwrap();
        symlink("kmod", p.join("bin/lsmod")).unwrap();
        symlink("../../lib", p.join("usr/lib/up")).unwrap();
        symlink("loop2", p.join("loop1")).unwrap();
        symlink("loop1", p.join("loop2")).unwrap();
        // Leads outside the tree if the host followed it.
        symlink("/etc/hostname", p.join("escape")).unwrap();
        let root = Root::new(p);
        (d, root)
    }

    #[test]
    fn absolute_links_resolve_inside_the_root() {
        let (_d, root) = tree();
        let r = root
            .resolve("/lib64/ld-linux-x86-64.so.2")
            .unwrap()
            .unwrap();
        assert_eq!(r.real, "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        assert_eq!(
            r.links,
            [(
                "lib64/ld-linux-x86-64.so.2".to_string(),
                "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2".to_string()
            )]
        );
        assert_eq!(
            root.resolve("sbin/modprobe").unwrap().unwrap().real,
            "bin/kmod"
        );
    }

    #[test]
    fn relative_links_and_dotdot_through_a_directory_link() {
        let (_d, root) = tree();
        assert_eq!(root.resolve("bin/lsmod").unwrap().unwrap().real, "bin/kmod");
        let r = root
            .resolve("usr/lib/up/x86_64-linux-gnu/../x86_64-linux-gnu/ld-linux-x86-64.so.2")
            .unwrap()
            .unwrap();
        assert_eq!(r.real, "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        assert_eq!(
            r.links,
            [("usr/lib/up".to_string(), "../../lib".to_string())]
        );
    }

    #[test]
    fn missing_paths_loops_and_escapes() {
        let (_d, root) = tree();
        assert_eq!(root.resolve("bin/nope").unwrap(), None);
        assert_eq!(root.resolve("bin/kmod/below").unwrap(), None);
        assert!(root.resolve("loop1").is_err());
        // The host's /etc/hostname is never seen.
        assert_eq!(root.resolve("escape").unwrap(), None);
        // `..` stops at the root.
        assert_eq!(
            root.resolve("../../bin/kmod").unwrap().unwrap().real,
            "bin/kmod"
        );
    }

    #[test]
    fn lexical_normalize_folds_dots() {
        assert_eq!(lexical_normalize("usr/lib/../../lib/x"), "lib/x");
        assert_eq!(lexical_normalize("/a/./b//c/.."), "a/b");
        assert_eq!(lexical_normalize("../a"), "a");
    }
}
