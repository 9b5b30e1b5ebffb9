//! Sources per kernel, exclusions, named workloads, derived metrics and
//! device-mapper stacks, planned from matrix text.

use super::schema::FioOptions;
use super::*;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn parse(text: &str) -> Result<Matrix> {
    Matrix::parse(&repo().join("matrices/test.yaml"), text)
}

fn err_of(text: &str) -> String {
    format!("{:#}", parse(text).unwrap_err())
}

const HEAD: &str = "version: 1\nname: t\nvariants: [{name: a}]\nkernel_axes: {arch: [x86_64]}\n";

fn tarball(s: &Source) -> String {
    match s {
        Source::Tarball { path, .. } => path.display().to_string(),
        Source::Git { git_ref, .. } => git_ref.clone(),
    }
}

#[test]
fn a_kernel_axis_picks_the_source_and_only_same_source_kernels_share_a_tree() {
    let m = parse(
        "version: 1
name: t
variants:
  - name: before
  - name: after
    patches: [{diff: ../tests/data/patches/plain.diff}]
kernel_axes:
  arch: [x86_64]
  kver:
    \"5.10\": {source: debian-5.10}
    \"6.12\": {source: debian-6.12, fragments: [hz1000]}
",
    )
    .unwrap();
    let p = m.plan().unwrap();
    let ids: Vec<&str> = p.kernels.iter().map(|k| k.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "x86_64-kver5.10-before",
            "x86_64-kver5.10-after",
            "x86_64-kver6.12-before",
            "x86_64-kver6.12-after"
        ]
    );
    let k = p.kernel("x86_64-kver5.10-after").unwrap();
    assert_eq!(
        tarball(k.source.as_ref().unwrap()),
        "/usr/src/linux-source-5.10.tar.xz"
    );
    assert_eq!(k.base_kernel.as_deref(), Some("x86_64-kver5.10-before"));
    let k = p.kernel("x86_64-kver6.12-after").unwrap();
    assert_eq!(k.source.as_ref().unwrap().label(), "linux-source-6.12");
    assert_eq!(k.base_kernel.as_deref(), Some("x86_64-kver6.12-before"));
    assert!(k.fragments.iter().any(|f| f.name == "hz1000"));
    assert!(
        !p.kernel("x86_64-kver5.10-after")
            .unwrap()
            .fragments
            .iter()
            .any(|f| f.name == "hz1000")
    );
}

#[test]
fn a_variant_source_overrides_the_matrix_and_breaks_tree_sharing() {
    let m = parse(
        "version: 1
name: t
kernel: {source: debian-6.12}
variants:
  - name: old
    source: debian-6.1
  - name: new
    patches: [{diff: ../tests/data/patches/plain.diff}]
kernel_axes: {arch: [x86_64]}
",
    )
    .unwrap();
    let p = m.plan().unwrap();
    let old = p.kernel("x86_64-old").unwrap();
    let new = p.kernel("x86_64-new").unwrap();
    assert_eq!(old.source.as_ref().unwrap().label(), "linux-source-6.1");
    assert_eq!(new.source.as_ref().unwrap().label(), "linux-source-6.12");
    // new's patches extend old's (none), but the trees differ.
    assert_eq!(new.base_kernel, None);
}

#[test]
fn source_errors_are_located() {
    let e = err_of(
        "version: 1\nname: t\nvariants:\n  - name: a\n    source: debian-4.19\nkernel_axes: {arch: [x86_64]}\n",
    );
    assert!(
        e.contains("test.yaml:5:13: unknown source 'debian-4.19'"),
        "{e}"
    );
    assert!(e.contains("debian-5.10, debian-6.1, debian-6.12"), "{e}");
    let e = err_of(
        "version: 1\nname: t\nvariants:\n  - name: a\n    source: debian-6.1\nkernel_axes:\n  kver: {x: {source: debian-6.12}}\n",
    );
    assert!(
        e.contains("test.yaml:7:") && e.contains("variant 'a' sets a source too"),
        "{e}"
    );
    let e = err_of(&HEAD.replace(
        "kernel_axes: {arch: [x86_64]}",
        "kernel_axes:\n  kver: {x: {source: debian-6.1, fragment: [hz100]}}",
    ));
    assert!(
        e.contains("test.yaml:5:") && e.contains("unknown field `fragment`"),
        "{e}"
    );
}

const POLL: &str = "version: 1
name: t
variants: [{name: a}]
kernel_axes:
  arch: [x86_64]
  kver: {\"6.1\": {source: debian-6.1}, \"6.12\": {source: debian-6.12}}
run_axes:
  io_poll: [0, 1]
  io_poll_delay: [-1, 0, 10]
  threads: [1, 8]
setup:
  - shell: {run: \"echo {{ io_poll }} {{ io_poll_delay }} {{ threads }}\"}
";

#[test]
fn exclude_drops_partial_combinations_and_the_plan_records_them() {
    let m = parse(&format!(
        "{POLL}exclude:\n  - {{io_poll: 0, io_poll_delay: [0, 10]}}\n"
    ))
    .unwrap();
    let p = m.plan().unwrap();
    assert_eq!(p.cells_before(), 24);
    assert_eq!(p.cells.len(), 16);
    assert_eq!(p.excluded.len(), 8);
    assert!(p.cells.iter().all(|c| {
        c.axes.get("io_poll").unwrap().to_string() == "1"
            || c.axes.get("io_poll_delay").unwrap().to_string() == "-1"
    }));
    assert!(p.excluded.iter().any(
        |a| a.label() == "arch=x86_64,kver=6.12,variant=a,io_poll=0,io_poll_delay=10,threads=8"
    ));
    assert!(
        p.cells
            .iter()
            .any(|c| c.id == "x86_64-kver6.1-a:io_poll=0,io_poll_delay=-1,threads=1")
    );
}

#[test]
fn only_keeps_matching_cells_and_drops_empty_kernels() {
    let m = parse(&format!(
        "{POLL}only:\n  - {{kver: \"6.1\", threads: 1}}\nexclude:\n  - {{io_poll: 1}}\n"
    ))
    .unwrap();
    let p = m.plan().unwrap();
    assert_eq!(p.cells.len(), 3);
    assert_eq!(p.cells_before(), 24);
    // Every 6.12 cell is gone, so its kernel is not built or booted.
    assert_eq!(p.kernels.len(), 1);
    assert_eq!(p.boots.len(), 1);
    assert_eq!(p.kernels[0].id, "x86_64-kver6.1-a");
}

#[test]
fn exclude_errors_name_the_axis_or_value() {
    let e = err_of(&format!("{POLL}exclude:\n  - {{io_pol: 0}}\n"));
    assert!(
        e.contains("test.yaml:14:6: exclude[0]: 'io_pol' is not an axis"),
        "{e}"
    );
    assert!(e.contains("arch, variant, kver, io_poll"), "{e}");
    let e = err_of(&format!(
        "{POLL}exclude:\n  - {{io_poll: 0, io_poll_delay: [0, 5]}}\n"
    ));
    assert!(e.contains("test.yaml:14:"), "{e}");
    assert!(
        e.contains("'5' is not a value of axis 'io_poll_delay' (-1, 0, 10)"),
        "{e}"
    );
    let e = err_of(&format!("{POLL}only:\n  - {{variant: b}}\n"));
    assert!(e.contains("only[0].variant: 'b' is not a value"), "{e}");
}

const WORKLOADS: &str = include_str!("../../../../tests/data/matrix-features/workloads.yaml");

#[test]
fn named_workloads_are_picked_per_cell_and_option_lines_become_maps() {
    let p = parse(WORKLOADS).unwrap().plan().unwrap();
    assert_eq!(p.cells.len(), 2);
    let fio = |i: usize| match p.cells[i].workload.as_ref().unwrap() {
        Workload::Fio(f) => f.as_ref().clone(),
        other => panic!("{other:?}"),
    };
    let f = fio(0);
    assert_eq!(f.extra["rw"], Scalar::Str("write".into()));
    assert_eq!(f.extra["fdatasync"], Scalar::Str("1".into()));
    assert_eq!(f.extra["group_reporting"], Scalar::Str(String::new()));
    assert!(f.jobs.is_empty());
    let f = fio(1);
    assert_eq!(f.jobs.len(), 2);
    let Some(FioOptions::Map(w)) = &f.jobs[1].options else {
        panic!("{:?}", f.jobs[1].options)
    };
    assert_eq!(w["iodepth"], Scalar::Str("32".into()));
}

#[test]
fn workload_errors_are_located_and_name_the_option() {
    let e = err_of(&WORKLOADS.replace("--bs=4k", "bs=4k"));
    assert!(
        e.contains("test.yaml:20:11: cell x86_64-a:wl=sync4k: fio: fio option 'bs=4k'"),
        "{e}"
    );
    let e = err_of(&WORKLOADS.replace("wl: [sync4k, two]", "wl: [sync4k, three]"));
    assert!(
        e.contains("test.yaml:20:11:")
            && e.contains("workload 'three' is not in workloads (sync4k, two)"),
        "{e}"
    );
    let e = err_of(&WORKLOADS.replace("{name: reader, options: {rw: randread}}", "{name: reader}"));
    assert!(e.contains("job 'reader' has no rw"), "{e}");
    let e = err_of(&WORKLOADS.replace("workload: \"{{ wl }}\"\n", ""));
    assert!(
        e.contains("test.yaml:9:") && e.contains("workloads: add `workload:"),
        "{e}"
    );
    let e = err_of(&WORKLOADS.replace("\"{{ wl }}\"", "sync8k"));
    assert!(
        e.contains("test.yaml:20:11: workload 'sync8k' is not in workloads"),
        "{e}"
    );
}

const DELAY: &str = include_str!("../../../../tests/data/matrix-features/delay.yaml");

#[test]
fn derived_metrics_carry_units_and_bounds() {
    let m = parse(&format!(
        "{DELAY}derived:\n  bw.total: \"read.bw + write.bw\"\n  cpu.total: cpu.usr + cpu.sys\n  iops.bound: {{expr: \"1000 / delay * jobs\", unit: IOPS}}\n  lat.us: write.lat_mean / 1000\n"
    ))
    .unwrap();
    let p = m.plan().unwrap();
    let d: Vec<(&str, &str, bool)> = p
        .derived
        .iter()
        .map(|d| (d.name.as_str(), d.unit.as_str(), d.bound))
        .collect();
    assert_eq!(
        d,
        [
            ("bw.total", "B/s", false),
            ("cpu.total", "%", false),
            ("iops.bound", "IOPS", true),
            ("lat.us", "ns", false)
        ]
    );
    assert_eq!(p.cells[0].derived, p.derived);
}

#[test]
fn derived_errors_are_located() {
    let e = err_of(&format!(
        "{DELAY}derived:\n  x: write.lat_mean + write.bw\n"
    ));
    assert!(
        e.contains("test.yaml:14:6: derived.x: '+' of ns and B/s: the units differ"),
        "{e}"
    );
    let e = err_of(&format!(
        "{DELAY}derived:\n  x: {{expr: read.iops * 2, unit: B/s}}\n"
    ));
    assert!(
        e.contains("derived.x: the expression's unit is IOPS, not B/s"),
        "{e}"
    );
    let e = err_of(&format!("{DELAY}derived:\n  x: read.bogus + 1\n"));
    assert!(e.contains("'read.bogus' is neither a metric"), "{e}");
    let e = err_of(&format!("{DELAY}derived:\n  x: (delay + 1\n"));
    assert!(e.contains("derived.x: a '(' is not closed"), "{e}");
    let e = err_of(&format!("{DELAY}derived:\n  delay: read.iops\n"));
    assert!(
        e.contains("test.yaml:14:3: derived.delay: the name is taken"),
        "{e}"
    );
}

#[test]
fn dm_stacks_are_checked_at_plan_time() {
    let p = parse(DELAY).unwrap().plan().unwrap();
    assert_eq!(p.cells.len(), 4);
    let e = err_of(&DELAY.replace("device: /dev/mapper/zero", "device: /dev/mapper/zeros"));
    assert!(
        e.contains("test.yaml:10:5: cell x86_64-a:delay=1,jobs=1: setup[1]: dm.device '/dev/mapper/zeros' does not exist"),
        "{e}"
    );
    assert!(e.contains("known: /dev/nullb0, /dev/mapper/zero)"), "{e}");
    let e = err_of(&DELAY.replace("{name: d,", "{name: \"d;reboot\","));
    assert!(e.contains("setup[1]: dm.name 'd;reboot'"), "{e}");
    let e = err_of(&DELAY.replace("target: zero}", "target: flakey, device: /dev/nullb1}"));
    assert!(
        e.contains("setup[0]: dm.device '/dev/nullb1' does not exist"),
        "{e}"
    );
    let with_nullb = DELAY.replace(
        "run_axes:",
        "boot: {null_blk: {nr_devices: 2}, nvme: [{size: 1G}]}\nrun_axes:",
    );
    let e = err_of(&with_nullb.replace("target: zero}", "target: flakey, device: /dev/nullb1}"));
    assert!(
        e.contains("setup[0]: dm: target flakey needs up_s and down_s"),
        "{e}"
    );
    let ok = with_nullb.replace(
        "target: zero}",
        "target: delay, device: /dev/nullb1, write_device: /dev/nvme0n1, flush_device: /dev/nullb0, flush_ms: 3}",
    );
    assert!(parse(&ok).is_ok(), "{}", err_of(&ok));
    let e = err_of(&with_nullb.replace("/dev/mapper/zero", "/dev/nvme1n1"));
    assert!(e.contains("'/dev/nvme1n1' does not exist"), "{e}");
    let e = err_of(&DELAY.replace("read_ms: \"{{ delay }}\"", "read_ms: 1ms"));
    assert!(e.contains("dm.read_ms '1ms' is not a whole number"), "{e}");
}

#[test]
fn shipped_matrices_plan_with_their_cell_counts() {
    let plan = |f: &str| {
        Matrix::load(&repo().join("matrices").join(f))
            .unwrap()
            .plan()
            .unwrap()
    };
    let p = plan("dm-delay-versions.yaml");
    assert_eq!((p.kernels.len(), p.cells.len()), (2, 10));
    // The commit's own fio options: buffered reads, direct writes, and
    // the async job with 32 jobs at depth 64.
    let opts = |id: &str| match p
        .cells
        .iter()
        .find(|c| c.id == id)
        .unwrap()
        .workload
        .as_ref()
    {
        Some(Workload::Fio(f)) => f.extra.clone(),
        other => panic!("{other:?}"),
    };
    let read = opts("x86_64-hz1000-previous:delay=1,job=read");
    assert_eq!(read["rw"], Scalar::Str("randread".into()));
    assert!(!read.contains_key("direct"), "{read:?}");
    let write = opts("x86_64-hz1000-kthread:delay=1,job=write");
    assert_eq!(write["direct"], Scalar::Str("1".into()));
    let async_ = opts("x86_64-hz1000-kthread:delay=10,job=async");
    assert_eq!(async_["numjobs"], Scalar::Str("32".into()));
    assert_eq!(async_["iodepth"], Scalar::Str("64".into()));
    let labels: Vec<String> = p
        .kernels
        .iter()
        .map(|k| k.source.as_ref().unwrap().label())
        .collect();
    assert_eq!(labels, ["linux-source-6.1", "linux-source-6.12"]);
    let b = p.derived.iter().find(|d| d.name == "iops.bound").unwrap();
    assert!(b.bound && b.unit == "IOPS");

    let p = plan("hybrid-poll.yaml");
    assert_eq!(
        (p.kernels.len(), p.cells_before(), p.cells.len()),
        (3, 72, 48)
    );
    assert!(
        p.cells
            .iter()
            .all(|c| c.axes.get("io_poll").unwrap().to_string() == "1"
                || c.axes.get("io_poll_delay").unwrap().to_string() == "-1")
    );
    assert_eq!(p.derived[0].unit, "%");

    let p = plan("xfs-sync.yaml");
    assert_eq!((p.kernels.len(), p.cells.len()), (3, 12));
    let wl = |id: &str| match p
        .cells
        .iter()
        .find(|c| c.id == id)
        .unwrap()
        .workload
        .as_ref()
    {
        Some(Workload::Fio(f)) => f.extra.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(
        wl("x86_64-linux-6.1:wl=sync64k")["bs"],
        Scalar::Str("64k".into())
    );
    assert_eq!(
        wl("x86_64-linux-5.10:wl=rand4k-qd32")["iodepth"],
        Scalar::Str("32".into())
    );
}

#[test]
fn inline_config_lines_are_a_fragment_and_a_bad_one_names_its_line() {
    let body = "workload: {fio: {filename: /dev/nullb0, rw: read, bs: 4k, size: 1M}}\n";
    let m = parse(&format!(
        "{HEAD}kernel:\n  config:\n    - CONFIG_DM_CRYPT=y\n    - \"# CONFIG_DM_ZERO is not set\"\n{body}"
    ))
    .unwrap();
    let inline = m.fragments.iter().find(|f| f.name == "inline").unwrap();
    assert_eq!(
        inline.text,
        "CONFIG_DM_CRYPT=y\n# CONFIG_DM_ZERO is not set\n"
    );
    let e = err_of(&format!(
        "{HEAD}kernel:\n  config:\n    - CONFIG_X=y\n    - DM_CRYPT=y\n{body}"
    ));
    assert!(
        e.contains("test.yaml:8:") && e.contains("'DM_CRYPT=y' is not a `CONFIG_X=value`"),
        "{e}"
    );
}

/// fio's own option names beside the named ones, as a reviewer copies
/// them from a mail's command line, are fio options; a name fio could
/// not have, or one lab sets itself, is an error naming it.
#[test]
fn fio_options_beside_the_named_ones_are_options() {
    let m = parse(&format!(
        "{HEAD}workload:\n  fio: {{filename: /dev/nullb0, rw: randread, time_based: 1, iodepth_batch_submit: 8}}\n"
    ))
    .unwrap();
    let p = m.plan().unwrap();
    let Some(Workload::Fio(f)) = &p.cells[0].workload else {
        panic!()
    };
    assert_eq!(f.extra["time_based"], Scalar::Int(1));
    assert_eq!(f.extra["iodepth_batch_submit"], Scalar::Int(8));
    let e = format!(
        "{:#}",
        parse(&format!(
            "{HEAD}workload:\n  fio: {{filename: /dev/nullb0, rw: read, \"bad name\": 1}}\n"
        ))
        .and_then(|m| m.plan())
        .unwrap_err()
    );
    assert!(e.contains("fio option 'bad name'"), "{e}");
    let e = format!(
        "{:#}",
        parse(&format!(
            "{HEAD}workload:\n  fio: {{filename: /dev/nullb0, rw: read, output-format: json}}\n"
        ))
        .and_then(|m| m.plan())
        .unwrap_err()
    );
    assert!(
        e.contains("fio option 'output-format' is set by lab"),
        "{e}"
    );
}

/// What a fio job may open: a `directory` under a mount (fio makes the
/// files), a file per job, and NVMe's generic character device; a job
/// without any is refused, and so is a job on a device nothing makes.
#[test]
fn fio_targets_per_job_in_a_directory_and_on_the_generic_device() {
    let head = "version: 1\nname: t\nvariants: [{name: a}]\nkernel_axes: {arch: [x86_64]}\n\
                boot: {null_blk: {nr_devices: 2, shared_tags: 1}, nvme: [{size: 1G}]}\n";
    let dir = format!(
        "{head}setup:\n  - mkfs: {{fs: ext4, device: /dev/nullb0}}\n  - mount: {{device: /dev/nullb0, dir: /mnt/t, fs: ext4}}\n\
         workload:\n  fio: {{directory: /mnt/t, rw: randwrite, size: 16M}}\n"
    );
    let p = parse(&dir).unwrap().plan().unwrap();
    assert_eq!(p.boots[0].null_blk["shared_tags"], "1");
    let e = err_of(&dir.replace("directory: /mnt/t", "directory: /mnt/u"));
    assert!(
        e.contains("filename '/mnt/u/': not under a directory"),
        "{e}"
    );
    // Relative names are in the directory.
    let rel = dir.replace(
        "directory: /mnt/t",
        "directory: /mnt/t, filename: \"a.0:a.1\"",
    );
    assert!(parse(&rel).is_ok(), "{}", err_of(&rel));
    let e = err_of(&rel.replace("directory: /mnt/t,", "directory: /srv,"));
    assert!(e.contains("filename '/srv/a.0': not under"), "{e}");
    let jobs = format!(
        "{head}workload:\n  fio:\n    rw: randread\n    jobs:\n      - {{name: n0, options: {{filename: /dev/nullb1}}}}\n      - {{name: g0, options: {{filename: /dev/ng0n1, ioengine: io_uring_cmd}}}}\n"
    );
    assert!(parse(&jobs).is_ok(), "{}", err_of(&jobs));
    let e = err_of(&jobs.replace("/dev/ng0n1", "/dev/ng1n1"));
    assert!(
        e.contains("filename '/dev/ng1n1': no device of the boot") && e.contains("/dev/ng0n1"),
        "{e}"
    );
    let e = err_of(&jobs.replace("filename: /dev/nullb1", "bs: 4k"));
    assert!(e.contains("job 'n0' has no filename"), "{e}");
}

#[test]
fn a_dm_target_brings_the_kernel_config_it_needs_unless_a_fragment_has_it() {
    let flakey = "version: 1
name: t
variants: [{name: a}]
kernel_axes: {arch: [x86_64]}
boot: {null_blk: {nr_devices: 1}}
setup:
  - dm: {name: f, target: flakey, device: /dev/nullb0, up_s: 5, down_s: 1}
workload:
  fio: {filename: /dev/mapper/f, rw: randread}
";
    let m = parse(flakey).unwrap();
    let f = m.fragments.iter().find(|f| f.name == "dm-targets").unwrap();
    assert_eq!(f.text, "CONFIG_DM_FLAKEY=y\n");
    let p = m.plan().unwrap();
    assert!(
        p.kernels[0]
            .fragments
            .iter()
            .any(|f| f.name == "dm-targets")
    );
    // The built-in base has delay and zero: a delay matrix's kernels keep
    // the fragments (and cache keys) they had.
    let m = parse(DELAY).unwrap();
    assert!(m.fragments.iter().all(|f| f.name != "dm-targets"));
}
