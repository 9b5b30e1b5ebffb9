//! kconfig fragments: parse, merge (merge_config.sh semantics), verify.
//!
//! `olddefconfig` silently drops an option whose dependencies are not
//! met. A lab kernel without, say, CONFIG_SYSVIPC boots fine and then
//! fio dies in the guest; so after the merge every option a fragment
//! asked for is checked against the final .config.
//!
//! An option that exists only in some kernel versions carries a
//! condition on the comment line right before it, so verification stays
//! strict everywhere else:
//!
//! ```text
//! # lab: since 6.1      (the option exists from 6.1 on)
//! # lab: before 6.1     (the option exists only before 6.1)
//! ```
//!
//! On a version outside the range the option is neither merged nor
//! verified.

use crate::matrix::Fragment;
use anyhow::{Result, bail};
use std::collections::BTreeMap;

/// One `CONFIG_X=value` or `# CONFIG_X is not set` line of a fragment.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    pub name: String,
    /// `y`, `m`, `n`, a number or a quoted string, as written.
    pub value: String,
    /// `origin:line`, for error messages.
    pub at: String,
    /// The kernel versions the option exists in, from `# lab:` lines.
    pub versions: Versions,
}

/// A `(major, minor)` kernel version, e.g. `(6, 1)`.
pub type Version = (u32, u32);

/// Where an option exists: `since <= v < before`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Versions {
    pub since: Option<Version>,
    pub before: Option<Version>,
}

impl Versions {
    /// Whether the option exists in `v`; an unknown version (an empty
    /// string from a tree without a Makefile version) keeps every option.
    pub fn contains(&self, v: Option<Version>) -> bool {
        let Some(v) = v else { return true };
        self.since.is_none_or(|s| v >= s) && self.before.is_none_or(|b| v < b)
    }
}

/// `6.1.192` or `6.12` → `(6, 1)` / `(6, 12)`.
pub fn parse_version(s: &str) -> Option<Version> {
    let mut it = s.split('.');
    let major = it.next()?.trim().parse().ok()?;
    let minor = it.next()?.trim().parse().ok()?;
    Some((major, minor))
}

/// A `# lab: since X.Y` or `# lab: before X.Y` line, folded into `v`.
fn version_line(rest: &str, at: &str, raw: &str, v: &mut Versions) -> Result<()> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let ver = match words.as_slice() {
        [_, ver] => parse_version(ver),
        _ => None,
    };
    match (words.first().copied(), ver) {
        (Some("since"), Some(x)) => v.since = Some(x),
        (Some("before"), Some(x)) => v.before = Some(x),
        _ => bail!(
            "{at}: bad lab condition '{raw}': expected '# lab: since X.Y' or '# lab: before X.Y'"
        ),
    }
    Ok(())
}

pub fn parse_fragment(f: &Fragment) -> Result<Vec<Setting>> {
    let mut out = Vec::new();
    // Conditions from `# lab:` lines, waiting for the option they govern.
    let mut pending: Option<(Versions, String)> = None;
    for (i, raw) in f.text.lines().enumerate() {
        let at = format!("{}:{}", f.origin, i + 1);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# lab:") {
            let (mut v, _) = pending.take().unwrap_or_default();
            version_line(rest, &at, raw, &mut v)?;
            pending = Some((v, at));
            continue;
        }
        let mut push = |name: &str, value: &str, at: String| {
            out.push(Setting {
                name: name.to_string(),
                value: value.to_string(),
                at,
                versions: pending.take().map(|p| p.0).unwrap_or_default(),
            })
        };
        if let Some(rest) = line.strip_prefix("# ") {
            if let Some(name) = rest.strip_suffix(" is not set") {
                check_name(name, &at, raw)?;
                push(name, "n", at);
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            bail!(
                "{at}: bad fragment line '{raw}': expected CONFIG_NAME=value or '# CONFIG_NAME is not set'"
            );
        };
        check_name(name, &at, raw)?;
        if value.is_empty()
            || (value.starts_with('"') && !(value.len() >= 2 && value.ends_with('"')))
        {
            bail!("{at}: bad value in '{raw}': expected y, m, n, a number or a quoted string");
        }
        push(name, value, at);
    }
    if let Some((_, at)) = pending {
        bail!("{at}: a '# lab:' condition with no option line after it");
    }
    Ok(out)
}

fn check_name(name: &str, at: &str, raw: &str) -> Result<()> {
    let ok = name.strip_prefix("CONFIG_").is_some_and(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    });
    if !ok {
        bail!("{at}: bad fragment line '{raw}': '{name}' is not a CONFIG_ option name");
    }
    Ok(())
}

/// A .config as name → value (`n` for "is not set").
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix("# ")
            .and_then(|r| r.strip_suffix(" is not set"))
        {
            m.insert(name.to_string(), "n".into());
        } else if let Some((k, v)) = line.split_once('=')
            && k.starts_with("CONFIG_")
        {
            m.insert(k.to_string(), v.to_string());
        }
    }
    m
}

/// The settings that win for kernel `version` (`6.1.192`): the last
/// fragment to name an option decides it; an option the version lacks
/// (by its `# lab:` condition) is left out.
pub fn requested(fragments: &[Fragment], version: &str) -> Result<Vec<Setting>> {
    let v = parse_version(version);
    let mut out: Vec<Setting> = Vec::new();
    for f in fragments {
        for s in parse_fragment(f)? {
            if !s.versions.contains(v) {
                continue;
            }
            out.retain(|o| o.name != s.name);
            out.push(s);
        }
    }
    Ok(out)
}

/// Merge the fragments into a base .config: each option a fragment names
/// replaces the base's line for it, as merge_config.sh does.
pub fn merge(base: &str, fragments: &[Fragment], version: &str) -> Result<String> {
    let req = requested(fragments, version)?;
    let names: std::collections::HashSet<&str> = req.iter().map(|s| s.name.as_str()).collect();
    let mut out: Vec<String> = base
        .lines()
        .filter(|l| {
            let name = l
                .strip_prefix("# ")
                .and_then(|r| r.strip_suffix(" is not set"))
                .or_else(|| l.split_once('=').map(|(k, _)| k));
            !name.is_some_and(|n| names.contains(n))
        })
        .map(String::from)
        .collect();
    for s in &req {
        out.push(if s.value == "n" {
            format!("# {} is not set", s.name)
        } else {
            format!("{}={}", s.name, s.value)
        });
    }
    Ok(out.join("\n") + "\n")
}

/// Every option requested for `version` must have its value in the final config.
pub fn verify(final_config: &str, fragments: &[Fragment], version: &str) -> Result<()> {
    let fin = parse_config(final_config);
    let mut bad = Vec::new();
    for s in requested(fragments, version)? {
        let got = fin.get(&s.name).map(String::as_str).unwrap_or("n");
        if got != s.value {
            let ended = if got == "n" {
                "not set".to_string()
            } else {
                format!("{}={got}", s.name)
            };
            bad.push(format!(
                "{}={} (asked by {}) ended up {ended}: kconfig dropped it, probably for a missing dependency",
                s.name, s.value, s.at
            ));
        }
    }
    if !bad.is_empty() {
        bail!(
            "the merged config lost {} option(s):\n  {}",
            bad.len(),
            bad.join("\n  ")
        );
    }
    Ok(())
}

/// The HZ a config builds for.
pub fn hz(config: &str) -> Option<u32> {
    parse_config(config).get("CONFIG_HZ")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(name: &str, text: &str) -> Fragment {
        Fragment {
            name: name.into(),
            origin: format!("kconfigs/{name}.config"),
            text: text.into(),
        }
    }

    #[test]
    fn later_fragments_override_earlier_and_the_base() {
        let base = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n";
        let f1 = frag("one", "CONFIG_B=y\nCONFIG_C=m\n");
        let f2 = frag(
            "hz100",
            "# CONFIG_HZ_250 is not set\nCONFIG_HZ_100=y\nCONFIG_HZ=100\nCONFIG_C=y\n",
        );
        let merged = merge(base, &[f1, f2], "6.12.117").unwrap();
        let m = parse_config(&merged);
        assert_eq!(m["CONFIG_A"], "y");
        assert_eq!(m["CONFIG_B"], "y");
        assert_eq!(m["CONFIG_C"], "y");
        assert_eq!(m["CONFIG_HZ_250"], "n");
        assert_eq!(m["CONFIG_HZ"], "100");
        assert_eq!(merged.matches("CONFIG_C=").count(), 1);
    }

    #[test]
    fn verify_names_the_option_the_fragment_and_the_final_value() {
        let f = frag("base", "# comment\nCONFIG_SYSVIPC=y\nCONFIG_HZ=100\n");
        let e = verify("CONFIG_HZ=250\n", std::slice::from_ref(&f), "6.12.117")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("CONFIG_SYSVIPC=y (asked by kconfigs/base.config:2) ended up not set"),
            "{e}"
        );
        assert!(
            e.contains("CONFIG_HZ=100 (asked by kconfigs/base.config:3) ended up CONFIG_HZ=250"),
            "{e}"
        );
        verify("CONFIG_SYSVIPC=y\nCONFIG_HZ=100\n", &[f], "6.12.117").unwrap();
    }

    #[test]
    fn not_set_is_satisfied_by_absence() {
        let f = frag("x", "# CONFIG_MODULES is not set\n");
        verify("CONFIG_A=y\n", &[f], "6.1.192").unwrap();
    }

    #[test]
    fn bad_fragment_lines_are_located() {
        let e = parse_fragment(&frag("bad", "CONFIG_A=y\nHZ=100\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kconfigs/bad.config:2") && e.contains("'HZ' is not a CONFIG_ option name"),
            "{e}"
        );
        let e = parse_fragment(&frag("bad", "CONFIG_A y\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kconfigs/bad.config:1") && e.contains("expected CONFIG_NAME=value"),
            "{e}"
        );
        let e = parse_fragment(&frag("bad", "CONFIG_S=\"open\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad value"), "{e}");
    }

    #[test]
    fn a_lab_condition_scopes_one_option_to_its_versions() {
        let f = frag(
            "base",
            "# lab: since 6.1\nCONFIG_NEW=y\nCONFIG_ALWAYS=y\n\
             # lab: since 5.10\n# lab: before 6.12\n# CONFIG_OLD is not set\n",
        );
        let names = |v: &str| -> Vec<String> {
            requested(std::slice::from_ref(&f), v)
                .unwrap()
                .into_iter()
                .map(|s| s.name)
                .collect()
        };
        assert_eq!(names("5.10.223"), ["CONFIG_ALWAYS", "CONFIG_OLD"]);
        assert_eq!(
            names("6.1.192"),
            ["CONFIG_NEW", "CONFIG_ALWAYS", "CONFIG_OLD"]
        );
        assert_eq!(names("6.12.117"), ["CONFIG_NEW", "CONFIG_ALWAYS"]);
        // 5.10 has no CONFIG_NEW: verify does not ask for it there...
        verify("CONFIG_ALWAYS=y\n", std::slice::from_ref(&f), "5.10.223").unwrap();
        // ...and stays strict where the option exists.
        let e = verify("CONFIG_ALWAYS=y\n", std::slice::from_ref(&f), "6.1.192")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("CONFIG_NEW=y (asked by kconfigs/base.config:2) ended up not set"),
            "{e}"
        );
        assert!(
            !merge("", std::slice::from_ref(&f), "5.10.223")
                .unwrap()
                .contains("CONFIG_NEW")
        );
    }

    #[test]
    fn bad_lab_conditions_are_located() {
        let e = parse_fragment(&frag("x", "CONFIG_A=y\n# lab: after 6.1\nCONFIG_B=y\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("kconfigs/x.config:2: bad lab condition"), "{e}");
        let e = parse_fragment(&frag("x", "# lab: since six\nCONFIG_B=y\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("kconfigs/x.config:1"), "{e}");
        let e = parse_fragment(&frag("x", "CONFIG_B=y\n# lab: since 6.1\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("kconfigs/x.config:2: a '# lab:' condition with no option line"),
            "{e}"
        );
    }

    #[test]
    fn shipped_fragments_parse() {
        for (name, text) in crate::matrix::fragments::BUILTIN {
            parse_fragment(&frag(name, text)).unwrap();
        }
    }
}
