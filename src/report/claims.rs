//! Claims: numeric tables found in patch mails.
//!
//! A patch's commit message often carries its evidence as a small table:
//! the numbers before and after, under a sentence that says what was
//! measured and in which unit. This module finds those tables in a mail,
//! a whole mbox thread, or plain text, so that a matrix can be checked
//! against what the author claimed. It reads prose, never the diff: a
//! diff is full of numbers that are not claims.
//!
//! Three layouts are read:
//! - aligned columns, separated by tabs or runs of spaces (or single
//!   spaces when every line splits the same way), a header of words and
//!   at least two rows of numbers;
//! - Markdown pipe tables, with or without the `|---|` rule;
//! - a run of at least two `label: value` lines, read as the columns
//!   `label` and `value`: one row per line, keyed by the label.

use anyhow::{Context, Result};
use mailparse::MailHeaderMap;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_saphyr::{FlowMap, FlowSeq};
use std::sync::LazyLock;

/// One table of numbers from a mail, as its author wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimTable {
    pub message_id: Option<String>,
    pub subject: Option<String>,
    /// 0 for the mail's own text, 1 for `> ` quoted text, and so on.
    #[serde(default)]
    pub quote_depth: usize,
    /// The prose right before the table, which says what was measured.
    pub caption: Option<String>,
    /// The key column first, then one column per value.
    pub columns: Vec<String>,
    pub rows: Vec<ClaimRow>,
    /// ns, us, ms or s for times; IOPS, MB/s, % and the like as written.
    pub unit: Option<String>,
    /// A sentence near the table that bounds the numbers, e.g. what the
    /// best possible result is. Best effort.
    pub theoretical_max: Option<String>,
}

/// One row: its key (first column) and its values, aligned to
/// `columns[1..]`; None where the cell was `-`, `n/a` or the like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    pub key: String,
    pub values: Vec<Option<f64>>,
}

/// The tables in a mail, an mbox of mails, or plain text, each reported
/// once even when replies quote it.
pub fn extract_from_bytes(raw: &[u8]) -> Result<Vec<ClaimTable>> {
    let tables = if raw.starts_with(b"From ") {
        let mut tables = Vec::new();
        for (n, message) in crate::mail::mbox::messages(raw).iter().enumerate() {
            let found = tables_of_mail(message)
                .with_context(|| format!("reading message {} of the mbox", n + 1))?;
            tables.extend(found);
        }
        tables
    } else if looks_like_mail(raw) {
        tables_of_mail(raw)?
    } else {
        tables_in_text(&String::from_utf8_lossy(raw))
    };
    Ok(dedupe(tables))
}

/// The tables in a mail body or other text, without mail headers.
pub fn extract_from_text(body: &str) -> Vec<ClaimTable> {
    dedupe(tables_in_text(body))
}

/// Claims YAML, for people to read and to copy into a matrix. Tables are
/// numbered from 1, as [`find_table`] and a matrix's `table:` count them.
/// It reads back as `Vec<ClaimTable>`.
pub fn to_yaml(tables: &[ClaimTable]) -> String {
    let docs: Vec<TableYaml> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| TableYaml::new(i + 1, t))
        .collect();
    // Only strings, integers and finite numbers are serialized, which
    // YAML can always represent.
    serde_saphyr::to_string(&docs).expect("claims are plain YAML values")
}

/// The `index_from_1`th table, as a matrix's claim names it.
pub fn find_table(tables: &[ClaimTable], index_from_1: usize) -> Option<&ClaimTable> {
    tables.get(index_from_1.checked_sub(1)?)
}

/// The value in row `row_key` and column `column`. Columns compare
/// without case; keys compare as numbers when both are numbers, so a
/// matrix axis value `1` finds the row written `1.0`.
pub fn column_value(t: &ClaimTable, row_key: &str, column: &str) -> Option<f64> {
    let index = t
        .columns
        .iter()
        .position(|c| c.trim().eq_ignore_ascii_case(column.trim()))?;
    let row = t.rows.iter().find(|r| same_key(&r.key, row_key))?;
    *row.values.get(index.checked_sub(1)?)?
}

/// `value` in `unit` as nanoseconds; None for a unit that is not a time.
pub fn to_ns(value: f64, unit: &str) -> Option<f64> {
    let scale = match canonical_unit(unit.trim())?.as_str() {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some(value * scale)
}

/// Whether two row keys are the same, as [`column_value`] matches them:
/// as numbers when both are numbers (`1` and `1.0`), else as text.
pub fn keys_match(a: &str, b: &str) -> bool {
    same_key(a, b)
}

/// Whether two unit words name the same unit (`usec` and `us`).
pub fn same_unit(a: &str, b: &str) -> bool {
    match (canonical_unit(a.trim()), canonical_unit(b.trim())) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(&y),
        _ => a.trim().eq_ignore_ascii_case(b.trim()),
    }
}

/// What [`to_yaml`] writes for one table: rows on one line each, and
/// empty fields left out.
#[derive(Serialize)]
struct TableYaml<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    message_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    subject: Option<&'a str>,
    table: usize,
    quote_depth: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caption: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    theoretical_max: Option<&'a str>,
    columns: FlowSeq<&'a [String]>,
    rows: Vec<FlowMap<&'a ClaimRow>>,
}

impl<'a> TableYaml<'a> {
    fn new(table: usize, t: &'a ClaimTable) -> Self {
        TableYaml {
            message_id: t.message_id.as_deref(),
            subject: t.subject.as_deref(),
            table,
            quote_depth: t.quote_depth,
            unit: t.unit.as_deref(),
            caption: t.caption.as_deref(),
            theoretical_max: t.theoretical_max.as_deref(),
            columns: FlowSeq(&t.columns),
            rows: t.rows.iter().map(FlowMap).collect(),
        }
    }
}

// ---- mails ----

/// A single RFC 822 mail starts with a header line and has at least one
/// header a mail always has; `before: 120k` in plain text has neither.
fn looks_like_mail(raw: &[u8]) -> bool {
    const MAIL_HEADERS: [&str; 6] = ["from", "subject", "message-id", "date", "to", "received"];
    static HEADER_LINE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[!-9;-~]+:").unwrap());
    let first = raw.split(|&b| b == b'\n').next().unwrap_or_default();
    if !HEADER_LINE.is_match(&String::from_utf8_lossy(first)) {
        return false;
    }
    mailparse::parse_headers(raw).is_ok_and(|(headers, _)| {
        headers
            .iter()
            .any(|h| MAIL_HEADERS.contains(&h.get_key().to_ascii_lowercase().as_str()))
    })
}

/// The tables of every text/plain part of one mail, tagged with the
/// mail's Message-ID and Subject.
fn tables_of_mail(raw: &[u8]) -> Result<Vec<ClaimTable>> {
    let mail = mailparse::parse_mail(raw).context("parsing the mail")?;
    let header = |name: &str| {
        mail.headers
            .get_first_value(name)
            .map(|v| collapse_whitespace(&v))
            .filter(|v| !v.is_empty())
    };
    let (message_id, subject) = (header("Message-ID"), header("Subject"));
    let mut tables = Vec::new();
    for part in mail.parts().filter(|p| p.ctype.mimetype == "text/plain") {
        let body = part
            .get_body()
            .context("decoding a text part of the mail")?;
        tables.extend(tables_in_text(&body));
    }
    for t in &mut tables {
        t.message_id.clone_from(&message_id);
        t.subject.clone_from(&subject);
    }
    Ok(tables)
}

/// Drops repeats of a table, e.g. the original's and a reply's quote of
/// it, keeping the first position and the shallowest quote depth: the
/// author's own words are the claim, a quote only repeats it.
fn dedupe(tables: Vec<ClaimTable>) -> Vec<ClaimTable> {
    let mut kept: Vec<ClaimTable> = Vec::new();
    for t in tables {
        match kept
            .iter_mut()
            .find(|k| k.columns == t.columns && k.rows == t.rows)
        {
            Some(k) if t.quote_depth < k.quote_depth => *k = t,
            Some(_) => {}
            None => kept.push(t),
        }
    }
    kept
}

// ---- lines and paragraphs ----

/// A line of text with its quote markers taken off.
struct Line {
    depth: usize,
    text: String,
}

/// Consecutive non-blank lines at one quote depth.
struct Paragraph {
    depth: usize,
    lines: Vec<String>,
}

/// The lines that may hold prose or tables. Diff material becomes a
/// blank line, and once a diff starts at a quote depth the rest of that
/// depth is blank too, while other depths are still read: a reply may
/// quote a whole patch and then give its own numbers.
fn readable_lines(body: &str) -> Vec<Line> {
    let mut stopped: Vec<usize> = Vec::new();
    let mut lines = Vec::new();
    for raw in body.lines() {
        let (depth, text) = unquote(raw);
        let text = text.trim_end();
        let readable = if stopped.contains(&depth) {
            false
        } else if starts_diff(text) {
            stopped.push(depth);
            false
        } else {
            !is_diffstat(text)
        };
        let text = if readable {
            text.to_string()
        } else {
            String::new()
        };
        lines.push(Line { depth, text });
    }
    lines
}

/// Quote depth and the text after the markers: `> `, `>> `, `> > `.
fn unquote(raw: &str) -> (usize, &str) {
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

/// The line that starts a patch's diff, or its diffstat or signature.
/// A line of dashes longer than `---` is a table rule, not a diff start.
fn starts_diff(text: &str) -> bool {
    const DIFF_STARTS: [&str; 6] = ["diff --git", "diff -", "@@", "+++ ", "Index:", "--- "];
    text == "---"
        || text == "--"
        || (DIFF_STARTS.iter().any(|p| text.starts_with(p)) && !is_rule(text))
}

/// ` drivers/md/dm-delay.c | 25 +++---` and ` 1 file changed, ...`.
fn is_diffstat(text: &str) -> bool {
    static FILE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*(\S+)\s+\|\s+(\d+ [+-]+|Bin .*|\d+)$").unwrap());
    static CHANGED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^\s*\d+ files? changed").unwrap());
    if CHANGED.is_match(text) {
        return true;
    }
    FILE.captures(text).is_some_and(|c| {
        let (name, count) = (&c[1], &c[2]);
        let pathlike =
            name.contains(['/', '.']) && !matches!(parse_cell(name), Cell::Number { .. });
        !count.chars().all(|ch| ch.is_ascii_digit()) || pathlike
    })
}

fn paragraphs(lines: &[Line]) -> Vec<Paragraph> {
    let mut out: Vec<Paragraph> = Vec::new();
    let mut open = false;
    for line in lines {
        if line.text.trim().is_empty() {
            open = false;
            continue;
        }
        match out.last_mut() {
            Some(p) if open && p.depth == line.depth => p.lines.push(line.text.clone()),
            _ => out.push(Paragraph {
                depth: line.depth,
                lines: vec![line.text.clone()],
            }),
        }
        open = true;
    }
    out
}

// ---- tables ----

/// A table found at the start of some lines.
struct Found {
    columns: Vec<String>,
    rows: Vec<ClaimRow>,
    /// Lines the table took, header and rules included.
    consumed: usize,
    /// Units written after numbers in cells, e.g. `ms` of `10ms`.
    cell_units: Vec<String>,
    /// Whether the column headers may name the unit (not for labels).
    headers_have_units: bool,
}

/// Every table in `body`, in order, with its prose around it.
fn tables_in_text(body: &str) -> Vec<ClaimTable> {
    let paragraphs = paragraphs(&readable_lines(body));
    let mut tables = Vec::new();
    // The prose that ends the previous paragraph, a caption candidate.
    let mut previous: Option<(usize, &[String])> = None;
    for (p, para) in paragraphs.iter().enumerate() {
        let next = paragraphs
            .get(p + 1)
            .filter(|n| n.depth == para.depth)
            .map_or(&[][..], |n| &n.lines[..]);
        let mut prose_start = 0;
        let mut i = 0;
        while i < para.lines.len() {
            let Some(found) = table_at(&para.lines[i..]) else {
                i += 1;
                continue;
            };
            let caption_lines = match previous {
                _ if i > prose_start => &para.lines[prose_start..i],
                Some((depth, lines)) if prose_start == 0 && depth == para.depth => lines,
                _ => &[][..],
            };
            let end = i + found.consumed;
            let after: Vec<&String> = para.lines[end..].iter().chain(next).collect();
            tables.push(claim_table(found, para.depth, caption_lines, &after));
            i = end;
            prose_start = end;
        }
        previous = Some((para.depth, &para.lines[prose_start..]));
    }
    tables
}

fn claim_table(
    found: Found,
    depth: usize,
    caption_lines: &[String],
    after: &[&String],
) -> ClaimTable {
    let caption = Some(collapse_whitespace(&caption_lines.join(" "))).filter(|c| !c.is_empty());
    let unit = table_unit(&found, caption.as_deref());
    let near = after
        .iter()
        .map(|l| l.as_str())
        .chain(caption_lines.iter().map(String::as_str));
    ClaimTable {
        message_id: None,
        subject: None,
        quote_depth: depth,
        theoretical_max: bound_sentence(&near.collect::<Vec<_>>().join(" ")),
        caption,
        columns: found.columns,
        rows: found.rows,
        unit,
    }
}

/// A table of any layout starting at `lines[0]`. Label runs go first:
/// `before: 120k` would otherwise pass for an aligned header.
fn table_at(lines: &[String]) -> Option<Found> {
    label_values_at(lines)
        .or_else(|| pipe_table_at(lines))
        .or_else(|| aligned_at(lines, split_wide))
        .or_else(|| aligned_at(lines, split_spaces))
}

/// Aligned columns: a header of words, optional rules, then rows of
/// numbers. A header one cell short has no name for the key column.
fn aligned_at(lines: &[String], split: fn(&str) -> Vec<String>) -> Option<Found> {
    let header = split(lines.first()?);
    if header.len() < 2 || !header.iter().all(|c| is_header_cell(c)) {
        return None;
    }
    let mut at = 1;
    while lines.get(at).is_some_and(|l| is_rule(l)) {
        at += 1;
    }
    let width = split(lines.get(at)?).len();
    let columns = match width.checked_sub(header.len())? {
        0 => header,
        1 => keyed(header),
        _ => return None,
    };
    let cells = lines[at..].iter().map(|l| split(l));
    rows_found(columns, cells, at, 2)
}

/// `| delay | before | after |`, with or without outer pipes and rule.
/// After a `|---|` rule one row is enough: the rule makes it a table.
fn pipe_table_at(lines: &[String]) -> Option<Found> {
    let header = pipe_cells(lines.first()?)?;
    if header.len() < 2 || !header[1..].iter().all(|c| is_header_cell(c)) {
        return None;
    }
    let ruled = lines.get(1).is_some_and(|l| is_rule(l));
    let at = 1 + usize::from(ruled);
    let columns = match header[0].is_empty() {
        true => keyed(header[1..].to_vec()),
        false => header,
    };
    let cells = lines[at..].iter().map_while(|l| pipe_cells(l));
    rows_found(columns, cells, at, if ruled { 1 } else { 2 })
}

/// A run of `label: value` lines, as columns `label` and `value`.
fn label_values_at(lines: &[String]) -> Option<Found> {
    let cells = lines
        .iter()
        .map_while(|l| label_value(l).map(|(label, value)| vec![label, value]));
    let mut found = rows_found(vec!["label".into(), "value".into()], cells, 0, 2)?;
    found.headers_have_units = false;
    Some(found)
}

fn label_value(line: &str) -> Option<(String, String)> {
    static LABEL_VALUE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*([A-Za-z][A-Za-z0-9 _./()+-]{0,40}?)\s*:\s+(\S.*?)\s*$").unwrap()
    });
    let c = LABEL_VALUE.captures(line)?;
    let value = c[2].to_string();
    matches!(parse_cell(&value), Cell::Number { .. }).then(|| (c[1].to_string(), value))
}

/// The rows among `cells` that fit `columns`, stopping at the first that
/// does not; None for fewer than `min_rows`.
fn rows_found(
    columns: Vec<String>,
    cells: impl Iterator<Item = Vec<String>>,
    header_lines: usize,
    min_rows: usize,
) -> Option<Found> {
    let mut rows = Vec::new();
    let mut cell_units = Vec::new();
    for row_cells in cells {
        let Some((row, units)) = data_row(&row_cells, columns.len()) else {
            break;
        };
        rows.push(row);
        cell_units.extend(units);
    }
    (rows.len() >= min_rows).then(|| Found {
        consumed: header_lines + rows.len(),
        columns,
        rows,
        cell_units,
        headers_have_units: true,
    })
}

/// A row is a key and then numbers or missing cells, at least one number.
fn data_row(cells: &[String], width: usize) -> Option<(ClaimRow, Vec<String>)> {
    if cells.len() != width || width < 2 || cells[0].is_empty() {
        return None;
    }
    let mut values = Vec::new();
    let mut units = Vec::new();
    for cell in &cells[1..] {
        match parse_cell(cell) {
            Cell::Number { value, unit, .. } => {
                values.push(Some(value));
                units.extend(unit);
            }
            Cell::Missing => values.push(None),
            Cell::Text => return None,
        }
    }
    values.iter().any(Option::is_some).then(|| {
        let key = cells[0].clone();
        (ClaimRow { key, values }, units)
    })
}

fn keyed(mut header: Vec<String>) -> Vec<String> {
    header.insert(0, "key".into());
    header
}

/// Cells split at tabs or runs of two or more spaces, so that a header
/// like `lat (ms)` stays one cell; a line without either splits at
/// single spaces.
fn split_wide(line: &str) -> Vec<String> {
    static WIDE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s*\t\s*| {2,}").unwrap());
    let line = line.trim();
    if !WIDE.is_match(line) {
        return split_spaces(line);
    }
    WIDE.split(line).map(str::to_string).collect()
}

fn split_spaces(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

fn pipe_cells(line: &str) -> Option<Vec<String>> {
    if !line.contains('|') {
        return None;
    }
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    Some(t.split('|').map(|c| c.trim().to_string()).collect())
}

/// `-----  -----`, `|---|:--:|`, `=====`: a line under a header.
fn is_rule(line: &str) -> bool {
    let marks = line.chars().filter(|c| matches!(c, '-' | '=')).count();
    marks >= 3 && line.chars().all(|c| " \t|:+-=".contains(c))
}

/// A header cell is a word: a plain number is data, and a trailing colon
/// makes it a prose heading. `4k` may head a column of block sizes.
fn is_header_cell(cell: &str) -> bool {
    !cell.is_empty()
        && !cell.ends_with(':')
        && !matches!(parse_cell(cell), Cell::Number { plain: true, .. })
}

// ---- cells and units ----

/// A table cell. Numbers may carry a multiplier (`120k`) and a unit
/// (`10ms`); the multiplier is applied, the unit kept apart.
#[derive(Debug, PartialEq)]
enum Cell {
    Number {
        value: f64,
        unit: Option<String>,
        /// Digits only: no multiplier, no unit.
        plain: bool,
    },
    Missing,
    Text,
}

fn parse_cell(raw: &str) -> Cell {
    const MISSING: [&str; 7] = ["-", "--", "—", "–", "n/a", "na", "?"];
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[+-]?\.\d+)(.*)$").unwrap()
    });
    static UNIT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[A-Za-zµμ%][A-Za-zµμ%/]{0,7}$").unwrap());
    let cell = raw.trim();
    if MISSING.contains(&cell.to_lowercase().as_str()) {
        return Cell::Missing;
    }
    let Some(c) = NUMBER.captures(cell) else {
        return Cell::Text;
    };
    let Ok(mut value) = c[1].replace(',', "").parse::<f64>() else {
        return Cell::Text;
    };
    let mut rest = c.get(2).map_or("", |m| m.as_str());
    let plain = rest.is_empty();
    if let Some((factor, tail)) = multiplier(rest) {
        value *= factor;
        rest = tail;
    }
    let unit = rest.trim();
    if unit.is_empty() {
        Cell::Number {
            value,
            unit: None,
            plain,
        }
    } else if UNIT.is_match(unit) {
        Cell::Number {
            value,
            unit: Some(unit.to_string()),
            plain: false,
        }
    } else {
        Cell::Text
    }
}

/// `k`, `K`, `M`, `G` right after a number, when no letter follows: `4k`
/// is 4000 but `4KiB` and `1.2MB/s` are units.
fn multiplier(rest: &str) -> Option<(f64, &str)> {
    let mut chars = rest.chars();
    let factor = match chars.next()? {
        'k' | 'K' => 1e3,
        'M' => 1e6,
        'G' => 1e9,
        _ => return None,
    };
    let tail = chars.as_str();
    (!tail.starts_with(char::is_alphabetic)).then_some((factor, tail))
}

/// The unit of a table: from its column headers if they name one, else
/// from the cells' suffixes, else from the caption. Headers that name
/// different units leave the table without one, rather than guess.
fn table_unit(found: &Found, caption: Option<&str>) -> Option<String> {
    if found.headers_have_units {
        let named: Vec<String> = found.columns[1..]
            .iter()
            .filter_map(|c| header_unit(c))
            .collect();
        if !named.is_empty() {
            return agreed(named);
        }
    }
    let from_cells: Vec<String> = found
        .cell_units
        .iter()
        .filter_map(|u| canonical_unit(u))
        .collect();
    if !from_cells.is_empty() {
        return agreed(from_cells);
    }
    caption.and_then(caption_unit)
}

fn agreed(units: Vec<String>) -> Option<String> {
    let first = units.first()?;
    units.iter().all(|u| u == first).then(|| first.clone())
}

/// `lat(ms)`, `lat [us]`, `lat_ms`, `clat-usec`, or a header that is a
/// unit by itself, like `IOPS`.
fn header_unit(cell: &str) -> Option<String> {
    static BRACKETED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[(\[]\s*([^()\[\]]+?)\s*[)\]]\s*$").unwrap());
    static SUFFIXED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[_-]([A-Za-zµμ%/]+)$").unwrap());
    if let Some(c) = BRACKETED.captures(cell).or_else(|| SUFFIXED.captures(cell)) {
        return canonical_unit(&c[1]);
    }
    canonical_unit(cell).filter(|u| !is_weak_unit(u))
}

/// The last unit the caption names. Units that are also English words
/// or too short to trust (`s`, `us`, `%`) count only after `in` or
/// inside brackets, as in "latency in us" or "(%)".
fn caption_unit(caption: &str) -> Option<String> {
    static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[A-Za-zµμ%]+(?:/s)?").unwrap());
    TOKEN
        .find_iter(caption)
        .filter_map(|m| {
            let unit = canonical_unit(m.as_str())?;
            let strong = !is_weak_unit(&unit) || unit_context(&caption[..m.start()]);
            strong.then_some(unit)
        })
        .last()
}

fn unit_context(before: &str) -> bool {
    let before = before.trim_end();
    let word_in = before.len() >= 2
        && before[before.len() - 2..].eq_ignore_ascii_case("in")
        && !before[..before.len() - 2].ends_with(char::is_alphanumeric);
    before.ends_with(['(', '[', ',']) || word_in
}

fn is_weak_unit(unit: &str) -> bool {
    matches!(unit, "s" | "us" | "%")
}

/// The canonical spelling of a unit: ns, us, ms, s for times, IOPS and
/// KIOPS, throughputs and `%` as written. None for anything else.
fn canonical_unit(word: &str) -> Option<String> {
    static THROUGHPUT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?i)[kmgt]i?b/s$").unwrap());
    let lower = word.to_lowercase();
    let canonical = match lower.as_str() {
        "ns" | "nsec" | "nsecs" | "nanoseconds" => "ns",
        "us" | "usec" | "usecs" | "µs" | "μs" | "microseconds" => "us",
        "ms" | "msec" | "msecs" | "milliseconds" => "ms",
        "s" | "sec" | "secs" | "seconds" => "s",
        "iops" => "IOPS",
        "kiops" => "KIOPS",
        "%" => "%",
        _ if THROUGHPUT.is_match(word) => word,
        _ => return None,
    };
    Some(canonical.to_string())
}

fn same_key(a: &str, b: &str) -> bool {
    match (parse_cell(a), parse_cell(b)) {
        (Cell::Number { value: x, .. }, Cell::Number { value: y, .. }) => x == y,
        _ => a.trim() == b.trim(),
    }
}

// ---- prose ----

/// The first sentence that states a bound on the results. The dm-delay
/// mail says it as "What remains above the requested delay is ...", so
/// the words are broader than "theoretical maximum".
fn bound_sentence(text: &str) -> Option<String> {
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
    sentences(text).into_iter().find(|s| {
        let lower = s.to_lowercase();
        BOUND_WORDS.iter().any(|w| lower.contains(w))
    })
}

/// Sentences end at `.`, `!` or `?` before a space; `1.125` is no end.
fn sentences(text: &str) -> Vec<String> {
    let flat = collapse_whitespace(text);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in flat.char_indices() {
        if matches!(c, '.' | '!' | '?') && flat[i + 1..].starts_with(' ') {
            out.push(flat[start..=i].to_string());
            start = i + 2;
        }
    }
    if start < flat.len() {
        out.push(flat[start..].to_string());
    }
    out
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dm-delay patch mail, kept in the repo as test data (a copy of
    /// shared/mail/dm-delay-ns-expiry.mbox) so a clone anywhere can test.
    const SHARED_MAIL: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/patches/dm-delay-ns-expiry.mbox"
    );
    const ORIGINAL_ID: &str = "<20261031161158.94403-1-snitzer@kernel.org>";
    const POLLING: &str = "What remains above the requested delay is the kthread's \
                           polling interval, one eighth of the delay.";

    /// Fails, not skips, without the mail: it is the reference claim.
    fn shared_mail() -> String {
        let raw = std::fs::read(SHARED_MAIL)
            .unwrap_or_else(|e| panic!("the shared mail {SHARED_MAIL} is needed: {e}"));
        String::from_utf8(raw).expect("the shared mail is UTF-8")
    }

    fn body_of(mail: &str) -> &str {
        mail.split_once("\n\n").expect("a mail has a body").1
    }

    /// `text` quoted once more, as mail clients quote: `> ` or `>`.
    fn quote(text: &str) -> String {
        text.lines()
            .map(|l| {
                if l.is_empty() {
                    ">\n".into()
                } else {
                    format!("> {l}\n")
                }
            })
            .collect()
    }

    /// A reply that quotes all of `quoted_body`, its diff included, and
    /// then gives its own table measured on x86_64.
    fn reply(message_id: &str, quoted_body: &str) -> String {
        format!(
            "From: Reviewer <r@example.org>\n\
             Subject: Re: [PATCH] dm-delay: do not round a short delay up\n\
             Date: Sun, 1 Nov 2026 09:00:00 +0000\n\
             Message-ID: {message_id}\n\
             In-Reply-To: {ORIGINAL_ID}\n\
             \n\
             On Sat, Oct 31, 2026 at 12:11:58PM -0400, Mike Snitzer wrote:\n\
             {}\n\
             Same on x86_64, HZ=250, mean latency in ms (300 writes each):\n\
             \n\
             \x20 delay  before  after\n\
             \x20 1      4.01    1.13\n\
             \x20 2      4.02    2.21\n\
             \n\
             Tested-by: Reviewer <r@example.org>\n",
            quote(quoted_body)
        )
    }

    fn mbox(mails: &[&str]) -> String {
        mails
            .iter()
            .map(|m| {
                format!(
                    "From mboxrd@z Thu Jan  1 00:00:00 1970\n{}\n\n",
                    m.trim_end()
                )
            })
            .collect()
    }

    fn without_separator(mbox_text: &str) -> &str {
        mbox_text.split_once('\n').unwrap().1
    }

    fn values(t: &ClaimTable) -> Vec<(&str, Vec<Option<f64>>)> {
        t.rows
            .iter()
            .map(|r| (r.key.as_str(), r.values.clone()))
            .collect()
    }

    fn assert_dm_delay_table(t: &ClaimTable) {
        assert_eq!(t.columns, ["delay", "before", "after"]);
        assert_eq!(
            values(t),
            [
                ("1", vec![Some(9.97), Some(1.16)]),
                ("2", vec![Some(9.97), Some(2.38)]),
                ("5", vec![Some(9.99), Some(5.85)]),
                ("20", vec![Some(20.06), Some(21.29)]),
            ]
        );
        assert_eq!(t.unit.as_deref(), Some("ms"));
        assert_eq!(t.theoretical_max.as_deref(), Some(POLLING));
    }

    #[test]
    fn shared_mail_has_one_table_and_nothing_from_the_diff() {
        let tables = extract_from_bytes(shared_mail().as_bytes()).unwrap();
        assert_eq!(tables.len(), 1, "{tables:#?}");
        let t = &tables[0];
        assert_dm_delay_table(t);
        assert_eq!(t.quote_depth, 0);
        assert_eq!(t.message_id.as_deref(), Some(ORIGINAL_ID));
        assert_eq!(
            t.subject.as_deref(),
            Some("[PATCH] dm-delay: do not round a short delay up to the next timer tick")
        );
        let caption = t.caption.as_deref().unwrap();
        assert!(
            caption.starts_with("Single 4 KiB direct writes"),
            "{caption}"
        );
        assert!(
            caption.ends_with("mean latency in ms (300 writes each):"),
            "{caption}"
        );
        for row in &t.rows {
            assert!(
                !row.key.contains('/') && !row.key.starts_with('@'),
                "{row:?}"
            );
        }
    }

    #[test]
    fn helpers_find_claimed_values() {
        let tables = extract_from_bytes(shared_mail().as_bytes()).unwrap();
        let t = find_table(&tables, 1).unwrap();
        assert_eq!(column_value(t, "1", "after"), Some(1.16));
        assert_eq!(column_value(t, "1.0", "After"), Some(1.16));
        assert_eq!(column_value(t, "20", "before"), Some(20.06));
        assert_eq!(column_value(t, "3", "before"), None);
        assert_eq!(
            column_value(t, "1", "delay"),
            None,
            "the key column has no value"
        );
        assert_eq!(column_value(t, "1", "during"), None);
        assert!(find_table(&tables, 0).is_none());
        assert!(find_table(&tables, 2).is_none());
    }

    #[test]
    fn quoted_table_in_a_thread_is_reported_once_at_depth_0() {
        let original = shared_mail();
        let first_reply = reply(
            "<reply-1@example.org>",
            body_of(without_separator(&original)),
        );
        let second_reply = reply("<reply-2@example.org>", body_of(&first_reply));
        let thread = mbox(&[without_separator(&original), &first_reply, &second_reply]);
        let tables = extract_from_bytes(thread.as_bytes()).unwrap();
        assert_eq!(tables.len(), 2, "{tables:#?}");
        assert_dm_delay_table(&tables[0]);
        assert_eq!(tables[0].quote_depth, 0);
        assert_eq!(tables[0].message_id.as_deref(), Some(ORIGINAL_ID));
        let x86 = &tables[1];
        assert_eq!(x86.quote_depth, 0);
        assert_eq!(x86.message_id.as_deref(), Some("<reply-1@example.org>"));
        assert_eq!(
            values(x86),
            [
                ("1", vec![Some(4.01), Some(1.13)]),
                ("2", vec![Some(4.02), Some(2.21)])
            ]
        );
    }

    #[test]
    fn quote_seen_first_gives_way_to_the_original() {
        let original = shared_mail();
        let original = without_separator(&original);
        let reply = reply("<reply-1@example.org>", body_of(original));
        let tables = extract_from_bytes(mbox(&[&reply, original]).as_bytes()).unwrap();
        assert_eq!(tables.len(), 2, "{tables:#?}");
        assert_dm_delay_table(&tables[0]);
        assert_eq!(tables[0].quote_depth, 0);
        assert_eq!(tables[0].message_id.as_deref(), Some(ORIGINAL_ID));
    }

    #[test]
    fn reply_alone_reports_the_quoted_table_at_depth_1() {
        let original = shared_mail();
        let mail = reply(
            "<reply-1@example.org>",
            body_of(without_separator(&original)),
        );
        let tables = extract_from_bytes(mail.as_bytes()).unwrap();
        assert_eq!(tables.len(), 2, "{tables:#?}");
        assert_dm_delay_table(&tables[0]);
        assert_eq!(tables[0].quote_depth, 1);
        assert_eq!(
            tables[0].message_id.as_deref(),
            Some("<reply-1@example.org>")
        );
        // Read after the quoted diff: that stops depth 1, not depth 0.
        assert_eq!(tables[1].quote_depth, 0);
        assert_eq!(tables[1].unit.as_deref(), Some("ms"));
    }

    #[test]
    fn quote_markers_of_any_style() {
        assert_eq!(unquote("> > \t1\t9.97"), (2, "\t1\t9.97"));
        assert_eq!(unquote(">> 1 2"), (2, "1 2"));
        assert_eq!(unquote(">1 2"), (1, "1 2"));
        assert_eq!(unquote("\t 1\t 9.97"), (0, "\t 1\t 9.97"));
        let tables = extract_from_text(">> | a | b |\n>> |---|---|\n>> | 1 | 2 |\n");
        assert_eq!(tables.len(), 1);
        assert_eq!(tables[0].quote_depth, 2);
    }

    #[test]
    fn markdown_pipe_table() {
        let text = "Sequential reads on a 4-core VM (MB/s):\n\
                    \n\
                    | bs   | before | after |\n\
                    |------|-------:|------:|\n\
                    | 4k   | 512    | 768   |\n\
                    | 128k | 2,048  | 3,100 |\n";
        let tables = extract_from_text(text);
        assert_eq!(tables.len(), 1, "{tables:#?}");
        let t = &tables[0];
        assert_eq!(t.columns, ["bs", "before", "after"]);
        assert_eq!(t.unit.as_deref(), Some("MB/s"));
        assert_eq!(column_value(t, "4k", "before"), Some(512.0));
        assert_eq!(column_value(t, "128k", "after"), Some(3100.0));
        assert_eq!(
            t.caption.as_deref(),
            Some("Sequential reads on a 4-core VM (MB/s):")
        );
    }

    #[test]
    fn pipe_table_with_one_row_needs_its_rule() {
        let ruled = extract_from_text("| | before | after |\n|---|---|---|\n| 1 | 2 | 3 |\n");
        assert_eq!(ruled.len(), 1);
        assert_eq!(ruled[0].columns, ["key", "before", "after"]);
        assert!(extract_from_text("| before | after |\n| 1 | 2 |\n").is_empty());
    }

    #[test]
    fn label_value_run_under_a_heading() {
        let text = "Results (4k randread, IOPS):\n  before: 120k\n  after:  180k\n\nThanks.\n";
        let tables = extract_from_bytes(text.as_bytes()).unwrap();
        assert_eq!(tables.len(), 1, "{tables:#?}");
        let t = &tables[0];
        assert_eq!(t.columns, ["label", "value"]);
        assert_eq!(
            values(t),
            [
                ("before", vec![Some(120_000.0)]),
                ("after", vec![Some(180_000.0)])
            ]
        );
        assert_eq!(t.unit.as_deref(), Some("IOPS"));
        assert_eq!(t.caption.as_deref(), Some("Results (4k randread, IOPS):"));
        assert_eq!(column_value(t, "after", "value"), Some(180_000.0));
        assert_eq!(t.message_id, None);
    }

    #[test]
    fn k_suffixes_missing_cells_and_usec() {
        let text = "fio 4k randread, QD1, p99 completion latency in usec:\n\
                    \n\
                    \x20 jobs   before   after\n\
                    \x20 1      1.2k     850\n\
                    \x20 4      2.5k     1.1k\n\
                    \x20 16     -        3.4k\n\
                    \n\
                    And IOPS at QD32:\n\
                    \n\
                    \x20 jobs  before  after\n\
                    \x20 1     120k    180k\n\
                    \x20 4     410K    1.2M\n";
        let tables = extract_from_text(text);
        assert_eq!(tables.len(), 2, "{tables:#?}");
        assert_eq!(tables[0].unit.as_deref(), Some("us"));
        assert_eq!(
            values(&tables[0]),
            [
                ("1", vec![Some(1200.0), Some(850.0)]),
                ("4", vec![Some(2500.0), Some(1100.0)]),
                ("16", vec![None, Some(3400.0)]),
            ]
        );
        assert_eq!(tables[1].unit.as_deref(), Some("IOPS"));
        assert_eq!(column_value(&tables[1], "4", "after"), Some(1_200_000.0));
        assert_eq!(column_value(&tables[1], "4", "before"), Some(410_000.0));
    }

    #[test]
    fn units_from_headers_and_cells() {
        let headed =
            extract_from_text("qd  lat(ms)  p99_lat(ms)\n1   1.0      2.0\n2   1.5      3.0\n");
        assert_eq!(headed[0].unit.as_deref(), Some("ms"));
        let suffixed = extract_from_text("qd  lat_us\n1   1.0\n2   1.5\n");
        assert_eq!(suffixed[0].unit.as_deref(), Some("us"));
        let mixed =
            extract_from_text("In ms:\n\nqd  iops  clat(usec)\n1   100   20\n2   150   30\n");
        assert_eq!(mixed[0].unit, None, "headers that disagree name no unit");
        let cells =
            extract_from_text("delay  before  after\n1  9.97ms  1.16ms\n2  9.97ms  2.38ms\n");
        assert_eq!(cells[0].unit.as_deref(), Some("ms"));
        assert_eq!(column_value(&cells[0], "2", "after"), Some(2.38));
    }

    #[test]
    fn single_spaced_and_keyless_tables() {
        let plain = extract_from_text("delay before after\n1 9.97 1.16\n2 9.97 2.38\n");
        assert_eq!(plain.len(), 1);
        assert_eq!(plain[0].columns, ["delay", "before", "after"]);
        let keyless = extract_from_text(
            "        before   after\nread    100      150\nwrite   80       120\n",
        );
        assert_eq!(keyless[0].columns, ["key", "before", "after"]);
        assert_eq!(column_value(&keyless[0], "write", "after"), Some(120.0));
        let ruled = extract_from_text(
            "qd   before  after\n---- ------  -----\n1    10      5\n2    20      9\n",
        );
        assert_eq!(column_value(&ruled[0], "2", "before"), Some(20.0));
    }

    const NUMERIC_DIFF: &str = "From: A <a@example.org>\n\
        Subject: [PATCH] Documentation: add the delay table\n\
        Message-ID: <diff@example.org>\n\
        \n\
        Add the measurement table to the documentation.\n\
        \n\
        Signed-off-by: A <a@example.org>\n\
        ---\n\
        \x20Documentation/block/delay.rst | 5 +++++\n\
        \x201 file changed, 5 insertions(+)\n\
        \n\
        diff --git a/Documentation/block/delay.rst b/Documentation/block/delay.rst\n\
        index 1111111..2222222 100644\n\
        --- a/Documentation/block/delay.rst\n\
        +++ b/Documentation/block/delay.rst\n\
        @@ -10,3 +10,8 @@ Results\n\
        \x20\n\
        \x20delay  before  after\n\
        \x20 1      9.97   1.16\n\
        \x20 2      9.97   2.38\n\
        + 5      9.99   5.85\n\
        +20     20.06  21.29\n\
        +| a | b |\n\
        +|---|---|\n\
        +| 1 | 2 |\n\
        -- \n\
        2.44.0\n";

    #[test]
    fn numbers_in_a_diff_are_not_claims() {
        assert!(
            extract_from_bytes(NUMERIC_DIFF.as_bytes())
                .unwrap()
                .is_empty()
        );
        let from_diff = &NUMERIC_DIFF[NUMERIC_DIFF.find("diff --git").unwrap()..];
        assert!(extract_from_text(from_diff).is_empty());
        let hunk_only = &NUMERIC_DIFF[NUMERIC_DIFF.find("@@").unwrap()..];
        assert!(extract_from_text(hunk_only).is_empty());
    }

    /// Below `---` come notes for reviewers and the diffstat, not the
    /// commit message, even when no diff follows.
    #[test]
    fn nothing_is_read_below_the_three_dashes() {
        let text = "Intro.\n---\nv2: new numbers\n\nqd  before  after\n1   2  3\n2   3  4\n";
        assert!(extract_from_text(text).is_empty());
        let above = text.replace("---\n", "");
        assert_eq!(extract_from_text(&above).len(), 1);
    }

    #[test]
    fn diffstat_lines_are_recognised() {
        assert!(is_diffstat(
            " drivers/md/dm-delay.c | 25 ++++++++++++++++++++++---"
        ));
        assert!(is_diffstat(" drivers/md/dm.c       | 3 +-"));
        assert!(is_diffstat(
            " 2 files changed, 25 insertions(+), 3 deletions(-)"
        ));
        assert!(is_diffstat(" include/linux/blk.h | 0"));
        assert!(!is_diffstat("| 1 | 9 |"));
        assert!(!is_diffstat("1 | 9"));
        assert!(!is_diffstat("1.5 | 9"));
    }

    #[test]
    fn multi_message_thread() {
        let cover = "From: A <a@example.org>\n\
            Subject: [PATCH 0/2] blk-mq: batch completions\n\
            Message-ID: <cover@example.org>\n\
            \n\
            IOPS, 4k randread, QD32:\n\
            \n\
            \x20 jobs  before  after\n\
            \x20 1     120k    180k\n\
            \x20 4     410k    600k\n\
            \n\
            A (2):\n\
            \x20 blk-mq: one\n\
            \x20 blk-mq: two\n\
            \n\
            \x20block/blk-mq.c | 25 +++\n\
            \x20block/blk.h    | 3 +-\n\
            \x202 files changed, 25 insertions(+), 3 deletions(-)\n";
        let patch = "From: A <a@example.org>\n\
            Subject: [PATCH 1/2] blk-mq: one\n\
            Message-ID: <patch1@example.org>\n\
            \n\
            Completion latency, p99 (us):\n\
            \n\
            | qd | before | after |\n\
            |----|--------|-------|\n\
            | 1  | 12.1   | 9.8   |\n\
            \n\
            The theoretical maximum is 1.125 ms.  Nothing else changes.\n\
            \n\
            ---\n\
            \x20block/blk-mq.c | 25 +++\n";
        let reply = format!(
            "From: B <b@example.org>\n\
             Subject: Re: [PATCH 0/2] blk-mq: batch completions\n\
             Message-ID: <cover-reply@example.org>\n\
             \n\
             {}\nLooks good.\n",
            quote(body_of(cover))
        );
        let thread = mbox(&[cover, patch, &reply]);
        let tables = extract_from_bytes(thread.as_bytes()).unwrap();
        assert_eq!(tables.len(), 2, "{tables:#?}");
        assert_eq!(tables[0].message_id.as_deref(), Some("<cover@example.org>"));
        assert_eq!(
            tables[0].subject.as_deref(),
            Some("[PATCH 0/2] blk-mq: batch completions")
        );
        assert_eq!(tables[0].unit.as_deref(), Some("IOPS"));
        assert_eq!(tables[0].rows.len(), 2);
        assert_eq!(
            tables[1].message_id.as_deref(),
            Some("<patch1@example.org>")
        );
        assert_eq!(tables[1].unit.as_deref(), Some("us"));
        assert_eq!(
            tables[1].theoretical_max.as_deref(),
            Some("The theoretical maximum is 1.125 ms.")
        );
        assert_eq!(column_value(&tables[1], "1", "after"), Some(9.8));
    }

    #[test]
    fn multipart_mail_reads_only_text_parts() {
        let mail = "From: A <a@example.org>\n\
            Subject: [PATCH] null_blk: faster\n\
            Message-ID: <mime@example.org>\n\
            MIME-Version: 1.0\n\
            Content-Type: multipart/mixed; boundary=\"XX\"\n\
            \n\
            --XX\n\
            Content-Type: text/plain; charset=utf-8\n\
            Content-Transfer-Encoding: quoted-printable\n\
            \n\
            Latency in =C2=B5s:\n\
            \n\
            qd  before  after\n\
            1   10.5    7.25\n\
            2   11.0    8.00\n\
            --XX\n\
            Content-Type: application/octet-stream\n\
            \n\
            qd  before  after\n\
            1   99      99\n\
            2   99      99\n\
            --XX--\n";
        let tables = extract_from_bytes(mail.as_bytes()).unwrap();
        assert_eq!(tables.len(), 1, "{tables:#?}");
        assert_eq!(tables[0].unit.as_deref(), Some("us"));
        assert_eq!(tables[0].caption.as_deref(), Some("Latency in µs:"));
        assert_eq!(column_value(&tables[0], "1", "after"), Some(7.25));
    }

    #[test]
    fn plain_text_is_not_taken_for_a_mail() {
        assert!(!looks_like_mail(b"before: 120k\nafter: 180k\n"));
        assert!(!looks_like_mail(b"Results (4k randread, IOPS):\n"));
        assert!(looks_like_mail(b"Subject: x\nFrom: a@b\n\nbody\n"));
    }

    #[test]
    fn yaml_is_readable_and_reads_back() {
        let tables = extract_from_bytes(shared_mail().as_bytes()).unwrap();
        let yaml = to_yaml(&tables);
        assert!(
            yaml.starts_with(&format!("- message_id: {ORIGINAL_ID}\n")),
            "{yaml}"
        );
        assert!(yaml.contains("  table: 1\n"), "{yaml}");
        assert!(yaml.contains("  unit: ms\n"), "{yaml}");
        assert!(
            yaml.contains("  columns: [delay, before, after]\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("  - {key: \"1\", values: [9.97, 1.16]}\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("  - {key: \"20\", values: [20.06, 21.29]}\n"),
            "{yaml}"
        );
        let back: Vec<ClaimTable> = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(back, tables);
    }

    #[test]
    fn yaml_keeps_missing_cells() {
        let tables = extract_from_text("qd  before  after\n1   -       2\n2   3       n/a\n");
        let back: Vec<ClaimTable> = serde_saphyr::from_str(&to_yaml(&tables)).unwrap();
        assert_eq!(back, tables);
        assert_eq!(back[0].rows[0].values, [None, Some(2.0)]);
        assert_eq!(back[0].rows[1].values, [Some(3.0), None]);
    }

    #[test]
    fn cells_parse_as_numbers_units_or_text() {
        let number = |value: f64, unit: Option<&str>, plain: bool| Cell::Number {
            value,
            unit: unit.map(str::to_string),
            plain,
        };
        assert_eq!(parse_cell("9.97"), number(9.97, None, true));
        assert_eq!(parse_cell("1,234"), number(1234.0, None, true));
        assert_eq!(parse_cell("120k"), number(120_000.0, None, false));
        assert_eq!(parse_cell("1.2M"), number(1_200_000.0, None, false));
        assert_eq!(parse_cell("10ms"), number(10.0, Some("ms"), false));
        assert_eq!(
            parse_cell("180k IOPS"),
            number(180_000.0, Some("IOPS"), false)
        );
        assert_eq!(parse_cell("1.2MB/s"), number(1.2, Some("MB/s"), false));
        assert_eq!(parse_cell("4KiB"), number(4.0, Some("KiB"), false));
        assert_eq!(parse_cell("-3.5%"), number(-3.5, Some("%"), false));
        assert_eq!(parse_cell("-"), Cell::Missing);
        assert_eq!(parse_cell("N/A"), Cell::Missing);
        assert_eq!(parse_cell("2.44.0"), Cell::Text);
        assert_eq!(parse_cell("4864671c2222f"), Cell::Text);
        assert_eq!(parse_cell("before"), Cell::Text);
    }

    #[test]
    fn times_convert_to_ns() {
        assert_eq!(to_ns(1.5, "ns"), Some(1.5));
        assert_eq!(to_ns(2.0, "us"), Some(2e3));
        assert_eq!(to_ns(2.0, "usec"), Some(2e3));
        assert_eq!(to_ns(2.0, "µs"), Some(2e3));
        assert_eq!(to_ns(1.16, "ms"), Some(1.16e6));
        assert_eq!(to_ns(3.0, "msec"), Some(3e6));
        assert_eq!(to_ns(1.0, "s"), Some(1e9));
        assert_eq!(to_ns(1.0, "IOPS"), None);
        assert_eq!(to_ns(1.0, "MB/s"), None);
    }

    #[test]
    fn bound_sentences() {
        assert_eq!(
            bound_sentence("Fine. The theoretical maximum is 1.125 ms. Done."),
            Some("The theoretical maximum is 1.125 ms.".to_string())
        );
        assert_eq!(
            bound_sentence("It takes at most one tick!"),
            Some("It takes at most one tick!".to_string())
        );
        assert_eq!(bound_sentence("Nothing to see here. Really."), None);
    }
}
