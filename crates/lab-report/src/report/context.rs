//! What two runs of a comparison ran on: host CPU and cores, QEMU and
//! its accelerator, guest clocksources, each kernel's config hash and
//! compiler, fio, and the host's load. A change between two runs is
//! only the patch's when these match; a difference is named and flags
//! every compared row.

use crate::results::{CellRecord, Manifest};
use serde::{Deserialize, Serialize};

/// One way the two sides of a comparison differ.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextDiff {
    /// `CPU model`, `QEMU`, `config of x86_64-hz100-after`, ...
    pub what: String,
    pub a: String,
    pub b: String,
}

/// One run's context, each field as a person reads it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Context {
    fields: Vec<(String, String)>,
}

fn list(v: impl IntoIterator<Item = String>) -> String {
    super::build::distinct(v.into_iter().map(|x| x.trim().to_string())).join(", ")
}

/// The median of the host's 1-minute load over a run's cells.
fn median_load(cells: &[CellRecord]) -> Option<f64> {
    let v: Vec<f64> = cells.iter().map(|c| c.host_load[0]).collect();
    super::stats::median(&v)
}

fn context(m: &Manifest, cells: &[CellRecord], kernels: &[String]) -> Context {
    let mut f: Vec<(String, String)> = vec![
        ("CPU model".into(), m.host.cpu_model.clone()),
        ("cores".into(), m.host.cores.to_string()),
        (
            "QEMU".into(),
            list(m.boots.iter().map(|b| b.qemu_version.clone())),
        ),
        (
            "accelerator".into(),
            list(m.boots.iter().map(|b| b.accel.name().to_string())),
        ),
        (
            "clocksource".into(),
            list(
                m.boots
                    .iter()
                    .filter_map(|b| b.probes.as_ref().map(|p| p.clocksource.clone()))
                    .chain(cells.iter().map(|c| c.clocksource_after.clone())),
            ),
        ),
        (
            "fio".into(),
            list(
                m.boots
                    .iter()
                    .filter_map(|b| b.probes.as_ref()?.fio_version.clone()),
            ),
        ),
        (
            "compiler".into(),
            list(m.kernels.values().map(|k| k.compiler.clone())),
        ),
    ];
    for id in kernels {
        let hash = m
            .kernels
            .get(id)
            .map(|k| k.config_hash.clone())
            .unwrap_or_default();
        f.push((
            format!("config of {id}"),
            crate::util::prefix(&hash, 12).to_string(),
        ));
    }
    Context { fields: f }
}

/// How the two runs' contexts differ; empty when they match. Fields a
/// run did not record (an older lab) are not differences.
pub fn differences(
    a: (&Manifest, &[CellRecord]),
    b: (&Manifest, &[CellRecord]),
) -> Vec<ContextDiff> {
    let common: Vec<String> =
        a.0.kernels
            .keys()
            .filter(|k| b.0.kernels.contains_key(*k))
            .cloned()
            .collect();
    let (ca, cb) = (context(a.0, a.1, &common), context(b.0, b.1, &common));
    let mut out: Vec<ContextDiff> = ca
        .fields
        .iter()
        .zip(&cb.fields)
        .filter(|((_, x), (_, y))| !x.is_empty() && !y.is_empty() && x != y)
        .map(|((what, x), (_, y))| ContextDiff {
            what: what.clone(),
            a: x.clone(),
            b: y.clone(),
        })
        .collect();
    // Load: a difference when one side ran above its cores and the
    // other did not, or the medians are a core apart.
    if let (Some(la), Some(lb)) = (median_load(a.1), median_load(b.1)) {
        let over = |l: f64, m: &Manifest| m.host.cores > 0 && l > m.host.cores as f64;
        if over(la, a.0) != over(lb, b.0) || (la - lb).abs() >= 1.0 {
            out.push(ContextDiff {
                what: "host load (median)".into(),
                a: format!("{la:.1}"),
                b: format!("{lb:.1}"),
            });
        }
    }
    out
}

/// One line per difference, for the text report.
pub fn lines(diffs: &[ContextDiff]) -> Vec<String> {
    diffs
        .iter()
        .map(|d| format!("{}: a {} / b {}", d.what, d.a, d.b))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_fields_are_silent_and_load_differs_across_the_core_count() {
        let s = crate::report::testing::before_after(1).unwrap();
        let mut a = s.manifest.clone();
        a.host.cpu_model = "AMD EPYC".into();
        a.host.cores = 2;
        let mut b = a.clone();
        assert!(differences((&a, &s.cells), (&b, &s.cells)).is_empty());
        b.host.cpu_model = "Intel Xeon".into();
        let mut loaded = s.cells.clone();
        for c in &mut loaded {
            c.host_load = [2.6, 1.0, 1.0];
        }
        let mut quiet = s.cells.clone();
        for c in &mut quiet {
            c.host_load = [0.5, 1.0, 1.0];
        }
        let d = differences((&a, &quiet), (&b, &loaded));
        let what: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(what, vec!["CPU model", "host load (median)"]);
        assert_eq!(lines(&d)[0], "CPU model: a AMD EPYC / b Intel Xeon");
    }
}
