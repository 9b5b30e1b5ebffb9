//! kconfig fragments: parse, merge (merge_config.sh semantics), verify.
//!
//! `olddefconfig` silently drops an option whose dependencies are not
//! met. A lab kernel without, say, CONFIG_SYSVIPC boots fine and then
//! fio dies in the guest; so after the merge every option a fragment
//! asked for is checked against the final .config.

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
}

pub fn parse_fragment(f: &Fragment) -> Result<Vec<Setting>> {
    let mut out = Vec::new();
    for (i, raw) in f.text.lines().enumerate() {
        let at = format!("{}:{}", f.origin, i + 1);
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("# ") {
            if let Some(name) = rest.strip_suffix(" is not set") {
                check_name(name, &at, raw)?;
                out.push(Setting {
                    name: name.to_string(),
                    value: "n".into(),
                    at,
                });
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
        out.push(Setting {
            name: name.to_string(),
            value: value.to_string(),
            at,
        });
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

/// The settings that win: the last fragment to name an option decides it.
pub fn requested(fragments: &[Fragment]) -> Result<Vec<Setting>> {
    let mut out: Vec<Setting> = Vec::new();
    for f in fragments {
        for s in parse_fragment(f)? {
            out.retain(|o| o.name != s.name);
            out.push(s);
        }
    }
    Ok(out)
}

/// Merge the fragments into a base .config: each option a fragment names
/// replaces the base's line for it, as merge_config.sh does.
pub fn merge(base: &str, fragments: &[Fragment]) -> Result<String> {
    let req = requested(fragments)?;
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

/// Every requested option must have its value in the final config.
pub fn verify(final_config: &str, fragments: &[Fragment]) -> Result<()> {
    let fin = parse_config(final_config);
    let mut bad = Vec::new();
    for s in requested(fragments)? {
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
        let merged = merge(base, &[f1, f2]).unwrap();
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
        let e = verify("CONFIG_HZ=250\n", std::slice::from_ref(&f))
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
        verify("CONFIG_SYSVIPC=y\nCONFIG_HZ=100\n", &[f]).unwrap();
    }

    #[test]
    fn not_set_is_satisfied_by_absence() {
        let f = frag("x", "# CONFIG_MODULES is not set\n");
        verify("CONFIG_A=y\n", &[f]).unwrap();
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
    fn shipped_fragments_parse() {
        for (name, text) in crate::matrix::fragments::BUILTIN {
            parse_fragment(&frag(name, text)).unwrap();
        }
    }
}
