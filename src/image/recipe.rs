//! The image recipe: which Debian packages to unpack, which binaries to
//! keep, and how to lay out the shell and busybox.
//!
//! `images/lab.yaml` is compiled in as the default, so `lab` builds an
//! image with no files beside it. Unknown keys are errors with a line and
//! column, so a typo never silently drops a package.

use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The built-in recipe's text.
pub const DEFAULT_RECIPE: &str = include_str!("../../images/lab.yaml");

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipe {
    /// Debian suite, such as `bookworm`.
    pub suite: String,
    pub mirror: String,
    pub packages: Vec<String>,
    /// Paths inside the extracted tree; symlinks are kept as symlinks.
    pub keep: Vec<String>,
    /// The binary `/bin/sh` links to.
    pub shell: String,
    pub busybox: Busybox,
    /// Optional package sets, not built unless enabled.
    #[serde(default)]
    pub extras: BTreeMap<String, Extra>,
    /// Libraries replaced by stubs (`image::stub`): soname → the fio
    /// ioengines that need the real one.
    #[serde(default)]
    pub stubs: BTreeMap<String, Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Busybox {
    pub path: String,
    /// Applets linked into `/usr/bin`.
    pub applets: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Extra {
    pub packages: Vec<String>,
    pub keep: Vec<String>,
}

/// The recipe built into lab (`images/lab.yaml`).
pub fn default_recipe() -> Recipe {
    parse(DEFAULT_RECIPE, "images/lab.yaml (built in)")
        .expect("the built-in recipe is valid (checked by a unit test)")
}

/// Read and check a recipe file.
pub fn load_recipe(path: &Path) -> Result<Recipe> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the image recipe {}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Parse and check recipe text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Recipe> {
    let recipe: Recipe = crate::util::from_yaml(text).map_err(|e| {
        let msg = e.without_snippet().to_string();
        let msg = msg.lines().next().unwrap_or("").trim().to_string();
        match e.location() {
            Some(l) if l.line() > 0 => anyhow!("{origin}:{}:{}: {msg}", l.line(), l.column()),
            _ => anyhow!("{origin}: {msg}"),
        }
    })?;
    recipe.validate().map_err(|e| anyhow!("{origin}: {e:#}"))?;
    Ok(recipe)
}

impl Recipe {
    /// Every path to keep: `keep`, the shell and busybox, sorted.
    pub fn kept_paths(&self) -> Vec<String> {
        let mut all: BTreeSet<String> = self.keep.iter().cloned().collect();
        all.insert(self.shell.clone());
        all.insert(self.busybox.path.clone());
        all.into_iter().collect()
    }

    /// This recipe with the named extras' packages and binaries added.
    pub fn with_extras(&self, names: &[&str]) -> Result<Recipe> {
        let mut r = self.clone();
        for name in names {
            let Some(extra) = self.extras.get(*name) else {
                let known: Vec<&str> = self.extras.keys().map(String::as_str).collect();
                bail!(
                    "no image extra {name:?}; the recipe has: {}",
                    known.join(", ")
                );
            };
            for p in &extra.packages {
                if !r.packages.contains(p) {
                    r.packages.push(p.clone());
                }
            }
            for k in &extra.keep {
                if !r.keep.contains(k) {
                    r.keep.push(k.clone());
                }
            }
        }
        Ok(r)
    }

    /// This recipe with the real library back for every stub that one
    /// of `engines` (fio ioengine names) needs.
    pub fn for_engines<S: AsRef<str>>(&self, engines: &[S]) -> Recipe {
        let mut r = self.clone();
        r.stubs.retain(|_, needs| {
            !engines
                .iter()
                .any(|e| needs.iter().any(|n| n == e.as_ref()))
        });
        r
    }

    /// The sonames stubbed in this recipe.
    pub fn stubbed(&self) -> BTreeSet<String> {
        self.stubs.keys().cloned().collect()
    }

    /// A stable text of everything in the recipe, for cache keys:
    /// comments and formatting of the YAML do not change it.
    pub fn canonical(&self) -> String {
        serde_json::to_string(self).expect("a recipe serializes")
    }

    fn validate(&self) -> Result<()> {
        if !self
            .suite
            .chars()
            .all(|c| c.is_ascii_lowercase() || c == '-')
            || self.suite.is_empty()
        {
            bail!("suite {:?} is not a Debian suite name", self.suite);
        }
        if !(self.mirror.starts_with("http://") || self.mirror.starts_with("https://")) {
            bail!(
                "mirror {:?} must be an http:// or https:// URL",
                self.mirror
            );
        }
        if self.packages.is_empty() {
            bail!("packages: the list is empty");
        }
        check_packages("packages", &self.packages)?;
        check_paths("keep", &self.keep)?;
        check_paths("shell", std::slice::from_ref(&self.shell))?;
        check_paths("busybox.path", std::slice::from_ref(&self.busybox.path))?;
        let mut seen = BTreeSet::new();
        for a in &self.busybox.applets {
            if a.is_empty() || a.contains('/') || a == "." || a == ".." {
                bail!("busybox.applets: {a:?} is not a command name");
            }
            if a == "sh" {
                bail!(
                    "busybox.applets: sh must not be busybox: /bin/sh is {} because busybox's \
                     shell runs its own applets instead of the binaries on PATH",
                    self.shell
                );
            }
            if !seen.insert(a) {
                bail!("busybox.applets: {a} is listed twice");
            }
        }
        for (soname, engines) in &self.stubs {
            let ok = soname.contains(".so")
                && soname
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c));
            if !ok {
                bail!("stubs: {soname:?} is not a library soname such as libfoo.so.1");
            }
            if engines.is_empty() {
                bail!("stubs.{soname}: name the fio ioengines that need the real library");
            }
        }
        for (name, extra) in &self.extras {
            check_packages(&format!("extras.{name}.packages"), &extra.packages)?;
            check_paths(&format!("extras.{name}.keep"), &extra.keep)?;
        }
        Ok(())
    }
}

fn check_packages(field: &str, names: &[String]) -> Result<()> {
    for p in names {
        let ok = p.len() >= 2
            && p.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
        if !ok {
            bail!("{field}: {p:?} is not a Debian package name");
        }
    }
    Ok(())
}

/// Paths in the extracted tree are written relative (`usr/bin/fio`), so
/// they read the same as the tree's own listing.
fn check_paths(field: &str, paths: &[String]) -> Result<()> {
    for p in paths {
        if p.starts_with('/') {
            bail!(
                "{field}: {p:?} must be relative to the tree: {:?}",
                p.trim_start_matches('/')
            );
        }
        if p.is_empty() || p.split('/').any(|c| c.is_empty() || c == "." || c == "..") {
            bail!("{field}: {p:?} is not a plain relative path");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_recipe_is_valid_and_complete() {
        let r = default_recipe();
        assert_eq!(r.suite, "bookworm");
        for p in [
            "busybox-static",
            "dash",
            "fio",
            "dmsetup",
            "dropbear-bin",
            "xfsprogs",
            "kmod",
            "iproute2",
        ] {
            assert!(r.packages.iter().any(|x| x == p), "{p}");
        }
        assert!(!r.packages.iter().any(|x| x == "linux-perf"));
        let kept = r.kept_paths();
        for k in [
            "usr/bin/fio",
            "sbin/dmsetup",
            "usr/sbin/dropbear",
            "bin/dash",
        ] {
            assert!(kept.iter().any(|x| x == k), "{k}");
        }
        for a in ["mount", "sleep", "hostname", "grep", "["] {
            assert!(r.busybox.applets.iter().any(|x| x == a), "{a}");
        }
        assert!(!r.busybox.applets.iter().any(|x| x == "ip"));
    }

    #[test]
    fn matrices_know_the_built_in_extras() {
        let r = default_recipe();
        let keys: Vec<&str> = r.extras.keys().map(String::as_str).collect();
        assert_eq!(keys, crate::matrix::perf::KNOWN_EXTRAS);
        // Debian 12's linux-perf ships the binary itself as /usr/bin/perf.
        assert_eq!(r.extras["perf"].keep, ["usr/bin/perf"]);
    }

    #[test]
    fn extras_add_packages_and_binaries_once() {
        let r = default_recipe();
        let p = r.with_extras(&["perf", "perf"]).unwrap();
        assert_eq!(p.packages.iter().filter(|x| *x == "linux-perf").count(), 1);
        assert!(p.keep.iter().any(|x| x == "usr/bin/perf"));
        assert_ne!(p.canonical(), r.canonical());
        let err = r.with_extras(&["nope"]).unwrap_err().to_string();
        assert!(err.contains("nope") && err.contains("perf"), "{err}");
    }

    #[test]
    fn canonical_ignores_comments_and_layout() {
        let a = default_recipe();
        let b = parse(
            &DEFAULT_RECIPE
                .lines()
                .filter(|l| !l.trim_start().starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n"),
            "x",
        )
        .unwrap();
        assert_eq!(a.canonical(), b.canonical());
    }

    #[test]
    fn unknown_key_is_located() {
        let text = DEFAULT_RECIPE.replace("shell: bin/dash", "shel: bin/dash");
        let err = parse(&text, "r.yaml").unwrap_err().to_string();
        let line = DEFAULT_RECIPE
            .lines()
            .position(|l| l.starts_with("shell:"))
            .unwrap()
            + 1;
        assert!(err.starts_with(&format!("r.yaml:{line}:")), "{err}");
        assert!(err.contains("shel"), "{err}");
    }

    #[test]
    fn load_recipe_names_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("img.yaml");
        std::fs::write(&p, "suite: bookworm\nmirror: [\n").unwrap();
        let err = load_recipe(&p).unwrap_err().to_string();
        assert!(err.starts_with(&format!("{}:", p.display())), "{err}");
        let err = load_recipe(&d.path().join("missing.yaml")).unwrap_err();
        assert!(format!("{err:#}").contains("missing.yaml"), "{err:#}");
        std::fs::write(&p, DEFAULT_RECIPE).unwrap();
        assert_eq!(load_recipe(&p).unwrap(), default_recipe());
    }

    #[test]
    fn bad_values_are_refused_with_the_field() {
        let cases = [
            ("- dash\n", "- Dash!\n", "packages"),
            ("  - usr/bin/fio\n", "  - /usr/bin/fio\n", "keep"),
            ("  - usr/bin/fio\n", "  - usr/../etc/shadow\n", "keep"),
            ("\"[\", awk", "sh, awk", "sh must not be busybox"),
            ("\"[\", awk", "cat, awk", "cat is listed twice"),
            ("mirror: http://", "mirror: ftp://", "mirror"),
        ];
        for (from, to, want) in cases {
            assert!(DEFAULT_RECIPE.contains(from), "{from}");
            let err = parse(&DEFAULT_RECIPE.replacen(from, to, 1), "r.yaml")
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{to}: {err}");
        }
    }
}
