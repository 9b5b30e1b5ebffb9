//! `lab cache gc`: remove old entries, build roots, stale temp
//! directories and pointers whose entry is gone.

use super::size::{Inodes, union_bytes};
use super::stale::remove_stale_temps;
use super::{Cache, EntryInfo};
use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Top-level directories of pointer files: each file holds an entry's key.
pub const POINTER_DIRS: [&str; 2] = ["pointers", "image-latest"];

/// What `lab cache gc` may remove.
#[derive(Debug, Default, Clone, Copy)]
pub struct GcOptions {
    /// Keep the N newest entries of each kind.
    pub keep: Option<usize>,
    /// Shrink the cache, build roots included, to this many bytes.
    pub max_bytes: Option<u64>,
    /// Remove every build root that no build is using.
    pub build_roots: bool,
}

#[derive(Debug, Default)]
pub struct GcReport {
    /// Each removed entry with its size.
    pub removed: Vec<(EntryInfo, u64)>,
    pub temps_removed: usize,
    pub pointers_removed: usize,
    /// Removed build roots with their own size (objects, not linked source).
    pub roots_removed: Vec<(String, u64)>,
    /// Build roots that were to go but a build held.
    pub roots_busy: Vec<String>,
    pub bytes_before: u64,
    pub bytes_after: u64,
}

/// Remove stale temp directories; then all but the `keep` newest entries
/// of each kind; then, until the cache holds at most `max_bytes`, the
/// least recently used build roots and after them the oldest entries;
/// then pointers whose entry is gone. Build roots go first because
/// losing one loses no result, only the head start of the next variant.
pub fn gc_in(cache: &Cache, opts: GcOptions) -> Result<GcReport> {
    let GcOptions {
        keep,
        max_bytes,
        build_roots,
    } = opts;
    let mut r = GcReport {
        temps_removed: remove_stale_temps(cache.root()),
        ..Default::default()
    };
    // Oldest first; ties by key, so the choice is the same every time.
    let mut entries = cache.list()?;
    entries.sort_by(|a, b| (&a.1.created, &a.1.key).cmp(&(&b.1.created, &b.1.key)));
    let mut sized: Vec<(PathBuf, EntryInfo, Inodes)> = entries
        .into_iter()
        .map(|(p, i)| {
            let n = Inodes::of(&p);
            (p, i, n)
        })
        .collect();
    let roots: Vec<(super::buildroot::BuildRootInfo, Inodes)> =
        super::buildroot::build_roots(cache)
            .into_iter()
            .map(|b| {
                let n = Inodes::of(&b.dir);
                (b, n)
            })
            .collect();
    r.bytes_before = union_bytes(sized.iter().map(|x| &x.2).chain(roots.iter().map(|x| &x.1)));

    // Least recently used first, like `roots`.
    let mut roots_doomed: Vec<usize> = if build_roots {
        (0..roots.len()).collect()
    } else {
        vec![]
    };
    let mut doomed: BTreeSet<PathBuf> = BTreeSet::new();
    if let Some(n) = keep {
        let kinds: BTreeSet<String> = sized.iter().map(|x| x.1.kind.clone()).collect();
        for kind in kinds {
            let of_kind: Vec<&PathBuf> = sized
                .iter()
                .filter(|x| x.1.kind == kind)
                .map(|x| &x.0)
                .collect();
            let old = of_kind.len().saturating_sub(n);
            doomed.extend(of_kind[..old].iter().map(|p| (*p).clone()));
        }
    }
    if let Some(max) = max_bytes {
        let mut live: Vec<usize> = (0..sized.len())
            .filter(|&i| !doomed.contains(&sized[i].0))
            .collect();
        let mut live_roots: Vec<usize> = (0..roots.len())
            .filter(|i| !roots_doomed.contains(i))
            .collect();
        let size = |live: &[usize], live_roots: &[usize]| {
            union_bytes(
                live.iter()
                    .map(|&i| &sized[i].2)
                    .chain(live_roots.iter().map(|&i| &roots[i].1)),
            )
        };
        while size(&live, &live_roots) > max {
            if !live_roots.is_empty() {
                roots_doomed.push(live_roots.remove(0));
            } else if !live.is_empty() {
                let oldest = live.remove(0);
                doomed.insert(sized[oldest].0.clone());
            } else {
                break;
            }
        }
    }
    let mut kept_roots = Vec::new();
    for (i, (root, n)) in roots.iter().enumerate() {
        if roots_doomed.contains(&i) {
            let own = n.minus(sized.iter().map(|x| &x.2));
            if super::buildroot::remove_build_root(cache, root)? {
                r.roots_removed.push((root.name.clone(), own.bytes()));
                continue;
            }
            r.roots_busy.push(root.name.clone());
        }
        kept_roots.push(i);
    }
    let mut kept = Vec::new();
    for (p, info, n) in sized.drain(..) {
        if doomed.contains(&p) {
            cache
                .remove(&p)
                .with_context(|| format!("removing {}", p.display()))?;
            r.removed.push((info, n.bytes()));
        } else {
            kept.push(n);
        }
    }
    r.bytes_after = union_bytes(kept.iter().chain(kept_roots.iter().map(|&i| &roots[i].1)));
    r.pointers_removed = remove_dangling_pointers(cache)?;
    Ok(r)
}

/// Every key that names an entry, of any kind.
pub(crate) fn all_keys(cache: &Cache) -> Result<BTreeSet<String>> {
    Ok(cache.list()?.into_iter().map(|(_, i)| i.key.0).collect())
}

/// The key a pointer file names, if it looks like one.
pub(crate) fn pointer_target(path: &Path) -> Option<String> {
    // A pointer is a small regular file; a FIFO or a link to /dev/zero
    // from an imported archive is no pointer.
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 1024 {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let k = text.trim();
    (k.len() == 64 && k.chars().all(|c| c.is_ascii_hexdigit())).then(|| k.to_string())
}

/// Pointer files under POINTER_DIRS, relative to the root, with their targets.
pub(crate) fn pointers(cache: &Cache) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for d in POINTER_DIRS {
        for e in std::fs::read_dir(cache.root().join(d))
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || !e.path().is_file() {
                continue;
            }
            if let Some(t) = pointer_target(&e.path()) {
                out.push((format!("{d}/{name}"), t));
            }
        }
    }
    out.sort();
    out
}

pub(crate) fn remove_dangling_pointers(cache: &Cache) -> Result<usize> {
    let keys = all_keys(cache)?;
    let mut n = 0;
    for (rel, target) in pointers(cache) {
        if !keys.contains(&target) {
            std::fs::remove_file(cache.root().join(&rel))?;
            n += 1;
        }
    }
    Ok(n)
}
