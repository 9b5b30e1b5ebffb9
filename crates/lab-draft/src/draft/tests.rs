//! `lab new` on whole mails: the dm-delay mail and the fixtures in
//! tests/data/new (EXPECTED.md there says what a reviewer would write),
//! each drafted, planned and its claims bound.

use super::*;
use crate::matrix::schema::{SetupStep, Workload};
use std::path::PathBuf;

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/data")
        .join(name)
}

/// Draft `mail` into a temp folder the way `lab new` does, and load it
/// back as `lab plan` would.
fn drafted(mail: &str, per_patch: bool) -> (Draft, crate::matrix::Matrix, crate::matrix::Plan) {
    drafted_at(&data(mail), per_patch)
}

/// The same for a mail written into `dir`, as `name`.
fn drafted_text(
    dir: &std::path::Path,
    name: &str,
    body: &str,
) -> (Draft, crate::matrix::Matrix, crate::matrix::Plan) {
    let mail = dir.join(name);
    std::fs::write(&mail, body).unwrap();
    drafted_at(&mail, false)
}

fn drafted_at(
    mail: &std::path::Path,
    per_patch: bool,
) -> (Draft, crate::matrix::Matrix, crate::matrix::Plan) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.yaml");
    let raw = std::fs::read(mail).unwrap();
    let opts = Options {
        name: None,
        per_patch,
        mail_ref: mail.display().to_string(),
    };
    let d = draft(&raw, &opts, &out).unwrap();
    std::fs::write(&out, &d.yaml).unwrap();
    let m = crate::matrix::Matrix::load(&out).unwrap_or_else(|e| panic!("{e:#}\n{}", d.yaml));
    let plan = m.plan().unwrap();
    (d, m, plan)
}

fn axis(m: &crate::matrix::Matrix, name: &str) -> Vec<String> {
    m.run_axes
        .iter()
        .chain(&m.kernel_axes)
        .find(|a| a.name == name)
        .map(|a| a.values.iter().map(|v| v.value.to_string()).collect())
        .unwrap_or_default()
}

/// The fio options of the one workload, or of the named one.
fn fio(m: &crate::matrix::Matrix, name: Option<&str>) -> crate::matrix::schema::FioDef {
    let w = match name {
        Some(n) => m
            .workloads
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, w)| w.clone()),
        None => match &m.workload {
            Some(crate::matrix::schema::WorkloadRef::Inline(w)) => Some(w.clone()),
            _ => None,
        },
    };
    match w {
        Some(Workload::Fio(f)) => *f,
        other => panic!("no fio workload {name:?}: {other:?}"),
    }
}

/// Each claimed value of a drafted matrix with its metric and the one
/// cell it binds to (a value bound to none, or to several, fails).
fn one_cell_each(
    mail: &str,
    m: &crate::matrix::Matrix,
    plan: &crate::matrix::Plan,
) -> Vec<(String, Option<f64>, String)> {
    let t = crate::mail::claims::extract(&std::fs::read(data(mail)).unwrap()).unwrap();
    let commands = crate::matrix::claims::command_metrics(m);
    let mut got = Vec::new();
    for (k, c) in m.claims.iter().enumerate() {
        for b in crate::matrix::claims::bind(k + 1, c, &t[c.table.value - 1], plan, &commands) {
            let crate::matrix::claims::Target::Cells(cells) = &b.target else {
                panic!("{b:?}");
            };
            assert_eq!(cells.len(), 1, "{b:?}");
            got.push((b.metric.clone(), b.claimed, cells[0].clone()));
        }
    }
    got
}

fn s(v: &Option<crate::matrix::Scalar>) -> String {
    v.as_ref().map(|x| x.to_string()).unwrap_or_default()
}

#[test]
fn the_dm_delay_mail_gives_arm64_hz100_delays_and_eight_bound_values() {
    let (d, m, plan) = drafted("patches/dm-delay-ns-expiry.mbox", false);
    assert_eq!((d.claims, d.values), (1, 8), "{}", d.yaml);
    let cells: Vec<&str> = plan.cells.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(cells.len(), 8, "{cells:?}");
    assert!(
        cells.iter().all(|c| c.starts_with("arm64-hz100-")),
        "{cells:?}"
    );
    assert_eq!(axis(&m, "delay"), vec!["1", "2", "5", "20"]);
    let variants: Vec<&str> = m.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(variants, vec!["before", "after"]);
    // The dm step and the workload are inferred, and say so.
    assert!(
        matches!(&m.setup[0], SetupStep::Dm(dm) if dm.target.as_deref() == Some("delay")
        && s(&dm.read_ms) == "{{ delay }}" && dm.device.as_deref() == Some("/dev/nullb0"))
    );
    assert!(
        d.yaml
            .contains("# Inferred: the mail names the dm-delay target"),
        "{}",
        d.yaml
    );
    assert!(d.yaml.contains("# Inferred from the caption"), "{}", d.yaml);
    let f = fio(&m, None);
    assert_eq!(
        (
            s(&f.rw),
            s(&f.bs),
            s(&f.direct),
            s(&f.iodepth),
            s(&f.number_ios)
        ),
        (
            "write".into(),
            "4k".into(),
            "1".into(),
            "1".into(),
            "300".into()
        )
    );
    assert_eq!(f.filename.as_deref(), Some("/dev/mapper/delayed"));
    let c = &m.claims[0];
    assert_eq!(c.metric.as_ref().unwrap().value, "write.lat_mean");
    assert_eq!(c.row_axis.as_ref().unwrap().value, "delay");
    assert_eq!(c.conditions["arch"].value.to_string(), "arm64");
    assert_eq!(c.conditions["hz"].value.to_string(), "100");
    // HZ=1000 is only mentioned in the text; it is offered, not planned.
    assert!(d.yaml.contains("also mentions HZ 1000"), "{}", d.yaml);
}

#[test]
fn a_single_patch_with_two_fio_lines_gives_an_iodepth_axis() {
    let (d, m, _) = drafted("new/single-patch-nullblk.eml", false);
    assert_eq!((d.claims, d.values, d.cells), (1, 4, 4), "{}", d.yaml);
    assert_eq!(axis(&m, "iodepth"), vec!["1", "32"]);
    assert!(
        matches!(m.source, crate::matrix::Source::Tarball { ref path, .. } if path.ends_with("linux-source-6.12.tar.xz"))
    );
    let nb = m.boot.null_blk.as_ref().unwrap();
    assert_eq!(s(&nb.queue_mode), "2");
    assert_eq!(
        s(&nb.gb),
        "1",
        "the mail's 64 GiB is cut to what the guest holds"
    );
    assert!(
        matches!(&m.setup[0], SetupStep::Knob(k) if k.path == "/sys/block/nullb0/queue/iostats" && k.value.to_string() == "0")
    );
    assert!(
        m.fragments
            .iter()
            .any(|f| f.text.contains("CONFIG_BLK_DEV_NULL_BLK_FAULT_INJECTION=y"))
    );
    // The qd32 job's batch options stay with it.
    assert_eq!(
        fio(&m, Some("32")).extra["iodepth_batch_submit"].to_string(),
        "8"
    );
    assert!(!d.yaml.contains("cpus_allowed:"), "{}", d.yaml);
    assert!(d.yaml.contains("Left out --cpus_allowed=4"), "{}", d.yaml);
    let c = &m.claims[0];
    assert_eq!(c.row_axis.as_ref().unwrap().value, "iodepth");
    assert_eq!(c.columns["base"], "before");
    assert_eq!(c.columns["patched"], "after");
    assert_eq!(c.metric.as_ref().unwrap().value, "read.iops");
    assert_eq!(c.unit.as_ref().unwrap().value, "KIOPS");
}

#[test]
fn a_series_with_a_cover_letter_gives_a_crypt_table_and_an_rw_axis() {
    let (d, m, _) = drafted("new/series-cover-dmcrypt.mbox", false);
    assert_eq!((d.claims, d.values, d.cells), (1, 4, 4), "{}", d.yaml);
    assert_eq!(axis(&m, "rw"), vec!["randread", "randwrite"]);
    assert_eq!(axis(&m, "hz"), vec!["1000"]);
    let after = &m.variants[1];
    assert!(
        matches!(&after.patches[..], [crate::matrix::schema::PatchDef::MessageId { message_id, mail: Some(_) }]
        if message_id == "20241204102740.91733-1-tomasz.wielgus@example.org")
    );
    assert!(matches!(&m.setup[0], SetupStep::Knob(k) if k.value.to_string() == "none"));
    assert!(
        matches!(&m.setup[1], SetupStep::Dm(dm) if dm.name == "crypt0"
        && dm.table.as_deref().is_some_and(|t| t.starts_with("0 2097152 crypt aes-xts-plain64 ")))
    );
    assert!(
        m.fragments
            .iter()
            .any(|f| f.text.contains("CONFIG_DM_CRYPT=y"))
    );
    assert_eq!(
        fio(&m, None).filename.as_deref(),
        Some("/dev/mapper/crypt0")
    );
    let c = &m.claims[0];
    assert_eq!(c.row_axis.as_ref().unwrap().value, "rw");
    // Rows read and write: the claim binds the sum, which is each row's own.
    assert_eq!(c.metric.as_ref().unwrap().value, "bw.total");
    assert!(m.derived.iter().any(|x| x.name == "bw.total"));

    let (d, m, _) = drafted("new/series-cover-dmcrypt.mbox", true);
    let ids: Vec<usize> = m.variants.iter().map(|v| v.patches.len()).collect();
    assert_eq!(ids, vec![0, 1, 2, 3], "{}", d.yaml);
    let names: Vec<&str> = m.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, vec!["before", "p1", "p2", "after"]);
}

#[test]
fn a_commit_message_gives_mkfs_mount_and_a_mixed_label_list() {
    let (d, m, _) = drafted("new/commit-message-xfs.patch", false);
    assert_eq!((d.claims, d.values), (1, 4), "{}", d.yaml);
    assert!(d.yaml.contains("The mail names 6.13"), "{}", d.yaml);
    assert!(
        matches!(&m.setup[0], SetupStep::Mkfs(x) if x.fs == "xfs" && x.device == "/dev/nvme0n1" && x.options == "-f")
    );
    assert!(
        matches!(&m.setup[1], SetupStep::Mount(x) if x.dir == "/mnt" && x.options == "noatime,logbsize=256k")
    );
    let f = fio(&m, None);
    assert_eq!(
        (f.filename.as_deref(), s(&f.fsync), s(&f.numjobs)),
        (Some("/mnt/fsync.dat"), "1".into(), "8".into())
    );
    assert_eq!(s(&f.size), "512M");
    let c = &m.claims[0];
    assert_eq!(c.metrics["before"], "write.iops");
    assert_eq!(c.metrics["fsync lat p99 (usec)"], "sync.lat_p99");
    assert_eq!(c.row_variants["after"], "after");
}

#[test]
fn a_reply_with_results_gives_a_delay_loop_axis_and_its_own_hz() {
    let (d, m, _) = drafted("new/reply-results-delay.eml", false);
    assert_eq!((d.claims, d.values, d.cells), (1, 6, 6), "{}", d.yaml);
    assert_eq!(axis(&m, "delay"), vec!["10", "20", "50"]);
    // HZ=100 is in the quoted patch, not in the tester's words.
    assert_eq!(axis(&m, "hz"), vec!["250"]);
    assert_eq!(m.arches.len(), 1);
    assert!(matches!(&m.setup[0], SetupStep::Dm(dm) if s(&dm.write_ms) == "{{ delay }}"));
    // The device each cell makes, named as the mail's loop names it.
    assert_eq!(
        fio(&m, None).filename.as_deref(),
        Some("/dev/mapper/delay{{ delay }}")
    );
    // The patch is the mail this one answers; b4 or --mail brings it.
    assert!(
        matches!(&m.variants[1].patches[..], [crate::matrix::schema::PatchDef::MessageId { message_id, mail: None }]
        if message_id == "20241212064109.3318-1-kenji.morimoto@example.com")
    );
    let c = &m.claims[0];
    assert_eq!(c.columns["unpatched"], "before");
    assert_eq!(c.metric.as_ref().unwrap().value, "write.lat_mean");
}

#[test]
fn a_mail_with_only_prose_numbers_gets_an_inferred_workload() {
    let (d, m, _) = drafted("new/prose-only-nvme.eml", false);
    assert!(m.setup.is_empty(), "{}", d.yaml);
    assert_eq!(m.boot.nvme.len(), 1);
    let f = fio(&m, None);
    assert_eq!(
        (
            s(&f.rw),
            s(&f.bs),
            s(&f.iodepth),
            s(&f.ioengine),
            s(&f.numjobs)
        ),
        (
            "randread".into(),
            "4k".into(),
            "32".into(),
            "io_uring".into(),
            "8".into()
        )
    );
    assert!(d.yaml.contains("# Inferred from the caption"), "{}", d.yaml);
    // "read IOPS go from 1.62M to 1.89M" (the unit before the numbers)
    // and "p99 completion latency drops from 330 usec to 262 usec".
    assert_eq!((d.claims, d.values), (2, 4), "{}", d.yaml);
    assert_eq!(m.claims[0].metric.as_ref().unwrap().value, "read.iops");
    assert_eq!(m.claims[1].metric.as_ref().unwrap().value, "read.clat_p99");
}

#[test]
fn a_series_without_a_cover_gives_a_knob_axis_from_the_table_rows() {
    let (d, m, _) = drafted("new/series-nocover-knobs.mbox", false);
    assert_eq!((d.claims, d.values, d.cells), (1, 4, 4), "{}", d.yaml);
    assert_eq!(axis(&m, "scheduler"), vec!["none", "mq-deadline"]);
    // One knob step per cell, not the mail's two writes.
    assert_eq!(m.setup.len(), 1, "{}", d.yaml);
    assert!(matches!(&m.setup[0], SetupStep::Knob(k) if k.value.to_string() == "{{ scheduler }}"));
    assert_eq!(m.boot.cpus, Some(1));
    assert_eq!(m.variants[1].patches.len(), 2);
    assert!(
        m.fragments
            .iter()
            .any(|f| f.text.contains("CONFIG_MQ_IOSCHED_DEADLINE=y"))
    );
    assert_eq!(m.claims[0].metric.as_ref().unwrap().value, "write.iops");
}

#[test]
fn tables_from_other_programs_stay_comments_with_the_reason() {
    let (d, m, _) = drafted("mails/labels-commands.eml", false);
    // fio's and dd's numbers bind to their own workloads; dmsetup's
    // timing of mkfs is no workload.
    assert_eq!((d.claims, d.values), (2, 6), "{}", d.yaml);
    assert_eq!(m.claims[0].row_variants["p99 latency after"], "after");
    assert!(
        d.yaml.contains("its numbers come from `dmsetup`"),
        "{}",
        d.yaml
    );
    let wl = axis(&m, "wl");
    assert_eq!(wl.len(), 2, "{}", d.yaml);
    assert_eq!(m.claims[1].conditions["wl"].value.to_string(), wl[1]);
}

#[test]
fn dd_runs_as_fio_and_banners_name_the_variants() {
    let (d, m, plan) = drafted("new/dd-sections-two-files.eml", false);
    // `dd if=FILE of=/dev/null bs=4k count=N`: a psync sequential read
    // of FILE in blocks of bs; the two commands vary bs.
    assert_eq!(axis(&m, "bs"), ["4k", "64k"], "{}", d.yaml);
    assert!(d.yaml.contains("ioengine: psync"), "{}", d.yaml);
    assert!(d.yaml.contains("filename: /mnt/test/big"), "{}", d.yaml);
    assert_eq!(plan.cells.len(), 4);
    // Under `== base ==` before, under `== patched ==` after; dd's
    // elapsed seconds are no latency.
    let sides: Vec<(usize, String)> = m
        .claims
        .iter()
        .map(|c| {
            let v = c.from_variant.as_ref().map(|v| v.value.clone());
            (c.table.value, v.unwrap_or_default())
        })
        .collect();
    assert_eq!(
        sides,
        [
            (1, "before".into()),
            (2, "before".into()),
            (4, "after".into())
        ],
        "{}",
        d.yaml
    );
    assert!(d.yaml.contains("is how long the run"), "{}", d.yaml);
    // The sparse file's 4k read after the sections gives the patched
    // 4k cell another value: neither table binds.
    assert!(
        d.unclaimed
            .iter()
            .any(|u| u.starts_with("table 5") && u.contains("more than 15% apart")),
        "{:?}",
        d.unclaimed
    );
    assert!(
        d.unclaimed.iter().any(|u| u.starts_with("table 3")),
        "{:?}",
        d.unclaimed
    );
    assert!(
        d.unmapped.iter().any(|u| u.contains("without if= or of=")),
        "{:?}",
        d.unmapped
    );
}

#[test]
fn every_fixture_mail_drafts_a_matrix_that_plans() {
    // No panic and a plannable draft for every mail the claims tests use.
    for e in std::fs::read_dir(data("mails")).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            let name = format!("mails/{}", p.file_name().unwrap().to_string_lossy());
            let (d, ..) = drafted(&name, false);
            assert!(
                d.yaml
                    .lines()
                    .all(|l| !l.starts_with('#') || l.len() <= 72 || l.contains("...")),
                "{name}"
            );
        }
    }
}

#[test]
fn odd_lines_never_panic_and_still_plan() {
    let odd = [
        "[x]#",
        "$",
        "# ",
        "for",
        "for x in",
        "for x in ; do",
        "done",
        "dmsetup create",
        "dmsetup create x",
        "echo >",
        "echo 1 >",
        "echo 1 > /sys/",
        "mount",
        "mount -o",
        "mkfs.",
        "mkfs -t",
        "fio --",
        "fio --=",
        "fio x.fio",
        "modprobe",
        "modprobe -r",
        "sysctl",
        "sysctl -w =",
        "perf stat",
        "perf stat -e",
        "[global]",
        "rw",
        "[job]",
        "CONFIG_",
        "CONFIG_X=",
        "HZ=",
        "x86",
        "\\",
        "a | | b",
        "$(",
        "\"",
        "'",
        "for d in $(seq 1 1000000); do echo $d > /sys/a; done",
        "echo \"0 $(blockdev --getsz /dev/sdz) crypt\" | dmsetup create c",
        "taskset -c",
        "numactl --",
        "time",
        "  before  after\n  1  2\n",
        "delay before after\n1 2 3\nx y z\n",
    ];
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.yaml");
    let mail = dir.path().join("mail.txt");
    for (i, l) in odd.iter().enumerate() {
        let text = format!(
            "{l}\n\nResults (IOPS):\n\n  qd  before  after\n  1   10      20\n  32  30      40\n\n{l}\n"
        );
        std::fs::write(&mail, &text).unwrap();
        let opts = Options {
            name: Some(format!("odd{i}")),
            per_patch: false,
            mail_ref: mail.display().to_string(),
        };
        let d = draft(text.as_bytes(), &opts, &out).unwrap_or_else(|e| panic!("{l:?}: {e:#}"));
        assert!(d.yaml.starts_with("# Drafted by `lab new`"), "{l:?}");
    }
}

/// Tables whose rows are devices and whose columns are metrics, in a
/// patch to an I/O scheduler: a device axis that moves the fio file and
/// the scheduler knob, the scheduler's config, and each of the 8 values
/// bound to the one cell of its device and variant.
#[test]
fn rows_of_devices_and_columns_of_metrics_under_a_scheduler() {
    let (d, m, plan) = drafted("new/device-rows-scheduler.eml", false);
    assert_eq!(axis(&m, "dev"), ["nullb0", "nvme0n1"], "{}", d.yaml);
    let files: Vec<String> = plan
        .cells
        .iter()
        .map(|c| match &c.workload {
            Some(Workload::Fio(f)) => f.filename.clone().unwrap_or_default(),
            _ => String::new(),
        })
        .collect();
    assert!(
        files.contains(&"/dev/nullb0".to_string()) && files.contains(&"/dev/nvme0n1".to_string()),
        "{files:?}"
    );
    assert!(
        d.yaml.contains("/queue/scheduler\", value: kyber}"),
        "{}",
        d.yaml
    );
    assert!(d.yaml.contains("CONFIG_MQ_IOSCHED_KYBER=y"), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (1, 8), "{}", d.yaml);
    assert!(d.yaml.contains("    group_axis: variant\n"), "{}", d.yaml);
    assert!(
        d.yaml
            .contains("      IOPS: read.iops\n      \"lat (us)\": read.lat_mean\n"),
        "{}",
        d.yaml
    );
    let t = crate::mail::claims::extract(
        &std::fs::read(data("new/device-rows-scheduler.eml")).unwrap(),
    )
    .unwrap();
    let commands = crate::matrix::claims::command_metrics(&m);
    let b = crate::matrix::claims::bind(1, &m.claims[0], &t[0], &plan, &commands);
    assert_eq!(b.len(), 8);
    for b in b {
        let crate::matrix::claims::Target::Cells(cells) = &b.target else {
            panic!("{b:?}");
        };
        let (group, dev) = b.row.split_once(" / ").unwrap();
        let variant = if group == "Base" { "before" } else { "after" };
        assert_eq!(cells, &[format!("x86_64-{variant}:dev={dev}")], "{b:?}");
    }
}

/// Numbers printed under a command are that command's: two fio runs in
/// one reply become two workloads (named as fio's `--name`), and each
/// run's IOPS and bandwidth bind to its own workload's cells only.
#[test]
fn numbers_under_each_command_bind_to_its_workload() {
    let (d, m, plan) = drafted("new/two-commands-outputs.eml", false);
    assert_eq!(axis(&m, "wl"), ["polled", "irq"], "{}", d.yaml);
    assert_eq!((d.claims, d.values), (2, 6), "{}", d.yaml);
    let t =
        crate::mail::claims::extract(&std::fs::read(data("new/two-commands-outputs.eml")).unwrap())
            .unwrap();
    let commands = crate::matrix::claims::command_metrics(&m);
    for (k, wl) in [(0, "polled"), (1, "irq")] {
        let b = crate::matrix::claims::bind(k + 1, &m.claims[k], &t[k], &plan, &commands);
        assert_eq!(b.len(), 3, "{b:?}");
        for b in b {
            let crate::matrix::claims::Target::Cells(cells) = &b.target else {
                panic!("{b:?}");
            };
            assert_eq!(cells, &[format!("x86_64-after:wl={wl}")], "{b:?}");
        }
    }
}

/// Key columns named after queue attributes become knob axes on a
/// drive where they work (NVMe with poll queues, 2 vCPUs), and rows
/// keyed by three columns bind through `row_axes`, one cell a value.
#[test]
fn queue_attribute_columns_are_knob_axes_and_rows_bind_through_all_keys() {
    let (d, m, plan) = drafted("new/poll-knobs-reply.eml", false);
    assert_eq!(axis(&m, "io_poll"), ["0", "1"], "{}", d.yaml);
    assert_eq!(axis(&m, "io_poll_delay"), ["-1", "0"], "{}", d.yaml);
    assert_eq!(axis(&m, "numjobs"), ["1", "4"], "{}", d.yaml);
    let knobs: Vec<String> = m
        .setup
        .iter()
        .filter_map(|s| match s {
            SetupStep::Knob(k) => Some(format!("{}={}", k.path, k.value)),
            _ => None,
        })
        .collect();
    assert_eq!(
        knobs,
        [
            "/sys/block/nvme0n1/queue/io_poll={{ io_poll }}",
            "/sys/block/nvme0n1/queue/io_poll_delay={{ io_poll_delay }}"
        ],
        "{}",
        d.yaml
    );
    assert!(m.boot.cpus.unwrap_or(1) >= 2, "{}", d.yaml);
    assert!(d.yaml.contains("poll_queues: 1"), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (1, 12), "{}", d.yaml);
    let t = crate::mail::claims::extract(&std::fs::read(data("new/poll-knobs-reply.eml")).unwrap())
        .unwrap();
    let commands = crate::matrix::claims::command_metrics(&m);
    for b in crate::matrix::claims::bind(1, &m.claims[0], &t[0], &plan, &commands) {
        let crate::matrix::claims::Target::Cells(cells) = &b.target else {
            panic!("{b:?}");
        };
        assert_eq!(cells.len(), 1, "{b:?}");
    }
}

/// A series pasted into a text file: its patches are the `after`
/// variant's (from the file), and the fio line and numbers after the
/// diffs are read.
#[test]
fn a_series_in_a_text_file_is_found_and_the_text_after_its_diffs_read() {
    let (d, m, _) = drafted("patches/series-in-text.txt", false);
    let after = m.variants.iter().find(|v| v.name == "after").unwrap();
    assert_eq!(after.patches.len(), 1, "{}", d.yaml);
    assert!(d.yaml.contains("      - {mail: "), "{}", d.yaml);
    let f = fio(&m, None);
    assert_eq!(f.filename.as_deref(), Some("/dev/nullb0"), "{}", d.yaml);
    assert!(!d.yaml.contains("Inferred from the caption"), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (1, 2), "{}", d.yaml);
}

/// A loop that makes devices is not the experiment: the axis runs over
/// the devices the fio lines opened, the dm name is a template of it,
/// the caption's `1ms` picks the cells, `Previous`/`Kthread` are the two
/// kernels and `Theoretical maximum` is a bound.
#[test]
fn a_device_loop_gives_the_measured_values_and_labels_become_variants() {
    let (d, m, plan) = drafted("new/loop-devices-variants.eml", false);
    assert_eq!(axis(&m, "delay"), ["1", "10"], "{}", d.yaml);
    assert!(
        matches!(&m.setup[0], SetupStep::Dm(dm) if dm.name == "dm-delay-{{ delay }}ms"),
        "{}",
        d.yaml
    );
    assert_eq!(
        fio(&m, None).filename.as_deref(),
        Some("/dev/mapper/dm-delay-{{ delay }}ms")
    );
    assert_eq!((d.claims, d.values, d.cells), (1, 2, 4), "{}", d.yaml);
    let c = &m.claims[0];
    assert_eq!(c.aliases["Previous"], "before");
    assert_eq!(c.aliases["Kthread"], "after");
    assert_eq!(c.aliases["Theoretical maximum"], "-");
    let t = crate::mail::claims::extract(
        &std::fs::read(data("new/loop-devices-variants.eml")).unwrap(),
    )
    .unwrap();
    let b = crate::matrix::claims::bind(
        1,
        c,
        &t[0],
        &plan,
        &crate::matrix::claims::command_metrics(&m),
    );
    let cells: Vec<&crate::matrix::claims::Target> = b.iter().map(|b| &b.target).collect();
    assert_eq!(
        format!("{cells:?}"),
        r#"[Cells(["x86_64-before:delay=1"]), Cells(["x86_64-after:delay=1"])]"#
    );
}

/// `--iodepth=$QD` is no value: the QD rows give the axis that fills
/// it; numbers written `101K` with no unit are read as IOPS, and the
/// draft says that was inferred.
#[test]
fn a_shell_variable_is_filled_by_the_tables_axis_and_bare_k_is_iops() {
    let (d, m, _) = drafted("new/bare-multiplier-table.eml", false);
    assert_eq!(axis(&m, "iodepth"), ["1", "8"], "{}", d.yaml);
    assert_eq!(s(&fio(&m, None).iodepth), "{{ iodepth }}");
    assert!(
        d.yaml.contains("# Left out --iodepth=$QD: a variable"),
        "{}",
        d.yaml
    );
    assert_eq!((d.claims, d.values), (1, 4), "{}", d.yaml);
    assert_eq!(m.claims[0].metric.as_ref().unwrap().value, "read.iops");
    assert!(
        d.inferred.iter().any(|i| i.contains("read as IOPS")),
        "{:?}",
        d.inferred
    );
}

/// Two tables of the same rows, the problem first and the patched
/// numbers after: the first is the unpatched kernel's; a column of
/// something lab does not measure (`Lock wait`) is left out, not the
/// whole table.
#[test]
fn a_problem_table_then_the_fixed_one_are_before_and_after() {
    let (d, m, plan) = drafted("new/problem-then-fix-tables.eml", false);
    assert_eq!((d.claims, d.values), (2, 4), "{}", d.yaml);
    let t = crate::mail::claims::extract(
        &std::fs::read(data("new/problem-then-fix-tables.eml")).unwrap(),
    )
    .unwrap();
    let commands = crate::matrix::claims::command_metrics(&m);
    for (k, variant) in [(0, "before"), (1, "after")] {
        let b = crate::matrix::claims::bind(k + 1, &m.claims[k], &t[k], &plan, &commands);
        assert_eq!(b.len(), 2, "{b:?}");
        for b in b {
            let crate::matrix::claims::Target::Cells(cells) = &b.target else {
                panic!("{b:?}");
            };
            assert!(
                cells
                    .iter()
                    .all(|c| c.starts_with(&format!("x86_64-{variant}:"))),
                "{b:?}\n{}",
                d.yaml
            );
            assert_eq!(b.metric, "read.iops");
        }
    }
}

/// Numbers under each of several commands that open one device of a
/// loop each (`dm-delay-1ms`, `dm-delay-10ms`) bind to that device's
/// cells only: the command says the workload and the delay.
#[test]
fn numbers_under_a_command_bind_to_the_device_it_opened() {
    let (d, m, plan) = drafted("new/loop-commands-per-delay.eml", false);
    assert_eq!(axis(&m, "delay"), ["1", "10"], "{}", d.yaml);
    assert_eq!((d.claims, d.values), (3, 6), "{}", d.yaml);
    let t = crate::mail::claims::extract(
        &std::fs::read(data("new/loop-commands-per-delay.eml")).unwrap(),
    )
    .unwrap();
    let commands = crate::matrix::claims::command_metrics(&m);
    for (k, delay) in [(0, "1"), (1, "10"), (2, "10")] {
        for b in crate::matrix::claims::bind(k + 1, &m.claims[k], &t[k], &plan, &commands) {
            let crate::matrix::claims::Target::Cells(cells) = &b.target else {
                panic!("{b:?}");
            };
            assert_eq!(cells.len(), 1, "{b:?}\n{}", d.yaml);
            assert!(cells[0].contains(&format!("delay={delay},")), "{b:?}");
        }
    }
}

/// fio's group lines (`READ: bw=...`, `WRITE: bw=...`) under "before"
/// and "after" captions: each row's metric is its direction's `bw`, read
/// from the `bw` column, for the variant the caption names.
#[test]
fn group_lines_bind_their_bw_column_per_direction() {
    let (d, m, plan) = drafted("new/group-lines-before-after.eml", false);
    assert_eq!((d.claims, d.values), (2, 4), "{}", d.yaml);
    let got = one_cell_each("new/group-lines-before-after.eml", &m, &plan);
    assert_eq!(
        got,
        [
            (
                "read.bw".to_string(),
                Some(407.0),
                "x86_64-before".to_string()
            ),
            (
                "write.bw".to_string(),
                Some(407.0),
                "x86_64-before".to_string()
            ),
            (
                "read.bw".to_string(),
                Some(436.0),
                "x86_64-after".to_string()
            ),
            (
                "write.bw".to_string(),
                Some(435.0),
                "x86_64-after".to_string()
            ),
        ],
        "{}",
        d.yaml
    );
}

/// A RAM disk (brd's /dev/ram0) is a memory-backed null_blk here, the
/// dm tables over it are cut to lab's 1 GiB, a loop over a variable of
/// devices is an axis, `fio ... | grep WRITE` is fio, and each number
/// binds to the device its caption names.
#[test]
fn a_ram_disk_loop_binds_each_device_it_wrote_to() {
    let (d, m, plan) = drafted("new/ramdisk-device-loop.eml", false);
    assert_eq!(
        axis(&m, "d"),
        ["/dev/nullb0", "/dev/mapper/plain", "/dev/mapper/inline"],
        "{}",
        d.yaml
    );
    let said: String = d
        .yaml
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert!(
        !said.contains("/dev/ram0") && !said.contains("brd"),
        "{}",
        d.yaml
    );
    assert!(d.yaml.contains("0 2097152 crypt"), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (3, 3), "{}", d.yaml);
    let got = one_cell_each("new/ramdisk-device-loop.eml", &m, &plan);
    assert_eq!(
        got,
        [
            (
                "write.bw".to_string(),
                Some(900.0),
                "x86_64-after:d=/dev/nullb0".to_string()
            ),
            (
                "write.bw".into(),
                Some(41.0),
                "x86_64-after:d=/dev/mapper/plain".into()
            ),
            (
                "write.bw".into(),
                Some(310.0),
                "x86_64-after:d=/dev/mapper/inline".into()
            ),
        ]
    );
}

/// Rows that name directions in words under a job whose rw is a shell
/// variable: the rows are the rw axis, each row its value's cells; a
/// version in a question is no tree.
#[test]
fn direction_rows_fill_a_variable_rw() {
    let mail = "new/direction-rows-variable.eml";
    let (d, m, plan) = drafted(mail, false);
    assert_eq!(
        axis(&m, "rw"),
        ["read", "write", "randread", "randwrite"],
        "{}",
        d.yaml
    );
    assert_eq!(s(&fio(&m, None).rw), "{{ rw }}");
    assert!(!d.yaml.contains("5.8"), "{}", d.yaml);
    let got = one_cell_each(mail, &m, &plan);
    assert_eq!(got.len(), 16, "{}", d.yaml);
    for (metric, ..) in &got {
        assert!(metric == "iops.total" || metric == "bw.total", "{metric}");
    }
    // 'random write' IOPS of the patched kernel: its own cell.
    let rw: Vec<&String> = got
        .iter()
        .filter(|(m, c, _)| m == "iops.total" && *c == Some(34700.0))
        .map(|(.., cell)| cell)
        .collect();
    assert_eq!(rw.len(), 1, "{got:?}");
    assert!(
        rw[0].contains("randwrite") && rw[0].contains("after"),
        "{}",
        rw[0]
    );
}

/// A tool's output read as several tables is the command's above it
/// all; two runs that differ by a switch given and left off vary that
/// switch; a sentence before the commands takes neither as its own.
#[test]
fn every_block_under_a_command_binds_to_its_switch_value() {
    let mail = "new/split-tool-output-switch.eml";
    let (d, m, plan) = drafted(mail, false);
    assert_eq!(axis(&m, "hipri"), ["0", "1"], "{}", d.yaml);
    let got = one_cell_each(mail, &m, &plan);
    let iops: Vec<(f64, &String)> = got
        .iter()
        .filter(|(metric, ..)| metric == "read.iops")
        .filter_map(|(_, v, cell)| Some(((*v)?, cell)))
        .collect();
    // Three IOPS= lines and the maximum under each command.
    assert!(iops.len() >= 8, "{got:?}\n{}", d.yaml);
    for (v, cell) in iops {
        let polled = v > 1.5e6;
        assert_eq!(
            cell.contains("hipri-1") || cell.contains("hipri=1"),
            polled,
            "{v} {cell}"
        );
    }
}

/// fio options listed in brackets are the jobs of the tables under
/// them, and columns of one measure in a switch's two modes are that
/// switch's axis.
#[test]
fn bracketed_options_are_jobs_and_mode_columns_an_axis() {
    let mail = "new/param-list-poll-columns.eml";
    let (d, m, plan) = drafted(mail, false);
    assert_eq!(axis(&m, "hipri"), ["0", "1"], "{}", d.yaml);
    assert_eq!(axis(&m, "wl").len(), 2, "{}", d.yaml);
    let got = one_cell_each(mail, &m, &plan);
    assert_eq!(got.len(), 4, "{}", d.yaml);
    for (metric, v, cell) in &got {
        assert_eq!(metric, "read.iops");
        let v = v.unwrap();
        let polled = v == 247000.0 || v == 362000.0;
        assert_eq!(cell.contains("hipri=1"), polled, "{v} {cell}");
        let two_jobs = v > 300000.0;
        assert!(cell.contains("after"), "{cell}");
        assert_eq!(cell.contains("wl=2-"), two_jobs, "{v} {cell}\n{}", d.yaml);
    }
}

/// Commands a mail client wrapped without a `\` keep their options,
/// and fio's group lines a blank line below a command are that
/// command's numbers.
#[test]
fn wrapped_commands_and_the_group_lines_below_them() {
    let mail = "new/wrapped-commands-group-lines.eml";
    let (d, m, plan) = drafted(mail, false);
    assert_eq!(axis(&m, "iodepth"), ["1", "16"], "{}", d.yaml);
    let got = one_cell_each(mail, &m, &plan);
    let bw: Vec<&(String, Option<f64>, String)> = got
        .iter()
        .filter(|(metric, ..)| metric == "read.bw")
        .collect();
    assert_eq!(bw.len(), 2, "{got:?}\n{}", d.yaml);
    for (_, v, cell) in bw {
        let deep = v.unwrap() > 3000.0;
        assert_eq!(cell.contains("iodepth=16"), deep, "{v:?} {cell}");
    }
}

/// Rows of one table that would give one cell's metric two values far
/// apart (two cgroups' jobs) bind nothing: the table stays a comment
/// that says why.
#[test]
fn rows_one_cell_cannot_reproduce_both_are_no_claim() {
    let (d, _, _) = drafted("new/two-cgroups-one-run.eml", false);
    assert_eq!((d.claims, d.values), (0, 0), "{}", d.yaml);
    assert!(
        d.unclaimed
            .iter()
            .any(|u| u.contains("measure something the matrix does not vary")),
        "{:?}",
        d.unclaimed
    );
}

#[test]
fn option_alternatives_vary_the_option_and_cross_into_two_axes() {
    let (d, m, plan) = drafted("new/option-alternatives-table.eml", false);
    // `--rw=randread[,randwrite] --bs={4k,64k}`: one run per value of
    // each, every combination: two axes, not four named workloads.
    assert_eq!(axis(&m, "rw"), ["randread", "randwrite"], "{}", d.yaml);
    assert_eq!(axis(&m, "bs"), ["4k", "64k"], "{}", d.yaml);
    assert!(d.yaml.contains("rw: \"{{ rw }}\""), "{}", d.yaml);
    assert_eq!(plan.cells.len(), 8);
    // The table's key columns are those axes: every value binds.
    assert_eq!((d.claims, d.values), (1, 8), "{}", d.yaml);
    let rows: Vec<&str> = m.claims[0]
        .row_axes
        .iter()
        .map(|a| a.value.as_str())
        .collect();
    assert_eq!(rows, ["bs", "rw"]);
}

#[test]
fn a_report_naming_two_kernels_compares_them() {
    let (d, m, _) = drafted("new/two-kernels-report.eml", false);
    // `uname -r` lines under "Good:" and "Bad:": the two variants, each
    // on the tree nearest it, and the note says when that is one tree.
    assert_eq!(m.variants.len(), 2, "{}", d.yaml);
    assert!(m.variants.iter().all(|v| v.source.is_some()), "{}", d.yaml);
    assert_eq!(
        d.yaml.matches("\n    source: debian-6.1\n").count(),
        2,
        "{}",
        d.yaml
    );
    assert!(
        d.yaml.contains("names two kernels, 6.1 and 6.6"),
        "{}",
        d.yaml
    );
    assert!(d.yaml.contains("build one tree"), "{}", d.yaml);
    // Bisection's good and bad columns are before and after.
    assert_eq!((d.claims, d.values), (1, 4), "{}", d.yaml);
    assert_eq!(m.claims[0].columns["good"], "before");
    assert_eq!(m.claims[0].columns["bad"], "after");
}

/// A job whose paths and options the mail's shell filled in: the file
/// under `${MNT}` is a file on the mount lab makes (of the file system
/// the mail names most), `$RW` takes the direction the words give
/// (`write-only`), and `${BS}` the sizes that name the rows (`12k:` too).
#[test]
fn shell_variables_in_a_fio_line_become_lab_paths_and_axes() {
    let (d, m, plan) = drafted("new/shell-variable-paths.eml", false);
    assert!(
        m.setup
            .iter()
            .any(|s| matches!(s, SetupStep::Mkfs(x) if x.fs == "ext4")),
        "{}",
        d.yaml
    );
    let f = fio(&m, None);
    assert!(
        !f.filename.as_deref().unwrap_or("").contains('$'),
        "{}",
        d.yaml
    );
    assert_eq!(s(&f.rw), "write", "{}", d.yaml);
    assert_eq!(axis(&m, "bs"), ["4k", "8k", "12k"], "{}", d.yaml);
    assert_eq!((d.claims, d.values), (1, 3), "{}", d.yaml);
    assert_eq!(plan.cells.len(), 6, "{}", d.yaml);
}

/// Tables under `bs=4k:` and `bs=64k:` captions sweep the block size
/// the bare job leaves open; a mail about an xfs commit whose job names
/// no file runs it in a directory on xfs, its jobs' files fitting.
#[test]
fn caption_values_sweep_an_option_on_the_commits_file_system() {
    let (d, m, plan) = drafted("new/caption-sweep-fs-commit.eml", false);
    assert_eq!(axis(&m, "bs"), ["4k", "64k"], "{}", d.yaml);
    assert!(
        m.setup
            .iter()
            .any(|s| matches!(s, SetupStep::Mkfs(x) if x.fs == "xfs")),
        "{}",
        d.yaml
    );
    let f = fio(&m, None);
    assert!(f.filename.is_none(), "{}", d.yaml);
    assert_eq!(s(&f.size), "192M", "{}", d.yaml);
    assert_eq!((d.claims, d.values), (2, 12), "{}", d.yaml);
    assert_eq!(plan.cells.len(), 4, "{}", d.yaml);
    for c in &m.claims {
        assert_eq!(c.metrics["WRITE"], "write.bw", "{}", d.yaml);
        // The bare count between the bandwidth and the latency.
        assert_eq!(c.metrics["WRITE (2)"], "write.iops", "{}", d.yaml);
        assert_eq!(c.metrics["WRITE (3)"], "write.lat_mean", "{}", d.yaml);
    }
}

/// A script's variables fill its fio line, the run that only lays files
/// out is no workload, and a three-part release names the kernel.
#[test]
fn a_scripts_variables_and_its_layout_run() {
    let (d, m, _) = drafted("new/script-variables-layout-run.eml", false);
    assert!(d.yaml.contains("The mail names 6.1"), "{}", d.yaml);
    assert!(
        m.setup
            .iter()
            .any(|s| matches!(s, SetupStep::Mkfs(x) if x.fs == "ext4")),
        "{}",
        d.yaml
    );
    assert!(m.workloads.is_empty(), "{}", d.yaml);
    let f = fio(&m, None);
    assert_eq!(
        (s(&f.bs), s(&f.numjobs)),
        ("16k".into(), "8".into()),
        "{}",
        d.yaml
    );
    assert!(
        d.yaml.contains("--create_only=1 it lays out files"),
        "{}",
        d.yaml
    );
}

/// Captions that differ in a few words say whose numbers each list is:
/// `unmodified` before, `modified` after, and a third kernel's list is
/// no claim.
#[test]
fn captions_set_apart_by_their_own_words() {
    let (d, m, _) = drafted("new/caption-contrast-kernels.eml", false);
    assert!(d.yaml.contains("The mail names 6.1"), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (2, 4), "{}", d.yaml);
    let variants: Vec<String> = m
        .claims
        .iter()
        .map(|c| {
            c.from_variant
                .as_ref()
                .map(|v| v.value.clone())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(variants, ["before", "after"], "{}", d.yaml);
    assert!(
        d.yaml.contains("table 1: its caption names neither side"),
        "{}",
        d.yaml
    );
}

/// A knob shown, runs, the knob set to another value, runs again: an
/// axis of the knob, each table under the value set above it.
#[test]
fn a_knob_set_in_turn_is_an_axis_and_conditions_its_tables() {
    let (d, m, plan) = drafted("new/knob-set-in-turn-dd.eml", false);
    assert_eq!(axis(&m, "read_ahead_kb"), ["128", "4096"], "{}", d.yaml);
    assert!(
        d.yaml.contains("value: \"{{ read_ahead_kb }}\""),
        "{}",
        d.yaml
    );
    assert!(axis(&m, "drop_caches").is_empty(), "{}", d.yaml);
    assert_eq!((d.claims, d.values), (2, 6), "{}", d.yaml);
    let conditions: Vec<String> = m
        .claims
        .iter()
        .map(|c| c.conditions["read_ahead_kb"].value.to_string())
        .collect();
    assert_eq!(conditions, ["128", "4096"], "{}", d.yaml);
    assert!(plan.cells.len() >= 2);
}

/// A sweep of a cgroup throttle limit shown as captions over sections
/// of fio lines, each kernel's line labelled `before:` / `after :`: the
/// limit is an axis applied by a cgroup step on the job's device, the
/// kernels' lines are the variants, and the lines under a caption (the
/// latency lines below the bandwidth lines) take its value.
#[test]
fn caption_sections_of_a_throttle_limit_become_a_cgroup_axis() {
    let dir = tempfile::tempdir().unwrap();
    let mut body = String::from(
        "From: a@example.org\nSubject: [PATCH] blk-throttle: account split bios once\n\n\
         fio --name=r --filename=/dev/nullb0 --rw=read --bs=4k\n\n",
    );
    for (limit, iops) in [("2MB/s", 480), ("4MB/s", 960)] {
        body.push_str(&format!(
            "blkio.throttle.read_bps_device = {limit}\n\
             \x20  before:  read: IOPS={iops}, BW={bw}KiB/s ({bw}kB/s)(100MiB/50000msec)\n\
             \x20  after :  read: IOPS={a}, BW={ab}KiB/s ({ab}kB/s)(100MiB/50000msec)\n\n\
             \x20  before:  lat  (usec): min=6, max=16795k, avg={l}.57, stdev=2657.14\n\
             \x20  after :  lat  (usec): min=16, max=209197, avg={l}.03, stdev=2718.04\n\n",
            bw = iops * 4,
            a = iops + 20,
            ab = (iops + 20) * 4,
            l = 2_000_000 / iops,
        ));
    }
    let (d, m, _) = drafted_text(dir.path(), "m.eml", &body);
    assert_eq!(axis(&m, "rbps"), ["2MB/s", "4MB/s"], "{}", d.yaml);
    assert!(
        matches!(&m.setup[..], [SetupStep::Cgroup(c)] if c.device == "/dev/nullb0"
            && c.rbps.as_ref().map(|v| v.to_string()).as_deref() == Some("{{ rbps }}")),
        "{}",
        d.yaml
    );
    assert_eq!(d.cells, 4, "{}", d.yaml);
    // Each section: IOPS, BW and its kB/s twin of both kernels, and
    // both latency means.
    assert_eq!((d.claims, d.values), (4, 16), "{}", d.yaml);
    assert!(d.yaml.contains("\"#3\": read.bw_kb"), "{}", d.yaml);
    for limit in ["2MB/s", "4MB/s"] {
        let n = d
            .yaml
            .matches(&format!("conditions: {{rbps: {limit}}}"))
            .count();
        assert_eq!(n, 2, "{limit}\n{}", d.yaml);
    }
}

/// A cover letter on its own: `after` is its series, fetched by the
/// cover's Message-ID (b4 brings the patches that answer it).
#[test]
fn a_lone_cover_letter_names_its_series_by_its_message_id() {
    let dir = tempfile::tempdir().unwrap();
    let body = "From: a@example.org\nSubject: [PATCH 0/3] blk-mq: batch tag frees\n\
                Message-ID: <20260101.1-1-a@example.org>\n\n\
                fio --name=r --filename=/dev/nullb0 --rw=randread --bs=4k\n\n\
                before: 100 IOPS\nafter: 120 IOPS\n";
    let (d, ..) = drafted_text(dir.path(), "cover.eml", body);
    assert!(
        d.yaml
            .contains("- {message-id: \"20260101.1-1-a@example.org\"}"),
        "{}",
        d.yaml
    );
    assert!(
        d.yaml.contains("fetches the 3 patches that answer"),
        "{}",
        d.yaml
    );
    assert!(
        !d.inferred.iter().any(|i| i.contains("holds no patch")),
        "{:?}",
        d.inferred
    );
}
