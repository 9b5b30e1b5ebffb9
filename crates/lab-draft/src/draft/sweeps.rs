//! Sweeps a mail shows as one table per value: `bs=4k:`, `bs=16k:`, ...
//! over tables of the same rows. The captions name the value of a fio
//! option the job leaves open, so the option is an axis of the run and
//! each table binds to its value's cells (through the caption, as any
//! caption that names an axis value does).

use super::axes::axis_value;
use super::emit::Proposal;
use super::steps::Step;
use super::workload::Workloads;
use crate::mail::ClaimTable;

/// The fio options a caption may sweep, by the name it writes them.
const OPTIONS: [(&str, &str); 6] = [
    ("bs", "bs"),
    ("blocksize", "bs"),
    ("iodepth", "iodepth"),
    ("qd", "iodepth"),
    ("numjobs", "numjobs"),
    ("rw", "rw"),
];

/// cgroup v1's block throttle files, by the `io.max` key (the `cgroup`
/// step's, `matrix::cgroup::IO_MAX_KEYS`) each is in cgroup v2.
const THROTTLE_V1: [(&str, &str); 4] = [
    ("blkio.throttle.read_bps_device", "rbps"),
    ("blkio.throttle.write_bps_device", "wbps"),
    ("blkio.throttle.read_iops_device", "riops"),
    ("blkio.throttle.write_iops_device", "wiops"),
];

/// The throttle limit a caption's name sets: a v1 file or a v2 key.
fn throttle_key(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    THROTTLE_V1
        .iter()
        .find(|(f, _)| *f == name)
        .map(|(_, k)| *k)
        .or_else(|| {
            crate::matrix::cgroup::IO_MAX_KEYS
                .into_iter()
                .find(|k| *k == name)
        })
}

/// What a caption's `name=value` sets: a fio option of the job, or a
/// limit of the cgroup it runs in.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sets {
    Fio,
    Throttle,
}

/// The `name=value` pairs a caption names (`bs=4k:` → bs 4k;
/// `blkio.throttle.read_bps_device = 1MB/s` → rbps 1MB/s), each name
/// once: a name given two values (`bs=4k, bs=8k`) names none.
fn named(caption: &str) -> Vec<(&'static str, Sets, String)> {
    // `name = value` is `name=value`.
    let mut squeezed = String::with_capacity(caption.len());
    for (i, part) in caption.split('=').enumerate() {
        if i > 0 {
            squeezed.truncate(squeezed.trim_end().len());
            squeezed.push('=');
        }
        squeezed.push_str(if i > 0 { part.trim_start() } else { part });
    }
    let mut out: Vec<(&'static str, Sets, String)> = Vec::new();
    let mut twice: Vec<&'static str> = Vec::new();
    let words = squeezed.split(|c: char| c.is_whitespace() || ",;:()[]".contains(c));
    for w in words {
        let Some((name, value)) = w.split_once('=') else {
            continue;
        };
        let (name, value) = (name.trim().trim_start_matches('-'), value.trim());
        let found =
            if let Some((_, axis)) = OPTIONS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
                axis_value(axis, value).map(|v| (*axis, Sets::Fio, v))
            } else if let Some(axis) = throttle_key(name) {
                let v = crate::matrix::Scalar::Str(value.to_string());
                crate::matrix::cgroup::io_max_value(axis, &v)
                    .ok()
                    .map(|_| (axis, Sets::Throttle, value.to_string()))
            } else {
                None
            };
        let Some((axis, sets, v)) = found else {
            continue;
        };
        if out.iter().any(|(a, ..)| *a == axis) {
            twice.push(axis);
        }
        out.push((axis, sets, v));
    }
    out.retain(|(a, ..)| !twice.contains(a));
    out
}

/// An axis for each option that two or more tables' captions give
/// different values of, when the mail's one job does not set it; for
/// each throttle limit they give, an axis of the limit on the cgroup the
/// job runs in, on the job's device.
pub(super) fn caption_axes(p: &mut Proposal, tables: &[ClaimTable]) {
    let mut axes: Vec<(&'static str, Sets, Vec<String>, Vec<usize>)> = Vec::new();
    for (n, t) in tables.iter().enumerate() {
        for (axis, sets, value) in t.caption.as_deref().map(named).unwrap_or_default() {
            match axes.iter_mut().find(|(a, ..)| *a == axis) {
                Some((_, _, values, at)) => {
                    if !values.contains(&value) {
                        values.push(value);
                    }
                    at.push(n + 1);
                }
                None => axes.push((axis, sets, vec![value], vec![n + 1])),
            }
        }
    }
    let mut limits: Vec<(String, String)> = Vec::new();
    for (axis, sets, values, at) in axes {
        let taken = p.run_axes.iter().any(|(n, ..)| n == axis);
        if values.len() < 2 || taken {
            continue;
        }
        let tables: Vec<String> = at.iter().map(usize::to_string).collect();
        let why = match sets {
            Sets::Fio => {
                let Some(Workloads::One(job)) = &mut p.workloads else {
                    continue;
                };
                if job.get(axis).is_some_and(|v| !v.contains("{{")) {
                    continue;
                }
                job.set(axis, &format!("{{{{ {axis} }}}}"), None);
                format!("the mail's job sets no {axis}")
            }
            Sets::Throttle => {
                limits.push((axis.to_string(), format!("{{{{ {axis} }}}}")));
                format!("the block throttle's {axis} limit on the cgroup the job runs in")
            }
        };
        p.run_axes.push((
            axis.to_string(),
            values,
            Some(format!(
                "one value each in the captions of tables {}; {why}",
                tables.join(", ")
            )),
        ));
    }
    if !limits.is_empty() {
        throttle(p, limits);
    }
}

/// For each table, the values of caption-swept axes it takes from a
/// caption above it: a caption heads a section (`blkio.throttle...
/// = 10MB/s`, then the read, clat and lat lines under it), and a table
/// of the section whose own caption names no value of that axis is
/// measured at the section's. A section ends at the next caption that
/// names a value, at another message, or after a gap of more than
/// `SECTION_GAP` lines between two of its tables.
pub(super) fn section_values(
    tables: &[ClaimTable],
    run_axes: &[(String, Vec<String>, Option<String>)],
) -> Vec<Vec<(String, String)>> {
    const SECTION_GAP: usize = 30;
    let swept = |axis: &str, value: &str| {
        run_axes
            .iter()
            .any(|(a, vs, _)| a == axis && vs.iter().any(|v| v == value))
    };
    let mut current: Vec<(&'static str, String, usize, usize)> = Vec::new();
    let mut out = Vec::with_capacity(tables.len());
    for t in tables {
        let msg = t.origin.message;
        let own: Vec<(&'static str, String)> = t
            .caption
            .as_deref()
            .map(named)
            .unwrap_or_default()
            .into_iter()
            .filter(|(a, _, v)| swept(a, v))
            .map(|(a, _, v)| (a, v))
            .collect();
        current.retain(|(a, _, m, line)| {
            *m == msg
                && t.line.saturating_sub(*line) <= SECTION_GAP
                && !own.iter().any(|(o, _)| o == a)
        });
        let mut inherited = Vec::new();
        for (a, v, _, line) in current.iter_mut() {
            inherited.push((a.to_string(), v.clone()));
            *line = t.line;
        }
        for (a, v) in own {
            current.push((a, v, msg, t.line));
        }
        out.push(inherited);
    }
    out
}

/// The cgroup step that applies a caption's throttle limits, on the
/// device the job opens (or the one under the file system it opens a
/// file on). Without a device the axes stay, with a note that says what
/// to fill in.
fn throttle(p: &mut Proposal, limits: Vec<(String, String)>) {
    let file = match &p.workloads {
        Some(Workloads::One(j)) => j.get("filename").map(str::to_string),
        Some(Workloads::Named(ws)) => ws
            .first()
            .and_then(|(_, j)| j.get("filename"))
            .map(str::to_string),
        None => None,
    };
    let device = file.and_then(|f| {
        if f.starts_with("/dev/") && !f.contains("{{") {
            return Some(f);
        }
        p.setup.iter().find_map(|(s, _)| match s {
            Step::Mount { device, dir, .. }
                if f.starts_with(&format!("{}/", dir.trim_end_matches('/'))) =>
            {
                Some(device.clone())
            }
            _ => None,
        })
    });
    let Some(device) = device else {
        // Nothing would apply the limits: no axes of them either.
        p.run_axes
            .retain(|(n, ..)| !limits.iter().any(|(k, _)| k == n));
        p.workload_notes.push(format!(
            "The captions set block throttle limits ({}), but the job's device is not known: add a cgroup step (cgroup: {{name, device, rbps, ...}}) on it, and an axis of the limits",
            limits.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ")
        ));
        return;
    };
    p.setup.push((
        Step::Cgroup {
            name: "lab".into(),
            device,
            limits,
        },
        Some("the captions' throttle limits (cgroup v1's blkio.throttle files are cgroup v2's io.max keys); the workload runs in this group".into()),
    ));
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_caption_names_one_option_value() {
        use super::Sets::*;
        assert_eq!(super::named("bs=4k:"), vec![("bs", Fio, "4k".into())]);
        assert_eq!(
            super::named("Results (QD=32)"),
            vec![("iodepth", Fio, "32".into())]
        );
        assert_eq!(super::named("bs=4k, bs=8k"), vec![]);
        assert_eq!(super::named("with all write completions deferred:"), vec![]);
        assert_eq!(
            super::named("blkio.throttle.read_bps_device = 20MB/s fio ... -numjobs=8 ..."),
            vec![
                ("rbps", Throttle, "20MB/s".into()),
                ("numjobs", Fio, "8".into())
            ]
        );
        assert_eq!(
            super::named("8:0 wbps=10485760 wiops=max"),
            vec![
                ("wbps", Throttle, "10485760".into()),
                ("wiops", Throttle, "max".into())
            ]
        );
        // A value the limit cannot take is no limit.
        assert_eq!(super::named("rbps = fast"), vec![]);
    }
}
