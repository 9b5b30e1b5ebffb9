//! A reproducible writer for the cpio "newc" format, the one the kernel
//! unpacks as an initramfs.
//!
//! Reproducible means the bytes depend only on the paths, modes and
//! contents added: entries are written sorted by path, with mtime 0,
//! uid/gid 0, inode numbers counted up from 1 in that order, and nlink 1
//! (2 for directories), so no entry is ever taken for a hardlink. Missing
//! parent directories are created (mode 0755), so every archive unpacks
//! on its own, also when it is appended to another one as a layer.

use anyhow::{Result, bail};
use std::collections::BTreeMap;

const S_IFDIR: u32 = 0o040000;
const S_IFREG: u32 = 0o100000;
const S_IFLNK: u32 = 0o120000;
const S_IFCHR: u32 = 0o020000;

/// The mode of directories that nobody added explicitly.
pub const PARENT_DIR_MODE: u32 = 0o755;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Dir,
    File(Vec<u8>),
    Symlink(String),
    CharDev { major: u32, minor: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// Permission bits only; the type comes from `kind`.
    perm: u32,
    kind: Kind,
}

/// An archive being assembled. Paths are relative (`etc/passwd`); a
/// leading `/` is accepted and dropped.
#[derive(Clone, Debug, Default)]
pub struct Archive {
    entries: BTreeMap<String, Entry>,
}

impl Archive {
    pub fn new() -> Archive {
        Archive::default()
    }

    pub fn add_dir(&mut self, path: &str, mode: u32) -> Result<()> {
        self.add(path, mode, Kind::Dir)
    }

    pub fn add_file(&mut self, path: &str, mode: u32, data: impl Into<Vec<u8>>) -> Result<()> {
        self.add(path, mode, Kind::File(data.into()))
    }

    /// A symlink; its target is stored as written, relative or absolute.
    pub fn add_symlink(&mut self, path: &str, target: &str) -> Result<()> {
        if target.is_empty() {
            bail!("symlink {path}: empty target");
        }
        self.add(path, 0o777, Kind::Symlink(target.to_string()))
    }

    pub fn add_char_dev(&mut self, path: &str, mode: u32, major: u32, minor: u32) -> Result<()> {
        self.add(path, mode, Kind::CharDev { major, minor })
    }

    pub fn contains(&self, path: &str) -> bool {
        normalize(path).is_ok_and(|p| self.entries.contains_key(&p))
    }

    /// How many entries were added (parents created by `finish` not counted).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Total bytes of file contents.
    pub fn content_bytes(&self) -> u64 {
        self.entries
            .values()
            .map(|e| match &e.kind {
                Kind::File(d) => d.len() as u64,
                _ => 0,
            })
            .sum()
    }

    fn add(&mut self, path: &str, perm: u32, kind: Kind) -> Result<()> {
        let path = normalize(path)?;
        if perm & !0o7777 != 0 {
            bail!("{path}: mode {perm:o} has bits beyond 07777");
        }
        if let Kind::File(d) = &kind
            && u32::try_from(d.len()).is_err()
        {
            bail!("{path}: {} bytes is too big for a newc entry", d.len());
        }
        let entry = Entry { perm, kind };
        if let Some(old) = self.entries.get(&path) {
            // Adding the same directory twice is harmless; anything else
            // would silently drop one of two different contents.
            if *old == entry && entry.kind == Kind::Dir {
                return Ok(());
            }
            bail!("{path}: added twice to the archive");
        }
        for (i, _) in path.match_indices('/') {
            let parent = &path[..i];
            if let Some(e) = self.entries.get(parent)
                && e.kind != Kind::Dir
            {
                bail!("{path}: its parent {parent} is not a directory in the archive");
            }
        }
        if entry.kind != Kind::Dir {
            let prefix = format!("{path}/");
            if let Some((child, _)) = self.entries.range(prefix.clone()..).next()
                && child.starts_with(&prefix)
            {
                bail!("{path}: not a directory, but the archive already has {child}");
            }
        }
        self.entries.insert(path, entry);
        Ok(())
    }

    /// The archive as bytes, ending with the `TRAILER!!!` entry; its
    /// length is a multiple of 4, so another archive can follow directly.
    pub fn finish(mut self) -> Vec<u8> {
        let parents: Vec<String> = self
            .entries
            .keys()
            .flat_map(|p| p.match_indices('/').map(|(i, _)| p[..i].to_string()))
            .collect();
        for p in parents {
            self.entries.entry(p).or_insert(Entry {
                perm: PARENT_DIR_MODE,
                kind: Kind::Dir,
            });
        }
        let total: usize = self
            .entries
            .iter()
            .map(|(p, e)| 120 + p.len() + e.kind.data().len())
            .sum();
        let mut out = Vec::with_capacity(total + 128);
        // BTreeMap order: sorted by path, and a directory's path is a
        // prefix of its children's, so it always comes first.
        for (ino, (path, entry)) in std::mem::take(&mut self.entries).into_iter().enumerate() {
            let (type_bits, nlink, rdev) = match &entry.kind {
                Kind::Dir => (S_IFDIR, 2, (0, 0)),
                Kind::File(_) => (S_IFREG, 1, (0, 0)),
                Kind::Symlink(_) => (S_IFLNK, 1, (0, 0)),
                Kind::CharDev { major, minor } => (S_IFCHR, 1, (*major, *minor)),
            };
            let header = Header {
                ino: ino as u32 + 1,
                mode: type_bits | entry.perm,
                nlink,
                rdev,
            };
            write_entry(&mut out, &header, &path, entry.kind.data());
        }
        let trailer = Header {
            ino: 0,
            mode: 0,
            nlink: 1,
            rdev: (0, 0),
        };
        write_entry(&mut out, &trailer, "TRAILER!!!", &[]);
        out
    }
}

impl Kind {
    fn data(&self) -> &[u8] {
        match self {
            Kind::File(d) => d,
            Kind::Symlink(t) => t.as_bytes(),
            Kind::Dir | Kind::CharDev { .. } => &[],
        }
    }
}

struct Header {
    ino: u32,
    mode: u32,
    nlink: u32,
    rdev: (u32, u32),
}

fn write_entry(out: &mut Vec<u8>, h: &Header, name: &str, data: &[u8]) {
    let fields = [
        h.ino,
        h.mode,
        0, // uid
        0, // gid
        h.nlink,
        0, // mtime
        data.len() as u32,
        0, // devmajor
        0, // devminor
        h.rdev.0,
        h.rdev.1,
        name.len() as u32 + 1,
        0, // check
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08X}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    pad4(out);
    out.extend_from_slice(data);
    pad4(out);
}

fn pad4(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
}

/// `/etc//passwd` → `etc/passwd`; `.` and `..` are refused because an
/// archive entry must name one place.
fn normalize(path: &str) -> Result<String> {
    let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    if parts.is_empty() {
        bail!("archive path {path:?} names no file");
    }
    if parts.iter().any(|c| *c == "." || *c == "..") {
        bail!("archive path {path:?} contains . or ..");
    }
    if path.contains('\0') {
        bail!("archive path {path:?} contains a NUL byte");
    }
    Ok(parts.join("/"))
}

/// A small archive of `(path, contents, mode)` files with their parent
/// directories, for a layer appended after the userland archive, such as
/// the SSH keys. Parent directories get mode 0755; note that the kernel
/// applies a layer's directory modes to directories that already exist.
///
/// # Panics
/// On a path given twice, or one with `.`/`..` or no name: a layer's
/// paths are written in lab's own code, so such a path is a bug there.
pub fn layer(files: &[(String, Vec<u8>, u32)]) -> Vec<u8> {
    let mut a = Archive::new();
    for (path, data, mode) in files {
        if let Err(e) = a.add_file(path, *mode, data.clone()) {
            panic!("invalid layer: {e:#}");
        }
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    use std::path::Path;
    use std::process::{Command, Stdio};

    fn sample() -> Archive {
        let mut a = Archive::new();
        a.add_dir("etc", 0o755).unwrap();
        a.add_dir("tmp", 0o1777).unwrap();
        a.add_file(
            "etc/passwd",
            0o644,
            b"root:x:0:0:root:/root:/bin/sh\n".to_vec(),
        )
        .unwrap();
        a.add_file(
            "/usr/bin/tool",
            0o755,
            vec![0x7f, b'E', b'L', b'F', 1, 2, 3],
        )
        .unwrap();
        a.add_file("usr/share/empty", 0o600, Vec::new()).unwrap();
        a.add_symlink("bin", "usr/bin").unwrap();
        a.add_symlink("usr/bin/sh", "/bin/dash").unwrap();
        a.add_char_dev("dev/console", 0o600, 5, 1).unwrap();
        a.add_char_dev("dev/null", 0o666, 1, 3).unwrap();
        a
    }

    fn host_cpio(args: &[&str], dir: &Path, input: &[u8]) -> String {
        use std::io::Write;
        let mut child = Command::new("cpio")
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("host cpio (apt-get install cpio)");
        child.stdin.take().unwrap().write_all(input).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "cpio {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    #[test]
    fn host_cpio_lists_entries_sorted_with_parents_first() {
        let bytes = sample().finish();
        let d = tempfile::tempdir().unwrap();
        let list = host_cpio(&["-t", "--quiet"], d.path(), &bytes);
        let names: Vec<&str> = list.lines().collect();
        assert_eq!(
            names,
            [
                "bin",
                "dev",
                "dev/console",
                "dev/null",
                "etc",
                "etc/passwd",
                "tmp",
                "usr",
                "usr/bin",
                "usr/bin/sh",
                "usr/bin/tool",
                "usr/share",
                "usr/share/empty",
            ]
        );
    }

    #[test]
    fn host_cpio_extracts_files_modes_and_symlinks() {
        let mut a = sample();
        a.add_file("usr/bin/odd", 0o4751, b"x".repeat(5)).unwrap();
        let bytes = a.finish();
        let d = tempfile::tempdir().unwrap();
        // Device nodes need privileges to create; everything else is checked.
        host_cpio(&["-i", "-d", "--quiet", "-f", "dev/*"], d.path(), &bytes);
        let root = d.path();
        let mode = |p: &str| {
            root.join(p)
                .symlink_metadata()
                .unwrap()
                .permissions()
                .mode()
                & 0o7777
        };
        assert_eq!(
            std::fs::read(root.join("etc/passwd")).unwrap(),
            b"root:x:0:0:root:/root:/bin/sh\n"
        );
        assert_eq!(mode("etc/passwd"), 0o644);
        assert_eq!(
            std::fs::read(root.join("usr/bin/tool")).unwrap(),
            [0x7f, b'E', b'L', b'F', 1, 2, 3]
        );
        assert_eq!(mode("usr/bin/tool"), 0o755);
        assert_eq!(mode("usr/bin/odd"), 0o4751);
        assert_eq!(std::fs::read(root.join("usr/bin/odd")).unwrap(), b"xxxxx");
        assert_eq!(std::fs::read(root.join("usr/share/empty")).unwrap(), b"");
        assert_eq!(mode("usr/share/empty"), 0o600);
        assert_eq!(mode("tmp"), 0o1777);
        assert!(root.join("usr/share").is_dir());
        assert_eq!(
            std::fs::read_link(root.join("bin")).unwrap(),
            Path::new("usr/bin")
        );
        assert_eq!(
            std::fs::read_link(root.join("usr/bin/sh")).unwrap(),
            Path::new("/bin/dash")
        );
        assert_eq!(
            root.join("usr/bin/tool")
                .symlink_metadata()
                .unwrap()
                .nlink(),
            1
        );
    }

    #[test]
    fn host_cpio_sees_device_numbers_and_owner() {
        let bytes = sample().finish();
        let d = tempfile::tempdir().unwrap();
        let list = host_cpio(&["-t", "-v", "--quiet", "dev/*"], d.path(), &bytes);
        let lines: Vec<&str> = list.lines().collect();
        assert_eq!(lines.len(), 2, "{list}");
        assert!(lines[0].starts_with("crw-------"), "{list}");
        assert!(lines[0].contains("5,"), "{list}");
        assert!(lines[1].starts_with("crw-rw-rw-"), "{list}");
        assert!(lines[1].contains("1,"), "{list}");
        for l in lines {
            assert!(l.contains(" root ") || l.contains(" 0 "), "{l}");
        }
    }

    #[test]
    fn output_is_deterministic_and_independent_of_insertion_order() {
        let a = sample().finish();
        let b = sample().finish();
        assert_eq!(a, b);
        let mut c = Archive::new();
        c.add_char_dev("dev/null", 0o666, 1, 3).unwrap();
        c.add_symlink("usr/bin/sh", "/bin/dash").unwrap();
        c.add_file("usr/share/empty", 0o600, Vec::new()).unwrap();
        c.add_char_dev("dev/console", 0o600, 5, 1).unwrap();
        c.add_symlink("bin", "usr/bin").unwrap();
        c.add_file("usr/bin/tool", 0o755, vec![0x7f, b'E', b'L', b'F', 1, 2, 3])
            .unwrap();
        c.add_file(
            "etc/passwd",
            0o644,
            b"root:x:0:0:root:/root:/bin/sh\n".to_vec(),
        )
        .unwrap();
        c.add_dir("tmp", 0o1777).unwrap();
        c.add_dir("etc", 0o755).unwrap();
        assert_eq!(a, c.finish());
    }

    #[test]
    fn ends_with_trailer_and_is_aligned() {
        let bytes = sample().finish();
        assert_eq!(bytes.len() % 4, 0);
        let tail = String::from_utf8_lossy(&bytes[bytes.len() - 128..]).into_owned();
        assert!(tail.contains("TRAILER!!!\0"), "{tail:?}");
        // Every header starts on a 4-byte boundary with the newc magic.
        let mut pos = 0;
        let mut inos = Vec::new();
        loop {
            assert_eq!(&bytes[pos..pos + 6], b"070701", "at {pos}");
            let field = |i: usize| {
                let s = std::str::from_utf8(&bytes[pos + 6 + 8 * i..pos + 14 + 8 * i]).unwrap();
                u32::from_str_radix(s, 16).unwrap() as usize
            };
            let (ino, mtime, size, namesize) = (field(0), field(5), field(6), field(11));
            let name = &bytes[pos + 110..pos + 110 + namesize - 1];
            assert_eq!(mtime, 0);
            if name == b"TRAILER!!!" {
                break;
            }
            inos.push(ino);
            pos = (pos + 110 + namesize).next_multiple_of(4);
            pos = (pos + size).next_multiple_of(4);
        }
        assert_eq!(inos, (1..=inos.len()).collect::<Vec<_>>());
    }

    #[test]
    fn layer_creates_parents_and_concatenates_after_another_archive() {
        let keys = layer(&[
            (
                "/root/.ssh/authorized_keys".into(),
                b"ssh-ed25519 AAAA test\n".to_vec(),
                0o600,
            ),
            (
                "/etc/dropbear/dropbear_ed25519_host_key".into(),
                b"secret".to_vec(),
                0o600,
            ),
        ]);
        let d = tempfile::tempdir().unwrap();
        let list = host_cpio(&["-t", "--quiet"], d.path(), &keys);
        assert_eq!(
            list.lines().collect::<Vec<_>>(),
            [
                "etc",
                "etc/dropbear",
                "etc/dropbear/dropbear_ed25519_host_key",
                "root",
                "root/.ssh",
                "root/.ssh/authorized_keys",
            ]
        );
        // Two archives back to back, as the kernel receives them: GNU cpio
        // stops at the first trailer, so extract the second one from its
        // offset, which is aligned because the first one's length is.
        let base = sample().finish();
        let mut both = base.clone();
        both.extend_from_slice(&keys);
        host_cpio(
            &["-i", "-d", "--quiet", "-f", "dev/*"],
            d.path(),
            &both[..base.len()],
        );
        host_cpio(&["-i", "-d", "--quiet"], d.path(), &both[base.len()..]);
        assert!(d.path().join("etc/passwd").is_file());
        assert_eq!(
            std::fs::read(d.path().join("root/.ssh/authorized_keys")).unwrap(),
            b"ssh-ed25519 AAAA test\n"
        );
    }

    #[test]
    fn conflicting_entries_are_errors() {
        let mut a = Archive::new();
        a.add_file("etc/x", 0o644, b"1".to_vec()).unwrap();
        assert!(a.add_file("/etc/x", 0o644, b"2".to_vec()).is_err());
        assert!(a.add_file("etc/x/y", 0o644, b"2".to_vec()).is_err());
        assert!(a.add_symlink("etc", "elsewhere").is_err());
        assert!(a.add_file("a/../b", 0o644, Vec::new()).is_err());
        assert!(a.add_file("/", 0o644, Vec::new()).is_err());
        assert!(a.add_dir("d", 0o100755).is_err());
        a.add_dir("d", 0o755).unwrap();
        a.add_dir("d/", 0o755).unwrap();
        assert!(a.add_dir("d", 0o700).is_err());
    }

    #[test]
    #[should_panic(expected = "added twice")]
    fn layer_with_a_path_twice_is_a_bug() {
        layer(&[
            ("a".into(), Vec::new(), 0o644),
            ("/a".into(), Vec::new(), 0o644),
        ]);
    }
}
