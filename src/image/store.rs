//! What an image entry records beside its archive, and the pointer to
//! the newest image of a recipe.
//!
//! An image's cache key includes the package versions Debian resolved,
//! which takes an mmdebstrap run (~15 s) to learn. The pointer
//! `<cache>/image-latest/<arch>-<recipe hash>` names the key of the last
//! image built from a recipe, so `lab run` finds it without that run.

use crate::cache::{Cache, Key};
use crate::matrix::Arch;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// `image.json` in an image entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageInfo {
    pub format: u32,
    pub arch: Arch,
    pub suite: String,
    /// sha256 of the `.cpio.zst`, hex.
    pub sha256: String,
    /// `(package, version)` of every unpacked package, sorted.
    pub packages: Vec<(String, String)>,
    pub recipe_hash: String,
    /// Uncompressed cpio size.
    pub raw_bytes: u64,
    pub zst_bytes: u64,
    /// Archive entries lab added (parent directories not counted).
    pub entries: u64,
}

pub const POINTER_DIR: &str = "image-latest";

pub fn pointer_path(cache: &Cache, arch: Arch, recipe_hash: &str) -> PathBuf {
    cache
        .root()
        .join(POINTER_DIR)
        .join(format!("{}-{recipe_hash}", arch.name()))
}

/// The key the pointer names, if there is a readable pointer.
pub fn read_pointer(cache: &Cache, arch: Arch, recipe_hash: &str) -> Option<Key> {
    let text = std::fs::read_to_string(pointer_path(cache, arch, recipe_hash)).ok()?;
    let key = text.trim();
    (key.len() == 64 && key.chars().all(|c| c.is_ascii_hexdigit())).then(|| Key(key.to_string()))
}

pub fn write_pointer(cache: &Cache, arch: Arch, recipe_hash: &str, key: &Key) -> Result<()> {
    crate::util::atomic_write(
        &pointer_path(cache, arch, recipe_hash),
        format!("{key}\n").as_bytes(),
    )
}

pub fn read_info(entry: &Path) -> Result<ImageInfo> {
    crate::util::read_json(&entry.join(super::INFO))
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

pub fn sha256_file(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .with_context(|| format!("reading {}", path.display()))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_a_known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), b"abc").unwrap();
        assert_eq!(
            sha256_file(&d.path().join("f")).unwrap(),
            sha256_hex(b"abc")
        );
    }

    #[test]
    fn pointer_roundtrips_and_rejects_garbage() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        assert_eq!(read_pointer(&cache, Arch::Arm64, "h"), None);
        let key = Key("ab".repeat(32));
        write_pointer(&cache, Arch::Arm64, "h", &key).unwrap();
        assert_eq!(read_pointer(&cache, Arch::Arm64, "h"), Some(key));
        assert_eq!(read_pointer(&cache, Arch::X86_64, "h"), None);
        std::fs::write(pointer_path(&cache, Arch::Arm64, "h"), "not a key").unwrap();
        assert_eq!(read_pointer(&cache, Arch::Arm64, "h"), None);
        // The pointer directory holds no entries, so `lab cache ls` skips it.
        assert!(cache.list().unwrap().is_empty());
    }
}
