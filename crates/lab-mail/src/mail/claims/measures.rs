//! The general reader: runs of lines of tool output that no specific
//! layout took, read with one tokenizer ([`super::tokens`]). A line is
//! a label (words, and the parameters among them) and the numbers after
//! it: mmtests' `Amean 1 64.29 ( 0.00%) 73.11 * -13.70%*`, fio's
//! `READ: bw=527MiB/s (552MB/s), ...`, iostat and sar rows (also
//! wrapped), perf report's `4.15%  fio  [kernel.kallsyms] ...`,
//! hyperfine's `Time (mean ± σ): 354.8 ms ± 6.0 ms`, and inline series
//! `28.74(baseline) -- 28.77(disable)`.
//!
//! What keeps sentences, commands and dumps out is what they are made
//! of, not what tool wrote them: a sentence has a run of plain words, a
//! command an option or a prompt, a dump addresses and hex bytes.

use super::Draft;
use super::grid::{Cell, is_header, label_unit, split};
use super::lines::Line;
use super::tokens::{Convention, Num, Tok, scan};
use crate::mail::model::{ClaimKind, Column, Row, UnitKind, Value};
use regex::Regex;
use std::sync::LazyLock;

use super::never::never_claims;

/// The longest run of lines the reader looks at for the separator
/// convention and takes as one table.
const MAX_RUN: usize = 400;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    // Most lines are prose: say so before looking at the lines around.
    let text = &lines[i].text;
    let digits = text.bytes().any(|b| b.is_ascii_digit());
    if !digits && !is_gapped(text) || never_claims(text) {
        return None;
    }
    let cells = header_cells(text);
    let numbers = || {
        measured(text, Convention::Us).is_some()
            || (text.contains(',') && measured(text, Convention::Continental).is_some())
    };
    if cells.is_none() && !(digits && numbers()) {
        return None;
    }
    // The rest of a sentence's paragraph is prose's to read; but a
    // sentence that ends in a colon may introduce `label: value` lines
    // of their own (`4k:  bw=1004MiB/s`), and those are rows.
    let labelled = text
        .split_whitespace()
        .next()
        .is_some_and(|w| w.len() > 1 && w.ends_with(':'));
    let before = i.checked_sub(1).map(|k| lines[k].text.trim_end());
    let introduces = |b: &str| labelled && b.ends_with(':');
    if before.is_some_and(|b| !b.is_empty() && !introduces(b) && is_prose_line(b))
        && !is_gapped(text)
    {
        return None;
    }
    // ... and so is a line without columns that a sentence goes on from,
    // unfinished (`There is about 3.6% improvement in IOPS of ...`).
    if !is_gapped(text)
        && !text.trim_end().ends_with(['.', ':', ';'])
        && lines
            .get(i + 1)
            .is_some_and(|n| !n.is_blank() && !is_gapped(n.text) && is_prose_line(n.text))
    {
        return None;
    }
    // The separators are agreed in the lines around, not the whole block.
    let window = &lines[i..lines.len().min(i + MAX_RUN)];
    let run_len = window.iter().take_while(|l| !l.is_blank()).count();
    let conv = Convention::of(window[..run_len.min(64)].iter().map(|l| l.text));
    let header: Option<Vec<String>> = cells
        .as_ref()
        .map(|c| c.iter().map(|c| c.text.trim().to_string()).collect());
    let mut first = if header.is_some() { i + 1 } else { i };
    // `====` under the names, then the rows.
    if header.is_some()
        && lines
            .get(first)
            .is_some_and(|l| super::grid::is_rule(l.text))
    {
        first += 1;
    }
    // One bare whole number on its own (`is 1.`) says too little; one
    // with a name (`packets=23987040`) says what it counts.
    let weak = |m: &Measured| {
        m.values
            .iter()
            .all(|n| n.plain_integer && (n.name.is_none() || n.knob))
            && label_unit(&m.label).is_none()
    };
    let mut rows: Vec<(usize, Measured)> = Vec::new();
    let mut j = first;
    while j < i + run_len {
        // A rule between rows of results (`-----`) draws the table; it
        // ends nothing. (Under a header's one number it is the header's.)
        if j > i
            && super::grid::is_rule(lines[j].text)
            && rows.last().is_some_and(|(_, m)| !weak(m))
        {
            j += 1;
            continue;
        }
        if j > i
            && super::LAYOUTS[..super::LAYOUTS.len() - 1]
                .iter()
                .any(|layout| layout(lines, j).is_some())
        {
            break;
        }
        match measured(lines[j].text, conv) {
            Some(mut m) => {
                if let Some(h) = &cells {
                    drop_identifiers(&mut m, lines[j].text, h);
                }
                if !m.values.is_empty() {
                    rows.push((lines[j].no, m));
                }
            }
            None => break,
        }
        j += 1;
    }
    if rows.is_empty() || (rows.len() == 1 && header.is_none() && weak(&rows[0].1)) {
        return None;
    }
    size_bound(&mut rows);
    drop_constants(&mut rows);
    let mut d = build(header.as_deref(), rows);
    d.start = i;
    d.end = j;
    Some(d)
}

/// A line of numbers: its label (the words before the first result, with
/// the parameters among them) and its results.
#[derive(Debug)]
pub(super) struct Measured {
    pub label: String,
    pub values: Vec<Num>,
    /// fio's `run=` times, taken for the runtime it was given (see
    /// [`size_bound`]).
    runs: Vec<Num>,
}

/// A bare whole number that every row of a run repeats at the same
/// place (`6126812 -> 1017901`, `6126812 -> 1065645`, ...) is what the
/// rows were run on, the input, not a result: results differ from row
/// to row. Needs 3 rows of as many values; a repeated 0 stays, and so
/// does a value with a name (`IOS/call=32/32` is read every second).
fn drop_constants(rows: &mut [(usize, Measured)]) {
    let Some(width) = rows.first().map(|(_, m)| m.values.len()) else {
        return;
    };
    if rows.len() < 3 || rows.iter().any(|(_, m)| m.values.len() != width) {
        return;
    }
    let constant: Vec<bool> = (0..width)
        .map(|k| {
            let first = &rows[0].1.values[k];
            first.value != 0.0
                && rows.iter().all(|(_, m)| {
                    let n = &m.values[k];
                    n.plain_integer
                        && n.unit.is_none()
                        && n.name.is_none()
                        && n.value == first.value
                })
        })
        .collect();
    if constant.iter().all(|c| *c) {
        return;
    }
    for (_, m) in rows.iter_mut() {
        let mut k = 0;
        m.values.retain(|_| {
            k += 1;
            !constant[k - 1]
        });
    }
}

/// fio's group lines (`io=4096MiB (4295MB), run=4888-7718msec`): a job
/// stops at its size or at its runtime, and where it stopped is what it
/// was given. `run=` is read as the runtime given; but when every line
/// of the run moved the same `io=` in times that differ, the jobs were
/// size-bound: `io=` (and its decimal twin) is the size given, and `run=`
/// what was measured. (The two directions of a time-based mixed job move
/// about the same `io=` too, in the same time.)
fn size_bound(rows: &mut [(usize, Measured)]) {
    let io_at = |m: &Measured| {
        m.values
            .iter()
            .position(|n| n.name.as_deref() == Some("io"))
    };
    let ios: Vec<(f64, Option<String>)> = rows
        .iter()
        .filter_map(|(_, m)| {
            let n = &m.values[io_at(m)?];
            Some((n.value, n.unit.as_ref().map(|u| u.symbol.to_string())))
        })
        .collect();
    if ios.len() < 2 || ios.iter().any(|io| *io != ios[0]) {
        return;
    }
    let times: Vec<f64> = rows
        .iter()
        .filter_map(|(_, m)| m.runs.first().map(|n| n.value))
        .collect();
    let (low, high) = times
        .iter()
        .fold((f64::MAX, 0.0_f64), |(l, h), &t| (l.min(t), h.max(t)));
    if times.len() < 2 || high <= low * 1.01 {
        return;
    }
    for (_, m) in rows.iter_mut() {
        let Some(k) = io_at(m) else { continue };
        let io = m.values.remove(k);
        let kind = io.unit.as_ref().map(|u| u.kind);
        // `(4295MB)`: the same amount in decimal units, right after it.
        if m.values.get(k).is_some_and(|n| {
            n.name.is_none() && n.at <= io.end + 3 && n.unit.as_ref().map(|u| u.kind) == kind
        }) {
            m.values.remove(k);
        }
        let runs = std::mem::take(&mut m.runs);
        m.values.extend(runs.into_iter().map(|mut n| {
            n.parameter = false;
            n
        }));
    }
}

/// The line as a label and results, or None when it is a sentence, a
/// command, a dump, or holds no result.
fn measured(text: &str, conv: Convention) -> Option<Measured> {
    // A line that ends in a colon introduces what follows.
    if never_claims(text) || text.trim_end().ends_with(':') {
        return None;
    }
    let mut toks = scan(text, conv);
    // `1.`, `2)`, `(3)`, `[1]`, `- `: a list item's mark is its label;
    // so is a number that opens the line with a colon (`12k:`, `64:`),
    // which names what the rest of the line measured.
    if let Some(Tok::Num(n)) = toks.first_mut()
        && (is_list_mark(&text[n.at..n.end.min(text.len())], text)
            || text[n.end.min(text.len())..].starts_with(':') && text[..n.at].trim().is_empty())
    {
        n.parameter = true;
    }
    // `4294967296 bytes (4.3 GB, 4.0 GiB) copied, 21.2 s, 202 MB/s`:
    // the amount copied is the work asked for; the time and rate were
    // measured.
    if let Some(at) = text.find(" copied,").or_else(|| text.find(" transferred")) {
        for t in toks.iter_mut() {
            if let Tok::Num(n) = t
                && n.at < at
            {
                n.parameter = true;
            }
        }
    }
    // `- dd if=/dev/zero of=/dev/sda bs=400K count=10485  (334 MB/s)`: a
    // listed command and its result; what its options are set to is
    // what was asked for.
    let item = text
        .trim_start()
        .trim_start_matches(['-', '*', '•'])
        .trim_start();
    if item.len() < text.trim_start().len() && never_claims(item) {
        for t in toks.iter_mut() {
            if let Tok::Num(n) = t
                && n.name.is_some()
            {
                n.parameter = true;
            }
        }
    }
    // Numbers that name the row: before a device's name (`253  0 vda
    // 760 0 38498 ...`, /proc/diskstats), or before a dot leader that
    // ends the label (`PLU 5 ............ 7735.75`).
    if let Some(end) = identified_row(&toks).max(dot_leader(&toks)) {
        for t in toks[..end].iter_mut() {
            if let Tok::Num(n) = t {
                n.parameter = true;
            }
        }
    }
    let first = toks
        .iter()
        .position(|t| matches!(t, Tok::Num(n) if !n.parameter))?;
    // `[3135, 3285, 3728] sugov mainline`: samples, then what they are.
    let listed = bracketed_list(text);
    if listed.is_none() && is_sentence(&toks, text)
        || is_record(&toks, text)
        || is_setup(&toks)
        || only_knobs(&toks)
        || is_axis(&toks, first)
    {
        return None;
    }
    let label = match &toks[first] {
        _ if listed.is_some() => listed.unwrap_or(""),
        Tok::Num(n) => text[..n.at].trim(),
        Tok::Word { .. } => "",
    };
    // Dot leaders (`read iops ...... 448657`) are no part of a label.
    let label = label
        .trim_matches(|c: char| c == '|' || c == ':' || c == '=' || c.is_whitespace())
        .trim_end_matches(|c: char| c == '.' || c == '…' || c.is_whitespace())
        .to_string();
    let values: Vec<Num> = toks[first..]
        .iter()
        .filter_map(|t| match t {
            Tok::Num(n) if !n.parameter => Some(n.clone()),
            _ => None,
        })
        .collect();
    let (label, values) = super::columns::cell_groups(text, label, values);
    let runs = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Num(n) if n.parameter && n.name.as_deref() == Some("run") => Some(n.clone()),
            _ => None,
        })
        .collect();
    Some(Measured {
        label,
        values,
        runs,
    })
}

/// A record printed field by field, each whole number after its own
/// name (`item 9 key (257 EXTENT_DATA 0) itemoff 15673 itemsize 53`,
/// `generation 435179 type 0`): ids, offsets and sizes of a structure,
/// not measurements, which have units, fractions or columns.
fn is_record(toks: &[Tok], text: &str) -> bool {
    if is_gapped(text) {
        return false;
    }
    let mut pairs = 0;
    let mut after_word = false;
    for t in toks {
        match t {
            Tok::Word { .. } => after_word = true,
            Tok::Num(n) => {
                if !n.plain_integer || n.unit.is_some() || !after_word {
                    return false;
                }
                pairs += 1;
                after_word = false;
            }
        }
    }
    pairs >= 2
}

/// The words after a bracketed list of numbers that starts the line.
fn bracketed_list(text: &str) -> Option<&str> {
    let (list, rest) = text.trim_start().strip_prefix('[')?.split_once(']')?;
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    let numbers = items.len() >= 2
        && items
            .iter()
            .all(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit() || b"., ".contains(&b)));
    numbers.then_some(rest.trim())
}

/// The column names of a header line over the run: set apart by tabs or
/// runs of spaces, none of them a number.
fn header_cells(text: &str) -> Option<Vec<Cell>> {
    let t = text.trim();
    if !(t.contains("  ") || t.contains('\t')) {
        return None;
    }
    let cells = split(text);
    if cells.len() < 2 || !is_header(&cells) || never_claims(text) {
        return None;
    }
    measured(text, Convention::Us).is_none().then_some(cells)
}

/// Drops the values under a header that names what a row is about, not
/// what it measured: `PID`, `UID`, `CPU`, `Device`. A value is under the
/// header cell its columns overlap most, or the nearest one.
fn drop_identifiers(m: &mut Measured, text: &str, header: &[Cell]) {
    const IDS: [&str; 11] = [
        "pid", "uid", "tid", "tgid", "cpu", "core", "node", "irq", "device", "dev", "id",
    ];
    let col = |byte: usize| display_col(text, byte);
    // Each word of a cell on its own: `PID USER` is two columns set apart
    // by one space.
    let words: Vec<Cell> = header
        .iter()
        .flat_map(|h| {
            let mut at = 0;
            h.text.split(' ').filter_map(move |w| {
                let start = h.start + at;
                at += w.chars().count() + 1;
                (!w.is_empty()).then(|| Cell {
                    text: w.to_string(),
                    start,
                    end: start + w.chars().count(),
                })
            })
        })
        .collect();
    m.values.retain(|n| {
        let (a, b) = (col(n.at), col(n.end));
        let under = words.iter().min_by_key(|h| {
            let overlap = b.min(h.end).saturating_sub(a.max(h.start));
            let gap = if b <= h.start {
                h.start - b
            } else {
                a.saturating_sub(h.end)
            };
            (usize::MAX - overlap, gap)
        });
        !under.is_some_and(|h| IDS.contains(&h.text.trim().to_lowercase().as_str()))
    });
}

/// The display column of a byte offset, with tabs to the next multiple
/// of 8, as [`split`] counts.
fn display_col(text: &str, byte: usize) -> usize {
    text[..byte.min(text.len())].chars().fold(0, |col, c| {
        if c == '\t' {
            (col / 8 + 1) * 8
        } else {
            col + 1
        }
    })
}

/// Whether tokens of a line can never be a row of results: a sentence,
/// the machine's setup, a command, a dump or a log line.
pub fn never_row(text: &str, toks: &[Tok]) -> bool {
    never_claims(text) || is_sentence(toks, text) || is_setup(toks)
}

/// Whether a line set apart by single spaces is a sentence, for the
/// layouts that split such lines at every space.
pub fn is_prose_line(text: &str) -> bool {
    let t = text.trim();
    // Three plain words in a row, as [`is_sentence`] counts them; words
    // with digits are never plain, so no tokenizing is needed.
    if is_gapped(t) {
        return false;
    }
    plain_run(t.split_whitespace().map(Some), 3)
}

/// Whether a line has columns: a tab, a `|`, or a run of spaces that
/// does not follow a full stop (two spaces after one are prose's).
fn is_gapped(text: &str) -> bool {
    static GAP: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[^.?!:\s] {2,}\S|\t|\|").expect("constant regex"));
    GAP.is_match(text.trim())
}

/// A sentence: three plain lowercase words in a row (`set at 5000`,
/// `with a custom`), punctuation after them or not.
fn is_sentence(toks: &[Tok], text: &str) -> bool {
    // In a table a label may be three words (`fio cpu usage | 100%`).
    let table = is_gapped(text);
    let needed = if table { 4 } else { 3 };
    // `w/` and `w/o` are shorthand, no word of a sentence, though the
    // tokenizer keeps only their letters.
    let words = toks.iter().map(|t| match t {
        Tok::Word { text: w, .. } => {
            let end = (w.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize) + w.len();
            (!text.get(end..).is_some_and(|r| r.starts_with('/'))).then_some(*w)
        }
        _ => None,
    });
    plain_run(words, needed)
}

/// Whether `needed` plain words stand in a row; None (a number) breaks
/// a run as any other word that is not plain does.
fn plain_run<'a>(words: impl Iterator<Item = Option<&'a str>>, needed: usize) -> bool {
    let mut run = 0;
    for w in words {
        run = if w.is_some_and(is_plain_word) {
            run + 1
        } else {
            0
        };
        if run >= needed {
            return true;
        }
    }
    false
}

fn is_plain_word(text: &str) -> bool {
    // `misses:` ends a label; the words after it are another part.
    if text.ends_with(':') {
        return false;
    }
    let w = text.trim_end_matches(['.', ',', ';', '?', '!', ')']);
    !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '\'')
}

/// The index of the one word of a row that starts with one to three
/// small whole numbers, then that word (a device's name: `vda1`,
/// `nvme0n1`), then at least three numbers.
fn identified_row(toks: &[Tok]) -> Option<usize> {
    let lead = toks
        .iter()
        .take_while(|t| matches!(t, Tok::Num(n) if n.plain_integer && n.value < 4096.0))
        .count();
    let Some(Tok::Word { text, .. }) = toks.get(lead) else {
        return None;
    };
    let name = text.starts_with(|c: char| c.is_ascii_lowercase())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let rest = &toks[lead + 1..];
    let numbers = rest.iter().all(|t| matches!(t, Tok::Num(_))) && rest.len() >= 3;
    ((1..=3).contains(&lead) && name && numbers).then_some(lead)
}

/// The index of a word of dots only (`....`, or one `.`) between a
/// label and a number, when the line has one. Three dots or `…` are an
/// ellipsis (`runtime 94.285s ... 107.074s`, `tps ... %util`), no leader.
fn dot_leader(toks: &[Tok]) -> Option<usize> {
    let k = toks.iter().position(|t| {
        matches!(t, Tok::Word { text, .. } if (text.len() == 1 || text.len() >= 4) && text.bytes().all(|c| c == b'.'))
    })?;
    (k > 0 && matches!(toks.get(k + 1), Some(Tok::Num(_)))).then_some(k)
}

/// `irqmode=1 completion_nsec=0 HI=1`: a line of knob settings.
fn only_knobs(toks: &[Tok]) -> bool {
    toks.iter()
        .filter_map(|t| match t {
            Tok::Num(n) if !n.parameter => Some(n),
            _ => None,
        })
        .all(|n| n.knob)
}

/// `iodepth | 4 | 8 | 16 | 32`: a row that names a parameter's values
/// (its label is a parameter), or whole numbers that only grow.
fn is_axis(toks: &[Tok], first: usize) -> bool {
    let label_is_parameter = toks[..first]
        .iter()
        .find(|t| !matches!(t, Tok::Word { text, .. } if *text == "|"))
        .is_some_and(|t| {
            matches!(t, Tok::Word { text, .. }
                if super::tokens::PARAMETER_NAMES.contains(&text.trim_end_matches([':', '|']).to_lowercase().as_str()))
        });
    let nums: Vec<&Num> = toks[first..]
        .iter()
        .filter_map(|t| match t {
            Tok::Num(n) if !n.parameter => Some(n),
            _ => None,
        })
        .collect();
    // An axis spans a range (1 2 4 8, 100 200 300); sorted samples of
    // one quantity (`[3135, 3285, 3728, 3857, 3863]`) stay close.
    let growing = nums.len() >= 3
        && nums.iter().all(|n| n.plain_integer)
        && nums.windows(2).all(|w| w[0].value < w[1].value)
        && nums[nums.len() - 1].value >= 2.0 * nums[0].value;
    // A parameter's values are set, so round: `runtime 94.285s
    // 107.074s` was measured.
    let round = nums.iter().all(|n| super::tokens::is_round(n.value));
    label_is_parameter && round || growing
}

/// A list item's mark: the line's first word, `1.`, `2)`, `(3)`, `[1]`.
fn is_list_mark(word: &str, line: &str) -> bool {
    static MARK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\(\d{1,2}\)|\[\d{1,2}\]|\d{1,2}[.)])(?:\s|$)").expect("constant regex")
    });
    MARK.find(line).is_some_and(|m| {
        m.as_str().trim().trim_matches(['(', ')', '[', ']', '.']) == word.trim_end_matches('.')
    })
}

/// The machine a run was made on, not a result: `64GB RAM`, `gcc 12.2`,
/// `4 cores on 2.8 GHz`. A setup line names one or two sizes or
/// versions; a row of three or more results whose label has a setup
/// word (AndroidBench's `ram read  301  298  297 ...`) is a result.
fn is_setup(toks: &[Tok]) -> bool {
    let results = toks
        .iter()
        .filter(|t| matches!(t, Tok::Num(n) if !n.parameter))
        .count();
    let frequency = toks.iter().any(|t| {
        matches!(t, Tok::Num(n) if n.unit.as_ref().is_some_and(|u| u.kind == UnitKind::Frequency))
    });
    if results >= 3 && !frequency && !sized_setup_word(toks) {
        return false;
    }
    names_setup(toks)
}

/// `64GB RAM`, `192G memory`, `RAM: 6GB`: a number right beside a setup
/// word is the machine's size.
fn sized_setup_word(toks: &[Tok]) -> bool {
    toks.windows(2).any(|w| match (&w[0], &w[1]) {
        (Tok::Num(_), Tok::Word { text, .. }) | (Tok::Word { text, .. }, Tok::Num(_)) => {
            is_setup_word(text)
        }
        _ => false,
    })
}

fn is_setup_word(text: &str) -> bool {
    const SETUP: [&str; 16] = [
        "ram",
        "memory",
        "mem",
        "processor",
        "kernel",
        "version",
        "gcc",
        "clang",
        "compiler",
        "machine",
        "model",
        "firmware",
        "capacity",
        "bios",
        "microcode",
        "distro",
    ];
    let w = text.trim_end_matches([':', ',']).to_lowercase();
    SETUP.contains(&w.as_str())
}

fn names_setup(toks: &[Tok]) -> bool {
    toks.iter().any(|t| match t {
        Tok::Word { text, .. } => is_setup_word(text),
        Tok::Num(n) => n
            .unit
            .as_ref()
            .is_some_and(|u| u.kind == UnitKind::Frequency),
    })
}

/// The table of a run of measured lines. Rows whose first number is a
/// small whole number in every row, before a bare decimal, are keyed by
/// it (mmtests' client count); a named one (fio's `min=3`) is a value.
fn build(header: Option<&[String]>, rows: Vec<(usize, Measured)>) -> Draft {
    let keyed_by_first = rows.len() >= 2
        && rows.iter().all(|(_, m)| {
            let first = &m.values[0];
            m.values.len() >= 2
                && first.plain_integer
                && first.name.is_none()
                && first.value <= 1024.0
                && m.values[1..]
                    .iter()
                    .any(|n| !n.plain_integer && n.unit.is_none())
        });
    let factors = super::columns::factorial_keys(&rows);
    let skip = if factors >= 2 {
        factors
    } else {
        usize::from(keyed_by_first)
    };
    let width = rows
        .iter()
        .map(|(_, m)| m.values.len() - skip)
        .max()
        .unwrap_or(0);
    let columns = column_names(header, &rows, skip, width);
    let mut key_columns = vec!["label".to_string()];
    // The header's names over the key columns, when it has one a column.
    let key_names: Option<&[String]> = header
        .filter(|h| h.len() == width + skip)
        .map(|h| &h[..skip]);
    for k in 0..skip {
        key_columns.push(match key_names {
            Some(h) => h[k].clone(),
            None if k == 0 => "key".into(),
            None => format!("key {}", k + 1),
        });
    }
    let out_rows = rows
        .into_iter()
        .map(|(no, m)| {
            let mut keys = vec![m.label.clone()];
            keys.extend(m.values[..skip].iter().map(|n| format_key(n.value)));
            let mut values: Vec<Value> = m.values[skip..]
                .iter()
                .map(|n| {
                    if n.value == -1.0 && n.unit.is_none() {
                        // `-1.00`: a tool's "not available" (pidstat).
                        Value::NotApplicable
                    } else {
                        Value::Number {
                            value: n.value,
                            unit: n.unit.clone(),
                            spread_pct: None,
                        }
                    }
                })
                .collect();
            values.resize(width, Value::Missing);
            Row {
                unit: label_unit(&m.label),
                keys,
                values,
                line: no,
            }
        })
        .collect();
    Draft {
        kind: Some(ClaimKind::Table),
        key_columns,
        columns,
        rows: out_rows,
        unit_from_caption: true,
        ..Draft::default()
    }
}

fn format_key(v: f64) -> String {
    format!("{v}")
}

/// A name for each value column: the header's names when they match the
/// values one for one (the label's column left out), else the name the
/// first row gives the number (`IOPS` of `IOPS=549k`), else its place.
fn column_names(
    header: Option<&[String]>,
    rows: &[(usize, Measured)],
    skip: usize,
    width: usize,
) -> Vec<Column> {
    let names: Option<&[String]> = header.and_then(|h| match h.len() {
        n if n == width => Some(h),
        n if n == width + 1 + skip => Some(&h[1 + skip..]),
        n if skip > 1 && n == width + skip => Some(&h[skip..]),
        _ => None,
    });
    (0..width)
        .map(|k| {
            let from_row = rows
                .first()
                .and_then(|(_, m)| m.values.get(k + skip))
                .and_then(|n| n.name.clone());
            let name = names
                .map(|h| h[k].clone())
                .or(from_row)
                .unwrap_or_else(|| format!("#{}", k + 1));
            Column {
                unit: label_unit(&name),
                name,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Vec<Vec<f64>> {
        let lines = super::super::lines::readable(text);
        let d = at(&lines, 0).expect("a table");
        d.rows
            .iter()
            .map(|r| {
                r.values
                    .iter()
                    .filter_map(|v| match v {
                        Value::Number { value, .. } => Some(*value),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_compare_table_is_keyed_by_its_whole_number_column() {
        let rows = read(
            "\t\t  good\t\t bad\n\
             Amean     1        64.29 (   0.00%)       73.11 * -13.70%*\n\
             Amean     2        84.71 (   0.00%)       98.05 * -15.75%*\n",
        );
        assert_eq!(rows[0], vec![64.29, 0.0, 73.11, -13.70]);
        assert_eq!(rows[1], vec![84.71, 0.0, 98.05, -15.75]);
    }

    #[test]
    fn sentences_commands_and_dumps_are_not_rows() {
        for line in [
            "Note that the numbers are actually times to complete workload, 12 ms",
            "fio --name=test --filename=/dev/sdb --rw=randread --direct=1 --runtime=30",
            "ffffffff8172c355:  55  push %rbp",
            "Test machine: 64GB RAM, 48 CPUs",
        ] {
            let lines = super::super::lines::readable(line);
            assert!(at(&lines, 0).is_none(), "{line}");
        }
    }

    #[test]
    fn wrapped_rows_keep_every_number() {
        let rows = read(
            "00:05:01       dev7-0      1.74      0.92      6.02      4.00\n\
             0.29    184.17     28.01      4.86\n",
        );
        assert_eq!(rows[0], vec![1.74, 0.92, 6.02, 4.0]);
        assert_eq!(rows[1], vec![0.29, 184.17, 28.01, 4.86]);
    }
}
