//! Values no measurement can produce, found before any statistics: a
//! negative or non-finite latency would otherwise come out as "better
//! −113%". Such a value is left out and named as a problem, which makes
//! the report incomplete (exit 2) instead of a verdict.

use crate::record::problem::{Problem, ProblemKind};
use crate::results::CellRecord;

/// Units of time: a value in them is a duration, never below zero.
const TIME_UNITS: &[&str] = &["ns", "us", "µs", "ms", "s"];

/// Remove impossible values from `cells`; one problem line for each.
pub fn drop_invalid(cells: &mut [CellRecord]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for c in cells.iter_mut() {
        c.metrics.retain(|m| {
            let time = TIME_UNITS.contains(&m.unit.as_str());
            let ok = m.value.is_finite() && !(time && m.value < 0.0);
            if !ok {
                problems.push(Problem::new(
                    ProblemKind::InvalidValue,
                    format!(
                        "cell {} rep {}: {} = {} {} is invalid (a duration cannot be negative or infinite); left out",
                        c.cell, c.rep, m.name, m.value, m.unit
                    ),
                ));
            }
            ok
        });
    }
    problems
}

/// Two cell files for one (cell, repetition) — a run directory copied
/// into itself, or merged twice — must count once.
pub fn dedupe(cells: &mut Vec<CellRecord>) -> Vec<Problem> {
    cells.sort_by(|a, b| (&a.cell, a.rep).cmp(&(&b.cell, b.rep)));
    let before = cells.len();
    cells.dedup_by(|a, b| a.cell == b.cell && a.rep == b.rep);
    let n = before - cells.len();
    if n == 0 {
        return vec![];
    }
    vec![Problem::new(
        ProblemKind::DuplicateRecord,
        format!("{n} duplicate cell record(s) (the same cell and repetition twice) counted once"),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_latency_is_left_out_and_named() {
        let mut cells = crate::report::testing::before_after(3).unwrap().cells;
        let m = &mut cells[0].metrics[0];
        m.value = -113.0;
        m.unit = "ns".into();
        let (name, cell) = (m.name.clone(), cells[0].cell.clone());
        let n = cells[0].metrics.len();
        let p = drop_invalid(&mut cells);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].kind, ProblemKind::InvalidValue);
        assert!(
            p[0].detail
                .contains(&format!("cell {cell} rep 1: {name} = -113 ns is invalid")),
            "{p:?}"
        );
        assert_eq!(cells[0].metrics.len(), n - 1);
    }

    #[test]
    fn a_cell_repetition_counts_once() {
        let mut cells = crate::report::testing::before_after(3).unwrap().cells;
        let n = cells.len();
        cells.push(cells[0].clone());
        let p = dedupe(&mut cells);
        assert_eq!(cells.len(), n);
        assert_eq!(
            p.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            ["1 duplicate cell record(s) (the same cell and repetition twice) counted once"]
        );
    }
}
