//! What a mail says about the machine it measured on: the kernel
//! version, HZ, the architecture, the CPU count, `CONFIG_` lines.
//!
//! Each fact keeps the words it came from, so the draft can quote them
//! in a comment: a reader checks a draft by its quotes.

use regex::Regex;
use std::sync::LazyLock;

/// One fact and the mail words it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Said<T> {
    pub value: T,
    pub quote: String,
}

/// The machine facts of a text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    /// (major, minor), in order of mention.
    pub versions: Vec<Said<(u32, u32)>>,
    pub hz: Vec<Said<u32>>,
    /// `x86_64` or `arm64`.
    pub arch: Vec<Said<&'static str>>,
    pub cpus: Option<Said<u32>>,
    /// `CONFIG_X=y` lines other than the HZ ones.
    pub config: Vec<String>,
    /// A `base-commit:` trailer: a commit, not a version.
    pub base_commit: Option<String>,
}

fn re(s: &str) -> Regex {
    Regex::new(s).expect("valid regex")
}

static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:\blinux[- ]|\bv|\bkernel |\bon top of |\bbased on |\bagainst |\bfor-|\b(?:un)?modified |\b(?:un)?patched |\bstock |\bvanilla |\bupstream |\bmainline )(\d)\.(\d{1,2})\b",
    )
});
static HZ: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:CONFIG_HZ_(\d{2,4})=y|CONFIG_HZ=(\d{2,4})|HZ\s*=\s*(\d{2,4})|HZ (\d{2,4})\b|(\d{2,4}) ?HZ\b)",
    )
});
static ARCH: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\b(arm64|aarch64|x86[_-]64|amd64|x86)\b"));
static CPUS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(single|one|\d{1,3})[- ](?:cpu|core|vcpu)s?\b|\bnr_cpus=(\d{1,3})|\bmaxcpus=(\d{1,3})|-smp (\d{1,3})",
    )
});
static CONFIG: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"^\s*(CONFIG_[A-Z0-9_]+=(?:y|m|n|-?\d+|0x[0-9a-fA-F]+|"[^"]*"))(?:[\s,.;:]|$)"#)
});

/// A kernel release on a line of its own, as `uname -r` prints it:
/// `5.14.0-427.13.1.el9_4.x86_64`, `6.19.0-rc1-next-20251219`, `Linux
/// 6.12.3-amd64`. The suffix after `-` sets it apart from a number.
static RELEASE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^\s*(?:linux\s+)?(\d)\.(\d{1,2})\.\d{1,3}-[A-Za-z0-9][\w.+~-]*\s*$"));

/// A stable release in three parts, anywhere: `5.10.162`, `6.1.55`.
static STABLE: LazyLock<Regex> = LazyLock::new(|| re(r"\b([2-7])\.(\d{1,2})\.(\d{1,3})\b"));

pub use crate::matrix::HZ_VALUES;

/// Whether the sentence `rest` continues ends in a question mark: its
/// first `?`, `!` or full stop (a `.` before a space or the line's end;
/// `6.12.3` is a version) is `?`.
fn asks(rest: &str) -> bool {
    let b = rest.as_bytes();
    let end = (0..b.len()).find(|&i| {
        matches!(b[i], b'?' | b'!')
            || (b[i] == b'.' && b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()))
    });
    end.is_some_and(|i| b[i] == b'?')
}

/// Facts of `text`, each kept once, in order of mention.
pub fn of_text(text: &str) -> Facts {
    let mut f = Facts::default();
    for line in text.lines() {
        let quote = line.trim().to_string();
        for c in VERSION.captures_iter(line) {
            // A version in a question (`which I believe was v5.5?`) is
            // one the writer wonders about, not the tree measured.
            if asks(&line[c.get(0).map_or(0, |m| m.end())..]) {
                continue;
            }
            let v = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            push(&mut f.versions, v, &quote);
        }
        for c in STABLE.captures_iter(line) {
            // `10.0.0.1` and `1.2.3.4` are addresses, not releases.
            let m = c.get(0).map_or(0..0, |m| m.range());
            let before = line[..m.start].chars().next_back();
            let after = line[m.end..].chars().next();
            let glued = |ch: Option<char>| ch.is_some_and(|ch| ch.is_ascii_digit() || ch == '.');
            let after_dot_digit = line[m.end..].starts_with('.')
                && line[m.end + 1..].starts_with(|ch: char| ch.is_ascii_digit());
            if glued(before) || after_dot_digit || after.is_some_and(|ch| ch.is_ascii_digit()) {
                continue;
            }
            // `xfsprogs 6.1.0`, `fio-3.35.1`, `gcc 12.2.0`: a tool's.
            let lead = line[..m.start].to_ascii_lowercase();
            let word = lead
                .trim_end_matches([' ', '-', 'v'])
                .rsplit(|c: char| c.is_whitespace() || c == '(')
                .next()
                .unwrap_or("");
            const TOOLS: [&str; 9] = [
                "progs",
                "fio",
                "mdadm",
                "cli",
                "qemu",
                "gcc",
                "clang",
                "glibc",
                "util-linux",
            ];
            if TOOLS.iter().any(|t| word.ends_with(t)) {
                continue;
            }
            let v = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            push(&mut f.versions, v, &quote);
        }
        if let Some(c) = RELEASE.captures(line) {
            let v = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            push(&mut f.versions, v, &quote);
        }
        for c in HZ.captures_iter(line) {
            let n = (1..=5).find_map(|i| c.get(i)).map(|m| m.as_str());
            if let Some(hz) = n.and_then(|n| n.parse().ok())
                && HZ_VALUES.contains(&hz)
            {
                push(&mut f.hz, hz, &quote);
            }
        }
        for c in ARCH.captures_iter(line) {
            let a = match c[1].to_ascii_lowercase().as_str() {
                "arm64" | "aarch64" => "arm64",
                _ => "x86_64",
            };
            push(&mut f.arch, a, &quote);
        }
        if f.cpus.is_none()
            && let Some(c) = CPUS.captures(line)
        {
            let n = (1..=4)
                .find_map(|i| c.get(i))
                .map(|m| m.as_str().to_ascii_lowercase());
            let n = match n.as_deref() {
                Some("single" | "one") => Some(1),
                Some(d) => d.parse().ok(),
                None => None,
            };
            f.cpus = n.filter(|n| *n > 0).map(|value| Said {
                value,
                quote: quote.clone(),
            });
        }
        if let Some(c) = CONFIG.captures(line)
            && !c[1].starts_with("CONFIG_HZ")
            && !f.config.contains(&c[1].to_string())
        {
            f.config.push(c[1].to_string());
        }
        if let Some(b) = line.trim().strip_prefix("base-commit:") {
            f.base_commit.get_or_insert_with(|| b.trim().to_string());
        }
    }
    f
}

fn push<T: PartialEq>(to: &mut Vec<Said<T>>, value: T, quote: &str) {
    if !to.iter().any(|s| s.value == value) {
        to.push(Said {
            value,
            quote: quote.to_string(),
        });
    }
}

/// The built-in tree nearest a version, and whether it is that version.
/// The trees are the matrix's named sources (`debian-6.12`).
pub fn nearest_tree(v: (u32, u32)) -> (&'static str, bool) {
    let trees: Vec<(u32, u32, &'static str)> = crate::matrix::NAMED_SOURCES
        .iter()
        .filter_map(|n| {
            let (a, b) = n.strip_prefix("debian-")?.split_once('.')?;
            Some((a.parse().ok()?, b.parse().ok()?, *n))
        })
        .collect();
    let rank = |(a, b): (u32, u32)| i64::from(a) * 100 + i64::from(b);
    let name = trees
        .iter()
        .min_by_key(|(a, b, _)| (rank((*a, *b)) - rank(v)).abs())
        .map_or(crate::matrix::DEFAULT_SOURCE, |t| t.2);
    (name, trees.iter().any(|(a, b, _)| (*a, *b) == v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_hz_arch_cpus_and_config() {
        let f = of_text(
            "Subject: [PATCH for-6.13/block] x\nTested on arm64, HZ=250, single core, on top of v6.12-rc3.\nCONFIG_HZ_1000=y\nCONFIG_DM_CRYPT=y\nbase-commit: 0123abcd\n",
        );
        let v: Vec<_> = f.versions.iter().map(|s| s.value).collect();
        assert_eq!(v, vec![(6, 13), (6, 12)]);
        let hz: Vec<_> = f.hz.iter().map(|s| s.value).collect();
        assert_eq!(hz, vec![250, 1000]);
        assert_eq!(f.arch[0].value, "arm64");
        assert_eq!(f.cpus.as_ref().map(|c| c.value), Some(1));
        assert_eq!(f.config, vec!["CONFIG_DM_CRYPT=y"]);
        assert_eq!(f.base_commit.as_deref(), Some("0123abcd"));
        assert_eq!(of_text("8 CPUs, x86-64").cpus.unwrap().value, 8);
        assert_eq!(of_text("8 CPUs, x86-64").arch[0].value, "x86_64");
        // A version asked about is not the tree measured.
        assert!(
            of_text("moved to iomap - which I believe was v5.5?")
                .versions
                .is_empty()
        );
        assert_eq!(of_text("Tested on v6.1. Why?").versions.len(), 1);
        // `uname -r` on a line of its own, and a stable release in three
        // parts (`6.12.3`); a tool's release or an address is none.
        let r = of_text(
            "Baseline:\n  5.14.0-427.13.1.el9_4.x86_64\nTest:\n  6.19.0-rc1-next-20251219\n 6.12.3\nxfsprogs 6.1.0, fio-3.35.1, 10.0.2.15, 1.2.3.4\n",
        );
        let v: Vec<_> = r.versions.iter().map(|s| s.value).collect();
        assert_eq!(v, [(5, 14), (6, 19), (6, 12)]);
        // A HZ the kernel does not offer is not a HZ.
        assert!(of_text("HZ=123").hz.is_empty());
    }

    #[test]
    fn nearest_debian_tree() {
        assert_eq!(nearest_tree((6, 13)), ("debian-6.12", false));
        assert_eq!(nearest_tree((6, 1)), ("debian-6.1", true));
        assert_eq!(nearest_tree((5, 15)), ("debian-5.10", false));
        assert_eq!(nearest_tree((4, 10)), ("debian-5.10", false));
    }
}
