//! Tests of gc, export, import and ls against real cache directories.

use super::gc::*;
use super::ls::*;
use super::size::*;
use super::transfer::*;
use super::*;
use crate::cache::KeyBuilder;
use crate::kernel::KernelBuild;
use crate::matrix::Arch;
use std::path::Path;
use std::process::Command;

/// A synthetic entry of `bytes` bytes, created at `created`.
fn entry(cache: &Cache, kind: &str, name: &str, created: &str, bytes: usize) -> Key {
    let key = KeyBuilder::new(kind).field("name", name).finish();
    let (p, _) = cache
        .get_or_make(kind, &key, name, |dir| {
            std::fs::write(dir.join("data"), vec![7u8; bytes])?;
            Ok(())
        })
        .unwrap();
    set_created(&p, created);
    key
}

fn set_created(entry: &Path, created: &str) {
    let f = entry.join(ENTRY_INFO);
    let mut info: EntryInfo = crate::util::read_json(&f).unwrap();
    info.created = created.to_string();
    crate::util::atomic_write_json(&f, &info).unwrap();
}

/// A kernel entry laid out as kernel::build writes one, with absolute
/// paths into the cache it was built in, and its config pointer.
fn kernel_entry(cache: &Cache, name: &str) -> (Key, String) {
    let key = KeyBuilder::new("kernel").field("name", name).finish();
    let prekey = KeyBuilder::new("kernel-config")
        .field("name", name)
        .finish();
    let (p, _) = cache
        .get_or_make("kernel", &key, name, |dir| {
            std::fs::write(dir.join("bzImage"), format!("image of {name}"))?;
            std::fs::write(dir.join("config"), "CONFIG_HZ_100=y\n")?;
            std::fs::write(dir.join("vmlinux"), "elf")?;
            std::fs::write(dir.join("build.log"), "log")?;
            let meta = serde_json::json!({
                "kernel": name, "arch": Arch::X86_64, "variant": "before", "key": key,
                "source": {"kind": "tarball", "location": "x", "hash": "h", "version": "6.12"},
                "patches": [], "apply_method": "none", "fuzzed": [], "fragments": [],
                "base": {"target": "tinyconfig"}, "config_hash": "c", "hz": 100,
                "compiler": "gcc", "build_id": null,
                "image": dir.join("bzImage"), "config": dir.join("config"),
                "vmlinux": dir.join("vmlinux"), "log": dir.join("build.log"),
                "build_dir": "/gone/out", "build_secs": 1.0, "reused_tree_of": null,
                "objects": 1, "built_at": "t"
            });
            crate::util::atomic_write_json(&dir.join("meta.json"), &meta)
        })
        .unwrap();
    let _ = p;
    let pointer = format!("pointers/kernel-config-{prekey}");
    crate::util::atomic_write(&cache.root().join(&pointer), key.0.as_bytes()).unwrap();
    (key, pointer)
}

/// What kernel::build_one does first: pointer, then entry.
fn lookup_like_a_build(cache: &Cache, pointer: &str) -> Option<KernelBuild> {
    let key = std::fs::read_to_string(cache.root().join(pointer)).ok()?;
    let entry = cache.get("kernel", &Key(key.trim().to_string()))?;
    KernelBuild::from_entry(&entry).ok()
}

#[test]
fn export_then_import_into_another_cache_finds_every_entry_and_pointer() {
    for ext in ["tar.zst", "tar.gz", "tar"] {
        let a_dir = tempfile::tempdir().unwrap();
        let b_dir = tempfile::tempdir().unwrap();
        let a = Cache::at(a_dir.path()).unwrap();
        let b = Cache::at(b_dir.path()).unwrap();
        let (k1, p1) = kernel_entry(&a, "x86_64-hz100-before");
        let (k2, p2) = kernel_entry(&a, "x86_64-hz100-after");
        let img = entry(&a, "image", "image x86_64", "2026-11-01T00:00:00Z", 1000);
        crate::util::atomic_write(
            &a.root().join("image-latest/x86_64-recipe"),
            format!("{img}\n").as_bytes(),
        )
        .unwrap();
        let src = entry(&a, "source", "tree", "2026-11-01T00:00:00Z", 10);

        let file = a_dir.path().join(format!("out/export.{ext}"));
        let kinds = vec!["kernel".to_string(), "image".to_string()];
        let idx = export_from(&a, &file, &kinds, &[]).unwrap();
        assert_eq!(idx.entries.len(), 3, "{ext}");
        assert_eq!(idx.pointers.len(), 3, "{idx:?}");
        assert!(file.is_file());
        // It holds the guest's SSH host key: the owner's alone.
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");

        let r = import_into(&b, &file).unwrap();
        assert_eq!(r.imported.len(), 3);
        assert_eq!(r.pointers, 3);
        for (kind, key) in [("kernel", &k1), ("kernel", &k2), ("image", &img)] {
            let e = b.get(kind, key).unwrap_or_else(|| panic!("{kind} {key}"));
            assert!(e.starts_with(b.root()));
        }
        // Not asked for: the source tree stays behind.
        assert!(b.get("source", &src).is_none());
        // A build in the new cache finds both kernels through their
        // pointers, with paths inside the new cache.
        for (p, name) in [(&p1, "x86_64-hz100-before"), (&p2, "x86_64-hz100-after")] {
            let kb = lookup_like_a_build(&b, p).expect("cache hit after import");
            assert!(kb.image.starts_with(b.root()), "{}", kb.image.display());
            assert_eq!(
                std::fs::read_to_string(&kb.image).unwrap(),
                format!("image of {name}")
            );
            assert!(kb.config.is_file() && kb.vmlinux.is_file() && kb.log.is_file());
        }
        assert_eq!(
            std::fs::read_to_string(b.root().join("image-latest/x86_64-recipe"))
                .unwrap()
                .trim(),
            img.0
        );
        // No temp directory is left in the cache.
        assert!(
            std::fs::read_dir(b.root())
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().starts_with('.'))
        );
        // A second import skips what is there.
        let again = import_into(&b, &file).unwrap();
        assert_eq!(again.imported.len(), 0);
        assert_eq!(again.skipped.len(), 3);
        assert_eq!(b.list().unwrap().len(), 3);
    }
}

#[test]
fn export_by_key_prefix_takes_only_that_entry_and_its_pointer() {
    let a_dir = tempfile::tempdir().unwrap();
    let b_dir = tempfile::tempdir().unwrap();
    let a = Cache::at(a_dir.path()).unwrap();
    let b = Cache::at(b_dir.path()).unwrap();
    let (k1, p1) = kernel_entry(&a, "one");
    let (k2, _) = kernel_entry(&a, "two");
    let file = a_dir.path().join("one.tar.zst");
    let idx = export_from(&a, &file, &[], &[k1.short().to_string()]).unwrap();
    assert_eq!(idx.entries, vec![("kernel".to_string(), k1.clone())]);
    assert_eq!(idx.pointers, vec![p1.clone()]);
    import_into(&b, &file).unwrap();
    assert!(b.get("kernel", &k1).is_some());
    assert!(b.get("kernel", &k2).is_none());
    assert!(lookup_like_a_build(&b, &p1).is_some());

    let e = export_from(&a, &file, &[], &["ffffnothing".into()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("no entry's key starts with 'ffffnothing'")
    );
    let e = export_from(&a, &file, &["image".into()], &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("has no entries of kind image (it has: kernel)"),
        "{e}"
    );
    // One kind present of two is enough.
    let idx = export_from(&a, &file, &["image".into(), "kernel".into()], &[]).unwrap();
    assert_eq!(idx.entries.len(), 2);
    let e = export_from(&a, &a_dir.path().join("x.zip"), &[], &[]).unwrap_err();
    assert!(e.to_string().contains(".tar, .tar.zst or .tar.gz"));
}

#[test]
fn import_refuses_an_archive_that_is_not_an_export() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path().join("cache")).unwrap();
    std::fs::write(d.path().join("f"), "x").unwrap();
    let file = d.path().join("plain.tar");
    crate::util::run_output(
        Command::new("tar")
            .arg("-cf")
            .arg(&file)
            .arg("-C")
            .arg(d.path())
            .arg("f"),
    )
    .unwrap();
    let e = format!("{:#}", import_into(&c, &file).unwrap_err());
    assert!(e.contains("is not a lab cache export"), "{e}");
    assert!(c.list().unwrap().is_empty());
    assert!(
        std::fs::read_dir(c.root())
            .unwrap()
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().starts_with(".import"))
    );
}

#[test]
fn gc_keeps_the_n_newest_of_each_kind_and_drops_their_pointers() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path()).unwrap();
    let k: Vec<Key> = (0..4)
        .map(|i| {
            entry(
                &c,
                "kernel",
                &format!("k{i}"),
                &format!("2026-11-0{}T00:00:00Z", i + 1),
                100,
            )
        })
        .collect();
    let img = entry(&c, "image", "i", "2026-10-01T00:00:00Z", 100);
    // Pointers to an old and a new kernel.
    crate::util::atomic_write(
        &c.root().join("pointers/kernel-config-old"),
        k[0].0.as_bytes(),
    )
    .unwrap();
    crate::util::atomic_write(
        &c.root().join("pointers/kernel-config-new"),
        k[3].0.as_bytes(),
    )
    .unwrap();
    // A temp directory of a dead build, and one of this process.
    let stale = c.root().join("kernel/.tmp/abcd.999999999");
    let live = c
        .root()
        .join(format!("kernel/.tmp/abcd.{}", std::process::id()));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::create_dir_all(&live).unwrap();

    let r = gc_in(
        &c,
        GcOptions {
            keep: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    let removed: Vec<&Key> = r.removed.iter().map(|(i, _)| &i.key).collect();
    assert_eq!(removed, vec![&k[0], &k[1]]);
    assert!(c.get("kernel", &k[2]).is_some() && c.get("kernel", &k[3]).is_some());
    assert!(
        c.get("image", &img).is_some(),
        "one image is within --keep 2"
    );
    assert_eq!(r.temps_removed, 1);
    assert!(!stale.exists() && live.exists());
    assert_eq!(r.pointers_removed, 1);
    assert!(!c.root().join("pointers/kernel-config-old").exists());
    assert!(c.root().join("pointers/kernel-config-new").exists());
    assert!(r.bytes_after < r.bytes_before);
    assert!(ls_text(&c).unwrap().contains("3 entries"));
}

#[test]
fn gc_max_size_removes_the_oldest_until_the_cache_fits() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path()).unwrap();
    let keys: Vec<Key> = (0..4)
        .map(|i| {
            entry(
                &c,
                if i % 2 == 0 { "kernel" } else { "image" },
                &format!("e{i}"),
                &format!("2026-11-0{}T00:00:00Z", i + 1),
                256 << 10,
            )
        })
        .collect();
    let before = gc_in(&c, GcOptions::default()).unwrap();
    assert!(before.removed.is_empty());
    let each = before.bytes_before / 4;
    // Room for two and a half entries: the two oldest go.
    let r = gc_in(
        &c,
        GcOptions {
            max_bytes: Some(each * 5 / 2),
            ..Default::default()
        },
    )
    .unwrap();
    let removed: Vec<&Key> = r.removed.iter().map(|(i, _)| &i.key).collect();
    assert_eq!(removed, vec![&keys[0], &keys[1]]);
    assert!(r.bytes_after <= each * 5 / 2);
    assert_eq!(c.list().unwrap().len(), 2);
}

/// A build root laid out as kernel::build leaves one: a tree of
/// hard links to a source entry, objects under `out/`, a state file.
fn build_root(cache: &Cache, source: &Key, name: &str, object_bytes: usize, age_secs: u64) {
    let dir = cache.root().join("buildroot").join(name);
    std::fs::create_dir_all(dir.join("tree/out")).unwrap();
    let src = cache.get("source", source).unwrap();
    std::fs::hard_link(src.join("data"), dir.join("tree/data")).unwrap();
    std::fs::write(dir.join("tree/out/vmlinux"), vec![1u8; object_bytes]).unwrap();
    std::fs::write(
        dir.join("state.json"),
        r#"{"series":[],"method":"patch","touched":[],"fuzzed":[],"last_built":"x86_64-hz100-after"}"#,
    )
    .unwrap();
    let t = std::time::SystemTime::now() - std::time::Duration::from_secs(age_secs);
    std::fs::File::options()
        .write(true)
        .open(dir.join("state.json"))
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn build_roots_are_listed_and_removed_only_when_asked_and_free() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path()).unwrap();
    let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 256 << 10);
    build_root(&c, &src, "x86_64-aaaa", 128 << 10, 100);
    build_root(&c, &src, "arm64-bbbb", 128 << 10, 10);
    // A root whose creation was cut short by a process that is gone.
    std::fs::create_dir_all(c.root().join("buildroot/arm64-cccc.tmp.999999999/tree")).unwrap();

    let ls = ls_text(&c).unwrap();
    assert!(
        ls.contains("x86_64-aaaa") && ls.contains("arm64-bbbb"),
        "{ls}"
    );
    assert!(ls.contains("x86_64-hz100-after"), "{ls}");
    assert!(ls.contains("2 build roots"), "{ls}");

    // Plain gc and --keep leave build roots alone.
    let r = gc_in(
        &c,
        GcOptions {
            keep: Some(1),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(r.roots_removed.is_empty());
    assert_eq!(r.temps_removed, 1, "the dead .tmp root is swept");
    assert_eq!(super::buildroot::build_roots(&c).len(), 2);

    // A build holds one: it stays, and gc says so.
    let held = c.lock("buildroot-bbbb").unwrap();
    let r = gc_in(
        &c,
        GcOptions {
            build_roots: true,
            ..Default::default()
        },
    )
    .unwrap();
    drop(held);
    let removed: Vec<&str> = r.roots_removed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(removed, ["x86_64-aaaa"]);
    assert_eq!(r.roots_busy, ["arm64-bbbb"]);
    // Its own size: the objects, not the linked source.
    let own = r.roots_removed[0].1;
    assert!((128 << 10..256 << 10).contains(&own), "{own}");
    assert!(c.get("source", &src).is_some(), "the source entry stays");
    assert!(!c.root().join("buildroot/x86_64-aaaa").exists());
    assert!(r.bytes_after < r.bytes_before);
}

#[test]
fn gc_max_size_drops_build_roots_before_entries() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path()).unwrap();
    let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 256 << 10);
    let k = entry(&c, "kernel", "k", "2026-11-02T00:00:00Z", 256 << 10);
    build_root(&c, &src, "x86_64-old", 256 << 10, 100);
    build_root(&c, &src, "x86_64-new", 256 << 10, 10);
    let before = gc_in(&c, GcOptions::default()).unwrap().bytes_before;
    // Room for all but one root: the least recently used one goes.
    let r = gc_in(
        &c,
        GcOptions {
            max_bytes: Some(before - (200 << 10)),
            ..Default::default()
        },
    )
    .unwrap();
    let removed: Vec<&str> = r.roots_removed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(removed, ["x86_64-old"]);
    assert!(r.removed.is_empty(), "no entry goes while a root can");
    assert!(c.get("kernel", &k).is_some() && c.get("source", &src).is_some());
    assert!(r.bytes_after <= before - (200 << 10));
}

#[test]
fn hard_links_count_once() {
    let d = tempfile::tempdir().unwrap();
    let c = Cache::at(d.path()).unwrap();
    let src = entry(&c, "source", "s", "2026-11-01T00:00:00Z", 512 << 10);
    let src_path = c.get("source", &src).unwrap();
    let key = KeyBuilder::new("worktree").finish();
    c.get_or_make("worktree", &key, "w", |dir| {
        std::fs::hard_link(src_path.join("data"), dir.join("data"))?;
        Ok(())
    })
    .unwrap();
    let r = gc_in(&c, GcOptions::default()).unwrap();
    // One 512 KiB file, not two.
    assert!(r.bytes_before < 700 << 10, "{}", r.bytes_before);
    assert!(r.bytes_before >= 512 << 10);
}

#[test]
fn sizes_parse_and_print() {
    assert_eq!(parse_size("20G").unwrap(), 20 << 30);
    assert_eq!(parse_size("20GiB").unwrap(), 20 << 30);
    assert_eq!(parse_size("1.5t").unwrap(), 3 << 39);
    assert_eq!(parse_size("500M").unwrap(), 500 << 20);
    assert_eq!(parse_size("64k").unwrap(), 64 << 10);
    assert_eq!(parse_size("4096").unwrap(), 4096);
    for bad in ["", "G", "-1G", "20X", "lots"] {
        assert!(parse_size(bad).is_err(), "{bad}");
    }
    assert_eq!(human_bytes(512), "512 B");
    assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    assert_eq!(human_bytes(1536 << 10), "1.5 MiB");
}
