//! `lab cache export | import`: carry entries between machines (CI jobs)
//! as a tar archive.
//!
//! An export holds whole entries (`<kind>/<key>/`), the pointer files
//! that name them (`pointers/kernel-config-<prekey>`, which lets a
//! build skip configuring; `image-latest/<arch>-<recipe>`, which lets a
//! run skip mmdebstrap), and an index, `lab-cache-export.json`. Import
//! extracts into a temp directory inside the cache and renames each
//! entry into place, so a reader never sees half an entry; entries the
//! cache already has are left alone.

use super::gc::{POINTER_DIRS, all_keys, pointer_target, pointers};
use super::{Cache, ENTRY_INFO, EntryInfo, Key};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The index at the root of an export.
pub const INDEX: &str = "lab-cache-export.json";

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ExportIndex {
    pub format: u32,
    pub lab_version: String,
    pub created: String,
    /// `(kind, key)` of every entry.
    pub entries: Vec<(String, Key)>,
    /// Pointer files, relative to the cache root.
    pub pointers: Vec<String>,
}

/// tar's compression flag for an archive name.
pub fn compression_flag(file: &Path) -> Result<Option<&'static str>> {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    Ok(if name.ends_with(".tar.zst") || name.ends_with(".tzst") {
        Some("--zstd")
    } else if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Some("-z")
    } else if name.ends_with(".tar.xz") {
        Some("-J")
    } else if name.ends_with(".tar") {
        None
    } else {
        bail!(
            "{}: name the archive .tar, .tar.zst or .tar.gz (tar compresses by the name)",
            file.display()
        )
    })
}

/// Write the selected entries (all when `kinds` and `keys` are empty;
/// a key may be a prefix, as `lab cache ls` shows it) with their pointers.
pub fn export_from(
    cache: &Cache,
    file: &Path,
    kinds: &[String],
    keys: &[String],
) -> Result<ExportIndex> {
    let flag = compression_flag(file).map_err(crate::error::input)?;
    if std::fs::symlink_metadata(file).is_ok_and(|m| !m.is_file()) {
        return Err(crate::error::input_error(format!(
            "{}: exists and is not a regular file; name a new archive",
            file.display()
        )));
    }
    let entries = cache.list()?;
    for k in keys {
        if !entries.iter().any(|(_, i)| i.key.0.starts_with(k.as_str())) {
            return Err(crate::error::input_error(format!(
                "no entry's key starts with '{}' in {}",
                crate::util::clip(k, 100),
                cache.root().display()
            )));
        }
    }
    let chosen: Vec<&(PathBuf, EntryInfo)> = entries
        .iter()
        .filter(|(_, i)| kinds.is_empty() || kinds.contains(&i.kind))
        .filter(|(_, i)| keys.is_empty() || keys.iter().any(|k| i.key.0.starts_with(k.as_str())))
        .collect();
    // A kind with no entries is fine (a CI job may not have built an
    // image); a selection with nothing in it is a mistake.
    if chosen.is_empty() && !kinds.is_empty() {
        let have: BTreeSet<&str> = entries.iter().map(|(_, i)| i.kind.as_str()).collect();
        return Err(crate::error::input_error(format!(
            "nothing to export: the cache at {} has no entries of kind {} (it has: {})",
            cache.root().display(),
            kinds.join(", "),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.into_iter().collect::<Vec<_>>().join(", ")
            }
        )));
    }
    let chosen_keys: BTreeSet<&str> = chosen.iter().map(|(_, i)| i.key.0.as_str()).collect();
    let ptrs: Vec<String> = pointers(cache)
        .into_iter()
        .filter(|(_, t)| chosen_keys.contains(t.as_str()))
        .map(|(rel, _)| rel)
        .collect();
    let idx = ExportIndex {
        format: 1,
        lab_version: crate::util::LAB_VERSION.to_string(),
        created: crate::util::now_rfc3339(),
        entries: chosen
            .iter()
            .map(|(_, i)| (i.kind.clone(), i.key.clone()))
            .collect(),
        pointers: ptrs.clone(),
    };
    let staging = tempfile::tempdir().context("creating a temp directory")?;
    crate::util::atomic_write_json(&staging.path().join(INDEX), &idx)?;

    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let partial = dir.join(format!(
        ".{}.partial-{}",
        file.file_name().unwrap_or_default().to_string_lossy(),
        std::process::id()
    ));
    // Initrd entries hold the guest's SSH host key: the archive is the
    // owner's alone (0600) from its first byte; tar keeps the mode.
    {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)
            .with_context(|| format!("creating {}", partial.display()))?;
    }
    let mut tar = Command::new("tar");
    // An interrupted export removes the partial archive.
    let guard = crate::interrupt::temp_guard(&partial);
    tar.arg("-c").arg("-f").arg(&partial).arg("--sort=name");
    if let Some(f) = flag {
        tar.arg(f);
    }
    tar.arg("-C").arg(staging.path()).arg(INDEX);
    tar.arg("-C").arg(cache.root());
    for (_, i) in &chosen {
        tar.arg(format!("{}/{}", i.kind, i.key));
    }
    for p in &ptrs {
        tar.arg(p);
    }
    if let Err(e) = crate::util::run_output(&mut tar) {
        let _ = std::fs::remove_file(&partial);
        return Err(e.context(format!("writing {}", file.display())));
    }
    guard
        .commit(|| std::fs::rename(&partial, file))
        .with_context(|| format!("moving {} to {}", partial.display(), file.display()))?;
    Ok(idx)
}

#[derive(Debug, Default)]
pub struct ImportReport {
    pub imported: Vec<(String, Key)>,
    /// Entries the cache had already.
    pub skipped: Vec<(String, Key)>,
    pub pointers: usize,
}

/// A path component from an archive: no separators, no `..`, no dot files.
pub(crate) fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+@=".contains(c))
}

/// Extract `file` inside the cache, then move each entry into place.
pub fn import_into(cache: &Cache, file: &Path) -> Result<ImportReport> {
    let flag = check_archive(file)?;
    let tmp = cache.root().join(format!(".import-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)?;
    }
    let _guard = crate::interrupt::temp_guard(&tmp);
    std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let r = import_from_dir(cache, file, flag, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    r
}

/// The tar flag for an archive to import, once its name and file are
/// checked: a name tar cannot read, a missing file or a non-file is
/// the user's mistake (exit 3).
pub fn check_archive(file: &Path) -> Result<Option<&'static str>> {
    let flag = compression_flag(file).map_err(crate::error::input)?;
    let why = match std::fs::metadata(file) {
        Ok(m) if m.is_file() => return Ok(flag),
        Ok(_) => "not a regular file; give the archive lab cache export wrote",
        Err(_) => "no such archive",
    };
    Err(crate::error::input_error(format!(
        "{}: {why}",
        file.display()
    )))
}

/// An entry as unpacked, before it becomes visible: only directories
/// and regular files (no symlink out of the cache, no device node or
/// FIFO, which tar makes when run as root), no setuid, setgid or sticky
/// bit, and every artifact present with the blake3 its entry.json gives.
fn check_unpacked(dir: &Path, info: &EntryInfo) -> std::result::Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))?;
        for e in entries {
            let p = e.map_err(|e| e.to_string())?.path();
            let meta = std::fs::symlink_metadata(&p).map_err(|e| e.to_string())?;
            let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            if !(meta.is_dir() || meta.is_file()) {
                return Err(format!(
                    "{rel} is a symlink, device or FIFO; an entry holds only files and directories"
                ));
            }
            let mode = meta.permissions().mode();
            if mode & 0o7000 != 0 {
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode & 0o777))
                    .map_err(|e| format!("{rel}: clearing its setuid/setgid/sticky bits: {e}"))?;
            }
            if meta.is_dir() {
                stack.push(p);
            }
        }
    }
    let have = super::artifact_hashes(dir).map_err(|e| format!("{e:#}"))?;
    if let Some(bad) = info.files.keys().find(|n| !safe_name(n)) {
        return Err(format!(
            "entry.json names '{}', which is not a file of the entry",
            crate::util::clip(bad, 100)
        ));
    }
    for (name, hash) in &have {
        match info.files.get(name) {
            None => return Err(format!("{name} has no blake3 in entry.json")),
            Some(want) if want != hash => {
                return Err(format!("{name} does not match the blake3 entry.json gives"));
            }
            Some(_) => {}
        }
    }
    if let Some(missing) = info.files.keys().find(|n| !have.contains_key(*n)) {
        return Err(format!(
            "{missing} is named in entry.json but not in the entry"
        ));
    }
    Ok(())
}

fn import_from_dir(
    cache: &Cache,
    file: &Path,
    flag: Option<&str>,
    tmp: &Path,
) -> Result<ImportReport> {
    let mut tar = Command::new("tar");
    tar.arg("-x").arg("-f").arg(file);
    if let Some(f) = flag {
        tar.arg(f);
    }
    // tar refuses names with `..` and strips a leading `/`; the modes it
    // keeps are checked entry by entry below.
    tar.arg("--no-same-owner")
        .arg("--no-same-permissions")
        .arg("-C")
        .arg(tmp);
    crate::util::run_output(&mut tar).map_err(|e| {
        crate::error::input_error(format!(
            "{}: not a tar archive lab can unpack: {}",
            file.display(),
            crate::util::clip(&format!("{e:#}"), 300)
        ))
    })?;
    let idx: ExportIndex = crate::util::read_json(&tmp.join(INDEX)).map_err(|e| {
        crate::error::input_error(format!(
            "{} is not a lab cache export (its {INDEX} is missing or wrong: {})",
            file.display(),
            crate::util::clip(&format!("{e:#}"), 200)
        ))
    })?;
    let bad = |msg: String| crate::error::input_error(format!("{}: {msg}", file.display()));
    let mut r = ImportReport::default();
    for (kind, key) in &idx.entries {
        if !safe_name(kind) || !safe_name(&key.0) || kind == "locks" {
            return Err(bad(format!(
                "bad entry name {}/{}",
                crate::util::clip(kind, 100),
                crate::util::clip(&key.0, 100)
            )));
        }
        let src = tmp.join(kind).join(&key.0);
        if !std::fs::symlink_metadata(&src).is_ok_and(|m| m.is_dir()) {
            return Err(bad(format!(
                "entry {kind}/{key} is not a directory in the archive"
            )));
        }
        let info: EntryInfo = crate::util::read_json(&src.join(ENTRY_INFO))
            .map_err(|e| bad(format!("entry {kind}/{key}: {e:#}")))?;
        if &info.kind != kind || &info.key != key {
            return Err(bad(format!(
                "entry {kind}/{key} says it is {}/{}",
                crate::util::clip(&info.kind, 100),
                crate::util::clip(&info.key.0, 100)
            )));
        }
        check_unpacked(&src, &info).map_err(|why| bad(format!("entry {kind}/{key}: {why}")))?;
        if cache.get(kind, key).is_some() {
            r.skipped.push((kind.clone(), key.clone()));
            continue;
        }
        // The lock a build of this entry would take.
        let _lock = cache.lock(&format!("{kind}-{}", key.short()))?;
        let dest = cache.entry_path(kind, key);
        if cache.get(kind, key).is_some() {
            r.skipped.push((kind.clone(), key.clone()));
            continue;
        }
        if dest.exists() {
            // Left by a crash before entry.json: garbage, as in Cache::commit.
            std::fs::remove_dir_all(&dest)?;
        }
        std::fs::create_dir_all(dest.parent().expect("entries have a kind directory"))?;
        std::fs::rename(&src, &dest)
            .with_context(|| format!("moving {} to {}", src.display(), dest.display()))?;
        r.imported.push((kind.clone(), key.clone()));
    }
    let keys = all_keys(cache)?;
    for rel in &idx.pointers {
        let shown = crate::util::clip(rel, 100);
        let Some((dir, name)) = rel.split_once('/') else {
            return Err(bad(format!("bad pointer name {shown}")));
        };
        if !POINTER_DIRS.contains(&dir) || !safe_name(name) {
            return Err(bad(format!("bad pointer name {shown}")));
        }
        let Some(target) = pointer_target(&tmp.join(rel)) else {
            return Err(bad(format!("pointer {shown} names no key")));
        };
        if !keys.contains(&target) {
            continue;
        }
        let dest = cache.root().join(rel);
        // A local pointer to an entry this cache has wins.
        if pointer_target(&dest).is_some_and(|t| keys.contains(&t)) {
            continue;
        }
        crate::util::atomic_write(&dest, format!("{target}\n").as_bytes())?;
        r.pointers += 1;
    }
    Ok(r)
}
