//! A built kernel as stored in the cache (`meta.json`) and copied into
//! run manifests, with the keys and records it is made of.

use crate::matrix::{Arch, BaseConfig, Fragment};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A cache key: the blake3 of every input that shapes the entry.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
pub struct Key(pub String);

impl Key {
    /// The first 16 hex digits, enough to name an entry to a person.
    pub fn short(&self) -> &str {
        crate::util::prefix(&self.0, 16)
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SourceId {
    /// `tarball` or `git`.
    pub kind: String,
    /// The tarball path or the git repository.
    pub location: String,
    /// The git ref as written in the matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// blake3 of the tarball, or the commit id.
    pub hash: String,
    /// The kernel version the Makefile declares, e.g. 6.12.117 for Debian's 6.12.
    #[serde(default)]
    pub version: String,
}

/// A hunk that only applied because patch ignored some of its context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FuzzedHunk {
    /// The patch's subject, or its origin when it has none.
    pub patch: String,
    pub file: String,
    /// 1-based within `file`, as patch counts.
    pub hunk: usize,
    /// The `@@` line.
    pub header: String,
    pub fuzz: u32,
    pub offset: i64,
}

/// Where a build's time went, in seconds: `compile` is make walking the
/// tree and compiling up to vmlinux.o, `link` the vmlinux links
/// (kallsyms takes several), `image` the compressed boot image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    #[serde(default)]
    pub configure: f64,
    pub compile: f64,
    pub link: f64,
    pub image: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PatchInfo {
    pub origin: String,
    pub subject: String,
    pub message_id: Option<String>,
    /// blake3 of the diff.
    pub hash: String,
}

/// A hunk that needed fuzz, as the patch step reported it.
pub type FuzzRecord = FuzzedHunk;

/// A built kernel, as stored in the cache and copied into run manifests.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelBuild {
    pub kernel: String,
    pub arch: Arch,
    pub variant: String,
    pub key: Key,
    pub source: SourceId,
    pub patches: Vec<PatchInfo>,
    /// How the patches went in: "git apply", "patch -F3", or "none".
    pub apply_method: String,
    pub fuzzed: Vec<FuzzRecord>,
    pub fragments: Vec<Fragment>,
    pub base: BaseConfig,
    /// blake3 of the final .config.
    pub config_hash: String,
    pub hz: Option<u32>,
    pub compiler: String,
    /// The GNU build id of vmlinux, which the guest shows in /sys/kernel/notes.
    pub build_id: Option<String>,
    /// Absolute path of bzImage or Image.
    pub image: PathBuf,
    pub config: PathBuf,
    pub vmlinux: PathBuf,
    pub log: PathBuf,
    /// The `O=` directory, kept so a patched variant can start from a copy.
    pub build_dir: PathBuf,
    pub build_secs: f64,
    /// Where `build_secs` went (absent in entries from before it was kept).
    #[serde(default)]
    pub phases: Phases,
    /// The kernel whose build directory this build started from.
    pub reused_tree_of: Option<String>,
    pub objects: u64,
    pub built_at: String,
    /// True when this call found it in the cache.
    #[serde(skip)]
    pub cached: bool,
}

impl KernelBuild {
    /// Point the file paths at the cache entry `entry`.
    pub fn fill_paths(&mut self, entry: &Path) {
        self.image = entry.join(self.arch.image_target());
        self.config = entry.join("config");
        self.vmlinux = entry.join("vmlinux");
        self.log = entry.join("build.log");
    }

    /// Read a kernel entry from its directory (for `lab boot --kernel DIR`).
    pub fn from_entry(entry: &Path) -> anyhow::Result<KernelBuild> {
        let mut b: KernelBuild = crate::util::read_json(&entry.join("meta.json"))?;
        b.fill_paths(entry);
        b.cached = true;
        Ok(b)
    }
}
