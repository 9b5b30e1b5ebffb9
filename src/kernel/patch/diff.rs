//! Reading unified diffs: where a diff starts and ends inside a mail, which
//! files it touches, and its hunks.
//!
//! The end of a diff is found by counting hunk lines against the `@@`
//! header, the way `git apply` does, rather than by looking for the mail
//! signature: a removed line `- ` reads as `-- `, so the signature marker
//! alone cannot say where the diff stops.

/// One file's part of a diff. Paths are repo-relative (`-p1` stripped),
/// `None` for `/dev/null`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct FileDiff {
    pub old: Option<String>,
    pub new: Option<String>,
    /// The `@@` lines, in order; GNU patch numbers them from 1 per file.
    pub hunks: Vec<String>,
    /// Set once `---`/`+++` or a hunk was seen, so the next `---` line
    /// starts a new file instead of naming this one.
    has_body: bool,
}

impl FileDiff {
    /// The name a user knows the file by: the new path, or the old one
    /// for a deletion.
    pub fn name(&self) -> &str {
        self.new.as_deref().or(self.old.as_deref()).unwrap_or("")
    }

    /// Whether `path` is either side of this file's diff.
    pub fn is(&self, path: &str) -> bool {
        self.old.as_deref() == Some(path) || self.new.as_deref() == Some(path)
    }
}

/// A diff found in some text: its byte range and its files.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Found {
    pub start: usize,
    pub end: usize,
    pub files: Vec<FileDiff>,
}

/// Find the first diff in `text` and where it ends. `None` when there is
/// no `diff --git` line and no `---`/`+++` pair.
pub(super) fn find(text: &str) -> Option<Found> {
    let lines: Vec<(usize, &str)> = line_offsets(text);
    let first = (0..lines.len()).find(|&i| starts_file(&lines, i))?;
    let mut walk = Walk::default();
    let mut end = lines[first].0;
    let mut i = first;
    while i < lines.len() {
        let Some(used) = walk.step(&lines, i) else {
            break;
        };
        if used.meaningful {
            end = lines[i + used.lines - 1].0 + lines[i + used.lines - 1].1.len();
        }
        i += used.lines;
    }
    let files: Vec<FileDiff> = walk.files;
    (!files.is_empty()).then_some(Found {
        start: lines[first].0,
        end,
        files,
    })
}

/// The diff in `text` as a string that ends with a newline, or `None`.
pub(super) fn extract(text: &str) -> Option<String> {
    let found = find(text)?;
    let mut diff = text[found.start..found.end].to_string();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    Some(diff)
}

/// The files of the first diff in `text`; empty when there is none.
pub(super) fn files(text: &str) -> Vec<FileDiff> {
    find(text).map(|f| f.files).unwrap_or_default()
}

/// Each line with its byte offset, newline kept.
fn line_offsets(text: &str) -> Vec<(usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n')
        .map(|l| {
            let here = at;
            at += l.len();
            (here, l)
        })
        .collect()
}

fn content(line: &str) -> &str {
    line.trim_end_matches('\n').trim_end_matches('\r')
}

/// A file's diff begins at `diff --git`, or at a `---` line directly
/// followed by `+++` (plain `diff -u` output has no `diff --git`).
fn starts_file(lines: &[(usize, &str)], i: usize) -> bool {
    let l = content(lines[i].1);
    l.starts_with("diff --git ") || is_old_new_pair(lines, i)
}

fn is_old_new_pair(lines: &[(usize, &str)], i: usize) -> bool {
    content(lines[i].1).starts_with("--- ")
        && lines
            .get(i + 1)
            .is_some_and(|(_, l)| content(l).starts_with("+++ "))
}

/// How a step consumed lines: how many, and whether they are part of the
/// diff proper (noise such as `diff -ruN a b` between files is skipped
/// but does not extend the diff on its own).
struct Used {
    lines: usize,
    meaningful: bool,
}

impl Used {
    fn diff(lines: usize) -> Option<Used> {
        Some(Used {
            lines,
            meaningful: true,
        })
    }

    fn noise() -> Option<Used> {
        Some(Used {
            lines: 1,
            meaningful: false,
        })
    }
}

/// The state of the line walk: the files so far, and the lines still
/// owed to the current hunk.
#[derive(Default)]
struct Walk {
    files: Vec<FileDiff>,
    old_left: u64,
    new_left: u64,
}

/// Git's extended header lines, which carry no path or which `rename`/
/// `copy` handle separately.
const GIT_HEADERS: &[&str] = &[
    "index ",
    "old mode ",
    "new mode ",
    "deleted file mode ",
    "new file mode ",
    "similarity index ",
    "dissimilarity index ",
    "Binary files ",
];

/// Lines that plain `diff -r` and quilt put between files.
const NOISE: &[&str] = &["diff ", "Only in ", "Index: ", "===="];

impl Walk {
    /// Consume the line(s) at `i`; `None` means the diff ended before it.
    fn step(&mut self, lines: &[(usize, &str)], i: usize) -> Option<Used> {
        let line = content(lines[i].1);
        if self.old_left > 0 || self.new_left > 0 {
            return self.hunk_line(line);
        }
        if line.starts_with('\\') {
            return Used::diff(1);
        }
        if let Some(rest) = line.strip_prefix("diff --git ") {
            self.files.push(git_line_paths(rest));
            return Used::diff(1);
        }
        if is_old_new_pair(lines, i) {
            self.old_new(line, content(lines[i + 1].1));
            return Used::diff(2);
        }
        if line.starts_with("@@ ") {
            return self.hunk_header(line);
        }
        if self.files.last().is_some_and(|f| !f.has_body) && self.git_header(line) {
            return Used::diff(1);
        }
        if NOISE.iter().any(|p| line.starts_with(p)) {
            return Used::noise();
        }
        None
    }

    /// A line inside a hunk. A blank line counts as blank context, since
    /// mailers strip the lone space of an empty context line.
    fn hunk_line(&mut self, line: &str) -> Option<Used> {
        let (old, new) = match line.chars().next() {
            None | Some(' ') => (1, 1),
            Some('-') => (1, 0),
            Some('+') => (0, 1),
            Some('\\') => (0, 0),
            Some(_) => return None,
        };
        if old > self.old_left || new > self.new_left {
            return None;
        }
        self.old_left -= old;
        self.new_left -= new;
        Used::diff(1)
    }

    fn hunk_header(&mut self, line: &str) -> Option<Used> {
        let (old, new) = hunk_counts(line)?;
        let file = self.files.last_mut()?;
        file.hunks.push(line.to_string());
        file.has_body = true;
        self.old_left = old;
        self.new_left = new;
        Used::diff(1)
    }

    /// `---`/`+++` name the current `diff --git` file, or start a new one.
    fn old_new(&mut self, old: &str, new: &str) {
        let old = header_path(&old[4..]);
        let new = header_path(&new[4..]);
        match self.files.last_mut() {
            Some(f) if !f.has_body => {
                f.old = old;
                f.new = new;
                f.has_body = true;
            }
            _ => self.files.push(FileDiff {
                old,
                new,
                hunks: vec![],
                has_body: true,
            }),
        }
    }

    /// Git's extended headers; `rename`/`copy` paths have no `a/` prefix
    /// and override what `diff --git` said.
    fn git_header(&mut self, line: &str) -> bool {
        let f = self.files.last_mut().expect("checked by caller");
        if let Some(p) = line
            .strip_prefix("rename from ")
            .or(line.strip_prefix("copy from "))
        {
            f.old = Some(unquote(p));
        } else if let Some(p) = line
            .strip_prefix("rename to ")
            .or(line.strip_prefix("copy to "))
        {
            f.new = Some(unquote(p));
        } else if line.starts_with("new file mode ") {
            f.old = None;
        } else if line.starts_with("deleted file mode ") {
            f.new = None;
        } else {
            return GIT_HEADERS.iter().any(|h| line.starts_with(h));
        }
        true
    }
}

/// `@@ -a[,b] +c[,d] @@` → (b, d); a missing count means 1.
fn hunk_counts(line: &str) -> Option<(u64, u64)> {
    let mut parts = line.strip_prefix("@@ ")?.split(' ');
    let old = range_count(parts.next()?.strip_prefix('-')?)?;
    let new = range_count(parts.next()?.strip_prefix('+')?)?;
    Some((old, new))
}

fn range_count(range: &str) -> Option<u64> {
    match range.split_once(',') {
        Some((start, n)) => {
            start.parse::<u64>().ok()?;
            n.parse().ok()
        }
        None => range.parse::<u64>().ok().map(|_| 1),
    }
}

/// The path on a `---`/`+++` line: a tab ends it (a timestamp follows in
/// `diff -u` output), `/dev/null` is no file, and the first component
/// goes, as with `patch -p1`.
fn header_path(raw: &str) -> Option<String> {
    let name = unquote(raw.split('\t').next().unwrap_or(raw).trim_end());
    (name != "/dev/null").then(|| strip_component(&name))
}

/// `diff --git a/X b/Y`: the paths are ambiguous when they hold spaces,
/// so prefer the split whose two sides agree (the common, unrenamed case).
fn git_line_paths(rest: &str) -> FileDiff {
    let (old, new) = if rest.starts_with('"') {
        split_quoted(rest)
    } else {
        split_unquoted(rest)
    };
    FileDiff {
        old: Some(strip_component(&old)),
        new: Some(strip_component(&new)),
        ..FileDiff::default()
    }
}

fn split_unquoted(rest: &str) -> (String, String) {
    let splits: Vec<usize> = rest.match_indices(" b/").map(|(i, _)| i).collect();
    let same = splits
        .iter()
        .find(|&&i| strip_component(&rest[..i]) == strip_component(&rest[i + 1..]));
    match same.or(splits.first()) {
        Some(&i) => (rest[..i].to_string(), rest[i + 1..].to_string()),
        None => {
            let (a, b) = rest.split_once(' ').unwrap_or((rest, rest));
            (a.to_string(), b.to_string())
        }
    }
}

fn split_quoted(rest: &str) -> (String, String) {
    let close = closing_quote(rest).unwrap_or(rest.len() - 1);
    let (a, b) = rest.split_at(close + 1);
    (unquote(a), unquote(b.trim_start()))
}

/// The index of the quote that closes the one at index 0.
fn closing_quote(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// Undo git's C-style quoting of unusual file names (`"a/x\ty"`).
fn unquote(s: &str) -> String {
    let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Drop the first path component (`a/`, `b/`, `linux.orig/`), as `-p1`.
fn strip_component(path: &str) -> String {
    match path.split_once('/') {
        Some((_, rest)) => rest.to_string(),
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIT: &str = "\
Subject: x

Some text.
---
 f | 2 +-

diff --git a/dir/f.c b/dir/f.c
index 1..2 100644
--- a/dir/f.c
+++ b/dir/f.c
@@ -1,3 +1,3 @@ int main(void)
 one

-- 
+two
@@ -10 +10,2 @@
-ten
+ten
+eleven
\\ No newline at end of file
diff --git a/old name.c b/new name.c
similarity index 90%
rename from old name.c
rename to new name.c
diff --git a/gone.c b/gone.c
deleted file mode 100644
index 3..0
--- a/gone.c
+++ /dev/null
@@ -1 +0,0 @@
-bye
-- 
2.44.0
";

    #[test]
    fn finds_the_diff_and_stops_at_the_signature() {
        let d = extract(GIT).unwrap();
        assert!(d.starts_with("diff --git a/dir/f.c b/dir/f.c\n"));
        // The removed "- " line reads "-- " but is inside a hunk.
        assert!(d.contains("\n-- \n+two\n"));
        assert!(d.ends_with("-bye\n"), "{d}");
    }

    #[test]
    fn names_files_and_hunks() {
        let files = files(GIT);
        let names: Vec<(Option<&str>, Option<&str>)> = files
            .iter()
            .map(|f| (f.old.as_deref(), f.new.as_deref()))
            .collect();
        assert_eq!(
            names,
            vec![
                (Some("dir/f.c"), Some("dir/f.c")),
                (Some("old name.c"), Some("new name.c")),
                (Some("gone.c"), None),
            ]
        );
        assert_eq!(
            files[0].hunks,
            vec!["@@ -1,3 +1,3 @@ int main(void)", "@@ -10 +10,2 @@"]
        );
        assert_eq!(files[2].hunks, vec!["@@ -1 +0,0 @@"]);
    }

    #[test]
    fn plain_diff_paths_drop_timestamps_and_first_component() {
        let d = "--- linux.orig/a b.c\t2026-01-01 00:00:00\n+++ linux/a b.c\t2026-01-02\n@@ -1 +1 @@\n-x\n+y\n";
        let f = files(d);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].old.as_deref(), Some("a b.c"));
        assert_eq!(f[0].new.as_deref(), Some("a b.c"));
    }

    #[test]
    fn quoted_git_paths_are_unquoted() {
        let d = "diff --git \"a/t\\tab\" \"b/t\\tab\"\nnew file mode 100644\n";
        let f = files(d);
        assert_eq!(f[0].old, None);
        assert_eq!(f[0].new.as_deref(), Some("t\tab"));
    }

    #[test]
    fn text_without_a_diff_has_none() {
        assert_eq!(extract("just words\n--- \nmore\n"), None);
        assert_eq!(extract(""), None);
    }

    #[test]
    fn hunk_counts_default_to_one() {
        assert_eq!(hunk_counts("@@ -3 +4 @@"), Some((1, 1)));
        assert_eq!(hunk_counts("@@ -0,0 +1,5 @@ f"), Some((0, 5)));
        assert_eq!(hunk_counts("@@ junk @@"), None);
    }
}
