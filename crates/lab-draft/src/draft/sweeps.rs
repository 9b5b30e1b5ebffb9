//! Sweeps a mail shows as one table per value: `bs=4k:`, `bs=16k:`, ...
//! over tables of the same rows. The captions name the value of a fio
//! option the job leaves open, so the option is an axis of the run and
//! each table binds to its value's cells (through the caption, as any
//! caption that names an axis value does).

use super::axes::axis_value;
use super::emit::Proposal;
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

/// The `option=value` a caption names, once: `bs=4k:` → (bs, 4k).
fn named(caption: &str) -> Option<(&'static str, String)> {
    let mut found = caption
        .split(|c: char| c.is_whitespace() || ",;:()[]".contains(c))
        .filter_map(|w| {
            let (name, value) = w.split_once('=')?;
            let (_, axis) = OPTIONS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))?;
            Some((*axis, axis_value(axis, value.trim())?))
        });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// An axis for each option that two or more tables' captions give
/// different values of, when the mail's one job does not set it.
pub(super) fn caption_axes(p: &mut Proposal, tables: &[ClaimTable]) {
    let Some(Workloads::One(job)) = &mut p.workloads else {
        return;
    };
    let mut axes: Vec<(&'static str, Vec<String>, Vec<usize>)> = Vec::new();
    for (n, t) in tables.iter().enumerate() {
        let Some((axis, value)) = t.caption.as_deref().and_then(named) else {
            continue;
        };
        match axes.iter_mut().find(|(a, ..)| *a == axis) {
            Some((_, values, at)) => {
                if !values.contains(&value) {
                    values.push(value);
                }
                at.push(n + 1);
            }
            None => axes.push((axis, vec![value], vec![n + 1])),
        }
    }
    for (axis, values, at) in axes {
        let taken = p.run_axes.iter().any(|(n, ..)| n == axis);
        if values.len() < 2 || taken || job.get(axis).is_some_and(|v| !v.contains("{{")) {
            continue;
        }
        job.set(axis, &format!("{{{{ {axis} }}}}"), None);
        let tables: Vec<String> = at.iter().map(usize::to_string).collect();
        p.run_axes.push((
            axis.to_string(),
            values,
            Some(format!(
                "one value each in the captions of tables {}; the mail's job sets no {axis}",
                tables.join(", ")
            )),
        ));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_caption_names_one_option_value() {
        assert_eq!(super::named("bs=4k:"), Some(("bs", "4k".into())));
        assert_eq!(
            super::named("Results (QD=32)"),
            Some(("iodepth", "32".into()))
        );
        assert_eq!(super::named("bs=4k, bs=8k"), None);
        assert_eq!(super::named("with all write completions deferred:"), None);
    }
}
