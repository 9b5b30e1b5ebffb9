//! Listings of a system's state, not of a run: how much space a file
//! system has and uses (`btrfs filesystem usage`, `df`), how big the
//! disks are (`lsscsi -s`), what a volume holds. Their numbers are sizes
//! and shares of space, and nothing in them took time: no rate, no
//! duration, no count of events. A measured run that moves bytes always
//! says how fast or how long (fio's `io=` sits beside its `bw=`), so the
//! tables of a paragraph of tool output whose only units are sizes are
//! a listing, even when `time`'s report of the command that printed
//! them follows on the next line.

use super::lines::Line;
use super::{Draft, tokens};
use crate::mail::model::{ClaimKind, UnitKind, Value, value_unit};

/// Takes out of `drafts` the rows of the tables that hold no unit of
/// time, speed or events and sit in a paragraph (lines between blank
/// lines) where no other table timed a run and the tables hold more
/// sizes (`7.28TiB`, `827G`) than plain numbers, with shares beside
/// them. A trace's accounting (`Reads Queued: 5, 20KiB`) counts as many
/// requests as it sizes, and stays. Prose is left to its own reader.
pub(super) fn drop_listings(block: &[Line], drafts: &mut [Draft]) {
    // The paragraph of each line of the block.
    let mut paragraph = Vec::with_capacity(block.len());
    let mut p = 0;
    for l in block {
        if l.is_blank() {
            p += 1;
        }
        paragraph.push(p);
    }
    let of_line = |no: usize| super::index_in(block, no).map(|i| paragraph[i]);
    // A table with a time, rate or count of events in it measured a run.
    let timed: Vec<bool> = drafts
        .iter()
        .map(|d| {
            d.kind == Some(ClaimKind::Prose)
                || d.rows.iter().any(|r| {
                    kinds(d, r).any(|k| {
                        k.is_some_and(|k| !matches!(k, UnitKind::Size | UnitKind::Percent))
                    })
                })
        })
        .collect();
    // Per paragraph: how many sizes, how many plain numbers, and whether
    // a table in it timed a run. A process's accounting (`time`'s
    // report) times the command, not what the lines above it list.
    let mut sizes = vec![0usize; p + 1];
    let mut plain = vec![0usize; p + 1];
    let mut run = vec![false; p + 1];
    for (d, &t) in drafts.iter().zip(&timed) {
        for row in &d.rows {
            let Some(p) = of_line(row.line) else { continue };
            if t {
                run[p] |= d.kind != Some(ClaimKind::Prose) && !d.accounting;
                continue;
            }
            // `Data: Size:7.26TiB, Used:7.22TiB (99.54%)`: the sizes a
            // share is of may sit in its label.
            sizes[p] += row.keys.iter().map(|k| sizes_in(k)).sum::<usize>();
            // `827G`, `1.3T` (`df -h`, `du -h`, compsize): sizes as
            // people print them, the multiplier alone.
            let mut human =
                super::index_in(block, row.line).map_or(0, |i| human_sizes(block[i].text));
            for k in kinds(d, row) {
                match k {
                    Some(UnitKind::Size) => sizes[p] += 1,
                    None if human > 0 => {
                        human -= 1;
                        sizes[p] += 1;
                    }
                    None => plain[p] += 1,
                    Some(_) => {}
                }
            }
        }
    }
    let listing = |no: usize| of_line(no).is_some_and(|p| sizes[p] > plain[p] && !run[p]);
    for (d, _) in drafts.iter_mut().zip(&timed).filter(|(_, t)| !**t) {
        d.rows.retain(|r| !listing(r.line));
    }
}

/// How many numbers of a line are written with a bare `G`, `T` or `P`
/// after them: sizes in the human-readable form of `df -h`. (`K` and
/// `M` alone as often count I/Os.)
fn human_sizes(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| {
            w.strip_suffix(['G', 'T', 'P']).is_some_and(|n| {
                !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                    && n.parse::<f64>().is_ok()
            })
        })
        .count()
}

/// How many sizes a label names, also under a name (`Used:7.22TiB`).
fn sizes_in(label: &str) -> usize {
    tokens::scan(&label.replace([':', '='], " "), tokens::Convention::Us)
        .iter()
        .filter(|t| {
            matches!(t, tokens::Tok::Num(n)
                if n.unit.as_ref().is_some_and(|u| u.kind == UnitKind::Size))
        })
        .count()
}

/// The kind of each number of a row: its cell's unit, else its row's,
/// its column's or its table's.
fn kinds<'a>(
    d: &'a Draft,
    row: &'a crate::mail::model::Row,
) -> impl Iterator<Item = Option<UnitKind>> + 'a {
    row.values
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v, Value::Number { .. }))
        .map(move |(c, _)| value_unit(row, c, &d.columns, d.unit.as_ref()).map(|u| u.kind))
}
