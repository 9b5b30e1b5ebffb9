//! Stub libraries for what the kept binaries link but lab never calls.
//!
//! Debian's fio links Ceph, Gluster, RDMA, NBD and PMDK for ioengines
//! lab's matrices rarely name. Their closure is about 50 libraries and
//! 70 MB (ICU data alone is 30 MB), and with BIND_NOW every fio start
//! maps and relocates all of them: 0.5 s per start under TCG, once per
//! cell, and a bigger initramfs to unpack at every boot. The recipe's
//! `stubs:` names such libraries; each is replaced by a library of the
//! same soname that defines exactly the symbols (and symbol versions)
//! the image's other objects import from it, each a trap. The binaries
//! themselves are Debian's, unchanged. A matrix that names one of those
//! ioengines gets an image with the real library (`Recipe::for_engines`).

use super::closure::Closure;
use super::root::Root;
use crate::matrix::Arch;
use anyhow::{Context, Result, bail};
use goblin::elf::Elf;
use goblin::elf::sym::{STB_LOCAL, STB_WEAK, STT_OBJECT, STT_TLS};
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// One stub library to write: its soname, where the loader will look
/// for it, and what it must define.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StubLib {
    pub soname: String,
    /// Paths (inside the tree) the importers load it as.
    pub paths: BTreeSet<String>,
    /// Symbol name → the versions importers ask for (`None`: unversioned).
    pub symbols: BTreeMap<String, BTreeSet<Option<String>>>,
    /// Data symbols and their sizes; everything else is a function.
    pub objects: BTreeMap<String, u64>,
}

/// What the stubs must define: every symbol an object of the closure
/// imports from a stubbed soname, with the version it asks for. Weak
/// imports are left out, so the importer sees them as absent.
pub fn plan(root: &Root, closure: &Closure) -> Result<Vec<StubLib>> {
    let mut libs: BTreeMap<String, StubLib> = BTreeMap::new();
    let mut exports: BTreeMap<String, BTreeMap<String, (u8, u64)>> = BTreeMap::new();
    for (path, (soname, real)) in &closure.stubs {
        let lib = libs.entry(soname.clone()).or_insert_with(|| StubLib {
            soname: soname.clone(),
            paths: BTreeSet::new(),
            symbols: BTreeMap::new(),
            objects: BTreeMap::new(),
        });
        lib.paths.insert(path.clone());
        if !exports.contains_key(soname) {
            let data = std::fs::read(root.host_path(real))
                .with_context(|| format!("reading {real} (stubbed as {soname})"))?;
            exports.insert(soname.clone(), defined(&data, real)?);
        }
    }
    for file in &closure.files {
        let data =
            std::fs::read(root.host_path(file)).with_context(|| format!("reading {file}"))?;
        if !data.starts_with(b"\x7fELF") {
            continue;
        }
        let elf = Elf::parse(&data).with_context(|| format!("{file}: bad ELF file"))?;
        let needed: BTreeSet<&str> = elf.libraries.iter().copied().collect();
        // Version index → (file, version name), from DT_VERNEED.
        let mut wanted_version: BTreeMap<u16, (String, String)> = BTreeMap::new();
        if let Some(vn) = &elf.verneed {
            for need in vn.iter() {
                let file = elf.dynstrtab.get_at(need.vn_file).unwrap_or("").to_string();
                for aux in need.iter() {
                    let name = elf.dynstrtab.get_at(aux.vna_name).unwrap_or("").to_string();
                    wanted_version.insert(aux.vna_other, (file.clone(), name));
                }
            }
        }
        for (i, sym) in elf.dynsyms.iter().enumerate() {
            if !sym.is_import() || sym.st_bind() == STB_WEAK || sym.st_bind() == STB_LOCAL {
                continue;
            }
            let Some(name) = elf.dynstrtab.get_at(sym.st_name).filter(|n| !n.is_empty()) else {
                continue;
            };
            let version = elf
                .versym
                .as_ref()
                .and_then(|v| v.get_at(i))
                .map(|v| v.version())
                .and_then(|ndx| wanted_version.get(&ndx));
            for (soname, lib) in libs.iter_mut() {
                if !needed.contains(soname.as_str()) {
                    continue;
                }
                let from_here = match version {
                    Some((vfile, _)) => vfile == soname,
                    None => exports[soname].contains_key(name),
                };
                if !from_here {
                    continue;
                }
                let Some(&(kind, size)) = exports[soname].get(name) else {
                    bail!("{file} imports {name} from {soname}, which does not define it");
                };
                if kind == STT_TLS {
                    bail!(
                        "{file} imports the thread-local {name} from {soname}: it can't be stubbed"
                    );
                }
                if kind == STT_OBJECT {
                    lib.objects.insert(name.to_string(), size);
                }
                lib.symbols
                    .entry(name.to_string())
                    .or_default()
                    .insert(version.map(|(_, v)| v.clone()));
            }
        }
    }
    Ok(libs.into_values().collect())
}

/// The defined, exported dynamic symbols of a library: name → (type, size).
fn defined(data: &[u8], what: &str) -> Result<BTreeMap<String, (u8, u64)>> {
    let elf = Elf::parse(data).with_context(|| format!("{what}: bad ELF file"))?;
    Ok(elf
        .dynsyms
        .iter()
        .filter(|s| !s.is_import() && s.st_bind() != STB_LOCAL && s.st_name != 0)
        .filter_map(|s| {
            let n = elf.dynstrtab.get_at(s.st_name)?;
            Some((n.to_string(), (s.st_type(), s.st_size)))
        })
        .collect())
}

/// The C source and the linker version script of a stub. A name asked
/// for in several versions gets one trap per version, tied to the
/// versions with `.symver`; the newest is the default.
pub fn source(lib: &StubLib) -> (String, String) {
    let mut c = format!(
        "/* lab: stub {} -- every function traps; see image/stub.rs */\n",
        lib.soname
    );
    let mut nodes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut plain: Vec<String> = Vec::new();
    for (n, (name, versions)) in lib.symbols.iter().enumerate() {
        let define = |c: &mut String, sym: &str| match lib.objects.get(name) {
            Some(size) => c.push_str(&format!(
                "__attribute__((used, aligned(16))) char {sym}[{}];\n",
                size.max(&1)
            )),
            None => c.push_str(&format!(
                "__attribute__((used)) void {sym}(void) {{ __builtin_trap(); }}\n"
            )),
        };
        let named: Vec<&String> = versions.iter().flatten().collect();
        if named.len() <= 1 {
            define(&mut c, name);
            match named.first() {
                Some(v) => nodes.entry((*v).clone()).or_default().push(name.clone()),
                None => plain.push(name.clone()),
            }
            continue;
        }
        for (k, v) in named.iter().enumerate() {
            let alias = format!("lab_stub_{n}_{k}");
            define(&mut c, &alias);
            let at = if k + 1 == named.len() { "@@" } else { "@" };
            c.push_str(&format!("__asm__(\".symver {alias}, {name}{at}{v}\");\n"));
            nodes.entry((*v).clone()).or_default();
        }
    }
    let mut script = String::new();
    if nodes.is_empty() {
        script.push_str(&format!("{{ global: {} local: *; }};\n", globals(&plain)));
    } else {
        let last = nodes.len() - 1;
        for (i, (v, names)) in nodes.iter().enumerate() {
            let mut names = names.clone();
            if i == 0 {
                // An unversioned import binds to a default version.
                names.extend(plain.iter().cloned());
            }
            let local = if i == last { " local: *;" } else { "" };
            script.push_str(&format!("{v} {{ global: {}{local} }};\n", globals(&names)));
        }
    }
    (c, script)
}

fn globals(names: &[String]) -> String {
    names.iter().map(|n| format!("{n}; ")).collect()
}

/// The C compiler that builds stubs for `arch` on this host.
pub fn compiler(arch: Arch) -> String {
    match arch.cross_compile(Arch::host()) {
        Some((prefix, _)) => format!("{prefix}gcc"),
        None => "gcc".into(),
    }
}

/// The compiler's version line, part of the image key: another gcc
/// may lay the stub out differently. The kernel build's own check, so a
/// missing cross compiler names its Debian package here too.
pub fn compiler_version(arch: Arch) -> Result<String> {
    crate::kernel::build::compiler_version(arch.cross_compile(Arch::host()))
        .context("the C compiler that builds the image's stub libraries")
}

/// Compile a stub. Stripped and without a build-id, so the same
/// compiler gives the same bytes.
pub fn compile(lib: &StubLib, arch: Arch) -> Result<Vec<u8>> {
    let dir = tempfile::tempdir()?;
    let (c, script) = source(lib);
    let (src, map, out) = (
        dir.path().join("stub.c"),
        dir.path().join("stub.map"),
        dir.path().join("stub.so"),
    );
    std::fs::write(&src, c)?;
    std::fs::write(&map, script)?;
    let cc = compiler(arch);
    let mut cmd = Command::new(&cc);
    cmd.current_dir(dir.path())
        .args(["-shared", "-fPIC", "-nostdlib", "-O0", "-g0", "-s"])
        .arg(format!("-Wl,-soname,{}", lib.soname))
        .arg("-Wl,--version-script=stub.map")
        .arg("-Wl,--build-id=none")
        .args(["-o", "stub.so", "stub.c"]);
    crate::util::run_output(&mut cmd)
        .with_context(|| format!("{cc}: building the stub of {}", lib.soname))?;
    std::fs::read(&out).with_context(|| format!("reading {}", out.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(symbols: &[(&str, &[Option<&str>])]) -> StubLib {
        StubLib {
            soname: "libx.so.1".into(),
            paths: BTreeSet::from(["usr/lib/libx.so.1".to_string()]),
            symbols: symbols
                .iter()
                .map(|(n, vs)| {
                    (
                        n.to_string(),
                        vs.iter().map(|v| v.map(String::from)).collect(),
                    )
                })
                .collect(),
            objects: BTreeMap::new(),
        }
    }

    #[test]
    fn unversioned_names_get_one_anonymous_node() {
        let (c, map) = source(&lib(&[("rados_create", &[None]), ("rbd_open", &[None])]));
        assert!(
            c.contains("void rados_create(void) { __builtin_trap(); }"),
            "{c}"
        );
        assert_eq!(map, "{ global: rados_create; rbd_open;  local: *; };\n");
    }

    #[test]
    fn versions_become_nodes_and_a_name_in_two_versions_gets_symver_aliases() {
        let mut l = lib(&[
            ("glfs_close", &[Some("GFAPI_3.4.0")]),
            ("glfs_fstat", &[Some("GFAPI_3.4.0"), Some("GFAPI_6.0")]),
        ]);
        l.objects.insert("glfs_close".into(), 24);
        let (c, map) = source(&l);
        assert!(c.contains("char glfs_close[24];"), "{c}");
        assert!(
            c.contains(".symver lab_stub_1_0, glfs_fstat@GFAPI_3.4.0"),
            "{c}"
        );
        assert!(
            c.contains(".symver lab_stub_1_1, glfs_fstat@@GFAPI_6.0"),
            "{c}"
        );
        assert_eq!(
            map,
            "GFAPI_3.4.0 { global: glfs_close;  };\nGFAPI_6.0 { global:  local: *; };\n"
        );
    }
}
