//! What the numbers of a scanned line are, from the words and numbers
//! around them once the whole line is read: passes over a line's tokens
//! that mark a number a parameter (not a claim) when its neighbours say
//! it was given to the run, counted how far the run had got, or rated a
//! link, rather than measured. Each pass is one shape of line, named by
//! the tool or habit that prints it; `tokens::scan` reads the numbers,
//! this module decides their role.

use super::numbers::parse_unit;
use super::tokens::{Tok, size_unit};
use crate::mail::model::UnitKind;

/// Every pass, in order: later ones see what earlier ones marked.
pub(super) fn assign(line: &str, toks: &mut [Tok]) {
    from_the_start(toks);
    go_iterations(toks);
    shares_done(toks);
    link_rates(line, toks);
    xfs_io_counts(line, toks);
    scales(toks);
    trailing_conditions(line, toks);
    restated_parameters(line, toks);
}

/// `50782535680 512-byte sectors (24215 GiB)`: a size in brackets right
/// after a parameter says the same in other units; after a name
/// (`INTEL SSDPEKKF360G7H (360 GB)`, `enwik9 (1000000000 bytes)`) it
/// says how big the thing is.
fn restated_parameters(line: &str, toks: &mut [Tok]) {
    for k in 1..toks.len() {
        let (head, tail) = toks.split_at_mut(k);
        let Tok::Num(n) = &mut tail[0] else { continue };
        let named = matches!(head.last(), Some(Tok::Word { text, .. })
            if text.starts_with(|c: char| c.is_ascii_alphabetic())
                && !text.contains('=')
                && parse_unit(text).is_none()
                && size_unit(text).is_none()
                && !matches!(text.to_ascii_lowercase().as_str(), "seconds" | "second" | "records" | "bytes"));
        if named
            && n.unit.as_ref().is_some_and(|u| u.kind == UnitKind::Size)
            && line.get(..n.at).is_some_and(|b| b.ends_with('('))
        {
            n.parameter = true;
            continue;
        }
        let previous = head.iter().rev().take(3).find_map(|t| match t {
            Tok::Num(p) => Some(p.parameter),
            _ => None,
        });
        if previous == Some(true)
            && n.unit.as_ref().is_some_and(|u| u.kind == UnitKind::Size)
            && line.get(..n.at).is_some_and(|b| b.ends_with('('))
        {
            n.parameter = true;
        }
    }
}

/// `bw=3338MiB/s (3500MB/s) 128k, 10sec, pvsync2`: after a named result
/// (and its restatement in brackets), the sizes and times with no name
/// that follow are what the run was given: its block size and length.
fn trailing_conditions(line: &str, toks: &mut [Tok]) {
    let Some(first) = toks.iter().position(|t| {
        matches!(t, Tok::Num(n) if n.name.is_some() && n.unit.as_ref().is_some_and(|u|
            matches!(u.kind, UnitKind::Throughput | UnitKind::Rate)))
    }) else {
        return;
    };
    for t in &mut toks[first + 1..] {
        let Tok::Num(n) = t else { continue };
        let bracketed = line.get(..n.at).is_some_and(|b| b.ends_with('('));
        let after = line.get(n.end..).unwrap_or("").trim();
        let kind = n.unit.as_ref().map(|u| u.kind);
        if n.name.is_none()
            && !bracketed
            && matches!(kind, None | Some(UnitKind::Size | UnitKind::Time))
            && (after.is_empty() || after.starts_with([',', ';']))
        {
            n.parameter = true;
        }
    }
}

/// xfs_io's report, `4 KiB, 1 ops; 0.0000 sec (229.779 MiB/sec and
/// 58823.5294 ops/sec)`: the amount and the count of operations restate
/// the command (`pwrite 32k 4k`); the time and the rates are results.
fn xfs_io_counts(line: &str, toks: &mut [Tok]) {
    if !line.contains(" ops; ") || !line.contains(" sec (") {
        return;
    }
    for k in 0..toks.len() {
        let Tok::Num(n) = &toks[k] else { continue };
        if !line.get(n.end..).is_some_and(|r| r.starts_with(" ops; ")) {
            continue;
        }
        if let Tok::Num(count) = &mut toks[k] {
            count.parameter = true;
        }
        // The amount before it: `4 KiB,`, `32.000000 bytes,`.
        if let Some(Tok::Num(amount)) = k.checked_sub(1).and_then(|b| toks.get_mut(b)) {
            amount.parameter = true;
        }
    }
}

/// `50us, 100us, 200us, 400us, 1ms, 2ms`: four or more whole numbers in
/// a row, each two to ten times the one before, are a scale (a
/// histogram's buckets, a sweep's points), not readings.
fn scales(toks: &mut [Tok]) {
    let base = |t: &Tok| match t {
        Tok::Num(n) if n.value.fract() == 0.0 && n.value > 0.0 => {
            Some(n.value * n.unit.as_ref().map_or(1.0, |u| u.scale))
        }
        _ => None,
    };
    let mut k = 0;
    while k < toks.len() {
        let mut end = k + 1;
        while end < toks.len()
            && let (Some(a), Some(b)) = (base(&toks[end - 1]), base(&toks[end]))
            && (2.0..=10.0).contains(&(b / a))
        {
            end += 1;
        }
        if end - k >= 4 && base(&toks[k]).is_some() {
            for t in &mut toks[k..end] {
                if let Tok::Num(n) = t {
                    n.parameter = true;
                }
            }
        }
        k = end;
    }
}

/// What a link or bus is rated at, not what went over it: transfers a
/// second (`PCIe 2.0 5GT/s`, `Speed 8GT/s`), a rate named by the link
/// after it (`a 12Gb/s SAS disk`, `6Gb/s HBA`), and the generation
/// after the bus's name (`PCIe 3.0`).
fn link_rates(line: &str, toks: &mut [Tok]) {
    const LINKS: [&str; 12] = [
        "sas",
        "sata",
        "hba",
        "pcie",
        "pci-e",
        "link",
        "nic",
        "ethernet",
        "gige",
        "infiniband",
        "lane",
        "lanes",
    ];
    let link = |t: Option<&Tok>| {
        matches!(t, Some(Tok::Word { text, .. })
        if LINKS.contains(&text.to_ascii_lowercase().as_str()))
    };
    for k in 0..toks.len() {
        let (before, after) = (k.checked_sub(1).and_then(|b| toks.get(b)), toks.get(k + 1));
        let (named_after, named_before) = (link(after), link(before));
        let Tok::Num(n) = &mut toks[k] else { continue };
        let written = line.get(n.at..n.end).unwrap_or("");
        let transfers = written.ends_with("GT/s") || written.ends_with("MT/s");
        let rated = n
            .unit
            .as_ref()
            .is_some_and(|u| u.kind == UnitKind::Throughput)
            && named_after;
        if transfers || rated || named_before && n.unit.is_none() && !n.plain_integer {
            n.parameter = true;
        }
    }
}

/// How far a run has got, not what it measured: a share with `complete`
/// or `done` after it (`49% complete`), or with the counts it is the
/// share of (`resync = 49.5% (6773640400/13671724544)`, mdstat's);
/// and the span a count was taken over (`(37594133 / 60.0s)`, the run's
/// length, beside the rate worked out from them).
fn shares_done(toks: &mut [Tok]) {
    for k in 0..toks.len() {
        let next_word = match toks.get(k + 1) {
            Some(Tok::Word { text, .. }) => *text,
            _ => "",
        };
        let fraction = next_word.split_once('/').and_then(|(a, b)| {
            let (a, b) = (a.parse::<f64>().ok()?, b.parse::<f64>().ok()?);
            (b > 0.0).then(|| 100.0 * a / b)
        });
        let counted_over = k >= 2
            && matches!(&toks[k - 1], Tok::Word { text: "/", .. })
            && matches!(&toks[k - 2], Tok::Num(c) if c.plain_integer && c.unit.is_none());
        let Tok::Num(n) = &mut toks[k] else { continue };
        let kind = n.unit.as_ref().map(|u| u.kind);
        if kind == Some(UnitKind::Percent)
            && (matches!(next_word, "complete" | "completed" | "done")
                || fraction.is_some_and(|f| (f - n.value).abs() < 0.1))
        {
            n.parameter = true;
        }
        if kind == Some(UnitKind::Time) && counted_over {
            n.parameter = true;
        }
    }
}

/// Go's benchmark line, `BenchmarkReadAt/uring_512-8  8000000  1879
/// ns/op  272.55 MB/s`: the count after the name is how many times the
/// framework ran the body (b.N, which it picks or `-benchtime=Nx`
/// sets), not a result; the pairs after it are.
fn go_iterations(toks: &mut [Tok]) {
    let named = matches!(toks.first(), Some(Tok::Word { text, .. })
        if text.strip_prefix("Benchmark").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')));
    if named
        && let Some(Tok::Num(n)) = toks.get_mut(1)
        && n.plain_integer
        && n.unit.is_none()
    {
        n.parameter = true;
    }
}

/// `0.0-30.0 sec` (iperf's, sar's interval): the span of time the
/// numbers beside it were taken over, counted from the start, is no
/// result.
fn from_the_start(toks: &mut [Tok]) {
    for k in 1..toks.len() {
        let (head, tail) = toks.split_at_mut(k);
        if let (Some(Tok::Num(a)), Some(Tok::Num(b))) = (head.last_mut(), tail.first_mut())
            && a.at == b.at
            && a.value == 0.0
            && b.unit.as_ref().is_some_and(|u| u.kind == UnitKind::Time)
        {
            a.parameter = true;
            b.parameter = true;
        }
    }
}
