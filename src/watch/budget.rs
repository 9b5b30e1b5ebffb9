//! How much of a draft the robot runs. A draft's estimated cost (the
//! shard cost model of `lab plan --shards`, with kernels already in the
//! cache costing no build) must fit a per-mail limit; if it does not,
//! the draft is cut to a slice by fixing axes one at a time, keeping as
//! many bound claim values as possible. The per-day limit is checked by
//! the caller against what was granted today. Pure.

use crate::matrix::{Filter, Plan, shard};
use std::collections::BTreeSet;

/// The budget's answer for one draft.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Run it, whole (`filter` None) or cut to the slice `filter`.
    Run {
        filter: Option<String>,
        estimate_secs: f64,
        /// Bound claim values the run measures, of `of`.
        values: usize,
        of: usize,
        /// What was cut, for the state and the reply.
        note: String,
    },
    /// No slice fits, or none keeps a claim value.
    Wait(String),
}

/// Estimated seconds to run `plan`, `cached` kernel ids costing no build.
pub fn cost(plan: &Plan, cached: &BTreeSet<String>) -> f64 {
    plan.kernels
        .iter()
        .map(|k| {
            let build = if cached.contains(&k.id) {
                0.0
            } else {
                shard::build_secs(plan, k)
            };
            build + shard::boot_cost(plan, k)
        })
        .sum()
}

/// The slice of `plan` to run within `per_mail` seconds. `values` holds,
/// for each bound claim value, the cells that can judge it; a value
/// counts as kept when a slice keeps one of them.
pub fn decide(
    plan: &Plan,
    values: &[Vec<String>],
    cached: &BTreeSet<String>,
    per_mail: f64,
) -> Decision {
    let kept = |p: &Plan| {
        let cells: BTreeSet<&str> = p.cells.iter().map(|c| c.id.as_str()).collect();
        values
            .iter()
            .filter(|v| v.iter().any(|c| cells.contains(c.as_str())))
            .count()
    };
    let whole = cost(plan, cached);
    let all = kept(plan);
    if whole <= per_mail {
        return Decision::Run {
            filter: None,
            estimate_secs: whole,
            values: all,
            of: values.len(),
            note: String::new(),
        };
    }
    // Every slice that fixes some axes to one value each, when there are
    // few enough to try them all; beyond that, the slices along a greedy
    // path (fix the axis value that keeps the most, most cheaply).
    let many: Vec<(String, Vec<String>)> = axes(plan)
        .into_iter()
        .filter(|(_, v)| v.len() > 1)
        .collect();
    let combos = many
        .iter()
        .try_fold(1usize, |n, (_, v)| n.checked_mul(v.len() + 1))
        .filter(|&n| n <= MAX_SLICES);
    let candidates = match combos {
        Some(_) => all_slices(&many),
        None => greedy_slices(plan, &many, &kept, cached),
    };
    let mut best: Option<(usize, usize, f64, Slice)> = None;
    for f in candidates.into_iter().filter(|f| !f.is_empty()) {
        let p = slice(plan, &f);
        let c = cost(&p, cached);
        if c > per_mail || p.cells.is_empty() {
            continue;
        }
        let key = (kept(&p), p.cells.len(), c);
        let better = match &best {
            None => true,
            Some((k, n, bc, _)) => {
                (key.0, key.1) > (*k, *n) || ((key.0, key.1) == (*k, *n) && c < *bc)
            }
        };
        if better {
            best = Some((key.0, key.1, c, f));
        }
    }
    let Some((k, _, c, fixed)) = best else {
        return Decision::Wait(format!(
            "estimated {} whole, over the per-mail budget of {}, and no slice fits it",
            crate::util::human_secs(whole),
            crate::util::human_secs(per_mail)
        ));
    };
    if k == 0 && all > 0 {
        return Decision::Wait(format!(
            "estimated {} whole, over the per-mail budget of {}, and no slice within it measures a claimed value",
            crate::util::human_secs(whole),
            crate::util::human_secs(per_mail)
        ));
    }
    let filter = fixed
        .iter()
        .map(|(a, v)| format!("{a}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    Decision::Run {
        note: format!(
            "cut to {filter}: the whole draft is estimated at {}, over the per-mail budget of {}; the slice measures {k} of {all} bound value(s)",
            crate::util::human_secs(whole),
            crate::util::human_secs(per_mail)
        ),
        filter: Some(filter),
        estimate_secs: c,
        values: k,
        of: values.len(),
    }
}

/// Axes fixed to one value each: `[("arch", "x86_64")]`.
type Slice = Vec<(String, String)>;

/// More slices than this are not tried one by one.
const MAX_SLICES: usize = 4096;

/// Every choice of "this axis is free, or fixed to one of its values".
fn all_slices(axes: &[(String, Vec<String>)]) -> Vec<Slice> {
    let mut out: Vec<Slice> = vec![vec![]];
    for (a, vals) in axes {
        let mut next = Vec::with_capacity(out.len() * (vals.len() + 1));
        for f in &out {
            next.push(f.clone());
            for v in vals {
                let mut g = f.clone();
                g.push((a.clone(), v.clone()));
                next.push(g);
            }
        }
        out = next;
    }
    out
}

/// Slices along one path: each step fixes the axis value that keeps the
/// most claimed values, the cheapest first.
fn greedy_slices(
    plan: &Plan,
    axes: &[(String, Vec<String>)],
    kept: &dyn Fn(&Plan) -> usize,
    cached: &BTreeSet<String>,
) -> Vec<Slice> {
    let mut fixed: Slice = Vec::new();
    let mut out = Vec::new();
    for _ in axes {
        let mut best: Option<(usize, f64, (String, String))> = None;
        for (a, vals) in axes {
            if fixed.iter().any(|(x, _)| x == a) {
                continue;
            }
            for v in vals {
                let mut f = fixed.clone();
                f.push((a.clone(), v.clone()));
                let p = slice(plan, &f);
                let (k, c) = (kept(&p), cost(&p, cached));
                if best
                    .as_ref()
                    .is_none_or(|(bk, bc, _)| k > *bk || (k == *bk && c < *bc))
                {
                    best = Some((k, c, (a.clone(), v.clone())));
                }
            }
        }
        let Some((_, _, pick)) = best else { break };
        fixed.push(pick);
        out.push(fixed.clone());
    }
    out
}

/// Every axis of the plan's cells but `variant` (a slice keeps both
/// sides of the comparison), with its values in plan order.
fn axes(plan: &Plan) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for c in &plan.cells {
        for (k, v) in &c.axes.0 {
            if k == "variant" {
                continue;
            }
            let v = v.to_string();
            match out.iter_mut().find(|(a, _)| a == k) {
                Some((_, vals)) if !vals.contains(&v) => vals.push(v),
                Some(_) => {}
                None => out.push((k.to_string(), vec![v])),
            }
        }
    }
    out
}

fn slice(plan: &Plan, fixed: &[(String, String)]) -> Plan {
    Filter(
        fixed
            .iter()
            .map(|(a, v)| (a.clone(), vec![v.clone()]))
            .collect(),
    )
    .apply(plan)
}

/// Today, as the per-day budget counts it (UTC).
pub fn today() -> String {
    chrono::Utc::now().format("%Y-%m-%d").to_string()
}

/// `90`, `90s`, `30m`, `2h`, `1d`: seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, 's')) => (&t[..i], 1.0),
        Some((i, 'm')) => (&t[..i], 60.0),
        Some((i, 'h')) => (&t[..i], 3600.0),
        Some((i, 'd')) => (&t[..i], 86400.0),
        _ => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 && n * mult <= 366.0 * 86400.0 => Ok(n * mult),
        _ => Err(format!(
            "'{s}': give seconds, or a number with s, m, h or d (30m, 2h)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("m.yaml");
        std::fs::write(&p, text).unwrap();
        crate::matrix::Matrix::load(&p).unwrap().plan().unwrap()
    }

    const M: &str = "version: 1
name: b
kernel: {source: debian-6.12, fragments: [base]}
variants: [{name: before}, {name: after}]
kernel_axes: {arch: [arm64, x86_64], hz: {100: [hz100]}}
boot: {cpus: 1, memory: 1024, null_blk: {nr_devices: 1, gb: 1, memory_backed: 1, queue_mode: 2, irqmode: 0}}
run_axes: {delay: [1, 2, 5, 20]}
setup:
  - dm: {name: d, target: delay, device: /dev/nullb0, read_ms: '{{ delay }}', write_ms: '{{ delay }}'}
workload:
  fio: {filename: /dev/mapper/d, rw: write, bs: 4k, direct: 1, ioengine: psync, number_ios: 300}
metrics: [write.lat_mean]
repetitions: 3
";

    fn cells(p: &Plan, arch: &str, delay: &str) -> Vec<String> {
        p.cells
            .iter()
            .filter(|c| {
                c.axes.get("arch").map(|v| v.to_string()).as_deref() == Some(arch)
                    && c.axes.get("delay").map(|v| v.to_string()).as_deref() == Some(delay)
            })
            .map(|c| c.id.clone())
            .collect()
    }

    #[test]
    fn a_draft_over_budget_is_cut_to_the_cached_slice_that_keeps_claims() {
        let p = plan(M);
        let cached: BTreeSet<String> = p
            .kernels
            .iter()
            .filter(|k| k.arch.name() == "x86_64")
            .map(|k| k.id.clone())
            .collect();
        // Claimed: arm64 at 4 delays (the mail), x86_64 at delay 1 (a reply).
        let mut values: Vec<Vec<String>> = ["1", "2", "5", "20"]
            .iter()
            .map(|d| cells(&p, "arm64", d))
            .collect();
        values.push(cells(&p, "x86_64", "1"));
        let whole = cost(&p, &cached);
        // All four x86_64 delays are about 148 s; delay 1 alone about 95 s.
        let per_mail = 120.0;
        assert!(whole > per_mail, "{whole}");
        match decide(&p, &values, &cached, per_mail) {
            Decision::Run {
                filter,
                estimate_secs,
                values: kept,
                ..
            } => {
                assert_eq!(filter.as_deref(), Some("arch=x86_64,delay=1"));
                assert!(estimate_secs <= per_mail);
                assert_eq!(kept, 1);
            }
            d => panic!("{d:?}"),
        }
        // Nothing cached and a tiny budget: no slice fits; it waits.
        let none = BTreeSet::new();
        assert!(matches!(
            decide(&p, &values, &none, 60.0),
            Decision::Wait(_)
        ));
        // A budget for everything: the whole draft, uncut.
        match decide(&p, &values, &none, 1e9) {
            Decision::Run { filter, values, .. } => {
                assert_eq!(filter, None);
                assert_eq!(values, 5);
            }
            d => panic!("{d:?}"),
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), 90.0);
        assert_eq!(parse_duration("30m").unwrap(), 1800.0);
        assert_eq!(parse_duration("2h").unwrap(), 7200.0);
        assert!(parse_duration("-1").is_err() && parse_duration("1y").is_err());
    }
}
