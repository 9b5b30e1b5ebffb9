//! The ELF closure of a set of binaries: every file the dynamic loader
//! will open to start them, found the way glibc's `ld.so` finds it.
//!
//! The image has no `/etc/ld.so.cache` (building one would mean running
//! the target's `ldconfig`), so the guest loader searches DT_RPATH or
//! DT_RUNPATH and then its built-in system directories. The closure uses
//! exactly that order, so a library found here is a library the guest
//! finds, and one the guest would miss is an error now, not at boot.

use super::root::{Resolved, Root};
use crate::matrix::Arch;
use anyhow::{Context, Result, bail};
use goblin::elf::Elf;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Files and symlinks to copy into the image, relative to the root.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Closure {
    /// Real files: the binaries, their libraries, the loader.
    pub files: BTreeSet<String>,
    /// Every symlink met on the way, with its target as written.
    pub links: BTreeMap<String, String>,
    /// Libraries replaced by stubs (`image::stub`): the path the loader
    /// opens → (soname, the real library's path). Neither the real file
    /// nor its dependencies are copied.
    pub stubs: BTreeMap<String, (String, String)>,
}

/// Debian's multiarch triplet, the name of its library directories.
pub fn triplet(arch: Arch) -> &'static str {
    arch.facts().triplet
}

/// `e_machine` of the arch's ELF files.
pub fn elf_machine(arch: Arch) -> u16 {
    arch.facts().elf_machine
}

/// The loader's system search path (Debian's glibc, as printed by
/// `ld.so --help`). `lib64` is not on it: it only holds the loader link.
pub fn system_dirs(arch: Arch) -> Vec<String> {
    let t = triplet(arch);
    vec![
        format!("lib/{t}"),
        format!("usr/lib/{t}"),
        "lib".into(),
        "usr/lib".into(),
    ]
}

/// One object waiting to have its dependencies found.
struct Pending {
    /// The real path of the file.
    real: String,
    /// The path it was loaded by, whose directory is `$ORIGIN`.
    loaded_as: String,
    /// The kept binary that pulled it in, for error messages.
    via: String,
    /// DT_RPATH directories of the objects that loaded it, which glibc
    /// also searches for its dependencies when it has no DT_RUNPATH.
    inherited_rpath: Vec<String>,
}

/// The closure of `wanted` (paths inside the root, symlinks allowed).
/// A DT_NEEDED name in `stubbed` ends the walk there: see `image::stub`.
pub fn closure(
    root: &Root,
    arch: Arch,
    wanted: &[String],
    stubbed: &BTreeSet<String>,
) -> Result<Closure> {
    let mut out = Closure::default();
    let mut queue = VecDeque::new();
    for w in wanted {
        let Some(r) = root.resolve(w)? else {
            bail!("{w}: not in the extracted tree (is its package in the recipe?)");
        };
        if !root.host_path(&r.real).is_file() {
            bail!("{w}: resolves to {}, which is not a file", r.real);
        }
        queue.push_back(Pending {
            real: r.real.clone(),
            loaded_as: r.real.clone(),
            via: w.clone(),
            inherited_rpath: Vec::new(),
        });
        record(&mut out, r);
    }
    let mut seen = BTreeSet::new();
    while let Some(obj) = queue.pop_front() {
        if !seen.insert(obj.real.clone()) {
            continue;
        }
        let data = std::fs::read(root.host_path(&obj.real))
            .with_context(|| format!("reading {}", obj.real))?;
        if !data.starts_with(b"\x7fELF") {
            continue; // a script or a data file: nothing to load
        }
        let elf = Elf::parse(&data).with_context(|| format!("{}: bad ELF file", obj.real))?;
        if elf.header.e_machine != elf_machine(arch) {
            bail!(
                "{}: ELF machine {} is not {arch}'s ({})",
                obj.real,
                elf.header.e_machine,
                elf_machine(arch)
            );
        }
        let origin = parent(&obj.loaded_as);
        let expand = |list: &[&str]| -> Vec<String> {
            list.iter()
                .flat_map(|s| s.split(':'))
                .filter_map(|d| expand_dir(d, &origin, arch))
                .collect()
        };
        let rpath = expand(&elf.rpaths);
        let runpath = expand(&elf.runpaths);
        // glibc: DT_RUNPATH, if present, replaces every DT_RPATH.
        let (search, inherited_rpath) = if runpath.is_empty() {
            let chain: Vec<String> = rpath.iter().chain(&obj.inherited_rpath).cloned().collect();
            (chain.clone(), chain)
        } else {
            (runpath, obj.inherited_rpath.clone())
        };
        let search: Vec<String> = search.into_iter().chain(system_dirs(arch)).collect();

        if let Some(interp) = elf.interpreter {
            let Some(r) = root.resolve(interp)? else {
                bail!(
                    "{} (needed by {}): its loader {interp} is not in the tree",
                    obj.real,
                    obj.via
                );
            };
            queue.push_back(Pending {
                real: r.real.clone(),
                loaded_as: interp.trim_start_matches('/').to_string(),
                via: obj.via.clone(),
                inherited_rpath: Vec::new(),
            });
            record(&mut out, r);
        }
        for lib in &elf.libraries {
            let Some((loaded_as, r)) = find_library(root, arch, lib, &search)? else {
                bail!(
                    "{} (needed by {}): library {lib} not found in {}",
                    obj.real,
                    obj.via,
                    search.join(", ")
                );
            };
            if stubbed.contains(*lib) {
                out.stubs
                    .insert(loaded_as, (lib.to_string(), r.real.clone()));
                continue;
            }
            queue.push_back(Pending {
                real: r.real.clone(),
                loaded_as,
                via: obj.via.clone(),
                inherited_rpath: inherited_rpath.clone(),
            });
            record(&mut out, r);
        }
    }
    Ok(out)
}

fn record(out: &mut Closure, r: Resolved) {
    out.files.insert(r.real);
    out.links.extend(r.links);
}

/// Find a DT_NEEDED name: a name with a `/` is a path; otherwise the
/// first directory of `search` holding a file of our machine, skipping
/// other machines' files as `ld.so` does.
fn find_library(
    root: &Root,
    arch: Arch,
    name: &str,
    search: &[String],
) -> Result<Option<(String, Resolved)>> {
    if name.contains('/') {
        return Ok(root
            .resolve(name)?
            .map(|r| (name.trim_start_matches('/').to_string(), r)));
    }
    for dir in search {
        let cand = format!("{dir}/{name}");
        let Some(r) = root.resolve(&cand)? else {
            continue;
        };
        let host = root.host_path(&r.real);
        if !host.is_file() {
            continue;
        }
        match machine_of(&host)? {
            Some(m) if m != elf_machine(arch) => continue,
            _ => return Ok(Some((cand, r))),
        }
    }
    Ok(None)
}

/// The ELF machine of a file, or None if it is not ELF.
fn machine_of(path: &std::path::Path) -> Result<Option<u16>> {
    use std::io::Read;
    let mut head = [0u8; 64];
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let n = f.read(&mut head)?;
    if n < 20 || !head.starts_with(b"\x7fELF") {
        return Ok(None);
    }
    // e_machine sits at offset 18 in both ELF classes, in the file's
    // byte order (EI_DATA: 1 little, 2 big).
    let m = [head[18], head[19]];
    Ok(Some(if head[5] == 2 {
        u16::from_be_bytes(m)
    } else {
        u16::from_le_bytes(m)
    }))
}

fn parent(path: &str) -> String {
    path.rsplit_once('/')
        .map(|(p, _)| p.to_string())
        .unwrap_or_default()
}

/// One RPATH/RUNPATH entry as a root-relative directory: `$ORIGIN`,
/// `$LIB` and `$PLATFORM` expanded as glibc does on Debian. A relative
/// entry would be relative to the process's working directory, which
/// means nothing in an image, so it is dropped.
fn expand_dir(entry: &str, origin: &str, arch: Arch) -> Option<String> {
    let platform = arch.facts().platform;
    let lib = format!("lib/{}", triplet(arch));
    let origin_abs = format!("/{origin}");
    let mut s = entry.to_string();
    for (token, value) in [
        ("ORIGIN", origin_abs.as_str()),
        ("LIB", lib.as_str()),
        ("PLATFORM", platform),
    ] {
        s = s.replace(&format!("${{{token}}}"), value);
        s = s.replace(&format!("${token}"), value);
    }
    if !s.starts_with('/') {
        return None;
    }
    Some(super::root::lexical_normalize(&s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arch_tables_elf_machines_are_goblins() {
        assert_eq!(elf_machine(Arch::X86_64), goblin::elf::header::EM_X86_64);
        assert_eq!(elf_machine(Arch::Arm64), goblin::elf::header::EM_AARCH64);
    }

    #[test]
    fn origin_and_tokens_expand_inside_the_root() {
        let a = Arch::X86_64;
        assert_eq!(
            expand_dir("$ORIGIN/../lib", "usr/bin", a).as_deref(),
            Some("usr/lib")
        );
        assert_eq!(
            expand_dir("${ORIGIN}/private", "opt/x", a).as_deref(),
            Some("opt/x/private")
        );
        assert_eq!(
            expand_dir("/usr/$LIB/ceph", "usr/bin", a).as_deref(),
            Some("usr/lib/x86_64-linux-gnu/ceph")
        );
        assert_eq!(
            expand_dir("/opt/$PLATFORM", "x", Arch::Arm64).as_deref(),
            Some("opt/aarch64")
        );
        // $ORIGIN can't climb above the root.
        assert_eq!(
            expand_dir("$ORIGIN/../../..", "usr/bin", a).as_deref(),
            Some("")
        );
        assert_eq!(expand_dir("relative/dir", "usr/bin", a), None);
    }

    #[test]
    fn system_dirs_follow_the_loader() {
        assert_eq!(
            system_dirs(Arch::Arm64),
            [
                "lib/aarch64-linux-gnu",
                "usr/lib/aarch64-linux-gnu",
                "lib",
                "usr/lib"
            ]
        );
    }

    #[test]
    fn a_script_has_no_dependencies_and_a_missing_binary_is_named() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("usr/bin")).unwrap();
        std::fs::write(d.path().join("usr/bin/hello"), "#!/bin/sh\necho hi\n").unwrap();
        std::os::unix::fs::symlink("hello", d.path().join("usr/bin/hi")).unwrap();
        let root = Root::new(d.path());
        let c = closure(
            &root,
            Arch::X86_64,
            &["usr/bin/hi".into()],
            &BTreeSet::new(),
        )
        .unwrap();
        assert_eq!(c.files.iter().collect::<Vec<_>>(), ["usr/bin/hello"]);
        assert_eq!(c.links.get("usr/bin/hi").map(String::as_str), Some("hello"));
        let err = closure(
            &root,
            Arch::X86_64,
            &["usr/bin/fio".into()],
            &BTreeSet::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("usr/bin/fio"), "{err}");
    }

    /// Compile C into `out` with the host's `cc`: libc-free objects, so
    /// the fake root holds only what the test puts there.
    fn cc(dir: &std::path::Path, out: &str, src: &str, args: &[&str]) {
        let c = dir.join(format!("{out}.c"));
        std::fs::write(&c, src).unwrap();
        let st = std::process::Command::new("cc")
            .args(["-nostdlib", "-fPIC", "-o"])
            .arg(dir.join(out))
            .arg(&c)
            .args(args)
            .current_dir(dir)
            .status()
            .expect("cc (build-essential)");
        assert!(st.success(), "cc {out}");
    }

    /// `usr/bin/app` → libfoo.so.1 (via the app's rpath) → libbar.so.2,
    /// and the app's loader behind an absolute `lib64` link. `rpath_flag`
    /// picks DT_RUNPATH or DT_RPATH; `bar_dir` is where libbar lives.
    fn fake_root(rpath_flag: &str, bar_dir: &str) -> (tempfile::TempDir, Root, Arch) {
        let arch = Arch::host().expect("a host lab supports");
        let t = triplet(arch);
        let build = tempfile::tempdir().unwrap();
        let b = build.path();
        cc(
            b,
            "libbar.so.2",
            "int bar(void){return 2;}",
            &["-shared", "-Wl,-soname,libbar.so.2"],
        );
        cc(
            b,
            "libfoo.so.1",
            "int bar(void); int foo(void){return bar()+1;}",
            &["-shared", "-Wl,-soname,libfoo.so.1", "libbar.so.2"],
        );
        cc(
            b,
            "app",
            "int foo(void); void _start(void){foo(); for(;;);}",
            &[
                "libfoo.so.1",
                "-Wl,-rpath-link,.",
                rpath_flag,
                "-Wl,-rpath,$ORIGIN/../lib/private",
                "-Wl,--dynamic-linker=/lib64/ld-fake.so.2",
            ],
        );
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        let bar_dir = bar_dir.replace("TRIPLET", t);
        for dir in [
            "usr/bin",
            "usr/lib/private",
            "lib64",
            &format!("lib/{t}"),
            &bar_dir,
        ] {
            std::fs::create_dir_all(r.join(dir)).unwrap();
        }
        std::fs::copy(b.join("app"), r.join("usr/bin/app")).unwrap();
        std::fs::copy(
            b.join("libfoo.so.1"),
            r.join("usr/lib/private/libfoo.so.1.0"),
        )
        .unwrap();
        std::os::unix::fs::symlink("libfoo.so.1.0", r.join("usr/lib/private/libfoo.so.1")).unwrap();
        std::fs::copy(b.join("libbar.so.2"), r.join(&bar_dir).join("libbar.so.2")).unwrap();
        std::fs::write(r.join(format!("lib/{t}/ld-fake.so.2")), "loader").unwrap();
        std::os::unix::fs::symlink(
            format!("/lib/{t}/ld-fake.so.2"),
            r.join("lib64/ld-fake.so.2"),
        )
        .unwrap();
        let root = Root::new(r);
        (d, root, arch)
    }

    #[test]
    fn follows_runpath_origin_system_dirs_and_the_loader() {
        let (_d, root, arch) = fake_root("-Wl,--enable-new-dtags", "lib/TRIPLET");
        let t = triplet(arch);
        let c = closure(&root, arch, &["usr/bin/app".into()], &BTreeSet::new()).unwrap();
        let files: Vec<String> = c.files.iter().cloned().collect();
        let mut want = vec![
            "usr/bin/app".to_string(),
            "usr/lib/private/libfoo.so.1.0".into(),
            format!("lib/{t}/libbar.so.2"),
            format!("lib/{t}/ld-fake.so.2"),
        ];
        want.sort();
        assert_eq!(files, want);
        assert_eq!(c.links["usr/lib/private/libfoo.so.1"], "libfoo.so.1.0");
        assert_eq!(
            c.links["lib64/ld-fake.so.2"],
            format!("/lib/{t}/ld-fake.so.2")
        );
    }

    #[test]
    fn runpath_is_not_inherited_but_rpath_is() {
        // libbar beside libfoo: libfoo has no path of its own, so only an
        // inherited DT_RPATH of the app finds it, never a DT_RUNPATH.
        let (_d, root, arch) = fake_root("-Wl,--enable-new-dtags", "usr/lib/private");
        let err = closure(&root, arch, &["usr/bin/app".into()], &BTreeSet::new()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("libbar.so.2"), "{msg}");
        assert!(msg.contains("usr/lib/private/libfoo.so.1.0"), "{msg}");
        assert!(msg.contains("needed by usr/bin/app"), "{msg}");

        let (_d, root, arch) = fake_root("-Wl,--disable-new-dtags", "usr/lib/private");
        let c = closure(&root, arch, &["usr/bin/app".into()], &BTreeSet::new()).unwrap();
        assert!(c.files.contains("usr/lib/private/libbar.so.2"), "{c:?}");
    }

    #[test]
    fn a_binary_for_another_machine_is_refused() {
        let (_d, root, arch) = fake_root("-Wl,--enable-new-dtags", "lib/TRIPLET");
        let other = if arch == Arch::X86_64 {
            Arch::Arm64
        } else {
            Arch::X86_64
        };
        let err = closure(&root, other, &["usr/bin/app".into()], &BTreeSet::new()).unwrap_err();
        assert!(err.to_string().contains("ELF machine"), "{err}");
    }

    #[test]
    fn machine_of_reads_the_header() {
        let d = tempfile::tempdir().unwrap();
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[5] = 1;
        elf[18..20].copy_from_slice(&183u16.to_le_bytes());
        std::fs::write(d.path().join("a"), &elf).unwrap();
        std::fs::write(d.path().join("b"), "text").unwrap();
        assert_eq!(machine_of(&d.path().join("a")).unwrap(), Some(183));
        assert_eq!(machine_of(&d.path().join("b")).unwrap(), None);
    }
}
