//! `lab report`, `lab compare` and `lab claims extract`.

use std::path::Path;

/// Report on a stored run (by id under `results_root`, or a directory).
/// `formats` is a comma list of md, html, text, json, junit. Text alone
/// with no `out_dir` goes to stdout; otherwise files go to `out_dir`, or
/// the run directory. The result is the exit code: 0 acceptable, 1 a
/// regression or unmet claim, 2 an incomplete run.
pub fn report(
    run: &str,
    results_root: &Path,
    formats: &str,
    out_dir: Option<&Path>,
) -> anyhow::Result<i32> {
    crate::report::cmd::report(
        run,
        results_root,
        formats,
        out_dir,
        &mut std::io::stdout().lock(),
    )
}

/// Compare the same cells of two runs, `a` as the baseline.
pub fn compare(
    a: &str,
    b: &str,
    results_root: &Path,
    formats: &str,
    out_dir: Option<&Path>,
) -> anyhow::Result<i32> {
    crate::report::cmd::compare(
        a,
        b,
        results_root,
        formats,
        out_dir,
        &mut std::io::stdout().lock(),
    )
}

/// Print the claims YAML of a patch mail or mbox.
pub fn claims_extract(mail: &Path) -> anyhow::Result<i32> {
    crate::report::cmd::claims_extract(mail, &mut std::io::stdout().lock())
}
