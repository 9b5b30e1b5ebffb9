//! Sharding: split a plan into N parts that CI jobs run side by side.
//!
//! A shard holds whole kernels: a kernel's boots and cells never leave
//! it, and a patched kernel stays with its `base_kernel`, whose build
//! tree it starts from (18 s instead of 10 min). Groups of kernels are
//! balanced by an estimated cost with the longest-processing-time rule:
//! the most expensive group goes to the least loaded shard, and so on.
//! Everything is deterministic: the same plan gives the same shards, so
//! `lab plan --shards N` and `lab run --shard i/N` agree.

use super::schema::{Scalar, SetupStep, Workload};
use super::{Arch, KernelSpec, Plan};
use anyhow::{Result, bail};
use serde::Serialize;
use std::collections::BTreeSet;

/// A clean kernel build, in seconds (x86_64 measured at 9 min 50 s).
pub fn clean_build_secs(arch: Arch) -> f64 {
    arch.facts().clean_build_secs
}

/// A patched kernel rebuilt from its base kernel's tree.
pub const REBUILD_SECS: f64 = 30.0;

/// Launch to SSH ready under TCG, plus the probes and the shutdown.
pub fn boot_secs(arch: Arch) -> f64 {
    arch.facts().boot_secs
}

/// A cell whose workload says nothing about its length.
pub const CELL_DEFAULT_SECS: f64 = 10.0;

/// A guess at one I/O's latency in a guest under TCG, before any delay a
/// device-mapper delay target adds.
pub const IO_LATENCY_GUESS_SECS: f64 = 0.001;

/// One shard of a plan.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Shard {
    /// From 1.
    pub index: usize,
    pub of: usize,
    /// Kernel ids, in plan order.
    pub kernels: Vec<String>,
    /// Estimated seconds of work: builds, boots and cells.
    pub cost_secs: f64,
}

impl Shard {
    /// `2/4`, as `lab run --shard` takes it.
    pub fn name(&self) -> String {
        format!("{}/{}", self.index, self.of)
    }
}

/// `"2/4"` → `(2, 4)`.
pub fn parse_shard_arg(s: &str) -> Result<(usize, usize)> {
    let t = s.trim();
    let Some((i, n)) = t.split_once('/') else {
        bail!("--shard '{s}': expected INDEX/TOTAL, e.g. 2/4 (the second of four shards)");
    };
    let num = |x: &str, what: &str| -> Result<usize> {
        x.trim().parse::<usize>().map_err(|_| {
            anyhow::anyhow!("--shard '{s}': {what} '{x}' is not a whole number (e.g. 2/4)")
        })
    };
    let i = num(i, "index")?;
    let n = num(n, "total")?;
    if n == 0 || n > 1000 {
        bail!("--shard '{s}': the total must be 1 to 1000");
    }
    if i == 0 || i > n {
        bail!("--shard '{s}': the index counts from 1 to {n}");
    }
    Ok((i, n))
}

/// A number from a scalar: `300`, `"300"`, `"30s"`.
fn scalar_f64(v: &Scalar) -> Option<f64> {
    match v {
        Scalar::Int(i) => Some(*i as f64),
        Scalar::Float(f) => Some(*f),
        Scalar::Str(s) => {
            let t = s.trim();
            t.strip_suffix('s').unwrap_or(t).trim().parse().ok()
        }
        Scalar::Bool(_) => None,
    }
}

/// Estimated seconds of one repetition of a cell.
pub fn cell_secs(cell: &super::CellSpec) -> f64 {
    let Some(Workload::Fio(fio)) = &cell.workload else {
        return CELL_DEFAULT_SECS;
    };
    if let Some(r) = fio.runtime.as_ref().and_then(scalar_f64) {
        return r;
    }
    let Some(ios) = fio.number_ios.as_ref().and_then(scalar_f64) else {
        return CELL_DEFAULT_SECS;
    };
    // A dm delay target adds its delay to every I/O.
    let delay_ms = cell
        .setup
        .iter()
        .filter_map(|s| match s {
            SetupStep::Dm(dm) => match super::DmTarget::from_def(dm) {
                Ok(super::DmTarget::Delay {
                    read_ms, write_ms, ..
                }) => {
                    let r = scalar_f64(&read_ms).unwrap_or(0.0);
                    let w = write_ms.as_ref().and_then(scalar_f64).unwrap_or(0.0);
                    Some(r.max(w))
                }
                _ => None,
            },
            _ => None,
        })
        .sum::<f64>();
    ios * (IO_LATENCY_GUESS_SECS + delay_ms / 1000.0)
}

/// Estimated seconds for one kernel: its build, and every scheduled boot
/// of it with that boot's cells.
pub fn kernel_cost(plan: &Plan, k: &KernelSpec) -> f64 {
    build_secs(plan, k) + boot_cost(plan, k)
}

/// Estimated seconds to build one kernel: a clean build, or a rebuild
/// of the touched files on its base kernel's objects.
pub fn build_secs(plan: &Plan, k: &KernelSpec) -> f64 {
    let rebuild = k
        .base_kernel
        .as_deref()
        .is_some_and(|b| plan.kernel(b).is_some());
    if rebuild {
        REBUILD_SECS
    } else {
        clean_build_secs(k.arch)
    }
}

/// Estimated seconds of every scheduled boot of one kernel, with its cells.
pub fn boot_cost(plan: &Plan, k: &KernelSpec) -> f64 {
    plan.schedule
        .iter()
        .filter_map(|s| plan.boot(&s.boot))
        .filter(|b| b.kernel == k.id)
        .map(|b| boot_secs(b.arch) + plan.cells_of_boot(&b.id).map(cell_secs).sum::<f64>())
        .sum()
}

/// Kernels that must share a shard: each with its base kernel, as plan
/// indices, groups in order of their first kernel.
fn groups(plan: &Plan) -> Vec<Vec<usize>> {
    let n = plan.kernels.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for (i, k) in plan.kernels.iter().enumerate() {
        if let Some(b) = &k.base_kernel
            && let Some(j) = plan.kernels.iter().position(|o| &o.id == b)
        {
            let (ri, rj) = (find(&mut parent, i), find(&mut parent, j));
            // The smaller index is the root, so a group's root is its first kernel.
            parent[ri.max(rj)] = ri.min(rj);
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut root_of_group: Vec<usize> = Vec::new();
    for i in 0..n {
        let r = find(&mut parent, i);
        match root_of_group.iter().position(|&x| x == r) {
            Some(g) => out[g].push(i),
            None => {
                root_of_group.push(r);
                out.push(vec![i]);
            }
        }
    }
    out
}

/// Split `plan` into `n` shards (`n` below 1 counts as 1). Shards beyond
/// the number of kernel groups stay empty, and keep their numbers.
pub fn shard(plan: &Plan, n: usize) -> Vec<Shard> {
    let n = n.max(1);
    let costs: Vec<f64> = plan.kernels.iter().map(|k| kernel_cost(plan, k)).collect();
    let mut groups: Vec<(f64, Vec<usize>)> = groups(plan)
        .into_iter()
        .map(|g| (g.iter().map(|&i| costs[i]).sum(), g))
        .collect();
    // Most expensive first; ties keep plan order (the sort is stable).
    groups.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut load = vec![0.0f64; n];
    let mut members: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for (cost, g) in groups {
        let (least, _) = load
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(b.1).then(a.0.cmp(&b.0)))
            .expect("n >= 1");
        load[least] += cost;
        members[least].extend(g);
    }
    members
        .into_iter()
        .zip(load)
        .enumerate()
        .map(|(i, (m, cost))| Shard {
            index: i + 1,
            of: n,
            kernels: m.into_iter().map(|k| plan.kernels[k].id.clone()).collect(),
            cost_secs: cost,
        })
        .collect()
}

/// The sub-plan of shard `i` of `n`: its kernels, their boots, their
/// cells and their part of the schedule, in the full plan's order. An
/// index outside 1..=n selects nothing.
pub fn select(plan: &Plan, i: usize, n: usize) -> Plan {
    let kernels: BTreeSet<String> = shard(plan, n)
        .into_iter()
        .find(|s| s.index == i)
        .map(|s| s.kernels.into_iter().collect())
        .unwrap_or_default();
    let mut p = plan.clone();
    p.kernels.retain(|k| kernels.contains(&k.id));
    p.boots.retain(|b| kernels.contains(&b.kernel));
    p.cells.retain(|c| kernels.contains(&c.kernel));
    let boots: BTreeSet<&str> = p.boots.iter().map(|b| b.id.as_str()).collect();
    p.schedule.retain(|s| boots.contains(s.boot.as_str()));
    p
}

/// A GitHub Actions `strategy.matrix`: one `include` row per non-empty
/// shard, `{"shard": "1/4", "kernels": "a b", "cost": 1234}`.
pub fn github_matrix(shards: &[Shard]) -> serde_json::Value {
    let include: Vec<serde_json::Value> = shards
        .iter()
        .filter(|s| !s.kernels.is_empty())
        .map(|s| {
            serde_json::json!({
                "shard": s.name(),
                "kernels": s.kernels.join(" "),
                "cost": s.cost_secs.round() as u64,
            })
        })
        .collect();
    serde_json::json!({ "include": include })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Matrix;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    fn dm_delay() -> Plan {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("matrices/dm-delay.yaml");
        Matrix::load(&path).unwrap().plan().unwrap()
    }

    #[test]
    fn dm_delay_in_four_shards_covers_all_12_kernels_exactly_once() {
        let plan = dm_delay();
        assert_eq!(plan.kernels.len(), 12);
        let shards = shard(&plan, 4);
        assert_eq!(shards.len(), 4);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for s in &shards {
            assert_eq!(s.of, 4);
            assert!(!s.kernels.is_empty(), "shard {} is empty", s.name());
            for k in &s.kernels {
                *seen.entry(k.clone()).or_default() += 1;
            }
        }
        let all: BTreeSet<String> = plan.kernels.iter().map(|k| k.id.clone()).collect();
        assert_eq!(seen.keys().cloned().collect::<BTreeSet<_>>(), all);
        assert!(seen.values().all(|&c| c == 1), "{seen:?}");
        assert_eq!(
            shards.iter().map(|s| s.index).collect::<Vec<_>>(),
            [1, 2, 3, 4]
        );

        // The GitHub matrix says the same.
        let gm = github_matrix(&shards);
        let rows = gm["include"].as_array().unwrap();
        assert_eq!(rows.len(), 4);
        let mut from_json: Vec<String> = rows
            .iter()
            .flat_map(|r| {
                r["kernels"]
                    .as_str()
                    .unwrap()
                    .split(' ')
                    .map(String::from)
                    .collect::<Vec<_>>()
            })
            .collect();
        from_json.sort();
        assert_eq!(from_json, all.iter().cloned().collect::<Vec<_>>());
        assert_eq!(rows[0]["shard"], "1/4");
        assert!(rows[0]["cost"].as_u64().unwrap() > 600);
    }

    #[test]
    fn a_patched_kernel_stays_with_its_base() {
        let plan = dm_delay();
        for n in 1..=13 {
            let shards = shard(&plan, n);
            assert_eq!(shards.len(), n);
            for k in &plan.kernels {
                let Some(base) = &k.base_kernel else { continue };
                let home = shards.iter().find(|s| s.kernels.contains(&k.id)).unwrap();
                assert!(home.kernels.contains(base), "{} left {base} at n={n}", k.id);
            }
            // Six (arch, hz) pairs: never more than six non-empty shards.
            let used = shards.iter().filter(|s| !s.kernels.is_empty()).count();
            assert_eq!(used, n.min(6), "n={n}");
        }
    }

    #[test]
    fn sharding_is_deterministic_and_balanced() {
        let plan = dm_delay();
        let a = shard(&plan, 4);
        let b = shard(&dm_delay(), 4);
        assert_eq!(a, b);
        // The total cost is the plan's, whatever the split.
        let total: f64 = plan.kernels.iter().map(|k| kernel_cost(&plan, k)).sum();
        let sum: f64 = a.iter().map(|s| s.cost_secs).sum();
        assert!((total - sum).abs() < 1e-6);
        // LPT leaves two shards no further apart than the largest group.
        let two = shard(&plan, 2);
        let largest = plan
            .kernels
            .iter()
            .filter(|k| k.id.starts_with("x86_64-hz100-"))
            .map(|k| kernel_cost(&plan, k))
            .sum::<f64>();
        assert!((two[0].cost_secs - two[1].cost_secs).abs() <= largest);
        // Costs follow the model: a clean x86_64 build, a 30 s rebuild,
        // and 3 boots with 4 cells of 300 I/Os each.
        let before = plan.kernel("x86_64-hz100-before").unwrap();
        let after = plan.kernel("x86_64-hz100-after").unwrap();
        let cells: f64 = [1.0, 2.0, 5.0, 20.0]
            .iter()
            .map(|d| 300.0 * (IO_LATENCY_GUESS_SECS + d / 1000.0))
            .sum();
        let runs = 3.0 * (15.0 + cells);
        assert!((kernel_cost(&plan, before) - (600.0 + runs)).abs() < 1e-6);
        assert!((kernel_cost(&plan, after) - (30.0 + runs)).abs() < 1e-6);
    }

    #[test]
    fn select_gives_each_shard_its_kernels_boots_cells_and_schedule() {
        let plan = dm_delay();
        let n = 4;
        let mut kernels = 0;
        let mut cells = BTreeSet::new();
        let mut schedule = 0;
        for s in shard(&plan, n) {
            let sub = select(&plan, s.index, n);
            assert_eq!(
                sub.kernels.iter().map(|k| k.id.clone()).collect::<Vec<_>>(),
                s.kernels
            );
            for b in &sub.boots {
                assert!(s.kernels.contains(&b.kernel));
            }
            for c in &sub.cells {
                assert!(sub.boot(&c.boot).is_some());
                assert!(cells.insert(c.id.clone()), "cell {} twice", c.id);
            }
            for e in &sub.schedule {
                assert!(sub.boot(&e.boot).is_some());
            }
            // Interleaving survives: rep 1 of every boot before rep 2.
            let reps: Vec<u32> = sub.schedule.iter().map(|e| e.rep).collect();
            let mut sorted = reps.clone();
            sorted.sort();
            assert_eq!(reps, sorted);
            kernels += sub.kernels.len();
            schedule += sub.schedule.len();
            assert_eq!(sub.matrix, plan.matrix);
            assert_eq!(sub.repetitions, plan.repetitions);
        }
        assert_eq!(kernels, plan.kernels.len());
        assert_eq!(cells.len(), plan.cells.len());
        assert_eq!(schedule, plan.schedule.len());
        assert!(select(&plan, 5, 4).kernels.is_empty());
        assert!(select(&plan, 0, 4).cells.is_empty());
    }

    #[test]
    fn a_filtered_plan_keeps_the_base_kernel_in_the_shard() {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("matrices/dm-delay.yaml");
        let m = Matrix::load(&path).unwrap();
        let f = crate::matrix::Filter::parse("variant=after,arch=x86_64").unwrap();
        let plan = f.apply(&m.plan().unwrap());
        let shards = shard(&plan, 3);
        for s in &shards {
            assert_eq!(s.kernels.len(), 2, "{s:?}");
            let sub = select(&plan, s.index, 3);
            // The base is there to build, without boots of its own.
            assert_eq!(sub.boots.len(), 1);
            assert_eq!(sub.cells.len(), 4);
        }
    }

    #[test]
    fn shard_arguments_are_checked() {
        assert_eq!(parse_shard_arg("2/4").unwrap(), (2, 4));
        assert_eq!(parse_shard_arg(" 1/1 ").unwrap(), (1, 1));
        let err = |s: &str| parse_shard_arg(s).unwrap_err().to_string();
        assert!(err("2").contains("expected INDEX/TOTAL"), "{}", err("2"));
        assert!(err("0/4").contains("counts from 1 to 4"));
        assert!(err("5/4").contains("counts from 1 to 4"));
        assert!(err("1/0").contains("must be 1 to 1000"));
        assert!(err("1/1001").contains("must be 1 to 1000"));
        assert!(err("a/4").contains("index 'a' is not a whole number"));
        assert!(err("1/4/2").contains("total '4/2' is not a whole number"));
    }

    #[test]
    fn cell_cost_reads_runtime_number_ios_or_falls_back() {
        let plan = dm_delay();
        let c = plan
            .cells
            .iter()
            .find(|c| c.id.ends_with("delay=20"))
            .unwrap();
        assert!((cell_secs(c) - 300.0 * (IO_LATENCY_GUESS_SECS + 0.020)).abs() < 1e-9);
        let mut timed = c.clone();
        if let Some(Workload::Fio(f)) = &mut timed.workload {
            f.runtime = Some(Scalar::Str("30s".into()));
        }
        assert_eq!(cell_secs(&timed), 30.0);
        let mut bare = c.clone();
        bare.workload = None;
        assert_eq!(cell_secs(&bare), CELL_DEFAULT_SECS);
    }
}
