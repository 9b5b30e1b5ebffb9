//! Where new mails come from: a public-inbox git archive (what lore's
//! lists are mirrored in), a maildir, or an mbox that grows. Each source
//! hands out the messages it has not handed out before, each with the
//! cursor that passes it; the state stores the two together.

use crate::util::MAX_MAIL_INPUT;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    /// One git repository of a public-inbox v2 archive (an epoch,
    /// `git/N.git`), or the archive's folder holding `git/*.git`. Each
    /// commit adds one message as the file `m`.
    PublicInbox(Vec<PathBuf>),
    /// A maildir: `new/` and `cur/`.
    Maildir(PathBuf),
    /// An mbox file, read from where the last pass stopped.
    Mbox(PathBuf),
}

/// One new message and the cursor to store with it.
pub struct Incoming {
    pub raw: Vec<u8>,
    /// (source, key, value)
    pub cursor: (String, String, String),
}

impl Source {
    /// What `path` is: a git archive, a maildir or an mbox.
    pub fn detect(path: &Path) -> Result<Source> {
        let meta = std::fs::metadata(path).map_err(|e| {
            crate::error::input_error(format!(
                "{}: {}",
                path.display(),
                crate::util::io_reason(&e)
            ))
        })?;
        if meta.is_file() {
            return Ok(Source::Mbox(path.to_path_buf()));
        }
        if path.join("new").is_dir() && path.join("cur").is_dir() {
            return Ok(Source::Maildir(path.to_path_buf()));
        }
        let epochs = path.join("git");
        if epochs.is_dir() {
            let mut found: Vec<(u64, PathBuf)> = std::fs::read_dir(&epochs)?
                .filter_map(|e| e.ok())
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let n = name.strip_suffix(".git")?.parse().ok()?;
                    Some((n, e.path()))
                })
                .collect();
            found.sort();
            if !found.is_empty() {
                return Ok(Source::PublicInbox(
                    found.into_iter().map(|(_, p)| p).collect(),
                ));
            }
        }
        if path.join(".git").exists() || path.join("objects").is_dir() {
            return Ok(Source::PublicInbox(vec![path.to_path_buf()]));
        }
        bail!(
            "{}: not a public-inbox git archive (git/N.git or a git repository), a maildir (new/ and cur/) or an mbox file",
            path.display()
        )
    }

    /// The name cursors are stored under.
    pub fn id(&self) -> String {
        let canon = |p: &Path| {
            p.canonicalize()
                .unwrap_or_else(|_| p.to_path_buf())
                .display()
                .to_string()
        };
        match self {
            Source::PublicInbox(e) => format!(
                "public-inbox:{}",
                e.iter().map(|p| canon(p)).collect::<Vec<_>>().join(",")
            ),
            Source::Maildir(p) => format!("maildir:{}", canon(p)),
            Source::Mbox(p) => format!("mbox:{}", canon(p)),
        }
    }

    /// Messages not handed out before, given the stored cursors.
    /// `cursor(key)` reads one; at most `limit` messages come back, so a
    /// first pass over a big archive works in bounded memory.
    pub fn poll(
        &self,
        cursor: &dyn Fn(&str) -> Option<String>,
        limit: usize,
    ) -> Result<Vec<Incoming>> {
        let id = self.id();
        match self {
            Source::PublicInbox(epochs) => {
                let mut out = Vec::new();
                for e in epochs {
                    let key = e.display().to_string();
                    let since = cursor(&key);
                    for c in new_commits(e, since.as_deref())? {
                        if out.len() >= limit {
                            return Ok(out);
                        }
                        if let Some(raw) = blob(e, &c)? {
                            out.push(Incoming {
                                raw,
                                cursor: (id.clone(), key.clone(), c),
                            });
                        }
                    }
                }
                Ok(out)
            }
            Source::Maildir(dir) => {
                let mut files = Vec::new();
                for sub in ["new", "cur"] {
                    for e in std::fs::read_dir(dir.join(sub))
                        .with_context(|| format!("reading {}", dir.join(sub).display()))?
                        .flatten()
                    {
                        let name = e.file_name().to_string_lossy().to_string();
                        // The part before ':' is the file's identity; the
                        // flags after it change as a reader marks it.
                        let unique = name.split(':').next().unwrap_or(&name).to_string();
                        // Regular files only: a symlink could point a
                        // stranger's mail at any file of this host, and a
                        // FIFO would block the robot.
                        let regular = e.file_type().is_ok_and(|t| t.is_file());
                        if regular && !name.starts_with('.') && cursor(&unique).is_none() {
                            files.push((unique, e.path()));
                        }
                    }
                }
                files.sort();
                let mut out = Vec::new();
                for (unique, p) in files.into_iter().take(limit) {
                    let Ok(raw) = crate::util::read_input(&p, "a maildir file", MAX_MAIL_INPUT)
                    else {
                        continue;
                    };
                    out.push(Incoming {
                        raw,
                        cursor: (id.clone(), unique, "seen".into()),
                    });
                }
                Ok(out)
            }
            Source::Mbox(path) => {
                let from: u64 = cursor("offset").and_then(|v| v.parse().ok()).unwrap_or(0);
                mbox_since(path, from, limit, &id)
            }
        }
    }
}

/// Commits after `since` on HEAD, oldest first. A cursor the repository
/// no longer has (a rewritten archive) starts again from the beginning:
/// the state recognises the messages it has seen by Message-ID.
fn new_commits(repo: &Path, since: Option<&str>) -> Result<Vec<String>> {
    let git =
        |args: &[&str]| crate::util::run_output(Command::new("git").arg("-C").arg(repo).args(args));
    if git(&["rev-parse", "--verify", "-q", "HEAD"]).is_err() {
        return Ok(vec![]);
    }
    let range = match since {
        Some(c) if git(&["cat-file", "-e", &format!("{c}^{{commit}}")]).is_ok() => {
            format!("{c}..HEAD")
        }
        _ => "HEAD".into(),
    };
    let out = git(&["rev-list", "--reverse", &range])
        .with_context(|| format!("listing the commits of {}", repo.display()))?;
    Ok(out.lines().map(str::to_string).collect())
}

/// The message a commit adds (`m`), unless it is too big or absent (a
/// public-inbox commit that deletes a message has `d` instead).
fn blob(repo: &Path, commit: &str) -> Result<Option<Vec<u8>>> {
    let spec = format!("{commit}:m");
    let size = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "-s", &spec])
        .output()?;
    if !size.status.success() {
        return Ok(None);
    }
    let n: u64 = String::from_utf8_lossy(&size.stdout)
        .trim()
        .parse()
        .unwrap_or(u64::MAX);
    if n > MAX_MAIL_INPUT {
        return Ok(None);
    }
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "blob", &spec])
        .output()?;
    Ok(out.status.success().then_some(out.stdout))
}

/// Messages of an mbox from byte `from` on. A message counts once it is
/// followed by the next `From ` line, or once the file ends in a blank
/// line: a writer half-way through the last one is left for the next pass.
/// The file is read line by line up to the `limit`-th message, so the
/// batches of a first pass over a big archive each read their own bytes
/// only (at most [`MAX_MAIL_INPUT`] a call).
fn mbox_since(path: &Path, from: u64, limit: usize, id: &str) -> Result<Vec<Incoming>> {
    use std::io::{BufRead, Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let len = f.metadata()?.len();
    // A shorter file was replaced or rotated: read it from the start.
    let from = if from > len { 0 } else { from };
    f.seek(SeekFrom::Start(from))?;
    let mut r = std::io::BufReader::new(f.take(MAX_MAIL_INPUT));
    let mut out = Vec::new();
    // The message being read, and where the bytes read so far end.
    let mut cur: Option<Vec<u8>> = None;
    let mut at = 0u64;
    // The last two bytes read: a `From ` line starts a message at the
    // start, or after a blank line.
    let mut tail = [0u8; 2];
    let mut line = Vec::new();
    let push = |out: &mut Vec<Incoming>, raw: Vec<u8>, end: u64| {
        out.push(Incoming {
            raw,
            cursor: (id.into(), "offset".into(), (from + end).to_string()),
        });
    };
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.starts_with(b"From ") && (at == 0 || tail == *b"\n\n") {
            if let Some(raw) = cur.take() {
                push(&mut out, raw, at);
                if out.len() >= limit {
                    return Ok(out);
                }
            }
            cur = Some(Vec::new());
        }
        if let Some(m) = cur.as_mut() {
            m.extend_from_slice(&line);
        }
        at += line.len() as u64;
        tail = match line.as_slice() {
            [.., a, b] => [*a, *b],
            [b] => [tail[1], *b],
            [] => tail,
        };
    }
    if let Some(raw) = cur.filter(|_| tail == *b"\n\n") {
        push(&mut out, raw, at);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mbox_hands_out_whole_messages_and_resumes_at_the_cursor() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("list.mbox");
        let one = "From a@b Mon Jan  1 00:00:00 2026\nSubject: one\n\nbody\nFrom here on\n\n";
        let two = "From a@b Mon Jan  1 00:00:00 2026\nSubject: two\n\nbody\n\n";
        std::fs::write(&p, format!("{one}{two}From a@b Mon\nSubject: half")).unwrap();
        let src = Source::detect(&p).unwrap();
        let got = src.poll(&|_| None, 10).unwrap();
        assert_eq!(got.len(), 2, "the half-written third waits");
        // "From here on" after a non-blank line is body text, not a split.
        assert!(String::from_utf8_lossy(&got[0].raw).contains("From here on"));
        let off = got[1].cursor.2.clone();
        assert_eq!(off, (one.len() + two.len()).to_string());
        // One message a batch: each batch ends where the next begins.
        let first = src.poll(&|_| None, 1).unwrap();
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].cursor.2, one.len().to_string());
        let second = src
            .poll(&|k| (k == "offset").then(|| one.len().to_string()), 1)
            .unwrap();
        assert_eq!(second[0].raw, two.as_bytes());
        let again = src
            .poll(&|k| (k == "offset").then(|| off.clone()), 10)
            .unwrap();
        assert!(again.is_empty());
    }

    #[test]
    fn a_maildir_hands_out_each_file_once_whatever_its_flags() {
        let t = tempfile::tempdir().unwrap();
        for d in ["new", "cur", "tmp"] {
            std::fs::create_dir(t.path().join(d)).unwrap();
        }
        std::fs::write(t.path().join("new/1.a"), "Subject: x\n\nb\n").unwrap();
        std::fs::write(t.path().join("cur/2.b:2,S"), "Subject: y\n\nb\n").unwrap();
        let src = Source::detect(t.path()).unwrap();
        assert!(matches!(src, Source::Maildir(_)));
        let got = src.poll(&|_| None, 10).unwrap();
        let keys: Vec<&str> = got.iter().map(|i| i.cursor.1.as_str()).collect();
        assert_eq!(keys, vec!["1.a", "2.b"]);
        let seen = src
            .poll(&|k| (k == "1.a").then(|| "seen".into()), 10)
            .unwrap();
        assert_eq!(seen.len(), 1);
        // A symlink and a FIFO are not mails of the list.
        std::os::unix::fs::symlink("/etc/passwd", t.path().join("new/3.c")).unwrap();
        nix::unistd::mkfifo(&t.path().join("new/4.d"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(src.poll(&|_| None, 10).unwrap().len(), 2);
    }

    #[test]
    fn something_else_is_an_error_naming_the_path() {
        let t = tempfile::tempdir().unwrap();
        let e = Source::detect(t.path()).unwrap_err().to_string();
        assert!(
            e.contains(&t.path().display().to_string()) && e.contains("maildir"),
            "{e}"
        );
    }
}
