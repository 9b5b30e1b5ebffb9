//! Small helpers shared by every stage: atomic writes, hashing, commands.

use anyhow::{Context, Result, bail};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// lab's version, written into every manifest and cache entry.
pub const LAB_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Write a file so that readers see the old content or the new, never a
/// truncated mix: temp file in the same directory, fsync, rename.
pub fn atomic_write(path: &Path, data: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    // An interrupted command removes the temp file before it exits.
    let (mut tmp, guard) = crate::interrupt::create_temp(
        || tempfile::NamedTempFile::new_in(dir),
        |t| t.path().to_path_buf(),
    )
    .with_context(|| format!("creating a temp file in {}", dir.display()))?;
    tmp.write_all(data)
        .and_then(|_| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", path.display()))?;
    guard
        .commit(|| tmp.persist(path))
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

/// `atomic_write` for a value as pretty JSON.
pub fn atomic_write_json<T: serde::Serialize>(path: &Path, value: &T) -> Result<()> {
    let mut data = serde_json::to_vec_pretty(value)?;
    data.push(b'\n');
    atomic_write(path, &data)
}

/// The largest matrix, fragment or recipe lab reads: they are small
/// YAML or kconfig files.
pub const MAX_SMALL_INPUT: u64 = 16 << 20;
/// The largest mail, mbox or patch lab reads. Reading costs about ten
/// times the input in memory; a bigger archive is split by the user.
pub const MAX_MAIL_INPUT: u64 = 256 << 20;

/// Read a file the user named (`what` says which: "the matrix", "--mail").
/// A missing file, a directory, a FIFO, a device or a file above `limit`
/// is an input error that names the path; lab never blocks on a FIFO or
/// reads /dev/zero until memory runs out.
pub fn read_input(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let input =
        |msg: String| crate::error::input_error(format!("{what} {}: {msg}", path.display()));
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input("no such file".into()));
        }
        Err(e) => return Err(input(io_reason(&e))),
    };
    if meta.is_dir() {
        return Err(input("is a directory, not a file".into()));
    }
    if !meta.is_file() {
        return Err(input(
            "is not a regular file (a FIFO, a device or a socket); lab reads regular files only"
                .into(),
        ));
    }
    if meta.len() > limit {
        return Err(input(format!(
            "is {} bytes, above the limit of {} for {what}",
            meta.len(),
            limit
        )));
    }
    let f = std::fs::File::open(path).map_err(|e| input(io_reason(&e)))?;
    let mut data = Vec::with_capacity(meta.len() as usize);
    // A file that grows while it is read is cut at the limit, and refused.
    f.take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|e| input(io_reason(&e)))?;
    if data.len() as u64 > limit {
        return Err(input(format!(
            "grew above the limit of {limit} bytes while read"
        )));
    }
    Ok(data)
}

/// The words of `s` in lines of at most `width` characters (a longer
/// word is a line of its own): prose for a terminal or a mail.
pub fn wrap_words(s: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// An I/O error's reason without Rust's "(os error N)" suffix.
pub fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Control characters (ESC, NUL, BEL, CR …) written as `\x1b`, so text
/// from a stranger's mail, matrix or run directory cannot move the
/// cursor, retitle the terminal or hide a line when printed. Newlines
/// and tabs stay when `keep_lines`; everything else printable stays.
pub fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls_in(s, false)
}

/// `escape_controls` keeping newlines and tabs: for multi-line messages.
pub fn escape_controls_keep_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape_controls_in(s, true)
}

fn escape_controls_in(s: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && !(keep_lines && (c == '\n' || c == '\t'));
    if !s.chars().any(bad) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            if (c as u32) < 0x100 {
                out.push_str(&format!("\\x{:02x}", c as u32));
            } else {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// At most `max` characters of `s` for a message, with how much was cut.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(s),
        Some((i, _)) => {
            std::borrow::Cow::Owned(format!("{}… ({} more bytes)", &s[..i], s.len() - i))
        }
    }
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&data).with_context(|| format!("parsing {}", path.display()))
}

/// A size as people write it (`--max-size 20G`, fio's `size=10G`).
/// `20G`, `1.5T`, `500M`, `64k`, `20GiB`, or plain bytes. Powers of 1024.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1u64 << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        Some('t') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && !num.trim().is_empty() => {
            Ok((x * mult as f64).round() as u64)
        }
        _ => bail!("'{s}': expected a size such as 20G, 500M or 1.5T"),
    }
}

/// blake3 of a file, streamed so a 145 MiB tarball is not held in memory.
pub fn hash_file(path: &Path) -> Result<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(
        std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?,
    )
    .with_context(|| format!("reading {}", path.display()))?;
    Ok(h.finalize().to_hex().to_string())
}

/// The first `n` characters of `s`, never splitting a character: hashes
/// read from files a user may have edited are not always hex.
/// `path` as a person should read it in a report: `a/b/../c` is `a/c`
/// (lexically: a report names the file, it does not resolve links), and
/// a path under the current directory is shown relative to it.
pub fn display_path(path: &Path) -> String {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                if matches!(last, Some(Component::Normal(_))) {
                    out.pop();
                } else if !matches!(last, Some(Component::RootDir)) {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    let shown = std::env::current_dir()
        .ok()
        .filter(|cwd| out.is_absolute() && out != *cwd)
        .and_then(|cwd| out.strip_prefix(&cwd).ok().map(Path::to_path_buf))
        .unwrap_or(out);
    shown.display().to_string()
}

pub fn prefix(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

pub fn hash_bytes(data: &[u8]) -> String {
    blake3::hash(data).to_hex().to_string()
}

/// Find a program on PATH.
pub fn which(prog: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Run a command to completion and return its stdout; a failure names the
/// command and carries its stderr.
pub fn run_output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .output()
        .with_context(|| format!("running {}", describe(cmd)))?;
    if !out.status.success() {
        bail!(
            "{} failed ({}): {}",
            describe(cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A command as a user could paste it into a shell.
pub fn describe(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&shell_quote(&a.to_string_lossy()));
    }
    s
}

pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The last `n` lines of a file, for failure messages.
pub fn tail_lines(path: &Path, n: usize) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The cores this process may use, asked once: the standard library
/// reads the cgroup's CPU quota from /sys on every call (five system
/// calls), and the claims reader asks per message of a thread.
pub fn ncpus() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    })
}

/// `f` over contiguous chunks of `items` on `threads` scoped threads:
/// each call gets its chunk and the index of the chunk's first item.
/// The results come back in order, a panicking thread as an error.
///
/// There are several chunks per thread, and a thread that is done takes
/// the next one: parts of a mail cost very different amounts (a
/// paragraph of prose against a wide table), and two halves of a big
/// message were measured to finish up to a second apart.
pub fn par_chunks<I: Sync, T: Send>(
    items: &[I],
    threads: usize,
    f: impl Fn(usize, &[I]) -> anyhow::Result<T> + Sync,
) -> Vec<anyhow::Result<T>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = threads.max(1);
    let per_thread = if threads == 1 { 1 } else { 8 };
    let size = items.len().div_ceil(threads * per_thread).max(1);
    let chunks: Vec<&[I]> = items.chunks(size).collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            let Some(chunk) = chunks.get(c) else {
                return done;
            };
            done.push((c, f(c * size, chunk)));
        }
    };
    let mut slots: Vec<Option<anyhow::Result<T>>> = chunks.iter().map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(chunks.len()))
            .map(|_| s.spawn(work))
            .collect();
        for h in handles {
            // A thread that panicked leaves its chunks empty: they are
            // reported below, each as an error.
            if let Ok(done) = h.join() {
                for (c, r) in done {
                    slots[c] = Some(r);
                }
            }
        }
    });
    slots
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(anyhow::anyhow!("a worker thread panicked"))))
        .collect()
}

/// Seconds as a short human string: "9m50s", "18.5s", "0.08s".
pub fn human_secs(secs: f64) -> String {
    if secs >= 60.0 {
        format!("{}m{:02}s", (secs / 60.0) as u64, (secs % 60.0) as u64)
    } else if secs >= 10.0 {
        format!("{secs:.1}s")
    } else {
        format!("{secs:.2}s")
    }
}

/// Read lab's YAML (matrices, recipes) as YAML 1.2: only true/false are
/// booleans. Under YAML 1.1 an axis called `n` or a value `off` would
/// silently become `false`.
pub fn from_yaml<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_saphyr::Error> {
    serde_saphyr::from_str_with_options(text, serde_saphyr::options! { strict_booleans: true })
}

pub fn now_rfc3339() -> String {
    rfc3339(std::time::SystemTime::now())
}

/// UTC to the millisecond: when a boot or a cell started, so the time
/// between them can be told (`scripts/bench-run`).
pub fn now_rfc3339_ms() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// UTC, to the second: how lab writes times.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(t).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Free bytes on the file system holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let st = nix::sys::statvfs::statvfs(path).ok()?;
    Some(st.blocks_available() as u64 * st.fragment_size() as u64)
}

/// Total size of a directory tree, counting each file once.
pub fn dir_size(path: &Path) -> u64 {
    fn walk(p: &Path, seen: &mut std::collections::HashSet<(u64, u64)>) -> u64 {
        use std::os::unix::fs::MetadataExt;
        let Ok(meta) = p.symlink_metadata() else {
            return 0;
        };
        if meta.is_dir() {
            std::fs::read_dir(p)
                .map(|rd| rd.flatten().map(|e| walk(&e.path(), seen)).sum())
                .unwrap_or(0)
        } else if seen.insert((meta.dev(), meta.ino())) {
            meta.blocks() * 512
        } else {
            0
        }
    }
    walk(path, &mut Default::default())
}

/// A token for framing guest output, 16 hex digits: enough randomness
/// from the clock, the process id and a counter (two tokens made in one
/// nanosecond still differ).
pub fn random_token() -> String {
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let h = blake3::hash(format!("{nanos} {} {seq}", std::process::id()).as_bytes());
    h.to_hex()[..16].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_are_escaped_and_long_text_clipped() {
        assert_eq!(escape_controls("a\x1b[2Jb\0"), "a\\x1b[2Jb\\x00");
        assert_eq!(escape_controls("line\nnext"), "line\\x0anext");
        assert_eq!(
            escape_controls_keep_lines("line\n\tnext\r"),
            "line\n\tnext\\x0d"
        );
        assert!(matches!(
            escape_controls("plain é"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(clip("abcdef", 3), "abc… (3 more bytes)");
        assert_eq!(clip("abc", 3), "abc");
    }

    #[test]
    fn user_files_are_read_only_when_regular_and_small() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("m.yaml");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read_input(&f, "the matrix", 5).unwrap(), b"12345");
        let e = format!("{:#}", read_input(&f, "the matrix", 4).unwrap_err());
        assert!(e.contains("above the limit of 4"), "{e}");
        let e = format!("{:#}", read_input(d.path(), "the matrix", 4).unwrap_err());
        assert!(e.contains("is a directory"), "{e}");
        let e = read_input(Path::new("/dev/zero"), "--mail", 4).unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
        assert_eq!(crate::error::classify(&e), crate::error::Kind::Input);
        let e = format!(
            "{:#}",
            read_input(&d.path().join("no"), "--mail", 4).unwrap_err()
        );
        assert!(e.ends_with("no: no such file"), "{e}");
    }

    #[test]
    fn atomic_write_replaces_whole_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.json");
        atomic_write(&p, b"first").unwrap();
        atomic_write(&p, b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        // No temp files are left beside it.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn shell_quote_quotes_only_when_needed() {
        assert_eq!(shell_quote("make"), "make");
        assert_eq!(shell_quote("O=/tmp/x"), "O=/tmp/x");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }

    #[test]
    fn display_path_collapses_dot_dot_and_shows_cwd_relative() {
        assert_eq!(
            display_path(Path::new("/x/tests/v2/../../mail/a.mbox")),
            "/x/mail/a.mbox"
        );
        assert_eq!(display_path(Path::new("m/./v2/../../k.patch")), "k.patch");
        assert_eq!(display_path(Path::new("../a/../b")), "../b");
        assert_eq!(display_path(Path::new("/../a")), "/a");
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(display_path(&cwd.join("sub/../f.txt")), "f.txt");
    }

    #[test]
    fn prefix_never_splits_a_character() {
        assert_eq!(prefix("0123456789abcdef", 12), "0123456789ab");
        assert_eq!(prefix("abc", 12), "abc");
        assert_eq!(prefix("ééééééééééééé", 12), "éééééééééééé");
        assert_eq!(prefix("", 12), "");
    }

    /// Chunks handed out as threads finish still come back in order,
    /// each with the index of its first item; a panic is an error.
    #[test]
    fn par_chunks_keeps_order_and_offsets() {
        let items: Vec<usize> = (0..1000).collect();
        for threads in [1, 2, 3, 7] {
            let parts: Vec<Vec<usize>> = par_chunks(&items, threads, |first, chunk| {
                assert_eq!(chunk[0], first);
                Ok(chunk.iter().map(|x| x * 2).collect())
            })
            .into_iter()
            .collect::<anyhow::Result<_>>()
            .unwrap();
            assert_eq!(
                parts.concat(),
                items.iter().map(|x| x * 2).collect::<Vec<_>>()
            );
        }
        let out = par_chunks(&items, 2, |first, _| {
            if first == 0 {
                panic!("worker fails");
            }
            Ok(first)
        });
        assert!(out.iter().any(|r| r.is_err()));
        assert!(par_chunks(&[] as &[u8], 4, |_, _| Ok(())).is_empty());
    }

    #[test]
    fn human_secs_formats() {
        assert_eq!(human_secs(590.0), "9m50s");
        assert_eq!(human_secs(18.5), "18.5s");
        assert_eq!(human_secs(0.08), "0.08s");
    }
}
