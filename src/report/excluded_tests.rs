//! Excluded combinations show as `n/a`, and a derived bound is printed
//! beside the metric of its unit.

use super::testing;
use super::*;
use crate::bench::Metric;
use crate::matrix::Scalar;
use crate::matrix::derived::DerivedSpec;

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
