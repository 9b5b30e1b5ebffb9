//! Build roots: the long-lived kernel build directories under
//! `<cache>/buildroot/<arch>-<root key>/`. `kernel::build` fills and
//! locks them; `lab cache ls` and `gc` list and remove them. Their
//! layout lives here, with the cache's, so that the cache's maintenance
//! need not import the kernel build (it would make the two modules
//! import each other).

use super::Cache;
use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::PathBuf;

/// Where the build roots are.
pub fn dir(cache: &Cache) -> PathBuf {
    cache.root().join("buildroot")
}

/// The lock a build holds on its build root, by the root key's short form.
pub fn lock_name(short: &str) -> String {
    format!("buildroot-{short}")
}

/// The one field of a root's `state.json` (written by `kernel::build`)
/// that the cache shows; the rest is the build's business.
#[derive(Deserialize)]
struct Shown {
    #[serde(default)]
    last_built: Option<String>,
}

/// A build root as `lab cache` sees it.
pub struct BuildRootInfo {
    pub dir: PathBuf,
    /// `<arch>-<root key>`.
    pub name: String,
    /// The kernel whose objects it holds.
    pub last_built: Option<String>,
    /// When a build last switched or finished in it.
    pub used: std::time::SystemTime,
}

/// Every finished build root in the cache, least recently used first.
pub fn build_roots(cache: &Cache) -> Vec<BuildRootInfo> {
    let mut out: Vec<BuildRootInfo> = std::fs::read_dir(dir(cache))
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("tree").is_dir() && e.path().join("state.json").is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // Temp and trash directories have dots; roots do not.
            if name.contains('.') {
                return None;
            }
            let state = e.path().join("state.json");
            let used = state.metadata().and_then(|m| m.modified()).ok()?;
            let last_built = crate::util::read_json::<Shown>(&state)
                .ok()
                .and_then(|s| s.last_built);
            Some(BuildRootInfo {
                dir: e.path(),
                name,
                last_built,
                used,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.used, &a.name).cmp(&(b.used, &b.name)));
    out
}

/// Remove a build root unless a build is using it (`Ok(false)`). The
/// kernels built in it stay cached; the next new variant of its config
/// builds from a clean tree.
pub fn remove_build_root(cache: &Cache, root: &BuildRootInfo) -> Result<bool> {
    let short = root.name.rsplit_once('-').map_or("", |(_, k)| k);
    let Some(_lock) = cache.try_lock(&lock_name(short))? else {
        return Ok(false);
    };
    // Renamed first, so an interrupted remove never leaves a half root
    // that a build would take for a whole one.
    let trash = root
        .dir
        .with_file_name(format!("{}.trash.{}", root.name, std::process::id()));
    std::fs::rename(&root.dir, &trash)
        .with_context(|| format!("moving {} aside", root.dir.display()))?;
    std::fs::remove_dir_all(&trash).with_context(|| format!("removing {}", trash.display()))?;
    Ok(true)
}
