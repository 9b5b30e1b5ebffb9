//! Sizes: parsing `20G`, printing `1.5 GiB`, and disk usage by inode.

use std::collections::HashMap;
use std::path::Path;

pub use crate::util::parse_size;

pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The files of a tree by inode, with their disk usage, so that hard
/// links (a worktree is a hardlink farm of its source) count once.
#[derive(Debug, Default, Clone)]
pub struct Inodes(HashMap<(u64, u64), u64>);

impl Inodes {
    pub fn of(path: &Path) -> Inodes {
        fn walk(p: &Path, out: &mut HashMap<(u64, u64), u64>) {
            use std::os::unix::fs::MetadataExt;
            let Ok(meta) = p.symlink_metadata() else {
                return;
            };
            out.insert((meta.dev(), meta.ino()), meta.blocks() * 512);
            if meta.is_dir() {
                for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
                    walk(&e.path(), out);
                }
            }
        }
        let mut m = HashMap::new();
        walk(path, &mut m);
        Inodes(m)
    }

    pub fn bytes(&self) -> u64 {
        self.0.values().sum()
    }

    pub fn extend(&mut self, other: Inodes) {
        self.0.extend(other.0);
    }

    /// The inodes in none of `others`.
    pub fn minus<'a>(&self, others: impl Iterator<Item = &'a Inodes>) -> Inodes {
        let mut left = Inodes(self.0.clone());
        for o in others {
            left.0.retain(|k, _| !o.0.contains_key(k));
        }
        left
    }
}

pub(crate) fn union_bytes<'a>(sets: impl Iterator<Item = &'a Inodes>) -> u64 {
    let mut seen: HashMap<(u64, u64), u64> = HashMap::new();
    for s in sets {
        for (k, v) in &s.0 {
            seen.insert(*k, *v);
        }
    }
    seen.values().sum()
}
