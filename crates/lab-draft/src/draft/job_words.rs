//! What a mail's words and shell leave a fio job that its command line
//! does not say: the direction of its I/O ("write-only"), the file
//! system its files sit on (the commit it is about), and the paths its
//! shell filled in (`${MNT}/file`).

/// The file system whose commit subject the mail quotes (`ext4: Allow
/// parallel DIO reads`, `xfs: ...`), when it is one alone.
pub(super) fn fs_commit(text: &str) -> Option<&'static str> {
    static SUBJECT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b(ext4|xfs|btrfs): [A-Za-z]").expect("constant regex")
    });
    let mut found = SUBJECT.captures_iter(text).map(|c| match &c[1] {
        "ext4" => "ext4",
        "xfs" => "xfs",
        _ => "btrfs",
    });
    let first = found.next()?;
    found.all(|f| f == first).then_some(first)
}

/// The one direction the mail's words give its I/O, in fio's terms: a
/// job that is `write-only` or `reads only`, or fio's own `randwrite`,
/// `random reads`, `sequential writes`. None when it names none, or
/// more than one (`read-only file system` names a mount, not I/O).
pub(super) fn direction_said(text: &str) -> Option<(&'static str, String)> {
    static SAID: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(?:(?P<only>writes?|reads?)[- ]only(?P<after>\s+\w+)?|(?P<fio>randread|randwrite|randrw)|(?P<how>random|sequential)[- ](?P<dir>reads?|writes?)\b)",
        )
        .expect("constant regex")
    });
    let mut found: Option<(&'static str, String)> = None;
    for c in SAID.captures_iter(text) {
        let after = c.name("after").map_or("", |m| m.as_str().trim());
        let mount = [
            "file",
            "filesystem",
            "fs",
            "mount",
            "mode",
            "snapshot",
            "device",
            "access",
            "flag",
        ];
        let rw = if let Some(only) = c.name("only") {
            if mount.contains(&after.to_ascii_lowercase().as_str()) {
                continue;
            }
            if only.as_str().to_ascii_lowercase().starts_with('w') {
                "write"
            } else {
                "read"
            }
        } else if let Some(f) = c.name("fio") {
            match f.as_str().to_ascii_lowercase().as_str() {
                "randread" => "randread",
                "randwrite" => "randwrite",
                _ => "randrw",
            }
        } else {
            let random = c["how"].eq_ignore_ascii_case("random");
            match (random, c["dir"].to_ascii_lowercase().starts_with('w')) {
                (true, true) => "randwrite",
                (true, false) => "randread",
                (false, true) => "write",
                (false, false) => "read",
            }
        };
        match &found {
            Some((f, _)) if *f != rw => return None,
            Some(_) => {}
            None => found = Some((rw, c[0].trim().to_string())),
        }
    }
    found
}

/// A path the mail's shell filled in (`$DEV`, `${MNT}/file`,
/// `/mnt/$FS/f`), as a path lab can name: a whole variable is the
/// experiment's device (a file name) or fio's working directory; a
/// variable that leads the path is the directory fio ran in, so the rest
/// is relative to it; any other variable stands for its own name.
pub(super) fn unshell_path(named: &str, target: &str, file: bool) -> Option<(String, String)> {
    static VAR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?").expect("constant regex")
    });
    let whole = VAR
        .find(named)
        .filter(|m| m.start() == 0 && m.end() == named.len());
    let said = format!("the mail's {named} is a variable of its shell");
    if whole.is_some() {
        return Some(match file {
            true => (
                target.to_string(),
                format!("{said}: the experiment's device"),
            ),
            false => (
                super::steps::WORKDIR.to_string(),
                format!("{said}: a directory of lab's"),
            ),
        });
    }
    if let Some(m) = VAR.find(named).filter(|m| m.start() == 0)
        && let Some(rest) = named[m.end()..].strip_prefix('/')
        && !rest.contains('$')
        && !rest.is_empty()
    {
        return Some((rest.to_string(), format!("{said}: where fio ran")));
    }
    let resolved = VAR
        .replace_all(named, |c: &regex::Captures| c[1].to_ascii_lowercase())
        .into_owned();
    Some((
        resolved,
        format!("{said}: each variable stands for its name"),
    ))
}
