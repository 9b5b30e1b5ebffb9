//! fio: the job's command line, and the metrics in its JSON output.

use super::Metric;
use crate::matrix::schema::FioDef;
use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The fio command line for a rendered job. Output is JSON, with
/// percentiles for both completion and total latency.
pub fn command(def: &FioDef) -> Vec<String> {
    let mut a = vec![
        "fio".to_string(),
        "--output-format=json".into(),
        "--name=lab".into(),
        format!("--filename={}", def.filename),
        format!("--rw={}", def.rw),
        "--clat_percentiles=1".into(),
        "--lat_percentiles=1".into(),
        "--group_reporting".into(),
    ];
    let mut opt = |k: &str, v: &Option<crate::matrix::Scalar>| {
        if let Some(v) = v {
            a.push(format!("--{k}={v}"));
        }
    };
    opt("bs", &def.bs);
    opt("direct", &def.direct);
    opt("ioengine", &def.ioengine);
    opt("iodepth", &def.iodepth);
    opt("numjobs", &def.numjobs);
    opt("number_ios", &def.number_ios);
    opt("size", &def.size);
    opt("hipri", &def.hipri);
    opt("fsync", &def.fsync);
    opt("fdatasync", &def.fdatasync);
    if let Some(r) = &def.runtime {
        a.push(format!("--runtime={r}"));
        a.push("--time_based".into());
    }
    for (k, v) in &def.extra {
        a.push(format!("--{k}={v}"));
    }
    a
}

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

const PERCENTILES: [(&str, &str); 3] = [
    ("50.000000", "p50"),
    ("99.000000", "p99"),
    ("99.900000", "p99_9"),
];

/// Metrics per data direction that did I/O, plus CPU and context switches.
pub fn metrics(json: &Value) -> Result<Vec<Metric>> {
    let jobs = json
        .get("jobs")
        .and_then(|j| j.as_array())
        .context("fio JSON has no jobs")?;
    if jobs.is_empty() {
        bail!("fio JSON has an empty jobs list");
    }
    // group_reporting folds all jobs into the first.
    let job = &jobs[0];
    if let Some(err) = job.get("error").and_then(|e| e.as_i64())
        && err != 0
    {
        bail!(
            "fio reported error {err} for job {}",
            job.get("jobname").and_then(|j| j.as_str()).unwrap_or("?")
        );
    }
    let mut out = Vec::new();
    for dir in ["read", "write", "trim", "sync"] {
        let Some(d) = job.get(dir) else { continue };
        let ios = d.get("total_ios").and_then(|v| v.as_u64()).unwrap_or(0);
        if ios == 0 {
            continue;
        }
        for kind in ["lat", "clat"] {
            let Some(l) = d.get(format!("{kind}_ns")) else {
                continue;
            };
            if let Some(m) = l.get("mean").and_then(|v| v.as_f64()) {
                out.push(Metric::new(format!("{dir}.{kind}_mean"), m, "ns"));
            }
            if let Some(p) = l.get("percentile") {
                for (key, name) in PERCENTILES {
                    if let Some(v) = p.get(key).and_then(|v| v.as_f64()) {
                        out.push(Metric::new(format!("{dir}.{kind}_{name}"), v, "ns"));
                    }
                }
            }
        }
        if dir == "sync" {
            continue;
        }
        if let Some(v) = d.get("iops").and_then(|v| v.as_f64()) {
            out.push(Metric::new(format!("{dir}.iops"), v, "IOPS"));
        }
        if let Some(v) = d.get("bw_bytes").and_then(|v| v.as_f64()) {
            out.push(Metric::new(format!("{dir}.bw"), v, "B/s"));
        }
        out.push(Metric::new(format!("{dir}.ios"), ios as f64, "count"));
    }
    for (key, name, unit) in [
        ("usr_cpu", "cpu.usr", "%"),
        ("sys_cpu", "cpu.sys", "%"),
        ("ctx", "cpu.ctx", "count"),
    ] {
        if let Some(v) = job.get(key).and_then(|v| v.as_f64()) {
            out.push(Metric::new(name, v, unit));
        }
    }
    if out.is_empty() {
        bail!("fio JSON shows no I/O in any direction");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(name: &str) -> Value {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fio")
            .join(name);
        parse_output(&std::fs::read_to_string(&p).unwrap()).unwrap()
    }

    fn get(ms: &[Metric], name: &str) -> f64 {
        ms.iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no {name} in {ms:?}"))
            .value
    }

    /// fio-3.33 from a guest: 300 writes through a 1 ms dm-delay.
    #[test]
    fn parses_a_guest_run_into_nanosecond_metrics() {
        let j = captured("dm-delay-1ms-after.json");
        assert_eq!(version(&j).as_deref(), Some("fio-3.33"));
        let m = metrics(&j).unwrap();
        assert_eq!(get(&m, "write.ios"), 300.0);
        assert_eq!(get(&m, "write.lat_mean"), 1383337.04);
        assert_eq!(get(&m, "write.clat_mean"), 1378710.86);
        assert_eq!(get(&m, "write.lat_p50"), 1171456.0);
        assert_eq!(get(&m, "write.lat_p99"), 4292608.0);
        assert_eq!(get(&m, "write.lat_p99_9"), 12255232.0);
        assert_eq!(get(&m, "write.clat_p50"), 1155072.0);
        assert_eq!(get(&m, "write.iops"), 696.055684);
        assert_eq!(get(&m, "write.bw"), 2851044.0);
        assert_eq!(get(&m, "cpu.usr"), 6.032483);
        assert_eq!(get(&m, "cpu.sys"), 7.424594);
        assert_eq!(get(&m, "cpu.ctx"), 305.0);
        assert!(
            m.iter()
                .filter(|x| x.name.ends_with("_mean") || x.name.contains("_p"))
                .all(|x| x.unit == "ns")
        );
        // Directions without I/O produce nothing.
        assert!(
            m.iter()
                .all(|x| !x.name.starts_with("read.") && !x.name.starts_with("trim."))
        );
    }

    /// fio-3.33 from a guest: polled io_uring random reads on NVMe.
    #[test]
    fn parses_a_polled_read_run() {
        let m = metrics(&captured("nvme-randread-io_uring-hipri.json")).unwrap();
        assert_eq!(get(&m, "read.ios"), 22872.0);
        assert_eq!(get(&m, "read.lat_mean"), 122227.864507);
        assert_eq!(get(&m, "read.clat_mean"), 77307.865644);
        assert_eq!(get(&m, "read.clat_p99"), 473088.0);
        assert_eq!(get(&m, "read.iops"), 7621.459513);
        assert_eq!(get(&m, "cpu.sys"), 98.633333);
        assert!(m.iter().all(|x| !x.name.starts_with("write.")));
    }

    #[test]
    fn warnings_before_the_json_are_skipped_and_errors_reported() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/fio/dm-delay-1ms-after.json"),
        )
        .unwrap();
        let noisy = format!("fio: some warning\n{text}");
        assert!(metrics(&parse_output(&noisy).unwrap()).is_ok());
        let mut j = captured("dm-delay-1ms-after.json");
        j["jobs"][0]["error"] = serde_json::json!(5);
        assert!(metrics(&j).unwrap_err().to_string().contains("error 5"));
        assert!(parse_output("fio: engine io_uring not loadable").is_err());
    }

    #[test]
    fn the_command_line_carries_every_option_and_percentiles() {
        let def = FioDef {
            filename: "/dev/nvme0n1".into(),
            rw: crate::matrix::Scalar::Str("randread".into()),
            bs: Some(crate::matrix::Scalar::Str("4k".into())),
            direct: Some(crate::matrix::Scalar::Int(1)),
            ioengine: Some(crate::matrix::Scalar::Str("io_uring".into())),
            iodepth: Some(crate::matrix::Scalar::Int(1)),
            numjobs: Some(crate::matrix::Scalar::Int(8)),
            runtime: Some(crate::matrix::Scalar::Int(3)),
            number_ios: None,
            size: None,
            hipri: Some(crate::matrix::Scalar::Int(1)),
            fsync: None,
            fdatasync: None,
            extra: Default::default(),
        };
        let c = command(&def).join(" ");
        for want in [
            "--output-format=json",
            "--filename=/dev/nvme0n1",
            "--rw=randread",
            "--ioengine=io_uring",
            "--numjobs=8",
            "--hipri=1",
            "--runtime=3 --time_based",
            "--lat_percentiles=1",
            "--group_reporting",
        ] {
            assert!(c.contains(want), "{want} missing from {c}");
        }
    }
}
