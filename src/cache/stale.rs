//! Temp directories a killed lab left in the cache.

use std::path::{Path, PathBuf};

/// Temp directories whose process is gone: `<kind>/.tmp/<key>.<pid>`,
/// `<kind>/<key>.trash.<pid>` (an interrupted remove), `.import-<pid>`.
pub fn remove_stale_temps(root: &Path) -> usize {
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
