//! The axes a table's key columns run over.

use super::*;

/// A key column, the axis it runs over, and aliases for keys written
/// otherwise.
pub(super) type RowAxis = (String, String, Vec<(String, String)>);

/// The axis a table's rows run over: the key column named like an axis,
/// or whose values are all one axis's values; with aliases for keys
/// written otherwise (`QD32` for 32).
pub(super) fn row_axis(t: &ClaimTable, ctx: &Ctx) -> Option<RowAxis> {
    (0..t.key_columns.len()).find_map(|i| key_axis(t, i, ctx))
}

/// Axes in column order, and the aliases of their keys.
pub(super) type RowAxes = (Vec<String>, Vec<(String, String)>);

/// Rows keyed by several columns, each a value of one of the matrix's
/// axes (`io_poll  io_poll_delay  threads`): the axes in column order,
/// with the aliases of all. None unless every key column is an axis and
/// there are two or more.
pub(super) fn row_axes(t: &ClaimTable, ctx: &Ctx) -> Option<RowAxes> {
    if t.key_columns.len() < 2 {
        return None;
    }
    let mut axes = Vec::new();
    let mut aliases = Vec::new();
    for i in 0..t.key_columns.len() {
        let (_, axis, a) = key_axis(t, i, ctx)?;
        if axes.contains(&axis) {
            return None;
        }
        axes.push(axis);
        aliases.extend(a);
    }
    Some((axes, aliases))
}

/// The axis key column `i` runs over, when it is one.
pub(super) fn key_axis(t: &ClaimTable, i: usize, ctx: &Ctx) -> Option<RowAxis> {
    use crate::matrix::claims::same_value;
    let col = t.key_columns.get(i)?;
    let keys: Vec<&str> = t
        .rows
        .iter()
        .filter_map(|r| r.keys.get(i).map(String::as_str))
        .collect();
    if keys.is_empty() {
        return None;
    }
    let named = axis_named(col);
    for (axis, values) in ctx.axes {
        let mut aliases = Vec::new();
        let all_in = keys.iter().all(|k| {
            if values.iter().any(|v| same_value(v, k)) {
                return true;
            }
            // The key as the axis spells its values (`rand overwrite`
            // for rw's randwrite), or its leading number (`HZ=250`).
            use super::super::axes::{axis_value, lead_number};
            let hit = [axis_value(axis, k), lead_number(k)]
                .into_iter()
                .flatten()
                .find_map(|n| values.iter().find(|v| **v == n));
            if let Some(v) = hit {
                aliases.push((k.to_string(), v.clone()));
            }
            hit.is_some()
        });
        // A column named after another of the matrix's axes is that axis's.
        let other = named
            .as_ref()
            .is_some_and(|n| n != axis && ctx.axes.iter().any(|(a, _)| a == n));
        if all_in && !other {
            return Some((col.clone(), axis.clone(), aliases));
        }
    }
    None
}

/// The axis a key column's name stands for: `QD` → iodepth.
pub fn axis_named(column: &str) -> Option<String> {
    let l = column.trim().to_ascii_lowercase();
    let l = l.split('(').next().unwrap_or("").trim();
    let name = match l {
        "iodepth" | "qd" | "queue depth" | "depth" | "io depth" | "iod" => "iodepth",
        "numjobs" | "jobs" | "threads" | "nr_jobs" | "procs" | "processes" | "tasks"
        | "nr_task" => "numjobs",
        "bs" | "block size" | "blocksize" | "io size" | "bsize" => "bs",
        "rw" | "pattern" | "io pattern" | "workload" | "test" | "mode" | "job" => "wl",
        "delay" | "delay ms" | "dm-delay" => "delay",
        "hz" | "config_hz" => "hz",
        "arch" | "architecture" => "arch",
        "" => return None,
        other => return Some(other.replace(' ', "_")),
    };
    Some(name.to_string())
}
