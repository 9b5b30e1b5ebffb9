//! Listings of a system's state, not of a run: how much space a file
//! system has and uses (`btrfs filesystem usage`, `df`), how big the
//! disks are (`lsscsi -s`), what a volume holds. Their numbers are sizes
//! and shares of space, and nothing in them took time: no rate, no
//! duration, no count of events. A measured run that moves bytes always
//! says how fast or how long (fio's `io=` sits beside its `bw=`), so a
//! paragraph of tool output whose only units are sizes is a listing.

use super::lines::Line;
use super::{Draft, tokens};
use crate::mail::model::{ClaimKind, UnitKind, Value};

/// Takes out of `drafts` the rows that sit in a paragraph (lines between
/// blank lines) of tool output whose numbers are mostly sizes, with
/// shares and fewer plain numbers beside them, and no unit of time,
/// speed or events. A trace's accounting (`Reads Queued: 5, 20KiB`)
/// counts as many requests as it sizes, and stays. Prose is left to its
/// own reader.
pub(super) fn drop_listings(block: &[Line], drafts: &mut [Draft]) {
    let Some(first) = block.first().map(|l| l.no) else {
        return;
    };
    // The paragraph of each line of the block.
    let mut paragraph = Vec::with_capacity(block.len());
    let mut p = 0;
    for l in block {
        if l.is_blank() {
            p += 1;
        }
        paragraph.push(p);
    }
    let of_line = |no: usize| {
        no.checked_sub(first)
            .and_then(|i| paragraph.get(i))
            .copied()
    };
    // Per paragraph: how many sizes, and whether anything else timed.
    let mut sizes = vec![0usize; p + 1];
    let mut plain = vec![0usize; p + 1];
    let mut timed = vec![false; p + 1];
    let tables = || drafts.iter().filter(|d| d.kind != Some(ClaimKind::Prose));
    for d in tables() {
        for row in &d.rows {
            let Some(p) = of_line(row.line) else { continue };
            // `Data: Size:7.26TiB, Used:7.22TiB (99.54%)`: the sizes a
            // share is of may sit in its label.
            sizes[p] += row.keys.iter().map(|k| sizes_in(k)).sum::<usize>();
            for k in kinds(d, row) {
                match k {
                    Some(UnitKind::Size) => sizes[p] += 1,
                    Some(UnitKind::Percent) => {}
                    None => plain[p] += 1,
                    Some(_) => timed[p] = true,
                }
            }
        }
    }
    let listing = |no: usize| of_line(no).is_some_and(|p| sizes[p] > plain[p] && !timed[p]);
    for d in drafts
        .iter_mut()
        .filter(|d| d.kind != Some(ClaimKind::Prose))
    {
        d.rows.retain(|r| !listing(r.line));
    }
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
    row.values.iter().enumerate().filter_map(move |(c, v)| {
        let Value::Number { unit, .. } = v else {
            return None;
        };
        let unit = unit
            .as_ref()
            .or(row.unit.as_ref())
            .or(d.columns.get(c).and_then(|c| c.unit.as_ref()))
            .or(d.unit.as_ref());
        Some(unit.map(|u| u.kind))
    })
}
