//! Kernel sources that only another Debian release ships, fetched into
//! lab's cache with a private apt configuration.
//!
//! Debian 12 has linux-source-6.1 and -6.12; an experiment on 5.10 needs
//! Debian 11's linux-source-5.10. lab never adds a suite to the host's
//! /etc/apt: it writes its own sources list, keeps its own package lists
//! and apt cache in a temp directory, downloads the one .deb and keeps
//! only the tarball inside it. This runs at build time, once per
//! (package, suite); planning never fetches.

use crate::cache::{Cache, KeyBuilder};
use crate::events::Events;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A source package that the host's release does not ship.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release {
    /// The Debian package, e.g. `linux-source-5.10`.
    pub package: &'static str,
    /// The suite that ships it, e.g. `bullseye`.
    pub suite: &'static str,
    /// The release, in words.
    pub name: &'static str,
}

/// The sources lab fetches rather than asks the user to install.
pub const OTHER_RELEASES: &[Release] = &[Release {
    package: "linux-source-5.10",
    suite: "bullseye",
    name: "Debian 11",
}];

/// The release a package must be fetched from, when the host's apt
/// cannot install it.
pub fn release_for(package: &str) -> Option<&'static Release> {
    OTHER_RELEASES.iter().find(|r| r.package == package)
}

/// The Debian archive URL: `$LAB_DEBIAN_MIRROR`, or the one the host's
/// own apt sources use for its main suite.
pub fn mirror() -> Result<String> {
    if let Ok(m) = std::env::var("LAB_DEBIAN_MIRROR")
        && !m.trim().is_empty()
    {
        return Ok(m.trim().trim_end_matches('/').to_string());
    }
    let mut texts = Vec::new();
    let list = Path::new("/etc/apt/sources.list");
    if let Ok(t) = std::fs::read_to_string(list) {
        texts.push((list.display().to_string(), t));
    }
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut paths: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            let name = p.display().to_string();
            if (name.ends_with(".list") || name.ends_with(".sources"))
                && let Ok(t) = std::fs::read_to_string(&p)
            {
                texts.push((name, t));
            }
        }
    }
    mirror_from(&texts).ok_or_else(|| {
        anyhow::anyhow!(
            "no Debian archive in the host's apt sources (/etc/apt/sources.list, \
             /etc/apt/sources.list.d/): set LAB_DEBIAN_MIRROR to a Debian mirror URL"
        )
    })
}

/// The first URI that serves a Debian release suite (not -security, not
/// -updates) with `main`, from one-line `.list` or deb822 `.sources` texts.
pub fn mirror_from(texts: &[(String, String)]) -> Option<String> {
    let good = |uri: &str, suites: &[&str], comps: &[&str]| {
        (uri.starts_with("http://") || uri.starts_with("https://"))
            && comps.contains(&"main")
            && suites
                .iter()
                .any(|s| !s.contains('-') && !s.contains('/') && !s.is_empty() && *s != "nodistro")
    };
    for (name, text) in texts {
        if name.ends_with(".sources") {
            for stanza in text.split("\n\n") {
                let field = |k: &str| -> Vec<&str> {
                    stanza
                        .lines()
                        .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(':')))
                        .map(|v| v.split_whitespace().collect())
                        .unwrap_or_default()
                };
                let types = field("Types");
                if !types.contains(&"deb") || field("Enabled") == ["no"] {
                    continue;
                }
                let (suites, comps) = (field("Suites"), field("Components"));
                if let Some(uri) = field("URIs").into_iter().find(|u| good(u, &suites, &comps)) {
                    return Some(uri.trim_end_matches('/').to_string());
                }
            }
        } else {
            for line in text.lines() {
                let mut w: Vec<&str> = line.split_whitespace().collect();
                if w.first() != Some(&"deb") {
                    continue;
                }
                // `deb [options] URI suite components...`
                if w.get(1).is_some_and(|o| o.starts_with('[')) {
                    let end = w.iter().position(|x| x.ends_with(']')).unwrap_or(1);
                    w.drain(1..=end);
                }
                if w.len() >= 4 && good(w[1], &w[2..3], &w[3..]) {
                    return Some(w[1].trim_end_matches('/').to_string());
                }
            }
        }
    }
    None
}

/// The tarball name inside the package: `linux-source-5.10.tar.xz`.
pub fn tarball_name(r: &Release) -> String {
    format!("{}.tar.xz", r.package)
}

/// Fetch `r` into the cache (once) and return the tarball's path.
pub fn fetch(cache: &Cache, r: &Release, events: &Events) -> Result<PathBuf> {
    let key = KeyBuilder::new("debian-source")
        .field("package", r.package)
        .field("suite", r.suite)
        .finish();
    let label = format!("{} from {} ({})", r.package, r.name, r.suite);
    let ev = format!("fetch-{}", r.package);
    let start = Instant::now();
    let (entry, cached) = cache.get_or_make("debian-source", &key, &label, |tmp| {
        let mirror = mirror()?;
        events.started(
            &ev,
            &format!(
                "fetching {} from {}'s {} suite ({mirror})",
                r.package, r.name, r.suite
            ),
            None,
        );
        fetch_into(tmp, r, &mirror, events, &ev).with_context(|| {
            format!(
                "fetching Debian package {} from suite '{}' ({}) at {mirror}",
                r.package, r.suite, r.name
            )
        })
    })?;
    if !cached {
        events.finished(
            &ev,
            true,
            false,
            start.elapsed().as_secs_f64(),
            std::fs::read_to_string(entry.join("version")).unwrap_or_default(),
        );
    }
    let tar = entry.join(tarball_name(r));
    if !tar.is_file() {
        bail!(
            "cache entry {} for {} has no {}",
            entry.display(),
            r.package,
            tarball_name(r)
        );
    }
    Ok(tar)
}

/// apt-get with every path it would write pointed into `apt`.
fn apt_get(apt: &Path) -> Command {
    let mut c = Command::new("apt-get");
    let opt = |k: &str, v: &Path| format!("{k}={}", v.display());
    c.arg("-o")
        .arg(opt("Dir::Etc::sourcelist", &apt.join("sources.list")))
        .args(["-o", "Dir::Etc::sourceparts=-"])
        .arg("-o")
        .arg(opt("Dir::State::Lists", &apt.join("lists")))
        .arg("-o")
        .arg(opt("Dir::Cache", &apt.join("cache")))
        .args(["-o", "Acquire::Languages=none"])
        .args(["-o", "APT::Get::List-Cleanup=false"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    c
}

fn fetch_into(tmp: &Path, r: &Release, mirror: &str, events: &Events, ev: &str) -> Result<()> {
    let apt = tmp.join("apt");
    for d in ["lists/partial", "cache/archives/partial", "deb", "x"] {
        std::fs::create_dir_all(apt.join(d))?;
    }
    std::fs::write(
        apt.join("sources.list"),
        format!(
            "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {mirror} {} main\n",
            r.suite
        ),
    )?;
    events.phase(ev, &format!("apt-get update ({} main)", r.suite));
    crate::util::run_output(apt_get(&apt).arg("update"))
        .context("apt-get update with lab's private sources list")?;
    crate::interrupt::check()?;
    events.phase(ev, &format!("downloading {}", r.package));
    let deb_dir = apt.join("deb");
    let watch = SizeWatch::start(&deb_dir, events.clone(), ev.to_string());
    let got = crate::util::run_output(
        apt_get(&apt)
            .arg("download")
            .arg(r.package)
            .current_dir(&deb_dir),
    );
    drop(watch);
    got.with_context(|| format!("apt-get download {}", r.package))?;
    let deb = std::fs::read_dir(&deb_dir)?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .with_context(|| format!("apt-get download left no .deb in {}", deb_dir.display()))?;
    let version = deb
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.split('_').nth(1))
        .unwrap_or("")
        .to_string();
    crate::interrupt::check()?;
    events.phase(ev, &format!("unpacking {}", deb.display()));
    let x = apt.join("x");
    crate::util::run_output(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&x))
        .with_context(|| format!("dpkg-deb -x {}", deb.display()))?;
    let inner = x.join("usr/src").join(tarball_name(r));
    if !inner.is_file() {
        bail!("{} has no /usr/src/{}", deb.display(), tarball_name(r));
    }
    std::fs::rename(&inner, tmp.join(tarball_name(r)))?;
    std::fs::write(
        tmp.join("version"),
        format!("{} {version} from {mirror} {}", r.package, r.suite),
    )?;
    // The lists and the .deb are 130 MB that nothing reads again.
    std::fs::remove_dir_all(&apt)?;
    Ok(())
}

/// Reports the download's size every few seconds, so a 122 MB fetch on a
/// slow link shows progress.
struct SizeWatch {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SizeWatch {
    fn start(dir: &Path, events: Events, ev: String) -> SizeWatch {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (dir, flag) = (dir.to_path_buf(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut ticks = 0u32;
            while !flag.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(250));
                ticks += 1;
                if ticks.is_multiple_of(20) {
                    let mb = crate::util::dir_size(&dir) >> 20;
                    events.phase(&ev, &format!("downloaded {mb} MiB"));
                }
            }
        });
        SizeWatch {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, text: &str) -> (String, String) {
        (name.to_string(), text.to_string())
    }

    #[test]
    fn the_mirror_is_the_host_s_main_debian_archive() {
        let deb822 = "Types: deb\nURIs: http://deb.debian.org/debian\n\
                      Suites: bookworm bookworm-updates\nComponents: main\n\
                      Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n\
                      Types: deb\nURIs: http://deb.debian.org/debian-security\n\
                      Suites: bookworm-security\nComponents: main\n";
        let node = "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\n\
                    Suites: nodistro\nComponents: main\n";
        assert_eq!(
            mirror_from(&[
                t("/etc/apt/sources.list.d/node.sources", node),
                t("/etc/apt/sources.list.d/debian.sources", deb822)
            ])
            .as_deref(),
            Some("http://deb.debian.org/debian")
        );
        let list = "# comment\ndeb http://security.example/debian-security bookworm-security main\n\
                    deb [arch=amd64 signed-by=/k.gpg] http://mirror.example/debian/ bookworm main contrib\n";
        assert_eq!(
            mirror_from(&[t("/etc/apt/sources.list", list)]).as_deref(),
            Some("http://mirror.example/debian")
        );
        assert_eq!(
            mirror_from(&[t(
                "/etc/apt/sources.list",
                "deb-src http://x/debian bookworm main\n"
            )]),
            None
        );
    }

    #[test]
    fn only_5_10_is_fetched_and_from_bullseye() {
        let r = release_for("linux-source-5.10").unwrap();
        assert_eq!(r.suite, "bullseye");
        assert_eq!(tarball_name(r), "linux-source-5.10.tar.xz");
        assert!(release_for("linux-source-6.1").is_none());
        assert!(release_for("linux-source-6.12").is_none());
    }

    #[test]
    fn apt_get_never_points_at_etc_apt() {
        let c = apt_get(Path::new("/tmp/x/apt"));
        let d = crate::util::describe(&c);
        assert!(
            d.contains("Dir::Etc::sourcelist=/tmp/x/apt/sources.list"),
            "{d}"
        );
        assert!(d.contains("Dir::Etc::sourceparts=-"), "{d}");
        assert!(d.contains("Dir::State::Lists=/tmp/x/apt/lists"), "{d}");
        assert!(d.contains("Dir::Cache=/tmp/x/apt/cache"), "{d}");
    }
}
