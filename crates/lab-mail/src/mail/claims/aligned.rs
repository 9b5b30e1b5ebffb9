//! Aligned column tables: a header of words (optionally under a line of
//! spanning names), then rows whose trailing cells are numbers. Groups
//! of rows may be separated by blank lines and headed by a line of their
//! own (`8 threads:`), which becomes the first key of their rows.

use super::Draft;
use super::grid::{self, BodyLine, Cell, Headers, is_header, is_rule, split, values_at_end};
use super::lines::Line;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let (group, h, (mut headers, after)) = match headers_at(lines, i) {
        Some(found) => (None, i, found),
        None => {
            let text = lines[i].text.trim();
            if !is_leading_group(text) {
                return None;
            }
            (Some(group_name(text)), i + 1, headers_at(lines, i + 1)?)
        }
    };
    let mut body: Vec<BodyLine> = group
        .into_iter()
        .map(|text| BodyLine::Group { text })
        .collect();
    let mut j = after;
    let mut end = after;
    let mut width = 0;
    let mut ruled = false;
    let mut blanks = 0;
    let mut row_texts: Vec<&str> = Vec::new();
    while j < lines.len() {
        let text = &lines[j].text;
        if lines[j].is_blank() {
            blanks += 1;
            j += 1;
            continue;
        }
        // Between header and data: one blank line or a rule is fine.
        if is_rule(text) {
            ruled |= width == 0;
            j += 1;
            continue;
        }
        if blanks > 1 {
            if width == 0 {
                return None;
            }
            break;
        }
        // A sentence or a dump is never a row; a sentence may still head
        // a group of rows.
        let row = row_cells(split(text), width)
            .filter(|_| !super::measures::is_prose_line(text) && !super::never::is_dump(text));
        if let Some(cells) = row {
            if width == 0 {
                width = cells.len();
            }
            body.push(BodyLine::Row {
                cells,
                no: lines[j].no,
            });
            row_texts.push(lines[j].text);
            blanks = 0;
            j += 1;
            end = j;
            continue;
        }
        let repeat = same_names(&split(text), &headers.names);
        let group = !repeat && is_group(text);
        if (repeat || group) && starts_rows(lines, j + 1, width) {
            if group {
                body.push(BodyLine::Group {
                    text: group_name(text),
                });
            }
            blanks = 0;
            j += 1;
            continue;
        }
        // A group line over a repeat of the header, then rows.
        if group
            && let Some(k) = next_nonblank(lines, j + 1, 1)
            && same_names(&split(lines[k].text), &headers.names)
            && starts_rows(lines, k + 1, width)
        {
            body.push(BodyLine::Group {
                text: group_name(text),
            });
            blanks = 0;
            j = k + 1;
            continue;
        }
        break;
    }
    // Groups further down, but none over the first rows: the label above
    // the header (`Base:`, a blank line, the table) names the first group.
    if matches!(body.first(), Some(BodyLine::Row { .. }))
        && body.iter().any(|b| matches!(b, BodyLine::Group { .. }))
        && let Some(k) = (i.saturating_sub(2)..i)
            .rev()
            .find(|&k| !lines[k].is_blank())
        && is_leading_group(lines[k].text.trim())
    {
        body.insert(
            0,
            BodyLine::Group {
                text: group_name(lines[k].text),
            },
        );
    }
    let rows = body
        .iter()
        .filter(|b| matches!(b, BodyLine::Row { .. }))
        .count();
    let enough = rows >= 2 || (rows == 1 && (ruled || headers.names.len() >= 3));
    if !enough {
        return None;
    }
    single_spaced(&mut headers, lines, h, after, &mut body, &row_texts);
    let mut d = grid::build(&headers, body)?;
    d.start = i;
    d.end = end;
    Some(d)
}

/// The header at `h`: a line of names, or a line of spanning names over
/// one of more column names. Returns the headers and the next line.
fn headers_at(lines: &[Line], h: usize) -> Option<(Headers, usize)> {
    // A rule under a header is never a header itself, nor is a
    // section's banner (`======== base ========`).
    if is_rule(lines.get(h)?.text) || super::is_banner(lines[h].text) {
        return None;
    }
    let first = split(lines.get(h)?.text);
    // Most lines are no header; the sentence test is the dearer one.
    if !is_header(&first)
        || super::measures::is_prose_line(lines[h].text)
        || super::never::never_claims(lines[h].text)
        || super::perf::is_event(lines[h].text)
    {
        return None;
    }
    // Column names under spanning names are set apart by tabs or runs
    // of spaces; a single-spaced line there is a group line.
    if let Some(second) = lines
        .get(h + 1)
        .filter(|l| l.text.trim().contains("  ") || l.text.trim().contains('\t'))
        .filter(|l| !super::perf::is_event(l.text))
        .map(|l| split(l.text))
        .filter(|s| is_header(s) && s.len() >= 2 && s.len() > first.len())
        // `QD1  101K  120K` under `base  patched` is a row: a label and
        // its numbers, not column names under spanning ones.
        .filter(|s| values_at_end(s) + 1 != s.len())
    {
        return Some((
            Headers::new(first, second).divided_by(lines[h + 1].text),
            h + 2,
        ));
    }
    if first.len() < 2 {
        return None;
    }
    // `(msec)  (msec)  (%)` under the names: each unit joins the name it
    // stands under (perf trace's summary, iostat's older output).
    if let Some(names) = with_unit_line(&first, lines.get(h + 1)) {
        return Some((
            Headers::new(Vec::new(), names).divided_by(lines[h].text),
            h + 2,
        ));
    }
    Some((
        Headers::new(Vec::new(), first).divided_by(lines[h].text),
        h + 1,
    ))
}

/// Names and cells set apart by single spaces, read by their words
/// (see [`single_spaced_names`] and [`single_spaced_rows`]). The line of
/// column names is the header's own, or the one under its spanning
/// names (not a line of units joined to the names).
fn single_spaced(
    headers: &mut Headers,
    lines: &[Line],
    h: usize,
    after: usize,
    body: &mut [BodyLine],
    rows: &[&str],
) {
    let names_line = if headers.spans.is_empty() { h } else { h + 1 };
    if after == names_line + 1 {
        single_spaced_names(headers, lines[names_line].text, body);
    }
    single_spaced_rows(headers, lines[names_line].text, body, rows);
}

/// A header whose names are set apart by single spaces in places
/// (iostat's `%rrqm r_await rareq-sz`) reads as fewer names than its
/// rows have cells, and a row's first numbers would become keys. When
/// every row has the same width and the header has exactly that many
/// words, each word is a name.
fn single_spaced_names(headers: &mut Headers, text: &str, body: &[BodyLine]) {
    let mut widths = body.iter().filter_map(|b| match b {
        BodyLine::Row { cells, .. } => Some(cells.len()),
        BodyLine::Group { .. } => None,
    });
    let Some(width) = widths.next() else { return };
    // A line of units in brackets, `(secs)  (real time)`, is no header
    // whose words are names.
    let units = headers.names.iter().all(|c| c.text.starts_with('('));
    if units || headers.names.len() >= width || !widths.all(|w| w == width) {
        return;
    }
    let words = grid::words(text);
    if words.len() == width {
        headers.names = words;
    }
}

/// Rows whose numbers are set apart by single spaces where a number
/// fills its column (iozone's `1683793 1212394`), under a header that
/// does the same: when the header and every row have one and the same
/// number of words, more than the cells found, each word is a cell.
fn single_spaced_rows(headers: &mut Headers, text: &str, body: &mut [BodyLine], rows: &[&str]) {
    let names = grid::words(text);
    let words = names.len();
    let widths = || {
        body.iter().filter_map(|b| match b {
            BodyLine::Row { cells, .. } => Some(cells.len()),
            BodyLine::Group { .. } => None,
        })
    };
    let narrower = widths().any(|w| w < words) || headers.names.len() < words;
    if !narrower {
        return;
    }
    let split: Vec<Vec<Cell>> = rows.iter().map(|r| grid::words(r)).collect();
    if split.iter().any(|w| w.len() != words) {
        return;
    }
    let mut split = split.into_iter();
    for b in body.iter_mut() {
        if let BodyLine::Row { cells, .. } = b
            && let Some(w) = split.next()
        {
            *cells = w;
        }
    }
    // Names joined to a line of units under them are kept.
    if headers.names.len() != words {
        headers.names = names;
    }
}

/// The names with the units of the line under them, when that line is
/// only units in brackets, each under one name.
fn with_unit_line(names: &[Cell], line: Option<&Line>) -> Option<Vec<Cell>> {
    let units = split(line?.text);
    let bracketed = |c: &Cell| {
        let t = c.text.trim();
        t.len() <= 16 && t.starts_with('(') && t.ends_with(')') && t.len() > 2
    };
    if units.is_empty() || units.len() > names.len() || !units.iter().all(bracketed) {
        return None;
    }
    let mut out = names.to_vec();
    let mut used = vec![false; names.len()];
    for u in &units {
        // The name whose cell overlaps the unit most, else the nearest.
        let center = (u.start + u.end) / 2;
        let (k, _) = names.iter().enumerate().min_by_key(|(_, n)| {
            if n.start <= center && center < n.end.max(n.start + 1) {
                0
            } else {
                center.abs_diff((n.start + n.end) / 2)
            }
        })?;
        if used[k] {
            return None;
        }
        used[k] = true;
        out[k].text = format!("{} {}", names[k].text.trim(), u.text.trim());
    }
    Some(out)
}

/// The cells of a data row, or None. After the first row, a row must be
/// at least as wide as the table less one cell.
fn row_cells(cells: Vec<Cell>, width: usize) -> Option<Vec<Cell>> {
    let min = if width == 0 {
        2
    } else {
        width.saturating_sub(1).max(2)
    };
    // `nr_task: 1` is a label and its value, not a row.
    let labelled = cells.first().is_some_and(|c| c.text.ends_with(':'));
    (cells.len() >= min && !labelled && values_at_end(&cells) > 0).then_some(cells)
}

/// Whether a data row starts at `j` (after at most one blank line).
fn starts_rows(lines: &[Line], j: usize, width: usize) -> bool {
    next_nonblank(lines, j, 1)
        .and_then(|k| row_cells(split(lines[k].text), width))
        .is_some()
}

fn next_nonblank(lines: &[Line], from: usize, max_blanks: usize) -> Option<usize> {
    (from..lines.len().min(from + max_blanks + 1)).find(|&k| !lines[k].is_blank())
}

fn same_names(cells: &[Cell], names: &[Cell]) -> bool {
    cells.len() == names.len() && cells.iter().zip(names).all(|(a, b)| a.text == b.text)
}

/// A short line between groups of rows: `8 threads:`, `W1) 4k write`.
/// A line with columns (tabs, runs of spaces) is another table's header.
fn is_group(text: &str) -> bool {
    let t = text.trim();
    !t.is_empty()
        && t.len() <= 72
        && t.split_whitespace().count() <= 10
        && !t.ends_with('.')
        && !t.contains('\t')
        && !t.contains("  ")
        && !grid::counted(t)
}

/// A group line above the header must look like one: `8 threads:`,
/// `W1) ...`, `[randread]`.
fn is_leading_group(text: &str) -> bool {
    let t = text.trim();
    is_group(t)
        && t.split_whitespace().count() <= 5
        && (t.ends_with(':')
            || (t.starts_with('[') && t.ends_with(']'))
            || t.split_whitespace()
                .next()
                .is_some_and(|w| w.ends_with(')') && w.len() <= 4))
}

fn group_name(text: &str) -> String {
    text.trim().trim_end_matches(':').trim().to_string()
}
