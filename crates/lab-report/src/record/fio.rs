//! fio's JSON output, as stored in a run (`fio.json`): the metrics lab
//! takes from it, read when the cell runs and again by the report.

use super::bench::Metric;
// The names lab gives fio's numbers are defined once, with the metric
// names a matrix may use.
use crate::matrix::derived::{FIO_BANDWIDTH as BANDWIDTH, FIO_PERCENTILES as PERCENTILES};
use anyhow::{Context, Result, bail};
use serde_json::Value;

/// fio's version string, e.g. `fio-3.33`.
pub fn version(json: &Value) -> Option<String> {
    json.get("fio version")
        .and_then(|v| v.as_str())
        .map(String::from)
}

/// The JSON document in fio's output; fio may print warnings first.
pub fn parse_output(stdout: &str) -> Result<Value> {
    let start = stdout.find('{').context("fio printed no JSON")?;
    serde_json::from_str(&stdout[start..]).context("fio's JSON output does not parse")
}

/// Metrics per data direction that did I/O, fsync/fdatasync latencies
/// (`sync.`), CPU and context switches. With `per_job`, each reporting
/// group's metrics are prefixed with its job's name: `seq4k.write.bw`.
pub fn metrics(json: &Value, per_job: bool) -> Result<Vec<Metric>> {
    let jobs = json
        .get("jobs")
        .and_then(|j| j.as_array())
        .context("fio JSON has no jobs")?;
    if jobs.is_empty() {
        bail!("fio JSON has an empty jobs list");
    }
    let mut out = Vec::new();
    // group_reporting folds the jobs of a group into one entry.
    for job in if per_job { &jobs[..] } else { &jobs[..1] } {
        let name = job.get("jobname").and_then(|j| j.as_str()).unwrap_or("?");
        if let Some(err) = job.get("error").and_then(|e| e.as_i64())
            && err != 0
        {
            bail!("fio reported error {err} for job {name}");
        }
        let prefix = if per_job {
            format!("{name}.")
        } else {
            String::new()
        };
        job_metrics(job, &prefix, &mut out);
    }
    if out.is_empty() {
        bail!("fio JSON shows no I/O in any direction");
    }
    Ok(out)
}

fn job_metrics(job: &Value, prefix: &str, out: &mut Vec<Metric>) {
    let start = out.len();
    for dir in ["read", "write", "trim", "sync"] {
        let Some(d) = job.get(dir) else { continue };
        // fio 3.33 leaves sync's total_ios at 0; lat_ns.N counts the syncs.
        let ios = if dir == "sync" {
            d.pointer("/lat_ns/N").and_then(|v| v.as_u64()).unwrap_or(0)
        } else {
            d.get("total_ios").and_then(|v| v.as_u64()).unwrap_or(0)
        };
        if ios == 0 {
            continue;
        }
        let p = format!("{prefix}{dir}");
        for kind in ["lat", "clat"] {
            let Some(l) = d.get(format!("{kind}_ns")) else {
                continue;
            };
            if let Some(m) = l.get("mean").and_then(|v| v.as_f64()) {
                out.push(Metric::new(format!("{p}.{kind}_mean"), m, "ns"));
            }
            if let Some(pc) = l.get("percentile") {
                for (key, name) in PERCENTILES {
                    if let Some(v) = pc.get(key).and_then(|v| v.as_f64()) {
                        out.push(Metric::new(format!("{p}.{kind}_{name}"), v, "ns"));
                    }
                }
            }
        }
        if dir == "sync" {
            out.push(Metric::new(format!("{p}.ios"), ios as f64, "count"));
            continue;
        }
        if let Some(v) = d.get("iops").and_then(|v| v.as_f64()) {
            out.push(Metric::new(format!("{p}.iops"), v, "IOPS"));
        }
        if let Some(v) = d.get("bw_bytes").and_then(|v| v.as_f64()) {
            for (name, div, unit) in BANDWIDTH {
                out.push(Metric::new(format!("{p}.{name}"), v / div, unit));
            }
        }
        out.push(Metric::new(format!("{p}.ios"), ios as f64, "count"));
    }
    if out.len() == start {
        return;
    }
    for (key, name, unit) in [
        ("usr_cpu", "cpu.usr", "%"),
        ("sys_cpu", "cpu.sys", "%"),
        ("ctx", "cpu.ctx", "count"),
    ] {
        if let Some(v) = job.get(key).and_then(|v| v.as_f64()) {
            out.push(Metric::new(format!("{prefix}{name}"), v, unit));
        }
    }
}

/// A direction's throughput is 0, not unknown, when fio did no I/O in
/// it: `read.bw + write.bw` of a write-only job is the write bandwidth.
pub fn zero_when_idle(name: &str) -> bool {
    let parts: Vec<&str> = name.rsplitn(3, '.').collect();
    parts.len() >= 2
        && ["read", "write", "trim"].contains(&parts[1])
        && (parts[0] == "iops" || parts[0] == "ios" || parts[0].starts_with("bw"))
}
