//! One tokenizer for the numbers of a line of benchmark output, in any
//! layout: `IOPS=549k,`, `bw=527MiB/s (552MB/s)`, `180000-180000msec`,
//! `73.11 * -13.70%*`, `28.74(baseline)`, `354.8 ms ± 6.0 ms`,
//! `1.834.487,82`, `82,60`.
//!
//! A line is cut at white space into words; each word loses the marks
//! around it (brackets, `*`, trailing `,` `;` `:`), and a `name=value`
//! word is split at `=`. What is left is a number (with a multiplier and
//! a unit, glued on or in the next word), a range of two numbers, or not
//! a number at all: identifiers (`nvme0n1`, `4k-randwrite`), versions,
//! times, dates, addresses and hashes are words.
//!
//! Whether a number is a result or a parameter is decided here from the
//! words around it (`QD=32`, `8 jobs`, `bs=4k`); where it stands in its
//! table is the layout's business.

use super::numbers::parse_unit;
use crate::mail::model::{Unit, UnitKind};
use regex::Regex;
use std::sync::LazyLock;

/// How a block writes its numbers: `1,234.5` or `1.234,5`. A block
/// agrees on one; see [`Convention::of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convention {
    Us,
    Continental,
}

impl Convention {
    /// The convention of a block: continental when a number in it can
    /// only be read that way (`1.834.487,82`, `82,60`, `0,00`), else US.
    /// A line that also writes a US-only number (`16.90`) casts no such
    /// vote: in a row of dot decimals, `2,2` is a pair.
    pub fn of<'a>(lines: impl Iterator<Item = &'a str>) -> Convention {
        for line in lines {
            // A diff hunk's `-1,2 +1,2` is line numbers, not decimals.
            if line.trim_start().starts_with("@@ ") {
                continue;
            }
            let (mut continental, mut us) = (false, false);
            for word in line.split_whitespace() {
                // A word without a digit is neither.
                if !word.bytes().any(|b| b.is_ascii_digit()) {
                    continue;
                }
                let w = word.trim_matches(|c: char| !c.is_ascii_digit());
                if only_continental(w) {
                    if w.contains('.') {
                        return Convention::Continental;
                    }
                    continental = true;
                } else {
                    us |= only_us(w);
                }
            }
            if continental && !us {
                return Convention::Continental;
            }
        }
        Convention::Us
    }
}

/// `16.90`, `0.731`: one dot, no comma, and digits after the dot that
/// are not a group of three, so no continental thousands.
fn only_us(w: &str) -> bool {
    match w.split_once('.') {
        Some((int, frac)) => {
            !int.is_empty()
                && int.bytes().all(|c| c.is_ascii_digit())
                && !frac.is_empty()
                && frac.len() != 3
                && frac.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// `1.834.487` (two dot groups of three), `1.234,5`, or `82,60` (a
/// comma then one, two or four-plus digits, never a group of three).
pub fn only_continental(w: &str) -> bool {
    let b = w.as_bytes();
    if b.is_empty()
        || !b
            .iter()
            .all(|c| c.is_ascii_digit() || *c == b'.' || *c == b',')
    {
        return false;
    }
    let groups = w.split('.').count();
    let dotted_thousands = groups >= 3
        && w.split('.').skip(1).take(groups - 2).all(|g| g.len() == 3)
        && w.rsplit('.')
            .next()
            .is_some_and(|g| g.split(',').next().is_some_and(|h| h.len() == 3));
    if dotted_thousands {
        return true;
    }
    match w.split_once(',') {
        Some((int, frac)) if !frac.contains([',', '.']) => {
            let int_ok = !int.is_empty() && int.bytes().all(|c| c.is_ascii_digit() || c == b'.');
            int_ok && !frac.is_empty() && frac.len() != 3
        }
        Some((int, frac)) => int.contains('.') && !frac.contains('.'),
        None => false,
    }
}

/// A number found in a line.
#[derive(Clone, Debug, PartialEq)]
pub struct Num {
    pub value: f64,
    pub unit: Option<Unit>,
    /// A parameter of the run (`QD=32`, `8 jobs`, `bs=4k`), not a result.
    pub parameter: bool,
    /// Written as a whole number with nothing after it: `64`, not `64.0`
    /// or `64%`. Key columns hold these.
    pub plain_integer: bool,
    /// The name it was given (`IOPS` of `IOPS=549k`), or the word in
    /// brackets after it (`baseline` of `28.74(baseline)`).
    pub name: Option<String>,
    /// Written `name=8`: a whole number under a name, as knobs are set.
    pub knob: bool,
    /// Where its word starts and ends in the line, in bytes.
    pub at: usize,
    pub end: usize,
}

/// A token of a line: a number, or a word that is not one.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok<'a> {
    Num(Num),
    /// Borrowed from the line: most tokens are words, and a line is
    /// scanned more than once.
    Word {
        text: &'a str,
        at: usize,
    },
}

/// Words after a number that make it a parameter: `8 jobs`, `4 cores`.
pub(super) const PARAMETER_WORDS: [&str; 41] = [
    "proc",
    "procs",
    "job",
    "jobs",
    "thread",
    "threads",
    "queue",
    "queues",
    "cpu",
    "cpus",
    "processor",
    "processors",
    "core",
    "cores",
    "client",
    "clients",
    "user",
    "users",
    "worker",
    "workers",
    "disk",
    "disks",
    "device",
    "devices",
    "process",
    "processes",
    "node",
    "nodes",
    "run",
    "runs",
    "times",
    "iterations",
    "loops",
    "zones",
    // `256 bit key`, `1000000 keys`: what the run was given.
    "key",
    "keys",
    // `975872 blocks`, `512k chunk`: how big something is, not a result.
    "blocks",
    "sectors",
    "chunk",
    // `1 iodepth, 32 numjobs`: fio's options, named after their value.
    "iodepth",
    "numjobs",
];

/// Names whose value is a parameter: `QD=32`, `bs=4k`, `numjobs=8`.
pub const PARAMETER_NAMES: [&str; 37] = [
    "hz",
    "timeout",
    "offset",
    "test",
    "ramp",
    "weight",
    "level",
    "samples",
    "qd",
    "iodepth",
    "depth",
    "bs",
    "blocksize",
    "numjobs",
    "jobs",
    "nr",
    "threads",
    // hackbench's `Groups: 4`: how many groups of tasks it was given.
    "groups",
    "size",
    "runtime",
    "run",
    "loops",
    "iterations",
    "batch",
    "queue_mode",
    "rd_nr",
    "rd_size",
    "nr_queues",
    "cpus",
    "ramp_time",
    "direct",
    "config",
    // `version 2`, `super 1.2`, `algorithm 2`: which one, not how much.
    "version",
    "revision",
    "super",
    "algorithm",
    // `Output every 1 seconds`: an interval someone chose.
    "every",
];

/// The tokens of `line`.
pub fn scan(line: &str, conv: Convention) -> Vec<Tok<'_>> {
    let mut out: Vec<Tok<'_>> = Vec::new();
    let mut pending_param = false;
    for (at, raw) in words(line) {
        // `Benchmark 1:`, `Config 2:`: a number that ends a label names
        // the thing, it does not measure it.
        let ordinal = raw.ends_with(':')
            && raw[..raw.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.');
        let word = raw.trim_matches(|c: char| "([{*,;\"'`".contains(c));
        // `MB/s).`: a sentence ends after a bracket.
        let word = word
            .strip_suffix(").")
            .map_or(word, |w| &word[..w.len() + 1]);
        let word = word.trim_end_matches(|c: char| ")]}*,;:\"'`".contains(c));
        // `6%.`, `30us.`: a sentence's full stop after a unit.
        let word = match word.strip_suffix('.') {
            Some(w) if w.ends_with(|c: char| c.is_alphabetic() || c == '%') => w,
            _ => word,
        };
        // `3.5M+`, `500kB+`: "or more" says nothing of the number.
        let word = match word.strip_suffix('+') {
            Some(w) if w.ends_with(|c: char| c.is_ascii_alphanumeric()) => w,
            _ => word,
        };
        let word = if word.ends_with('/') && word.len() > 1 {
            &word[..word.len() - 1]
        } else {
            word
        };
        // `word` is `raw` with punctuation taken off its ends: where it
        // starts in `raw` is where its bytes do.
        let at = at + (word.as_ptr() as usize - raw.as_ptr() as usize);
        if word.is_empty() {
            continue;
        }
        // `(259,0)`: a device's major and minor, not a decimal comma.
        if raw.starts_with('(')
            && let Some((major, minor)) = word.split_once(',')
            && !major.is_empty()
            && !minor.is_empty()
            && major.len() <= 4
            && minor.len() <= 4
            && major
                .bytes()
                .chain(minor.bytes())
                .all(|b| b.is_ascii_digit())
            && raw.trim_end_matches(':').ends_with(')')
        {
            pending_param = false;
            out.push(Tok::Word { text: word, at });
            continue;
        }
        // Most words are lower case already, and need no copy.
        let lower: std::borrow::Cow<str> = match word
            .bytes()
            .any(|b| b.is_ascii_uppercase() || !b.is_ascii())
        {
            true => word.to_lowercase().into(),
            false => word.into(),
        };
        // `8 jobs`: the word after the number says it is a parameter;
        // also over a size between them (`524288 512-byte sectors`).
        let sized = |w: &str| {
            let w = w.strip_suffix("-byte").unwrap_or(w);
            let w = w.strip_suffix(['k', 'K']).unwrap_or(w);
            !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit())
        };
        let back = match out.as_slice() {
            [.., Tok::Num(_), Tok::Word { text, .. }]
                if sized(text) || matches!(*text, "byte" | "bytes" | "bit" | "bits") =>
            {
                2
            }
            _ => 1,
        };
        let at_back = out.len().checked_sub(back);
        if PARAMETER_WORDS.contains(
            &lower
                .trim_end_matches(['.', ',', ')'])
                .trim_end_matches("(s"),
        ) && let Some(Tok::Num(last)) = at_back.and_then(|b| out.get_mut(b))
        {
            // `8 jobs` counts them; `969% cpu`, `2.5 runs` measure.
            last.parameter |= last.plain_integer && last.unit.is_none();
            pending_param = false;
            out.push(Tok::Word { text: word, at });
            continue;
        }
        // `5.2 rc7`: a release candidate names the version before it.
        if lower.len() > 2
            && lower.starts_with("rc")
            && lower[2..].bytes().all(|b| b.is_ascii_digit())
            && let Some(Tok::Num(last)) = out.last_mut()
            && last.unit.is_none()
        {
            last.parameter = true;
            out.push(Tok::Word { text: word, at });
            continue;
        }
        // `QD 32`: the name stands alone before its number.
        // `Target Id: 0`: an identifier, named with its colon (top's
        // `0.0 id,` is the idle share after its number).
        if PARAMETER_NAMES.contains(&&*lower) || raw.eq_ignore_ascii_case("id:") {
            pending_param = true;
            out.push(Tok::Word { text: word, at });
            continue;
        }
        // perf report's call graph: `|--19.43%--_raw_spin_lock`.
        if let Some((share, callee)) = word
            .trim_start_matches('|')
            .strip_prefix("--")
            .and_then(|r| r.split_once("%--"))
            && let Some((value, _, _)) = one(share, conv)
        {
            out.push(Tok::Num(Num {
                value,
                unit: parse_unit("%"),
                parameter: false,
                plain_integer: false,
                knob: false,
                name: Some(callee.to_string()),
                at,
                end: at + word.len(),
            }));
            pending_param = false;
            continue;
        }
        // `name=value`; `aq2c(11ms)`, `hit(<=100us)`: a value in brackets
        // glued to its name.
        let bracketed = word.split_once('(').filter(|(n, v)| {
            n.starts_with(|c: char| c.is_ascii_alphabetic())
                && v.starts_with(|c: char| c.is_ascii_digit() || c == '<' || c == '>')
        });
        let (name, value) = match word.split_once('=') {
            Some((n, v)) if !n.is_empty() && bracketed.is_none() => (Some(n), v.trim_start()),
            _ => match bracketed {
                Some((n, v)) => (Some(n), v),
                None => (None, word),
            },
        };
        // `innodb_buffer_pool_size=8G`, `block_size=4096`: a size named
        // as one is what was set.
        let named_param = name.is_some_and(|n| {
            let n = n.to_lowercase();
            PARAMETER_NAMES.contains(&n.as_str()) || n.ends_with("_size") || n.ends_with("size")
        });
        // `<=100us`, `hit1(<=100us)`, `>= 2 ms`: an inclusive bound, a
        // bucket's or a threshold's edge, not a reading.
        let bound = name.is_some_and(|n| n.ends_with(['<', '>']))
            || matches!(out.last(), Some(Tok::Word { text, .. }) if matches!(*text, "<=" | ">=" | "≤" | "≥"));
        let (value, bound) = match value.strip_prefix(['≤', '≥']) {
            Some(v) => (v, true),
            None => (value, bound),
        };
        let named_param = named_param || bound;
        let name = name.filter(|_| !bound);
        let mut nums = numbers_in(value, conv);
        // `IOS/call=32/31`, `ios=27074/64000`: a named pair of counts.
        if nums.is_empty()
            && name.is_some()
            && let Some((a, b)) = value.split_once('/')
            && let (Some(a), Some(b)) = (one(a, conv), one(b, conv))
            && a.1.is_none()
            && b.1.is_none()
        {
            nums = vec![(a.0, None, None, true), (b.0, None, None, true)];
        }
        if nums.is_empty() {
            // A unit on its own belongs to the number before it.
            if let Some(Tok::Num(last)) = out.last_mut()
                && last.unit.is_none()
                && let Some(unit) = parse_unit(word).or_else(|| size_unit(word))
                && !is_bare_word_unit(word)
            {
                // `1M IOPS` is a rate, not a block size.
                last.parameter &= unit.kind != UnitKind::Rate;
                last.unit = Some(unit);
                last.plain_integer = false;
                continue;
            }
            pending_param = false;
            out.push(Tok::Word { text: word, at });
            continue;
        }
        // `name=8` of a knob: a plain whole number under a name, but
        // not a count no one would set (`packets=23987040`).
        let knob = name.is_some() && nums.len() == 1 && nums[0].3 && settable(nums[0].0);
        let block_size = nums.len() == 1 && is_block_size(value);
        // `next_pid=14342`, `prev_prio=120`, `tid=5256`: which task, never
        // how much.
        let ident = name.is_some_and(|n| {
            let n = n.to_ascii_lowercase();
            ["pid", "tid", "prio"]
                .iter()
                .any(|id| n == *id || n.ends_with(&format!("_{id}")))
        });
        for (value, unit, note, plain) in nums {
            // People set round numbers: `runtime  94.285s` under a
            // parameter's name was measured, not chosen.
            let measured = !is_round(value);
            out.push(Tok::Num(Num {
                value,
                unit,
                parameter: (named_param || pending_param) && !measured
                    || ordinal
                    || block_size
                    || ident,
                plain_integer: plain,
                knob,
                name: name.map(str::to_string).or(note),
                at,
                end: at + word.len(),
            }));
        }
        pending_param = false;
    }
    super::roles::assign(line, &mut out);
    out
}

/// Whether a value is one a person would set: at most one decimal
/// (`300`, `2.5`), not `94.285`.
pub fn is_round(value: f64) -> bool {
    (value * 10.0).fract().abs() < 1e-9
}

/// A whole number someone would set: small, a power of two, or round
/// to a thousand (`wbt_lat_usec=75000`). `packets=23987040` is counted.
pub(super) fn settable(value: f64) -> bool {
    value < 10_000.0 || (value as u64).is_power_of_two() || value % 1000.0 == 0.0
}

/// `4k`, `128K`, `1M`: a power of two times 1000 or 1000000, written
/// with a multiplier and no unit, is a block size (`549k` is not).
fn is_block_size(word: &str) -> bool {
    let word = word
        .strip_suffix("iB")
        .or_else(|| word.strip_suffix('B'))
        .map_or(word, |w| {
            if w.ends_with(['k', 'K', 'M']) {
                w
            } else {
                word
            }
        });
    let Some(digits) = word.strip_suffix(['k', 'K', 'M', 'm']) else {
        return false;
    };
    digits
        .parse::<u32>()
        .is_ok_and(|n| n.is_power_of_two() && n <= 1024)
}

/// Unit words that are also English (`s`, `ops`): taken from the next
/// word only when glued, or when the number is bare. (`percent` after a
/// number is always a percentage: `0.28 percent better`.)
fn is_bare_word_unit(word: &str) -> bool {
    // `4 x NVMe`: an `x` set apart counts things; `3.2x` is a ratio.
    matches!(word, "count" | "counts" | "events" | "second" | "x" | "×")
}

/// White-space separated words with their byte offsets. `±`, `+-` and
/// `--` stand alone.
fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    // `(423MB/s)(23.6GiB/60002msec)`: two bracketed words glued; a
    // full-width comma (`117854KB/s，29463`) parts words as a space does.
    let mut split = line
        .split(|c: char| c.is_whitespace() || matches!(c, '，' | '、' | '；'))
        .filter(|w| !w.is_empty())
        .peekable();
    // `min= 7986`: fio pads a value after its `=`; the two are one word.
    let joined = std::iter::from_fn(move || {
        let w = split.next()?;
        let padded = w.len() > 1
            && w.ends_with('=')
            && w[..w.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_');
        match split.peek() {
            Some(next) if padded && next.starts_with(|c: char| c.is_ascii_digit()) => {
                let next = split.next()?;
                let start = w.as_ptr() as usize - line.as_ptr() as usize;
                let end = next.as_ptr() as usize - line.as_ptr() as usize + next.len();
                Some(&line[start..end])
            }
            _ => Some(w),
        }
    });
    joined.flat_map(|w| w.split_inclusive(")(")).map(move |w| {
        let w = w.strip_suffix('(').unwrap_or(w);
        let at = w.as_ptr() as usize - line.as_ptr() as usize;
        (at, w)
    })
}

type Found = (f64, Option<Unit>, Option<String>, bool);

/// The numbers in one word: none, one (`549k`, `2146MiB/s`, `5,452`,
/// `28.74(baseline)`), or two for a range (`180000-180000msec`,
/// `527MiB/s-527MiB/s`).
fn numbers_in(word: &str, conv: Convention) -> Vec<Found> {
    // Every form below has a digit; most words of a sentence have none,
    // and the duration pattern would be tried on each of them.
    if !word.bytes().any(|b| b.is_ascii_digit()) {
        return Vec::new();
    }
    // `28.74(baseline)`: the word in brackets names the number.
    if let Some((num, rest)) = word.split_once('(')
        && let Some(note) = rest.strip_suffix(')').or(Some(rest))
        && note.chars().next().is_some_and(char::is_alphabetic)
    {
        return one(num, conv)
            .map(|(v, u, p)| vec![(v, u, Some(note.to_string()), p)])
            .unwrap_or_default();
    }
    if let Some(found) = one(word, conv) {
        return vec![(found.0, found.1, None, found.2)];
    }
    // `x1.580` (zstd's ratio): a factor written before its number, with
    // a fraction (`x4` lanes and `x86` stay words).
    if let Some(f) = word.strip_prefix(['x', '×'])
        && f.contains('.')
        && f.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && let Ok(v) = f.parse::<f64>()
    {
        return vec![(v, None, Some("x".to_string()), false)];
    }
    if let Some(parts) = duration(word) {
        return parts;
    }
    // `0:17.85` (top's TIME+, GNU time's elapsed): minutes and seconds.
    // A time of day has hours too (`14:22:07.123`) and stays a word.
    if word.matches(':').count() == 1
        && let Some(secs) = super::numbers::clock_secs(word)
    {
        return vec![(secs, super::numbers::parse_unit("s"), None, false)];
    }
    // A pair: `12.65/55.40%` (usr/sys), the unit on the second.
    if let Some((a, b)) = word.split_once('/')
        && !b.contains('/')
        && let (Some(a), Some(b)) = (one(a, conv), one(b, conv))
        && !(a.2 && b.2)
    {
        // `23.6GiB/60002msec` is an amount over the time it took: the
        // time is how long it ran.
        if let (Some(ua), Some(ub)) = (&a.1, &b.1)
            && ua.kind != ub.kind
        {
            return vec![(a.0, a.1, None, false)];
        }
        return vec![
            (a.0, a.1.or(b.1.clone()), None, false),
            (b.0, b.1, None, false),
        ];
    }
    // `0,24138,0,0`: a list, where the commas cannot be thousands.
    if conv == Convention::Us && word.contains(',') {
        let parts: Option<Vec<_>> = word.split(',').map(|p| one(p, conv)).collect();
        if let Some(parts) = parts.filter(|p| p.len() >= 2) {
            return parts.into_iter().map(|(v, u, p)| (v, u, None, p)).collect();
        }
    }
    // A range: two numbers joined by `-` (or `~`, `–`: `30~40%`), the
    // unit on either or both.
    let digits_then_dash = word.char_indices().skip(1).find(|&(i, c)| {
        matches!(c, '-' | '~' | '–')
            && word[..i].ends_with(|p: char| p.is_ascii_alphanumeric() || p == '/' || p == '%')
    });
    if let Some((i, dash)) = digits_then_dash
        && let (Some(a), Some(b)) = (
            one(&word[..i], conv),
            one(&word[i + dash.len_utf8()..], conv),
        )
    {
        let i_right = i + dash.len_utf8();
        // `1-10`: a range of whole numbers names a span of things.
        if a.1.is_none() && b.1.is_none() && a.2 && b.2 {
            return Vec::new();
        }
        let unit = a.1.clone().or_else(|| b.1.clone());
        // `51-52M`: the multiplier written once holds for both ends.
        let (left, right) = (&word[..i], &word[i_right..]);
        let bare = left.bytes().all(|c| c.is_ascii_digit() || c == b'.');
        let scale = match right
            .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
            .as_bytes()
            .last()
        {
            Some(b'k' | b'K') if bare => 1e3,
            Some(b'M') if bare => 1e6,
            Some(b'G') if bare => 1e9,
            _ => 1.0,
        };
        return vec![
            (round(a.0 * scale), unit.clone(), None, false),
            (b.0, b.1.or(unit), None, false),
        ];
    }
    Vec::new()
}

/// `17m21.019s` (`time`'s output) or `1h02m`: a duration in parts, a
/// number each, as the parts are what was printed.
fn duration(word: &str) -> Option<Vec<Found>> {
    static DURATION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:[.,]\d+)?)s)?$").expect("constant regex")
    });
    let c = DURATION.captures(word)?;
    let parts = [(1, "h"), (2, "min"), (3, "s")];
    let mut found: Vec<Found> = parts
        .iter()
        .filter_map(|&(k, unit)| {
            // `0m0,261s`: bash's time in a decimal-comma locale.
            let v: f64 = c.get(k)?.as_str().replace(',', ".").parse().ok()?;
            let unit = super::numbers::parse_unit(unit).or_else(hours);
            Some((v, unit, None, false))
        })
        .collect();
    if found.len() < 2 {
        return None;
    }
    // `0m0.261s` is 0.261 s: leading zero parts carry nothing.
    while found.len() > 1 && found[0].0 == 0.0 {
        found.remove(0);
    }
    Some(found)
}

fn hours() -> Option<Unit> {
    Some(Unit {
        written: "h".into(),
        symbol: "h".into(),
        kind: UnitKind::Time,
        scale: 3600e9,
    })
}

/// One number with an optional multiplier and unit glued on: `549k`,
/// `2146MiB/s`, `-13.70%`, `~63k`, `1.834.487,82`. None for words that
/// only contain digits: `nvme0n1`, `5.4.86`, `12:00:01`, `0x1f`, `4k-rand`.
fn one(word: &str, conv: Convention) -> Option<(f64, Option<Unit>, bool)> {
    let w = word.strip_prefix('~').unwrap_or(word);
    let bytes = w.as_bytes();
    let mut i = 0;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.' || bytes[i] == b',') {
        i += 1;
    }
    let body = &w[digits_start..i];
    if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.') || body.ends_with(['.', ',']) {
        // `4.` ends a sentence, not a number; `,` a list.
        let trimmed = body.trim_end_matches(['.', ',']);
        if trimmed.is_empty() || i != w.len() || !trimmed.starts_with(|c: char| c.is_ascii_digit())
        {
            return None;
        }
        return one(&w[..digits_start + trimmed.len()], conv);
    }
    // `1608689569.708325037`: seconds since 1970 to the microsecond or
    // finer is a time stamp.
    if let Some((int, frac)) = body.split_once('.')
        && int.len() == 10
        && frac.len() >= 6
        && int.starts_with(['1', '2'])
    {
        return None;
    }
    // `0000000000000008`, `007`: hex words and identifiers.
    if body.len() > 1 && body.starts_with('0') && body.as_bytes()[1].is_ascii_digit() {
        return None;
    }
    let value = decimal(body, conv)?;
    let negative = bytes.first() == Some(&b'-');
    let value = if negative { -value } else { value };
    let mut rest = &w[i..];
    // `5.727e+09`, `1.2E-3`: scientific notation, as the robot prints.
    let mut value = value;
    if let Some(e) = rest.strip_prefix(['e', 'E']) {
        let digits = e.trim_start_matches(['+', '-']);
        let len = digits.bytes().take_while(u8::is_ascii_digit).count();
        if (1..=3).contains(&len) && e.len() - digits.len() <= 1 {
            let exp: i32 = e[..e.len() - digits.len() + len].parse().ok()?;
            value *= 10f64.powi(exp);
            rest = &digits[len..];
            if rest.is_empty() {
                return Some((value, None, false));
            }
        }
    }
    if rest.is_empty() {
        let plain = !body.contains(['.', ',']) || (conv == Convention::Us && !body.contains('.'));
        return Some((value, None, plain && digits_start == 0));
    }
    // A multiplier, then perhaps a unit: `549k`, `2.58M`, `11.7k`, `4K`.
    let (value, rest) = match rest.as_bytes()[0] {
        b'k' | b'K' | b'M' | b'G' | b'T' if !starts_unit(rest) => {
            let power = match rest.as_bytes()[0] {
                b'k' | b'K' => 3,
                b'M' => 6,
                b'G' => 9,
                _ => 12,
            };
            (value * 10f64.powi(power), &rest[1..])
        }
        _ => (value, rest),
    };
    if rest.is_empty() {
        return Some((round(value), None, false));
    }
    let unit = parse_unit(rest).or_else(|| size_unit(rest))?;
    Some((round(value), Some(unit), false))
}

/// Whether `rest` (after the digits) starts with a unit whose first
/// letter looks like a multiplier: `KiB/s`, `MB/s`, `GiB`, `Kops`.
fn starts_unit(rest: &str) -> bool {
    parse_unit(rest).is_some() || size_unit(rest).is_some()
}

/// Multiplied values rounded to the digits they were written with, so
/// `4.17M` is 4170000 and not 4169999.999.
fn round(v: f64) -> f64 {
    if v.abs() >= 1.0 {
        (v * 1e6).round() / 1e6
    } else {
        v
    }
}

/// The digits of a number in the block's convention.
fn decimal(body: &str, conv: Convention) -> Option<f64> {
    let normal = match conv {
        Convention::Us => {
            // A comma between thousands only: `1,490,261`.
            if body.contains(',') {
                let (int, _) = body.split_once('.').unwrap_or((body, ""));
                let mut groups = int.split(',');
                let first = groups.next()?;
                if first.is_empty() || first.len() > 3 || !groups.all(|g| g.len() == 3) {
                    return None;
                }
            }
            body.replace(',', "")
        }
        Convention::Continental => {
            // Dots between thousands only: `1.834.487,82`.
            let (int, frac) = body.split_once(',').unwrap_or((body, ""));
            let mut groups = int.split('.');
            let first = groups.next()?;
            if frac.contains(['.', ',']) || first.is_empty() || !groups.all(|g| g.len() == 3) {
                // `2.08` in a block that also has `5,452`: one dot that
                // cannot be a thousands mark is a decimal point.
                return (frac.is_empty() && int.matches('.').count() == 1)
                    .then(|| int.parse().ok())
                    .flatten();
            }
            body.replace('.', "").replace(',', ".")
        }
    };
    if normal.matches('.').count() > 1 {
        // `5.4.86`: a version.
        return None;
    }
    super::numbers::finite(&normal)
}

/// `GiB`, `MB`, `KiB`, `kB`, `TB`, iperf's `GBytes`: a size, base one
/// byte. A bare `B` is not (it is too often a letter).
pub fn size_unit(word: &str) -> Option<Unit> {
    let w = word.trim();
    let (prefix, binary) = match w.len() {
        2 if w.ends_with('B') => (&w[..1], false),
        3 if w.ends_with("iB") => (&w[..1], true),
        6 if w.ends_with("Bytes") => (&w[..1], false),
        _ => return None,
    };
    let power = match prefix {
        "k" | "K" => 1,
        "M" => 2,
        "G" => 3,
        "T" => 4,
        _ => return None,
    };
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    Some(Unit {
        written: w.to_string(),
        symbol: w.to_string().into(),
        kind: UnitKind::Size,
        scale: base.powi(power),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nums(line: &str) -> Vec<(f64, Option<String>, bool)> {
        let conv = Convention::of(std::iter::once(line));
        scan(line, conv)
            .into_iter()
            .filter_map(|t| match t {
                Tok::Num(n) => Some((n.value, n.unit.map(|u| u.written), n.parameter)),
                Tok::Word { .. } => None,
            })
            .collect()
    }

    fn values(line: &str) -> Vec<f64> {
        nums(line)
            .into_iter()
            .filter(|n| !n.2)
            .map(|n| n.0)
            .collect()
    }

    /// iperf's interval from the start is no result; what moved in it,
    /// and how fast, are.
    #[test]
    fn an_interval_from_the_start_is_no_result() {
        assert_eq!(
            nums("[  3]  0.0-30.0 sec  2.60 GBytes   745 Mbits/sec")
                .into_iter()
                .filter(|n| !n.2)
                .map(|n| (n.0, n.1))
                .collect::<Vec<_>>(),
            vec![
                (3.0, None),
                (2.60, Some("GBytes".into())),
                (745.0, Some("Mbits/sec".into()))
            ]
        );
        // A range of times that does not start at zero is measured.
        assert!(nums("took 1.2-1.5 sec").iter().all(|n| !n.2));
    }

    #[test]
    fn fio_summaries_give_every_number() {
        assert_eq!(
            values("READ: bw=527MiB/s (552MB/s), 527MiB/s-527MiB/s (552MB/s-552MB/s),"),
            vec![527.0, 552.0, 527.0, 527.0, 552.0, 552.0]
        );
        // `run=` is how long it ran: a parameter.
        assert_eq!(
            values("io=92.6GiB (99.4GB), run=180000-180000msec"),
            vec![92.6, 99.4]
        );
        assert_eq!(
            values("1316MiB/s (12.65/55.40%)"),
            vec![1316.0, 12.65, 55.40]
        );
        assert_eq!(
            values("read: IOPS=549k, BW=2146MiB/s"),
            vec![549000.0, 2146.0]
        );
    }

    #[test]
    fn marks_and_notes_around_numbers() {
        assert_eq!(
            values("Amean     1        64.29 (   0.00%)       73.11 * -13.70%*"),
            vec![1.0, 64.29, 0.0, 73.11, -13.70]
        );
        assert_eq!(
            values("write:        28.74(baseline) -- 28.77(disable) -- 57.20(enable)"),
            vec![28.74, 28.77, 57.20]
        );
        assert_eq!(
            nums("Time (mean ± σ):     354.8 ms ±   6.0 ms")
                .into_iter()
                .map(|n| (n.0, n.1))
                .collect::<Vec<_>>(),
            vec![(354.8, Some("ms".into())), (6.0, Some("ms".into()))]
        );
    }

    #[test]
    fn separators_follow_the_block() {
        assert_eq!(
            values("1.834.487,82      cycles   #    5,452 GHz"),
            vec![1834487.82, 5.452]
        );
        assert_eq!(values("sdb  0,00  82,60  12,09"), vec![0.0, 82.6, 12.09]);
        assert_eq!(values("1,490,261  cycles  2.5"), vec![1490261.0, 2.5]);
    }

    #[test]
    fn a_value_padded_after_its_equals_sign_is_its_names() {
        // fio's `iops : min= 7986, max=16434`: the space is fio's padding.
        let words: Vec<&str> = words("iops : min= 7986, max=16434 x= y")
            .map(|(_, w)| w)
            .collect();
        assert_eq!(words, ["iops", ":", "min= 7986,", "max=16434", "x=", "y"]);
        assert_eq!(
            values("iops : min= 7986, max=16434, avg=12505.76"),
            [7986.0, 16434.0, 12505.76]
        );
    }

    #[test]
    fn identifiers_versions_and_times_are_words() {
        assert!(values("nvme0n1 dev7-0 5.4.86 12:00:01 0x80000080 4k-randwrite").is_empty());
    }

    #[test]
    fn parameters_are_marked() {
        assert_eq!(values("QD=32, 128K rnd wr, 1 job"), Vec::<f64>::new());
        assert_eq!(values("1M IOPS 4KiB blocks"), vec![1e6]);
        assert_eq!(values("Benchmark 1: v1.2:"), Vec::<f64>::new());
        assert_eq!(values("bs=4k iodepth=1 numjobs=8"), Vec::<f64>::new());
        assert_eq!(values("QD 32 8 threads 2.5 ms"), vec![2.5]);
        // Which task, never how much.
        assert_eq!(values("next_pid=14342 next_prio=120 lat=35 us"), vec![35.0]);
    }
}
