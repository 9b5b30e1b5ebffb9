//! Plain-text tables and wrapped prose that fit a width: a reply's
//! lines must survive a `> ` quote.

use comfy_table::presets::ASCII_MARKDOWN;
use comfy_table::{CellAlignment, Table};

/// A column of a table: its header, whether it is numeric (right
/// aligned), and when it may be left out to fit a width (higher first;
/// 0 never).
pub(super) struct Col {
    pub header: String,
    pub right: bool,
    pub drop: u8,
}

pub(super) fn col(header: impl Into<String>, right: bool, drop: u8) -> Col {
    Col {
        header: header.into(),
        right,
        drop,
    }
}

fn render_table(
    cols: &[Col],
    headers: &[String],
    rows: &[Vec<String>],
    keep: &[bool],
    escape: bool,
) -> String {
    let esc = |s: &str| {
        if escape {
            s.replace('|', "\\|")
        } else {
            s.to_string()
        }
    };
    let pick = |r: &[String]| {
        r.iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| esc(c))
            .collect::<Vec<_>>()
    };
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN).force_no_tty();
    t.set_header(pick(headers));
    for r in rows {
        t.add_row(pick(r));
    }
    let mut i = 0;
    for (c, k) in cols.iter().zip(keep) {
        if !*k {
            continue;
        }
        if c.right
            && let Some(column) = t.column_mut(i)
        {
            column.set_cell_alignment(CellAlignment::Right);
        }
        i += 1;
    }
    t.lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn width(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// A table no wider than `max`: optional columns go first, then the
/// longest cells (headers included) are shortened with `~`. Without a
/// `max` the table is Markdown, with `|` escaped in cells.
pub(super) fn fit_table(cols: &[Col], rows: &[Vec<String>], max: Option<usize>) -> String {
    let mut keep = vec![true; cols.len()];
    let mut headers: Vec<String> = cols.iter().map(|c| c.header.clone()).collect();
    let mut out = render_table(cols, &headers, rows, &keep, max.is_none());
    let Some(max) = max else { return out };
    let mut levels: Vec<u8> = cols.iter().map(|c| c.drop).filter(|d| *d > 0).collect();
    levels.sort_unstable_by(|a, b| b.cmp(a));
    levels.dedup();
    for level in levels {
        if width(&out) <= max {
            return out;
        }
        for (k, c) in keep.iter_mut().zip(cols) {
            if c.drop == level {
                *k = false;
            }
        }
        out = render_table(cols, &headers, rows, &keep, false);
    }
    // Still too wide: shorten the widest column's longest cells.
    let mut rows = rows.to_vec();
    while width(&out) > max {
        let over = width(&out) - max;
        let len = |s: &String| s.chars().count();
        let widest = (0..cols.len())
            .filter(|c| keep[*c])
            .map(|c| {
                let w = rows
                    .iter()
                    .map(|r| len(&r[c]))
                    .chain([len(&headers[c])])
                    .max()
                    .unwrap_or(0);
                (c, w)
            })
            .max_by_key(|(_, w)| *w);
        let Some((c, w)) = widest else { break };
        if w <= 6 {
            break;
        }
        let target = w.saturating_sub(over).max(6);
        let cut = |s: &mut String| {
            if s.chars().count() > target {
                *s = format!("{}~", s.chars().take(target - 1).collect::<String>());
            }
        };
        cut(&mut headers[c]);
        for r in &mut rows {
            cut(&mut r[c]);
        }
        out = render_table(cols, &headers, &rows, &keep, false);
    }
    out
}

/// Where the text of a `[3] note` or `key:   value` line starts, so a
/// wrapped line continues under it.
fn hanging_indent(line: &str) -> Option<usize> {
    static HANG: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^(\[\d+\] |[A-Za-z][\w./-]*:\s{2,})").expect("valid regex")
    });
    HANG.find(line).map(|m| line[..m.end()].chars().count())
}

/// Wrap every line longer than `max` at its last space that fits,
/// continuing with four more spaces of indent; a word longer than a
/// line is cut. Spacing inside the kept text is left alone.
pub(super) fn wrap(text: &str, max: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let indent = line.chars().take_while(|c| *c == ' ').count();
        let hang = hanging_indent(line).unwrap_or(if indent >= 8 { indent } else { indent + 4 });
        let cont = " ".repeat(hang.min(max / 2));
        let mut rest: Vec<char> = line.chars().collect();
        let mut first = true;
        while rest.len() > max {
            let lead = if first { indent } else { cont.len() };
            let cut = (lead + 1..=max)
                .rev()
                .find(|&i| rest[i] == ' ')
                .filter(|&i| rest[..i].iter().any(|c| *c != ' '));
            let (head, tail) = match cut {
                Some(i) => (rest[..i].to_vec(), rest[i + 1..].to_vec()),
                None => (rest[..max].to_vec(), rest[max..].to_vec()),
            };
            let head: String = head.into_iter().collect();
            out.push_str(head.trim_end());
            out.push('\n');
            let tail: String = tail.into_iter().collect();
            rest = format!("{cont}{}", tail.trim_start()).chars().collect();
            first = false;
        }
        let last: String = rest.into_iter().collect();
        if first || !last.trim().is_empty() {
            out.push_str(last.trim_end());
            out.push('\n');
        }
    }
    out
}
