//! fio: the job's command line, and the metrics in its JSON output.

pub use crate::record::fio::{metrics, parse_output, version, zero_when_idle};
// The names lab gives fio's numbers are defined once, with the metric
// names a matrix may use.
use crate::matrix::schema::{FioDef, FioOptions};

/// The fio command line for a rendered workload. Output is JSON, with
/// percentiles for both completion and total latency. The workload's
/// own options are global (before the first `--name`); each job of a
/// multi-job workload is its own reporting group, so its clones
/// (`numjobs`) fold into one entry named after the job.
pub fn command(def: &FioDef) -> Vec<String> {
    let mut a = vec![
        "fio".to_string(),
        "--output-format=json".into(),
        "--clat_percentiles=1".into(),
        "--lat_percentiles=1".into(),
        "--group_reporting".into(),
    ];
    if let Some(f) = &def.filename {
        a.push(format!("--filename={f}"));
    }
    let mut opt = |k: &str, v: &Option<crate::matrix::Scalar>| {
        if let Some(v) = v {
            a.push(format!("--{k}={v}"));
        }
    };
    opt("rw", &def.rw);
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
    push_options(&mut a, &def.extra);
    if let Some(o) = &def.options {
        push_any(&mut a, o);
    }
    if def.jobs.is_empty() {
        a.push("--name=lab".into());
    }
    for (i, j) in def.jobs.iter().enumerate() {
        a.push(format!("--name={}", j.name));
        if i > 0 {
            a.push("--new_group".into());
        }
        if let Some(o) = &j.options {
            push_any(&mut a, o);
        }
    }
    a
}

/// `command` as one shell command line, every word quoted.
pub fn command_line(def: &FioDef) -> String {
    command(def)
        .iter()
        .map(|a| crate::util::shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--key=value`, or `--key` for a flag (an empty value).
fn push_options(
    a: &mut Vec<String>,
    m: &std::collections::BTreeMap<String, crate::matrix::Scalar>,
) {
    for (k, v) in m {
        match v.to_string() {
            s if s.is_empty() => a.push(format!("--{k}")),
            s => a.push(format!("--{k}={s}")),
        }
    }
}

fn push_any(a: &mut Vec<String>, o: &FioOptions) {
    match o {
        FioOptions::Map(m) => push_options(a, m),
        // Planning turns lines into maps; a line here is passed as written.
        FioOptions::Line(l) => a.extend(l.split_whitespace().map(String::from)),
    }
}

/// The fio ioengines a workload may start, so the image keeps the
/// libraries they load (`image::stub`). A command workload is searched
/// for `ioengine=X` and `--ioengine X` as written.
pub fn engines(w: &crate::matrix::Workload) -> Vec<String> {
    let text = match w {
        crate::matrix::Workload::Fio(def) => command(def).join(" "),
        crate::matrix::Workload::Command(c) => c.run.clone(),
    };
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == ';')
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_start_matches('-');
        // `ioengine X`, `ioengine=X`, and `ioengine='X'` (split at the quote).
        let name = match w.strip_prefix("ioengine") {
            Some("" | "=") => words[i + 1..].iter().copied().find(|w| !w.is_empty()),
            Some(v) => v.strip_prefix('='),
            None => None,
        };
        if let Some(n) = name.filter(|n| !n.is_empty()) {
            out.push(n.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Metric;
    use serde_json::Value;

    #[test]
    fn engines_come_from_options_jobs_and_command_lines() {
        let def: crate::matrix::schema::FioDef = crate::util::from_yaml(
            "ioengine: libaio\njobs:\n  - name: a\n    options: {ioengine: rbd}\n",
        )
        .unwrap();
        let w = crate::matrix::Workload::Fio(Box::new(def));
        assert_eq!(engines(&w), ["libaio", "rbd"]);
        let cmd = |run: &str| {
            engines(&crate::matrix::Workload::Command(
                crate::matrix::schema::CommandDef {
                    run: run.into(),
                    metrics: vec![],
                },
            ))
        };
        assert_eq!(cmd("fio --ioengine gfapi --name=x"), ["gfapi"]);
        assert_eq!(cmd("fio --name=x --ioengine='nbd' -size=1M"), ["nbd"]);
        assert!(cmd("dd if=/dev/zero of=/dev/null").is_empty());
    }

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
        let m = metrics(&j, false).unwrap();
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
        let m = metrics(&captured("nvme-randread-io_uring-hipri.json"), false).unwrap();
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
        assert!(metrics(&parse_output(&noisy).unwrap(), false).is_ok());
        let mut j = captured("dm-delay-1ms-after.json");
        j["jobs"][0]["error"] = serde_json::json!(5);
        assert!(
            metrics(&j, false)
                .unwrap_err()
                .to_string()
                .contains("error 5")
        );
        assert!(parse_output("fio: engine io_uring not loadable").is_err());
    }

    #[test]
    fn the_command_line_carries_every_option_and_percentiles() {
        let s = |v: &str| Some(crate::matrix::Scalar::Str(v.into()));
        let i = |v: i64| Some(crate::matrix::Scalar::Int(v));
        let def = FioDef {
            filename: Some("/dev/nvme0n1".into()),
            rw: s("randread"),
            bs: s("4k"),
            direct: i(1),
            ioengine: s("io_uring"),
            iodepth: i(1),
            numjobs: i(8),
            runtime: i(3),
            hipri: i(1),
            ..Default::default()
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

    /// fio-3.33 on the host: write + fdatasync; fio leaves sync's
    /// total_ios at 0 and counts the syncs in lat_ns.N.
    #[test]
    fn fdatasync_latencies_and_every_bandwidth_unit() {
        let m = metrics(&captured("host-write-fdatasync.json"), false).unwrap();
        assert_eq!(get(&m, "sync.ios"), 199.0);
        assert_eq!(get(&m, "sync.lat_mean"), 4672907.256281);
        assert_eq!(get(&m, "sync.lat_p50"), 3555328.0);
        assert_eq!(get(&m, "sync.lat_p90"), 10027008.0);
        assert_eq!(get(&m, "sync.lat_p99"), 38535168.0);
        assert_eq!(get(&m, "sync.lat_p99_9"), 56360960.0);
        assert_eq!(get(&m, "write.bw"), 874279.0);
        assert_eq!(get(&m, "write.bw_kb"), 874.279);
        // fio's own KiB/s figure, `bw`, is 853 (rounded down).
        assert_eq!(get(&m, "write.bw_kib").floor(), 853.0);
        assert_eq!(get(&m, "write.bw_mib"), 874279.0 / 1048576.0);
        assert_eq!(get(&m, "write.bw_mb"), 0.874279);
        assert_eq!(get(&m, "cpu.sys"), 3.311966);
        let unit = |n: &str| m.iter().find(|x| x.name == n).unwrap().unit.clone();
        assert_eq!(unit("write.bw_kib"), "KiB/s");
        assert_eq!(unit("sync.lat_p99"), "ns");
        for x in &m {
            assert_eq!(
                crate::matrix::derived::fio_metric_unit(&x.name),
                Some(x.unit.as_str()),
                "{}",
                x.name
            );
        }
    }

    /// fio-3.33 on the host: two jobs, each its own reporting group.
    #[test]
    fn per_job_metrics_carry_the_job_name() {
        let m = metrics(&captured("host-two-jobs.json"), true).unwrap();
        assert_eq!(get(&m, "seq4k.write.ios"), 100.0);
        assert_eq!(get(&m, "seq4k.sync.ios"), 99.0);
        assert_eq!(get(&m, "rand64k.write.ios"), 74.0);
        assert_eq!(get(&m, "rand64k.read.ios"), 54.0);
        assert_eq!(get(&m, "rand64k.cpu.usr"), 5.128205);
        assert!(!m.iter().any(|x| x.name.starts_with("rand64k.sync")));
        assert!(!m.iter().any(|x| x.name.starts_with("write.")));
    }

    #[test]
    fn jobs_are_groups_after_the_global_options() {
        let mut opts = std::collections::BTreeMap::new();
        opts.insert(
            "rw".to_string(),
            crate::matrix::Scalar::Str("randrw".into()),
        );
        opts.insert(
            "group_reporting".to_string(),
            crate::matrix::Scalar::Str(String::new()),
        );
        let def = FioDef {
            filename: Some("/mnt/f".into()),
            bs: Some(crate::matrix::Scalar::Str("4k".into())),
            jobs: vec![
                crate::matrix::schema::FioJobDef {
                    name: "a".into(),
                    options: Some(FioOptions::Map(opts.clone())),
                },
                crate::matrix::schema::FioJobDef {
                    name: "b".into(),
                    options: Some(FioOptions::Map(opts)),
                },
            ],
            ..Default::default()
        };
        let c = command(&def).join(" ");
        assert!(
            c.ends_with(
                "--bs=4k --name=a --group_reporting --rw=randrw --name=b --new_group --group_reporting --rw=randrw"
            ),
            "{c}"
        );
        assert!(!c.contains("--name=lab"));
        assert!(zero_when_idle("read.bw_mib") && zero_when_idle("a.write.iops"));
        assert!(!zero_when_idle("read.lat_mean") && !zero_when_idle("cpu.usr"));
    }
}
