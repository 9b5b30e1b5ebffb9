//! How a run of tool-output lines names its columns and keys beyond
//! its header: the word that opens each pipe cell (`| READ 30898KB/s,
//! 7724, 555us |`), and the leading columns that are a designed run's
//! settings rather than its results.

use super::measures::Measured;
use super::tokens::Num;

/// `w/o dio | READ 117915KB/s, 29478, 248.18us | WRITE 117854KB/s, ...`:
/// a cell between pipes that opens with a word and holds several
/// numbers names them after that word (`READ`, `READ (2)`, ...); the
/// first such word is the label's no more.
pub(super) fn cell_groups(text: &str, label: String, mut values: Vec<Num>) -> (String, Vec<Num>) {
    if !text.contains('|') {
        return (label, values);
    }
    let group = |at: usize| -> Option<(usize, &str)> {
        let start = text[..at].rfind('|')? + 1;
        let word = text[start..at].split_whitespace().next()?;
        let letters = word.chars().all(|c| c.is_ascii_alphabetic()) && word.len() > 1;
        letters.then_some((start, word))
    };
    let groups: Vec<Option<(usize, &str)>> = values.iter().map(|n| group(n.at)).collect();
    // Every number in such a cell, and at least one cell of two numbers.
    let cells = groups.iter().flatten().map(|g| g.0).collect::<Vec<_>>();
    let several = cells.windows(2).any(|w| w[0] == w[1]);
    if groups.iter().any(Option::is_none) || !several {
        return (label, values);
    }
    let mut k = 0;
    for (i, n) in values.iter_mut().enumerate() {
        let (cell, word) = groups[i].unwrap_or_default();
        k = if i > 0 && groups[i - 1].map(|g| g.0) == Some(cell) {
            k + 1
        } else {
            1
        };
        if n.name.is_none() {
            n.name = Some(if k == 1 {
                word.to_string()
            } else {
                format!("{word} ({k})")
            });
        }
    }
    let first = groups[0].map_or("", |g| g.1);
    let label = match label.strip_suffix(first) {
        Some(l) => l.trim_end().trim_end_matches('|').trim_end().to_string(),
        None => label,
    };
    (label, values)
}

/// How many leading columns are the factors of a designed experiment:
/// plain whole numbers, each taking a few values (at most half as many
/// as there are rows), every row a different combination of them, and
/// results after them (`64  1  4  96GB/sec  160%`: buffer size,
/// coalescing, threads). Measurements take many values; settings few.
pub(super) fn factorial_keys(rows: &[(usize, Measured)]) -> usize {
    if rows.len() < 4 {
        return 0;
    }
    let width = rows.iter().map(|(_, m)| m.values.len()).min().unwrap_or(0);
    let mut k = 0;
    while k + 1 < width {
        let column: Vec<f64> = rows.iter().map(|(_, m)| m.values[k].value).collect();
        let plain = rows.iter().all(|(_, m)| {
            let n = &m.values[k];
            n.plain_integer && n.unit.is_none() && n.name.is_none()
        });
        let mut distinct = column.clone();
        distinct.sort_by(f64::total_cmp);
        distinct.dedup();
        if !plain || distinct.len() > rows.len() / 2 {
            break;
        }
        k += 1;
    }
    let combos: Vec<Vec<u64>> = rows
        .iter()
        .map(|(_, m)| m.values[..k].iter().map(|n| n.value.to_bits()).collect())
        .collect();
    let unique = (1..combos.len()).all(|i| !combos[..i].contains(&combos[i]));
    if k >= 2 && unique { k } else { 0 }
}
