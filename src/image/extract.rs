//! Unpack the recipe's packages with mmdebstrap, and read back which
//! versions Debian resolved.
//!
//! `--variant=extract` only unpacks `.deb` files: no maintainer script
//! and no target binary runs, so a foreign architecture needs no
//! emulation. `--skip=cleanup/apt/cache` leaves the downloaded `.deb`
//! files in place; their names are the exact versions that went in.

use super::recipe::Recipe;
use super::root::Root;
use crate::matrix::Arch;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// An unpacked tree in a private work directory, removed on drop.
pub struct Extracted {
    pub root: Root,
    /// `(package, version)`, sorted, every package unpacked.
    pub packages: Vec<(String, String)>,
    _work: WorkDir,
}

/// Run mmdebstrap for `arch` into a fresh directory under `work_parent`.
pub fn extract(recipe: &Recipe, arch: Arch, work_parent: &Path) -> Result<Extracted> {
    if crate::util::which("mmdebstrap").is_none() {
        bail!("mmdebstrap is not installed (apt-get install mmdebstrap)");
    }
    let work = WorkDir::create(work_parent, arch.name())?;
    let dir = work.path.join("root");
    let mut cmd = Command::new("mmdebstrap");
    cmd.arg("--variant=extract")
        .arg(format!("--arch={}", arch.debian()))
        .arg(format!("--include={}", recipe.packages.join(",")))
        .arg("--skip=cleanup/apt/cache")
        .arg(&recipe.suite)
        .arg(&dir)
        .arg(&recipe.mirror);
    crate::util::run_output(&mut cmd)?;
    let packages = resolved_packages(&dir.join("var/cache/apt/archives"))?;
    Ok(Extracted {
        root: Root::new(dir),
        packages,
        _work: work,
    })
}

/// Every `name_version_arch.deb` in apt's archive directory.
pub fn resolved_packages(archives: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for e in
        std::fs::read_dir(archives).with_context(|| format!("listing {}", archives.display()))?
    {
        let name = e?.file_name();
        let name = name.to_string_lossy();
        if let Some(stem) = name.strip_suffix(".deb") {
            let Some((pkg, version)) = parse_deb_name(stem) else {
                bail!("{name}: not a name_version_arch.deb file name");
            };
            out.push((pkg, version));
        }
    }
    if out.is_empty() {
        bail!("mmdebstrap left no .deb files in {}", archives.display());
    }
    out.sort();
    Ok(out)
}

/// `dmsetup_2%3a1.02.185-2_amd64` → `("dmsetup", "2:1.02.185-2")`. apt
/// escapes the epoch colon in file names as `%3a`.
fn parse_deb_name(stem: &str) -> Option<(String, String)> {
    let mut parts = stem.splitn(3, '_');
    let (pkg, version, arch) = (parts.next()?, parts.next()?, parts.next()?);
    if pkg.is_empty() || version.is_empty() || arch.is_empty() {
        return None;
    }
    Some((url_decode(pkg)?, url_decode(version)?))
}

fn url_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A directory named `<label>-<n>.<pid>` (`n` tells apart two builds in
/// one process). A build killed before it could clean up leaves one
/// behind; the next build removes those whose process is gone, as the
/// cache does with its temp directories.
struct WorkDir {
    path: PathBuf,
}

impl WorkDir {
    fn create(parent: &Path, label: &str) -> Result<WorkDir> {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
        for e in std::fs::read_dir(parent)?.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.rsplit('.').next().and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = parent.join(format!("{label}-{n}.{}", std::process::id()));
        if path.exists() {
            std::fs::remove_dir_all(&path)
                .with_context(|| format!("removing {}", path.display()))?;
        }
        std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(WorkDir { path })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deb_names_give_package_and_version() {
        assert_eq!(
            parse_deb_name("dmsetup_2%3a1.02.185-2_amd64"),
            Some(("dmsetup".into(), "2:1.02.185-2".into()))
        );
        assert_eq!(
            parse_deb_name("libstdc++6_12.2.0-14+deb12u1_arm64"),
            Some(("libstdc++6".into(), "12.2.0-14+deb12u1".into()))
        );
        assert_eq!(parse_deb_name("broken_1.0"), None);
        assert_eq!(parse_deb_name("bad_1%3_all"), None);
    }

    #[test]
    fn resolved_packages_are_sorted_and_only_debs() {
        let d = tempfile::tempdir().unwrap();
        for f in [
            "fio_3.33-3_amd64.deb",
            "busybox-static_1%3a1.35.0-4+deb12u1+b1_amd64.deb",
            "lock",
        ] {
            std::fs::write(d.path().join(f), "").unwrap();
        }
        std::fs::create_dir(d.path().join("partial")).unwrap();
        assert_eq!(
            resolved_packages(d.path()).unwrap(),
            [
                (
                    "busybox-static".to_string(),
                    "1:1.35.0-4+deb12u1+b1".to_string()
                ),
                ("fio".into(), "3.33-3".into()),
            ]
        );
        let empty = tempfile::tempdir().unwrap();
        assert!(resolved_packages(empty.path()).is_err());
    }

    #[test]
    fn work_dirs_of_dead_processes_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let stale = d.path().join("x86_64.999999999");
        std::fs::create_dir_all(stale.join("root")).unwrap();
        let w = WorkDir::create(d.path(), "arm64").unwrap();
        let w2 = WorkDir::create(d.path(), "arm64").unwrap();
        assert!(!stale.exists());
        assert!(w.path.is_dir() && w2.path.is_dir());
        assert_ne!(w.path, w2.path);
        let p = w.path.clone();
        drop(w);
        assert!(!p.exists());
    }
}
