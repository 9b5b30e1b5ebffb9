//! Claims in sentences: `3381 -> 3151us`, `from 250 to 500 IOPS`, `goes
//! from 2.0 to 17.0 MB/s`, `cuts p99 by 7-8%`, `2x faster`. A number
//! counts only with a unit (or `%`, or `x faster`), so versions, dates,
//! counts of things and option values (`--bs=4k`) stay out. Each claim
//! is captioned by its sentence.

use super::Draft;
use super::lines::Line;
use super::numbers::{Cell, parse_cell, parse_unit};
use crate::mail::model::{ClaimKind, Column, Row, Unit, Value};
use regex::Regex;
use std::sync::LazyLock;

const NUM: &str = r"(\d[\d,.]*[kKMG]?)";
const UNIT: &str = r"(?:\s*(%|(?:[kKMG]i?B/s(?:ec)?|B/s|[kK]\s?IOPS|IOPS|iops|ops/s|[uµμn]secs?|[uµμnm]s|msecs?|seconds|secs?|s)\b))?";

static ARROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"{NUM}{UNIT}\s*(?:->|-->|→|=>)\s*{NUM}{UNIT}")).expect("constant regex")
});
static FROM_TO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\bfrom\s+(?:~|about\s+|around\s+)?{NUM}{UNIT}\s+(?:to|down to|up to)\s+(?:~|about\s+|around\s+)?{NUM}{UNIT}"
    ))
    .expect("constant regex")
});
static BY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:cuts?|reduces?|reduced|improves?|improved|increases?|increased|lowers?|lowered|drops?|dropped|decreases?|decreased|raises?|raised|boosts?|boosted|regress(?:es|ed)?)\s+(?:the\s+)?(?:([A-Za-z][\w.-]*(?:\s[A-Za-z][\w.-]*)?)\s+)?by\s+(?:about\s+|around\s+|~)?(\d+(?:\.\d+)?)(?:\s*(?:-|–|to)\s*(\d+(?:\.\d+)?))?\s*%",
    )
    .expect("constant regex")
});
static FACTOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(\d+(?:\.\d+)?)(?:\s*(?:to|-|–|~)\s*(\d+(?:\.\d+)?))?(?:\s*(?:±|\+-)\s*(\d+(?:\.\d+)?))?\s*(?:x|×|times)\s+(?:_?)(faster|slower|better|worse|higher|lower|more|less|quicker|improvements?|speed-?ups?|gains?|delta|difference|boost|increase|reduction|regression|perf(?:ormance)?)_?\b",
    )
    .expect("constant regex")
});
static OPTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\s)--?[A-Za-z][\w-]*=\S+").expect("constant regex"));

/// The prose claims among the `free` lines of a block (those no table
/// took), each one a table of its own.
pub fn claims(block: &[Line], free: &[bool]) -> Vec<Draft> {
    let mut out = Vec::new();
    // The block agrees on its separators (`5,452%` where perf printed
    // `1.834.487,82`).
    let conv = super::tokens::Convention::of(block.iter().map(|l| l.text));
    let mut i = 0;
    // The list items read so far, with their depth (`*` 1, `**` 2):
    // a nested item's claims are captioned with the item above it too
    // (`* 32 processes performing random reads` / `** the bandwidth is
    // improved from 466KB/s to 477KB/s`).
    let mut items: Vec<(usize, String)> = Vec::new();
    // A dump or a tool's record (`latency : target=0, window=0, ...`)
    // is no part of any sentence.
    let free: Vec<bool> = free
        .iter()
        .zip(block)
        .map(|(f, l)| *f && !super::never::is_dump(l.text))
        .collect();
    let free = &free;
    while i < block.len() {
        if !free[i] || block[i].is_blank() {
            i += 1;
            continue;
        }
        // A paragraph: its text, and where each line starts in it.
        let mut text = String::new();
        let mut starts = Vec::new();
        // A list item (`* ...`, `** ...`, `- ...`) is a sentence of its
        // own, ended or not: its numbers are captioned by it alone.
        while i < block.len()
            && free[i]
            && !block[i].is_blank()
            && (starts.is_empty() || !is_list_item(block[i].text))
        {
            starts.push((text.len(), i));
            text.push_str(block[i].text.trim());
            text.push(' ');
            i += 1;
        }
        let depth = list_depth(&text);
        let parent = depth.and_then(|d| {
            items
                .iter()
                .rev()
                .find(|(pd, _)| *pd < d)
                .map(|(_, t)| caption_of(t, 0))
        });
        if let Some(d) = depth {
            items.retain(|(pd, _)| *pd < d);
            items.push((d, text.clone()));
        }
        // Options are blanked byte for byte, so offsets hold in both.
        let blanked = blank_options(&text);
        for (s_start, sentence) in sentence_spans(&text) {
            let Some(read) = blanked.get(s_start..s_start + sentence.len()) else {
                continue;
            };
            for (offset, mut d) in in_sentence(read, conv) {
                let at = s_start + offset;
                let line = starts
                    .iter()
                    .rev()
                    .find(|(o, _)| *o <= at)
                    .map_or(0, |s| s.1);
                d.start = line;
                d.end = line + 1;
                for r in &mut d.rows {
                    r.line = block[line].no;
                }
                let own = caption_of(sentence, offset);
                d.caption = Some(match &parent {
                    Some(p) => format!("{p} / {own}"),
                    None => own,
                });
                out.push(d);
            }
        }
    }
    out
}

/// The most of a sentence a caption keeps, in characters: a paragraph
/// with no full stop must not be copied into each of its claims (that
/// is memory quadratic in the paragraph).
const CAPTION_MAX: usize = 400;

/// The sentence as a caption, white space collapsed; a longer sentence
/// is cut to the words around the claim at byte `at`.
fn caption_of(sentence: &str, at: usize) -> String {
    if sentence.len() <= CAPTION_MAX {
        return sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    let half = CAPTION_MAX / 2;
    let mut start = at.saturating_sub(half).min(sentence.len());
    while !sentence.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + half).min(sentence.len());
    while !sentence.is_char_boundary(end) {
        end += 1;
    }
    let window = sentence[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "{}{window}{}",
        if start > 0 { "… " } else { "" },
        if end < sentence.len() { " …" } else { "" }
    )
}

/// `--bs=4k` and the like, blanked so their numbers are not read.
fn blank_options(text: &str) -> String {
    OPTION
        .replace_all(text, |c: &regex::Captures| " ".repeat(c[0].len()))
        .into_owned()
}

/// Each claim in a sentence, with its byte offset.
fn in_sentence(s: &str, conv: super::tokens::Convention) -> Vec<(usize, Draft)> {
    let mut out = Vec::new();
    // What the forms read, so the plain numbers after them are not read
    // twice.
    let mut covered: Vec<std::ops::Range<usize>> = Vec::new();
    // Each form has a word or mark without which its regex cannot match;
    // most sentences have none of them.
    let arrow = s.contains("->") || s.contains('→') || s.contains("=>");
    let from = s.contains("from");
    let by = s.contains("by");
    let factor = s.contains(['x', '×']) || s.contains("times");
    let forms = [(arrow, &*ARROW), (from, &*FROM_TO)];
    for re in forms.into_iter().filter(|f| f.0).map(|f| f.1) {
        for c in re.captures_iter(s) {
            let (Some(a), Some(b)) = (number(c.get(1)), number(c.get(3))) else {
                continue;
            };
            let ua = c.get(2).and_then(|u| parse_unit(u.as_str()));
            let ub = c.get(4).and_then(|u| parse_unit(u.as_str()));
            // `IOPS ... from 1.09M to 1.13M`: bare numbers take the one
            // measurement unit their sentence names.
            let (ua, ub) = match (ua, ub) {
                (None, None) => {
                    let u = sentence_unit(s);
                    (u.clone(), u)
                }
                other => other,
            };
            let unit = match (&ua, &ub) {
                (Some(x), Some(y)) if x.symbol != y.symbol => None,
                (x, y) => x.clone().or(y.clone()),
            };
            if ua.is_none() && ub.is_none() {
                continue;
            }
            let cell = |v: f64, u: Option<Unit>| Value::Number {
                value: v,
                unit: u,
                spread_pct: None,
            };
            covered.extend(c.get(0).map(|m| m.range()));
            out.push((
                c.get(0).map_or(0, |m| m.start()),
                draft(&[], &["from", "to"], vec![cell(a, ua), cell(b, ub)], unit),
            ));
        }
    }
    for c in BY.captures_iter(if by { s } else { "" }) {
        let pct = parse_unit("%");
        let cell = |m: Option<regex::Match>| {
            m.and_then(|m| m.as_str().parse().ok())
                .map(|v| Value::Number {
                    value: v,
                    unit: pct.clone(),
                    spread_pct: None,
                })
        };
        let values: Vec<Value> = [cell(c.get(2)), cell(c.get(3))]
            .into_iter()
            .flatten()
            .collect();
        let names: &[&str] = if values.len() == 2 {
            &["change low", "change high"]
        } else {
            &["change"]
        };
        let mut d = draft(&[], names, values, pct.clone());
        if let Some(metric) = c.get(1) {
            d.key_columns = vec!["metric".into()];
            d.rows[0].keys = vec![metric.as_str().to_string()];
        }
        covered.extend(c.get(0).map(|m| m.range()));
        out.push((c.get(0).map_or(0, |m| m.start()), d));
    }
    for c in FACTOR.captures_iter(if factor { s } else { "" }) {
        let Some(v) = number(c.get(1)) else { continue };
        let plain = |value| Value::Number {
            value,
            unit: None,
            spread_pct: None,
        };
        // `1.05 ± 0.02 times faster` (hyperfine): the spread is a column;
        // `7.5 to 90 times more`: a range, low and high.
        let mut d = match (number(c.get(2)), number(c.get(3))) {
            (Some(high), _) => draft(
                &["claim"],
                &["factor low", "factor high"],
                vec![plain(v), plain(high)],
                None,
            ),
            (None, Some(sd)) => draft(
                &["claim"],
                &["factor", "±"],
                vec![plain(v), plain(sd)],
                None,
            ),
            (None, None) => draft(&["claim"], &["factor"], vec![plain(v)], None),
        };
        d.rows[0].keys = vec![c[4].to_string()];
        covered.extend(c.get(0).map(|m| m.range()));
        out.push((c.get(0).map_or(0, |m| m.start()), d));
    }
    covered.sort_by_key(|r| r.start);
    out.extend(measured_numbers(s, &covered, conv));
    out.sort_by_key(|(o, _)| *o);
    out
}

/// The one unit of a rate, throughput or time a sentence names as a
/// word of its own (`improvement in IOPS`, `bandwidth in MB/s`); None
/// when it names none or several.
fn sentence_unit(s: &str) -> Option<Unit> {
    use crate::mail::UnitKind;
    let mut found: Option<Unit> = None;
    for w in s.split(|c: char| c.is_whitespace() || "(),;:".contains(c)) {
        let w = w.trim_end_matches(['.', ',']);
        // A word, not a number with its unit: `4k`, `10ms` say what ran.
        if w.is_empty() || w.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let Some(u) = parse_unit(w) else { continue };
        if !matches!(u.kind, UnitKind::Rate | UnitKind::Throughput) {
            continue;
        }
        match &found {
            Some(f) if f.symbol != u.symbol => return None,
            _ => found = Some(u),
        }
    }
    found
}

/// The column of a lone number in a sentence.
pub const LONE: &str = "value";

/// Any other number a sentence gives with the unit of a measurement: a
/// percentage, a time, a rate or a throughput (`took approximately
/// 600us`, `up to 96%`, `about 23000/s`). A time after `for`, `every` or
/// `interval` is how long something ran, not a result; sizes and bare
/// counts say what was run.
fn measured_numbers(
    s: &str,
    covered: &[std::ops::Range<usize>],
    conv: super::tokens::Convention,
) -> Vec<(usize, Draft)> {
    use super::tokens::{Tok, scan};
    use crate::mail::model::UnitKind;
    const DURATION: [&str; 6] = ["for", "every", "interval", "runtime", "timeout", "each"];
    const SETTINGS: [&str; 5] = ["delay", "period", "deadline", "slice", "duration"];
    const THRESHOLD: [&str; 6] = ["under", "over", "below", "above", "beyond", "than"];
    // `99.95% latencies`, `95.0% confidence`: a rank, not a result.
    const RANKED: [&str; 5] = ["latency", "latencies", "percentile", "confidence", "tail"];
    // A sentence that ends in a colon introduces a table: its numbers are
    // the table's conditions (`dm-delay 5 ms, 1 job:`).
    // A stated change still is one (`noticed a -72.9% regression of
    // fio.write_iops on:`).
    let introduces = s.trim_end().ends_with(':');
    // A list of steps may follow the colon of the sentence before it,
    // with no full stop between: the numbers from the first step on are
    // settings. After a colon only a list item counts: a commit's subject
    // (`workqueue: Make unbound ...`) is imperative too.
    let steps_from = std::iter::once(0)
        .filter(|_| is_step(s))
        .chain(
            s.match_indices(": ")
                .map(|(i, _)| i + 2)
                .filter(|&i| s[i..].starts_with(['-', '*', '+']) && is_step(&s[i..])),
        )
        .next()
        .unwrap_or(usize::MAX);
    let toks = scan(s, conv);
    let mut out = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        let Tok::Num(n) = t else { continue };
        // `50 to 100MB/s`, `11.95 ~ 20.41 %`, `between 6.8 and -11.8
        // percent`: the low end of a range takes the high end's unit.
        let between = k > 0
            && matches!(&toks[k - 1], Tok::Word { text, .. } if text.eq_ignore_ascii_case("between"));
        let high_unit = match (&n.unit, toks.get(k + 1), toks.get(k + 2)) {
            (None, Some(Tok::Word { text, .. }), Some(Tok::Num(high)))
                if (matches!(*text, "to" | "-" | "–" | "~") || between && *text == "and")
                    && !n.parameter =>
            {
                high.unit.as_ref()
            }
            _ => None,
        };
        // `IOPS of 124.7k`, `bandwidth in MB/s is 487`: a unit named
        // just before, with `of`, `is` or `was` between.
        let named_before = match (
            k.checked_sub(2).map(|b| &toks[b]),
            k.checked_sub(1).map(|b| &toks[b]),
        ) {
            (Some(Tok::Word { text: u, .. }), Some(Tok::Word { text: link, .. }))
                if n.unit.is_none() && matches!(*link, "of" | "is" | "was") =>
            {
                parse_unit(u).filter(|u| matches!(u.kind, UnitKind::Rate | UnitKind::Throughput))
            }
            _ => None,
        };
        let Some(unit) = n.unit.as_ref().or(high_unit).or(named_before.as_ref()) else {
            // `the IPC raised from 0.75 to 0.97`: a change stated with
            // both ends is a claim, with a unit or none.
            if !n.parameter && n.at < steps_from && !introduces && changed_from_to(&toks, k) {
                let value = Value::Number {
                    value: n.value,
                    unit: None,
                    spread_pct: None,
                };
                out.push((n.at, draft(&[], &["value"], vec![value], None)));
            }
            continue;
        };
        // `covered` is sorted by start: the one range that may hold `at`
        // is the last that starts at or before it (ranges do not nest).
        let k_cov = covered.partition_point(|r| r.start <= n.at);
        let in_form = k_cov > 0 && covered[k_cov - 1].contains(&n.at);
        if n.parameter || in_form || n.at >= steps_from {
            continue;
        }
        let word_before = |back: usize| match k.checked_sub(back).map(|b| &toks[b]) {
            Some(Tok::Word { text, .. }) => text.to_lowercase(),
            _ => String::new(),
        };
        // `delays under 50 ms`, `for delays of 50 ms`: a time that names a
        // setting or a threshold, not a result.
        let duration = unit.kind == UnitKind::Time
            && (1..=2).any(|b| {
                let w = word_before(b);
                DURATION.contains(&w.as_str())
                    || SETTINGS.contains(&w.trim_end_matches('s'))
                    || (b == 1 && THRESHOLD.contains(&w.as_str()))
            });
        let measured = matches!(
            unit.kind,
            UnitKind::Percent | UnitKind::Time | UnitKind::Rate | UnitKind::Throughput
        );
        let word_after = |ahead: usize| match toks.get(k + ahead) {
            Some(Tok::Word { text, .. }) => text.to_lowercase(),
            _ => String::new(),
        };
        let ranked = unit.kind == UnitKind::Percent && RANKED.contains(&word_after(1).as_str());
        let by_default = word_after(1) == "by" && word_after(2) == "default";
        // `set to 15ms`, `configured at 50%`, `the default duration as
        // 10ms`: a value given to something, not one it gave.
        let before = &s[..n.at.min(s.len())];
        let assigned = ends_assigning(before);
        // `0.4 * 512 = 204.8 ms`: worked out on paper, not measured.
        let worked_out = worked_out(before);
        let expected = expected(before);
        // `at 1 ms delay`: the time is a setting.
        let setting = unit.kind == UnitKind::Time
            && (SETTINGS.contains(&word_after(1).trim_end_matches(['.', ',', 's']))
                || ["timeout", "interval", "runtime"]
                    .contains(&word_after(1).trim_end_matches(['.', ','])));
        // `10 clients to get 75-95% CPU`: what the setup aims at.
        // (`we get 10% more` is a result: the verb must follow `to`.)
        let goal = (1..=2).any(|b| ["target", "targeting"].contains(&word_before(b).as_str()))
            || ["get", "reach", "achieve", "hit"].contains(&word_before(1).as_str())
                && word_before(2) == "to";
        const CHANGE: [&str; 20] = [
            "regression",
            "improvement",
            "increase",
            "decrease",
            "drop",
            "gain",
            "speedup",
            "slowdown",
            "bump",
            "boost",
            "reduction",
            "degradation",
            "loss",
            "win",
            "jump",
            "penalty",
            "overhead",
            "saving",
            "difference",
            "delta",
        ];
        let names_change =
            |a: usize| CHANGE.contains(&word_after(a).trim_end_matches(['.', ',', 's']));
        let change = unit.kind == UnitKind::Percent && names_change(1);
        if introduces && !change {
            continue;
        }
        // `a 12Gb/s SAS disk`, `the whole 30s measurement period`, `a
        // 1min run`: a number between an article and a noun says what
        // the thing is; `a 10% (throughput) improvement` says what
        // changed.
        let noun = word_after(1);
        let changed = (1..=2).any(names_change);
        let attribute = ["a", "an", "the", "whole", "each"].contains(&word_before(1).as_str())
            && noun.chars().next().is_some_and(char::is_alphabetic)
            && !changed
            && ![
                "of", "and", "or", "to", "in", "on", "with", "for", "at", "vs",
            ]
            .contains(&noun.as_str());
        if !measured
            || attribute
            || duration
            || ranked
            || by_default
            || assigned
            || setting
            || goal
            || worked_out
            || expected
        {
            continue;
        }
        let value = Value::Number {
            value: n.value,
            unit: Some(unit.clone()),
            spread_pct: None,
        };
        out.push((
            n.at,
            draft(&[], &["value"], vec![value], Some(unit.clone())),
        ));
    }
    out
}

/// Whether the number at `k` is an end of `<verb> from A to B` with a
/// verb of change a few words before `from` (`raised from 0.75 to
/// 0.97`, `went from 120 to 80`), and no unit on either end.
fn changed_from_to(toks: &[super::tokens::Tok], k: usize) -> bool {
    use super::tokens::Tok;
    const CHANGES: [&str; 18] = [
        "raised",
        "rose",
        "rises",
        "increased",
        "increases",
        "decreased",
        "decreases",
        "dropped",
        "drops",
        "fell",
        "falls",
        "went",
        "goes",
        "improved",
        "improves",
        "reduced",
        "grew",
        "jumped",
    ];
    let word = |i: usize, w: &str| matches!(toks.get(i), Some(Tok::Word { text, .. }) if text.eq_ignore_ascii_case(w));
    let bare =
        |i: usize| matches!(toks.get(i), Some(Tok::Num(n)) if n.unit.is_none() && !n.parameter);
    let (from, to) = if k >= 1 && word(k - 1, "from") && word(k + 1, "to") && bare(k + 2) {
        (k - 1, k + 2)
    } else if k >= 3 && word(k - 1, "to") && bare(k - 2) && word(k - 3, "from") {
        (k - 3, k)
    } else {
        return false;
    };
    // `went from 64 to 128 entries`: a count of things, set, not read.
    const LINKS: [&str; 12] = [
        "with", "after", "when", "on", "for", "and", "but", "which", "this", "so", "while", "in",
    ];
    let ends = match toks.get(to + 1) {
        Some(Tok::Word { text, .. }) => LINKS.contains(&text.to_lowercase().as_str()),
        _ => true,
    };
    if !ends {
        return false;
    }
    toks[from.saturating_sub(4)..from].iter().any(
        |t| matches!(t, Tok::Word { text, .. } if CHANGES.contains(&text.to_lowercase().as_str())),
    )
}

/// Whether the text before a number gives it to something: `set to`,
/// `configured at`, `the default duration as`.
pub(super) fn ends_assigning(before: &str) -> bool {
    const ASSIGN: [&str; 10] = [
        "set",
        "sets",
        "setting",
        "configured",
        "default",
        "defaults",
        "fixed",
        "throttled",
        "limited",
        "capped",
    ];
    let mut words = before.split_whitespace().rev().map(|w| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    });
    let link = words.next().unwrap_or_default();
    ["to", "at", "as"].contains(&link.as_str())
        && words.take(2).any(|w| ASSIGN.contains(&w.as_str()))
}

/// Whether the number is what something should, would or may give
/// (`%util should be 20%`, `latency will be 1.4ms`, `may show 0%`): a
/// modal verb among the few words before it states an expectation, a
/// limit or a guess, not what was measured. The clause after the number
/// does not count (`58.12% is close to what it would show`).
fn expected(before: &str) -> bool {
    const MODAL: [&str; 7] = ["should", "would", "will", "could", "may", "might", "must"];
    before
        .split_whitespace()
        .rev()
        .take(4)
        .take_while(|w| !w.ends_with([',', ';', ':', '.']))
        .any(|w| MODAL.contains(&w.to_lowercase().as_str()))
}

/// Whether the text before a number ends in a sum worked out on
/// paper: `0.4 * 512 =`, `1 + 0.4 =`.
fn worked_out(before: &str) -> bool {
    static SUM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\d[\d.]*\s*[*x×+/-]\s*\d[\d.]*\s*=\s*$").expect("constant regex")
    });
    SUM.is_match(before)
}

/// A step of a procedure (`- Create a second queue with completion time
/// 100 ms`, `2) Set the rate to 10 MB/s`): an imperative verb first, then
/// a word. Its numbers are what the author set up, not what was measured.
fn is_step(s: &str) -> bool {
    const STEPS: [&str; 16] = [
        "create",
        "set",
        "configure",
        "run",
        "start",
        "mount",
        "format",
        "submit",
        "use",
        "enable",
        "disable",
        "load",
        "boot",
        "add",
        "make",
        "limit",
    ];
    let s = s.trim_start();
    let s = s
        .strip_prefix(['-', '*', '+'])
        .or_else(|| {
            let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            (1..=2)
                .contains(&digits)
                .then(|| s[digits..].strip_prefix(['.', ')']))
                .flatten()
        })
        .unwrap_or(s);
    let mut words = s.split_whitespace();
    let verb = words.next().unwrap_or("").to_lowercase();
    STEPS.contains(&verb.as_str())
        && words
            .next()
            .is_some_and(|w| w.starts_with(|c: char| c.is_alphabetic()))
}

/// A line that starts a list item: `*`, `**`, `-` or `+` and a space.
fn is_list_item(text: &str) -> bool {
    list_depth(text).is_some()
}

/// How deep a list item is by its marks (`*` 1, `**` 2), or None for
/// a line that is no list item.
fn list_depth(text: &str) -> Option<usize> {
    let t = text.trim_start();
    let rest = t.trim_start_matches(['*', '-', '+', '•']);
    let marks = t[..t.len() - rest.len()].chars().count();
    ((1..=3).contains(&marks) && rest.starts_with(' ')).then_some(marks)
}

/// A whole token that is a number: `6.12.117` and `v6` are not.
fn number(m: Option<regex::Match>) -> Option<f64> {
    let t = m?.as_str().trim_end_matches([',', '.']);
    match parse_cell(t) {
        Cell::Number {
            value, unit: None, ..
        } => Some(value),
        _ => None,
    }
}

fn draft(keys: &[&str], columns: &[&str], values: Vec<Value>, unit: Option<Unit>) -> Draft {
    Draft {
        kind: Some(ClaimKind::Prose),
        key_columns: keys.iter().map(|k| k.to_string()).collect(),
        columns: columns
            .iter()
            .map(|c| Column {
                name: c.to_string(),
                unit: None,
            })
            .collect(),
        rows: vec![Row {
            keys: keys.iter().map(|_| String::new()).collect(),
            unit: None,
            values,
            line: 0,
        }],
        unit,
        ..Draft::default()
    }
}

/// Sentences with their byte offsets: a sentence ends at `.`, `!` or `?`
/// before a space; `1.125` is no end.
fn sentence_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1) == Some(&b' ') {
            out.push((start, &text[start..=i]));
            start = i + 1;
        }
    }
    if start < text.len() && !text[start..].trim().is_empty() {
        out.push((start, &text[start..]));
    }
    out.into_iter()
        .map(|(o, s)| {
            let lead = s.len() - s.trim_start().len();
            (o + lead, s.trim_start())
        })
        .collect()
}

/// Sentences of a text, whitespace collapsed.
pub fn sentences(text: &str) -> Vec<String> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    sentence_spans(&flat)
        .into_iter()
        .map(|(_, s)| s.trim().to_string())
        .collect()
}
