//! The guest userland: an initramfs cut from Debian packages.
//!
//! recipe → `extract` (mmdebstrap, no target code runs) → `closure`
//! (the kept binaries and every library the loader will open) →
//! `layout` (merged-/usr, /init, /etc, device nodes) → `cpio` → `compress`
//! → the cache. The archive is reproducible: the same packages give the
//! same bytes, which `lab image build` checks against the cached entry.
//!
//! In the guest, `/init` (`images/init.sh`) runs with
//! `PATH=/usr/sbin:/usr/bin:/sbin:/bin`; every binary lives in
//! `/usr/bin` or `/usr/sbin`, and `/bin`, `/sbin`, `/lib`, `/lib64` are
//! links into `/usr`. A keys layer (`cpio::layer`) appended after the
//! archive supplies dropbear's host key and root's authorized_keys.
//!
//! On disk: the entry `<cache>/image/<key>/` holds `userland.cpio.zst`
//! and `image.json`; packages are unpacked in `<cache>/image-work/`
//! (removed after the build); `<cache>/image-latest/` holds the pointers
//! described in `store`.

pub mod closure;
pub mod compress;
pub mod cpio;
pub mod extract;
pub mod layout;
pub mod recipe;
pub mod root;
pub mod store;
pub mod stub;

pub use recipe::{Recipe, default_recipe, load_recipe};

use crate::cache::{Cache, Key, KeyBuilder};
use crate::events::Events;
use crate::matrix::Arch;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::Instant;
use store::ImageInfo;

/// Bump when the archive lab writes changes for the same inputs.
pub const FORMAT_VERSION: u32 = 1;
/// The cache kind of image entries.
pub const KIND: &str = "image";
/// The archive inside an entry.
pub const ARCHIVE: &str = "userland.cpio.zst";
/// The record beside it.
pub const INFO: &str = "image.json";

#[derive(Clone, Debug)]
pub struct ImageBuild {
    /// `userland.cpio.zst` inside the cache entry.
    pub path: PathBuf,
    /// sha256 of that file, hex.
    pub sha256: String,
    pub key: Key,
    /// `(package, version)` of every unpacked package, sorted.
    pub packages: Vec<(String, String)>,
    /// Nothing was built: the cache had this image.
    pub cached: bool,
    /// Identifies the recipe, /init and lab's layout; not the versions.
    pub recipe_hash: String,
}

/// Build the userland for `arch` from `recipe` (or the built-in one).
///
/// Without `force`, the newest image built from the same recipe is
/// reused without running mmdebstrap. With `force`, the packages are
/// resolved and the archive built again; if the cache already has an
/// image for those exact inputs, the two must be identical (a cache hit),
/// and a difference is reported as the reproducibility bug it is.
pub fn build(
    cache: &Cache,
    arch: Arch,
    recipe: Option<&Path>,
    force: bool,
    events: &Events,
) -> Result<ImageBuild> {
    let recipe = match recipe {
        Some(p) => load_recipe(p)?,
        None => default_recipe(),
    };
    build_recipe(cache, arch, &recipe, force, events)
}

/// `build` for a recipe already in memory, such as one `with_extras`.
pub fn build_recipe(
    cache: &Cache,
    arch: Arch,
    recipe: &Recipe,
    force: bool,
    events: &Events,
) -> Result<ImageBuild> {
    let id = format!("image-{arch}");
    events.started(&id, &format!("guest image {arch} ({})", recipe.suite), None);
    let t0 = Instant::now();
    let result = build_inner(cache, arch, recipe, force, events, &id);
    let secs = t0.elapsed().as_secs_f64();
    match &result {
        Ok((b, message)) => events.finished(&id, true, b.cached, secs, message.clone()),
        Err(e) => events.finished(&id, false, false, secs, format!("{e:#}")),
    }
    result.map(|(b, _)| b)
}

/// The hash of everything that shapes an image except package versions:
/// the recipe (canonical, so comments don't count), /init and the other
/// files lab writes, and the archive format.
pub fn recipe_hash(recipe: &Recipe) -> String {
    KeyBuilder::new("image-recipe")
        .field("format", FORMAT_VERSION.to_string())
        .field("recipe", recipe.canonical())
        .field("layout", layout::fingerprint())
        .finish()
        .0
}

/// The cache key of an image: arch, recipe, /init, resolved versions,
/// format, and the compressor (a new zstd may encode differently).
pub fn image_key(arch: Arch, recipe: &Recipe, packages: &[(String, String)], stub_cc: &str) -> Key {
    let versions: String = packages.iter().map(|(p, v)| format!("{p}={v}\n")).collect();
    KeyBuilder::new(KIND)
        .field("stub-cc", stub_cc)
        .field("format", FORMAT_VERSION.to_string())
        .field("arch", arch.name())
        .field("recipe", recipe.canonical())
        .field("layout", layout::fingerprint())
        .field("packages", versions)
        .field(
            "zstd",
            format!(
                "level={} lib={}",
                compress::LEVEL,
                zstd::zstd_safe::version_number()
            ),
        )
        .finish()
}

fn build_inner(
    cache: &Cache,
    arch: Arch,
    recipe: &Recipe,
    force: bool,
    events: &Events,
    id: &str,
) -> Result<(ImageBuild, String)> {
    let recipe_hash = recipe_hash(recipe);
    if !force && let Some(b) = latest(cache, arch, &recipe_hash)? {
        return Ok((b, "cached (newest image of this recipe)".into()));
    }

    events.phase(id, "mmdebstrap: resolving and unpacking packages");
    let extracted = extract::extract(recipe, arch, &cache.root().join("image-work"))?;
    let stub_cc = if recipe.stubs.is_empty() {
        String::new()
    } else {
        stub::compiler_version(arch)?
    };
    let key = image_key(arch, recipe, &extracted.packages, &stub_cc);

    events.phase(id, "ELF closure");
    let closure = closure::closure(
        &extracted.root,
        arch,
        &recipe.kept_paths(),
        &recipe.stubbed(),
    )?;
    let mut generated = std::collections::BTreeMap::new();
    for lib in stub::plan(&extracted.root, &closure)? {
        let bytes = stub::compile(&lib, arch)?;
        for path in &lib.paths {
            generated.insert(path.clone(), bytes.clone());
        }
    }
    events.phase(id, "archive");
    let archive = layout::assemble(&extracted.root, recipe, &closure, &generated)?;
    let entries = archive.len() as u64;
    let raw = archive.finish();
    let packages = extracted.packages.clone();
    drop(extracted); // ~300 MB of unpacked packages

    events.phase(id, &format!("zstd -{}", compress::LEVEL));
    let zst = compress::compress(&raw)?;
    let info = ImageInfo {
        format: FORMAT_VERSION,
        arch,
        suite: recipe.suite.clone(),
        sha256: store::sha256_hex(&zst),
        packages,
        recipe_hash: recipe_hash.clone(),
        raw_bytes: raw.len() as u64,
        zst_bytes: zst.len() as u64,
        entries,
    };
    drop(raw);

    let label = format!("image {arch} {}", recipe.suite);
    let (dir, hit) = cache.get_or_make(KIND, &key, &label, |tmp| {
        std::fs::write(tmp.join(ARCHIVE), &zst)
            .with_context(|| format!("writing {}", tmp.join(ARCHIVE).display()))?;
        crate::util::atomic_write_json(&tmp.join(INFO), &info)
    })?;
    if hit {
        check_same(&dir, &info)?;
    }
    store::write_pointer(cache, arch, &recipe_hash, &key)?;
    let message = format!(
        "{} zst, {} raw, {} entries{}",
        mb(info.zst_bytes),
        mb(info.raw_bytes),
        info.entries,
        if hit {
            " (identical to the cached image)"
        } else {
            ""
        }
    );
    Ok((
        ImageBuild {
            path: dir.join(ARCHIVE),
            sha256: info.sha256,
            key,
            packages: info.packages,
            cached: hit,
            recipe_hash,
        },
        message,
    ))
}

/// The cached image the recipe's pointer names, if it is still there.
fn latest(cache: &Cache, arch: Arch, recipe_hash: &str) -> Result<Option<ImageBuild>> {
    let Some(key) = store::read_pointer(cache, arch, recipe_hash) else {
        return Ok(None);
    };
    let Some(dir) = cache.get(KIND, &key) else {
        return Ok(None);
    };
    let info = store::read_info(&dir)?;
    let path = dir.join(ARCHIVE);
    if !path.is_file() {
        bail!(
            "{}: the image entry has no {ARCHIVE}; remove the entry",
            dir.display()
        );
    }
    Ok(Some(ImageBuild {
        path,
        sha256: info.sha256,
        key,
        packages: info.packages,
        cached: true,
        recipe_hash: recipe_hash.to_string(),
    }))
}

/// A fresh build of inputs the cache already has must match it byte for
/// byte; first make sure the cached file itself is intact, so a damaged
/// file is not reported as a reproducibility bug.
fn check_same(dir: &Path, fresh: &ImageInfo) -> Result<()> {
    let cached = store::read_info(dir)?;
    let on_disk = store::sha256_file(&dir.join(ARCHIVE))?;
    if on_disk != cached.sha256 {
        bail!(
            "the cached image {} is damaged: {INFO} says sha256 {} but the file hashes to \
             {on_disk}; remove the entry and build again",
            dir.display(),
            cached.sha256
        );
    }
    if cached.sha256 != fresh.sha256 {
        bail!(
            "image build is not reproducible: the cached {} has sha256 {}, a fresh build of the \
             same inputs (same package versions) has {} ({} vs {} bytes)",
            dir.join(ARCHIVE).display(),
            cached.sha256,
            fresh.sha256,
            cached.zst_bytes,
            fresh.zst_bytes
        );
    }
    Ok(())
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkgs(v: &str) -> Vec<(String, String)> {
        vec![("fio".into(), v.into()), ("libc6".into(), "2.36-9".into())]
    }

    #[test]
    fn key_follows_arch_recipe_and_versions() {
        let r = default_recipe();
        let k = image_key(Arch::X86_64, &r, &pkgs("3.33-3"), "gcc 12");
        assert_eq!(k, image_key(Arch::X86_64, &r, &pkgs("3.33-3"), "gcc 12"));
        assert_ne!(k, image_key(Arch::Arm64, &r, &pkgs("3.33-3"), "gcc 12"));
        assert_ne!(k, image_key(Arch::X86_64, &r, &pkgs("3.33-4"), "gcc 12"));
        let perf = r.with_extras(&["perf"]).unwrap();
        assert_ne!(k, image_key(Arch::X86_64, &perf, &pkgs("3.33-3"), "gcc 12"));
        assert_ne!(recipe_hash(&r), recipe_hash(&perf));
        assert_ne!(k, image_key(Arch::X86_64, &r, &pkgs("3.33-3"), "gcc 13"));
        let rbd = r.for_engines(&["rbd"]);
        assert!(!rbd.stubs.contains_key("librbd.so.1") && !rbd.stubs.contains_key("librados.so.2"));
        assert!(rbd.stubs.contains_key("libgfapi.so.0"));
        assert_ne!(recipe_hash(&r), recipe_hash(&rbd));
        assert_eq!(
            recipe_hash(&r),
            recipe_hash(&r.for_engines(&["psync", "libaio"]))
        );
    }

    /// A finished entry written the way `build` writes one.
    fn fake_entry(cache: &Cache, arch: Arch, zst: &[u8]) -> (Key, String) {
        let r = default_recipe();
        let hash = recipe_hash(&r);
        let key = image_key(arch, &r, &pkgs("1"), "");
        let info = ImageInfo {
            format: FORMAT_VERSION,
            arch,
            suite: r.suite.clone(),
            sha256: store::sha256_hex(zst),
            packages: pkgs("1"),
            recipe_hash: hash.clone(),
            raw_bytes: 10,
            zst_bytes: zst.len() as u64,
            entries: 1,
        };
        cache
            .get_or_make(KIND, &key, "test", |tmp| {
                std::fs::write(tmp.join(ARCHIVE), zst)?;
                crate::util::atomic_write_json(&tmp.join(INFO), &info)
            })
            .unwrap();
        store::write_pointer(cache, arch, &hash, &key).unwrap();
        (key, hash)
    }

    #[test]
    fn unforced_build_reuses_the_pointed_image_without_mmdebstrap() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let (key, hash) = fake_entry(&cache, Arch::Arm64, b"zst bytes");
        let rec = crate::events::Recorder::default();
        let events = rec.attach(Events::silent());
        let b = build(&cache, Arch::Arm64, None, false, &events).unwrap();
        assert!(b.cached);
        assert_eq!(b.key, key);
        assert_eq!(b.recipe_hash, hash);
        assert_eq!(b.sha256, store::sha256_hex(b"zst bytes"));
        assert_eq!(std::fs::read(&b.path).unwrap(), b"zst bytes");
        assert_eq!(b.packages, pkgs("1"));
        let ev = rec.events();
        assert!(matches!(
            ev.last(),
            Some(crate::events::Event::Finished {
                ok: true,
                cached: true,
                ..
            })
        ));
        // No phase ran: nothing was extracted.
        assert!(
            !ev.iter()
                .any(|e| matches!(e, crate::events::Event::Progress { .. }))
        );
    }

    #[test]
    fn check_same_tells_damage_from_irreproducibility() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let (key, _) = fake_entry(&cache, Arch::X86_64, b"original");
        let dir = cache.get(KIND, &key).unwrap();
        let mut fresh = store::read_info(&dir).unwrap();
        check_same(&dir, &fresh).unwrap();

        fresh.sha256 = store::sha256_hex(b"different");
        let err = check_same(&dir, &fresh).unwrap_err().to_string();
        assert!(err.contains("not reproducible"), "{err}");
        assert!(err.contains(&fresh.sha256) && err.contains(&store::sha256_hex(b"original")));

        std::fs::write(dir.join(ARCHIVE), b"bit rot").unwrap();
        let err = check_same(&dir, &fresh).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
    }
}
