//! Axes that turn a knob: a table's key column named after a block
//! queue attribute, and the step (a dm-delay table, a knob) an axis of
//! the same name fills.

use super::emit::Proposal;
use super::steps::Step;
use super::workload::Workloads;
use crate::mail::ClaimTable;
use crate::matrix::DmTarget;

/// The block layer's writable queue attributes, as the kernel documents
/// them (scripts/gen-queue-attrs writes the list).
const QUEUE_ATTRS: &str = include_str!("queue_attrs.txt");

fn is_queue_attr(name: &str) -> bool {
    QUEUE_ATTRS
        .lines()
        .filter(|l| !l.starts_with('#'))
        .any(|l| l == name)
}

/// A key column named after a queue attribute (`io_poll`, `nomerges`,
/// `scheduler`) is a knob the experiment turns: a knob step per cell on
/// the device the fio job opens. Polling needs an NVMe drive with poll
/// queues and two vCPUs (a lone vCPU gets no poll queue), so a polling
/// knob moves the job there.
pub(super) fn queue_knob(
    p: &mut Proposal,
    axis: &str,
    with: &str,
    values: &[String],
    col: &str,
) -> bool {
    if !is_queue_attr(axis) || values.len() < 2 {
        return false;
    }
    let Some(Workloads::One(j)) = &mut p.workloads else {
        return false;
    };
    let file = j.get("filename").unwrap_or("").to_string();
    if file.contains("{{") {
        return false;
    }
    let polling = axis.starts_with("io_poll");
    let dev = if polling {
        if file != "/dev/nvme0n1" {
            j.set(
                "filename",
                "/dev/nvme0n1",
                Some(format!(
                    "{axis} works on a drive with poll queues: lab's NVMe (the mail's job opened {})",
                    if file.is_empty() { "nothing lab has" } else { file.as_str() }
                )),
            );
        }
        p.nvme = p.nvme.max(1);
        p.nvme_poll = true;
        p.cpus = p.cpus.max(2);
        "nvme0n1".to_string()
    } else {
        match file.strip_prefix("/dev/") {
            Some(d) if d.starts_with("nullb") || d.starts_with("nvme") => d.to_string(),
            _ if p.nvme > 0 && p.null_blk.is_empty() => "nvme0n1".into(),
            _ => "nullb0".into(),
        }
    };
    let path = format!("/sys/block/{dev}/queue/{axis}");
    for v in values {
        let step = Step::Knob {
            path: path.clone(),
            value: v.clone(),
        };
        super::devices::add_config(p, &step, &format!("for {axis} {v}"));
    }
    p.setup.push((
        Step::Knob {
            path,
            value: with.to_string(),
        },
        Some(format!(
            "the table's column '{col}' is the block layer's queue attribute {axis}"
        )),
    ));
    true
}

/// Put an axis into the step it names: a delay table's delay, or the
/// knob whose file is named like the axis.
pub(super) fn template_step(
    setup: &mut Vec<(Step, Option<String>)>,
    axis: &str,
    with: &str,
) -> bool {
    for (s, _) in setup.iter_mut() {
        if let Step::Dm {
            target: DmTarget::Delay {
                read_ms, write_ms, ..
            },
            ..
        } = s
            && axis == "delay"
        {
            *read_ms = crate::matrix::Scalar::Str(with.to_string());
            *write_ms = Some(read_ms.clone());
            return true;
        }
    }
    // The mail wrote the knob once per value; the axis writes it once
    // per cell, so the other writes go.
    let knob = setup.iter().position(
        |(s, _)| matches!(s, Step::Knob { path, .. } if path.rsplit('/').next() == Some(axis)),
    );
    let Some(i) = knob else { return false };
    let Step::Knob { path, .. } = setup[i].0.clone() else {
        return false;
    };
    setup[i].0 = Step::Knob {
        path: path.clone(),
        value: with.to_string(),
    };
    let mut k = 0;
    setup.retain(|(s, _)| {
        k += 1;
        k - 1 == i || !matches!(s, Step::Knob { path: p, .. } if *p == path)
    });
    true
}

/// The fio switch and value a column's qualifier names: `IOPS (IRQ
/// mode)` is `hipri` 0, `IOPS (iopoll=1 mode)` and `lat (polled)` are
/// `hipri` 1. None for a column without such words in brackets.
pub(super) fn column_mode(name: &str) -> Option<(&'static str, &'static str)> {
    let (_, q) = name.split_once(['(', '['])?;
    let words: Vec<String> = q
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
        .map(String::from)
        .collect();
    let has = |ws: &[&str]| words.iter().any(|w| ws.contains(&w.as_str()));
    let irq = has(&[
        "irq",
        "interrupt",
        "interrupts",
        "interrupt-driven",
        "irq-driven",
    ]);
    let poll = has(&["poll", "polled", "polling", "iopoll", "hipri", "io_poll"]);
    match (irq, poll) {
        (true, false) => Some(("hipri", "0")),
        (false, true) => Some(("hipri", "1")),
        _ => None,
    }
}

/// A table whose value columns are one measure in two or more modes of
/// one switch: the switch, and each such column with its value.
pub(super) fn mode_columns(t: &ClaimTable) -> Option<(&'static str, Vec<(String, String)>)> {
    let modes: Vec<(String, (&str, &str))> = t
        .columns
        .iter()
        .filter_map(|c| Some((c.name.clone(), column_mode(&c.name)?)))
        .collect();
    let opt = modes.first()?.1.0;
    let mut values: Vec<&str> = modes.iter().map(|(_, (_, v))| *v).collect();
    values.sort_unstable();
    values.dedup();
    (values.len() >= 2 && modes.iter().all(|(_, (o, _))| *o == opt)).then(|| {
        (
            opt,
            modes
                .into_iter()
                .map(|(c, (_, v))| (c, v.to_string()))
                .collect(),
        )
    })
}

/// Columns of a table that measure one thing in a switch's modes (IRQ
/// against polled) make that switch an axis of the workload, on a
/// drive where it works: polling needs NVMe poll queues and 2 vCPUs.
pub(super) fn mode_axes(p: &mut Proposal, tables: &[ClaimTable]) {
    for t in tables {
        let Some((opt, cols)) = mode_columns(t) else {
            continue;
        };
        if p.run_axes.iter().any(|(n, ..)| n == opt) {
            continue;
        }
        let with = format!("{{{{ {opt} }}}}");
        match &mut p.workloads {
            Some(Workloads::One(j)) => j.set(opt, &with, None),
            Some(Workloads::Named(ws)) => ws.iter_mut().for_each(|(_, j)| j.set(opt, &with, None)),
            None => continue,
        }
        let mut values: Vec<String> = cols.iter().map(|(_, v)| v.clone()).collect();
        values.sort();
        values.dedup();
        if opt == "hipri" && p.nvme > 0 {
            p.nvme_poll = true;
            p.cpus = p.cpus.max(2);
        }
        let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
        p.run_axes.push((
            opt.to_string(),
            values,
            Some(format!(
                "the table's columns {} are its modes",
                names.join(", ")
            )),
        ));
    }
}
