//! Tables drawn with borders: Markdown pipes (`| a | b |` and `|---|`),
//! `+----+----+` or `x----x` rules with `|` separators. A first header
//! row with fewer cells spans groups of the columns below it
//! (`iodepth 8`, `iodepth 16` over repeated `IOPS  BW  lat`).

use super::Draft;
use super::grid::{self, BodyLine, Cell, Headers, is_header_cell, is_rule, values_at_end};
use super::lines::Line;

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    if pipe_cells(lines[i].text).is_none() && !is_border(lines[i].text) {
        return None;
    }
    let mut headers: Vec<Vec<Cell>> = Vec::new();
    let mut body = Vec::new();
    let mut ruled = false;
    let mut end = i;
    let mut j = i;
    while j < lines.len() {
        let text = &lines[j].text;
        if is_border(text) || is_rule(text) {
            ruled |= body.is_empty() && !headers.is_empty();
            j += 1;
            continue;
        }
        let Some(cells) = pipe_cells(text) else {
            break;
        };
        // Cells between bars are cells whatever they hold: a row may end
        // in words (`-67% worse`, `identical`) and still be a row.
        let at_end = values_at_end(&cells);
        let row = at_end > 0 || holds_a_value(&cells);
        if body.is_empty() && at_end == 0 {
            let names = cells
                .iter()
                .all(|c| c.text.is_empty() || is_header_cell(&c.text));
            if names {
                headers.push(cells);
            } else if row && !headers.is_empty() {
                body.push(BodyLine::Row {
                    cells,
                    no: lines[j].no,
                });
            } else {
                return None;
            }
        } else if row {
            body.push(BodyLine::Row {
                cells,
                no: lines[j].no,
            });
        } else if let Some(group) = group_of(&cells) {
            body.push(BodyLine::Group { text: group });
        } else {
            break;
        }
        j += 1;
        end = j;
    }
    // A closing border belongs to the table.
    while end < lines.len() && is_border(lines[end].text) {
        end += 1;
    }
    let rows = body
        .iter()
        .filter(|b| matches!(b, BodyLine::Row { .. }))
        .count();
    if headers.is_empty() || rows == 0 || (rows == 1 && !ruled) {
        return None;
    }
    let names = headers.pop()?;
    let spans: Vec<Cell> = headers
        .pop()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !c.text.is_empty())
        .collect();
    let mut d = grid::build(&Headers::new(spans, names), body)?;
    for k in &mut d.key_columns {
        if k.is_empty() {
            *k = "key".into();
        }
    }
    d.start = i;
    d.end = end;
    Some(d)
}

/// `+----+----+`, `x----x----x`, `|----|----|`.
fn is_border(text: &str) -> bool {
    let t = text.trim();
    t.len() >= 3
        && matches!(t.chars().next(), Some('+' | 'x' | '|'))
        && t.contains("--")
        && t.chars().all(|c| "+x|-=: ".contains(c))
}

/// The cells of `| a | b |` or `a | b`, with their positions; None for a
/// line without a pipe between two cells.
pub fn pipe_cells(text: &str) -> Option<Vec<Cell>> {
    let t = text.trim_end();
    if !t.contains('|') {
        return None;
    }
    let lead = t.len() - t.trim_start().len();
    let mut inner = &t[lead..];
    let mut offset = lead;
    if let Some(rest) = inner.strip_prefix('|') {
        inner = rest;
        offset += 1;
    }
    inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut pos = offset;
    for part in inner.split('|') {
        let start = pos + (part.len() - part.trim_start().len());
        cells.push(Cell {
            start,
            end: start + part.trim().len(),
            text: part.trim().to_string(),
        });
        pos += part.len() + 1;
    }
    (cells.len() >= 2).then_some(cells)
}

/// A row that names itself in its first cell and has a number after
/// it (`1472`, `46 ms`).
fn holds_a_value(cells: &[Cell]) -> bool {
    use super::numbers::parse_cell;
    cells
        .first()
        .is_some_and(|c| !c.text.is_empty() && !parse_cell(&c.text).is_number())
        && cells
            .iter()
            .skip(1)
            .any(|c| parse_cell(&c.text).is_number())
}

/// `| 8 threads |    |    |`: one text cell, the rest empty.
fn group_of(cells: &[Cell]) -> Option<String> {
    let filled: Vec<&Cell> = cells.iter().filter(|c| !c.text.is_empty()).collect();
    (filled.len() == 1).then(|| filled[0].text.trim_end_matches(':').to_string())
}
