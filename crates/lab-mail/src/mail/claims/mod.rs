//! Claims: the numbers a mail states, in every layout kernel developers
//! write them: aligned or bordered tables, `label: value` lists, pasted
//! fio or `perf stat` output, the kernel test robot's comparisons, and
//! numbers in sentences. Each comes out as a [`ClaimTable`].
//!
//! A mail body is read once, line by line: quote markers are taken off
//! and the lines that are never claims (diffs, trailers, signatures,
//! dmesg) blanked ([`lines`]). The rest is cut into blocks of one quote
//! depth, and at each line the layouts are tried in turn; a layout that
//! matches consumes its lines. Every step is linear in the input.

mod aligned;
mod borders;
mod columns;
mod fio;
mod formulas;
mod ftrace;
mod glued;
mod grid;
mod hist;
mod labels;
pub mod lines;
mod lkp;
mod measures;
mod never;
mod numbers;
mod pairs;
mod perf;
mod prose;
pub mod render;
mod roles;
mod samples;
mod state;
mod structured;
mod terse;
#[cfg(test)]
mod tests;
mod tokens;

pub use numbers::parse_unit;

use crate::mail::message;
use crate::mail::model::{ClaimKind, ClaimTable, Column, Origin, Row, Unit, Value};
use anyhow::{Context, Result};
use lines::Line;
use std::collections::{BTreeMap, HashMap};

/// The claims in an mbox of a whole thread, a single mail, `git
/// format-patch` output, `git log` output or plain text, each reported
/// once, at its shallowest quote depth, even when replies quote it.
pub fn extract(raw: &[u8]) -> Result<Vec<ClaimTable>> {
    let mut found = Found::default();
    if raw.starts_with(b"From ") {
        found = of_mbox(&crate::mail::mbox::messages(raw))?;
    } else if message::looks_like_mail(raw) {
        let m = message::parse(raw).context("reading the mail")?;
        found.append(Found::of(of_message(&m, 1)?));
    } else {
        let text = String::from_utf8_lossy(raw);
        match git_log(&text) {
            Some(commits) => {
                for (n, (origin, body)) in commits.into_iter().enumerate() {
                    let origin = Origin {
                        message: n + 1,
                        ..origin
                    };
                    found.append(Found::of(in_text(&body, &origin)?));
                }
            }
            None => found.append(Found::of(in_text(&text, &Origin::default_first())?)),
        }
    }
    Ok(found.finish())
}

/// The claims in a mail body or other text, without mail headers.
pub fn extract_text(body: &str) -> Vec<ClaimTable> {
    Found::of(in_text(body, &Origin::default_first()).unwrap_or_default()).finish()
}

/// Tables as read, with their fingerprints beside them (not in pairs,
/// so that dropping the repeats and reordering happen in place: a big
/// thread's tables are never copied whole).
#[derive(Default)]
struct Found {
    keys: Vec<u128>,
    tables: Vec<ClaimTable>,
}

impl Found {
    fn of(tables: Vec<ClaimTable>) -> Found {
        // A big message's tables are hashed on every core.
        let parts = (tables.len() >= 16_384).then(|| {
            crate::util::par_chunks(&tables, crate::util::ncpus(), |_, part| {
                Ok(part.iter().map(fingerprint).collect::<Vec<_>>())
            })
            .into_iter()
            .collect::<Result<Vec<_>>>()
        });
        let keys = match parts {
            Some(Ok(parts)) => parts.concat(),
            _ => tables.iter().map(fingerprint).collect(),
        };
        Found { keys, tables }
    }

    fn append(&mut self, mut other: Found) {
        self.keys.append(&mut other.keys);
        self.tables.append(&mut other.tables);
    }

    /// The parts in order, each moved once into room made for all.
    fn concat(parts: Vec<Found>) -> Found {
        let n = parts.iter().map(|p| p.tables.len()).sum();
        let mut all = Found {
            keys: Vec::with_capacity(n),
            tables: Vec::with_capacity(n),
        };
        parts.into_iter().for_each(|p| all.append(p));
        all
    }

    fn finish(self) -> Vec<ClaimTable> {
        lone_numbers_last(dedupe(self))
    }
}

impl Origin {
    fn default_first() -> Origin {
        Origin {
            message: 1,
            ..Origin::default()
        }
    }
}

/// The messages of an mbox, read on every core: each message is read
/// on its own, so contiguous chunks of them concatenate in order.
fn of_mbox(messages: &[std::borrow::Cow<[u8]>]) -> Result<Found> {
    let read = |first: usize, chunk: &[std::borrow::Cow<[u8]>]| -> Result<Found> {
        let mut out = Found::default();
        for (k, data) in chunk.iter().enumerate() {
            let n = first + k + 1;
            crate::interrupt::check()?;
            let m =
                message::parse(data).with_context(|| format!("reading message {n} of the mbox"))?;
            out.append(Found::of(of_message(&m, n)?));
        }
        Ok(out)
    };
    // Threads pay off only for a big thread of mails.
    let threads = crate::util::ncpus().min(messages.len() / 64).max(1);
    if threads == 1 {
        return read(0, messages);
    }
    let parts = crate::util::par_chunks(messages, threads, read)
        .into_iter()
        .collect::<Result<Vec<_>>>()?;
    Ok(Found::concat(parts))
}

fn of_message(m: &message::Message, n: usize) -> Result<Vec<ClaimTable>> {
    let origin = Origin {
        message_id: m.message_id.clone(),
        subject: Some(m.subject.clone()).filter(|s| !s.is_empty()),
        author: m.author.clone(),
        date: m.date.clone(),
        message: n,
    };
    let mut out = Vec::new();
    for text in m.plain_texts() {
        out.extend(in_text(text, &origin)?);
    }
    Ok(out)
}

/// `git log` output: `commit <hash>`, `Author:`, `Date:`, then the
/// message indented by four spaces. One origin and body per commit.
fn git_log(text: &str) -> Option<Vec<(Origin, String)>> {
    let is_commit = |l: &str| {
        l.strip_prefix("commit ").is_some_and(|h| {
            let h = h.split_whitespace().next().unwrap_or("");
            h.len() >= 7 && h.chars().all(|c| c.is_ascii_hexdigit())
        })
    };
    if !text.lines().next().is_some_and(is_commit) {
        return None;
    }
    let mut out: Vec<(Origin, String)> = Vec::new();
    let mut subject_next = false;
    for line in text.lines() {
        if is_commit(line) {
            out.push((Origin::default(), String::new()));
            continue;
        }
        let Some((origin, body)) = out.last_mut() else {
            continue;
        };
        if body.is_empty() && origin.subject.is_none() {
            if let Some(a) = line.strip_prefix("Author:") {
                origin.author = Some(a.trim().to_string());
                continue;
            }
            if let Some(d) = line.strip_prefix("Date:") {
                origin.date = Some(d.trim().to_string());
                subject_next = true;
                continue;
            }
            if subject_next && !line.trim().is_empty() {
                origin.subject = Some(line.trim().to_string());
                subject_next = false;
                continue;
            }
        }
        body.push_str(line.strip_prefix("    ").unwrap_or(line));
        body.push('\n');
    }
    Some(out)
}

/// A table a layout found, before the mail's context is added.
#[derive(Debug, Default)]
pub(crate) struct Draft {
    pub kind: Option<ClaimKind>,
    pub caption: Option<String>,
    pub key_columns: Vec<String>,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    pub unit: Option<Unit>,
    /// Whether the caption may name the unit: nothing in the table does.
    pub unit_from_caption: bool,
    pub conditions: BTreeMap<String, String>,
    pub warnings: Vec<String>,
    /// A process's own accounting (`time`'s report of a command): it
    /// times the command, not the run the lines beside it describe.
    pub accounting: bool,
    /// Index of the first and one past the last line it took.
    pub start: usize,
    pub end: usize,
}

impl Draft {
    /// Gives back the room its vectors grew into: a big message's
    /// tables are all held until the end, and rows pushed one at a time
    /// leave up to half their room unused (a 48 MB message: 1030 MB
    /// peak before, 870-900 MB after).
    fn shrink(&mut self) {
        self.rows.shrink_to_fit();
        self.columns.shrink_to_fit();
        self.key_columns.shrink_to_fit();
        for r in &mut self.rows {
            r.keys.shrink_to_fit();
            r.values.shrink_to_fit();
        }
    }

    /// A table of one `value` column, its rows keyed by `keys`, from
    /// line `start`: what tool output with a name per number becomes.
    fn one_value(kind: ClaimKind, keys: &[&str], start: usize) -> Draft {
        Draft {
            kind: Some(kind),
            key_columns: keys.iter().map(|k| k.to_string()).collect(),
            columns: vec![Column {
                name: "value".into(),
                unit: None,
            }],
            start,
            ..Draft::default()
        }
    }
}

/// A layout: given a block's lines and a position, the table that
/// starts there, if any.
type Layout = fn(&[Line], usize) -> Option<Draft>;

/// The general reader, [`measures`], comes last: it takes what the
/// layouts that know a tool's format leave.
const LAYOUTS: [Layout; 14] = [
    ftrace::at,
    hist::at,
    samples::at,
    terse::at,
    structured::at,
    lkp::at,
    perf::at,
    fio::at,
    pairs::at,
    glued::at,
    borders::at,
    aligned::at,
    labels::at,
    measures::at,
];

/// Every claim in `body`, in order.
fn in_text(body: &str, origin: &Origin) -> Result<Vec<ClaimTable>> {
    let origin = &std::sync::Arc::new(origin.clone());
    let drawn = ascii_borders(body);
    let lines = lines::readable(drawn.as_deref().unwrap_or(body));
    let blocks = blocks(&lines);
    // Blocks are read on their own (the one before only lends a
    // caption), so a big message is split across cores at block
    // boundaries, as an mbox is at messages.
    let read = |first: usize, chunk: &[&[Line]]| -> Result<Vec<ClaimTable>> {
        let mut out = Vec::new();
        for (k, block) in chunk.iter().enumerate() {
            let n = first + k;
            if n.is_multiple_of(256) {
                crate::interrupt::check()?;
            }
            let before: &[Line] = if n > 0 { blocks[n - 1] } else { &[] };
            out.extend(in_block(block, before, origin));
        }
        Ok(out)
    };
    let threads = if lines.len() >= 200_000 {
        crate::util::ncpus().min(blocks.len() / 64).max(1)
    } else {
        1
    };
    let out = if threads == 1 {
        read(0, &blocks)?
    } else {
        let parts = crate::util::par_chunks(&blocks, threads, read)
            .into_iter()
            .collect::<Result<Vec<_>>>()?;
        let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        parts.into_iter().for_each(|mut p| out.append(&mut p));
        out
    };
    crate::interrupt::check()?;
    let mut out = out;
    formulas::drop_computed(body, &mut out);
    Ok(out)
}

/// A table drawn with box-drawing characters (`┌──┬──┐`, `│`) in the
/// ASCII the grid readers know (`+--+--+`, `|`), one character for one,
/// so every cell keeps its column. None when the body draws no box.
fn ascii_borders(body: &str) -> Option<String> {
    // One search for the block, as fast as the regex's byte scan: most
    // bodies draw no box, and a big one should not be walked by hand.
    static BOX: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new("[\u{2500}-\u{257f}]").expect("constant regex")
    });
    let boxed = |c: char| ('\u{2500}'..='\u{257f}').contains(&c);
    if !BOX.is_match(body) {
        return None;
    }
    Some(
        body.chars()
            .map(|c| match c {
                '─' | '━' | '═' | '┄' | '┈' => '-',
                '│' | '┃' | '║' | '┆' | '┊' => '|',
                c if boxed(c) => '+',
                c => c,
            })
            .collect(),
    )
}

/// Runs of lines at one quote depth; blank lines of any depth belong to
/// the run around them, so a quoted table may have unquoted blank lines.
fn blocks<'a, 'b>(lines: &'a [Line<'b>]) -> Vec<&'a [Line<'b>]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut depth: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        if l.is_blank() {
            continue;
        }
        match depth {
            Some(d) if d != l.depth => {
                out.push(&lines[start..i]);
                start = i;
                depth = Some(l.depth);
            }
            None => depth = Some(l.depth),
            _ => {}
        }
    }
    if start < lines.len() {
        out.push(&lines[start..]);
    }
    out
}

/// The index in `block` of its line numbered `no` (from 1, in the
/// message body), if the block holds it.
fn index_in(block: &[Line], no: usize) -> Option<usize> {
    let first = block.first()?.no;
    no.checked_sub(first).filter(|&i| i < block.len())
}

/// The claims in one block; `before` is the block above it, at another
/// quote depth, which may introduce its first table.
fn in_block(block: &[Line], before: &[Line], origin: &std::sync::Arc<Origin>) -> Vec<ClaimTable> {
    let depth = block.iter().find(|l| !l.is_blank()).map_or(0, |l| l.depth);
    let mut found: Vec<Draft> = Vec::new();
    let mut i = 0;
    let mut next_check = 0;
    while i < block.len() {
        // A huge block (one long text) stops soon after Ctrl-C too; the
        // caller turns the flag into an error.
        if i >= next_check {
            if crate::interrupt::interrupted() {
                return Vec::new();
            }
            next_check = i + 4096;
        }
        if block[i].is_blank() {
            i += 1;
            continue;
        }
        match LAYOUTS.iter().find_map(|layout| layout(block, i)) {
            Some(d) if d.end > i => {
                i = d.end;
                found.push(d);
            }
            _ => i += 1,
        }
    }
    // Prose is read from the lines no table took, and a typed command is
    // none: it ends the sentence that introduced it.
    let mut free: Vec<bool> = block.iter().map(|l| !lines::is_command(l.text)).collect();
    for d in &found {
        free[d.start..d.end].iter_mut().for_each(|f| *f = false);
    }
    let mut drafts = found;
    drafts.extend(prose::claims(block, &free));
    drafts.sort_by_key(|d| d.start);
    state::drop_listings(block, &mut drafts);
    labels::drop_parameter_lines(block, &mut drafts);
    let mut consumed_until = 0;
    let mut out = Vec::new();
    // Where each table's own lines end: the next table's caption and
    // rows are never this one's bound.
    let next_starts: Vec<usize> = drafts
        .iter()
        .skip(1)
        .map(|d| d.start)
        .chain(std::iter::once(block.len()))
        .collect();
    for (mut d, next_start) in drafts.into_iter().zip(next_starts) {
        // A run of parameters claims nothing but is no caption either.
        if d.rows.is_empty() {
            consumed_until = consumed_until.max(d.end);
            continue;
        }
        d.shrink();
        let first = block.iter().position(|l| !l.is_blank());
        let caption = d
            .caption
            .clone()
            .or_else(|| caption_above(block, consumed_until, d.start))
            .or_else(|| {
                (first == Some(d.start))
                    .then(|| intro_above(before))
                    .flatten()
            })
            .map(bounded_caption);
        let after = block.get(d.end..next_start.max(d.end)).unwrap_or_default();
        let unit = match (&d.unit, &caption) {
            (None, Some(c)) if d.unit_from_caption => grid::caption_unit(c),
            _ => d.unit,
        };
        // A sentence is its own claim; it bounds nothing.
        let theoretical_max = match d.kind {
            Some(ClaimKind::Prose) => None,
            _ => bound_sentence(after, caption.as_deref()),
        };
        if d.kind != Some(ClaimKind::Prose) {
            consumed_until = d.end;
        }
        out.push(ClaimTable {
            origin: std::sync::Arc::clone(origin),
            kind: d.kind.unwrap_or(ClaimKind::Table),
            quote_depth: depth,
            line: block.get(d.start).map_or(0, |l| l.no),
            caption,
            key_columns: d.key_columns,
            columns: d.columns,
            rows: d.rows,
            unit,
            conditions: d.conditions,
            theoretical_max,
            warnings: d.warnings,
        });
    }
    out
}

/// The lines just above a table, after at most one blank line: all of
/// them when they are at most 3, else the last sentence when it starts
/// within the last 3 lines. Never a paragraph.
fn caption_above(block: &[Line], from: usize, start: usize) -> Option<String> {
    let mut end = start;
    if end > from && block[end - 1].is_blank() {
        end -= 1;
    }
    let mut begin = end;
    while begin > from
        && !block[begin - 1].is_blank()
        && !is_banner(block[begin - 1].text)
        && end - begin < 8
    {
        begin -= 1;
    }
    // A command continued with `\` reads as one line; a rule drawn
    // above the table (`------`) says nothing.
    let lines: Vec<&str> = block[begin..end]
        .iter()
        .map(|l| {
            let t = l.text.trim();
            match grid::is_rule(t) {
                true => "",
                false => t.strip_suffix('\\').map_or(t, str::trim_end),
            }
        })
        .collect();
    if lines.iter().all(|l| l.is_empty()) {
        return None;
    }
    let join = |ls: &[&str]| {
        ls.iter()
            .filter(|l| !l.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    };
    // A prompted command right above the numbers produced them: it is
    // the caption, whatever prose comes before it (with the lines it
    // continues with `\`).
    let mut cmd = end - 1;
    while cmd > begin && block[cmd - 1].text.trim_end().ends_with('\\') {
        cmd -= 1;
    }
    let prompted = |t: &str| {
        let t = t.trim_start();
        (t.starts_with("$ ") || t.starts_with("# ")) && t.len() > 2
    };
    if cmd > begin && prompted(block[cmd].text) {
        return Some(join(&lines[cmd - begin..]));
    }
    let whole_paragraph =
        begin == from || block[begin - 1].is_blank() || is_banner(block[begin - 1].text);
    if lines.len() <= 3 && whole_paragraph {
        return Some(join(&lines));
    }
    let tail = join(&lines[lines.len().saturating_sub(3)..]);
    let sentence = last_sentence(&tail)?;
    Some(sentence.to_string()).filter(|s| !s.is_empty())
}

/// The name of a section banner (`==========for-next==========`, `---
/// patched ---`): the same mark three times or more at both ends of it.
/// The lines under it are a section; a caption starts below it.
pub fn banner(text: &str) -> Option<&str> {
    let t = text.trim();
    let mark = t.chars().next().filter(|c| "=-*#~+".contains(*c))?;
    let head = t.chars().take_while(|c| *c == mark).count();
    let tail = t.chars().rev().take_while(|c| *c == mark).count();
    let name = t.trim_matches(mark).trim();
    (!name.is_empty() && head >= 3 && tail >= 3).then_some(name)
}

fn is_banner(text: &str) -> bool {
    banner(text).is_some()
}

/// A caption of at most 600 bytes: three lines of a huge text must not
/// be copied into every table under them.
fn bounded_caption(c: String) -> String {
    const MAX: usize = 600;
    if c.len() <= MAX {
        return c;
    }
    let mut end = MAX;
    while !c.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} …", &c[..end])
}

/// A caption at another quote depth: the reply's "Here are my numbers
/// on arm64:" just above a quoted table, or a quoted line above the
/// replier's table. Only a line that ends with a colon introduces, and
/// never the attribution ("On Mon, ... wrote:").
fn intro_above(before: &[Line]) -> Option<String> {
    let caption = caption_above(before, 0, before.len())?;
    let intro = caption.ends_with(':') && !caption.ends_with("wrote:");
    intro.then_some(caption)
}

/// The text after the last sentence end in `text` (`. ` with a capital
/// or not); None when the last 3 lines hold no sentence start.
fn last_sentence(text: &str) -> Option<&str> {
    let trimmed = text.trim_end();
    let body = trimmed.strip_suffix(['.', ':']).unwrap_or(trimmed);
    let cut = body.rfind(". ").or_else(|| body.rfind(".  "))?;
    Some(trimmed[cut + 1..].trim())
}

/// The first sentence after a table (or in its caption) that bounds the
/// results: "What remains above the requested delay is ...".
fn bound_sentence(after: &[Line], caption: Option<&str>) -> Option<String> {
    const BOUND_WORDS: [&str; 12] = [
        "theoretical",
        "maximum",
        "at most",
        "upper bound",
        "lower bound",
        "expected",
        "no more than",
        "cannot exceed",
        "limit",
        "remains above",
        "best case",
        "worst case",
    ];
    let para: Vec<&str> = after
        .iter()
        .skip_while(|l| l.is_blank())
        .take_while(|l| !l.is_blank())
        .take(6)
        .map(|l| l.text.trim())
        .collect();
    let text = format!("{} {}", para.join(" "), caption.unwrap_or(""));
    prose::sentences(&text).into_iter().find(|s| {
        let lower = s.to_lowercase();
        BOUND_WORDS.iter().any(|w| lower.contains(w))
    })
}

/// The claims in mail order, but a lone number in a sentence (`sees
/// 10 ms each time`) after all the tables and stated changes: matrices
/// name claims by their number, and reading more such numbers must not
/// renumber the tables people bind to.
fn lone_numbers_last(mut tables: Vec<ClaimTable>) -> Vec<ClaimTable> {
    let lone = |t: &mut ClaimTable| {
        t.kind == ClaimKind::Prose && t.columns.len() == 1 && t.columns[0].name == prose::LONE
    };
    let last: Vec<ClaimTable> = tables.extract_if(.., lone).collect();
    tables.extend(last);
    tables
}

/// Drops repeats of a table at another quote depth (a reply quoting
/// it), keeping the first position and the shallowest depth: the
/// author's own words are the claim, a quote only repeats it. Hashing
/// keeps this linear; the kept tables are moved down in place.
fn dedupe(found: Found) -> Vec<ClaimTable> {
    let Found { keys, mut tables } = found;
    let mut seen: HashMap<u128, usize> = HashMap::with_capacity(keys.len());
    let mut kept = 0;
    for (r, key) in keys.into_iter().enumerate() {
        let depth = tables[r].quote_depth;
        match seen.get(&key) {
            // The shallower repeat takes the first one's place.
            Some(&k) if depth < tables[k].quote_depth => tables.swap(k, r),
            // Printed again at the same depth (two runs that agree, a
            // cover letter and its patch) is a claim again.
            Some(&k) if depth == tables[k].quote_depth => {
                tables.swap(kept, r);
                kept += 1;
            }
            Some(_) => {}
            None => {
                seen.insert(key, kept);
                tables.swap(kept, r);
                kept += 1;
            }
        }
    }
    tables.truncate(kept);
    tables
}

/// What makes two tables the same claim: kind, columns and rows, not
/// where they were written. Hashed field by field, with lengths, so no
/// string of the whole table is built and no two tables run together.
fn fingerprint(t: &ClaimTable) -> u128 {
    fn put(h: &mut blake3::Hasher, s: &[u8]) {
        h.update(&(s.len() as u64).to_le_bytes());
        h.update(s);
    }
    let mut h = blake3::Hasher::new();
    put(&mut h, format!("{:?}", t.kind).as_bytes());
    t.key_columns.iter().for_each(|k| put(&mut h, k.as_bytes()));
    put(&mut h, b"|");
    for c in &t.columns {
        put(&mut h, c.name.as_bytes());
        put(
            &mut h,
            c.unit.as_ref().map_or("", |u| &*u.symbol).as_bytes(),
        );
    }
    let mut rows = Vec::with_capacity(t.rows.len() * 16);
    for r in &t.rows {
        for k in &r.keys {
            rows.extend_from_slice(&(k.len() as u64).to_le_bytes());
            rows.extend_from_slice(k.as_bytes());
        }
        for v in &r.values {
            match v {
                Value::Number {
                    value,
                    unit,
                    spread_pct,
                } => {
                    rows.push(1);
                    rows.extend_from_slice(&value.to_bits().to_le_bytes());
                    let u = unit.as_ref().map_or("", |u| u.written.as_str());
                    rows.extend_from_slice(&(u.len() as u64).to_le_bytes());
                    rows.extend_from_slice(u.as_bytes());
                    rows.extend_from_slice(
                        &spread_pct.map_or(u64::MAX, f64::to_bits).to_le_bytes(),
                    );
                }
                Value::NotApplicable => rows.push(2),
                Value::Missing => rows.push(3),
            }
        }
        rows.push(0xff);
    }
    put(&mut h, &rows);
    let hash = h.finalize();
    let mut first = [0u8; 16];
    first.copy_from_slice(&hash.as_bytes()[..16]);
    u128::from_le_bytes(first)
}
