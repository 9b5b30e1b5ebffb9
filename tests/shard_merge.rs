//! Scale-out end to end, without VMs: the dm-delay matrix cut into four
//! shards, each shard "run" into its own results directory (cell files
//! written through the RunDir API, as `lab run --shard i/4` writes them),
//! the directories laid out as a CI artifact download leaves them, then
//! merged back into one run that holds the whole plan exactly once.

use lab::bench::Metric;
use lab::matrix::shard::{self, parse_shard_arg};
use lab::matrix::{Filter, Matrix, Plan};
use lab::results::{
    CellRecord, CellStatus, LAB_VERSION, Manifest, MatrixInfo, RunDir, merge::merge,
};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn matrix_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("matrices/dm-delay.yaml")
}

fn manifest(m: &Matrix, plan: Plan, filter: Option<&str>, shard: &str) -> Manifest {
    Manifest {
        schema_version: lab::results::MANIFEST_SCHEMA,
        lab_version: LAB_VERSION.into(),
        run_id: String::new(),
        created: lab::util::now_rfc3339(),
        matrix: MatrixInfo::of(m, filter.map(String::from), Some(shard.into())),
        plan,
        host: Default::default(),
        kernels: Default::default(),
        images: Default::default(),
        boots: vec![],
        claim_sources: vec![],
    }
}

/// What `lab run --shard i/N --results <root>/shard-i` leaves behind.
fn run_shard(root: &Path, m: &Matrix, plan: &Plan, filter: Option<&str>, arg: &str) -> RunDir {
    let (i, n) = parse_shard_arg(arg).unwrap();
    let sub = shard::select(plan, i, n);
    let run = RunDir::create(&root.join(format!("shard-{i}")), &m.name).unwrap();
    run.write_manifest(&manifest(m, sub.clone(), filter, arg))
        .unwrap();
    for s in &sub.schedule {
        for c in sub.cells_of_boot(&s.boot) {
            run.write_cell(&CellRecord {
                cell: c.id.clone(),
                rep: s.rep,
                boot: c.boot.clone(),
                kernel: c.kernel.clone(),
                variant: c.variant.clone(),
                arch: c.arch.to_string(),
                axes: c.axes.clone(),
                status: CellStatus::Done,
                error: None,
                started: lab::util::now_rfc3339(),
                secs: 1.0,
                host_load: [0.0; 3],
                host_cores: 2,
                clocksource_before: "tsc".into(),
                clocksource_after: "tsc".into(),
                knobs: vec![],
                steps: vec![],
                metrics: vec![Metric::new("write.lat_mean", 1e6, "ns")],
                fio_json: None,
                flags: vec![],
                contention: None,
                contended_attempts: vec![],
                guest_secs: None,
                perf: vec![],
            })
            .unwrap();
        }
    }
    run
}

#[test]
fn four_shards_of_dm_delay_merge_into_the_whole_plan() {
    let m = Matrix::load(&matrix_path()).unwrap();
    let plan = m.plan().unwrap();
    let d = tempfile::tempdir().unwrap();
    let shards = shard::shard(&plan, 4);
    assert_eq!(shards.len(), 4);
    let mut dirs = Vec::new();
    for s in &shards {
        let run = run_shard(d.path(), &m, &plan, None, &s.name());
        assert_eq!(
            run.read_manifest().unwrap().plan.kernels.len(),
            s.kernels.len()
        );
        dirs.push(d.path().join(format!("shard-{}", s.index)));
    }
    let merged = merge(&dirs, &d.path().join("merged")).unwrap();
    let mm = merged.read_manifest().unwrap();
    let ids = |p: &Plan| p.kernels.iter().map(|k| k.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&mm.plan), ids(&plan));
    assert_eq!(mm.plan.cells.len(), 48);
    assert_eq!(mm.plan.schedule, plan.schedule);
    assert_eq!(mm.matrix.shard, None);
    // Every cell of every repetition exactly once.
    let cells = merged.cells().unwrap();
    let pairs: BTreeSet<(String, u32)> = cells.iter().map(|c| (c.cell.clone(), c.rep)).collect();
    assert_eq!(cells.len(), 48 * 3);
    assert_eq!(pairs.len(), 48 * 3);
    assert_eq!(merged.records().unwrap().len(), 48 * 3);
}

#[test]
fn a_filtered_sharded_run_merges_and_a_missing_shard_leaves_a_hole() {
    let m = Matrix::load(&matrix_path()).unwrap();
    let filter = "arch=x86_64";
    let f = Filter::parse(filter).unwrap();
    let plan = f.apply(&m.plan().unwrap());
    assert_eq!(plan.kernels.len(), 6);
    let d = tempfile::tempdir().unwrap();
    let a = run_shard(d.path(), &m, &plan, Some(filter), "1/3");
    let b = run_shard(d.path(), &m, &plan, Some(filter), "2/3");
    // Shard 3 never reported; the merge still goes through, with its
    // kernels absent, so the report shows their cells as missing.
    let merged = merge(&[a.path.clone(), b.path.clone()], &d.path().join("out")).unwrap();
    let mm = merged.read_manifest().unwrap();
    assert_eq!(mm.plan.kernels.len(), 4);
    assert_eq!(mm.matrix.filter.as_deref(), Some(filter));
    let third = shard::select(&plan, 3, 3);
    for k in &third.kernels {
        assert!(mm.plan.kernel(&k.id).is_none());
    }
    // The unfiltered shard of another run does not merge with these.
    let c = run_shard(&d.path().join("other"), &m, &m.plan().unwrap(), None, "3/3");
    let e = merge(&[a.path.clone(), c.path.clone()], &d.path().join("out2")).unwrap_err();
    assert!(
        e.to_string().contains("only shards of one filter merge"),
        "{e}"
    );
}
