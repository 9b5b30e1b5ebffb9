//! `lab doctor`: what this host has, what it lacks, and the Debian
//! package that brings each missing piece.
//!
//! The checks are a pure function of a [`Probe`] (which programs and
//! files exist) and [`Facts`] (free disk, the KVM answer), so tests can
//! describe a machine that lacks something and read the report.

use crate::cache::Cache;
use crate::matrix::Arch;
use crate::vm::Accel;
use crate::vm::accel::Choice;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How much an item matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// lab cannot build or boot without it.
    Required,
    /// The test suite needs it.
    Tests,
    /// One feature needs it, and there is a way around it.
    Optional,
}

/// What proves an item is there.
#[derive(Clone, Debug, PartialEq)]
pub enum What {
    /// A program on PATH (or in /usr/sbin, /sbin).
    Program(String),
    /// Any of these files.
    File(Vec<PathBuf>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// What the report calls it.
    pub name: String,
    pub what: What,
    /// The Debian package that provides it.
    pub package: &'static str,
    pub need: Need,
    /// What it is for, when the name does not say.
    pub note: &'static str,
}

/// The kernel source `matrix::DEFAULT_SOURCE` names.
pub const KERNEL_SOURCE: &str = "/usr/src/linux-source-6.12.tar.xz";
pub const KERNEL_SOURCE_PACKAGE: &str = "linux-source-6.12";

/// The other Debian 12 kernel source the repository's matrices and tests
/// use (`debian-6.1`: matrices/dm-delay-versions.yaml, hybrid-poll.yaml).
pub const KERNEL_SOURCE_6_1: &str = "/usr/src/linux-source-6.1.tar.xz";
pub const KERNEL_SOURCE_6_1_PACKAGE: &str = "linux-source-6.1";

/// Below this much free space at the cache, warn.
pub const DISK_WARN: u64 = 10 << 30;
/// Below this, a kernel build fails: a required item is missing.
pub const DISK_FAIL: u64 = 3 << 30;

fn program(name: &str, package: &'static str, need: Need, note: &'static str) -> Item {
    Item {
        name: name.to_string(),
        what: What::Program(name.to_string()),
        package,
        need,
        note,
    }
}

fn file(name: &str, paths: &[&str], package: &'static str, note: &'static str) -> Item {
    Item {
        name: name.to_string(),
        what: What::File(paths.iter().map(PathBuf::from).collect()),
        package,
        need: Need::Required,
        note,
    }
}

/// Everything lab looks for on a host of architecture `host`.
pub fn items_for(host: Option<Arch>) -> Vec<Item> {
    use Need::*;
    let mut v = Vec::new();
    for f in &crate::matrix::ARCHES {
        v.push(program(f.qemu.qemu, f.qemu.package, Required, ""));
    }
    for arch in Arch::ALL {
        if let Some((prefix, package)) = arch.cross_compile(host) {
            v.push(program(
                &format!("{prefix}gcc"),
                package,
                Required,
                "builds the other arch's kernels",
            ));
        }
    }
    v.extend([
        program("make", "build-essential", Required, ""),
        program("gcc", "build-essential", Required, ""),
        program("flex", "flex", Required, ""),
        program("bison", "bison", Required, ""),
        program("bc", "bc", Required, ""),
        file(
            "libelf.h",
            &["/usr/include/libelf.h", "/usr/include/gelf.h"],
            "libelf-dev",
            "",
        ),
        file(
            "openssl/ssl.h",
            &["/usr/include/openssl/ssl.h"],
            "libssl-dev",
            "",
        ),
        program("cpio", "cpio", Required, ""),
        program("depmod", "kmod", Required, ""),
        program("xz", "xz-utils", Required, ""),
        program("zstd", "zstd", Required, ""),
        program("mmdebstrap", "mmdebstrap", Required, "builds guest images"),
        file(
            KERNEL_SOURCE,
            &[KERNEL_SOURCE],
            KERNEL_SOURCE_PACKAGE,
            "the kernel source",
        ),
        Item {
            name: KERNEL_SOURCE_6_1.into(),
            what: What::File(vec![PathBuf::from(KERNEL_SOURCE_6_1)]),
            package: KERNEL_SOURCE_6_1_PACKAGE,
            need: Tests,
            note: "debian-6.1, for the version matrices and their tests",
        },
        // debian-5.10 is Debian 11's: lab fetches it at build time with a
        // private apt configuration and unpacks the .deb with dpkg-deb.
        program(
            "dpkg-deb",
            "dpkg",
            Tests,
            "unpacks debian-5.10, which lab build fetches from Debian 11 (bullseye)",
        ),
        program("git", "git", Required, ""),
        program("patch", "patch", Required, ""),
        program("dropbearkey", "dropbear-bin", Tests, "needed by the tests"),
        program(
            "xmllint",
            "libxml2-utils",
            Tests,
            "checks JUnit reports against a schema in the tests",
        ),
    ]);
    // The image tests run the arm64 userland in a chroot.
    if host == Some(Arch::X86_64) {
        v.push(program(
            "qemu-aarch64-static",
            "qemu-user-static",
            Tests,
            "needed by the image tests",
        ));
    }
    v.push(program(
        "b4",
        "b4",
        Optional,
        "fetches patches by message-id; --mail FILE works without it",
    ));
    v
}

pub fn items() -> Vec<Item> {
    items_for(Arch::host())
}

/// The Debian packages lab and its tests need on this host, each once,
/// in the order `lab doctor` checks them (b4, being optional, is not here).
pub fn required_packages() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for i in items() {
        if i.need != Need::Optional && !out.contains(&i.package) {
            out.push(i.package);
        }
    }
    out
}

/// What exists on a machine.
pub trait Probe {
    fn has_program(&self, name: &str) -> bool;
    fn has_file(&self, path: &Path) -> bool;
}

/// The real machine.
pub struct System;

impl Probe for System {
    fn has_program(&self, name: &str) -> bool {
        use std::os::unix::fs::PermissionsExt;
        // depmod lives in /usr/sbin, which a user's PATH may lack.
        crate::util::which(name).is_some()
            || ["/usr/sbin", "/sbin"].iter().any(|d| {
                Path::new(d)
                    .join(name)
                    .metadata()
                    .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            })
    }
    fn has_file(&self, path: &Path) -> bool {
        path.is_file()
    }
}

/// What KVM looks like.
#[derive(Clone, Debug)]
pub enum Kvm {
    /// No kernel in the cache to boot a probe with.
    NotProbed { dev_kvm: bool },
    /// Not probed: `lab doctor` boots nothing unless `--probe-kvm`.
    NotAsked { dev_kvm: bool },
    /// `vm::accel::choose` answered.
    Probed(Choice),
    /// The probe could not run at all.
    Error(String),
}

/// Facts that are not a file or a program.
#[derive(Clone, Debug)]
pub struct Facts {
    pub cache_root: PathBuf,
    /// Where the cache location came from: `$LAB_CACHE`, ...
    pub cache_from: String,
    pub free_bytes: Option<u64>,
    pub kvm: Kvm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    /// A required item is missing: the exit code says so.
    Missing,
    /// An optional item is missing.
    Absent,
    Warn,
    /// A required condition fails (too little disk).
    Fail,
    Info,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Missing => "MISSING",
            Status::Absent => "absent",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Info => "info",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub status: Status,
    pub name: String,
    pub detail: String,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub lines: Vec<Line>,
    /// Packages to install for what is required or needed by the tests.
    pub missing_packages: Vec<&'static str>,
    /// Packages of missing optional items.
    pub optional_packages: Vec<&'static str>,
}

impl Report {
    /// Nothing required is missing and nothing failed.
    pub fn ok(&self) -> bool {
        !self
            .lines
            .iter()
            .any(|l| matches!(l.status, Status::Missing | Status::Fail))
    }

    /// A host that lacks what lab needs is an environment error (4),
    /// as in every other command; 1 is for regressions and unmet claims.
    pub fn exit_code(&self) -> i32 {
        if self.ok() {
            crate::error::exit::OK
        } else {
            crate::error::exit::ENVIRONMENT
        }
    }

    /// One line per item: `ok      make                 (build-essential)`.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&format!(
                "{:<7} {:<20} {}\n",
                l.status.word(),
                l.name,
                l.detail
            ));
        }
        s
    }
}

fn gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The report for a machine described by `probe` and `facts`.
pub fn check(items: &[Item], probe: &dyn Probe, facts: &Facts) -> Report {
    let mut lines = Vec::new();
    let mut missing_packages: Vec<&'static str> = Vec::new();
    let mut optional_packages: Vec<&'static str> = Vec::new();
    for it in items {
        let present = match &it.what {
            What::Program(p) => probe.has_program(p),
            What::File(paths) => paths.iter().any(|p| probe.has_file(p)),
        };
        let note = if it.note.is_empty() {
            String::new()
        } else {
            format!(" ({})", it.note)
        };
        let (status, detail) = match (present, it.need) {
            (true, _) => (Status::Ok, format!("({})", it.package)),
            (false, Need::Optional) => {
                if !optional_packages.contains(&it.package) {
                    optional_packages.push(it.package);
                }
                (
                    Status::Absent,
                    format!("optional, install: {}{note}", it.package),
                )
            }
            (false, _) => {
                if !missing_packages.contains(&it.package) {
                    missing_packages.push(it.package);
                }
                (Status::Missing, format!("install: {}{note}", it.package))
            }
        };
        lines.push(Line {
            status,
            name: it.name.clone(),
            detail,
        });
    }

    lines.push(match &facts.kvm {
        Kvm::NotAsked { dev_kvm } => Line {
            status: Status::Info,
            name: "kvm".into(),
            detail: format!(
                "not probed (lab doctor --probe-kvm boots a probe): /dev/kvm {}",
                if *dev_kvm { "present" } else { "absent" }
            ),
        },
        Kvm::NotProbed { dev_kvm } => Line {
            status: Status::Info,
            name: "kvm".into(),
            detail: format!(
                "not probed (no kernel built yet): /dev/kvm {}",
                if *dev_kvm { "present" } else { "absent" }
            ),
        },
        Kvm::Probed(c) if c.accel == Accel::Kvm => Line {
            status: Status::Ok,
            name: "kvm".into(),
            detail: c.reason.clone(),
        },
        Kvm::Probed(c) => Line {
            status: Status::Warn,
            name: "kvm".into(),
            detail: format!("{} (guests run under TCG, slower)", c.reason),
        },
        Kvm::Error(e) => Line {
            status: Status::Warn,
            name: "kvm".into(),
            detail: format!("the probe could not run: {e}"),
        },
    });

    let at = facts.cache_root.display();
    lines.push(match facts.free_bytes {
        None => Line {
            status: Status::Warn,
            name: "disk".into(),
            detail: format!("cannot read the free space at {at}"),
        },
        Some(b) if b < DISK_FAIL => Line {
            status: Status::Fail,
            name: "disk".into(),
            detail: format!(
                "{} free at {at}; a kernel build needs {} (set LAB_CACHE elsewhere, or lab cache gc)",
                gib(b),
                gib(DISK_FAIL)
            ),
        },
        Some(b) if b < DISK_WARN => Line {
            status: Status::Warn,
            name: "disk".into(),
            detail: format!(
                "{} free at {at}; below {}, a full matrix may not fit",
                gib(b),
                gib(DISK_WARN)
            ),
        },
        Some(b) => Line {
            status: Status::Ok,
            name: "disk".into(),
            detail: format!("{} free at {at}", gib(b)),
        },
    });
    lines.push(Line {
        status: Status::Info,
        name: "cache".into(),
        detail: format!("{at} ({})", facts.cache_from),
    });
    Report {
        lines,
        missing_packages,
        optional_packages,
    }
}

/// Where `Cache::open_default` puts the cache, in words.
pub fn cache_from() -> String {
    if std::env::var_os("LAB_CACHE").is_some() {
        "from $LAB_CACHE".into()
    } else if std::env::var_os("XDG_CACHE_HOME").is_some() {
        "from $XDG_CACHE_HOME/lab".into()
    } else {
        "the default, ~/.cache/lab; set LAB_CACHE to move it".into()
    }
}

/// The newest kernel image in the cache that boots on this host's arch.
pub fn newest_host_kernel(cache: &Cache) -> Option<(Arch, PathBuf)> {
    let host = Arch::host()?;
    cache
        .list()
        .ok()?
        .into_iter()
        .rev()
        .filter(|(_, i)| i.kind == "kernel")
        .filter_map(|(p, _)| crate::kernel::KernelBuild::from_entry(&p).ok())
        .find(|b| b.arch == host && b.image.is_file())
        .map(|b| (b.arch, b.image))
}

/// Disk and KVM facts of the real machine. With `probe_kvm`, KVM is
/// probed by booting a kernel from the cache (which writes a probe
/// entry into it); otherwise nothing is booted and nothing written.
pub fn gather(cache: Option<&Cache>, root: &Path, cache_from: String, probe_kvm: bool) -> Facts {
    let dev_kvm = Path::new("/dev/kvm").exists();
    let kernel = match cache {
        Some(c) if probe_kvm => newest_host_kernel(c).map(|k| (c, k)),
        _ => None,
    };
    let kvm = match kernel {
        None if !probe_kvm => Kvm::NotAsked { dev_kvm },
        None => Kvm::NotProbed { dev_kvm },
        Some((cache, (arch, image))) => {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match rt {
                Err(e) => Kvm::Error(format!("no async runtime: {e}")),
                Ok(rt) => match rt.block_on(crate::vm::accel::choose(arch, None, &image, cache)) {
                    Ok(c) => Kvm::Probed(c),
                    Err(e) => Kvm::Error(format!("{e:#}")),
                },
            }
        }
    };
    // The cache may not exist yet: its nearest existing ancestor holds it.
    let free_bytes = root
        .ancestors()
        .find(|a| a.exists())
        .and_then(crate::util::free_bytes);
    Facts {
        cache_root: root.to_path_buf(),
        cache_from,
        free_bytes,
        kvm,
    }
}

/// `apt-get install` for `packages`, as Debian's non-interactive set-up wants it.
pub fn apt_install_args(packages: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["apt-get", "install", "-y", "--no-install-recommends"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    v.extend(packages.iter().map(|p| p.to_string()));
    v
}

/// The command a user who is not root runs.
pub fn sudo_command(packages: &[&str]) -> String {
    format!(
        "sudo DEBIAN_FRONTEND=noninteractive {}",
        apt_install_args(packages).join(" ")
    )
}

/// Whether apt has package lists at all (a fresh container has none).
pub fn apt_lists_present(lists: &Path) -> bool {
    std::fs::read_dir(lists)
        .map(|rd| {
            rd.flatten()
                .any(|e| e.file_name().to_string_lossy().contains("_Packages"))
        })
        .unwrap_or(false)
}

fn apt(args: &[String]) -> Result<bool> {
    let mut c = Command::new(&args[0]);
    c.args(&args[1..]).env("DEBIAN_FRONTEND", "noninteractive");
    eprintln!("$ {}", crate::util::describe(&c));
    let st = c
        .status()
        .with_context(|| format!("running {}", crate::util::describe(&c)))?;
    Ok(st.success())
}

/// Install `packages` with apt-get, as root: `apt-get update` first when
/// there are no package lists, and once more when the install fails (the
/// lists may be stale).
pub fn apt_install(packages: &[&str]) -> Result<()> {
    if packages.is_empty() {
        return Ok(());
    }
    let update = vec!["apt-get".to_string(), "update".to_string()];
    let mut updated = false;
    if !apt_lists_present(Path::new("/var/lib/apt/lists")) {
        if !apt(&update)? {
            bail!("apt-get update failed");
        }
        updated = true;
    }
    let install = apt_install_args(packages);
    if apt(&install)? {
        return Ok(());
    }
    if updated {
        bail!("{} failed{}", install.join(" "), source_hint(packages));
    }
    if !apt(&update)? {
        bail!("apt-get update failed");
    }
    if !apt(&install)? {
        bail!(
            "{} failed after apt-get update{}",
            install.join(" "),
            source_hint(packages)
        );
    }
    Ok(())
}

/// Where the kernel source package comes from, when it is among those
/// that failed: Debian 12 ships it in bookworm-security only.
pub fn source_hint(packages: &[&str]) -> String {
    if let Some(p) = packages
        .iter()
        .find(|p| **p == KERNEL_SOURCE_PACKAGE || **p == KERNEL_SOURCE_6_1_PACKAGE)
    {
        format!(
            "; note: Debian 12 has {p} in bookworm-security, so apt's sources \
             (/etc/apt/sources.list.d/) must list http://deb.debian.org/debian-security bookworm-security main"
        )
    } else {
        String::new()
    }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::profile;
    use std::collections::BTreeSet;

    /// A machine that has everything but what is listed.
    struct Without(BTreeSet<String>);

    impl Probe for Without {
        fn has_program(&self, name: &str) -> bool {
            !self.0.contains(name)
        }
        fn has_file(&self, path: &Path) -> bool {
            !self.0.contains(&path.display().to_string())
        }
    }

    fn without(names: &[&str]) -> Without {
        Without(names.iter().map(|s| s.to_string()).collect())
    }

    fn facts(free: u64) -> Facts {
        Facts {
            cache_root: PathBuf::from("/var/cache/lab"),
            cache_from: "from $LAB_CACHE".into(),
            free_bytes: Some(free),
            kvm: Kvm::NotProbed { dev_kvm: true },
        }
    }

    #[test]
    fn a_machine_without_qemu_system_arm_names_the_package_and_fails() {
        let items = items_for(Some(Arch::X86_64));
        let r = check(&items, &without(&["qemu-system-aarch64"]), &facts(50 << 30));
        let out = r.render();
        assert!(
            out.contains("MISSING qemu-system-aarch64  install: qemu-system-arm\n"),
            "{out}"
        );
        assert!(
            out.contains("ok      qemu-system-x86_64   (qemu-system-x86)\n"),
            "{out}"
        );
        assert_eq!(r.missing_packages, ["qemu-system-arm"]);
        assert_eq!(r.exit_code(), 4);
        assert!(!r.ok());
    }

    #[test]
    fn a_complete_machine_passes_and_optional_b4_does_not_fail_it() {
        let items = items_for(Some(Arch::X86_64));
        let r = check(&items, &without(&["b4"]), &facts(50 << 30));
        assert_eq!(r.exit_code(), 0, "{}", r.render());
        assert!(r.missing_packages.is_empty());
        assert_eq!(r.optional_packages, ["b4"]);
        let out = r.render();
        assert!(
            out.contains("absent  b4                   optional, install: b4"),
            "{out}"
        );
        assert!(out.contains(
            "info    kvm                  not probed (no kernel built yet): /dev/kvm present"
        ));
        assert!(out.contains("ok      disk                 50.0 GiB free at /var/cache/lab"));
        assert!(out.contains("info    cache                /var/cache/lab (from $LAB_CACHE)"));
    }

    #[test]
    fn headers_missing_name_their_dev_packages_once_each() {
        let items = items_for(Some(Arch::X86_64));
        let r = check(
            &items,
            &without(&[
                "/usr/include/libelf.h",
                "/usr/include/gelf.h",
                "/usr/include/openssl/ssl.h",
                "make",
                "gcc",
                "depmod",
                "xz",
                "dropbearkey",
                KERNEL_SOURCE,
                KERNEL_SOURCE_6_1,
            ]),
            &facts(50 << 30),
        );
        assert_eq!(
            r.missing_packages,
            [
                "build-essential",
                "libelf-dev",
                "libssl-dev",
                "kmod",
                "xz-utils",
                KERNEL_SOURCE_PACKAGE,
                KERNEL_SOURCE_6_1_PACKAGE,
                "dropbear-bin"
            ]
        );
        let out = check(&items, &without(&[KERNEL_SOURCE_6_1]), &facts(50 << 30)).render();
        assert!(
            out.contains(
                "MISSING /usr/src/linux-source-6.1.tar.xz install: linux-source-6.1 (debian-6.1,"
            ),
            "{out}"
        );
        // One of libelf.h and gelf.h is enough.
        let r = check(
            &items,
            &without(&["/usr/include/libelf.h"]),
            &facts(50 << 30),
        );
        assert_eq!(r.exit_code(), 0);
        let out = check(&items, &without(&["dropbearkey"]), &facts(50 << 30)).render();
        assert!(
            out.contains(
                "MISSING dropbearkey          install: dropbear-bin (needed by the tests)"
            )
        );
    }

    #[test]
    fn disk_space_warns_below_10_gib_and_fails_below_3() {
        let items = items_for(Some(Arch::X86_64));
        let p = without(&[]);
        let low = check(&items, &p, &facts(5 << 30));
        assert_eq!(low.exit_code(), 0);
        assert!(
            low.render()
                .contains("warn    disk                 5.0 GiB free")
        );
        let full = check(&items, &p, &facts(1 << 30));
        assert_eq!(full.exit_code(), 4);
        assert!(
            full.render()
                .contains("FAIL    disk                 1.0 GiB free")
        );
    }

    #[test]
    fn kvm_lines_follow_the_probe() {
        let items = items_for(Some(Arch::X86_64));
        let p = without(&[]);
        let mut f = facts(50 << 30);
        f.kvm = Kvm::Probed(Choice {
            accel: Accel::Tcg,
            reason: "KVM probe boot printed nothing in 8 s; using TCG".into(),
        });
        let r = check(&items, &p, &f);
        assert_eq!(r.exit_code(), 0, "no KVM is not an error");
        assert!(
            r.render()
                .contains("warn    kvm                  KVM probe boot printed nothing")
        );
        f.kvm = Kvm::Probed(Choice {
            accel: Accel::Kvm,
            reason: "KVM probe boot printed after 0.4 s".into(),
        });
        assert!(
            check(&items, &p, &f)
                .render()
                .contains("ok      kvm                  KVM probe boot printed after 0.4 s")
        );
        f.kvm = Kvm::NotProbed { dev_kvm: false };
        assert!(check(&items, &p, &f).render().contains("/dev/kvm absent"));
    }

    #[test]
    fn the_cross_compiler_is_the_other_arch_s() {
        let on_x86 = items_for(Some(Arch::X86_64));
        assert!(
            on_x86
                .iter()
                .any(|i| i.name == "aarch64-linux-gnu-gcc" && i.package == "gcc-aarch64-linux-gnu")
        );
        assert!(!on_x86.iter().any(|i| i.name == "x86_64-linux-gnu-gcc"));
        let on_arm = items_for(Some(Arch::Arm64));
        assert!(
            on_arm
                .iter()
                .any(|i| i.name == "x86_64-linux-gnu-gcc" && i.package == "gcc-x86-64-linux-gnu")
        );
        assert!(!on_arm.iter().any(|i| i.name == "aarch64-linux-gnu-gcc"));
    }

    #[test]
    fn required_packages_cover_the_brief_and_leave_out_optional_ones() {
        let pk = required_packages();
        for p in [
            "qemu-system-x86",
            "qemu-system-arm",
            "build-essential",
            "flex",
            "bison",
            "bc",
            "libelf-dev",
            "libssl-dev",
            "cpio",
            "kmod",
            "xz-utils",
            "zstd",
            "mmdebstrap",
            "linux-source-6.12",
            "linux-source-6.1",
            "dpkg",
            "git",
            "patch",
            "dropbear-bin",
        ] {
            assert!(pk.contains(&p), "{p} not in {pk:?}");
        }
        assert!(!pk.contains(&"b4"));
        let unique: BTreeSet<_> = pk.iter().collect();
        assert_eq!(unique.len(), pk.len());
        // The source the matrices default to is the one doctor checks.
        assert_eq!(
            crate::matrix::DEFAULT_SOURCE
                .strip_prefix("debian-")
                .unwrap(),
            KERNEL_SOURCE_PACKAGE.strip_prefix("linux-source-").unwrap()
        );
        assert_eq!(
            KERNEL_SOURCE,
            format!("/usr/src/{KERNEL_SOURCE_PACKAGE}.tar.xz")
        );
    }

    #[test]
    fn install_commands_are_non_interactive() {
        assert_eq!(
            sudo_command(&["qemu-system-arm", "b4"]),
            "sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends qemu-system-arm b4"
        );
        let d = tempfile::tempdir().unwrap();
        assert!(!apt_lists_present(d.path()));
        assert!(!apt_lists_present(&d.path().join("nonexistent")));
        std::fs::write(d.path().join("lock"), "").unwrap();
        assert!(!apt_lists_present(d.path()));
        std::fs::write(
            d.path()
                .join("deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages.lz4"),
            "",
        )
        .unwrap();
        assert!(apt_lists_present(d.path()));
        assert!(source_hint(&["git", KERNEL_SOURCE_PACKAGE]).contains("bookworm-security"));
        assert_eq!(source_hint(&["git"]), "");
    }

    /// The real machine: every line agrees with the shell's own view of
    /// what is installed.
    #[test]
    fn the_real_machine_report_agrees_with_the_shell() {
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let facts = gather(Some(&cache), cache.root(), "test".into(), true);
        let r = check(&items(), &System, &facts);
        for it in items() {
            let there = match &it.what {
                What::Program(p) => Command::new("sh")
                    .arg("-c")
                    .arg(format!("PATH=$PATH:/usr/sbin:/sbin command -v {p}"))
                    .output()
                    .unwrap()
                    .status
                    .success(),
                What::File(ps) => ps.iter().any(|p| p.exists()),
            };
            let line = r.lines.iter().find(|l| l.name == it.name).unwrap();
            assert_eq!(line.status == Status::Ok, there, "{line:?}");
        }
        // An empty cache has no kernel to probe KVM with.
        let kvm = r.lines.iter().find(|l| l.name == "kvm").unwrap();
        assert!(
            kvm.detail
                .starts_with("not probed (no kernel built yet): /dev/kvm ")
        );
        assert_eq!(
            kvm.detail.ends_with("present"),
            Path::new("/dev/kvm").exists()
        );
        let disk = r.lines.iter().find(|l| l.name == "disk").unwrap();
        assert!(disk.detail.contains(" GiB free at "), "{disk:?}");
        assert!(facts.free_bytes.unwrap() > 0);
    }

    /// With a kernel in the cache, doctor runs the real probe. The kernel
    /// here is not bootable, so QEMU stops at once and the answer is TCG,
    /// with the probe's own reason.
    #[test]
    fn a_cached_kernel_makes_doctor_run_the_kvm_probe() {
        let Some(host) = Arch::host() else { return };
        if !System.has_program(profile(host).qemu) {
            eprintln!("skipped: no {}", profile(host).qemu);
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let cache = Cache::at(d.path()).unwrap();
        let key = crate::cache::KeyBuilder::new("kernel")
            .field("t", "x")
            .finish();
        cache
            .get_or_make("kernel", &key, "not a kernel", |dir| {
                std::fs::write(dir.join(host.image_target()), b"not a kernel")?;
                let meta = serde_json::json!({
                    "kernel": "k", "arch": host, "variant": "v", "key": key,
                    "source": {"kind": "tarball", "location": "x", "hash": "h", "version": "6.12"},
                    "patches": [], "apply_method": "none", "fuzzed": [], "fragments": [],
                    "base": {"target": "tinyconfig"}, "config_hash": "c", "hz": 100,
                    "compiler": "gcc", "build_id": null, "image": "/old/place/bzImage",
                    "config": "/old/config", "vmlinux": "/old/vmlinux", "log": "/old/log",
                    "build_dir": "/old", "build_secs": 1.0, "reused_tree_of": null,
                    "objects": 1, "built_at": "t"
                });
                crate::util::atomic_write_json(&dir.join("meta.json"), &meta)
            })
            .unwrap();
        let (arch, image) = newest_host_kernel(&cache).unwrap();
        assert_eq!(arch, host);
        assert!(image.starts_with(cache.root()), "{}", image.display());
        let facts = gather(Some(&cache), cache.root(), "test".into(), true);
        let r = check(&items(), &System, &facts);
        let kvm = r.lines.iter().find(|l| l.name == "kvm").unwrap();
        match &facts.kvm {
            Kvm::Probed(c) => {
                if Path::new("/dev/kvm").exists() {
                    assert_eq!(c.accel, Accel::Tcg, "a file of text booted: {c:?}");
                }
                assert!(kvm.detail.starts_with(&c.reason), "{kvm:?}");
            }
            other => panic!("expected a probe, got {other:?}"),
        }
    }
}
