//! Plan-time checks of sources, named workloads and derived metrics,
//! each error located at the key that is wrong.

use super::derived::{self, DerivedSpec};
use super::schema::{DerivedDef, Loc, OrderedMap, SourceDef, WorkloadRef};
use super::{Scalar, Source, Workload, err_at, is_id_safe};
use anyhow::Result;
use std::path::Path;

/// A `source:` value as lab builds from it.
pub fn source(path: &Path, dir: &Path, loc: &Loc<SourceDef>) -> Result<Source> {
    Ok(match &loc.value {
        SourceDef::Named(n) => Source::named(n).ok_or_else(|| {
            err_at(
                path,
                loc,
                format!(
                    "unknown source '{n}': use {}, {{tarball: PATH}} or {{git: PATH, ref: REF}}",
                    super::NAMED_SOURCES.join(", ")
                ),
            )
        })?,
        SourceDef::Tarball { tarball } => Source::Tarball {
            path: dir.join(tarball),
            debian_package: None,
        },
        SourceDef::Git { git, git_ref } => Source::Git {
            repo: dir.join(git),
            git_ref: git_ref.clone(),
        },
    })
}

/// `workloads:` in order; a `workload:` that names one must find it.
pub fn workloads(
    path: &Path,
    defs: Option<&Loc<OrderedMap<Workload>>>,
    pick: Option<&Loc<WorkloadRef>>,
) -> Result<Vec<(String, Workload)>> {
    let mut out: Vec<(String, Workload)> = Vec::new();
    if let Some(defs) = defs {
        for (name, w) in &defs.value.0 {
            let n = name.value.to_string();
            if !is_id_safe(&n) {
                return Err(err_at(
                    path,
                    name,
                    format!("workloads.{n}: a name is letters, digits, '.', '_' or '-'"),
                ));
            }
            if out.iter().any(|(o, _)| *o == n) {
                return Err(err_at(
                    path,
                    name,
                    format!("workloads.{n} is declared twice"),
                ));
            }
            out.push((n, w.clone()));
        }
        if pick.is_none() {
            return Err(err_at(
                path,
                defs,
                "workloads: add `workload: \"{{ AXIS }}\"` to pick one per cell, or `workload: NAME`",
            ));
        }
    }
    if let Some(p) = pick
        && let WorkloadRef::Named(n) = &p.value
    {
        if out.is_empty() {
            return Err(err_at(
                path,
                p,
                format!("workload '{n}' names a workload, but there is no `workloads:` map"),
            ));
        }
        if !n.contains("{{") && !out.iter().any(|(o, _)| o == n) {
            return Err(err_at(
                path,
                p,
                format!("workload '{n}' is not in workloads ({})", names(&out)),
            ));
        }
    }
    Ok(out)
}

pub fn names(ws: &[(String, Workload)]) -> String {
    ws.iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The workloads a cell may run: the inline one, or every named one.
fn all_workloads<'a>(
    ws: &'a [(String, Workload)],
    pick: Option<&'a WorkloadRef>,
) -> Vec<&'a Workload> {
    match pick {
        Some(WorkloadRef::Inline(w)) => vec![w],
        _ => ws.iter().map(|(_, w)| w).collect(),
    }
}

/// The unit of a metric some workload of this matrix produces.
fn metric_unit(name: &str, ws: &[&Workload]) -> Option<String> {
    for w in ws {
        match w {
            Workload::Fio(f) => {
                let jobs: Vec<&str> = f.jobs.iter().map(|j| j.name.as_str()).collect();
                let ok = match name.split_once('.') {
                    Some((job, rest)) if jobs.contains(&job) => {
                        derived::fio_metric_unit(rest).is_some()
                    }
                    _ => jobs.is_empty(),
                };
                if ok && let Some(u) = derived::fio_metric_unit(name) {
                    return Some(u.to_string());
                }
            }
            Workload::Command(c) => {
                if let Some(m) = c.metrics.iter().find(|m| m.name == name) {
                    return Some(m.unit.clone());
                }
            }
        }
    }
    None
}

/// Every metric name in `metrics:` and `verdict:` (`gate`,
/// `lower_is_better`) is one the matrix measures: a workload's metric, a
/// derived metric or a perf counter. A typo in `gate` would otherwise
/// switch the CI gate off and let a regression through with exit 0.
pub fn metric_names(path: &Path, text: &str, m: &super::Matrix) -> Result<()> {
    let wls = all_workloads(&m.workloads, m.workload.as_ref());
    let perf: Vec<String> = m
        .perf
        .iter()
        .flat_map(|p| p.events.iter().map(|e| format!("perf.{e}")))
        .collect();
    let known = |n: &str| {
        m.derived.iter().any(|d| d.name == n)
            || perf.iter().any(|p| p == n)
            || metric_unit(n, &wls).is_some()
    };
    let lists: [(&str, &[String]); 3] = [
        ("metrics", &m.metrics),
        ("verdict.gate", &m.verdict.gate),
        ("verdict.lower_is_better", &m.verdict.lower_is_better),
    ];
    for (key, names) in lists {
        for n in names {
            if known(n) {
                continue;
            }
            let shown = crate::util::clip(n, 80);
            // The line of the key, so the message points at the list.
            let leaf = key.rsplit('.').next().unwrap_or(key);
            let line = text
                .lines()
                .position(|l| {
                    l.contains(&format!("{leaf}:")) && (n.is_empty() || l.contains(n.as_str()))
                })
                .or_else(|| text.lines().position(|l| l.contains(&format!("{leaf}:"))))
                .map_or(String::new(), |i| format!(":{}", i + 1));
            let mut near: Vec<String> = m.derived.iter().map(|d| d.name.clone()).collect();
            near.extend(perf.iter().cloned());
            near.extend(
                super::derived::FIO_METRIC_EXAMPLES
                    .iter()
                    .map(|s| s.to_string()),
            );
            near.sort_by_key(|k| strsim::levenshtein(k, n));
            near.truncate(3);
            anyhow::bail!(
                "{}{line}: {key}: '{shown}' is no metric this matrix measures (the nearest: {}); \
                 a fio metric is DIRECTION.NAME such as write.lat_mean or read.iops, or name a \
                 derived metric or perf.EVENT",
                path.display(),
                near.join(", ")
            );
        }
    }
    Ok(())
}

/// Parse, unit-check and order the derived metrics. A derived metric
/// may use metrics, axes and derived metrics written before it.
pub fn derived(
    path: &Path,
    defs: Option<&Loc<OrderedMap<Loc<DerivedDef>>>>,
    axes: &[(String, Vec<Scalar>)],
    ws: &[(String, Workload)],
    pick: Option<&Loc<WorkloadRef>>,
) -> Result<Vec<DerivedSpec>> {
    let mut out: Vec<DerivedSpec> = Vec::new();
    let Some(defs) = defs else { return Ok(out) };
    let wls = all_workloads(ws, pick.map(|p| &p.value));
    for (name, def) in &defs.value.0 {
        let n = name.value.to_string();
        let at = |msg: String| err_at(path, def, format!("derived.{n}: {msg}"));
        if n.is_empty()
            || !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._".contains(c))
            || !n.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            return Err(err_at(
                path,
                name,
                format!(
                    "derived.{n}: a name is letters, digits, '.' and '_', starting with a letter"
                ),
            ));
        }
        if axes.iter().any(|(a, _)| *a == n) || out.iter().any(|d| d.name == n) {
            return Err(err_at(
                path,
                name,
                format!("derived.{n}: the name is taken"),
            ));
        }
        let e = derived::parse(&def.value.0.expr).map_err(at)?;
        let mut metrics = 0;
        for used in e.names() {
            if let Some((_, vals)) = axes.iter().find(|(a, _)| a == used) {
                if let Some(v) = vals.iter().find(|v| v.to_string().parse::<f64>().is_err()) {
                    return Err(at(format!(
                        "axis '{used}' has the value '{v}', which is not a number"
                    )));
                }
            } else if !out.iter().any(|d| d.name == used && d.bound) {
                metrics += 1;
            }
        }
        let unit_of = |u: &str| -> Option<String> {
            if axes.iter().any(|(a, _)| a == u) {
                return Some(String::new());
            }
            if let Some(d) = out.iter().find(|d| d.name == u) {
                return Some(d.unit.clone());
            }
            metric_unit(u, &wls)
        };
        let unit = e.unit(&unit_of).map_err(at)?;
        let unit = match &def.value.0.unit {
            None => unit,
            Some(w) if unit.is_empty() || *w == unit => w.clone(),
            Some(w) => {
                return Err(at(format!("the expression's unit is {unit}, not {w}")));
            }
        };
        out.push(DerivedSpec {
            name: n,
            expr: def.value.0.expr.clone(),
            unit,
            bound: metrics == 0,
        });
    }
    Ok(out)
}
