//! The content-addressed cache: kernels, images, source trees.
//!
//! An entry is a directory `<root>/<kind>/<key>/` that appears by rename
//! only once complete, so an interrupted build (Ctrl-C, full disk, crash)
//! leaves no half-written entry, only a temp directory that the next
//! writer of that kind removes. A per-key file lock keeps two processes
//! from building the same entry at once.

pub use crate::record::kernel::Key;
pub mod buildroot;
pub mod gc;
pub mod ls;
#[cfg(test)]
mod maintenance_tests;
pub mod size;
mod stale;
pub mod transfer;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// Where the cache is: `$LAB_CACHE`, else `$XDG_CACHE_HOME/lab`, else
/// `~/.cache/lab`. Nothing is created.
pub fn default_root() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("LAB_CACHE") {
        if p.is_empty() {
            return Err(crate::error::input_error(
                "LAB_CACHE is set but empty: unset it (the default is ~/.cache/lab) or set it to a directory",
            ));
        }
        let p = PathBuf::from(p);
        if std::fs::metadata(&p).is_ok_and(|m| !m.is_dir()) {
            return Err(crate::error::input_error(format!(
                "LAB_CACHE={} is not a directory: set it to a directory (made when missing)",
                p.display()
            )));
        }
        return Ok(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p).join("lab"));
    }
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("neither LAB_CACHE nor HOME is set: set LAB_CACHE to the cache directory")?;
    Ok(PathBuf::from(home).join(".cache/lab"))
}

/// Builds a key from named fields. The names are hashed too, so two
/// different inputs cannot collide by shifting bytes between fields.
pub struct KeyBuilder(blake3::Hasher);

impl KeyBuilder {
    pub fn new(kind: &str) -> Self {
        let mut h = blake3::Hasher::new();
        h.update(b"lab-cache-v1\0");
        h.update(kind.as_bytes());
        KeyBuilder(h)
    }

    pub fn field(mut self, name: &str, value: impl AsRef<[u8]>) -> Self {
        let v = value.as_ref();
        self.0.update(name.as_bytes());
        self.0.update(&(v.len() as u64).to_le_bytes());
        self.0.update(v);
        self
    }

    pub fn finish(self) -> Key {
        Key(self.0.finalize().to_hex().to_string())
    }
}

/// What is recorded beside each entry, for `lab cache ls`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EntryInfo {
    pub kind: String,
    pub key: Key,
    pub created: String,
    /// One line a person can read: "x86_64 hz=100 after", "image arm64".
    pub label: String,
    #[serde(default)]
    pub bytes: u64,
    /// blake3 of each artifact (every file but the JSON metadata), taken
    /// when the entry was made: a truncated bzImage or initrd is found
    /// before a guest boots it. Entries from an older lab have none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub files: std::collections::BTreeMap<String, String>,
}

/// The artifacts at the top of an entry directory (bzImage, vmlinux,
/// initrd.img, userland.cpio.zst) and their blake3. A source entry's
/// extracted tree is not hashed: 80,000 files on every lookup would cost
/// more than the damage it could find.
pub(crate) fn artifact_hashes(dir: &Path) -> Result<std::collections::BTreeMap<String, String>> {
    let mut out = std::collections::BTreeMap::new();
    for e in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let p = e?.path();
        let is_file = fs::symlink_metadata(&p)?.is_file();
        if is_file && p.extension().is_none_or(|x| x != "json") {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            out.insert(name, crate::util::hash_file(&p)?);
        }
    }
    Ok(out)
}

pub const ENTRY_INFO: &str = "entry.json";

#[derive(Clone, Debug)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// `$LAB_CACHE`, else `$XDG_CACHE_HOME/lab`, else `~/.cache/lab`;
    /// created (0700) when missing.
    pub fn open_default() -> Result<Cache> {
        Cache::at(default_root()?)
    }

    /// The default cache if it exists. Commands that only read (`lab cache
    /// ls`, `lab doctor`) use this and never create it.
    pub fn open_existing() -> Result<Option<Cache>> {
        let root = default_root()?;
        if !root.is_dir() {
            return Ok(None);
        }
        let root = root
            .canonicalize()
            .with_context(|| format!("resolving the cache path {}", root.display()))?;
        Ok(Some(Cache { root }))
    }

    pub fn at(root: impl Into<PathBuf>) -> Result<Cache> {
        let root = root.into();
        if !root.is_dir() {
            // Cached initrds hold the guest's private host key: only the
            // owner may look inside.
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&root)
                .with_context(|| format!("creating the cache at {}", root.display()))?;
        }
        let root = root
            .canonicalize()
            .with_context(|| format!("resolving the cache path {}", root.display()))?;
        Ok(Cache { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn entry_path(&self, kind: &str, key: &Key) -> PathBuf {
        self.root.join(kind).join(&key.0)
    }

    /// A finished entry whose artifacts still match their hashes. A
    /// damaged one (truncated, changed, missing a file) is named on
    /// stderr and removed, so the caller makes it again.
    pub fn get(&self, kind: &str, key: &Key) -> Option<PathBuf> {
        let p = self.entry_path(kind, key);
        let info: EntryInfo = crate::util::read_json(&p.join(ENTRY_INFO)).ok()?;
        match damage(&p, &info) {
            None => Some(p),
            Some(why) => {
                eprintln!(
                    "warning: cache entry {kind}/{} ({}) is damaged: {why}; removing it, it will be made again",
                    key.short(),
                    info.label
                );
                if let Err(e) = self.remove(&p) {
                    eprintln!("warning: removing {}: {e:#}", p.display());
                }
                None
            }
        }
    }

    /// A lock file under `<root>/locks/`, held until the guard drops.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        let (path, file) = self.lock_file(name)?;
        let flock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| e)
            .with_context(|| format!("locking {}", path.display()))?;
        Ok(Lock { _flock: flock })
    }

    /// Like `lock`, but `None` when someone else holds it.
    pub fn try_lock(&self, name: &str) -> Result<Option<Lock>> {
        let (path, file) = self.lock_file(name)?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(flock) => Ok(Some(Lock { _flock: flock })),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
            Err((_, e)) => Err(e).with_context(|| format!("locking {}", path.display())),
        }
    }

    fn lock_file(&self, name: &str) -> Result<(PathBuf, File)> {
        let dir = self.root.join("locks");
        fs::create_dir_all(&dir)?;
        let path = dir.join(format!("{name}.lock"));
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok((path, file))
    }

    /// Get the entry, or make it: `make` fills a fresh temp directory,
    /// which is renamed into place only when `make` succeeds. Returns
    /// the entry's path and whether it was already there.
    pub fn get_or_make<F>(
        &self,
        kind: &str,
        key: &Key,
        label: &str,
        make: F,
    ) -> Result<(PathBuf, bool)>
    where
        F: FnOnce(&Path) -> Result<()>,
    {
        if let Some(p) = self.get(kind, key) {
            return Ok((p, true));
        }
        let _lock = self.lock(&format!("{kind}-{}", key.short()))?;
        // Someone else may have made it while we waited for the lock.
        if let Some(p) = self.get(kind, key) {
            return Ok((p, true));
        }
        let tmp = self.fresh_temp(kind, key)?;
        let result = make(&tmp);
        if let Err(e) = result {
            let _ = fs::remove_dir_all(&tmp);
            return Err(e);
        }
        self.commit(kind, key, label, &tmp).map(|p| (p, false))
    }

    /// Move a finished temp directory into place as an entry.
    fn commit(&self, kind: &str, key: &Key, label: &str, tmp: &Path) -> Result<PathBuf> {
        let info = EntryInfo {
            kind: kind.to_string(),
            key: key.clone(),
            created: crate::util::now_rfc3339(),
            label: label.to_string(),
            bytes: crate::util::dir_size(tmp),
            files: artifact_hashes(tmp)?,
        };
        crate::util::atomic_write_json(&tmp.join(ENTRY_INFO), &info)?;
        let dest = self.entry_path(kind, key);
        if dest.exists() {
            // A stale entry without entry.json (from an old crash) is garbage.
            fs::remove_dir_all(&dest)?;
        }
        fs::rename(tmp, &dest)
            .with_context(|| format!("moving {} to {}", tmp.display(), dest.display()))?;
        Ok(dest)
    }

    /// A new temp directory for `kind`, after clearing temp directories
    /// left by processes that no longer run.
    fn fresh_temp(&self, kind: &str, key: &Key) -> Result<PathBuf> {
        let tmp_root = self.root.join(kind).join(".tmp");
        fs::create_dir_all(&tmp_root)
            .with_context(|| format!("creating {}", tmp_root.display()))?;
        stale::remove_stale_temps(&self.root);
        let p = tmp_root.join(format!("{}.{}", key.short(), std::process::id()));
        if p.exists() {
            fs::remove_dir_all(&p)?;
        }
        // Entries may hold keys (the initrd's keys layer): owner only.
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&p)
            .with_context(|| format!("creating {}", p.display()))?;
        Ok(p)
    }

    /// Every finished entry, of every kind.
    pub fn list(&self) -> Result<Vec<(PathBuf, EntryInfo)>> {
        let mut out = Vec::new();
        for kind in fs::read_dir(&self.root)?.flatten() {
            let name = kind.file_name();
            if name == "locks" || !kind.path().is_dir() {
                continue;
            }
            for e in fs::read_dir(kind.path())?.flatten() {
                let info_path = e.path().join(ENTRY_INFO);
                if let Ok(info) = crate::util::read_json::<EntryInfo>(&info_path) {
                    out.push((e.path(), info));
                }
            }
        }
        out.sort_by(|a, b| a.1.created.cmp(&b.1.created));
        Ok(out)
    }

    /// Remove one entry: first rename it out of sight so a reader never
    /// sees it half-deleted.
    pub fn remove(&self, path: &Path) -> Result<()> {
        let trash = path.with_extension(format!("trash.{}", std::process::id()));
        fs::rename(path, &trash)?;
        fs::remove_dir_all(&trash)?;
        Ok(())
    }
}

pub struct Lock {
    _flock: nix::fcntl::Flock<File>,
}

/// What is wrong with an entry's artifacts, if anything.
fn damage(dir: &Path, info: &EntryInfo) -> Option<String> {
    for (rel, want) in &info.files {
        // entry.json names files of its own directory only: never a path
        // out of it (`../../dev/zero` would hang the hash).
        if !transfer::safe_name(rel) {
            return Some(format!(
                "entry.json names '{}', which is not a file of the entry",
                crate::util::clip(&crate::util::escape_controls(rel), 100)
            ));
        }
        let p = dir.join(rel);
        if !fs::symlink_metadata(&p).is_ok_and(|m| m.is_file()) {
            return Some(format!("{rel} is missing or not a regular file"));
        }
        match crate::util::hash_file(&p) {
            Err(_) => return Some(format!("{rel} is missing")),
            Ok(h) if &h != want => {
                let size = fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
                return Some(format!(
                    "{rel} ({size} bytes) does not match the blake3 it had when made"
                ));
            }
            Ok(_) => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_field_and_its_name() {
        let a = KeyBuilder::new("k")
            .field("x", "1")
            .field("y", "2")
            .finish();
        let b = KeyBuilder::new("k")
            .field("x", "1")
            .field("y", "3")
            .finish();
        let c = KeyBuilder::new("k")
            .field("x", "12")
            .field("y", "")
            .finish();
        let d = KeyBuilder::new("k")
            .field("x", "1")
            .field("y", "2")
            .finish();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, d);
        assert_eq!(a.0.len(), 64);
    }

    #[test]
    fn failed_make_leaves_no_entry_and_success_is_a_hit_next_time() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let key = KeyBuilder::new("t").field("a", "b").finish();
        let err = cache.get_or_make("t", &key, "x", |dir| {
            fs::write(dir.join("half"), "written")?;
            anyhow::bail!("interrupted")
        });
        assert!(err.is_err());
        assert!(cache.get("t", &key).is_none());
        assert_eq!(fs::read_dir(d.path().join("t/.tmp")).unwrap().count(), 0);

        let (p, hit) = cache
            .get_or_make("t", &key, "x", |dir| Ok(fs::write(dir.join("out"), "ok")?))
            .unwrap();
        assert!(!hit);
        assert_eq!(fs::read_to_string(p.join("out")).unwrap(), "ok");
        let (_, hit) = cache
            .get_or_make("t", &key, "x", |_| anyhow::bail!("must not run"))
            .unwrap();
        assert!(hit);
        assert_eq!(cache.list().unwrap().len(), 1);
    }

    #[test]
    fn a_truncated_artifact_is_found_by_its_hash_and_the_entry_made_again() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let key = KeyBuilder::new("t").field("a", "1").finish();
        let (p, _) = cache
            .get_or_make("kernel", &key, "x86_64 hz=100 after", |dir| {
                fs::write(dir.join("bzImage"), vec![7u8; 4096])?;
                Ok(fs::write(dir.join("meta.json"), "{}")?)
            })
            .unwrap();
        assert!(cache.get("kernel", &key).is_some());
        // Metadata may change; an artifact may not.
        fs::write(p.join("meta.json"), "{\"x\": 1}").unwrap();
        assert!(cache.get("kernel", &key).is_some());
        fs::write(p.join("bzImage"), vec![7u8; 100]).unwrap();
        assert!(cache.get("kernel", &key).is_none());
        assert!(!p.exists(), "the damaged entry is removed");
        let (_, hit) = cache
            .get_or_make("kernel", &key, "x", |dir| {
                Ok(fs::write(dir.join("bzImage"), "new")?)
            })
            .unwrap();
        assert!(!hit, "made again");
        // An entry from an older lab, without hashes, is trusted as before.
        let info = p.join(ENTRY_INFO);
        let mut v: serde_json::Value = serde_json::from_slice(&fs::read(&info).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("files");
        fs::write(&info, v.to_string()).unwrap();
        fs::write(p.join("bzImage"), "changed").unwrap();
        assert!(cache.get("kernel", &key).is_some());
    }

    #[test]
    fn stale_temp_from_a_dead_process_is_removed() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let stale = d.path().join("t/.tmp/abcd.999999999");
        fs::create_dir_all(&stale).unwrap();
        let key = KeyBuilder::new("t").finish();
        cache.get_or_make("t", &key, "x", |_| Ok(())).unwrap();
        assert!(!stale.exists());
    }
}
