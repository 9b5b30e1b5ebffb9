//! What `lab report` and `lab compare` do. They
//! write to `out` (stdout from the command line), so tests can read it.

use super::{Format, Report};
use crate::error::input;
use crate::results::RunDir;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Render `report` in `formats`. One format with no directory given goes
/// to `out`, as `cargo metadata` does; files are written only to `--out`
/// (`<stem>.<extension>` each, the paths listed on `out`). Several formats
/// without `--out` are a usage error: stdout holds one document.
pub fn emit(
    report: &Report,
    formats: &[Format],
    out_dir: Option<&Path>,
    stem: &str,
    out: &mut dyn Write,
) -> Result<()> {
    let dir = match (formats, out_dir) {
        ([f], None) => {
            out.write_all(super::render(report, *f)?.as_bytes())?;
            return Ok(());
        }
        (_, None) => {
            return Err(input(anyhow::anyhow!(
                "--format {}: several formats are several files; give --out DIR (one format alone goes to stdout)",
                formats
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(",")
            )));
        }
        (_, Some(dir)) => dir,
    };
    if std::fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(input(anyhow::anyhow!(
            "--out {}: exists and is not a directory",
            dir.display()
        )));
    }
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
    formats: &[Format],
    out_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<i32> {
    let formats = Format::distinct(formats);
    let dir = RunDir::open(results_root, run).map_err(input)?;
    let report = super::load(&dir).map_err(input)?;
    emit(&report, &formats, out_dir, "report", out)?;
    Ok(super::exit_code(&report))
}

/// `lab compare <a> <b>`: `a` is the baseline; with `--out`, files are
/// named `compare-<a>.<extension>`.
pub fn compare(
    a: &str,
    b: &str,
    results_root: &Path,
    formats: &[Format],
    out_dir: Option<&Path>,
    out: &mut dyn Write,
) -> Result<i32> {
    let formats = Format::distinct(formats);
    let da = RunDir::open(results_root, a).map_err(input)?;
    let db = RunDir::open(results_root, b).map_err(input)?;
    let report = super::load_compare(&da, &db).map_err(input)?;
    let stem = format!("compare-{}", crate::results::path_part(&da.id()));
    emit(&report, &formats, out_dir, &stem, out)?;
    Ok(super::exit_code(&report))
}
