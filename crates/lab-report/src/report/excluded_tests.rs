//! Excluded combinations show as `n/a`, and a derived bound is printed
//! beside the metric of its unit.

use super::testing;
use super::*;
use crate::matrix::Scalar;
use crate::matrix::derived::DerivedSpec;
use crate::record::bench::Metric;

#[test]
fn excluded_rows_are_na_and_bounds_sit_beside_their_metric() {
    let mut s = testing::before_after(3).unwrap();
    let plan = &mut s.manifest.plan;
    let five = |a: &crate::matrix::expand::AxisValues| a.get("delay") == Some(&Scalar::Int(5));
    let gone: Vec<_> = plan
        .cells
        .iter()
        .filter(|c| five(&c.axes))
        .cloned()
        .collect();
    assert_eq!(gone.len(), 2);
    plan.excluded = gone.iter().map(|c| c.axes.clone()).collect();
    plan.cells.retain(|c| !five(&c.axes));
    plan.derived.push(DerivedSpec {
        name: "lat.bound".into(),
        expr: "delay * 1000000".into(),
        unit: "ns".into(),
        bound: true,
    });
    s.cells.retain(|c| !five(&c.axes));
    for c in &mut s.cells {
        let d = c
            .axes
            .get("delay")
            .unwrap()
            .to_string()
            .parse::<f64>()
            .unwrap();
        c.metrics.push(Metric::new("lat.bound", d * 1e6, "ns"));
    }
    s.manifest.matrix.verdict.gate = vec!["write.lat_mean".into()];
    let d = tempfile::tempdir().unwrap();
    let run = testing::write(d.path(), &s).unwrap();
    let r = load(&run).unwrap();
    assert_eq!(
        r.excluded,
        [Excluded {
            config: "arch=x86_64,hz=100".into(),
            run_key: "delay=5".into()
        }]
    );
    // Excluded is not missing: the run is complete.
    assert!(
        r.completeness.missing.is_empty(),
        "{:?}",
        r.completeness.missing
    );
    let m = r
        .metrics
        .iter()
        .find(|m| m.name == "write.lat_mean")
        .unwrap();
    assert_eq!(m.bound.as_deref(), Some("lat.bound"));
    let text = text::render_text(&r).unwrap();
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("write.lat_mean"))
        .take_while(|l| !l.trim().is_empty() || l.is_empty())
        .collect();
    let row = |key: &str| {
        table
            .iter()
            .find(|l| {
                l.trim_start().starts_with(&format!("| {key} "))
                    || l.starts_with(&format!("{key} "))
            })
            .unwrap_or_else(|| panic!("no row {key} in\n{text}"))
            .to_string()
    };
    assert!(text.contains("bound lat.bound"), "{text}");
    assert!(
        row("5").contains("n/a") && row("5").contains("excluded"),
        "{text}"
    );
    // The bound, in the metric's display unit (ms): 20 ms at delay 20.
    assert!(row("20").contains("20"), "{}", row("20"));
    assert!(!row("1").contains("n/a"), "{}", row("1"));
}

/// A perf event the guest could not count shows perf's word where its
/// value would be, never `-` or 0.
#[test]
fn uncounted_perf_events_say_so_in_the_table() {
    use crate::record::bench::{PerfCount, PerfStatus};
    let mut s = testing::before_after(3).unwrap();
    s.manifest.matrix.metrics = vec!["write.lat_mean".into(), "perf.cycles".into()];
    for c in &mut s.cells {
        c.perf = vec![PerfCount {
            event: "cycles".into(),
            status: PerfStatus::NotSupported,
            value: None,
            unit: String::new(),
            reason: Some("cycles event is not supported by the kernel".into()),
        }];
    }
    let d = tempfile::tempdir().unwrap();
    let run = testing::write(d.path(), &s).unwrap();
    let r = load(&run).unwrap();
    let cells = || r.groups.iter().flat_map(|g| &g.cells);
    assert!(
        cells().all(|c| c.uncounted("perf.cycles") == Some("not supported")),
        "{:?}",
        cells().map(|c| &c.uncounted).collect::<Vec<_>>()
    );
    let text = text::render_text(&r).unwrap();
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("perf.cycles"))
        .skip(3)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(table.len(), 4, "{text}");
    assert!(
        table
            .iter()
            .all(|l| l.matches("not supported").count() == 2),
        "{text}"
    );
}

/// A run of one variant has no comparison to withhold a verdict from:
/// a cell measured on a contended host still keeps the run from a clean
/// result (exit 2, named in the outcome); a cell re-run quiet does not.
#[test]
fn a_contended_cell_without_comparison_is_no_clean_result() {
    use crate::record::host::Contention;
    let mut s = testing::dm_delay(&[("before", &[])], 3, testing::measured_ms).unwrap();
    let d = tempfile::tempdir().unwrap();
    let quiet = load(&testing::write(d.path(), &s).unwrap()).unwrap();
    assert_eq!(exit_code(&quiet), 0, "{:?}", quiet.outcome);
    let first = s.cells[0].cell.clone();
    for c in s.cells.iter_mut().filter(|c| c.cell == first) {
        c.contended_attempts = vec![Contention {
            contended: true,
            qemu_wait_pct: Some(14.0),
            ..Contention::default()
        }];
    }
    let retried = load(&testing::write(d.path(), &s).unwrap()).unwrap();
    assert_eq!(exit_code(&retried), 0, "{:?}", retried.outcome);
    for c in s.cells.iter_mut().filter(|c| c.cell == first) {
        c.contention = Some(Contention {
            contended: true,
            qemu_wait_pct: Some(14.0),
            reason: Some("QEMU waited for a CPU 14% of the cell".into()),
            ..Contention::default()
        });
    }
    let r = load(&testing::write(d.path(), &s).unwrap()).unwrap();
    assert_eq!(exit_code(&r), 2);
    assert_eq!(contended_alone(&r).count(), 1);
    assert!(
        r.outcome.incomplete.iter().any(|l| l
            .starts_with("1 of 4 cell(s) without a comparison were measured on a contended host")),
        "{:?}",
        r.outcome.incomplete
    );
}
