use super::*;
use crate::mail::{ClaimKind, Column, Origin, Row};
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Two variants, an nvme-poll-like matrix with three run axes.
fn matrix(claims: &str) -> Result<Matrix> {
    let text = format!(
        "\
version: 1
name: poll
variants:
  - name: before
  - name: after
kernel_axes:
  arch: [x86_64]
  hz: {{100: [hz100], 1000: [hz1000]}}
boot:
  nvme: [{{}}]
run_axes:
  io_poll: [0, 1]
  io_poll_delay: [-1, 0]
  threads: [1, 8]
setup:
  - knob: {{path: /sys/block/nvme0n1/queue/io_poll, value: \"{{{{ io_poll }}}}\"}}
  - knob: {{path: /sys/block/nvme0n1/queue/io_poll_delay, value: \"{{{{ io_poll_delay }}}}\"}}
workload:
  fio: {{filename: /dev/nvme0n1, rw: randread, number_ios: 10, numjobs: \"{{{{ threads }}}}\"}}
claims:
{claims}"
    );
    Matrix::parse(&repo().join("matrices/test.yaml"), &text)
}

fn err(claims: &str) -> String {
    format!("{:#}", matrix(claims).unwrap_err())
}

fn unit(s: &str) -> Option<Unit> {
    parse_unit(s)
}

fn num(v: f64) -> Value {
    Value::Number {
        value: v,
        unit: None,
        spread_pct: None,
    }
}

fn table(keys: &[&str], cols: &[(&str, Option<&str>)], rows: &[(&[&str], &[Value])]) -> ClaimTable {
    ClaimTable {
        origin: Origin::default().into(),
        kind: ClaimKind::Table,
        quote_depth: 0,
        line: 1,
        caption: None,
        key_columns: keys.iter().map(|k| k.to_string()).collect(),
        columns: cols
            .iter()
            .map(|(n, u)| Column {
                name: n.to_string(),
                unit: u.and_then(unit),
            })
            .collect(),
        rows: rows
            .iter()
            .map(|(k, v)| Row {
                keys: k.iter().map(|x| x.to_string()).collect(),
                unit: None,
                values: v.to_vec(),
                line: 1,
            })
            .collect(),
        unit: None,
        conditions: Default::default(),
        theoretical_max: None,
        warnings: vec![],
    }
}

fn cells(b: &Binding) -> Vec<&str> {
    match &b.target {
        Target::Cells(c) => c.iter().map(String::as_str).collect(),
        other => panic!("{}: {other:?}", b.row),
    }
}

/// A claim of rows keyed by the three run axes, base and patched columns.
fn keyed_by_three_axes() -> String {
    "  - source: {message-id: x@y}
    row_axes: [io_poll, io_poll_delay, threads]
    columns: {base: before, patched: after}
    metric: read.iops
    tolerance: 10%
    conditions: {hz: 1000}
"
    .into()
}

fn three_keys_table() -> ClaimTable {
    table(
        &["io_poll", "delay", "threads"],
        &[("base", Some("k IOPS")), ("patched", Some("k IOPS"))],
        &[(&["1", "-1", "8"], &[num(13.3), num(14.1)])],
    )
}

#[test]
fn rows_keyed_by_three_axes_bind_one_cell_per_config() {
    let m = matrix(&keyed_by_three_axes()).unwrap();
    let t = three_keys_table();
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &[]);
    assert_eq!(b.len(), 2);
    assert_eq!(
        cells(&b[1]),
        [
            "x86_64-hz100-after:io_poll=1,io_poll_delay=-1,threads=8",
            "x86_64-hz1000-after:io_poll=1,io_poll_delay=-1,threads=8"
        ]
    );
    assert_eq!(b[1].metric, "read.iops");
    assert_eq!(b[1].claimed, Some(14.1));
    // Stored IOPS shown in k IOPS: divide by 1000.
    assert_eq!(b[1].unit, "KIOPS");
    assert_eq!(b[1].from_stored, 1e-3);
    assert_eq!(
        label(&b[0].axes),
        "io_poll=1, io_poll_delay=-1, threads=8, variant=before"
    );
}

/// A write's number never binds to a job that only reads: the cells
/// measure something else, and the binding says so.
#[test]
fn a_metric_of_another_direction_binds_nothing() {
    let m = matrix(&keyed_by_three_axes().replace("read.iops", "write.iops")).unwrap();
    let plan = m.plan().unwrap();
    for b in bind(1, &m.claims[0], &three_keys_table(), &plan, &[]) {
        match &b.target {
            Target::Unbound(why) => assert!(why.contains("does not write"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn group_headers_rows_of_variants_and_columns_of_axis_values() {
    let m = matrix(
        "  - source: {message-id: x@y}
    group_axis: threads
    rows: variant
    column_axis: io_poll
    columns: {classic: 0, polled: 1}
    from_variant: after
    metric: read.clat_p99
    unit: us
    tolerance: 10%
",
    )
    .unwrap();
    let t = table(
        &["group", "kernel"],
        &[("classic", None), ("polled", None)],
        &[
            (&["8 threads", "before"], &[num(120.0), num(80.0)]),
            (&["8 threads", "after"], &[num(118.0), Value::NotApplicable]),
        ],
    );
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &[]);
    assert_eq!(b.len(), 4);
    assert_eq!(
        label(&b[0].axes),
        "threads=8 threads, variant=before, io_poll=0"
    );
    // io_poll_delay is free: both of its values, both HZ.
    assert_eq!(cells(&b[0]).len(), 4);
    assert!(
        cells(&b[0])
            .iter()
            .all(|c| c.contains("-before:io_poll=0,"))
    );
    assert_eq!(b[0].unit, "us");
    assert_eq!(b[0].from_stored, 1e-3);
    // A claimed N/A that the plan measures is said so, not bound.
    assert!(
        matches!(&b[3].target, Target::NotApplicable(c) if c.len() == 4),
        "{:?}",
        b[3].target
    );
}

#[test]
fn rows_of_metrics_convert_each_rows_unit() {
    let m = matrix(
        "  - source: {message-id: x@y}
    rows: metric
    metrics: {\"read p99 (us)\": read.clat_p99, \"bw (MB/s)\": read.bw}
    columns: {base: before, patched: after}
    tolerance: 10%
",
    )
    .unwrap();
    let mut t = table(
        &["metric"],
        &[("base", None), ("patched", None)],
        &[
            (&["read p99 (us)"], &[num(80.0), num(60.0)]),
            (&["bw (MB/s)"], &[num(250.0), num(300.0)]),
            (&["iodepth"], &[num(1.0), num(1.0)]),
        ],
    );
    t.rows[0].unit = unit("us");
    t.rows[1].unit = unit("MB/s");
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &[]);
    assert_eq!(b.len(), 6);
    assert_eq!(
        (b[0].metric.as_str(), b[0].unit.as_str()),
        ("read.clat_p99", "us")
    );
    assert_eq!(
        (b[2].metric.as_str(), b[2].unit.as_str()),
        ("read.bw", "MB/s")
    );
    assert_eq!(b[2].from_stored, 1e-6);
    assert_eq!(cells(&b[3]).len(), 16);
    assert_eq!(
        b[4].target,
        Target::Unbound("row 'iodepth' is not in the claim's metrics map".into())
    );
}

/// fio's rows repeat their labels per direction (`read / IOPS`, `write
/// / IOPS`): a metrics map names them with their section, and `-` there
/// leaves a row out as it does for a bare label.
#[test]
fn metric_rows_are_named_with_their_section_when_labels_repeat() {
    let m = matrix(
        "  - source: {message-id: x@y}
    rows: metric
    metrics: {read IOPS: read.iops, write IOPS: write.iops, read slat min: \"-\"}
    columns: {value: after}
",
    )
    .unwrap();
    let t = table(
        &["job", "direction", "metric"],
        &[("value", None)],
        &[
            (&["", "read", "IOPS"], &[num(151.0)]),
            (&["", "read", "slat min"], &[num(275.0)]),
            (&["", "write", "IOPS"], &[num(152.0)]),
        ],
    );
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &[]);
    let metrics: Vec<&str> = b.iter().map(|b| b.metric.as_str()).collect();
    assert_eq!(metrics, ["read.iops", "write.iops"], "{b:?}");
}

#[test]
fn a_unit_of_another_kind_is_an_error_naming_both_units() {
    let m = matrix(
        "  - source: {message-id: x@y}
    row_axis: threads
    columns: {before: before}
    metric: read.lat_mean
    tolerance: 10%
",
    )
    .unwrap();
    let t = table(
        &["threads"],
        &[("before", Some("MB/s"))],
        &[(&["8"], &[num(250.0)])],
    );
    let b = bind(1, &m.claims[0], &t, &m.plan().unwrap(), &[]);
    assert_eq!(
        b[0].target,
        Target::WrongUnit(
            "claim 1: its unit MB/s (a throughput) cannot measure read.lat_mean, which is in ns (a time)".into()
        )
    );
    // Declared in the matrix, it fails at plan time, located.
    let e = err("  - source: {message-id: x@y}
    row_axis: threads
    columns: {before: before}
    metric: read.lat_mean
    unit: MB/s
    tolerance: 10%
");
    assert!(
        e.ends_with("matrices/test.yaml:25:11: claims[0]: claim 1: its unit MB/s (a throughput) cannot measure read.lat_mean, which is in ns (a time)"),
        "{e}"
    );
}

#[test]
fn values_the_plan_lacks_are_unbound_or_excluded() {
    let m = matrix(
        "  - from_variant: after
    row_axis: threads
    columns: {after: after}
    metric: read.iops
    tolerance: 10%
",
    )
    .unwrap();
    let t = table(
        &["threads"],
        &[("after", None)],
        &[
            (&["4"], &[num(1000.0)]),
            (&["16"], &[Value::NotApplicable]),
            (&["8"], &[Value::Missing]),
        ],
    );
    let b = bind(1, &m.claims[0], &t, &m.plan().unwrap(), &[]);
    assert_eq!(b.len(), 2, "a missing cell is no claim");
    assert_eq!(
        b[0].target,
        Target::Unbound("no cell of the plan has threads=4, variant=after".into())
    );
    assert_eq!(b[1].target, Target::Excluded);
}

#[test]
fn plan_time_errors_are_located() {
    let cases = [
        (
            "  - from_variant: after\n    row_axis: threads\n    columns: {after: after}\n    metric: read.iops\n    tolerance: lots\n",
            "test.yaml:25:16: claims[0]: tolerance 'lots': expected a percentage such as 15%",
        ),
        (
            "  - from_variant: after\n    table: 0\n    row_axis: threads\n    columns: {after: after}\n    metric: read.iops\n    tolerance: 5%\n",
            "test.yaml:22:12: claims[0]: table counts from 1",
        ),
        (
            "  - from_variant: after\n    row_axis: threads\n    columns: {after: after}\n    metric: read.iopz\n    tolerance: 5%\n",
            "test.yaml:24:13: claims[0]: unknown metric 'read.iopz'",
        ),
        (
            "  - from_variant: after\n    row_axis: threads\n    columns: {after: after}\n    metric: read.iops\n    tolerance: 5%\n    conditions: {hz: 100, cpu: zen4}\n",
            "test.yaml:26:32: claims[0]: unknown condition key 'cpu'",
        ),
        (
            "  - from_variant: after\n    row_axis: thread\n    columns: {after: after}\n    metric: read.iops\n    tolerance: 5%\n",
            "test.yaml:22:15: claims[0]: row axis 'thread' is not an axis of the matrix",
        ),
        (
            "  - from_variant: after\n    row_axis: threads\n    columns: {after: later}\n    metric: read.iops\n    tolerance: 5%\n",
            "claims[0]: column 'after' maps to 'later', which is not a variant",
        ),
    ];
    for (claims, want) in cases {
        let e = err(claims);
        assert!(e.contains(want), "want {want}\n got {e}");
    }
}

#[test]
fn metric_units_follow_how_lab_stores_them() {
    let u = |m: &str| metric_unit(m, &[]).map(|u| (u.symbol, u.kind));
    assert_eq!(u("write.lat_mean"), Some(("ns".into(), UnitKind::Time)));
    assert_eq!(u("read.clat_p99_9"), Some(("ns".into(), UnitKind::Time)));
    assert_eq!(u("read.bw"), Some(("B/s".into(), UnitKind::Throughput)));
    assert_eq!(u("trim.iops"), Some(("IOPS".into(), UnitKind::Rate)));
    assert_eq!(u("write.ios"), Some(("count".into(), UnitKind::Count)));
    assert_eq!(u("cpu.sys"), Some(("%".into(), UnitKind::Percent)));
    assert_eq!(u("sync.iops"), None);
    assert_eq!(u("write.lat_p42"), None);
    // One vocabulary with derived metrics and fio's parser: every
    // bandwidth unit and percentile fio reports, and per-job names.
    assert_eq!(
        u("write.bw_mb"),
        Some(("MB/s".into(), UnitKind::Throughput))
    );
    assert_eq!(u("read.clat_p95"), Some(("ns".into(), UnitKind::Time)));
    assert_eq!(u("n0.read.iops"), Some(("IOPS".into(), UnitKind::Rate)));
    assert_eq!(u("read.slat_mean"), None);
}

/// What a reviewer leaves out when checking one mail: the tolerance (the
/// one `lab new` writes) and the source (the one `--mail` file); and a
/// `metrics:` map over columns when the rows are axis values.
#[test]
fn defaults_a_quick_claim_relies_on_and_metrics_per_column() {
    let m = matrix(
        "  - {row_axis: threads, columns: {IOPS: after, sys: after}, metrics: {IOPS: read.iops, sys: cpu.sys}}\n",
    )
    .unwrap();
    let c = &m.claims[0];
    assert_eq!(c.tolerance.value, crate::matrix::schema::DEFAULT_TOLERANCE);
    assert_eq!(source_label(c), "the --mail file");
    let t = table(
        &["threads"],
        &[("IOPS", None), ("sys", Some("%"))],
        &[(&["1"], &[num(1000.0), num(12.0)])],
    );
    let b = bind(1, c, &t, &m.plan().unwrap(), &[]);
    let metrics: Vec<(&str, &str)> = b
        .iter()
        .map(|b| (b.column.as_str(), b.metric.as_str()))
        .collect();
    assert_eq!(metrics, [("IOPS", "read.iops"), ("sys", "cpu.sys")]);
    assert_eq!(
        cells(&b[0]),
        [
            "x86_64-hz100-after:io_poll=0,io_poll_delay=-1,threads=1",
            "x86_64-hz100-after:io_poll=0,io_poll_delay=0,threads=1",
            "x86_64-hz100-after:io_poll=1,io_poll_delay=-1,threads=1",
            "x86_64-hz100-after:io_poll=1,io_poll_delay=0,threads=1",
            "x86_64-hz1000-after:io_poll=0,io_poll_delay=-1,threads=1",
            "x86_64-hz1000-after:io_poll=0,io_poll_delay=0,threads=1",
            "x86_64-hz1000-after:io_poll=1,io_poll_delay=-1,threads=1",
            "x86_64-hz1000-after:io_poll=1,io_poll_delay=0,threads=1"
        ]
    );
    // A column mapped to `-` is no claim; an unknown metric in the map is
    // an error at plan time.
    let skip = matrix(
        "  - {row_axis: threads, columns: {IOPS: after, sys: after}, metrics: {IOPS: read.iops, sys: \"-\"}}\n",
    )
    .unwrap();
    assert_eq!(
        bind(1, &skip.claims[0], &t, &skip.plan().unwrap(), &[]).len(),
        1
    );
    let e = err("  - {row_axis: threads, columns: {IOPS: after}, metrics: {IOPS: read.iopz}}\n");
    assert!(e.contains("unknown metric 'read.iopz'"), "{e}");
}

#[test]
fn dm_delay_claim_still_parses_the_old_way() {
    let m = Matrix::load(&repo().join("matrices/dm-delay.yaml")).unwrap();
    let c = &m.claims[0];
    assert_eq!(c.from_variant.as_ref().unwrap().value, "after");
    assert_eq!(c.row_axis.as_ref().unwrap().value, "delay");
    assert_eq!(c.tolerance.value, "15%");
    assert_eq!(condition_text(&c.conditions["arch"]), "arm64");
    // It reads back from a run's manifest, where it is plain JSON.
    let json = serde_json::to_string(c).unwrap();
    let back: ClaimDef = serde_json::from_str(&json).unwrap();
    assert_eq!(back.metric.unwrap().value, "write.lat_mean");
    assert_eq!(condition_text(&back.conditions["hz"]), "100");
}

/// A claim binds to a derived metric (usr+sys CPU, read+write bandwidth)
/// and to a perf counter, with their units; a unit of another kind is
/// still an error.
#[test]
fn claims_bind_to_derived_metrics_and_perf_counters() {
    let text = |unit: &str| {
        format!(
            "\
version: 1
name: derived
variants:
  - name: before
  - name: after
kernel_axes:
  arch: [x86_64]
boot:
  nvme: [{{}}]
run_axes:
  threads: [1, 8]
workload:
  fio: {{filename: /dev/nvme0n1, rw: randrw, number_ios: 10, numjobs: \"{{{{ threads }}}}\"}}
derived:
  cpu.total: cpu.usr + cpu.sys
  bw.total: read.bw + write.bw
perf: {{events: [context-switches, task-clock]}}
claims:
  - source: {{message-id: x@y}}
    rows: metric
    metrics: {{\"usr+sys\": cpu.total, \"rw bw\": bw.total, cs: perf.context-switches, clock: perf.task-clock}}
    columns: {{before: before, after: after}}
{unit}    tolerance: 10%
"
        )
    };
    // No single unit fits every row: the rows name their own.
    let m = Matrix::parse(&repo().join("matrices/test.yaml"), &text("")).unwrap();
    let mut t = table(
        &["metric"],
        &[("before", None), ("after", None)],
        &[
            (&["usr+sys"], &[num(41.0), num(23.5)]),
            (&["rw bw"], &[num(180.0), num(240.0)]),
            (&["cs"], &[num(212044.0), num(98000.0)]),
            (&["clock"], &[num(1234.5), num(1100.0)]),
        ],
    );
    t.rows[1].unit = unit("MB/s");
    t.rows[2].unit = unit("count");
    t.rows[3].unit = unit("msec");
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &command_metrics(&m));
    let got: Vec<(&str, &str, f64)> = b
        .iter()
        .map(|x| (x.metric.as_str(), x.unit.as_str(), x.from_stored))
        .collect();
    assert_eq!(
        got,
        [
            ("cpu.total", "%", 1.0),
            ("cpu.total", "%", 1.0),
            ("bw.total", "MB/s", 1e-6),
            ("bw.total", "MB/s", 1e-6),
            ("perf.context-switches", "count", 1.0),
            ("perf.context-switches", "count", 1.0),
            ("perf.task-clock", "ms", 1.0),
            ("perf.task-clock", "ms", 1.0),
        ]
    );
    assert!(b.iter().all(|x| cells(x).len() == 2), "{b:?}");
    // A throughput against usr+sys CPU fails at plan time.
    let e = format!(
        "{:#}",
        Matrix::parse(
            &repo().join("matrices/test.yaml"),
            &text("    unit: MB/s\n")
        )
        .unwrap_err()
    );
    assert!(
        e.contains("its unit MB/s (a throughput) cannot measure"),
        "{e}"
    );
}

/// A `label: value` list under a command: rows are the variants, its
/// bound row is no one's measurement, and the conditions on run axes
/// pick the one cell per arch and HZ that ran the command.
#[test]
fn conditions_on_axes_select_cells_and_bound_rows_are_references() {
    let m = matrix(
        "  - source: {message-id: x@y}
    rows: variant
    aliases: {\"Theoretical maximum\": \"-\"}
    metric: read.iops
    unit: IOPS
    tolerance: 10%
    conditions: {io_poll: 1, io_poll_delay: 0, threads: 8, hz: 1000}
",
    )
    .unwrap();
    let t = table(
        &["label"],
        &[("value", Some("IOPS"))],
        &[
            (&["Theoretical maximum"], &[num(1000.0)]),
            (&["before"], &[num(250.0)]),
            (&["after"], &[num(500.0)]),
        ],
    );
    let plan = m.plan().unwrap();
    let b = bind(1, &m.claims[0], &t, &plan, &[]);
    assert_eq!(b.len(), 2, "the bound row binds to nothing: {b:#?}");
    // hz is judged on the measured cells (other conditions), not selected.
    assert_eq!(
        cells(&b[0]),
        [
            "x86_64-hz100-before:io_poll=1,io_poll_delay=0,threads=8",
            "x86_64-hz1000-before:io_poll=1,io_poll_delay=0,threads=8"
        ]
    );
    assert_eq!(b[1].claimed, Some(500.0));
    assert_eq!(
        reference_rows(&m.claims[0], &t),
        ["Theoretical maximum: 1000 IOPS"]
    );
    // `-` for a row lab measures nothing for is no bound of the mail.
    let skip = matrix(
        "  - {source: {message-id: x@y}, rows: variant, metric: read.iops, unit: IOPS,
     aliases: {\"Theoretical maximum\": \"-\", \"bios submitted\": \"-\"}}
",
    )
    .unwrap();
    let t = table(
        &["label"],
        &[("value", Some("IOPS"))],
        &[
            (&["bios submitted"], &[num(7.0)]),
            (&["Theoretical maximum"], &[num(1000.0)]),
        ],
    );
    assert_eq!(
        reference_rows(&skip.claims[0], &t),
        ["Theoretical maximum: 1000 IOPS"]
    );
}
