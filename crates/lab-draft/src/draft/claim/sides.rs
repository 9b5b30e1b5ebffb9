//! Which side of a before/after comparison a label names, and the
//! labels that name a bound or the patch itself.

use super::ClaimDraft;
use crate::mail::ClaimTable;

/// Which side of a before/after comparison a column or row label is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Before,
    After,
    /// A difference, ratio or spread: not a measured value.
    Derived,
    Unknown,
}

/// The side a column or row label names.
pub fn side(label: &str) -> Side {
    let l = label.trim().to_ascii_lowercase();
    let words: Vec<&str> = l
        .split(|c: char| c.is_whitespace() || "()[]:,".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |x: &str| words.contains(&x);
    const DERIVED: [&str; 13] = [
        "diff",
        "delta",
        "change",
        "%",
        "ratio",
        "speedup",
        "gain",
        "improvement",
        "+/-",
        "stddev",
        "%change",
        "%diff",
        "regression",
    ];
    // Prose: "from 330 usec to 262 usec".
    // Bisection's words, a whole label: the good kernel is the one
    // before the regression, the bad one after it.
    match l.as_str() {
        "from" | "good" | "good kernel" => return Side::Before,
        "to" | "bad" | "bad kernel" => return Side::After,
        _ => {}
    }
    if DERIVED.iter().any(|d| has(d)) || l.starts_with('%') || l.ends_with('%') || l == "±" {
        return Side::Derived;
    }
    const BEFORE: [&str; 20] = [
        // `commit reverted`: the kernel without the change under test.
        "reverted",
        "revert",
        "unmodified",
        "previous",
        "prior",
        "existing",
        "before",
        "base",
        "baseline",
        "unpatched",
        "vanilla",
        "orig",
        "original",
        "old",
        "stock",
        "upstream",
        "mainline",
        "without",
        "w/o",
        "default",
    ];
    const AFTER: [&str; 13] = [
        "after", "patched", "patch", "new", "with", "w/", "fixed", "+patch", "series", "proposed",
        "modified", "patchset", "patches",
    ];
    if BEFORE.iter().any(|b| has(b))
        || l.starts_with("w/o")
        || l.starts_with("no ")
        || l.starts_with("-patch")
    {
        return Side::Before;
    }
    if AFTER.iter().any(|a| has(a)) || l.starts_with("w/") || l.starts_with('+') {
        return Side::After;
    }
    Side::Unknown
}

/// A label that states a bound or reference rather than a measurement:
/// `Theoretical maximum`, `line rate`, `ideal`.
pub fn names_bound(label: &str) -> bool {
    const WORDS: [&str; 7] = [
        "theoretical",
        "maximum",
        "limit",
        "ideal",
        "bound",
        "line rate",
        "expected",
    ];
    let l = label.to_ascii_lowercase();
    WORDS.iter().any(|w| l.contains(w))
}

/// Whether a row label is named with the patch's own distinctive words
/// (`Kthread` in "dm-delay: flush delayed bios from a kthread"): that
/// row is the patched kernel. Short and common words do not count.
pub fn names_the_patch(label: &str, subject: &str) -> bool {
    const COMMON: [&str; 12] = [
        "block", "patch", "with", "from", "into", "when", "this", "that", "the", "and", "for",
        "use",
    ];
    // What a row measures is no kernel: `READ` under "xfs: Remove
    // i_rwsem lock in buffered read" is fio's read direction.
    const MEASURES: [&str; 10] = [
        "read",
        "reads",
        "write",
        "writes",
        "trim",
        "iops",
        "latency",
        "bandwidth",
        "throughput",
        "mixed",
    ];
    let words = |s: &str| -> Vec<String> {
        s.to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| w.len() >= 4 && !COMMON.contains(w) && !MEASURES.contains(w))
            .map(String::from)
            .collect()
    };
    let subject = words(subject);
    let label = words(label);
    !label.is_empty() && label.iter().all(|w| subject.contains(w))
}

/// A label without its before/after words: `p99 latency before` →
/// `p99 latency`.
pub(super) fn strip_side(label: &str) -> String {
    // Articles say nothing of a side: `with the series` is `with`.
    const FILLER: [&str; 7] = ["the", "a", "an", "this", "these", "my", "our"];
    label
        .split_whitespace()
        .filter(|w| !FILLER.contains(&w.to_ascii_lowercase().as_str()))
        .filter(|w| !matches!(side(w), Side::Before | Side::After))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What every row says besides its number, when rows are numbered runs
/// of one measurement (`(1) iops`, `(2) iops`; `run 1`, `run 2`; `#1`):
/// None unless there are two rows or more, each starts with a number
/// mark, the marks differ, and the rest is the same.
pub fn shared_by_runs(labels: &[&str]) -> Option<String> {
    fn split(l: &str) -> Option<(&str, &str)> {
        let l = l.trim_start();
        let (mark, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        let digits = mark
            .trim_start_matches(['(', '[', '#'])
            .trim_end_matches([')', ']', '.', ':']);
        let numbered =
            !digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit());
        numbered.then_some((digits, rest.trim()))
    }
    if labels.len() < 2 {
        return None;
    }
    let parts: Vec<(&str, &str)> = labels.iter().map(|l| split(l)).collect::<Option<_>>()?;
    let (_, rest) = parts[0];
    let same = parts.iter().all(|(_, r)| *r == rest);
    let mut marks: Vec<&str> = parts.iter().map(|(m, _)| *m).collect();
    marks.sort_unstable();
    marks.dedup();
    (same && marks.len() == parts.len()).then(|| rest.to_string())
}

/// What every row says besides its side, when the rows say nothing
/// else apart: `before:  read` and `after :  read` are the two kernels'
/// `read` lines, `before: lat (usec)` and `after : lat (usec)` their
/// latency lines. None unless there are two rows or more, each says a
/// side, and what is left of them is the same words (punctuation aside).
pub fn shared_rest(labels: &[&str]) -> Option<String> {
    if labels.len() < 2
        || !labels.iter().all(|l| {
            l.split_whitespace()
                .any(|w| matches!(side(w), Side::Before | Side::After))
        })
    {
        return None;
    }
    let words = |l: &str| -> Vec<String> {
        strip_side(l)
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_alphanumeric())
                    .to_ascii_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect()
    };
    let first = words(labels[0]);
    if first.is_empty() || labels[1..].iter().any(|l| words(l) != first) {
        return None;
    }
    let rest = strip_side(labels[0]);
    Some(
        rest.trim_matches(|c: char| c == ':' || c.is_whitespace())
            .to_string(),
    )
}

/// Tables under two section banners of one message (`=====for-next=====`
/// then `=====ra-expand=====`), as many under each, are the two
/// variants: the banner's own words decide when they say a side
/// (`base`, `patched`), else the first section is the kernel before.
/// The second section holds as many tables as the first: those after
/// them (a note under the results) are in neither. Only claims whose
/// variant nothing else said are changed.
pub fn section_sides(
    claims: &mut [ClaimDraft],
    tables: &[ClaimTable],
    sections: &[Vec<(usize, String)>],
) {
    for (m, banners) in sections.iter().enumerate() {
        let [(first, a), (second, b)] = banners.as_slice() else {
            continue;
        };
        let lines: Vec<usize> = tables
            .iter()
            .filter(|t| t.origin.message == m + 1 && t.line > *first)
            .map(|t| t.line)
            .collect();
        let n = lines.iter().filter(|l| *l < second).count();
        let later: Vec<usize> = lines
            .iter()
            .copied()
            .filter(|l| l > second)
            .take(n)
            .collect();
        if n == 0 || later.len() != n {
            continue;
        }
        // Whether a claim's table is in the second section; None when
        // it is in neither.
        let section = |c: &ClaimDraft| {
            let t = tables.get(c.table.wrapping_sub(1))?;
            if t.origin.message != m + 1 || t.line <= *first {
                None
            } else if t.line < *second {
                Some(false)
            } else {
                later.contains(&t.line).then_some(true)
            }
        };
        let first_side = match (side(a), side(b)) {
            (Side::After, _) | (_, Side::Before) => "after",
            _ => "before",
        };
        let second_side = if first_side == "before" {
            "after"
        } else {
            "before"
        };
        for c in claims.iter_mut().filter(|c| c.variant_by_default) {
            if let Some(later) = section(c) {
                c.set_variant(if later { second_side } else { first_side });
            }
        }
    }
}

/// Tables of one message with the same rows under captions that differ
/// in a few words (`For unmodified 5.10, ...:`, `For modified 5.10,
/// ...:`, `For 4.15, ...:`): the words only one caption has say whose
/// numbers it holds. When some say the kernel before and some after,
/// each of those claims takes its side, and a table whose own words say
/// neither measured something the matrix does not build (another
/// kernel): it is no claim, and the reason is given. Only claims whose
/// variant no row or column of their table says are changed.
pub fn caption_sides(
    claims: &mut Vec<ClaimDraft>,
    tables: &[ClaimTable],
    unclaimed: &mut Vec<String>,
) {
    let shape = |c: &ClaimDraft| {
        tables.get(c.table.wrapping_sub(1)).map(|t| {
            let keys: Vec<&Vec<String>> = t.rows.iter().map(|r| &r.keys).collect();
            (t.origin.message, keys)
        })
    };
    let words = |c: &ClaimDraft| -> Vec<String> {
        let caption = tables
            .get(c.table.wrapping_sub(1))
            .and_then(|t| t.caption.as_deref())
            .unwrap_or("");
        caption
            .to_ascii_lowercase()
            .split(|ch: char| ch.is_whitespace() || ",;:()".contains(ch))
            .filter(|w| !w.is_empty())
            .map(String::from)
            .collect()
    };
    // A claim whose one variant came from its caption (or from nothing):
    // no row or column of its table names one.
    let by_caption = |c: &ClaimDraft| {
        c.row_variants.is_empty()
            && !matches!(c.rows, super::Rows::Variants)
            && c.from_variant.is_some()
            && c.columns
                .iter()
                .all(|(_, v)| Some(v) == c.from_variant.as_ref())
    };
    // Groups by shape, each shape computed once (a mail of thousands of
    // tables must not cost their square).
    let mut groups: std::collections::HashMap<_, Vec<usize>> = std::collections::HashMap::new();
    for (i, c) in claims.iter().enumerate() {
        if by_caption(c)
            && let Some(s) = shape(c)
        {
            groups.entry(s).or_default().push(i);
        }
    }
    let mut groups: Vec<Vec<usize>> = groups.into_values().filter(|g| g.len() >= 2).collect();
    groups.sort();
    let mut drop: Vec<usize> = Vec::new();
    for group in groups {
        let all: Vec<Vec<String>> = group.iter().map(|&i| words(&claims[i])).collect();
        if all.iter().any(Vec::is_empty) {
            continue;
        }
        let sides: Vec<Side> = all
            .iter()
            .map(|ws| {
                let own: Vec<&str> = ws
                    .iter()
                    .filter(|w| !all.iter().all(|o| o.contains(w)))
                    .map(String::as_str)
                    .collect();
                side(&own.join(" "))
            })
            .collect();
        if !(sides.contains(&Side::Before) && sides.contains(&Side::After)) {
            continue;
        }
        let named: Vec<String> = group
            .iter()
            .zip(&sides)
            .filter(|(_, s)| matches!(s, Side::Before | Side::After))
            .map(|(i, _)| claims[*i].table.to_string())
            .collect();
        for (&i, s) in group.iter().zip(&sides) {
            match s {
                Side::Before => claims[i].set_variant("before"),
                Side::After => claims[i].set_variant("after"),
                _ => {
                    unclaimed.push(format!(
                        "table {}: its caption names neither side that the captions of tables {} set apart (a kernel or setup the matrix does not build)",
                        claims[i].table,
                        named.join(" and ")
                    ));
                    drop.push(i);
                }
            }
        }
    }
    drop.sort_unstable();
    let mut k = 0;
    claims.retain(|_| {
        k += 1;
        drop.binary_search(&(k - 1)).is_err()
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_apart_only_by_side_or_by_run_number_share_the_rest() {
        assert_eq!(
            shared_rest(&["before:  read", "after :  read"]),
            Some("read".into())
        );
        assert_eq!(
            shared_rest(&["before: lat (usec)", "after : lat (usec)"]),
            Some("lat (usec)".into())
        );
        assert_eq!(shared_rest(&["before: read", "after: write"]), None);
        assert_eq!(shared_rest(&["read", "write"]), None);
        assert_eq!(shared_rest(&["before"]), None);

        assert_eq!(
            shared_by_runs(&["(1)   iops", "(2)   iops", "#3 iops"]),
            Some("iops".into())
        );
        assert_eq!(shared_by_runs(&["1. iops", "2. iops"]), Some("iops".into()));
        // The same number twice, a different rest, no number: no runs.
        assert_eq!(shared_by_runs(&["(1) iops", "(1) iops"]), None);
        assert_eq!(shared_by_runs(&["(1) iops", "(2) bw"]), None);
        assert_eq!(shared_by_runs(&["QD1 iops", "QD2 iops"]), None);
        assert_eq!(shared_by_runs(&["(1) iops"]), None);
    }
}
