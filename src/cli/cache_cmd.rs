//! `lab cache ls | gc | export | import`: argument handling; the work
//! is in `crate::cache` (gc, transfer, ls).

use crate::cache::Cache;
use crate::cache::gc::{GcOptions, gc_in};
use crate::cache::size::{human_bytes, parse_size};
use crate::cache::transfer::{export_from, import_into};
use anyhow::{Context, Result};
use std::path::Path;

/// `lab cache ls`
pub fn ls() -> Result<i32> {
    // Listing never creates the cache.
    let Some(cache) = Cache::open_existing()? else {
        crate::outln!(
            "no cache yet: {} does not exist",
            crate::cache::default_root()?.display()
        )?;
        return Ok(0);
    };
    crate::out!("{}", crate::cache::ls::ls_text(&cache)?)?;
    Ok(0)
}

/// `lab cache gc [--keep N] [--max-size SIZE] [--build-roots]`
pub fn gc(keep: Option<usize>, max_size: Option<&str>, build_roots: bool) -> Result<i32> {
    let max_bytes = max_size
        .map(|s| parse_size(s).with_context(|| format!("--max-size {s}")))
        .transpose()
        .map_err(crate::error::input)?;
    let cache = Cache::open_default()?;
    let opts = GcOptions {
        keep,
        max_bytes,
        build_roots,
    };
    let r = gc_in(&cache, opts)?;
    for (name, bytes) in &r.roots_removed {
        crate::outln!("removed build root {name}  ({})", human_bytes(*bytes))?;
    }
    for name in &r.roots_busy {
        crate::outln!("kept build root {name}: a build is using it")?;
    }
    for (info, bytes) in &r.removed {
        crate::outln!(
            "removed {:<10} {}  {}  ({}, {})",
            info.kind,
            info.key.short(),
            info.label,
            human_bytes(*bytes),
            info.created
        )?;
    }
    crate::outln!(
        "{} entries removed, {} stale temp dirs, {} dangling pointers; {} → {} on disk",
        r.removed.len(),
        r.temps_removed,
        r.pointers_removed,
        human_bytes(r.bytes_before),
        human_bytes(r.bytes_after)
    )?;
    if keep.is_none() && max_bytes.is_none() && !build_roots {
        crate::outln!("(give --keep N, --max-size SIZE or --build-roots to remove something)")?;
    }
    Ok(0)
}

/// `lab cache export FILE [--kind K]... [KEY...]`
pub fn export(file: &Path, kinds: &[String], keys: &[String]) -> Result<i32> {
    // The archive's name first: a mistake there creates no cache.
    crate::cache::transfer::compression_flag(file).map_err(crate::error::input)?;
    let cache = Cache::open_default()?;
    let idx = export_from(&cache, file, kinds, keys)?;
    for k in kinds {
        if !idx.entries.iter().any(|(kind, _)| kind == k) {
            eprintln!("warning: no entries of kind '{k}' to export");
        }
    }
    crate::outln!(
        "exported {} entries and {} pointers to {} ({})",
        idx.entries.len(),
        idx.pointers.len(),
        file.display(),
        human_bytes(std::fs::metadata(file).map(|m| m.len()).unwrap_or(0))
    )?;
    Ok(0)
}

/// `lab cache import FILE`
pub fn import(file: &Path, missing_ok: bool) -> Result<i32> {
    if missing_ok && std::fs::symlink_metadata(file).is_err() {
        crate::outln!("no archive at {}: nothing imported", file.display())?;
        return Ok(0);
    }
    crate::cache::transfer::check_archive(file)?;
    let cache = Cache::open_default()?;
    let r = import_into(&cache, file)?;
    crate::outln!(
        "imported {} entries ({} already in the cache) and {} pointers from {} into {}",
        r.imported.len(),
        r.skipped.len(),
        r.pointers,
        file.display(),
        cache.root().display()
    )?;
    Ok(0)
}
