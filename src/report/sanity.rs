//! Values no measurement can produce, found before any statistics: a
//! negative or non-finite latency would otherwise come out as "better
//! −113%". Such a value is left out and named as a problem, which makes
//! the report incomplete (exit 2) instead of a verdict.

use crate::results::CellRecord;

/// Units of time: a value in them is a duration, never below zero.
const TIME_UNITS: &[&str] = &["ns", "us", "µs", "ms", "s"];

/// Remove impossible values from `cells`; one problem line for each.
pub fn drop_invalid(cells: &mut [CellRecord]) -> Vec<String> {
    let mut problems = Vec::new();
    for c in cells.iter_mut() {
        c.metrics.retain(|m| {
            let time = TIME_UNITS.contains(&m.unit.as_str());
            let ok = m.value.is_finite() && !(time && m.value < 0.0);
            if !ok {
                problems.push(format!(
                    "cell {} rep {}: {} = {} {} is invalid (a duration cannot be negative or infinite); left out",
                    c.cell, c.rep, m.name, m.value, m.unit
                ));
            }
            ok
        });
    }
    problems
}

/// Two cell files for one (cell, repetition) — a run directory copied
/// into itself, or merged twice — must count once.
pub fn dedupe(cells: &mut Vec<CellRecord>) -> Vec<String> {
    cells.sort_by(|a, b| (&a.cell, a.rep).cmp(&(&b.cell, b.rep)));
    let before = cells.len();
    cells.dedup_by(|a, b| a.cell == b.cell && a.rep == b.rep);
    let n = before - cells.len();
    if n == 0 {
        return vec![];
    }
    vec![format!(
        "{n} duplicate cell record(s) (the same cell and repetition twice) counted once"
    )]
}
