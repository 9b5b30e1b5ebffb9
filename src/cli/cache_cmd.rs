//! `lab cache ls | gc | export | import`: look after the cache, and
//! carry its entries between machines (CI jobs) as a tar archive.
//!
//! An export holds whole entries (`<kind>/<key>/`), the pointer files
//! that name them (`pointers/kernel-config-<prekey>`, which lets a
//! build skip configuring; `image-latest/<arch>-<recipe>`, which lets a
//! run skip mmdebstrap), and an index, `lab-cache-export.json`. Import
//! extracts into a temp directory inside the cache and renames each
//! entry into place, so a reader never sees half an entry; entries the
//! cache already has are left alone.

use crate::cache::{Cache, ENTRY_INFO, EntryInfo, Key};
use anyhow::{Context, Result, bail};
use comfy_table::{Table, presets::ASCII_MARKDOWN};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Top-level directories of pointer files: each file holds an entry's key.
pub const POINTER_DIRS: [&str; 2] = ["pointers", "image-latest"];

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

/// `lab cache ls`
pub fn ls() -> Result<i32> {
    let cache = Cache::open_default()?;
    print!("{}", ls_text(&cache)?);
    Ok(0)
}

/// The table `lab cache ls` prints, oldest entry first.
pub fn ls_text(cache: &Cache) -> Result<String> {
    let entries = cache.list()?;
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_header(["kind", "key", "label", "size", "created"]);
    let mut all = Inodes::default();
    for (path, info) in &entries {
        let own = Inodes::of(path);
        t.add_row([
            info.kind.clone(),
            info.key.short().to_string(),
            info.label.clone(),
            human_bytes(own.bytes()),
            info.created.clone(),
        ]);
        all.extend(own);
    }
    let roots = crate::kernel::build::build_roots(cache);
    let mut roots_text = String::new();
    if !roots.is_empty() {
        let mut r = Table::new();
        r.load_style(ASCII_MARKDOWN).set_header([
            "build root",
            "last built",
            "own size",
            "last used",
        ]);
        let entries_only = all.clone();
        for root in &roots {
            let inodes = Inodes::of(&root.dir);
            // What the root adds: its objects, not the source it links to.
            let own = inodes.minus(std::iter::once(&entries_only));
            r.add_row([
                root.name.clone(),
                root.last_built.clone().unwrap_or_default(),
                human_bytes(own.bytes()),
                crate::util::rfc3339(root.used),
            ]);
            all.extend(inodes);
        }
        roots_text = format!(
            "\n{r}\n{} build roots: work trees for patched rebuilds; \
             `lab cache gc --build-roots` removes them (their kernels stay cached)\n",
            roots.len()
        );
    }
    Ok(format!(
        "cache {}\n{t}\n{} entries{roots_text}\n{} on disk (hard links counted once)\n",
        cache.root().display(),
        entries.len(),
        human_bytes(all.bytes())
    ))
}

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

/// `lab cache gc [--keep N] [--max-size SIZE] [--build-roots]`
pub fn gc(keep: Option<usize>, max_size: Option<&str>, build_roots: bool) -> Result<i32> {
    let cache = Cache::open_default()?;
    let max_bytes = max_size.map(parse_size).transpose()?;
    let opts = GcOptions {
        keep,
        max_bytes,
        build_roots,
    };
    let r = gc_in(&cache, opts)?;
    for (name, bytes) in &r.roots_removed {
        println!("removed build root {name}  ({})", human_bytes(*bytes));
    }
    for name in &r.roots_busy {
        println!("kept build root {name}: a build is using it");
    }
    for (info, bytes) in &r.removed {
        println!(
            "removed {:<10} {}  {}  ({}, {})",
            info.kind,
            info.key.short(),
            info.label,
            human_bytes(*bytes),
            info.created
        );
    }
    println!(
        "{} entries removed, {} stale temp dirs, {} dangling pointers; {} → {} on disk",
        r.removed.len(),
        r.temps_removed,
        r.pointers_removed,
        human_bytes(r.bytes_before),
        human_bytes(r.bytes_after)
    );
    if keep.is_none() && max_bytes.is_none() && !build_roots {
        println!("(give --keep N, --max-size SIZE or --build-roots to remove something)");
    }
    Ok(0)
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
    let roots: Vec<(crate::kernel::build::BuildRootInfo, Inodes)> =
        crate::kernel::build::build_roots(cache)
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
            if crate::kernel::build::remove_build_root(cache, root)? {
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

/// Temp directories whose process is gone: `<kind>/.tmp/<key>.<pid>`,
/// `<kind>/<key>.trash.<pid>` (an interrupted remove), `.import-<pid>`.
fn remove_stale_temps(root: &Path) -> usize {
    fn dead(pid: Option<&str>) -> bool {
        match pid.and_then(|p| p.parse::<i32>().ok()) {
            Some(p) => !Path::new(&format!("/proc/{p}")).exists(),
            None => true,
        }
    }
    let mut n = 0;
    let mut rm = |p: PathBuf| {
        if std::fs::remove_dir_all(&p).is_ok() {
            n += 1;
        }
    };
    let Ok(rd) = std::fs::read_dir(root) else {
        return 0;
    };
    for top in rd.flatten() {
        let name = top.file_name().to_string_lossy().into_owned();
        if let Some(pid) = name.strip_prefix(".import-") {
            if dead(Some(pid)) {
                rm(top.path());
            }
            continue;
        }
        if !top.path().is_dir() || name == "locks" {
            continue;
        }
        for e in std::fs::read_dir(top.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let en = e.file_name().to_string_lossy().into_owned();
            if en == ".tmp" {
                for t in std::fs::read_dir(e.path()).into_iter().flatten().flatten() {
                    let tn = t.file_name().to_string_lossy().into_owned();
                    if dead(tn.rsplit('.').next()) {
                        rm(t.path());
                    }
                }
            } else if let Some((_, pid)) =
                en.split_once(".trash.").or_else(|| en.split_once(".tmp."))
                && dead(Some(pid))
            {
                // `.tmp.<pid>`: a build root whose creation was cut short.
                rm(e.path());
            }
        }
    }
    n
}

/// Every key that names an entry, of any kind.
fn all_keys(cache: &Cache) -> Result<BTreeSet<String>> {
    Ok(cache.list()?.into_iter().map(|(_, i)| i.key.0).collect())
}

/// The key a pointer file names, if it looks like one.
fn pointer_target(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let k = text.trim();
    (k.len() == 64 && k.chars().all(|c| c.is_ascii_hexdigit())).then(|| k.to_string())
}

/// Pointer files under POINTER_DIRS, relative to the root, with their targets.
fn pointers(cache: &Cache) -> Vec<(String, String)> {
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

fn remove_dangling_pointers(cache: &Cache) -> Result<usize> {
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

/// `lab cache export FILE [--kind K]... [KEY...]`
pub fn export(file: &Path, kinds: &[String], keys: &[String]) -> Result<i32> {
    let cache = Cache::open_default()?;
    let idx = export_from(&cache, file, kinds, keys)?;
    for k in kinds {
        if !idx.entries.iter().any(|(kind, _)| kind == k) {
            eprintln!("warning: no entries of kind '{k}' to export");
        }
    }
    println!(
        "exported {} entries and {} pointers to {} ({})",
        idx.entries.len(),
        idx.pointers.len(),
        file.display(),
        human_bytes(std::fs::metadata(file).map(|m| m.len()).unwrap_or(0))
    );
    Ok(0)
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
    let flag = compression_flag(file)?;
    let entries = cache.list()?;
    for k in keys {
        if !entries.iter().any(|(_, i)| i.key.0.starts_with(k.as_str())) {
            bail!(
                "no entry's key starts with '{k}' in {}",
                cache.root().display()
            );
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
        bail!(
            "nothing to export: the cache at {} has no entries of kind {} (it has: {})",
            cache.root().display(),
            kinds.join(", "),
            if have.is_empty() {
                "none".to_string()
            } else {
                have.into_iter().collect::<Vec<_>>().join(", ")
            }
        );
    }
    let chosen_keys: BTreeSet<&str> = chosen.iter().map(|(_, i)| i.key.0.as_str()).collect();
    let ptrs: Vec<String> = pointers(cache)
        .into_iter()
        .filter(|(_, t)| chosen_keys.contains(t.as_str()))
        .map(|(rel, _)| rel)
        .collect();
    let idx = ExportIndex {
        format: 1,
        lab_version: crate::results::LAB_VERSION.to_string(),
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
    let mut tar = Command::new("tar");
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
    std::fs::rename(&partial, file)
        .with_context(|| format!("moving {} to {}", partial.display(), file.display()))?;
    Ok(idx)
}

/// `lab cache import FILE`
pub fn import(file: &Path) -> Result<i32> {
    let cache = Cache::open_default()?;
    let r = import_into(&cache, file)?;
    println!(
        "imported {} entries ({} already in the cache) and {} pointers from {} into {}",
        r.imported.len(),
        r.skipped.len(),
        r.pointers,
        file.display(),
        cache.root().display()
    );
    Ok(0)
}

#[derive(Debug, Default)]
pub struct ImportReport {
    pub imported: Vec<(String, Key)>,
    /// Entries the cache had already.
    pub skipped: Vec<(String, Key)>,
    pub pointers: usize,
}

/// A path component from an archive: no separators, no `..`, no dot files.
fn safe_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+@=".contains(c))
}

/// Extract `file` inside the cache, then move each entry into place.
pub fn import_into(cache: &Cache, file: &Path) -> Result<ImportReport> {
    let flag = compression_flag(file)?;
    if !file.is_file() {
        bail!("{}: no such archive", file.display());
    }
    let tmp = cache.root().join(format!(".import-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)?;
    }
    std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let r = import_from_dir(cache, file, flag, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    r
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
    tar.arg("--no-same-owner").arg("-C").arg(tmp);
    crate::util::run_output(&mut tar).with_context(|| format!("unpacking {}", file.display()))?;
    let idx: ExportIndex = crate::util::read_json(&tmp.join(INDEX)).with_context(|| {
        format!(
            "{} is not a lab cache export (no {INDEX} in it)",
            file.display()
        )
    })?;
    let mut r = ImportReport::default();
    for (kind, key) in &idx.entries {
        if !safe_name(kind) || !safe_name(&key.0) || kind == "locks" {
            bail!("{}: bad entry name {kind}/{key}", file.display());
        }
        let src = tmp.join(kind).join(&key.0);
        let info: EntryInfo = crate::util::read_json(&src.join(ENTRY_INFO))
            .with_context(|| format!("{}: entry {kind}/{key}", file.display()))?;
        if &info.kind != kind || &info.key != key {
            bail!(
                "{}: entry {kind}/{key} says it is {}/{}",
                file.display(),
                info.kind,
                info.key
            );
        }
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
        let Some((dir, name)) = rel.split_once('/') else {
            bail!("{}: bad pointer name {rel}", file.display());
        };
        if !POINTER_DIRS.contains(&dir) || !safe_name(name) {
            bail!("{}: bad pointer name {rel}", file.display());
        }
        let Some(target) = pointer_target(&tmp.join(rel)) else {
            bail!("{}: pointer {rel} names no key", file.display());
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

/// `20G`, `1.5T`, `500M`, `64k`, `20GiB`, or plain bytes. Powers of 1024.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1u64 << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        Some('t') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && !num.trim().is_empty() => {
            Ok((x * mult as f64).round() as u64)
        }
        _ => bail!("--max-size '{s}': expected a size such as 20G, 500M or 1.5T"),
    }
}

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
struct Inodes(HashMap<(u64, u64), u64>);

impl Inodes {
    fn of(path: &Path) -> Inodes {
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

    fn bytes(&self) -> u64 {
        self.0.values().sum()
    }

    fn extend(&mut self, other: Inodes) {
        self.0.extend(other.0);
    }

    /// The inodes in none of `others`.
    fn minus<'a>(&self, others: impl Iterator<Item = &'a Inodes>) -> Inodes {
        let mut left = Inodes(self.0.clone());
        for o in others {
            left.0.retain(|k, _| !o.0.contains_key(k));
        }
        left
    }
}

fn union_bytes<'a>(sets: impl Iterator<Item = &'a Inodes>) -> u64 {
    let mut seen: HashMap<(u64, u64), u64> = HashMap::new();
    for s in sets {
        for (k, v) in &s.0 {
            seen.insert(*k, *v);
        }
    }
    seen.values().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::KeyBuilder;
    use crate::kernel::KernelBuild;
    use crate::matrix::Arch;

    /// A synthetic entry of `bytes` bytes, created at `created`.
    fn entry(cache: &Cache, kind: &str, name: &str, created: &str, bytes: usize) -> Key {
        let key = KeyBuilder::new(kind).field("name", name).finish();
        let (p, _) = cache
            .get_or_make(kind, &key, name, |dir| {
                std::fs::write(dir.join("data"), vec![7u8; bytes])?;
                Ok(())
            })
            .unwrap();
        set_created(&p, created);
        key
    }

    fn set_created(entry: &Path, created: &str) {
        let f = entry.join(ENTRY_INFO);
        let mut info: EntryInfo = crate::util::read_json(&f).unwrap();
        info.created = created.to_string();
        crate::util::atomic_write_json(&f, &info).unwrap();
    }

    /// A kernel entry laid out as kernel::build writes one, with absolute
    /// paths into the cache it was built in, and its config pointer.
    fn kernel_entry(cache: &Cache, name: &str) -> (Key, String) {
        let key = KeyBuilder::new("kernel").field("name", name).finish();
        let prekey = KeyBuilder::new("kernel-config")
            .field("name", name)
            .finish();
        let (p, _) = cache
            .get_or_make("kernel", &key, name, |dir| {
                std::fs::write(dir.join("bzImage"), format!("image of {name}"))?;
                std::fs::write(dir.join("config"), "CONFIG_HZ_100=y\n")?;
                std::fs::write(dir.join("vmlinux"), "elf")?;
                std::fs::write(dir.join("build.log"), "log")?;
                let meta = serde_json::json!({
                    "kernel": name, "arch": Arch::X86_64, "variant": "before", "key": key,
                    "source": {"kind": "tarball", "location": "x", "hash": "h", "version": "6.12"},
                    "patches": [], "apply_method": "none", "fuzzed": [], "fragments": [],
                    "base": {"target": "tinyconfig"}, "config_hash": "c", "hz": 100,
                    "compiler": "gcc", "build_id": null,
                    "image": dir.join("bzImage"), "config": dir.join("config"),
                    "vmlinux": dir.join("vmlinux"), "log": dir.join("build.log"),
                    "build_dir": "/gone/out", "build_secs": 1.0, "reused_tree_of": null,
                    "objects": 1, "built_at": "t"
                });
                crate::util::atomic_write_json(&dir.join("meta.json"), &meta)
            })
            .unwrap();
        let _ = p;
        let pointer = format!("pointers/kernel-config-{prekey}");
        crate::util::atomic_write(&cache.root().join(&pointer), key.0.as_bytes()).unwrap();
        (key, pointer)
    }

    /// What kernel::build_one does first: pointer, then entry.
    fn lookup_like_a_build(cache: &Cache, pointer: &str) -> Option<KernelBuild> {
        let key = std::fs::read_to_string(cache.root().join(pointer)).ok()?;
        let entry = cache.get("kernel", &Key(key.trim().to_string()))?;
        KernelBuild::from_entry(&entry).ok()
    }

    #[test]
    fn export_then_import_into_another_cache_finds_every_entry_and_pointer() {
        for ext in ["tar.zst", "tar.gz", "tar"] {
            let a_dir = tempfile::tempdir().unwrap();
            let b_dir = tempfile::tempdir().unwrap();
            let a = Cache::at(a_dir.path()).unwrap();
            let b = Cache::at(b_dir.path()).unwrap();
            let (k1, p1) = kernel_entry(&a, "x86_64-hz100-before");
            let (k2, p2) = kernel_entry(&a, "x86_64-hz100-after");
            let img = entry(&a, "image", "image x86_64", "2026-11-01T00:00:00Z", 1000);
            crate::util::atomic_write(
                &a.root().join("image-latest/x86_64-recipe"),
                format!("{img}\n").as_bytes(),
            )
            .unwrap();
            let src = entry(&a, "source", "tree", "2026-11-01T00:00:00Z", 10);

            let file = a_dir.path().join(format!("out/export.{ext}"));
            let kinds = vec!["kernel".to_string(), "image".to_string()];
            let idx = export_from(&a, &file, &kinds, &[]).unwrap();
            assert_eq!(idx.entries.len(), 3, "{ext}");
            assert_eq!(idx.pointers.len(), 3, "{idx:?}");
            assert!(file.is_file());

            let r = import_into(&b, &file).unwrap();
            assert_eq!(r.imported.len(), 3);
            assert_eq!(r.pointers, 3);
            for (kind, key) in [("kernel", &k1), ("kernel", &k2), ("image", &img)] {
                let e = b.get(kind, key).unwrap_or_else(|| panic!("{kind} {key}"));
                assert!(e.starts_with(b.root()));
            }
            // Not asked for: the source tree stays behind.
            assert!(b.get("source", &src).is_none());
            // A build in the new cache finds both kernels through their
            // pointers, with paths inside the new cache.
            for (p, name) in [(&p1, "x86_64-hz100-before"), (&p2, "x86_64-hz100-after")] {
                let kb = lookup_like_a_build(&b, p).expect("cache hit after import");
                assert!(kb.image.starts_with(b.root()), "{}", kb.image.display());
                assert_eq!(
                    std::fs::read_to_string(&kb.image).unwrap(),
                    format!("image of {name}")
                );
                assert!(kb.config.is_file() && kb.vmlinux.is_file() && kb.log.is_file());
            }
            assert_eq!(
                std::fs::read_to_string(b.root().join("image-latest/x86_64-recipe"))
                    .unwrap()
                    .trim(),
                img.0
            );
            // No temp directory is left in the cache.
            assert!(
                std::fs::read_dir(b.root())
                    .unwrap()
                    .flatten()
                    .all(|e| !e.file_name().to_string_lossy().starts_with('.'))
            );
            // A second import skips what is there.
            let again = import_into(&b, &file).unwrap();
            assert_eq!(again.imported.len(), 0);
            assert_eq!(again.skipped.len(), 3);
            assert_eq!(b.list().unwrap().len(), 3);
        }
    }

    #[test]
    fn export_by_key_prefix_takes_only_that_entry_and_its_pointer() {
        let a_dir = tempfile::tempdir().unwrap();
        let b_dir = tempfile::tempdir().unwrap();
        let a = Cache::at(a_dir.path()).unwrap();
        let b = Cache::at(b_dir.path()).unwrap();
        let (k1, p1) = kernel_entry(&a, "one");
        let (k2, _) = kernel_entry(&a, "two");
        let file = a_dir.path().join("one.tar.zst");
        let idx = export_from(&a, &file, &[], &[k1.short().to_string()]).unwrap();
        assert_eq!(idx.entries, vec![("kernel".to_string(), k1.clone())]);
        assert_eq!(idx.pointers, vec![p1.clone()]);
        import_into(&b, &file).unwrap();
        assert!(b.get("kernel", &k1).is_some());
        assert!(b.get("kernel", &k2).is_none());
        assert!(lookup_like_a_build(&b, &p1).is_some());

        let e = export_from(&a, &file, &[], &["ffffnothing".into()]).unwrap_err();
        assert!(
            e.to_string()
                .contains("no entry's key starts with 'ffffnothing'")
        );
        let e = export_from(&a, &file, &["image".into()], &[]).unwrap_err();
        assert!(
            e.to_string()
                .contains("has no entries of kind image (it has: kernel)"),
            "{e}"
        );
        // One kind present of two is enough.
        let idx = export_from(&a, &file, &["image".into(), "kernel".into()], &[]).unwrap();
        assert_eq!(idx.entries.len(), 2);
        let e = export_from(&a, &a_dir.path().join("x.zip"), &[], &[]).unwrap_err();
        assert!(e.to_string().contains(".tar, .tar.zst or .tar.gz"));
    }

    #[test]
    fn import_refuses_an_archive_that_is_not_an_export() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path().join("cache")).unwrap();
        std::fs::write(d.path().join("f"), "x").unwrap();
        let file = d.path().join("plain.tar");
        crate::util::run_output(
            Command::new("tar")
                .arg("-cf")
                .arg(&file)
                .arg("-C")
                .arg(d.path())
                .arg("f"),
        )
        .unwrap();
        let e = format!("{:#}", import_into(&c, &file).unwrap_err());
        assert!(e.contains("is not a lab cache export"), "{e}");
        assert!(c.list().unwrap().is_empty());
        assert!(
            std::fs::read_dir(c.root())
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().starts_with(".import"))
        );
    }

    #[test]
    fn gc_keeps_the_n_newest_of_each_kind_and_drops_their_pointers() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path()).unwrap();
        let k: Vec<Key> = (0..4)
            .map(|i| {
                entry(
                    &c,
                    "kernel",
                    &format!("k{i}"),
                    &format!("2026-11-0{}T00:00:00Z", i + 1),
                    100,
                )
            })
            .collect();
        let img = entry(&c, "image", "i", "2026-10-01T00:00:00Z", 100);
        // Pointers to an old and a new kernel.
        crate::util::atomic_write(
            &c.root().join("pointers/kernel-config-old"),
            k[0].0.as_bytes(),
        )
        .unwrap();
        crate::util::atomic_write(
            &c.root().join("pointers/kernel-config-new"),
            k[3].0.as_bytes(),
        )
        .unwrap();
        // A temp directory of a dead build, and one of this process.
        let stale = c.root().join("kernel/.tmp/abcd.999999999");
        let live = c
            .root()
            .join(format!("kernel/.tmp/abcd.{}", std::process::id()));
        std::fs::create_dir_all(&stale).unwrap();
        std::fs::create_dir_all(&live).unwrap();

        let r = gc_in(
            &c,
            GcOptions {
                keep: Some(2),
                ..Default::default()
            },
        )
        .unwrap();
        let removed: Vec<&Key> = r.removed.iter().map(|(i, _)| &i.key).collect();
        assert_eq!(removed, vec![&k[0], &k[1]]);
        assert!(c.get("kernel", &k[2]).is_some() && c.get("kernel", &k[3]).is_some());
        assert!(
            c.get("image", &img).is_some(),
            "one image is within --keep 2"
        );
        assert_eq!(r.temps_removed, 1);
        assert!(!stale.exists() && live.exists());
        assert_eq!(r.pointers_removed, 1);
        assert!(!c.root().join("pointers/kernel-config-old").exists());
        assert!(c.root().join("pointers/kernel-config-new").exists());
        assert!(r.bytes_after < r.bytes_before);
        assert!(ls_text(&c).unwrap().contains("3 entries"));
    }

    #[test]
    fn gc_max_size_removes_the_oldest_until_the_cache_fits() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path()).unwrap();
        let keys: Vec<Key> = (0..4)
            .map(|i| {
                entry(
                    &c,
                    if i % 2 == 0 { "kernel" } else { "image" },
                    &format!("e{i}"),
                    &format!("2026-11-0{}T00:00:00Z", i + 1),
                    256 << 10,
                )
            })
            .collect();
        let before = gc_in(&c, GcOptions::default()).unwrap();
        assert!(before.removed.is_empty());
        let each = before.bytes_before / 4;
        // Room for two and a half entries: the two oldest go.
        let r = gc_in(
            &c,
            GcOptions {
                max_bytes: Some(each * 5 / 2),
                ..Default::default()
            },
        )
        .unwrap();
        let removed: Vec<&Key> = r.removed.iter().map(|(i, _)| &i.key).collect();
        assert_eq!(removed, vec![&keys[0], &keys[1]]);
        assert!(r.bytes_after <= each * 5 / 2);
        assert_eq!(c.list().unwrap().len(), 2);
    }

    /// A build root laid out as kernel::build leaves one: a tree of
    /// hard links to a source entry, objects under `out/`, a state file.
    fn build_root(cache: &Cache, source: &Key, name: &str, object_bytes: usize, age_secs: u64) {
        let dir = cache.root().join("buildroot").join(name);
        std::fs::create_dir_all(dir.join("tree/out")).unwrap();
        let src = cache.get("source", source).unwrap();
        std::fs::hard_link(src.join("data"), dir.join("tree/data")).unwrap();
        std::fs::write(dir.join("tree/out/vmlinux"), vec![1u8; object_bytes]).unwrap();
        std::fs::write(
            dir.join("state.json"),
            r#"{"series":[],"method":"patch","touched":[],"fuzzed":[],"last_built":"x86_64-hz100-after"}"#,
        )
        .unwrap();
        let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
        std::fs::File::options()
            .write(true)
            .open(dir.join("state.json"))
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    #[test]
    fn build_roots_are_listed_and_removed_only_when_asked_and_free() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path()).unwrap();
        let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 256 << 10);
        build_root(&c, &src, "x86_64-aaaa", 128 << 10, 100);
        build_root(&c, &src, "arm64-bbbb", 128 << 10, 10);
        // A root whose creation was cut short by a process that is gone.
        std::fs::create_dir_all(c.root().join("buildroot/arm64-cccc.tmp.999999999/tree")).unwrap();

        let ls = ls_text(&c).unwrap();
        assert!(
            ls.contains("x86_64-aaaa") && ls.contains("arm64-bbbb"),
            "{ls}"
        );
        assert!(ls.contains("x86_64-hz100-after"), "{ls}");
        assert!(ls.contains("2 build roots"), "{ls}");

        // Plain gc and --keep leave build roots alone.
        let r = gc_in(
            &c,
            GcOptions {
                keep: Some(1),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(r.roots_removed.is_empty());
        assert_eq!(r.temps_removed, 1, "the dead .tmp root is swept");
        assert_eq!(crate::kernel::build::build_roots(&c).len(), 2);

        // A build holds one: it stays, and gc says so.
        let held = c.lock("buildroot-bbbb").unwrap();
        let r = gc_in(
            &c,
            GcOptions {
                build_roots: true,
                ..Default::default()
            },
        )
        .unwrap();
        drop(held);
        let removed: Vec<&str> = r.roots_removed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(removed, ["x86_64-aaaa"]);
        assert_eq!(r.roots_busy, ["arm64-bbbb"]);
        // Its own size: the objects, not the linked source.
        let own = r.roots_removed[0].1;
        assert!((128 << 10..256 << 10).contains(&own), "{own}");
        assert!(c.get("source", &src).is_some(), "the source entry stays");
        assert!(!c.root().join("buildroot/x86_64-aaaa").exists());
        assert!(r.bytes_after < r.bytes_before);
    }

    #[test]
    fn gc_max_size_drops_build_roots_before_entries() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path()).unwrap();
        let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 256 << 10);
        let k = entry(&c, "kernel", "k", "2026-11-02T00:00:00Z", 256 << 10);
        build_root(&c, &src, "x86_64-old", 256 << 10, 100);
        build_root(&c, &src, "x86_64-new", 256 << 10, 10);
        let before = gc_in(&c, GcOptions::default()).unwrap().bytes_before;
        // Room for all but one root: the least recently used one goes.
        let r = gc_in(
            &c,
            GcOptions {
                max_bytes: Some(before - (200 << 10)),
                ..Default::default()
            },
        )
        .unwrap();
        let removed: Vec<&str> = r.roots_removed.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(removed, ["x86_64-old"]);
        assert!(r.removed.is_empty(), "no entry goes while a root can");
        assert!(c.get("kernel", &k).is_some() && c.get("source", &src).is_some());
        assert!(r.bytes_after <= before - (200 << 10));
    }

    #[test]
    fn hard_links_count_once() {
        let d = tempfile::tempdir().unwrap();
        let c = Cache::at(d.path()).unwrap();
        let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 512 << 10);
        let src_path = c.get("source", &src).unwrap();
        let key = KeyBuilder::new("worktree").finish();
        c.get_or_make("worktree", &key, "w", |dir| {
            std::fs::hard_link(src_path.join("data"), dir.join("data"))?;
            Ok(())
        })
        .unwrap();
        let r = gc_in(&c, GcOptions::default()).unwrap();
        // One 512 KiB file, not two.
        assert!(r.bytes_before < 700 << 10, "{}", r.bytes_before);
        assert!(r.bytes_before >= 512 << 10);
    }

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("20G").unwrap(), 20 << 30);
        assert_eq!(parse_size("20GiB").unwrap(), 20 << 30);
        assert_eq!(parse_size("1.5t").unwrap(), 3 << 39);
        assert_eq!(parse_size("500M").unwrap(), 500 << 20);
        assert_eq!(parse_size("64k").unwrap(), 64 << 10);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        for bad in ["", "G", "-1G", "20X", "lots"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(1536 << 10), "1.5 MiB");
    }
}
