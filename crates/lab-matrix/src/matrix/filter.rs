//! `--filter arch=x86_64,hz=100`: the slice of a plan to act on.
//!
//! Keys are axis names (and `variant`); the same key given twice means
//! either value. A key or value the matrix does not have is an error,
//! because a typo that selects nothing would look like a finished run.

use super::{Matrix, Plan};
use anyhow::{Result, bail};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Filter(pub Vec<(String, Vec<String>)>);

impl Filter {
    pub fn parse(s: &str) -> Result<Filter> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((k, v)) = part.split_once('=') else {
                bail!(
                    "--filter: '{}' is not key=value (e.g. arch=x86_64,hz=100)",
                    crate::util::clip(part, 100)
                );
            };
            let (k, v) = (k.trim().to_string(), v.trim().to_string());
            match out.iter_mut().find(|(n, _)| *n == k) {
                Some((_, vals)) => vals.push(v),
                None => out.push((k, vec![v])),
            }
        }
        Ok(Filter(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Check every key and value against the matrix.
    pub fn check(&self, m: &Matrix, plan: &Plan) -> Result<()> {
        let names = m.all_axis_names();
        for (k, vals) in &self.0 {
            if !names.contains(k) {
                bail!(
                    "--filter: '{}' is not an axis of {}; axes: {}",
                    crate::util::clip(k, 100),
                    m.path.display(),
                    names.join(", ")
                );
            }
            // The values the plan has for this key, once: checking each
            // of many values against every cell would be quadratic.
            let mut known: Vec<String> = plan
                .cells
                .iter()
                .filter_map(|c| c.axes.get(k).map(|x| x.to_string()))
                .collect();
            known.sort();
            known.dedup();
            for v in vals {
                if known.binary_search(v).is_err() {
                    // A message names at most 20 of the values.
                    let more = known.len().saturating_sub(20);
                    bail!(
                        "--filter: {k}={} matches nothing; {k} is one of {}{}",
                        crate::util::clip(v, 100),
                        known[..known.len().min(20)].join(", "),
                        if more > 0 {
                            format!(" and {more} more")
                        } else {
                            String::new()
                        }
                    );
                }
            }
        }
        Ok(())
    }

    pub fn matches(&self, axes: &super::expand::AxisValues) -> bool {
        self.0.iter().all(|(k, vals)| match axes.get(k) {
            Some(v) => vals.iter().any(|x| *x == v.to_string()),
            // A key this object does not carry (e.g. a run axis, asked of a
            // kernel) does not exclude it.
            None => true,
        })
    }

    /// Keep the cells that match, and the boots and kernels they need.
    pub fn apply(&self, plan: &Plan) -> Plan {
        let mut p = plan.clone();
        p.cells.retain(|c| self.matches(&c.axes));
        p.excluded.retain(|a| self.matches(a));
        p.boots.retain(|b| p.cells.iter().any(|c| c.boot == b.id));
        let mut needed: Vec<String> = p.boots.iter().map(|b| b.kernel.clone()).collect();
        // A kernel whose build starts from another's tree needs that one too,
        // but only to build: it is kept, with no boots of its own.
        let bases: Vec<String> = p
            .kernels
            .iter()
            .filter(|k| needed.contains(&k.id))
            .filter_map(|k| k.base_kernel.clone())
            .collect();
        needed.extend(bases);
        p.kernels.retain(|k| needed.contains(&k.id));
        p.schedule
            .retain(|s| p.boots.iter().any(|b| b.id == s.boot));
        p
    }
}
