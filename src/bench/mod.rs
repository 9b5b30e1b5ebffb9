//! Workloads: fio jobs built from the matrix, and the metrics parsed
//! from what fio (or a plain command) printed.

pub use crate::record::bench::Metric;
use crate::record::{RunFlag, RunFlagKind};
pub mod fio;
#[cfg(test)]
mod matrix_tests;
pub mod perf;

/// Add the cell's derived metrics, each from the metrics before it and
/// the cell's axis values. One that cannot be computed (a metric the
/// workload did not produce, a division by zero) is flagged, not zero.
pub fn derive(ms: &mut Vec<Metric>, cell: &crate::matrix::CellSpec, flags: &mut Vec<RunFlag>) {
    for d in &cell.derived {
        let Ok(e) = crate::matrix::derived::parse(&d.expr) else {
            flags.push(RunFlag::new(
                RunFlagKind::Derived,
                format!("derived {}: '{}' does not parse", d.name, d.expr),
            ));
            continue;
        };
        let get = |n: &str| -> Option<f64> {
            if let Some(m) = ms.iter().find(|m| m.name == n) {
                return Some(m.value);
            }
            if let Some(v) = cell.axes.get(n) {
                return v.to_string().parse().ok();
            }
            fio::zero_when_idle(n).then_some(0.0)
        };
        match e.eval(&get) {
            Ok(v) => ms.push(Metric::new(&d.name, v, &d.unit)),
            Err(why) => flags.push(RunFlag::new(
                RunFlagKind::Derived,
                format!("derived {} = {}: {why}", d.name, d.expr),
            )),
        }
    }
}

/// Metrics from a command's output: each regex's first capture group.
pub fn command_metrics(
    def: &crate::matrix::schema::CommandDef,
    stdout: &str,
) -> anyhow::Result<Vec<Metric>> {
    let mut out = Vec::new();
    for m in &def.metrics {
        let re = regex::Regex::new(&m.regex)
            .map_err(|e| anyhow::anyhow!("metric {}: bad regex '{}': {e}", m.name, m.regex))?;
        let caps = re.captures(stdout).ok_or_else(|| {
            anyhow::anyhow!(
                "metric {}: regex '{}' matched nothing in the command's output",
                m.name,
                m.regex
            )
        })?;
        let text = caps
            .get(1)
            .or_else(|| caps.get(0))
            .map(|c| c.as_str())
            .unwrap_or("");
        let v: f64 = text
            .trim()
            .parse()
            .map_err(|_| anyhow::anyhow!("metric {}: '{}' is not a number", m.name, text))?;
        out.push(Metric::new(&m.name, v * m.scale.unwrap_or(1.0), &m.unit));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::schema::{CommandDef, CommandMetricDef};

    #[test]
    fn command_metrics_use_the_first_capture_and_scale() {
        let def = CommandDef {
            run: "x".into(),
            metrics: vec![CommandMetricDef {
                name: "copy".into(),
                regex: r"copied, ([0-9.]+) s".into(),
                unit: "ns".into(),
                scale: Some(1e9),
            }],
        };
        let m =
            command_metrics(&def, "10+0 records\n40960 bytes copied, 0.25 s, 160 kB/s\n").unwrap();
        assert_eq!(m, vec![Metric::new("copy", 0.25e9, "ns")]);
        let e = command_metrics(&def, "nothing").unwrap_err().to_string();
        assert!(e.contains("matched nothing"), "{e}");
    }
}
