//! What aligned and bordered tables share: cells with their positions,
//! which cells are headers and which rows are data, units in headers
//! and row labels, and building the table from headers and rows.

use super::Draft;
use super::numbers::{Cell as Parsed, parse_cell, parse_unit};
use super::tokens::Convention;
use crate::mail::model::{ClaimKind, Column, Row, Unit, Value};
use regex::Regex;
use std::sync::LazyLock;

/// A cell and the display columns it spans (tabs expanded to 8).
#[derive(Clone, Debug, PartialEq)]
pub struct Cell {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Every whitespace-separated word of a line as a cell, with its place.
/// A bar alone divides groups of columns; it is no word.
pub fn words(line: &str) -> Vec<Cell> {
    let mut cells = Vec::new();
    let mut start = None;
    let chars: Vec<char> = line.chars().collect();
    for (col, ch) in chars.iter().chain(std::iter::once(&' ')).enumerate() {
        match (ch.is_whitespace(), start) {
            (false, None) => start = Some(col),
            (true, Some(s)) => {
                if chars[s..col] != ['|'] {
                    cells.push(Cell {
                        start: s,
                        end: col,
                        text: chars[s..col].iter().collect(),
                    });
                }
                start = None;
            }
            _ => {}
        }
    }
    cells
}

/// Cells split at tabs or runs of two or more spaces, so `lat (ms)`
/// stays one cell; a line with neither splits at single spaces. Spaces
/// around `±` are dropped first, so `123 ±  2%` is one cell.
pub fn split(line: &str) -> Vec<Cell> {
    static SPREAD: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\s*(±|\+-)\s*(\d)").expect("constant regex"));
    let owned;
    let line = if line.contains('±') || line.contains("+-") {
        owned = SPREAD.replace_all(line, "±$2").into_owned();
        owned.as_str()
    } else {
        line
    };
    // `4   | 27500  107   | 27100`: a bar set apart by spaces between
    // cells divides groups of columns, as a gap does. Blanked in place,
    // so every cell keeps its column.
    let divided;
    let line = if line.contains(" | ") {
        divided = line.replace(" | ", "   ");
        divided.as_str()
    } else {
        line
    };
    let wide = line.trim().contains('\t') || line.trim().contains("  ");
    // A cell is a stretch of the line: its first byte, one past its
    // last character that is no space, and its column.
    let mut cells = Vec::new();
    let mut col = 0;
    let mut cur: Option<(usize, usize, usize)> = None;
    let mut spaces = 0;
    let cell = |(from, to, start): (usize, usize, usize), end: usize| Cell {
        start,
        end,
        text: line[from..to].to_string(),
    };
    for (at, ch) in line.char_indices() {
        let sep_now = ch == '\t' || (ch == ' ' && !wide);
        if ch == ' ' && wide {
            spaces += 1;
        } else if !sep_now {
            // Two spaces or more end a cell; one is part of it.
            if spaces >= 2
                && let Some(c) = cur.take()
            {
                cells.push(cell(c, col - spaces));
            }
            spaces = 0;
            match &mut cur {
                Some((_, to, _)) => *to = at + ch.len_utf8(),
                None => cur = Some((at, at + ch.len_utf8(), col)),
            }
        } else {
            if let Some(c) = cur.take() {
                cells.push(cell(c, col - spaces));
            }
            spaces = 0;
        }
        col = if ch == '\t' {
            (col / 8 + 1) * 8
        } else {
            col + 1
        };
    }
    if let Some(c) = cur {
        cells.push(cell(c, col - spaces));
    }
    cells
}

/// A header cell is a word: not a plain number, not a prose heading
/// ending in `:`, and not a sentence.
pub fn is_header_cell(cell: &str) -> bool {
    let c = cell.trim();
    !c.is_empty()
        && !c.ends_with(':')
        // A sentence ends with a full stop; an abbreviation (`#no.`,
        // `avg.`) names a column.
        && (!c.ends_with('.') || (c.len() <= 5 && !c.contains(' ')))
        && c.split_whitespace().count() <= 5
        && !is_value(&parse_cell(c))
        && !c
            .split_whitespace()
            .next()
            .is_some_and(super::tokens::only_continental)
        && !counted(c)
}

/// `10945 MB/s`, `3.1 ms`, `45%`: a number in a unit of measurement
/// is a value, never a column's name (`4k`, `512 B` may name one).
/// A plain number is a value too.
fn is_value(cell: &Parsed) -> bool {
    use crate::mail::model::UnitKind;
    match cell {
        Parsed::Number { plain: true, .. } => true,
        Parsed::Number { unit: Some(u), .. } => matches!(
            u.kind,
            UnitKind::Throughput | UnitKind::Rate | UnitKind::Time | UnitKind::Percent
        ),
        _ => false,
    }
}

/// `packets=23987040`: a name given a count no one would set is a
/// result, not a column's name (`iodepth=8` may be one).
pub fn counted(cell: &str) -> bool {
    cell.split('=').skip(1).any(|v| {
        let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
        digits
            .parse::<f64>()
            .is_ok_and(|n| !super::tokens::settable(n))
    })
}

pub fn is_header(cells: &[Cell]) -> bool {
    !cells.is_empty() && cells.iter().all(|c| is_header_cell(&c.text)) || is_axis_header(cells)
}

/// `block size   512   1024   2048`: a parameter named first, then the
/// values it takes, one per column below.
fn is_axis_header(cells: &[Cell]) -> bool {
    cells.len() >= 3
        && super::labels::is_parameter(&cells[0].text)
        && cells[1..]
            .iter()
            .all(|c| matches!(parse_cell(c.text.trim()), Parsed::Number { .. }))
}

/// How many trailing cells are numbers or not-applicable marks, when
/// they make a data row (at least one number among them).
/// A trailing footnote mark (`(*)`, `[1]`) does not count, and does not
/// stop the cells before it from making a row.
pub fn values_at_end(cells: &[Cell]) -> usize {
    let marks = cells
        .iter()
        .rev()
        .take_while(|c| is_footnote(&c.text))
        .count();
    let cells = &cells[..cells.len() - marks];
    let parsed: Vec<Parsed> = cells.iter().map(|c| value_cell(&c.text)).collect();
    let n = parsed
        .iter()
        .rev()
        .take_while(|p| !matches!(p, Parsed::Text))
        .count();
    let any_number = parsed[cells.len() - n..].iter().any(Parsed::is_number);
    if any_number { n } else { 0 }
}

/// A cell as a value: a number, or a number with its change in
/// brackets after it (`119 (-98%)`, `2.15 (+14%)`), read as the number.
fn value_cell(text: &str) -> Parsed {
    match parse_cell(text) {
        Parsed::Text => {
            let Some((head, tail)) = text.trim().split_once(" (") else {
                return Parsed::Text;
            };
            let change = parse_cell(&format!("({tail}"));
            match parse_cell(head) {
                Parsed::Number { value, unit, .. } if change.is_number() => Parsed::Number {
                    value,
                    unit,
                    spread_pct: None,
                    plain: false,
                },
                _ => Parsed::Text,
            }
        }
        p => p,
    }
}

/// `(*)`, `*`, `[1]`, `(2)`: a footnote mark, never a value.
pub fn is_footnote(cell: &str) -> bool {
    static MARK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\(\*+\)|\*+|\[\d{1,2}\]|\(\d{1,2}\))$").expect("constant regex")
    });
    MARK.is_match(cell.trim())
}

/// `------  -----`, `|---|:--:|`, `+----+----+`, `x----x`, `=====`.
pub fn is_rule(line: &str) -> bool {
    let t = line.trim();
    let marks = t.chars().filter(|c| matches!(c, '-' | '=' | '~')).count();
    marks >= 3 && t.chars().all(|c| " \t|:+-=x~".contains(c))
}

/// A unit in a header or row label: `latency (us)`, `lat [ms]`,
/// `CPU%`, `lat_ms`, `bw MB/s`, or a unit by itself like `IOPS`.
pub fn label_unit(label: &str) -> Option<Unit> {
    static BRACKETED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[(\[]\s*([^()\[\]]+?)\s*[)\]]\s*$").expect("constant regex"));
    static SUFFIXED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[_-]([A-Za-zµμ/]+)$").expect("constant regex"));
    let l = label.trim();
    // Each pattern is tried only where its last character is there.
    if l.ends_with([')', ']'])
        && let Some(c) = BRACKETED.captures(l)
    {
        return parse_unit(&c[1]);
    }
    if l.ends_with('%') {
        return parse_unit("%");
    }
    if l.contains(['_', '-'])
        && let Some(u) = SUFFIXED.captures(l).and_then(|c| strong_unit(&c[1]))
    {
        return Some(u);
    }
    if let Some(u) = parse_unit(l).filter(|u| u.symbol != "s" && u.written != "min") {
        return Some(u);
    }
    let last = l.rsplit(' ').next().filter(|w| w.len() < l.len())?;
    strong_unit(last)
}

/// A unit that is not also a common word or letter (`s`, `us`), nor
/// a statistic's name (`min`, beside `max` and `avg`, is the least).
fn strong_unit(word: &str) -> Option<Unit> {
    parse_unit(word).filter(|u| !matches!(u.written.as_str(), "s" | "us" | "sec" | "ops" | "min"))
}

/// Header words that name a run axis, so a numeric column under them is
/// a key of the row rather than a value.
fn is_axis_name(name: &str) -> bool {
    const AXES: [&str; 30] = [
        "threads",
        "thread",
        "jobs",
        "numjobs",
        "nr_task",
        "tasks",
        "iodepth",
        "qd",
        "depth",
        "queue depth",
        "bs",
        "block size",
        "blocksize",
        "size",
        "delay",
        "rw",
        "mode",
        "workload",
        "test",
        "op",
        "cpus",
        "nr_cpus",
        "hz",
        "config",
        "device",
        "disk",
        "fs",
        "engine",
        "ioengine",
        "pattern",
    ];
    let n = name.trim().to_lowercase();
    let base = n.split(['(', '[']).next().unwrap_or("").trim();
    AXES.contains(&base) || base.starts_with("io_") || base.starts_with("nr_")
}

/// One line of a table body, as the layouts classify it.
#[derive(Debug)]
pub enum BodyLine {
    Row {
        cells: Vec<Cell>,
        no: usize,
    },
    /// `8 threads:` above a group of rows.
    Group {
        text: String,
    },
}

/// The header lines over a table: column names, and an optional line of
/// spanning names above them.
pub struct Headers {
    pub spans: Vec<Cell>,
    pub names: Vec<Cell>,
    /// Where a bar first divides the names' line (`rw fsync bs | iops
    /// bw`): the names before it key the rows.
    pub divider: Option<usize>,
}

impl Headers {
    pub fn new(spans: Vec<Cell>, names: Vec<Cell>) -> Headers {
        Headers {
            spans,
            names,
            divider: None,
        }
    }

    /// The headers, with the divider of their names' line.
    pub fn divided_by(mut self, names_line: &str) -> Headers {
        // Positions count characters with tabs expanded; a line with
        // tabs is left undivided rather than miscounted.
        if !names_line.contains('\t') {
            self.divider = names_line
                .find(" | ")
                .map(|b| names_line[..b].chars().count() + 1);
        }
        self
    }
}

/// The header without the columns no row has a cell under (a `diff`
/// column left empty in a "before" table): rows narrower than their
/// header then line up by position, not from the right.
fn without_empty_columns(headers: &Headers, body: &[BodyLine]) -> Headers {
    let cells: Vec<&Cell> = body
        .iter()
        .filter_map(|b| match b {
            BodyLine::Row { cells, .. } => Some(cells.iter()),
            BodyLine::Group { .. } => None,
        })
        .flatten()
        .collect();
    // Right-aligned numbers under a left-aligned name may start a
    // little before it or end a little after: two columns of slack.
    let under = |n: &Cell| {
        cells
            .iter()
            .any(|c| c.start <= n.end + 2 && c.end + 2 >= n.start)
    };
    let names: Vec<Cell> = headers
        .names
        .iter()
        .enumerate()
        .filter(|(i, n)| *i == 0 || under(n))
        .map(|(_, n)| n.clone())
        .collect();
    Headers {
        spans: headers.spans.clone(),
        names,
        divider: headers.divider,
    }
}

/// The table from its headers and body. None when the first row does
/// not fit the header at all.
pub fn build(headers: &Headers, body: Vec<BodyLine>) -> Option<Draft> {
    let first = body.iter().find_map(|b| match b {
        BodyLine::Row { cells, .. } => Some(cells),
        BodyLine::Group { .. } => None,
    })?;
    let width = first.len();
    let narrowed;
    let headers = if width < headers.names.len() {
        narrowed = without_empty_columns(headers, &body);
        &narrowed
    } else {
        headers
    };
    let names: Vec<&str> = headers.names.iter().map(|c| c.text.trim()).collect();
    let all_rows: Vec<&[Cell]> = body
        .iter()
        .filter_map(|b| match b {
            BodyLine::Row { cells, .. } => Some(cells.get(1..).unwrap_or_default()),
            BodyLine::Group { .. } => None,
        })
        .collect();
    // The rows agree on one way of writing numbers, so a cell alone
    // (`2,2`) is read in the table's, not its own.
    let row_texts: Vec<String> = all_rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| c.text.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let conv = Convention::of(row_texts.iter().map(String::as_str));
    let (mut key_names, value_names, keys): (Vec<String>, Vec<&Cell>, usize) =
        match width.checked_sub(names.len())? {
            0 => {
                let divided = headers.divider.map_or(0, |d| {
                    let k = headers.names.iter().filter(|c| c.end <= d).count();
                    if k < names.len() { k } else { 0 }
                });
                let k = (1 + extra_keys(&names[1..], &all_rows, conv)).max(divided);
                let keys = names[..k].iter().map(|s| s.to_string()).collect();
                (keys, headers.names[k..].iter().collect(), k)
            }
            1 => {
                let k = 1 + extra_keys(&names, &all_rows, conv);
                let mut keys = vec!["key".to_string()];
                keys.extend(names[..k - 1].iter().map(|s| s.to_string()));
                (keys, headers.names[k - 1..].iter().collect(), k)
            }
            k @ 2..=3 => {
                let keys = (1..=k)
                    .map(|i| {
                        if i == 1 {
                            "key".into()
                        } else {
                            format!("key {i}")
                        }
                    })
                    .collect();
                (keys, headers.names.iter().collect(), k)
            }
            _ => return None,
        };
    if value_names.is_empty() {
        return None;
    }
    let span_names = spanning(&headers.spans, &value_names);
    // Each row's cells read once: for the column counts and the row.
    let computed: Vec<Vec<Vec<Value>>> = body
        .iter()
        .map(|b| match b {
            BodyLine::Row { cells, .. } => {
                let k = keys.min(cells.len().saturating_sub(1));
                cells[k..]
                    .iter()
                    .map(|c| cell_values(&c.text, conv))
                    .collect()
            }
            BodyLine::Group { .. } => Vec::new(),
        })
        .collect();
    let parts = cell_parts(&computed, value_names.len());
    let mut columns: Vec<Column> = Vec::new();
    for ((c, span), n) in value_names.iter().zip(&span_names).zip(&parts) {
        let name = match span {
            Some(s) => format!("{s} / {}", c.text.trim()),
            None => c.text.trim().to_string(),
        };
        for k in 1..=*n {
            columns.push(Column {
                name: if k == 1 {
                    name.clone()
                } else {
                    format!("{name} ({k})")
                },
                unit: if k == 1 { label_unit(&c.text) } else { None },
            });
        }
    }
    let grouped = body.iter().any(|b| matches!(b, BodyLine::Group { .. }));
    if grouped {
        key_names.insert(0, "group".into());
    }
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    let mut group = String::new();
    for (b, values) in body.into_iter().zip(computed) {
        match b {
            BodyLine::Group { text } => group = text,
            BodyLine::Row { cells, no } => {
                let (mut row, warning) = row_of(&cells, values, no, keys, &parts);
                if grouped {
                    row.keys.insert(0, group.clone());
                }
                warnings.extend(warning);
                rows.push(row);
            }
        }
    }
    let (unit, unit_from_caption) = table_unit(&columns, &rows);
    Some(Draft {
        unit_from_caption,
        kind: Some(ClaimKind::Table),
        key_columns: key_names,
        columns,
        rows,
        unit,
        warnings,
        ..Draft::default()
    })
}

/// Further leading columns that key the rows: text cells (`randread`),
/// numbers under an axis name (`threads`), or numbers that step evenly
/// down the rows (a sweep, or a running count: `4000000, 8000000, ...`),
/// which no measurement does. At most 3 keys in all, but for columns of
/// words (`RandRead 4 KiB QD1`, `round-robin`) in every row, which no
/// measurement is either. `rows` are the rows' cells after the first
/// key, the first row first.
fn extra_keys(names: &[&str], rows: &[&[Cell]], conv: Convention) -> usize {
    const MAX_KEYS: usize = 6;
    let Some(cells) = rows.first() else {
        return 0;
    };
    let mut n = 0;
    while n < 2 && n + 1 < cells.len() {
        let text = !matches!(
            parse_cell(&cells[n].text),
            Parsed::Number { .. } | Parsed::NotApplicable
        );
        let axis = names.get(n).is_some_and(|h| is_axis_name(h));
        let keyed = is_sweep(rows, n) || is_factor(rows, n) || is_tuples(rows, n, conv);
        if !(text || axis || keyed) {
            return n;
        }
        n += 1;
    }
    // Past that, only what no measurement is: words, or the settings of
    // a designed run under a setting's name (`fsync jobs bs(kB)`).
    while n + 1 < MAX_KEYS && rows.iter().all(|r| r.len() > n + 1) {
        let words = rows.iter().all(|r| is_words(&r[n].text));
        let setting = names.get(n).is_some_and(|h| is_axis_name(h)) && is_factor(rows, n);
        if !(words || setting) {
            break;
        }
        n += 1;
    }
    n
}

/// A cell that names something in words: no number of its own (a
/// value with its unit and notes is no such cell), and a word of three
/// letters or more that is no unit.
fn is_words(text: &str) -> bool {
    matches!(parse_cell(text), Parsed::Text)
        && text.split_whitespace().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            w.len() >= 3
                && w.chars().all(|c| c.is_ascii_alphabetic() || c == '-')
                && parse_unit(w).is_none()
        })
}

/// Column `n` of the rows as plain whole numbers, if it is all such.
fn whole_column(rows: &[&[Cell]], n: usize) -> Option<Vec<f64>> {
    rows.iter()
        .map(|r| match parse_cell(&r.get(n)?.text) {
            Parsed::Number {
                value, plain: true, ..
            } if value.fract() == 0.0 => Some(value),
            _ => None,
        })
        .collect()
}

/// Column `n` names a combination of settings in whole numbers
/// (`1`, `2,2`, `6,14`) in a table whose commas mark no decimals or
/// thousands there: a key, as a tuple of settings is.
fn is_tuples(rows: &[&[Cell]], n: usize, conv: Convention) -> bool {
    let tuple = |t: &str| {
        let parts: Vec<&str> = t.split(',').collect();
        parts.len() >= 2
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            && (conv == Convention::Us && parts[1..].iter().any(|p| p.len() != 3))
    };
    let whole = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let cells: Option<Vec<&str>> = rows.iter().map(|r| Some(r.get(n)?.text.trim())).collect();
    cells.is_some_and(|c| {
        c.iter().any(|t| tuple(t))
            && c.iter().all(|t| tuple(t) || whole(t))
            && rows.iter().all(|r| r.len() > n + 1)
    })
}

/// Column `n` of four rows or more holds a setting of a designed run:
/// plain whole numbers taking at most half as many values as there are
/// rows (`0`/`1` for a switch off and on), with a result after it.
/// Measurements take many values.
fn is_factor(rows: &[&[Cell]], n: usize) -> bool {
    let results_after = rows.iter().all(|r| r.len() > n + 1);
    let Some(mut v) = whole_column(rows, n).filter(|v| v.len() >= 4 && results_after) else {
        return false;
    };
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len() <= rows.len() / 2
}

/// Column `n` of the rows holds a sweep of plain integers, once or
/// once a group (see [`sweep_run`]).
fn is_sweep(rows: &[&[Cell]], n: usize) -> bool {
    let Some(v) = whole_column(rows, n).filter(|v| v.len() >= 2) else {
        return false;
    };
    // Groups of rows repeat the sweep (`4, 8` under `before:`, again
    // under `after:`): each run up to where it starts over must be one.
    let mut runs = Vec::new();
    let mut from = 0;
    for k in 1..=v.len() {
        if k == v.len() || v[k] <= v[k - 1] {
            runs.push(&v[from..k]);
            from = k;
        }
    }
    runs.iter().all(|r| r.len() >= 2 && sweep_run(r))
}

/// One run of a column: plain integers that step evenly (`1, 2, 3`,
/// `10, 20, 30`) or double (`1, 2, 4, 8`), or sizes in powers of two
/// with steps left out (iozone's record lengths 4, 8, ..., 64, 512,
/// 16384): results are not all powers of two and rising. Two values show
/// no step, so they must be such sizes, from 4 up.
fn sweep_run(v: &[f64]) -> bool {
    let pow2 = |x: f64, low: f64| (low..1e12).contains(&x) && (x as u64).is_power_of_two();
    if v.len() == 2 {
        return v.iter().all(|&x| pow2(x, 4.0)) && v[1] > v[0];
    }
    let step = v[1] - v[0];
    let even = step != 0.0 && v.windows(2).all(|w| w[1] - w[0] == step);
    let doubling = v[0] > 0.0 && v.windows(2).all(|w| w[1] == 2.0 * w[0]);
    let powers = v.iter().all(|&x| pow2(x, 1.0)) && v.windows(2).all(|w| w[1] > w[0]);
    even || doubling || powers
}

/// The spanning name above each value column. Groups of equal size
/// when the columns divide evenly among the spans, else the span whose
/// extent is nearest the column's middle.
fn spanning(spans: &[Cell], columns: &[&Cell]) -> Vec<Option<String>> {
    if spans.is_empty() {
        return vec![None; columns.len()];
    }
    // Spans over only some columns (`random  random` over iozone's
    // last two) name just the columns under them. A span centred over
    // its columns may leave the outer ones out, so the test is on the
    // middle of the second column from each end.
    let n = columns.len();
    let mid = |c: &Cell| (c.start + c.end) / 2;
    let covers = spans[0].start <= mid(columns[1.min(n - 1)])
        && spans[spans.len() - 1].end >= mid(columns[n.saturating_sub(2)]);
    if !covers {
        return columns
            .iter()
            .map(|c| {
                spans
                    .iter()
                    .find(|s| s.start <= c.end + 1 && c.start <= s.end + 1)
                    .map(|s| s.text.trim().to_string())
            })
            .collect();
    }
    if columns.len().is_multiple_of(spans.len()) {
        let per = columns.len() / spans.len();
        return (0..columns.len())
            .map(|i| Some(spans[i / per].text.trim().to_string()))
            .collect();
    }
    columns
        .iter()
        .map(|c| {
            let mid = (c.start + c.end) / 2;
            spans
                .iter()
                .min_by_key(|s| {
                    if mid < s.start {
                        s.start - mid
                    } else {
                        mid.saturating_sub(s.end)
                    }
                })
                .map(|s| s.text.trim().to_string())
        })
        .collect()
}

/// How many numbers each value column holds: 1, or more where a cell
/// writes several (`11.7k / 47.8 MB/s`, `1316MiB/s (12.65/55.40%)`,
/// `2.15 (+14%)`); each becomes a column of its own.
fn cell_parts(computed: &[Vec<Vec<Value>>], width: usize) -> Vec<usize> {
    let mut parts = vec![1; width];
    for row in computed {
        for (k, v) in row.iter().take(width).enumerate() {
            parts[k] = parts[k].max(v.len()).min(8);
        }
    }
    parts
}

/// The values of a cell: one for a number (with its unit and spread) or
/// a mark, else every number the tokenizer finds in it.
fn cell_values(text: &str, conv: Convention) -> Vec<Value> {
    use super::tokens::{Tok, scan};
    let parsed = parse_cell(text);
    if !matches!(parsed, Parsed::Text) {
        return vec![parsed.value()];
    }
    let nums: Vec<Value> = scan(text, conv)
        .into_iter()
        .filter_map(|t| match t {
            Tok::Num(n) if !n.parameter && !n.knob => Some(Value::Number {
                value: n.value,
                unit: n.unit,
                spread_pct: None,
            }),
            _ => None,
        })
        .collect();
    if nums.is_empty() {
        vec![Value::Missing]
    } else {
        nums
    }
}

/// A data row fitted to `keys` key cells and the columns of `parts`,
/// from the values of its cells after the keys. A row one
/// cell long or short is kept, and said so.
fn row_of(
    cells: &[Cell],
    computed: Vec<Vec<Value>>,
    no: usize,
    keys: usize,
    parts: &[usize],
) -> (Row, Option<String>) {
    let width = parts.len();
    let keys = keys.min(cells.len().saturating_sub(1));
    let key_cells: Vec<String> = cells[..keys]
        .iter()
        .map(|c| c.text.trim().to_string())
        .collect();
    let mut values: Vec<Vec<Value>> = computed
        .into_iter()
        .zip(parts.iter().chain(std::iter::repeat(&1)))
        .map(|(mut v, &n)| {
            v.resize(n, Value::Missing);
            v
        })
        .collect();
    let warning = match values.len().cmp(&width) {
        std::cmp::Ordering::Greater => {
            let extra: Vec<&str> = cells[keys + width..]
                .iter()
                .map(|c| c.text.trim())
                .collect();
            values.truncate(width);
            Some(format!(
                "line {no}: {} cells where the table has {}; kept the row without '{}'",
                cells.len(),
                keys + width,
                extra.join(" ")
            ))
        }
        std::cmp::Ordering::Less => {
            let had = cells.len();
            let missing = parts[values.len()..]
                .iter()
                .map(|&n| vec![Value::Missing; n]);
            values.extend(missing.collect::<Vec<_>>());
            Some(format!(
                "line {no}: {had} cells where the table has {}; the last are missing",
                keys + width
            ))
        }
        std::cmp::Ordering::Equal => None,
    };
    let unit = key_cells.first().and_then(|k| label_unit(k));
    (
        Row {
            keys: key_cells,
            unit,
            values: values.into_iter().flatten().collect(),
            line: no,
        },
        warning,
    )
}

/// The table's unit: the columns' when they all name the same one.
/// Columns that differ leave the table without one. When no column, row
/// or cell names one, the caption may (the second value says so).
fn table_unit(columns: &[Column], rows: &[Row]) -> (Option<Unit>, bool) {
    let named: Vec<&Unit> = columns.iter().filter_map(|c| c.unit.as_ref()).collect();
    if let Some(first) = named.first() {
        let all = named.len() == columns.len() && named.iter().all(|u| u.symbol == first.symbol);
        return (all.then(|| (*first).clone()), false);
    }
    let cells_have_units = rows.iter().any(|r| {
        r.unit.is_some()
            || r.values
                .iter()
                .any(|v| matches!(v, Value::Number { unit: Some(_), .. }))
    });
    (None, !cells_have_units)
}

/// The last unit a caption names. Units that are also words or too
/// short to trust (`s`, `us`, `%`) count only after `in` or inside
/// brackets, as in "latency in us" or "(%)".
pub fn caption_unit(caption: &str) -> Option<Unit> {
    static TOKEN: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[A-Za-zµμ%]+(?:/s)?").expect("constant regex"));
    TOKEN
        .find_iter(caption)
        .filter_map(|m| {
            let unit = parse_unit(m.as_str())?;
            let weak = matches!(&*unit.symbol, "s" | "us" | "%" | "ops/s" | "count");
            (!weak || unit_context(&caption[..m.start()])).then_some(unit)
        })
        .last()
}

fn unit_context(before: &str) -> bool {
    let before = before.trim_end();
    let word_in = before.len() >= 2
        && before[before.len() - 2..].eq_ignore_ascii_case("in")
        && !before[..before.len() - 2].ends_with(char::is_alphanumeric);
    before.ends_with(['(', '[']) || word_in
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<(usize, String)> {
        split(line).into_iter().map(|c| (c.start, c.text)).collect()
    }

    #[test]
    fn splits_keep_positions_and_spread() {
        assert_eq!(
            texts("\tdelay\tbefore\tafter"),
            vec![
                (8, "delay".into()),
                (16, "before".into()),
                (24, "after".into())
            ]
        );
        assert_eq!(
            texts("  lat (ms)   123 ±  2%"),
            vec![(2, "lat (ms)".into()), (13, "123±2%".into())]
        );
        assert_eq!(texts("1 9.97 1.16").len(), 3);
    }

    #[test]
    fn units_in_labels() {
        let sym = |l: &str| label_unit(l).map(|u| u.symbol);
        assert_eq!(sym("latency (us)").as_deref(), Some("us"));
        assert_eq!(sym("bw (MB/s)").as_deref(), Some("MB/s"));
        assert_eq!(sym("CPU%").as_deref(), Some("%"));
        assert_eq!(sym("lat_ms").as_deref(), Some("ms"));
        assert_eq!(sym("IOPS").as_deref(), Some("IOPS"));
        assert_eq!(sym("fdatasync p99.9 (us)").as_deref(), Some("us"));
        assert_eq!(sym("before"), None);
        assert_eq!(sym("jobs"), None);
    }
}
