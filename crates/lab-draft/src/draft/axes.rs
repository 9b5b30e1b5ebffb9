//! Workloads and axes: the mail's fio jobs (or one inferred from its
//! captions), and the axes its loops, its jobs and its tables' rows run
//! over.

use super::devices::Devices;
use super::emit::Proposal;
use super::job_words::{direction_said, fs_commit, unshell_path};
use super::knob_axes::{queue_knob, template_step};
use super::steps::{self, Scan, Step};
use super::workload::{self, Workloads};
use super::{claim, facts};
use crate::mail::ClaimTable;

pub(super) fn workloads(
    p: &mut Proposal,
    scan: &Scan,
    dv: &Devices,
    tables: &[ClaimTable],
    own: &str,
) {
    for (name, values, src) in &scan.axes {
        // A loop over the mail's devices runs over lab's stand-ins.
        p.run_axes.push((
            name.clone(),
            values.iter().map(|v| dv.map(v)).collect(),
            Some(format!("from the loop \"{}\"", src.quote)),
        ));
    }
    let dm_node = p.setup.iter().find_map(|(s, _)| match s {
        Step::Dm { name, .. } => Some(format!("/dev/mapper/{name}")),
        _ => None,
    });
    let target = dm_node.clone().unwrap_or_else(|| dv.main().to_string());
    let mut fio = scan.fio.clone();
    // `--create_only=1` lays the files out and measures nothing: the
    // measured run after it lays them out itself.
    let layout = |j: &steps::FioJob| {
        j.options
            .iter()
            .any(|(k, v)| k == "create_only" && matches!(v.as_str(), "1" | "true" | ""))
    };
    if fio.iter().any(|j| !layout(j)) {
        for j in fio.iter().filter(|j| layout(j)) {
            p.workload_notes.push(format!(
                "Left out \"{}\": with --create_only=1 it lays out files and measures nothing.",
                j.src.quote
            ));
        }
        fio.retain(|j| !layout(j));
    }
    if fio.is_empty()
        && let Some(job) = robot_job(p, tables)
    {
        fio.push(job);
    }
    let mut jobs: Vec<workload::Job> = fio
        .iter()
        .map(|j| workload::clean(j, &|d| dv.map(d)))
        .collect();
    for j in &mut jobs {
        complete_job(p, j, &target, dv, own);
    }
    if jobs.is_empty() {
        p.workloads = Some(super::stand_in::stand_in(p, tables, own, &target));
        return;
    }
    let srcs: Vec<String> = fio.iter().map(|j| format!("\"{}\"", j.src.quote)).collect();
    let prefer: Vec<String> = tables
        .iter()
        .flat_map(|t| t.key_columns.iter().filter_map(|c| claim::axis_named(c)))
        .collect();
    let mut dropped: Vec<String> = Vec::new();
    for d in jobs.iter().flat_map(|j| j.dropped.iter()) {
        if !dropped.contains(d) {
            dropped.push(d.clone());
        }
    }
    let loop_values = measured_loop_values(p, &mut jobs);
    // Runs fio named themselves (`--name=polled`, `--name=irq`) stay
    // workloads of those names; unnamed ones that differ by a switch
    // vary that switch.
    let mut names: Vec<&str> = fio.iter().filter_map(|j| j.name.as_deref()).collect();
    names.sort_unstable();
    names.dedup();
    if names.len() < fio.len() {
        workload::spell_switches(&mut jobs);
    }
    let each = jobs.clone();
    // Jobs that run every combination of two options' values vary
    // both: an axis each, not one workload per combination.
    let crossed = workload::cross(&jobs);
    let (mut w, mut axis) = match &crossed {
        Some((one, _)) => (Workloads::One(one.clone()), None),
        None => workload::combine(jobs, &prefer),
    };
    if let Workloads::Named(ws) = &mut w {
        name_by_fio(ws, &mut axis, &each, &fio);
    }
    for (k, values) in crossed.map(|c| c.1).unwrap_or_default() {
        record_measured(p, &w, &Some((k.clone(), values.clone())), &each, &fio, &[]);
        p.run_axes
            .push((k, values, Some("what the mail's fio commands vary".into())));
    }
    record_measured(p, &w, &axis, &each, &fio, &loop_values);
    p.workload_notes
        .push(format!("From the mail's fio: {}.", srcs.join("; ")));
    if fio.iter().any(|j| j.src.quote.contains("t/io_uring")) {
        p.workload_notes.push(
            "t/io_uring is run as the fio job it stands for (its options and \
             defaults as fio's); without -r it runs until stopped: 5 s here."
                .into(),
        );
    }
    for d in dropped {
        p.workload_notes.push(format!("Left out {d}."));
    }
    if let Some((name, _)) = &axis {
        p.workload_axis = name.clone();
    }
    if let Some((name, values)) = axis
        && !p.run_axes.iter().any(|(n, ..)| *n == name)
    {
        p.run_axes.push((
            name,
            values,
            Some("what the mail's fio commands vary".into()),
        ));
    }
    p.workloads = Some(w);
}

/// The kernel test robot gives its fio job as a table's conditions
/// (`rw`, `bs`, `nr_task` ...): that job, when the mail shows no fio.
fn robot_job(p: &mut Proposal, tables: &[ClaimTable]) -> Option<steps::FioJob> {
    let t = tables.iter().find(|t| t.conditions.contains_key("rw"))?;
    let mut options = Vec::new();
    for (k, v) in &t.conditions {
        let k = match k.as_str() {
            "nr_task" => "numjobs",
            "test_size" => "size",
            k @ ("rw" | "bs" | "ioengine" | "iodepth" | "direct" | "runtime") => k,
            _ => continue,
        };
        // lkp's `nr_task: 50%` is a share of the machine's CPUs; fio
        // takes a number of jobs.
        let v = match v
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
        {
            Some(pct) if k == "numjobs" => {
                let n = ((pct / 100.0) * f64::from(p.cpus.max(1))).ceil().max(1.0) as u32;
                p.workload_notes.push(format!(
                    "nr_task={v} is that share of the CPUs: {n} job(s) on {} vCPU(s) here.",
                    p.cpus.max(1)
                ));
                n.to_string()
            }
            _ => v.clone(),
        };
        options.push((k.to_string(), v));
    }
    p.workload_notes.push(format!(
        "From the conditions of table {}, as the kernel test robot writes its job.",
        tables.iter().position(|x| std::ptr::eq(x, t)).unwrap_or(0) + 1
    ));
    Some(steps::FioJob {
        name: None,
        options,
        src: steps::Src {
            line: t.line,
            quote: "the table's conditions".into(),
        },
    })
}

/// What a mail's fio line leaves to fio's defaults or to where it ran:
/// the file (the experiment's device), `rw`, the directory of relative
/// names, and the mount that directory needs.
/// The note on the rw a job was given because the mail's fio line set
/// none (or set it from a shell variable): a table's rows may say it.
const RW_UNSET: &str = "fio's default; the mail's fio line sets no rw";
/// What both notes of an rw the mail's fio line did not set say.
const SETS_NO_RW: &str = "the mail's fio line sets no rw";

/// Whether the mail's job left rw to fio's default or to a variable
/// (the mail's words may have given it one since, which a table's rows
/// still override).
fn rw_unset(j: &workload::Job) -> bool {
    j.options
        .iter()
        .any(|(k, _, note)| k == "rw" && note.as_deref().is_some_and(|n| n.contains(SETS_NO_RW)))
}

fn complete_job(p: &mut Proposal, j: &mut workload::Job, target: &str, dv: &Devices, own: &str) {
    for key in ["filename", "directory"] {
        if let Some(named) = j.get(key).filter(|f| f.contains('$'))
            && let Some((resolved, why)) = unshell_path(named, target, key == "filename")
        {
            j.set(key, &resolved, Some(why));
        }
    }
    if j.get("filename").is_none() && j.get("directory").is_none() {
        // A job under a file system's commit (`ext4: Allow parallel DIO
        // reads`) names no file because fio lays its files out in the
        // directory it runs in: one on that file system.
        match fs_commit(own) {
            Some(fs) if !target.starts_with("/dev/mapper/") => j.set(
                "directory",
                super::steps::WORKDIR,
                Some(format!(
                    "the mail's fio line names no file, and the mail is about {fs}'s code: fio's files on {fs}"
                )),
            ),
            _ => j.set(
                "filename",
                target,
                Some("the mail's fio line names no file".into()),
            ),
        }
    }
    if j.get("rw").is_none() {
        match direction_said(own) {
            Some((rw, said)) => j.set(
                "rw",
                rw,
                Some(format!("{SETS_NO_RW}; the mail says \"{said}\"")),
            ),
            None => j.set("rw", "read", Some(RW_UNSET.into())),
        }
    }
    // Relative names are files in fio's working directory: here a
    // directory of its own, on a file system made for it.
    let relative = j
        .get("filename")
        .is_some_and(|f| !f.starts_with('/') && !f.contains("{{"));
    if relative && j.get("directory").is_none() {
        j.set(
            "directory",
            super::steps::WORKDIR,
            Some("the mail's fio names files relative to where it ran".into()),
        );
    }
    // fio opens a relative name inside its directory.
    let opened = match (j.get("directory"), j.get("filename")) {
        (Some(d), Some(f)) if relative => Some(format!(
            "{}/{}",
            d.trim_end_matches('/'),
            f.split(':').next().unwrap_or(f)
        )),
        (Some(d), _) => Some(format!("{}/x", d.trim_end_matches('/'))),
        (None, Some(f)) => Some(f.to_string()),
        _ => None,
    };
    if let Some(file) = opened {
        // fio makes a file it opens only when told how big; the mail's
        // file existed where it ran. Every job's file fits the 1 GiB
        // device with room for the file system.
        if !file.starts_with("/dev/") && j.get("size").is_none() && j.get("filesize").is_none() {
            let jobs: u64 = j
                .get("numjobs")
                .and_then(|n| n.parse().ok())
                .unwrap_or(1)
                .max(1);
            let mib = (768 / jobs / 16 * 16).clamp(16, 256);
            j.set(
                "size",
                &format!("{mib}M"),
                Some(format!(
                    "the mail's fio names no size (its file existed); {jobs} job(s) x {mib} MiB fit lab's 1 GiB device"
                )),
            );
        }
        // fio lays out a file per job in a directory: together they fit.
        let jobs: u64 = j
            .get("numjobs")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
            .max(1);
        let each = j.get("size").and_then(workload::mib);
        if j.get("filename").is_none()
            && let Some(m) = each.filter(|m| m * jobs > 768)
        {
            let fit = (768 / jobs / 16 * 16).clamp(16, 256);
            j.set(
                "size",
                &format!("{fit}M"),
                Some(format!(
                    "{m} MiB per job's file; {jobs} job(s) x {fit} MiB fit lab's 1 GiB device"
                )),
            );
        }
        super::devices::mount_for_file(p, &file, dv, &own.to_ascii_lowercase());
    }
}

/// Named workloads take fio's own `--name=` when the mail gave each
/// job a distinct one, in place of the names lab made up (`job1`); an
/// axis of option values (`iodepth: [1, 32]`) keeps its values.
fn name_by_fio(
    ws: &mut [(String, workload::Job)],
    axis: &mut Option<(String, Vec<String>)>,
    each: &[workload::Job],
    fio: &[steps::FioJob],
) {
    let names: Vec<Option<String>> = ws
        .iter()
        .map(|(_, j)| {
            let mut own = each
                .iter()
                .zip(fio)
                .filter(|(x, _)| *x == j)
                .map(|(_, f)| f.name.clone());
            own.next().flatten().filter(|n| workload::is_name(n))
        })
        .collect();
    let mut distinct: Vec<&String> = names.iter().flatten().collect();
    distinct.sort();
    distinct.dedup();
    if distinct.len() == ws.len()
        && let Some((k, values)) = axis
        && k == "wl"
    {
        for ((n, _), own) in ws.iter_mut().zip(&names) {
            if let Some(own) = own {
                n.clone_from(own);
            }
        }
        *values = ws.iter().map(|(n, _)| n.clone()).collect();
    }
}

/// Which cells each command measured: the numbers under a command bind
/// to its workload's cells, and the device it opened says the value of
/// the loop's axis it measured (`--filename=/dev/mapper/dm-delay-10ms`:
/// delay 10), which the workload, opening the template, no longer says.
fn record_measured(
    p: &mut Proposal,
    w: &Workloads,
    axis: &Option<(String, Vec<String>)>,
    each: &[workload::Job],
    fio: &[steps::FioJob],
    loop_values: &[Option<(String, String)>],
) {
    if let Some((k, _)) = axis {
        for (j, f) in each.iter().zip(fio) {
            let value = match w {
                Workloads::Named(ws) => ws.iter().find(|(_, x)| x == j).map(|(n, _)| n.clone()),
                Workloads::One(_) => j.get(k).map(str::to_string),
            };
            if let Some(v) = value {
                p.measured_by.push((f.src.quote.clone(), k.clone(), v));
            }
        }
    }
    for (f, measured) in fio.iter().zip(loop_values) {
        if let Some((a, v)) = measured {
            p.measured_by
                .push((f.src.quote.clone(), a.clone(), v.clone()));
        }
    }
    // One command run with each of its alternatives (`-rw=read[,write]`)
    // says no one value of the axis they vary.
    let all = p.measured_by.clone();
    p.measured_by
        .retain(|(q, a, v)| !all.iter().any(|(q2, a2, v2)| q2 == q && a2 == a && v2 != v));
}

/// The device lab has for a table's row label that names one:
/// `null_blk` → `/dev/nullb0`, `nvme1n1` → `/dev/nvme1n1`, `NVMe` →
/// `/dev/nvme0n1`.
fn lab_device(label: &str) -> Option<String> {
    let l = label.trim().to_ascii_lowercase();
    let l = l.strip_prefix("/dev/").unwrap_or(&l);
    let numbered = |pre: &str| {
        l.strip_prefix(pre)
            .filter(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit() || c == 'n'))
            .map(|_| format!("/dev/{l}"))
    };
    if let Some(d) = numbered("nullb").or_else(|| numbered("nvme")) {
        return Some(d);
    }
    match l.replace(['-', ' '], "_").as_str() {
        "null_blk" | "nullblk" | "null_block" => Some("/dev/nullb0".into()),
        "nvme" | "nvme_ssd" | "nvme_drive" => Some("/dev/nvme0n1".into()),
        _ => None,
    }
}

/// A table whose rows are devices (`null_blk`, `nvme0n1`) over one fio
/// job: the devices become an axis `dev`, the job's file and the knobs
/// under `/sys/block/` follow it, and the boot has every device.
fn device_axis(p: &mut Proposal, t: &ClaimTable) -> bool {
    if p.run_axes.iter().any(|(n, ..)| n == "dev") {
        return false;
    }
    let Some(Workloads::One(j)) = &mut p.workloads else {
        return false;
    };
    if !j.get("filename").is_some_and(|f| f.starts_with("/dev/")) {
        return false;
    }
    for i in 0..t.key_columns.len() {
        let mut labels: Vec<String> = Vec::new();
        for r in &t.rows {
            if let Some(k) = r.keys.get(i)
                && !labels.contains(k)
            {
                labels.push(k.clone());
            }
        }
        let devs: Option<Vec<String>> = labels.iter().map(|l| lab_device(l)).collect();
        let Some(devs) = devs else { continue };
        let mut distinct = devs.clone();
        distinct.sort();
        distinct.dedup();
        if labels.len() < 2 || distinct.len() != devs.len() {
            continue;
        }
        let map = |f: &dyn Fn(&str) -> String| {
            let pairs: Vec<String> = labels
                .iter()
                .zip(&devs)
                .map(|(l, d)| format!("'{l}': '{}'", f(d)))
                .collect();
            format!("{{{{ {{{}}}[dev] }}}}", pairs.join(", "))
        };
        j.set(
            "filename",
            &map(&|d| d.to_string()),
            Some(format!(
                "the device of the row, from the table \"{}\"",
                t.caption.clone().unwrap_or_default()
            )),
        );
        let sysfs = map(&|d| d.trim_start_matches("/dev/").to_string());
        for (s, _) in p.setup.iter_mut() {
            if let Step::Knob { path, .. } = s
                && let Some(rest) = path.strip_prefix("/sys/block/")
                && let Some((dev, tail)) = rest.split_once('/')
                && devs.iter().any(|d| d.ends_with(&format!("/{dev}")))
            {
                *path = format!("/sys/block/{sysfs}/{tail}");
            }
        }
        for d in &devs {
            if let Some(n) = d
                .strip_prefix("/dev/nvme")
                .and_then(|r| r.split('n').next())
                .and_then(|n| n.parse::<u32>().ok())
            {
                p.nvme = p.nvme.max(n + 1);
            }
        }
        p.run_axes.push((
            "dev".into(),
            labels,
            Some(format!(
                "the devices the rows of the table \"{}\" were measured on",
                t.caption.clone().unwrap_or(t.key_columns[i].clone())
            )),
        ));
        return true;
    }
    false
}

/// fio lines outside a loop that open one of the loop's devices
/// (`/dev/mapper/dm-delay-10ms`, where the loop made
/// `dm-delay-{{ delay }}ms` for 0..20): the job opens the template, and
/// the axis runs over the values the commands measured, not over every
/// device the loop made. Returns each job's (axis, value), if any.
fn measured_loop_values(
    p: &mut Proposal,
    jobs: &mut [workload::Job],
) -> Vec<Option<(String, String)>> {
    let templates: Vec<(String, String, String, String)> = p
        .setup
        .iter()
        .filter_map(|(s, _)| match s {
            Step::Dm { name, .. } => {
                let (pre, rest) = name.split_once("{{")?;
                let (axis, post) = rest.split_once("}}")?;
                Some((
                    name.clone(),
                    pre.to_string(),
                    axis.trim().to_string(),
                    post.to_string(),
                ))
            }
            _ => None,
        })
        .collect();
    let mut measured: Vec<(String, String)> = Vec::new();
    let mut each: Vec<Option<(String, String)>> = vec![None; jobs.len()];
    for (k, j) in jobs.iter_mut().enumerate() {
        let Some(dev) = j
            .get("filename")
            .and_then(|f| f.strip_prefix("/dev/mapper/"))
        else {
            continue;
        };
        let dev = dev.to_string();
        for (name, pre, axis, post) in &templates {
            // `/dev/mapper/delay$d` after the loop: the mail's variable,
            // left out of the name; each cell opens its own device.
            if dev == format!("{pre}{post}") {
                j.set("filename", &format!("/dev/mapper/{name}"), None);
                break;
            }
            let value = dev
                .strip_prefix(pre.as_str())
                .and_then(|r| r.strip_suffix(post.as_str()))
                .filter(|v| !v.is_empty() && !v.contains('/'));
            if let Some(v) = value {
                j.set(
                    "filename",
                    &format!("/dev/mapper/{name}"),
                    // One note for every such job: jobs that differ
                    // only in the device they opened are one workload.
                    Some(format!("the mail's fio lines open one device per {axis}")),
                );
                if !measured.contains(&(axis.clone(), v.to_string())) {
                    measured.push((axis.clone(), v.to_string()));
                }
                each[k] = Some((axis.clone(), v.to_string()));
                break;
            }
        }
    }
    for (axis, values, note) in p.run_axes.iter_mut() {
        let mine: Vec<String> = measured
            .iter()
            .filter(|(a, _)| a == axis)
            .map(|(_, v)| v.clone())
            .collect();
        if !mine.is_empty() && mine.len() < values.len() {
            *note = Some(format!(
                "the values the mail's fio commands measured; its loop made {} devices",
                values.len()
            ));
            *values = mine;
        }
    }
    each
}

/// Axes the tables' rows run over that no command varied: a table keyed
/// by `QD` over one fio line at `--iodepth=32` measures each QD.
pub(super) fn table_axes(p: &mut Proposal, tables: &[ClaimTable]) {
    for t in tables {
        if device_axis(p, t) {
            continue;
        }
        for (i, col) in t.key_columns.iter().enumerate() {
            let keys: Vec<String> = t
                .rows
                .iter()
                .filter_map(|r| r.keys.get(i).cloned())
                .collect();
            // A column without a telling name (`key`, none) is named by
            // what its values are: `QD1`..`QD16` are queue depths.
            let by_values = ["", "key", "label", "config", "test", "case"]
                .contains(&col.trim().to_ascii_lowercase().as_str())
                .then(|| axis_of_values(&keys))
                .flatten();
            let Some(axis) = by_values.or_else(|| claim::axis_named(col)) else {
                continue;
            };
            // `bs=4k`, `iodepth=32`: the option's name is the axis, the
            // value after `=` its value.
            let keys: Vec<String> = keys
                .iter()
                .map(|k| match k.split_once('=') {
                    Some((name, v))
                        if axis_of_values(std::slice::from_ref(k)).is_some()
                            || claim::axis_named(name).as_deref() == Some(axis.as_str()) =>
                    {
                        v.trim().to_string()
                    }
                    _ => k.clone(),
                })
                .collect();
            if keys.len() < 2 || p.run_axes.iter().any(|(n, ..)| *n == axis) {
                continue;
            }
            let values: Vec<String> = match axis.as_str() {
                "hz" => {
                    let hz: Vec<u32> = keys
                        .iter()
                        .filter_map(|k| lead_number(k)?.parse().ok())
                        .filter(|h| facts::HZ_VALUES.contains(h))
                        .collect();
                    if hz.len() == keys.len() {
                        p.hz = hz;
                        p.kernel_notes.push(format!(
                            "HZ from the rows of the table \"{}\".",
                            t.caption.clone().unwrap_or_default()
                        ));
                    }
                    continue;
                }
                _ => keys.iter().filter_map(|k| axis_value(&axis, k)).collect(),
            };
            if values.len() != keys.len() {
                continue;
            }
            let mut values_dedup: Vec<String> = Vec::new();
            for v in &values {
                if !values_dedup.contains(v) {
                    values_dedup.push(v.clone());
                }
            }
            // `N/A` in a key column is no value of the axis.
            values_dedup.retain(|v| !is_not_applicable(v));
            let with = format!("{{{{ {axis} }}}}");
            let used = match (axis.as_str(), &mut p.workloads) {
                ("iodepth" | "numjobs" | "bs", Some(Workloads::One(j))) => {
                    j.set(&axis, &with, None);
                    true
                }
                // Rows named by direction are an axis only where the
                // mail's job leaves rw open (`-rw=$rw`): under a job
                // that fixes it, READ and WRITE rows are one mixed
                // job's two directions.
                ("rw", Some(Workloads::One(j))) if rw_unset(j) => {
                    j.set(&axis, &with, None);
                    true
                }
                _ => {
                    template_step(&mut p.setup, &axis, &with)
                        || queue_knob(p, &axis, &with, &values_dedup, col)
                }
            };
            if used {
                p.run_axes.push((
                    axis.clone(),
                    values_dedup,
                    Some(format!(
                        "from the rows of the table \"{}\"",
                        t.caption.clone().unwrap_or(col.clone())
                    )),
                ));
            }
        }
    }
}

/// The fio parameter a column's values spell out when they all carry
/// its mark: `QD32`/`qd=32`/`iodepth=32` (iodepth), `8 jobs`/`4
/// threads` (numjobs), `4k`/`128KiB` (bs).
fn axis_of_values(keys: &[String]) -> Option<String> {
    use regex::Regex;
    use std::sync::LazyLock;
    static FORMS: LazyLock<[(Regex, &str); 4]> = LazyLock::new(|| {
        [
            (
                Regex::new(r"(?i)^(qd|iodepth)\s*=?\s*\d+$").expect("regex"),
                "iodepth",
            ),
            (
                Regex::new(r"(?i)^\d+\s*(jobs?|threads?|procs?|tasks?)$").expect("regex"),
                "numjobs",
            ),
            (
                Regex::new(r"(?i)^(?:(?:bs|blocksize|block_size)\s*=\s*)?\d+\s*(k|m)(i?b)?$")
                    .expect("regex"),
                "bs",
            ),
            (
                Regex::new(r"(?i)^numjobs\s*=\s*\d+$").expect("regex"),
                "numjobs",
            ),
        ]
    });
    if keys.len() < 2 {
        return None;
    }
    let form = FORMS
        .iter()
        .find(|(re, _)| keys.iter().all(|k| re.is_match(k.trim())))
        .map(|(_, axis)| axis.to_string());
    // Labels that each name a direction, two directions at least
    // (`overwrite`, `read`, `rand overwrite`, `randread`): fio's rw.
    form.or_else(|| {
        let rws: Vec<&str> = keys
            .iter()
            .map(|k| crate::matrix::schema::fio_rw_named(k))
            .collect::<Option<_>>()?;
        let mut distinct = rws.clone();
        distinct.sort_unstable();
        distinct.dedup();
        (distinct.len() >= 2).then(|| "rw".to_string())
    })
}

fn is_not_applicable(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "n/a" | "na" | "-" | ""
    )
}

/// The value of `axis` a table's key spells, as the matrix writes it:
/// `QD32` → `32` for a count, `128 KiB` → `128k` for a block size,
/// `rand overwrite` → `randwrite` for fio's rw; other axes take the key
/// as written. Both the axis a table makes and the binding of its rows
/// read keys through this, so a row binds to the value it made.
pub(super) fn axis_value(axis: &str, key: &str) -> Option<String> {
    match axis {
        "iodepth" | "numjobs" | "delay" => lead_number(key),
        // A block size: digits and a size suffix (`movnti` under a
        // "block size" column heads a row, it is no size), after the
        // option's name if the key has it (`bs=4k`).
        "bs" => {
            let v = key
                .to_ascii_lowercase()
                .replace(' ', "")
                .replace("kib", "k")
                .replace("kb", "k");
            let n = v.rsplit('=').next().unwrap_or(&v);
            let digits = n.trim_start_matches(|c: char| c.is_ascii_digit());
            let size = digits.len() < n.len()
                && ["", "b", "k", "m", "g", "mib", "mb", "gib", "gb"].contains(&digits);
            size.then(|| n.to_string())
        }
        "rw" => crate::matrix::schema::fio_rw_named(key).map(str::to_string),
        _ => Some(key.to_string()),
    }
}

/// `QD32` → `32`, `8 jobs` → `8`, `1ms` → `1`.
pub(super) fn lead_number(k: &str) -> Option<String> {
    let d: String = k
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '=' || c == ' ')
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    (!d.is_empty()).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::axis_of_values;

    #[test]
    fn a_column_is_named_by_what_its_values_spell() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            axis_of_values(&v(&["QD1", "QD2", "QD16"])).as_deref(),
            Some("iodepth")
        );
        assert_eq!(
            axis_of_values(&v(&["iodepth=1", "iodepth=32"])).as_deref(),
            Some("iodepth")
        );
        assert_eq!(
            axis_of_values(&v(&["1 job", "8 jobs"])).as_deref(),
            Some("numjobs")
        );
        assert_eq!(axis_of_values(&v(&["4k", "128KiB"])).as_deref(), Some("bs"));
        assert_eq!(axis_of_values(&v(&["QD1", "nvme0n1"])), None);
        assert_eq!(axis_of_values(&v(&["QD1"])), None);
    }
}
