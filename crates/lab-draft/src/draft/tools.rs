//! Benchmark tools other than fio, read as the fio job they stand for.

use super::steps::{FioJob, Src};

/// fio's `t/io_uring` as a fio job: its options (`-b512 -d128 -p1 ...`,
/// with t/io_uring's defaults for those not given) as fio's, its files
/// as fio's `filename`. What fio has no option for is left out.
pub fn t_io_uring(w: &[&str], src: &Src) -> FioJob {
    let mut given: Vec<(char, String)> = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let a = w[i];
        i += 1;
        let Some(o) = a.strip_prefix('-') else {
            files.push(a);
            continue;
        };
        let mut cs = o.chars();
        let Some(flag) = cs.next() else { continue };
        let mut v: String = cs.collect();
        if v.is_empty() && w.get(i).is_some_and(|n| !n.starts_with('-')) {
            v = w[i].to_string();
            i += 1;
        }
        given.push((flag, v));
    }
    let get = |f: char, default: &str| {
        given
            .iter()
            .rev()
            .find(|(g, _)| *g == f)
            .map_or(default.to_string(), |(_, v)| v.clone())
    };
    let on = |f: char, default: &str| get(f, default) != "0";
    let engine = if on('u', "0") {
        "io_uring_cmd"
    } else if on('S', "0") {
        "pvsync2"
    } else if on('a', "0") {
        "libaio"
    } else {
        "io_uring"
    };
    let mut opts: Vec<(String, String)> = vec![
        (
            "rw".into(),
            if on('R', "1") { "randread" } else { "read" }.into(),
        ),
        ("bs".into(), get('b', "4096")),
        ("ioengine".into(), engine.into()),
        ("iodepth".into(), get('d', "128")),
        ("iodepth_batch_submit".into(), get('s', "32")),
        ("iodepth_batch_complete_min".into(), get('c', "32")),
        ("direct".into(), if on('O', "1") { "1" } else { "0" }.into()),
    ];
    if engine == "io_uring_cmd" {
        opts.push(("cmd_type".into(), "nvme".into()));
    }
    for (flag, key) in [('p', "hipri"), ('B', "fixedbufs"), ('F', "registerfiles")] {
        if engine != "pvsync2" && engine != "libaio" && on(flag, "1") {
            opts.push((key.into(), "1".into()));
        }
    }
    if engine == "pvsync2" && on('p', "1") {
        opts.push(("hipri".into(), "1".into()));
    }
    let threads = get('n', "1");
    if threads != "1" {
        opts.push(("numjobs".into(), threads));
    }
    // Without -r it runs until stopped: the draft's note says 5 s.
    let runtime = given
        .iter()
        .find(|(f, _)| *f == 'r')
        .map_or("5".to_string(), |r| r.1.clone());
    opts.push(("runtime".into(), runtime));
    opts.push(("time_based".into(), String::new()));
    if !files.is_empty() {
        opts.push(("filename".into(), files.join(":")));
    }
    FioJob {
        name: None,
        options: opts,
        src: src.clone(),
    }
}
