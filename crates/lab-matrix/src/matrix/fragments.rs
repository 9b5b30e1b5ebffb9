//! kconfig fragments: found next to the matrix, or built into lab.
//!
//! Built-in copies of `kconfigs/` let the binary run a matrix from any
//! directory; a file beside the matrix always wins, so a user can change
//! a fragment without rebuilding lab.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const BUILTIN: &[(&str, &str)] = &[
    ("base", include_str!("../../../../kconfigs/base.config")),
    ("hz100", include_str!("../../../../kconfigs/hz100.config")),
    ("hz250", include_str!("../../../../kconfigs/hz250.config")),
    ("hz1000", include_str!("../../../../kconfigs/hz1000.config")),
    ("x86_64", include_str!("../../../../kconfigs/x86_64.config")),
    ("arm64", include_str!("../../../../kconfigs/arm64.config")),
    ("ext4", include_str!("../../../../kconfigs/ext4.config")),
];

/// A fragment as resolved: its name, where it came from, and its text.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Fragment {
    pub name: String,
    /// A file path, or `built-in:<name>`.
    pub origin: String,
    /// Kept in manifests: the run records exactly what was merged.
    #[serde(default)]
    pub text: String,
}

/// Where fragment files are looked for, in order.
pub fn search_dirs(matrix_path: &Path) -> Vec<PathBuf> {
    let dir = matrix_path.parent().unwrap_or(Path::new("."));
    vec![dir.join("kconfigs"), dir.join("../kconfigs")]
}

/// A fragment name is a plain name, so a matrix cannot make lab read
/// `../../etc/passwd`: letters, digits, '.', '_', '-', no leading '.'.
pub fn is_plain_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// A line of a config fragment that sets something: `CONFIG_X=y`,
/// `CONFIG_X="text"`, or `# CONFIG_X is not set`.
pub fn is_config_line(l: &str) -> bool {
    let l = l.trim();
    let sym = |s: &str| s.strip_prefix("CONFIG_").is_some_and(is_symbol);
    match l.split_once('=') {
        Some((k, v)) => sym(k) && !v.is_empty(),
        None => l
            .strip_prefix("# ")
            .and_then(|r| r.strip_suffix(" is not set"))
            .is_some_and(sym),
    }
}

/// A kconfig symbol without its `CONFIG_` prefix: `DM_DELAY`.
pub fn is_symbol(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The lines of `lines` that no fragment in `have` sets, once each, as
/// one fragment: what the setup needs and the matrix did not say. None
/// when every line is there, so a matrix whose fragments already have
/// them keeps its kernels' fragments, and so its cache keys.
pub fn implied<'a>(
    name: &str,
    origin: &str,
    lines: impl IntoIterator<Item = &'a str>,
    have: &[Fragment],
) -> Option<Fragment> {
    let set = |line: &str| {
        have.iter()
            .any(|f| f.text.lines().any(|l| l.trim() == line))
    };
    let mut text = String::new();
    for line in lines {
        if !set(line) && !text.lines().any(|l| l == line) {
            text.push_str(line);
            text.push('\n');
        }
    }
    (!text.is_empty()).then(|| Fragment {
        name: name.into(),
        origin: origin.into(),
        text,
    })
}

/// Resolve a fragment name (`hz100`, or `hz100.config`).
pub fn resolve(name: &str, dirs: &[PathBuf]) -> Option<Fragment> {
    if !is_plain_name(name) {
        return None;
    }
    let stem = name.strip_suffix(".config").unwrap_or(name);
    let candidates: Vec<PathBuf> = dirs
        .iter()
        .map(|d| d.join(format!("{stem}.config")))
        .collect();
    for c in candidates {
        if let Ok(text) = std::fs::read_to_string(&c) {
            let origin = c.canonicalize().unwrap_or(c).display().to_string();
            return Some(Fragment {
                name: name.to_string(),
                origin,
                text,
            });
        }
    }
    BUILTIN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, t)| Fragment {
            name: n.to_string(),
            origin: format!("built-in:{n}"),
            text: t.to_string(),
        })
}
