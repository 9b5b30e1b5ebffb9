//! The workload of a mail that shows no fio command: what its
//! captions describe (one job, or one job per caption when they differ
//! in one option), else a stand-in that says it is one.

use super::emit::Proposal;
use super::workload::{self, Workloads};
use crate::mail::ClaimTable;

/// Captions that each describe a different job ("32 processes doing
/// random reads", "... sequential reads"), in a mail with no fio
/// command: one job each, read from that caption's own words, and an
/// axis of what differs between them; each caption's tables bind to its
/// job, as a command's numbers bind to that command's.
fn per_caption(p: &mut Proposal, tables: &[ClaimTable], target: &str) -> Option<Workloads> {
    let mut read: Vec<(String, workload::Job, Vec<String>)> = Vec::new();
    for t in tables {
        let Some(first) = t
            .caption
            .as_deref()
            .and_then(|c| c.lines().next()?.split(" / ").next())
        else {
            continue;
        };
        let first = first.trim();
        if first.is_empty() || read.iter().any(|(q, ..)| q == first) {
            continue;
        }
        if let Some((j, said)) = workload::inferred(first, "", target) {
            read.push((first.to_string(), j, said));
        }
    }
    let jobs: Vec<workload::Job> = read.iter().map(|(_, j, _)| j.clone()).collect();
    let (w, axis) = workload::combine(jobs, &[]);
    // Jobs apart in one option only: captions that each say more or less
    // of one job (`4 KiB writes, 300 of them` over `each write`) are
    // one job, read from all of them.
    let (Workloads::One(_), Some((k, values))) = (&w, axis) else {
        return None;
    };
    for (quote, j, _) in &read {
        if let Some(v) = j.get(&k) {
            p.measured_by
                .push((quote.clone(), k.clone(), v.to_string()));
        }
    }
    let said: Vec<String> = read
        .iter()
        .map(|(q, _, s)| format!("\"{q}\": {}", s.join(", ")))
        .collect();
    p.workload_notes.push(format!(
        "Inferred from the captions, one job each, as the mail shows no fio command: {}. Check them against the mail.",
        said.join("; ")
    ));
    p.run_axes
        .push((k, values, Some("what the captions' jobs vary".into())));
    Some(w)
}

/// Whether a pasted fio output shows one job that both read and wrote.
fn mixed_fio_output(tables: &[ClaimTable]) -> bool {
    tables
        .iter()
        .filter(|t| t.kind == crate::mail::ClaimKind::Fio)
        .any(|t| {
            let dirs = |d: &str| {
                t.rows
                    .iter()
                    .any(|r| r.keys.iter().any(|k| k.trim().eq_ignore_ascii_case(d)))
            };
            dirs("read") && dirs("write")
        })
}

/// The workload of a mail without fio commands: what its captions (or
/// a pasted fio output's sections, `write:`) name, else a 4 KiB random
/// read that says it stands in.
pub(super) fn stand_in(
    p: &mut Proposal,
    tables: &[ClaimTable],
    own: &str,
    target: &str,
) -> Workloads {
    if let Some(w) = per_caption(p, tables, target) {
        return w;
    }
    let mut words: Vec<String> = tables.iter().filter_map(|t| t.caption.clone()).collect();
    // The robot's metric names say the direction in their parts
    // (`fio.write_bw_MBps`).
    words.extend(tables.iter().flat_map(|t| {
        t.rows.iter().map(move |r| {
            let k = r.keys.join(" ");
            if t.kind == crate::mail::ClaimKind::Lkp {
                k.replace(['.', '_'], " ")
            } else {
                k
            }
        })
    }));
    // fio's output with a read and a write section under one job (`read :
    // io=...`, `write: io=...`) came from a mixed job.
    if mixed_fio_output(tables) {
        words.insert(0, "mixed read write".into());
    }
    let words = words.join(" ");
    if let Some((j, read)) = workload::inferred(&words, own, target) {
        p.workload_notes.push(format!("Inferred from the caption, as the mail shows no fio command: {}. Check it against the mail.", read.join(", ")));
        return Workloads::One(j);
    }
    p.workload_notes.push("The mail shows no fio command and its captions name no I/O: a 4 KiB random read stands in. Replace it with the mail's experiment.".into());
    let mut j = workload::Job::default();
    for (k, v) in [
        ("filename", target),
        ("rw", "randread"),
        ("bs", "4k"),
        ("direct", "1"),
        ("ioengine", "psync"),
        ("runtime", "5"),
        ("size", "256M"),
    ] {
        j.set(k, v, None);
    }
    Workloads::One(j)
}
