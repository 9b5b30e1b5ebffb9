//! What `lab report` and `lab compare` do. They
//! write to `out` (stdout from the command line), so tests can read it.

use super::{Format, Report};
use crate::error::input;
use crate::results::RunDir;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Render `report` in `formats`. Text alone, with no directory given,
/// goes to `out`; otherwise each format is written to `dir` as
/// `<stem>.<extension>` and the paths are listed on `out`.
pub fn emit(
    report: &Report,
    formats: &[Format],
    out_dir: Option<&Path>,
    default_dir: &Path,
    stem: &str,
    out: &mut dyn Write,
) -> Result<()> {
    if let [f @ (Format::Text | Format::Reply)] = formats
        && out_dir.is_none()
    {
        out.write_all(super::render(report, *f)?.as_bytes())?;
        return Ok(());
    }
    let dir = out_dir.unwrap_or(default_dir);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for path in super::write_all(report, formats, dir, stem)? {
        writeln!(out, "wrote {}", path.display())?;
    }
    Ok(())
}

/// `lab report <run>`: the exit code says whether CI should pass.
pub fn report(
    run: &str,
    results_root: &Path,
    formats: &str,
    out_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<i32> {
    let formats = Format::parse_list(formats).map_err(input)?;
    let dir = RunDir::open(results_root, run).map_err(input)?;
    let report = super::load(&dir).map_err(input)?;
    emit(&report, &formats, out_dir, &dir.path, "report", out)?;
    Ok(super::exit_code(&report))
}

/// `lab compare <a> <b>`: `a` is the baseline; files go to `b`'s run
/// directory as `compare-<a>.<extension>` unless told otherwise.
pub fn compare(
    a: &str,
    b: &str,
    results_root: &Path,
    formats: &str,
    out_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<i32> {
    let formats = Format::parse_list(formats).map_err(input)?;
    let da = RunDir::open(results_root, a).map_err(input)?;
    let db = RunDir::open(results_root, b).map_err(input)?;
    let report = super::load_compare(&da, &db).map_err(input)?;
    let stem = format!("compare-{}", crate::results::path_part(&da.id()));
    emit(&report, &formats, out_dir, &db.path, &stem, out)?;
    Ok(super::exit_code(&report))
}
