//! Lines whose numbers carry their names glued on after them, GNU
//! `time`'s default output above all:
//!
//! ```text
//! 4.27user 37.46system 1:14.13elapsed 56%CPU (0avgtext+0avgdata 31420maxresident)k
//! 5060832inputs+0outputs (0major+46434minor)pagefaults 0swaps
//! ```
//!
//! A line is one when at least three of its words are a number and a
//! name of three letters or more that is no unit; the lines after it
//! that hold such words too (a mail client's wrap) belong to it. A
//! clock (`1:14.13`) gives its parts as printed, minutes and seconds; a
//! `)k` after a bracket is the unit of the sizes in it (kilobytes).

use super::Draft;
use super::lines::Line;
use super::numbers::parse_unit;
use super::tokens::size_unit;
use crate::mail::model::{ClaimKind, Row, Unit};
use regex::Regex;
use std::sync::LazyLock;

/// A number with its name glued on: `37.46system`, `56%CPU`,
/// `1:14.13elapsed`, `46434minor`.
static GLUED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(\d+):)?(\d+(?:\.\d+)?)(%?)([A-Za-z]{3,})$").expect("constant regex")
});

/// A glued number as read: its name and its values with their units.
struct Named {
    name: String,
    values: Vec<(f64, Option<Unit>)>,
}

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    // Most lines have no three words that start with a digit and end in
    // a letter or bracket: say so before the regex.
    let candidates = lines[i]
        .text
        .split_whitespace()
        .filter(|w| {
            w.starts_with(|c: char| c.is_ascii_digit() || c == '(')
                && w.ends_with(|c: char| c.is_ascii_alphabetic() || c == ')')
        })
        .count();
    if candidates < 2 {
        return None;
    }
    let first = named(lines[i].text);
    if first.len() < 3 {
        return None;
    }
    let mut d = Draft::one_value(ClaimKind::LabelValues, &["label"], i);
    d.accounting = true;
    push(&mut d, first, lines[i].no);
    let mut j = i + 1;
    while let Some(l) = lines.get(j) {
        let more = named(l.text);
        if more.is_empty() {
            break;
        }
        push(&mut d, more, l.no);
        j += 1;
    }
    d.end = j;
    Some(d)
}

fn push(d: &mut Draft, found: Vec<Named>, no: usize) {
    for n in found {
        for (k, (value, unit)) in n.values.into_iter().enumerate() {
            let name = if k == 0 {
                n.name.clone()
            } else {
                format!("{} ({k})", n.name)
            };
            d.rows.push(Row::number(vec![name], value, unit, no));
        }
    }
}

/// The glued numbers of a line, when every word of it is one, or a
/// bracket or `+` joining them (a line of prose has other words).
fn named(text: &str) -> Vec<Named> {
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        // `(0avgtext+0avgdata`, `31420maxresident)k`, `(0major+46434minor)pagefaults`.
        let (inner, after) = match word.rsplit_once(')') {
            Some((a, b)) => (a, b),
            None => (word, ""),
        };
        let kilobytes = after == "k";
        let mut any = false;
        for part in inner.trim_start_matches('(').split('+') {
            let Some(n) = glued(part, kilobytes) else {
                return Vec::new();
            };
            out.push(n);
            any = true;
        }
        // `(...)pagefaults` names the group; it is read with it.
        if !any || (!after.is_empty() && !kilobytes && !after.chars().all(char::is_alphabetic)) {
            return Vec::new();
        }
    }
    out
}

fn glued(part: &str, kilobytes: bool) -> Option<Named> {
    let c = GLUED.captures(part)?;
    let name = c[4].to_string();
    // `100ms`, `4KiB`, `3sec`: a unit, not a name.
    if parse_unit(&name).is_some() || size_unit(&name).is_some() {
        return None;
    }
    let value: f64 = c[2].parse().ok()?;
    let values = match c.get(1) {
        // `1:14.13elapsed`: minutes and seconds, as printed; no minutes
        // when there are none.
        Some(m) => {
            let minutes: f64 = m.as_str().parse().ok()?;
            let secs = (value, parse_unit("s"));
            if minutes == 0.0 {
                vec![secs]
            } else {
                vec![(minutes, parse_unit("min")), secs]
            }
        }
        None if !c[3].is_empty() => vec![(value, parse_unit("%"))],
        None if kilobytes => vec![(
            value,
            size_unit("KiB").map(|u| Unit {
                written: "k".into(),
                ..u
            }),
        )],
        // `4.27user`, `37.46system`: CPU seconds.
        None if matches!(name.as_str(), "user" | "system" | "sys") => {
            vec![(value, parse_unit("s"))]
        }
        None => vec![(value, None)],
    };
    Some(Named { name, values })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gnu_time_lines_name_every_number() {
        let line =
            "4.27user 37.46system 1:14.13elapsed 56%CPU (0avgtext+0avgdata 31420maxresident)k";
        let got: Vec<(String, f64)> = named(line)
            .into_iter()
            .flat_map(|n| n.values.into_iter().map(move |v| (n.name.clone(), v.0)))
            .collect();
        let want = [
            ("user", 4.27),
            ("system", 37.46),
            ("elapsed", 1.0),
            ("elapsed", 14.13),
            ("CPU", 56.0),
            ("avgtext", 0.0),
            ("avgdata", 0.0),
            ("maxresident", 31420.0),
        ];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v)));
        assert_eq!(
            named("5060832inputs+0outputs (0major+46434minor)pagefaults 0swaps").len(),
            5
        );
        // Prose, units and ordinals are not glued names.
        assert!(named("ran 3 times in 100ms").is_empty());
        assert!(named("the 2nd and 3rd runs").is_empty());
    }
}
