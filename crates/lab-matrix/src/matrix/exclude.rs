//! `exclude:` and `only:`: partial axis maps that drop combinations
//! from the product, checked against the axes at plan time.

use super::expand::AxisValues;
use super::schema::{AxisPick, Loc};
use super::{Scalar, err_at};
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One map: every named axis must take one of the listed values.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Pick(pub Vec<(String, Vec<Scalar>)>);

impl Pick {
    pub fn matches(&self, cell: &AxisValues) -> bool {
        self.0.iter().all(|(axis, vals)| {
            cell.get(axis)
                .is_some_and(|v| vals.iter().any(|x| same(x, v)))
        })
    }
}

/// Axis values compare as written: `6.1` and `"6.1"` are one value.
pub fn same(a: &Scalar, b: &Scalar) -> bool {
    a.to_string() == b.to_string()
}

/// Check each map against `axes` (name → values) and turn it into picks.
pub fn picks(
    path: &Path,
    key: &str,
    defs: Option<&Loc<Vec<Loc<AxisPick>>>>,
    axes: &[(String, Vec<Scalar>)],
) -> Result<Vec<Pick>> {
    let mut out = Vec::new();
    let Some(defs) = defs else { return Ok(out) };
    for (i, d) in defs.value.iter().enumerate() {
        if d.value.0.is_empty() {
            return Err(err_at(
                path,
                d,
                format!("{key}[{i}] is empty: name at least one axis"),
            ));
        }
        let mut pick = Pick::default();
        for (name, vals) in &d.value.0 {
            let n = name.value.to_string();
            let Some((_, known)) = axes.iter().find(|(a, _)| *a == n) else {
                return Err(err_at(
                    path,
                    name,
                    format!(
                        "{key}[{i}]: '{n}' is not an axis (axes: {})",
                        axes.iter()
                            .map(|(a, _)| a.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            };
            let mut vs = Vec::new();
            for v in vals.value.values() {
                if !known.iter().any(|k| same(k, v)) {
                    return Err(err_at(
                        path,
                        vals,
                        format!(
                            "{key}[{i}].{n}: '{v}' is not a value of axis '{n}' ({})",
                            known
                                .iter()
                                .map(|k| k.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
                vs.push(v.clone());
            }
            pick.0.push((n, vs));
        }
        out.push(pick);
    }
    Ok(out)
}
