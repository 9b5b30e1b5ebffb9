//! The readable lines of a mail body: quote markers taken off, and the
//! lines that are never claims blanked out: diffs (at any quote depth,
//! ending at the first line that is not diff syntax), diffstats,
//! trailers, signatures and dmesg lines.

use regex::Regex;
use std::sync::LazyLock;

/// One body line with its quote markers taken off, borrowed from the
/// body (a 50 MB message is not copied line by line).
#[derive(Clone, Debug, PartialEq)]
pub struct Line<'a> {
    pub depth: usize,
    /// Empty when the line is blank or never a claim.
    pub text: &'a str,
    /// From 1, in the message body.
    pub no: usize,
    /// The line is part of a diff (and so blank here).
    pub in_diff: bool,
}

impl Line<'_> {
    pub fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }
}

/// Per quote depth: where a diff or a signature has got to.
#[derive(Clone, Copy, Default, PartialEq)]
struct DepthState {
    in_diff: bool,
    /// Lines left in the current hunk: old side, new side.
    hunk: Option<(u64, u64)>,
    in_signature: bool,
    /// Printing a file of settings (`# cat /sys/fs/cgroup/io.cost.qos`):
    /// its lines, up to a blank line or the next command, are settings.
    in_settings: bool,
}

/// Every line of `body`, with the lines that are never claims blanked.
/// The longest line the claims reader reads, in bytes.
pub const MAX_LINE: usize = 16 * 1024;

pub fn readable(body: &str) -> Vec<Line<'_>> {
    let raw = raw_lines(body);
    let script = fenced_scripts(&raw);
    let progress = progress_runs(&raw);
    let ticks = chart_ticks(&raw);
    let dropped: Vec<bool> = (0..raw.len())
        .map(|i| script[i] || progress[i] || ticks[i])
        .collect();
    walk_all(&raw, &dropped)
}

/// Lines below which a body is read on one core: threads cost more
/// than they give on a mail of ordinary size.
const PARALLEL_LINES: usize = 200_000;

/// Pieces per core a big body is cut into, so a core that is done
/// takes the next one (see `par_chunks`).
const PIECES_PER_CORE: usize = 8;

/// Every line of `body` with its quote depth. A big body is cut at line
/// ends and split on every core; `str::lines` gives the same lines for
/// the pieces as for the whole, as each piece ends with its `\n`.
fn raw_lines(body: &str) -> Vec<(usize, &str)> {
    let threads = crate::util::ncpus();
    if threads == 1 || body.len() < 8 << 20 {
        return body.lines().map(unquote).collect();
    }
    raw_lines_in(body, threads * PIECES_PER_CORE, threads)
}

fn raw_lines_in(body: &str, n: usize, threads: usize) -> Vec<(usize, &str)> {
    let ends = |from: usize| {
        let p = body.as_bytes()[from..].iter().position(|&b| b == b'\n')?;
        Some(from + p + 1)
    };
    let pieces: Vec<&str> = even_cuts(body.len(), n, ends)
        .into_iter()
        .map(|r| &body[r])
        .collect();
    let parts = crate::util::par_chunks(&pieces, threads, |_, ps| {
        Ok(ps
            .iter()
            .flat_map(|p| p.lines().map(unquote))
            .collect::<Vec<_>>())
    });
    match parts.into_iter().collect::<anyhow::Result<Vec<_>>>() {
        Ok(parts) => parts.concat(),
        Err(_) => body.lines().map(unquote).collect(),
    }
}

/// Where the walk down the lines has got to: per quote depth, and the
/// depth of the last line with text.
#[derive(Clone, Default)]
struct Walk {
    states: Vec<DepthState>,
    last_depth: usize,
}

impl Walk {
    /// Nothing is open at any depth (no diff, signature or settings),
    /// so the lines ahead read as from the top of a body. The last
    /// depth then makes no difference: it only ever closes a signature.
    fn is_fresh(&self) -> bool {
        self.states.iter().all(|s| *s == DepthState::default())
    }
}

/// The readable lines of `raw`. A big body is cut at blank lines into
/// pieces walked on every core, each as from the top; a piece whose
/// walk should have started with something open (a diff, a signature
/// running across the cut) is walked again, in order, from where the
/// piece before it ended. The result is the one walk's from the top,
/// whatever the cuts.
fn walk_all<'a>(raw: &[(usize, &'a str)], dropped: &[bool]) -> Vec<Line<'a>> {
    let threads = crate::util::ncpus();
    if threads == 1 || raw.len() < PARALLEL_LINES {
        return walk(raw, 0..raw.len(), Walk::default(), dropped).0;
    }
    walk_in_pieces(
        raw,
        dropped,
        &blank_cuts(raw, threads * PIECES_PER_CORE),
        threads,
    )
}

fn walk_in_pieces<'a>(
    raw: &[(usize, &'a str)],
    dropped: &[bool],
    pieces: &[std::ops::Range<usize>],
    threads: usize,
) -> Vec<Line<'a>> {
    let walked = crate::util::par_chunks(pieces, threads, |_, ps| {
        Ok(ps
            .iter()
            .map(|r| walk(raw, r.clone(), Walk::default(), dropped))
            .collect::<Vec<_>>())
    });
    let Ok(walked) = walked.into_iter().collect::<anyhow::Result<Vec<_>>>() else {
        return walk(raw, 0..raw.len(), Walk::default(), dropped).0;
    };
    let mut out = Vec::with_capacity(raw.len());
    let mut carry = Walk::default();
    for (range, (lines, end)) in pieces.iter().zip(walked.into_iter().flatten()) {
        let (mut lines, end) = match carry.is_fresh() {
            true => (lines, end),
            false => walk(raw, range.clone(), carry, dropped),
        };
        out.append(&mut lines);
        carry = end;
    }
    out
}

/// `n` ranges of about equal length over `raw`, each cut at the first
/// blank line after its share, where nothing but a diff runs on.
fn blank_cuts(raw: &[(usize, &str)], n: usize) -> Vec<std::ops::Range<usize>> {
    let blank = |from: usize| {
        let b = raw[from..]
            .iter()
            .take(10_000)
            .position(|(_, t)| t.trim().is_empty());
        Some(from + b.unwrap_or(0))
    };
    even_cuts(raw.len(), n, blank)
}

/// At most `n` ranges that tile `0..len`, of about equal length: each
/// cut is where `boundary` puts it at or after its share (no more cuts
/// when it finds none).
fn even_cuts(
    len: usize,
    n: usize,
    boundary: impl Fn(usize) -> Option<usize>,
) -> Vec<std::ops::Range<usize>> {
    let mut cuts = vec![0];
    for k in 1..n {
        let from = (len * k / n).max(cuts[cuts.len() - 1]);
        match boundary(from) {
            Some(at) => cuts.push(at.min(len)),
            None => break,
        }
    }
    cuts.push(len);
    cuts.dedup();
    cuts.windows(2).map(|w| w[0]..w[1]).collect()
}

/// The lines of `raw` in `range`, read from where `w` had got to; and
/// where it got to at the end.
fn walk<'a>(
    raw: &[(usize, &'a str)],
    range: std::ops::Range<usize>,
    mut w: Walk,
    dropped: &[bool],
) -> (Vec<Line<'a>>, Walk) {
    let mut out = Vec::with_capacity(range.len());
    for i in range {
        let (depth, text) = raw[i];
        if w.states.len() <= depth {
            w.states.resize(depth + 1, DepthState::default());
        }
        // `-- ` ends a message even inside a hunk whose counts are off.
        if text == "-- " {
            w.states[depth].in_diff = false;
        }
        let text = measured_by_kernel(text.trim_end());
        if !text.is_empty() && depth != w.last_depth {
            // A signature ends where text at another depth begins.
            w.states[w.last_depth].in_signature = false;
        }
        if !text.is_empty() {
            w.last_depth = depth;
        }
        let next_same = raw[i + 1..]
            .iter()
            .take(3)
            .find(|(d, _)| *d == depth)
            .map(|(_, t)| *t);
        // A line of more than MAX_LINE bytes is no table row and no
        // sentence a person wrote (a base64 blob, a log pasted as one
        // line); its tokens would cost memory in proportion to its
        // numbers, so it is left out.
        // `--` without its space is a signature only when little follows
        // it at its depth: mail clients strip the space, and people also
        // use `--` to close a pasted file, with their results after it.
        let tail_is_short = raw[i].1 != "--" || short_tail(&raw[i + 1..], depth);
        let mut kept = keep_line(&mut w.states[depth], text, next_same, tail_is_short);
        if kept == Kept::Text && (wrapped_log_record(raw, i) || continues_command(raw, i)) {
            kept = Kept::Other;
        }
        let keep = text.len() <= MAX_LINE && kept == Kept::Text && !dropped[i];
        out.push(Line {
            depth,
            text: if keep { text } else { "" },
            no: i + 1,
            in_diff: kept == Kept::Diff,
        });
    }
    (out, w)
}

/// The last line of a command continued with `\` (`  -c fsync -c
/// "pread -v 3k 32" /mnt/scratch/foo`): options, at the depth of the
/// line above, which ends in a backslash.
fn continues_command(raw: &[(usize, &str)], i: usize) -> bool {
    let (depth, text) = raw[i];
    i > 0
        && raw[i - 1].0 == depth
        && raw[i - 1].1.trim_end().ends_with('\\')
        && text.trim_start().starts_with('-')
}

/// A piece of a kernel log record that a mail client wrapped onto a
/// line of its own (`CR: 44002202  XER: 20040001` between two
/// time-stamped lines of an oops): a line with no time stamp of its own,
/// not indented, between two log lines at its quote depth.
fn wrapped_log_record(raw: &[(usize, &str)], i: usize) -> bool {
    let (depth, text) = raw[i];
    let log_at = |j: usize| raw.get(j).is_some_and(|&(d, t)| d == depth && is_dmesg(t));
    i > 0
        && !text.starts_with(char::is_whitespace)
        && !is_dmesg(text)
        && log_at(i - 1)
        && log_at(i + 1)
}

/// The lines of a script pasted between markdown fences (```), fences
/// included: its numbers are arguments and constants, not results. A
/// fenced block is a script when at least 3 of its lines, and a fifth
/// of them, are shell or C syntax (`do_x() {`, `;;`, `done`, `fi`). A
/// fenced block of output is read as usual.
fn fenced_scripts(raw: &[(usize, &str)]) -> Vec<bool> {
    let mut out = vec![false; raw.len()];
    let mut open: Option<(usize, usize)> = None;
    for (i, &(depth, text)) in raw.iter().enumerate() {
        if !text.trim_start().starts_with("```") {
            continue;
        }
        match open {
            Some((start, d)) if d == depth => {
                let body = &raw[start + 1..i];
                let lines = body.iter().filter(|(_, t)| !t.trim().is_empty()).count();
                let code = body.iter().filter(|(_, t)| is_script_syntax(t)).count();
                if code >= 3 && code * 5 >= lines {
                    out[start..=i].iter_mut().for_each(|x| *x = true);
                }
                open = None;
            }
            _ => open = Some((i, depth)),
        }
    }
    out
}

/// A progress meter left in a pasted output: three or more lines in a
/// row of one shape (`[FSCK] Check node 40299 / 402988 (10.00%)`,
/// `Writing inode tables: 12/64`) whose count goes up toward a total
/// that stays the same. Each says how far a run had got, not what it
/// measured; a result, if any, comes after them.
fn progress_runs(raw: &[(usize, &str)]) -> Vec<bool> {
    static FRACTION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(\d+)\s*(?:/|\bof\b)\s*(\d+)\b").expect("constant regex"));
    let mut out = vec![false; raw.len()];
    // (count, total, shape) of a line that holds `a / b` or `a of b`.
    let reading = |t: &str| -> Option<(u64, u64, String)> {
        if !t.contains('/') && !t.contains(" of ") {
            return None;
        }
        let c = FRACTION.captures(t)?;
        let shape: String = t
            .chars()
            .filter(|c| !c.is_ascii_digit() && *c != '.' && *c != ' ')
            .collect();
        Some((c[1].parse().ok()?, c[2].parse().ok()?, shape))
    };
    let mut i = 0;
    while i < raw.len() {
        let Some((mut count, total, shape)) = reading(raw[i].1) else {
            i += 1;
            continue;
        };
        let mut end = i + 1;
        while let Some(&(depth, t)) = raw.get(end) {
            match reading(t) {
                Some((c, n, s)) if depth == raw[i].0 && n == total && c > count && s == shape => {
                    count = c;
                    end += 1;
                }
                _ => break,
            }
        }
        if end - i >= 3 {
            out[i..end].iter_mut().for_each(|x| *x = true);
        }
        i = end;
    }
    out
}

/// The line under an ASCII chart's frame (`    0 +-----------+`, with
/// bars standing on it or not: `25 +-+---**---+**---+-+`): the
/// x axis's tick labels (`1,1   2,2   6,14 (order)`), settings the chart
/// was drawn over, never results.
fn chart_ticks(raw: &[(usize, &str)]) -> Vec<bool> {
    static FRAME: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*-?[\d.]+[kKMG%]?\s+\+[-+*#|o. ]{20,}\+\s*$").expect("constant regex")
    });
    let mut out = vec![false; raw.len()];
    for (i, w) in raw.windows(2).enumerate() {
        if w[0].0 == w[1].0 && w[0].1.contains("-----") && FRAME.is_match(w[0].1) {
            out[i + 1] = true;
        }
    }
    out
}

/// `| grep copied ; echo 3 > /proc/sys/vm/drop_caches ; done`: a
/// command the mailer wrapped at its pipe, going on into a text filter.
/// One bar, first, then a filter: no table's row.
fn is_piped_on(text: &str) -> bool {
    const FILTERS: [&str; 10] = [
        "grep", "egrep", "awk", "sed", "tee", "head", "tail", "sort", "cut", "xargs",
    ];
    let Some(rest) = text.trim_start().strip_prefix("| ") else {
        return false;
    };
    !rest.contains('|')
        && rest
            .split_whitespace()
            .next()
            .is_some_and(|w| FILTERS.contains(&w))
}

fn is_script_syntax(text: &str) -> bool {
    const ENDS: [&str; 7] = ["{", "}", ";;", "then", "do", "else", ";"];
    const STARTS: [&str; 9] = [
        "#!",
        "for ",
        "while ",
        "if ",
        "case ",
        "function ",
        "local ",
        "export ",
        "elif ",
    ];
    let t = text.trim();
    matches!(t, "fi" | "done" | "esac" | "}" | "};")
        || ENDS.iter().any(|e| t.ends_with(e))
        || STARTS.iter().any(|s| t.starts_with(s))
}

/// What a line is, at its own depth's state.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// It may hold a claim.
    Text,
    /// Part of a diff.
    Diff,
    /// Never a claim: a signature, trailer, diffstat or dmesg line.
    Other,
}

/// Whether at most [`SIGNATURE_LINES`] non-blank lines follow at
/// `depth` before text at another depth (a quote, or the reply after a
/// quoted signature) or the end.
fn short_tail(rest: &[(usize, &str)], depth: usize) -> bool {
    let mut n = 0;
    for &(d, t) in rest {
        if t.trim().is_empty() {
            continue;
        }
        if d != depth {
            break;
        }
        n += 1;
        if n > SIGNATURE_LINES {
            return false;
        }
    }
    true
}

/// The longest signature: a name, a title, addresses, a disclaimer.
const SIGNATURE_LINES: usize = 12;

fn keep_line(st: &mut DepthState, text: &str, next: Option<&str>, tail_is_short: bool) -> Kept {
    if st.in_diff {
        if continues_diff(st, text) {
            return Kept::Diff;
        }
        st.in_diff = false;
        st.hunk = None;
    }
    if st.in_signature {
        return Kept::Other;
    }
    if text.trim().is_empty() {
        st.in_settings = false;
    } else if is_settings_print(text) {
        st.in_settings = true;
        return Kept::Other;
    } else if st.in_settings && !is_shell(text) && !is_prompt(text) {
        return Kept::Other;
    } else {
        st.in_settings = false;
    }
    if text == "--" || text == "-- " {
        st.in_signature = tail_is_short;
        return Kept::Other;
    }
    if starts_diff(text, next) {
        st.in_diff = true;
        st.hunk = hunk_counts(text);
        return Kept::Diff;
    }
    if text == "---"
        || is_piped_on(text)
        || is_diffstat(text)
        || is_trailer(text)
        || is_dmesg(text)
        || is_trace_event(text)
        || is_shell(text)
        || is_dd_progress(text, next)
        || is_program_log(text)
        || is_setting_printed_with_its_path(text)
    {
        Kept::Other
    } else {
        Kept::Text
    }
}

/// `/sys/block/md0/queue/nr_requests : 128`, as `grep . /sys/...` or
/// `find ... -printf "%p : " -exec cat` print a directory of
/// attributes: settings and state, read where a counter (`stat`) or a
/// reading (`sync_speed`) is the file.
fn is_setting_printed_with_its_path(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with("/sys/") && !t.starts_with("/proc/") {
        return false;
    }
    let Some((path, value)) = t.split_once(':') else {
        return false;
    };
    let path = path.trim_end();
    let file = path.rsplit('/').next().unwrap_or("");
    !path.contains(char::is_whitespace)
        && !value.trim().is_empty()
        && !["stat", "stats", "speed"].iter().any(|m| file.ends_with(m))
}

/// A program's log message, led by its severity (`Info: total FS
/// sectors = 124528600`, `[ERROR] ...`, `DEBUG:`): like a kernel log
/// record, it reports what the program found or did, not a measure.
fn is_program_log(text: &str) -> bool {
    static LOG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:(?:INFO|Info|DEBUG|Debug|WARN|ERROR|Error|FATAL|TRACE)\s?:|\[(?:INFO|DEBUG|WARN|WARNING|ERROR|FATAL|TRACE)\])\s")
            .expect("constant regex")
    });
    text.trim_start()
        .starts_with(['I', 'D', 'W', 'E', 'F', 'T', '['])
        && LOG.is_match(text)
}

/// dd's `status=progress` line, left on the screen above its `N+M
/// records in`: the amount copied so far, not the run's result, which
/// dd prints after the records lines.
fn is_dd_progress(text: &str, next: Option<&str>) -> bool {
    text.contains(" copied, ")
        && next.is_some_and(|n| {
            let t = n.trim();
            t.ends_with(" records in")
                && t.split_once('+')
                    .is_some_and(|(a, _)| !a.is_empty() && a.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// A diff goes on through its headers and hunks; inside a hunk the
/// counts in `@@ -a,b +c,d @@` say how many lines are left, so a blank
/// context line is read as part of it and a table after it is not.
fn continues_diff(st: &mut DepthState, text: &str) -> bool {
    if let Some((old, new)) = st.hunk.as_mut()
        && (*old > 0 || *new > 0)
    {
        {
            let (o, n) = match text.chars().next() {
                None | Some(' ') => (1, 1),
                Some('-') => (1, 0),
                Some('+') => (0, 1),
                Some('\\') => (0, 0),
                _ => {
                    st.hunk = None;
                    return is_diff_header(text);
                }
            };
            *old = old.saturating_sub(o);
            *new = new.saturating_sub(n);
            return true;
        }
    }
    if let Some(counts) = hunk_counts(text) {
        st.hunk = Some(counts);
        return true;
    }
    is_diff_header(text) || text.starts_with("\\ No newline")
}

fn is_diff_header(text: &str) -> bool {
    const HEADERS: [&str; 14] = [
        "diff ",
        "index ",
        "--- ",
        "+++ ",
        "new file mode",
        "deleted file mode",
        "old mode",
        "new mode",
        "similarity index",
        "dissimilarity index",
        "rename from",
        "rename to",
        "copy from",
        "Binary files",
    ];
    HEADERS.iter().any(|h| text.starts_with(h))
}

/// `diff --git`, `Index:`, a `--- `/`+++ ` pair or a hunk header.
fn starts_diff(text: &str, next: Option<&str>) -> bool {
    text.starts_with("diff --git ")
        || text.starts_with("diff -u")
        || text.starts_with("diff -p")
        || text.starts_with("Index: ")
        || hunk_counts(text).is_some()
        || (text.starts_with("--- ") && next.is_some_and(|n| n.starts_with("+++ ")))
}

/// `@@ -15,6 +15,7 @@` → (6, 7); a missing count is 1.
fn hunk_counts(text: &str) -> Option<(u64, u64)> {
    static HUNK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^@@+ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@").expect("constant regex")
    });
    if !text.starts_with("@@") {
        return None;
    }
    let c = HUNK.captures(text)?;
    let count = |i: usize| c.get(i).map_or(Some(1), |m| m.as_str().parse().ok());
    Some((count(1)?, count(2)?))
}

/// Quote depth and the text after the markers: `> `, `>> `, `> > `.
pub fn unquote(raw: &str) -> (usize, &str) {
    let mut depth = 0;
    let mut rest = raw;
    while let Some(after) = rest.trim_start_matches(' ').strip_prefix('>') {
        depth += 1;
        rest = after;
    }
    if depth > 0 {
        rest = rest.strip_prefix(' ').unwrap_or(rest);
    }
    (depth, rest)
}

/// ` drivers/md/dm-delay.c | 25 +++---` and ` 1 file changed, ...`.
fn is_diffstat(text: &str) -> bool {
    static FILE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*\S*[/.]\S*\s+\|\s+(\d+ ?[+-]*|Bin .*)$").expect("constant regex")
    });
    // git's summary under the diffstat: `create mode 100644 fs/x.c`.
    static MODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:(?:create|delete) mode \d{6} \S|mode change \d{6} => \d{6} \S|rename \S.* \(\d+%\)$)")
            .expect("constant regex")
    });
    if text.contains(" mode ") && MODE.is_match(text) {
        return true;
    }
    static CHANGED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*\d+ files? changed(, \d+ insertions?\(\+\))?").expect("constant regex")
    });
    // Cheap tests first: most lines are neither.
    (text.contains(" changed") && CHANGED.is_match(text))
        || (text.contains('|') && FILE.is_match(text))
}

/// `Signed-off-by:`, `Tested-by:`, `Fixes:`, `Link:`, `Cc:` and the like.
fn is_trailer(text: &str) -> bool {
    static TRAILER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*(?i:[a-z][a-z0-9]*(?:-[a-z0-9]+)*-by|fixes|link|closes|cc|bug|buglink|change-id|message-id|references|in-reply-to|patch|base-commit|prerequisite-patch-id):\s",
        )
        .expect("constant regex")
    });
    text.contains(": ") && TRAILER.is_match(text)
}

/// A command that prints settings, not results: `cat` (or `grep .`,
/// `head`) of a file under /sys, /proc/sys or /etc, or of a config
/// file; a counters file (`stat`) is read.
fn is_settings_print(text: &str) -> bool {
    static PRINT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[#$]\s)\s*(?:sudo\s+)?(?:cat|head|grep \S+|tail)\s+(?:-\S+\s+)*(/sys/\S*|/proc/sys/\S*|/proc/cmdline|/etc/\S*|\S*\.conf\b|\S*config\b)")
            .expect("constant regex")
    });
    // A file system's or a device's own inspection tools print its
    // state (layout, extents, fragmentation, identity, limits), no run:
    // `xfs_info /mnt`, `echo frag | xfs_db -r /dev/sdb1`, `dumpe2fs -h`,
    // `filefrag -v`, `sg_vpd -p 0xb0`, `nvme id-ctrl`, `lsblk`.
    static INSPECT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?:^|[#$|]\s*|\s)(?:sudo\s+)?(?:xfs_db|xfs_info|xfs_bmap|dumpe2fs|debugfs|filefrag|e2freefrag|tune2fs\s+-l|btrfs\s+inspect-internal|sg_(?:inq|readcap|vpd|modes|luns|map|ses|opcodes|sat_identify)|nvme\s+(?:id-ctrl|id-ns|list)|lsblk|blkid|lscpu|lspci|dmidecode|hdparm\s+-I)\b")
            .expect("constant regex")
    });
    let t = text.trim_start();
    let typed = is_prompt(t) || t.contains("]# ") || t.contains("]$ ");
    if INSPECT.is_match(t) && (typed || INSPECT.find(t).is_some_and(|m| m.start() == 0)) {
        return true;
    }
    // The first line filefrag prints, when the command is not shown.
    if t.starts_with("Filesystem type is: ") {
        return true;
    }
    // Counters and readings (`/sys/block/sda/stat`, `.../io.stat`, a
    // cgroup's `cpu.pressure`, `memory.events`, `memory.peak`) are
    // measurements.
    const READINGS: [&str; 7] = [
        "stat", "stats", "pressure", "events", "current", "peak", "usage",
    ];
    text.contains('/')
        && PRINT.captures(text.trim_start()).is_some_and(|c| {
            let file = c[1].trim_end_matches('*');
            !READINGS.iter().any(|r| file.ends_with(r))
        })
}

/// A line typed at a prompt: `# cmd`, `$ cmd`, or a prompt cut short
/// by a mailer or a hand (`]# cmd`, `~]$ cmd`, `(venv) $ cmd`): a first
/// word that ends in `#` or `$` and is no word of its own.
fn is_prompt(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with(['#', '$']) {
        return true;
    }
    let Some((first, rest)) = t.split_once(' ') else {
        return false;
    };
    let Some(stem) = first.strip_suffix(['#', '$']) else {
        return false;
    };
    !rest.trim().is_empty()
        && first.len() <= 40
        && (stem.is_empty() || stem.ends_with([']', ')', '~', ':', '>']))
}

/// A shell session's own lines: a prompt with its command
/// (`root@dev linux (next) # make -j8`), a `set -x` trace (`+ echo
/// 4096`, `++ seq 0 3`) and `ls -l` entries. What the commands print
/// is read; what was typed is not.
fn is_shell(text: &str) -> bool {
    static SHELL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
            ^\s*[\w.-]+@[\w.-]+(?::\S*)?[^\#$]{0,60}[\#$]\s  # user@host ... # command
            | ^\+{1,3}\s(?:[A-Za-z_]\w*=|[a-z./][\w./-]*(?:\s|$))  # set -x trace
            | ^[-dlcbps][rwxsStT-]{9}[.+@]?\s+\d             # ls -l
            ",
        )
        .expect("constant regex")
    });
    (text.contains('@') || text.starts_with(['+', '-', 'd', 'l', 'c', 'b', 'p', 's']))
        && SHELL.is_match(text)
}

/// A command line as typed, without a prompt: a program's name, then
/// arguments with at least one option (`usemem --init-time -n 48 1G`,
/// `valkey-server --maxmemory 2560M`), or a continued line of options
/// (`  --runtime=60 --rw=randread \`). Its numbers are arguments. A
/// result line has a label with a colon or a number first, so a word
/// ending in `:` rules a line out. The line stays readable: above a
/// table it says which command the numbers are from.
pub(crate) fn is_command(text: &str) -> bool {
    let t = text.trim();
    let mut words = t.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let option = |w: &str| {
        let w = w.strip_prefix("--").or_else(|| w.strip_prefix('-'));
        w.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic()))
    };
    let program = first.len() > 1
        && first.starts_with(|c: char| c.is_ascii_lowercase())
        && first
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+".contains(c));
    let continued = t.ends_with('\\') && option(first);
    // A sentence that mentions an option (`that -pipe is, on average,
    // faster`) has punctuation, or words before its first option.
    (program || continued)
        && !t
            .split_whitespace()
            .any(|w| w.ends_with([':', ',', '.', ';', '?']))
        && t.split_whitespace().skip(1).take(3).any(option)
}

/// `[   12.345678] nvme0n1: ...`: a kernel log line.
/// A line of an event trace (blkparse, ftrace, perf script): a
/// timestamp of microseconds or finer, with a device pair (`259,0`), a
/// `[task]` or `[cpu]` in brackets, or an `event:` name; or, with no
/// timestamp, a block event's own record: device pair, the `RWBS`
/// flags, `sector + count` (`179,0 R 84601376 + 2064`), as the block
/// tracepoints print it. Its numbers are sectors, PIDs and sequence
/// numbers, never results.
fn is_trace_event(text: &str) -> bool {
    static BLOCK_RECORD: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b\d{1,4},\d{1,4}\s+[RWDFSMNABE]{1,6}\s+\d+\s\+\s\d+\b")
            .expect("constant regex")
    });
    if text.contains(" + ") && BLOCK_RECORD.is_match(text) {
        return true;
    }
    static STAMP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^|\s)\d+\.\d{6,9}:?(?:\s|$)").expect("constant regex"));
    static CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*\d+,\d+\s|\[(?:\d{1,4}|[a-z][\w.:/-]*)\]|\d\.\d{6,9}:\s+[\w:]+:")
            .expect("constant regex")
    });
    STAMP.is_match(text) && CONTEXT.is_match(text)
}

fn is_dmesg(text: &str) -> bool {
    static DMESG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*(<\d>)?\[\s*\d+\.\d+\]").expect("constant regex"));
    text.trim_start().starts_with(['[', '<']) && DMESG.is_match(text)
}

/// A kernel log line is no claim (its time stamp, pids, addresses),
/// except where the kernel printed what it measured: a throughput
/// (`[    0.630603] raid6: avx2x4   gen() 18429 MB/s`, the xor and
/// raid6 boot benchmarks). Such a line is read without its time stamp.
fn measured_by_kernel(text: &str) -> &str {
    static STAMPED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^\s*\[\s*\d+\.\d{6}\]\s(.*\b\d+(?:\.\d+)?\s?[KMGT]i?B/s\b.*)$")
            .expect("constant regex")
    });
    if !text.trim_start().starts_with('[') {
        return text;
    }
    STAMPED
        .captures(text)
        .and_then(|c| c.get(1))
        .map_or(text, |m| m.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body cut anywhere, even inside a hunk, a signature or a
    /// settings print, reads as the whole body read at once.
    #[test]
    fn pieces_read_as_the_whole() {
        let body = "Results:\r\n\n\tdelay\tbefore\n\t1\t9.97\n\n\
            # cat /sys/fs/cgroup/io.cost.qos\n8:16 enable=1 rpct=95.00\n\n\
            > quoted 12 IOPS\n>> deeper: 3 ms\n> back 4 ms\n\n\
            diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n int a;\n\n-int b = 1;\n+int b = 2;\n\n\
            after the diff: 120 IOPS\n-- \nSig 1 line\n\n> a reply 7 ms\nlast 9 ms";
        for n in [1, 2, 3, 7, 40] {
            assert_eq!(
                raw_lines_in(body, n, 2),
                body.lines().map(unquote).collect::<Vec<_>>()
            );
        }
        let raw: Vec<(usize, &str)> = body.lines().map(unquote).collect();
        for n in [1, 2, 5, 40] {
            let cuts = blank_cuts(&raw, n);
            assert_eq!((cuts[0].start, cuts[cuts.len() - 1].end), (0, raw.len()));
            assert!(cuts.windows(2).all(|w| w[0].end == w[1].start));
        }
        let dropped = vec![false; raw.len()];
        let whole = walk(&raw, 0..raw.len(), Walk::default(), &dropped).0;
        // The body opens a diff, a signature and a settings print.
        let kept = |t: &str| whole.iter().any(|l| l.text == t);
        assert!(whole.iter().any(|l| l.in_diff) && kept("after the diff: 120 IOPS"));
        assert!(!kept("Sig 1 line") && !kept("8:16 enable=1 rpct=95.00") && kept("last 9 ms"));
        for step in 1..raw.len() {
            let pieces: Vec<_> = (0..raw.len())
                .step_by(step)
                .map(|a| a..(a + step).min(raw.len()))
                .collect();
            assert_eq!(
                walk_in_pieces(&raw, &dropped, &pieces, 2),
                whole,
                "cut every {step}"
            );
        }
    }

    fn texts(body: &str) -> Vec<(usize, String)> {
        readable(body)
            .into_iter()
            .map(|l| (l.depth, l.text.to_string()))
            .collect()
    }

    #[test]
    fn trace_events_are_no_claims_and_results_with_decimals_are() {
        for t in [
            "259,0   12        1     0.000000000 114067  A  WS 401408 + 8 <- (9,127) 274432",
            "259,0    4        1     0.000045379     0  C  WS 401408 + 8 [0]",
            "   fio-1234  [003] d..1  123.456789: block_rq_issue: 259,0 WS 4096 () 401408 + 8 [fio]",
            "fio 1234 [003] 123.456789: cycles:  ffffffff8172c355 blk_mq_submit_bio",
            "\tblock_bio_queue: 179,0 R 84601376 + 2064 [Thread-2]",
            "block_rq_complete: 8,0 WFS 153795416 + 5120 [0]",
        ] {
            assert!(is_trace_event(t), "{t}");
        }
        for t in [
            "  read   0.123456   0.234567",
            "[PATCH] 1.000000 ratio",
            "bw=1.234567 GB/s",
            "randread 4,096 + 8 jobs: 1.2 GB/s",
        ] {
            assert!(!is_trace_event(t), "{t}");
        }
    }

    #[test]
    fn a_double_dash_closing_a_pasted_file_is_no_signature() {
        let mut body = String::from("---\n[global]\nrw=read\n--\n\nresults:\n");
        for i in 0..14 {
            body.push_str(&format!("  row{i}  {i}.5  ms\n"));
        }
        let t = texts(&body);
        assert_eq!(t[6].1, "  row0  0.5  ms", "{t:?}");
        // A signature: a few lines after `--`.
        let t = texts("results\n--\nJane Doe\nACME Corp, +1 555 0100\n");
        assert_eq!(t[2].1, "");
        assert_eq!(t[3].1, "");
    }

    #[test]
    fn quote_markers_of_any_style() {
        assert_eq!(unquote("> > \t1\t9.97"), (2, "\t1\t9.97"));
        assert_eq!(unquote(">> 1 2"), (2, "1 2"));
        assert_eq!(unquote(">1 2"), (1, "1 2"));
        assert_eq!(unquote("\t 1\t 9.97"), (0, "\t 1\t 9.97"));
    }

    #[test]
    fn a_diff_ends_at_the_first_line_that_is_not_diff_syntax() {
        let body = "> diff --git a/f b/f\n> --- a/f\n> +++ b/f\n> @@ -1,3 +1,3 @@\n>  a\n>\n> -b\n> +c\n>\n>  jobs  before  after\n>     1     100    200\n";
        let t = texts(body);
        assert!(t[..9].iter().all(|(d, s)| *d == 1 && s.is_empty()), "{t:?}");
        assert_eq!(t[9].1, " jobs  before  after");
        assert_eq!(t[10].1, "    1     100    200");
    }

    #[test]
    fn trailers_signatures_diffstats_and_dmesg_are_blank() {
        let body = "Signed-off-by: A <a@b>\nTested-by: B <b@c>\n drivers/md/dm.c | 25 +++---\n 1 file changed, 2 insertions(+)\n[   12.345678] nvme: 42\n---\nkept 1\n-- \nsig 123\n> quoted 2\n";
        let t: Vec<String> = texts(body).into_iter().map(|(_, s)| s).collect();
        assert_eq!(
            t,
            vec!["", "", "", "", "", "", "kept 1", "", "", "quoted 2"]
        );
    }
}
