//! Where everything goes in the image: a merged-/usr tree.
//!
//! Every kept file lands under `/usr` (`bin/kmod` → `usr/bin/kmod`,
//! `lib/x86_64-linux-gnu/libc.so.6` → `usr/lib/...`), and `/bin`,
//! `/sbin`, `/lib`, `/lib64` are symlinks into `/usr`, as on current
//! Debian. So each tool has one home however the package placed it, an
//! absolute path the tree used (`/bin/kmod`, `/lib64/ld-linux-...`) still
//! resolves, and PATH can be the usual `/usr/sbin:/usr/bin:/sbin:/bin`.
//! Bookworm's tree is not merged; two files that would meet at the same
//! place are an error, never a silent overwrite.

use super::closure::Closure;
use super::cpio::Archive;
use super::recipe::Recipe;
use super::root::{Root, lexical_normalize};
use anyhow::{Context, Result, bail};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;

/// The guest's /init.
pub const INIT: &str = include_str!("../../images/init.sh");

/// Top-level directories that merged-/usr folds into `/usr`.
const MERGED: [&str; 4] = ["bin", "sbin", "lib", "lib64"];

/// Small files lab writes itself. `/etc/profile` only reaches login
/// shells: dropbear clears the environment and runs `sh -c` for a
/// command, so a command that needs `DM_DISABLE_UDEV` must set it.
const ETC: [(&str, &str, u32); 6] = [
    ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0o644),
    // disk: the group dmsetup gives /dev/mapper nodes.
    ("etc/group", "root:x:0:\ndisk:x:6:\n", 0o644),
    ("etc/shells", "/bin/sh\n", 0o644),
    // glibc reads users from files without loading an NSS module.
    (
        "etc/nsswitch.conf",
        "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
        0o644,
    ),
    (
        "etc/profile",
        "export PATH=/usr/sbin:/usr/bin:/sbin:/bin\n\
         # No udev in the guest: dmsetup makes /dev/mapper nodes itself\n\
         # (then run `dmsetup mknodes`).\n\
         export DM_DISABLE_UDEV=1\n",
        0o644,
    ),
    ("etc/hostname", "lab\n", 0o644),
];

/// Directories the guest mounts on or writes to.
const DIRS: [(&str, u32); 12] = [
    ("dev", 0o755),
    ("etc/dropbear", 0o755),
    ("mnt", 0o755),
    ("proc", 0o555),
    ("root", 0o700),
    ("root/.ssh", 0o700),
    ("run", 0o755),
    ("sys", 0o555),
    ("tmp", 0o1777),
    ("usr/bin", 0o755),
    ("usr/lib", 0o755),
    ("usr/sbin", 0o755),
];

/// Everything this module writes on its own account, for the cache key:
/// a change here must change the image's key.
pub fn fingerprint() -> String {
    let mut s = String::from(INIT);
    for (p, text, mode) in ETC {
        s.push_str(&format!("\n{p} {mode:o}\n{text}"));
    }
    for (p, mode) in DIRS {
        s.push_str(&format!("\n{p} {mode:o}"));
    }
    s.push_str(&format!("\nmerged {MERGED:?}"));
    s
}

/// Where a path of the extracted tree goes in the image.
pub fn image_path(tree_path: &str) -> String {
    let top = tree_path.split('/').next().unwrap_or("");
    if MERGED.contains(&top) {
        format!("usr/{tree_path}")
    } else {
        tree_path.to_string()
    }
}

/// Build the image's archive from the closure of the recipe's binaries.
/// `generated` holds files lab made (stub libraries), by tree path.
pub fn assemble(
    root: &Root,
    recipe: &Recipe,
    closure: &Closure,
    generated: &BTreeMap<String, Vec<u8>>,
) -> Result<Archive> {
    let mut img = Image::default();
    for (link, target) in &closure.links {
        if MERGED.contains(&link.as_str()) {
            // The tree is already merged-/usr; the image has this link.
            if lexical_normalize(target) != format!("usr/{link}") {
                bail!("the tree's /{link} -> {target} does not fit a merged-/usr image");
            }
            continue;
        }
        img.put(
            &image_path(link),
            link,
            Node::Symlink(link_target(link, target)),
        )?;
    }
    for file in &closure.files {
        let host = root.host_path(file);
        let data = std::fs::read(&host).with_context(|| format!("reading {}", host.display()))?;
        let mode = host.metadata()?.permissions().mode() & 0o7777;
        img.put(&image_path(file), file, Node::File(mode, data))?;
    }
    for (path, data) in generated {
        img.put(
            &image_path(path),
            "lab (stub)",
            Node::File(0o644, data.clone()),
        )?;
    }
    for (path, mode) in DIRS {
        img.put(path, "lab", Node::Dir(mode))?;
    }
    for (path, text, mode) in ETC {
        img.put(path, "lab", Node::File(mode, text.as_bytes().to_vec()))?;
    }
    img.put("init", "lab", Node::File(0o755, INIT.as_bytes().to_vec()))?;
    img.put("dev/console", "lab", Node::CharDev(0o600, 5, 1))?;
    img.put("dev/null", "lab", Node::CharDev(0o666, 1, 3))?;
    img.put(
        "usr/bin/sh",
        "lab (the recipe's shell)",
        Node::Symlink(format!("/{}", recipe.shell)),
    )?;
    let busybox = format!("/{}", recipe.busybox.path);
    for applet in &recipe.busybox.applets {
        for dir in ["usr/sbin", "usr/bin"] {
            let p = format!("{dir}/{applet}");
            if let Some(from) = img.origin.get(&p) {
                bail!(
                    "busybox applet {applet}: the image already has /{p} (from {from}); \
                     drop it from busybox.applets"
                );
            }
        }
        img.put(
            &format!("usr/bin/{applet}"),
            "busybox.applets",
            Node::Symlink(busybox.clone()),
        )?;
    }
    for top in MERGED {
        let under = format!("usr/{top}/");
        if img.nodes.keys().any(|p| p.starts_with(&under)) || top != "lib64" {
            img.put(
                top,
                "lab (merged /usr)",
                Node::Symlink(format!("usr/{top}")),
            )?;
        }
    }
    img.into_archive()
}

/// A symlink's target in the image. A relative target with `..` in a
/// link that moved under `/usr` would now climb from the wrong place, so
/// it becomes the absolute path it meant in the tree; absolute targets
/// keep working because the top-level directories are links into `/usr`.
fn link_target(link: &str, target: &str) -> String {
    if target.starts_with('/') || !target.split('/').any(|c| c == "..") || image_path(link) == link
    {
        return target.to_string();
    }
    let parent = link.rsplit_once('/').map(|(p, _)| p).unwrap_or("");
    format!("/{}", lexical_normalize(&format!("{parent}/{target}")))
}

enum Node {
    Dir(u32),
    File(u32, Vec<u8>),
    Symlink(String),
    CharDev(u32, u32, u32),
}

/// The image being laid out, with where each entry came from so a clash
/// can name both sides.
#[derive(Default)]
struct Image {
    nodes: BTreeMap<String, Node>,
    origin: BTreeMap<String, String>,
}

impl Image {
    fn put(&mut self, path: &str, from: &str, node: Node) -> Result<()> {
        if let Some(first) = self.origin.get(path) {
            bail!("image path /{path} comes from both {first} and {from}");
        }
        self.origin.insert(path.to_string(), from.to_string());
        self.nodes.insert(path.to_string(), node);
        Ok(())
    }

    fn into_archive(self) -> Result<Archive> {
        let mut a = Archive::new();
        for (path, node) in self.nodes {
            match node {
                Node::Dir(mode) => a.add_dir(&path, mode)?,
                Node::File(mode, data) => a.add_file(&path, mode, data)?,
                Node::Symlink(t) => a.add_symlink(&path, &t)?,
                Node::CharDev(mode, major, minor) => a.add_char_dev(&path, mode, major, minor)?,
            }
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::recipe::{Busybox, Recipe};
    use std::collections::BTreeSet;

    fn recipe(applets: &[&str]) -> Recipe {
        Recipe {
            suite: "bookworm".into(),
            mirror: "http://deb.debian.org/debian".into(),
            packages: vec!["dash".into()],
            keep: vec![],
            shell: "bin/dash".into(),
            busybox: Busybox {
                path: "bin/busybox".into(),
                applets: applets.iter().map(|s| s.to_string()).collect(),
            },
            extras: Default::default(),
            stubs: Default::default(),
        }
    }

    /// A tree with bookworm's split layout and the files a closure names.
    fn tree() -> (tempfile::TempDir, Root, Closure) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        for dir in ["bin", "sbin", "lib/x86_64-linux-gnu", "lib64", "usr/bin"] {
            std::fs::create_dir_all(p.join(dir)).unwrap();
        }
        for (f, mode) in [
            ("bin/dash", 0o755),
            ("bin/busybox", 0o755),
            ("bin/kmod", 0o755),
            ("usr/bin/fio", 0o755),
            ("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", 0o755),
            ("lib/x86_64-linux-gnu/libc.so.6", 0o644),
        ] {
            std::fs::write(p.join(f), f).unwrap();
            std::fs::set_permissions(p.join(f), std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let closure = Closure {
            files: [
                "bin/dash",
                "bin/busybox",
                "bin/kmod",
                "usr/bin/fio",
                "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                "lib/x86_64-linux-gnu/libc.so.6",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect::<BTreeSet<_>>(),
            links: [
                ("sbin/modprobe", "/bin/kmod"),
                ("bin/lsmod", "kmod"),
                (
                    "lib64/ld-linux-x86-64.so.2",
                    "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
                ),
                ("sbin/up", "../usr/bin/fio"),
            ]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
            stubs: BTreeMap::new(),
        };
        let root = Root::new(p);
        (d, root, closure)
    }

    fn listing(a: Archive) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let bytes = a.finish();
        let mut child = std::process::Command::new("cpio")
            .args(["-t", "-v", "--quiet"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&bytes).unwrap();
        let out = child.wait_with_output().unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn find<'a>(list: &'a [String], name: &str) -> &'a str {
        list.iter()
            .find(|l| l.ends_with(&format!(" {name}")) || l.contains(&format!(" {name} -> ")))
            .unwrap_or_else(|| panic!("{name} not in {list:#?}"))
    }

    #[test]
    fn files_move_under_usr_and_links_still_resolve() {
        let (_d, root, closure) = tree();
        let a = assemble(
            &root,
            &recipe(&["mount", "cat"]),
            &closure,
            &BTreeMap::new(),
        )
        .unwrap();
        let list = listing(a);
        assert!(find(&list, "usr/bin/kmod").starts_with("-rwxr-xr-x"));
        assert!(find(&list, "usr/lib/x86_64-linux-gnu/libc.so.6").starts_with("-rw-r--r--"));
        assert!(find(&list, "usr/sbin/modprobe").ends_with("-> /bin/kmod"));
        assert!(find(&list, "usr/bin/lsmod").ends_with("-> kmod"));
        assert!(
            find(&list, "usr/lib64/ld-linux-x86-64.so.2")
                .ends_with("-> /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2")
        );
        // sbin/../usr/bin/fio from /usr/sbin would miss: made absolute.
        assert!(find(&list, "usr/sbin/up").ends_with("-> /usr/bin/fio"));
        for top in ["bin", "sbin", "lib", "lib64"] {
            assert!(
                find(&list, top).ends_with(&format!("-> usr/{top}")),
                "{top}"
            );
        }
        assert!(find(&list, "usr/bin/sh").ends_with("-> /bin/dash"));
        assert!(find(&list, "usr/bin/mount").ends_with("-> /bin/busybox"));
        assert!(find(&list, "init").starts_with("-rwxr-xr-x"));
        assert!(find(&list, "dev/console").starts_with("crw-------"));
        assert!(find(&list, "dev/null").starts_with("crw-rw-rw-"));
        assert!(find(&list, "tmp").starts_with("drwxrwxrwt"));
        assert!(find(&list, "root").starts_with("drwx------"));
        assert!(find(&list, "etc/passwd").starts_with("-rw-r--r--"));
        assert!(!list.iter().any(|l| l.ends_with(" usr/bin/sh -> busybox")));
    }

    #[test]
    fn applet_clashing_with_a_kept_binary_is_an_error() {
        let (_d, root, closure) = tree();
        let err = assemble(
            &root,
            &recipe(&["cat", "modprobe"]),
            &closure,
            &BTreeMap::new(),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("modprobe") && msg.contains("/usr/sbin/modprobe"),
            "{msg}"
        );
        let err = assemble(&root, &recipe(&["fio"]), &closure, &BTreeMap::new()).unwrap_err();
        assert!(err.to_string().contains("usr/bin/fio"), "{err}");
    }

    #[test]
    fn two_tree_files_meeting_in_usr_are_an_error() {
        let (d, root, mut closure) = tree();
        std::fs::write(d.path().join("usr/bin/kmod"), "other").unwrap();
        closure.files.insert("usr/bin/kmod".into());
        let err = assemble(&root, &recipe(&[]), &closure, &BTreeMap::new()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("bin/kmod") && msg.contains("usr/bin/kmod"),
            "{msg}"
        );
    }

    #[test]
    fn a_merged_tree_top_link_is_accepted_and_a_foreign_one_refused() {
        let (_d, root, mut closure) = tree();
        closure.links.insert("lib64".into(), "usr/lib64".into());
        assemble(&root, &recipe(&[]), &closure, &BTreeMap::new()).unwrap();
        closure.links.insert("lib64".into(), "/opt/lib".into());
        assert!(assemble(&root, &recipe(&[]), &closure, &BTreeMap::new()).is_err());
    }

    #[test]
    fn link_targets() {
        assert_eq!(link_target("bin/lsmod", "kmod"), "kmod");
        assert_eq!(link_target("sbin/x", "../bin/y"), "/bin/y");
        assert_eq!(link_target("usr/lib/a", "../../lib/b"), "../../lib/b");
        assert_eq!(link_target("lib/a", "/x"), "/x");
    }

    #[test]
    fn fingerprint_covers_init_and_etc() {
        let f = fingerprint();
        assert!(f.contains("lab-guest-ready"));
        assert!(f.contains("DM_DISABLE_UDEV=1"));
        assert!(f.contains("etc/passwd"));
    }
}
