//! fio jobs as workloads: options lab sets itself dropped, runtimes cut
//! for TCG, and what varies between the mail's jobs made an axis.
//! Without any fio line, a workload is proposed from the caption's
//! words ("single 4 KiB direct writes, 300 each"), and says so.

use super::steps::FioJob;
#[cfg(test)]
use super::steps::Src;
use regex::Regex;
use std::sync::LazyLock;

/// One fio workload as the draft writes it: option, value, and a
/// comment for a value lab changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Job {
    pub options: Vec<(String, String, Option<String>)>,
    /// Options of the mail left out, and why.
    pub dropped: Vec<String>,
}

impl Job {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(x, ..)| x == k)
            .map(|(_, v, _)| v.as_str())
    }
    pub fn set(&mut self, k: &str, v: &str, note: Option<String>) {
        match self.options.iter_mut().find(|(x, ..)| x == k) {
            Some(o) => {
                o.1 = v.to_string();
                o.2 = note;
            }
            None => self.options.push((k.to_string(), v.to_string(), note)),
        }
    }
}

pub use crate::matrix::schema::fio_direction as direction;

/// The workloads of a draft.
#[derive(Clone, Debug, PartialEq)]
pub enum Workloads {
    One(Job),
    /// Named, picked per cell by an axis.
    Named(Vec<(String, Job)>),
}

/// Options lab sets or that change only fio's output.
pub(super) const DROPPED: [&str; 18] = [
    "name",
    "output",
    "output-format",
    "minimal",
    "group_reporting",
    "time_based",
    "eta",
    "eta-newline",
    "clat_percentiles",
    "lat_percentiles",
    "status-interval",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "log_avg_msec",
    "per_job_logs",
    "new_group",
    "percentile_list",
];

/// The longest runtime a draft keeps, in seconds: TCG is slow.
pub const MAX_RUNTIME: u64 = 5;
/// The largest `size` kept, in MiB: lab's devices are 1 GiB.
const MAX_SIZE_MIB: u64 = 512;

/// A mail's job as lab runs it, `device` mapping its file names.
pub fn clean(j: &FioJob, device: &dyn Fn(&str) -> String) -> Job {
    let mut out = Job::default();
    for (k, v) in &j.options {
        if DROPPED.contains(&k.as_str()) {
            continue;
        }
        // `--iodepth=$QD`: a shell or job-file variable the mail sets
        // elsewhere, if at all. Left out; a table keyed by it gives the
        // option its axis.
        if k != "filename" && v.contains('$') {
            out.dropped.push(format!(
                "--{k}={v}: a variable of the mail's shell or job file"
            ));
            continue;
        }
        // A value read from a table or a pasted line that fio would
        // refuse (`8t`, `16 | numjobs=1`): left out, the draft says so.
        // An axis's template (`{{ depth }}`) is checked as each cell
        // renders it, at plan time.
        if !v.contains("{{")
            && let Some(e) = crate::matrix::fio_value_error(k, v)
        {
            out.dropped.push(format!("--{k}={v}: {e}"));
            continue;
        }
        match k.as_str() {
            "filename" => out.set(k, &device(&unvar_mapper(v)), None),
            // fio's other name for `rw`.
            "readwrite" => out.set("rw", v, None),
            "cpus_allowed"
            | "cpus_allowed_policy"
            | "cpumask"
            | "numa_cpu_nodes"
            | "numa_mem_policy" => {
                out.dropped
                    .push(format!("--{k}={v}: it pins to CPUs the guest may not have"));
            }
            "runtime" => match seconds(v) {
                Some(s) if s > MAX_RUNTIME => out.set(
                    k,
                    &MAX_RUNTIME.to_string(),
                    Some(format!(
                        "the mail ran {v}{}; cut for TCG",
                        if v.parse::<u64>().is_ok() { " s" } else { "" }
                    )),
                ),
                Some(s) => out.set(k, &s.to_string(), None),
                None => out.set(k, v, None),
            },
            "ramp_time" => out.set(k, "1", Some(format!("the mail ramped {v}; cut for TCG"))),
            "size" => match mib(v) {
                Some(m) if m > MAX_SIZE_MIB => out.set(
                    k,
                    &format!("{MAX_SIZE_MIB}M"),
                    Some(format!("the mail used {v}; lab's devices are 1 GiB")),
                ),
                _ => out.set(k, v, None),
            },
            _ => out.set(k, v, None),
        }
    }
    out
}

/// `/dev/mapper/delay$d` → `/dev/mapper/delay`: a shell variable in a
/// dm name only tells a loop's devices apart, and a cell makes one.
fn unvar_mapper(v: &str) -> String {
    let Some(name) = v.strip_prefix("/dev/mapper/") else {
        return v.to_string();
    };
    let mut out = String::new();
    let mut it = name.chars().peekable();
    while let Some(c) = it.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let braced = it.peek() == Some(&'{');
        while let Some(&n) = it.peek() {
            it.next();
            if braced && n == '}' {
                break;
            }
            if !(braced || n.is_ascii_alphanumeric() || n == '_') {
                out.push(n);
                break;
            }
        }
    }
    format!("/dev/mapper/{out}")
}

/// `60`, `60s`, `2m` → seconds.
fn seconds(v: &str) -> Option<u64> {
    let v = v.trim();
    let (n, mul) = match v.strip_suffix('m') {
        Some(n) => (n, 60),
        None => (v.trim_end_matches('s'), 1),
    };
    n.parse::<u64>().ok().map(|n| n * mul)
}

/// `10G`, `512m`, `4GiB` → MiB (fio's sizes are powers of 2).
pub(super) fn mib(v: &str) -> Option<u64> {
    crate::util::parse_size(v).ok().map(|b| b >> 20)
}

/// Jobs that differ in one option are one workload and an axis over
/// that option; jobs that differ in more are named workloads, named by
/// the option in `prefer` (the tables' row keys) when each job has its
/// own value of it.
/// A fio job name that is also a good workload name: short, and of
/// letters, digits, `_` and `-`.
pub fn is_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 32
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
}

/// A switch one job gives (`--hipri`, `fixedbufs=1`) and another leaves
/// off is 1 against 0 there: written out in every job, so the option
/// that varies is seen as one.
pub fn spell_switches(jobs: &mut [Job]) {
    for k in crate::matrix::fioopts::OFF_BY_DEFAULT {
        if jobs.iter().any(|j| j.get(k).is_some()) && jobs.iter().any(|j| j.get(k).is_none()) {
            for j in jobs.iter_mut() {
                match j.get(k) {
                    None => j.set(k, "0", None),
                    Some("") => j.set(k, "1", None),
                    Some(_) => {}
                }
            }
        }
    }
}

/// An axis: its name and values.
type Axis = (String, Vec<String>);

/// Jobs that differ in exactly two options and run every combination
/// of their values (`numjobs` 16 and 32, each with `rw` read, write and
/// rw): one job with both templated, and the two axes.
pub fn cross(jobs: &[Job]) -> Option<(Job, Vec<Axis>)> {
    let mut unique: Vec<&Job> = Vec::new();
    for j in jobs {
        if !unique.contains(&j) {
            unique.push(j);
        }
    }
    let varying = varying(&unique);
    let [a, b] = &varying[..] else { return None };
    let values = |k: &str| {
        let mut vs: Vec<String> = Vec::new();
        for j in &unique {
            let v = j.get(k)?;
            if !vs.iter().any(|x| x == v) {
                vs.push(v.to_string());
            }
        }
        Some(vs)
    };
    let (va, vb) = (values(a)?, values(b)?);
    // Each job is its pair of values: as many jobs as pairs is all of them.
    if va.len() < 2 || vb.len() < 2 || unique.len() != va.len() * vb.len() {
        return None;
    }
    let one = templated(&unique, &[a, b]);
    Some((one, vec![(a.clone(), va), (b.clone(), vb)]))
}

/// The options whose values differ between `jobs`, in the order they
/// are first given.
fn varying(jobs: &[&Job]) -> Vec<String> {
    let mut keys: Vec<&String> = Vec::new();
    for (k, ..) in jobs.iter().flat_map(|j| &j.options) {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter(|k| jobs.iter().any(|j| j.get(k) != jobs[0].get(k)))
        .cloned()
        .collect()
}

/// The first of `jobs` with `keys` as templates of their axes, and what
/// any of them left out.
fn templated(jobs: &[&Job], keys: &[&String]) -> Job {
    let mut one = jobs[0].clone();
    for k in keys {
        one.set(k, &format!("{{{{ {k} }}}}"), None);
    }
    for d in jobs.iter().flat_map(|j| &j.dropped) {
        if !one.dropped.contains(d) {
            one.dropped.push(d.clone());
        }
    }
    one
}

pub fn combine(jobs: Vec<Job>, prefer: &[String]) -> (Workloads, Option<(String, Vec<String>)>) {
    let mut unique: Vec<Job> = Vec::new();
    for j in jobs {
        if !unique.contains(&j) {
            unique.push(j);
        }
    }
    if unique.len() <= 1 {
        return (Workloads::One(unique.pop().unwrap_or_default()), None);
    }
    let refs: Vec<&Job> = unique.iter().collect();
    let varying = varying(&refs);
    if let [k] = &varying[..]
        && unique.iter().all(|j| j.get(k).is_some())
    {
        let values: Vec<String> = unique
            .iter()
            .filter_map(|j| j.get(k))
            .map(String::from)
            .collect();
        let one = templated(&refs, &[k]);
        return (Workloads::One(one), Some((k.clone(), values)));
    }
    let distinct = |k: &str| {
        let vs: Vec<Option<&str>> = unique.iter().map(|j| j.get(k)).collect();
        vs.iter().all(|v| v.is_some_and(|v| !v.is_empty()))
            && (1..vs.len()).all(|i| !vs[..i].contains(&vs[i]))
    };
    if let Some(k) = prefer.iter().find(|k| varying.contains(k) && distinct(k)) {
        let named: Vec<(String, Job)> = unique
            .into_iter()
            .map(|j| (j.get(k).unwrap_or_default().to_string(), j))
            .collect();
        let names = named.iter().map(|(n, _)| n.clone()).collect();
        return (Workloads::Named(named), Some((k.clone(), names)));
    }
    let mut named: Vec<(String, Job)> = Vec::new();
    for j in unique {
        let parts: Vec<&str> = varying
            .iter()
            .filter_map(|k| j.get(k))
            .filter(|v| !v.is_empty())
            .collect();
        let mut name = slug(&parts.join("-"));
        if name.is_empty() || named.iter().any(|(n, _)| *n == name) {
            name = format!("job{}", named.len() + 1);
        }
        named.push((name, j));
    }
    let names = named.iter().map(|(n, _)| n.clone()).collect();
    (Workloads::Named(named), Some(("wl".into(), names)))
}

fn slug(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

fn re(s: &str) -> Regex {
    Regex::new(s).expect("valid regex")
}

static COUNT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(\d+)\s+(?:writes|reads|i/?os|requests)\b"));
/// A size in KiB, with the `key=` it is the value of, if any.
static BS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?:^|[^\d.,])(?:(\w+)=)?(\d+)\s?(?:k|kb|kib)\b"));
static QD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:iodepth|qd|queue depth)\s*[=:]?\s*(\d+)\b"));
/// `32 processes`, `32 concurrent processes` (see [`jobs`]).
static JOBS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(\d+|two|four|eight|sixteen|thirty-two)\s+(?:[a-z]+\s+)?(?:jobs|threads|processes|tasks)\b",
    )
});

/// The first count of jobs in `text` that is no threshold: `more than
/// 3 processes` says when a patch acts, not how many ran.
fn jobs(text: &str) -> Option<(String, String)> {
    JOBS.captures_iter(text).find_map(|c| {
        let at = c.get(0)?.start();
        let before = text[..at]
            .trim_end()
            .rsplit(char::is_whitespace)
            .next()
            .unwrap_or("");
        let threshold = ["than", "over", "under", "above", "below", "least", "most"]
            .contains(&before.to_ascii_lowercase().as_str());
        (!threshold).then(|| (c[1].to_string(), c[0].trim().to_string()))
    })
}

/// The first size in `text` that can be a block size: a power of two
/// from 1 KiB to 64 MiB that is no other option's value. `io=102120KB`
/// (what fio moved) and `size=1024k` are sizes, not block sizes.
fn block_size(text: &str) -> Option<(String, String)> {
    BS.captures_iter(text).find_map(|c| {
        let key = c.get(1).map(|k| k.as_str().to_ascii_lowercase());
        if key.is_some_and(|k| !matches!(k.as_str(), "bs" | "blocksize" | "block_size")) {
            return None;
        }
        let n: u64 = c[2].parse().ok()?;
        (n.is_power_of_two() && n <= 65536).then(|| (c[2].to_string(), c[0].trim().to_string()))
    })
}

/// `eight` → `8`: prose spells small counts out.
fn number(w: &str) -> String {
    match w.to_ascii_lowercase().as_str() {
        "two" => "2".into(),
        "four" => "4".into(),
        "eight" => "8".into(),
        "sixteen" => "16".into(),
        "thirty-two" => "32".into(),
        _ => w.to_string(),
    }
}

/// A workload from words: `primary` (the tables' captions) says what
/// the I/O is; `secondary` (the rest of the mail) may fill in block
/// size, depth, engine and jobs the captions leave out. Each value
/// comes with the words it was read from. None when no words name I/O.
pub fn inferred(primary: &str, secondary: &str, file: &str) -> Option<(Job, Vec<String>)> {
    let p = primary.to_ascii_lowercase();
    let s = secondary.to_ascii_lowercase();
    let has_in = |w: &str, x: &str| {
        w.split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|t| t == x)
    };
    let rw = |w: &str| -> Option<(&'static str, &'static str)> {
        let has = |x: &str| has_in(w, x);
        let random = has("random") || has("randread") || has("randwrite") || has_in(&s, "random");
        let reads = has("read") || has("reads");
        let writes = has("write") || has("writes");
        // `a random read/write job`: one job does both.
        if has("randrw") || (has("mixed") && (reads || writes)) || (reads && writes) {
            Some(("randrw", "mixed"))
        } else if writes || has("randwrite") {
            Some((if random { "randwrite" } else { "write" }, "writes"))
        } else if reads || has("randread") {
            Some((if random { "randread" } else { "read" }, "reads"))
        } else {
            None
        }
    };
    let (rw, said) = rw(&p)?;
    let mut job = Job::default();
    let mut read = vec![format!("rw={rw} (\"{said}\")")];
    job.set("filename", file, None);
    job.set("rw", rw, None);
    // The caption's words first, then the mail's.
    let find = |r: &Regex| -> Option<(String, String)> {
        r.captures(&p)
            .or_else(|| r.captures(&s))
            .map(|c| (c[1].to_string(), c[0].trim().to_string()))
    };
    if let Some((n, w)) = block_size(&p).or_else(|| block_size(&s)) {
        read.push(format!("bs={n}k (\"{w}\")"));
        job.set("bs", &format!("{n}k"), None);
    }
    let either = |x: &str| has_in(&p, x) || has_in(&s, x);
    if either("direct") || either("o_direct") {
        job.set("direct", "1", None);
        read.push("direct=1 (\"direct\")".into());
    }
    let single = has_in(&p, "single") || has_in(&p, "synchronous") || p.contains("one at a time");
    let engine = ["io_uring", "libaio", "psync", "pvsync2"]
        .into_iter()
        .find(|e| either(e));
    match engine {
        Some(e) => {
            job.set("ioengine", e, None);
            read.push(format!("ioengine={e}"));
        }
        None if single => {
            job.set("ioengine", "psync", None);
            read.push("ioengine=psync (one I/O at a time)".into());
        }
        None => {}
    }
    if let Some((n, w)) = find(&QD) {
        job.set("iodepth", &n, None);
        read.push(format!("iodepth={n} (\"{w}\")"));
    } else if single {
        job.set("iodepth", "1", None);
        read.push("iodepth=1 (\"single\")".into());
    }
    if let Some((n, w)) = jobs(&p).or_else(|| jobs(&s)) {
        let n = number(&n);
        job.set("numjobs", &n, None);
        read.push(format!("numjobs={n} (\"{w}\")"));
    }
    match COUNT.captures(&p) {
        Some(c) => {
            job.set("number_ios", &c[1], None);
            read.push(format!("number_ios={} (\"{}\")", &c[1], &c[0]));
        }
        None => {
            job.set(
                "runtime",
                &MAX_RUNTIME.to_string(),
                Some("the mail gives no run length".into()),
            );
            job.set("size", "256M", None);
        }
    }
    Some((job, read))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(opts: &[(&str, &str)]) -> Job {
        let mut j = Job::default();
        for (k, v) in opts {
            j.set(k, v, None);
        }
        j
    }

    #[test]
    fn a_block_size_is_a_power_of_two_and_no_other_options_value() {
        assert_eq!(block_size("4k random reads").unwrap().0, "4");
        assert_eq!(
            block_size("io=102120KB, bw=1702KB/s, 64KB writes")
                .unwrap()
                .0,
            "64"
        );
        assert_eq!(block_size("size=1024k, bs=16k").unwrap().0, "16");
        assert!(block_size("moved 100k requests at 3000KB/s").is_none());
    }

    #[test]
    fn one_varying_option_is_an_axis_more_are_named_workloads() {
        let (w, axis) = combine(
            vec![
                job(&[("rw", "randread"), ("iodepth", "1")]),
                job(&[("rw", "randread"), ("iodepth", "32")]),
            ],
            &[],
        );
        assert_eq!(
            axis,
            Some(("iodepth".into(), vec!["1".into(), "32".into()]))
        );
        assert_eq!(
            w,
            Workloads::One(job(&[("rw", "randread"), ("iodepth", "{{ iodepth }}")]))
        );
        let two = vec![
            job(&[("rw", "randread"), ("bs", "4k")]),
            job(&[("rw", "write"), ("bs", "128k")]),
        ];
        let (w, axis) = combine(two.clone(), &[]);
        assert_eq!(axis.unwrap().1, vec!["randread-4k", "write-128k"]);
        assert!(matches!(w, Workloads::Named(n) if n.len() == 2));
        // A table keyed by bs names the axis and the workloads.
        let (_, axis) = combine(two, &["bs".into()]);
        assert_eq!(axis, Some(("bs".into(), vec!["4k".into(), "128k".into()])));
    }

    #[test]
    fn runtimes_sizes_and_pinning_are_cut_with_a_note() {
        let j = FioJob {
            name: Some("x".into()),
            options: vec![
                ("name".into(), "x".into()),
                ("runtime".into(), "60".into()),
                ("size".into(), "10G".into()),
                ("filename".into(), "/dev/sdb".into()),
                ("time_based".into(), String::new()),
                ("cpus_allowed".into(), "4".into()),
            ],
            src: Src {
                line: 1,
                quote: String::new(),
            },
        };
        let c = clean(&j, &|d| {
            if d == "/dev/sdb" {
                "/dev/nvme0n1".into()
            } else {
                d.into()
            }
        });
        assert_eq!(c.get("runtime"), Some("5"));
        assert_eq!(c.get("size"), Some("512M"));
        assert_eq!(c.get("filename"), Some("/dev/nvme0n1"));
        assert_eq!(c.get("name"), None);
        assert_eq!(c.get("cpus_allowed"), None);
        assert_eq!(c.dropped.len(), 1);
        assert!(c.options[0].2.as_deref().unwrap().contains("60"));
        assert_eq!(unvar_mapper("/dev/mapper/delay$d"), "/dev/mapper/delay");
        assert_eq!(unvar_mapper("/dev/mapper/d${n}x"), "/dev/mapper/dx");
    }

    /// A count of jobs may have a word between (`32 concurrent
    /// processes`); a threshold (`more than 3 processes`) is none.
    #[test]
    fn jobs_counts_skip_thresholds() {
        let (j, _) = inferred(
            "* 32 concurrent processes performing random reads",
            "if there are more than 3 processes performing concurrent I/O",
            "/dev/sda",
        )
        .unwrap();
        assert_eq!(j.get("numjobs"), Some("32"));
        let (j, _) = inferred("random reads", "more than 3 processes", "/dev/sda").unwrap();
        assert_eq!(j.get("numjobs"), None);
    }

    #[test]
    fn a_caption_proposes_a_workload() {
        let (j, read) = inferred(
            "Single 4 KiB direct writes through a delay target on a memory-backed null_blk device, arm64, HZ=100, mean latency in ms (300 writes each):",
            "",
            "/dev/mapper/delayed",
        )
        .unwrap();
        assert_eq!(j.get("rw"), Some("write"));
        assert_eq!(j.get("bs"), Some("4k"));
        assert_eq!(j.get("direct"), Some("1"));
        assert_eq!(j.get("iodepth"), Some("1"));
        assert_eq!(j.get("ioengine"), Some("psync"));
        assert_eq!(j.get("number_ios"), Some("300"));
        assert!(read.len() >= 5);
        assert!(inferred("mean latency in ms", "", "/dev/x").is_none());
        // "1.62M" is a count, not a block size; the rest of the mail
        // fills in what the sentence leaves out.
        let (j, _) = inferred(
            "read IOPS go from 1.62M to 1.89M",
            "4k random reads with io_uring at iodepth 32, eight jobs, O_DIRECT",
            "/dev/nvme0n1",
        )
        .unwrap();
        assert_eq!(j.get("bs"), Some("4k"));
        assert_eq!(j.get("iodepth"), Some("32"));
        assert_eq!(j.get("numjobs"), Some("8"));
        assert_eq!(j.get("ioengine"), Some("io_uring"));
        assert_eq!(j.get("direct"), Some("1"));
    }
}
