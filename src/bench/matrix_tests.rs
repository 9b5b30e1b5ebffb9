//! The run's side of two matrix features: the fio command line of a
//! multi-job workload, and derived metrics computed per repetition. The
//! matrices are the ones the matrix's own feature tests plan.

use crate::matrix::{Matrix, Workload};

const WORKLOADS: &str = include_str!("../../tests/data/matrix-features/workloads.yaml");
const DELAY: &str = include_str!("../../tests/data/matrix-features/delay.yaml");

fn plan(text: &str) -> crate::matrix::Plan {
    Matrix::parse(std::path::Path::new("t.yaml"), text)
        .unwrap()
        .plan()
        .unwrap()
}

#[test]
fn a_multi_job_workload_is_one_fio_command_with_a_group_per_job() {
    let p = plan(WORKLOADS);
    let Some(Workload::Fio(f)) = p.cells[1].workload.as_ref() else {
        panic!("{:?}", p.cells[1].workload)
    };
    let c = super::fio::command(f).join(" ");
    assert!(
        c.contains("--bs=64k --name=reader --rw=randread --name=writer --new_group"),
        "{c}"
    );
}

#[test]
fn derived_metrics_are_computed_per_repetition_from_metrics_and_axes() {
    let p = plan(&format!(
        "{DELAY}derived:\n  bw.total: \"read.bw + write.bw\"\n  cpu.total: cpu.usr + cpu.sys\n  iops.bound: {{expr: \"1000 / delay * jobs\", unit: IOPS}}\n  lat.us: write.lat_mean / 1000\n"
    ));
    // The run computes it per repetition from the metrics and the axes.
    let cell = p
        .cells
        .iter()
        .find(|c| c.id == "x86_64-a:delay=10,jobs=4")
        .unwrap();
    let mut ms = vec![
        super::Metric::new("read.bw", 4096.0, "B/s"),
        super::Metric::new("cpu.usr", 1.5, "%"),
        super::Metric::new("cpu.sys", 2.0, "%"),
    ];
    let mut flags = vec![];
    super::derive(&mut ms, cell, &mut flags);
    let get = |n: &str| {
        ms.iter()
            .find(|m| m.name == n)
            .map(|m| (m.value, m.unit.clone()))
    };
    assert_eq!(get("bw.total"), Some((4096.0, "B/s".into())));
    assert_eq!(get("cpu.total"), Some((3.5, "%".into())));
    assert_eq!(get("iops.bound"), Some((400.0, "IOPS".into())));
    assert_eq!(get("lat.us"), None);
    assert_eq!(
        flags,
        [crate::record::RunFlag::new(
            crate::record::RunFlagKind::Derived,
            "derived lat.us = write.lat_mean / 1000: no value for 'write.lat_mean'"
        )]
    );
}
