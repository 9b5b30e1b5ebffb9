use super::*;
use crate::matrix::Scalar;

fn cell(id: &str, rep: u32, status: CellStatus, value: f64) -> CellRecord {
    CellRecord {
        cell: id.into(),
        rep,
        boot: "b".into(),
        kernel: "k".into(),
        variant: "before".into(),
        arch: "x86_64".into(),
        axes: AxisValues(vec![("delay".into(), Scalar::Int(1))]),
        status,
        error: None,
        started: "t".into(),
        secs: 1.0,
        host_load: [0.1, 0.2, 0.3],
        host_cores: 2,
        clocksource_before: "tsc".into(),
        clocksource_after: "tsc".into(),
        knobs: vec![],
        steps: vec![],
        metrics: vec![
            Metric::new("write.lat_mean", value, "ns"),
            Metric::new("write.iops", 100.0, "IOPS"),
        ],
        fio_json: None,
        flags: vec![],
        contention: None,
        contended_attempts: vec![],
        guest_secs: None,
        perf: vec![],
    }
}

#[test]
fn resume_bookkeeping_counts_done_and_failed_and_reruns_interrupted() {
    let d = tempfile::tempdir().unwrap();
    let run = RunDir::create(d.path(), "m").unwrap();
    run.write_cell(&cell("k:delay=1", 1, CellStatus::Done, 1e6))
        .unwrap();
    run.write_cell(&cell("k:delay=1", 2, CellStatus::Failed, 0.0))
        .unwrap();
    run.write_cell(&cell("k:delay=2", 1, CellStatus::Interrupted, 0.0))
        .unwrap();
    let (done, failed) = run.finished().unwrap();
    assert_eq!(
        done.into_iter().collect::<Vec<_>>(),
        vec![("k:delay=1".to_string(), 1)]
    );
    assert_eq!(
        failed.into_iter().collect::<Vec<_>>(),
        vec![("k:delay=1".to_string(), 2)]
    );
    // Only finished cells contribute records: two metrics of one cell.
    assert_eq!(run.write_records().unwrap(), 2);
    let recs = run.records().unwrap();
    assert_eq!(recs[0].metric, "write.lat_mean");
    assert_eq!(recs[0].axes.get("delay"), Some(&Scalar::Int(1)));
}

#[test]
fn a_rewritten_cell_replaces_the_old_one() {
    let d = tempfile::tempdir().unwrap();
    let run = RunDir::create(d.path(), "m").unwrap();
    run.write_cell(&cell("c", 1, CellStatus::Failed, 0.0))
        .unwrap();
    run.write_cell(&cell("c", 1, CellStatus::Done, 5.0))
        .unwrap();
    let cells = run.cells().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0].status, CellStatus::Done);
}

#[test]
fn run_ids_are_unique_and_open_by_id_or_path() {
    let d = tempfile::tempdir().unwrap();
    let a = RunDir::create(d.path(), "m").unwrap();
    let b = RunDir::create(d.path(), "m").unwrap();
    assert_ne!(a.path, b.path);
    std::fs::write(a.manifest_path(), "{}").unwrap();
    assert_eq!(RunDir::open(d.path(), &a.id()).unwrap().path, a.path);
    assert_eq!(
        RunDir::open(Path::new("/nonexistent"), &a.path.display().to_string())
            .unwrap()
            .path,
        a.path
    );
    assert!(
        RunDir::open(d.path(), "nope")
            .unwrap_err()
            .to_string()
            .contains("no run 'nope'")
    );
}

#[test]
fn axis_values_keep_their_order_through_json() {
    let a = AxisValues(vec![
        ("zeta".into(), Scalar::Int(1)),
        ("alpha".into(), Scalar::Str("x".into())),
    ]);
    let back: AxisValues = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back, a);
}

#[test]
fn a_stored_run_from_before_typed_flags_loads_with_its_words_kept() {
    use crate::record::{RunFlag, RunFlagKind};
    let stored = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/runs"
    ));
    let run = RunDir::open(stored, "dm-delay-20261130-001024").unwrap();
    assert_eq!(run.cells().unwrap().len(), 24);
    // One of its cells as an older lab wrote flags: plain sentences.
    let text = std::fs::read_to_string(
        run.path
            .join("cells/arm64-hz100-after_delay=1/rep-1/cell.json"),
    )
    .unwrap();
    let old = "guest clocksource before the cell was jiffies: time advances once per tick";
    let worded = text.replacen("\"flags\": []", &format!("\"flags\": [\"{old}\"]"), 1);
    assert_ne!(worded, text, "the stored cell has a flags list");
    let c: CellRecord = serde_json::from_str(&worded).unwrap();
    assert_eq!(c.flags, [RunFlag::new(RunFlagKind::Legacy, old)]);
    // New records carry the kind, and read back the same.
    let mut c = c;
    c.flags = vec![RunFlag::new(RunFlagKind::Teardown, "teardown failed")];
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        json.contains(r#""flags":[{"kind":"teardown","detail":"teardown failed"}]"#),
        "{json}"
    );
    let back: CellRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(back.flags, c.flags);
}
