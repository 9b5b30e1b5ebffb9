//! fio's terse output (`--minimal`, `--output-format=terse`): one line of
//! `;`-separated fields per job, `3;fio-3.36;job;0;0;...`. The fields
//! have no names in the line, so their meaning comes from fio's HOWTO
//! ("Terse output"), which fixes the order for terse versions 2 to 5:
//!
//! - version, fio version, job name, group, error;
//! - per direction (read, write, and trim from version 3): I/O (KiB),
//!   bandwidth (KiB/s), IOPS, runtime (ms); submission, completion and
//!   total latency (min, max, mean, stdev, in usec) with 20 completion
//!   latency percentiles (`99.000000%=205`) between the last two;
//!   bandwidth min, max, share of the group, mean, stdev, and from
//!   version 5 its sample count and IOPS min, max, mean, stdev, samples;
//! - CPU user and system time, context switches, major and minor faults;
//! - I/O depth shares (7), latency buckets in usec (10) and msec (12);
//! - then, per disk, its name and stats.
//!
//! A direction that moved no data, a bandwidth block without samples
//! and fio's `0%=0` padding percentiles are placeholders, not results.
//! The runtime, sample counts and the header are the run's bookkeeping.

use super::Draft;
use super::lines::Line;
use super::numbers::{count_unit, parse_unit};
use crate::mail::model::{ClaimKind, Row, Unit};

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let version = version_of(lines[i].text)?;
    let mut d = Draft::one_value(ClaimKind::Fio, &["job", "metric"], i);
    let mut j = i;
    while j < lines.len() && version_of(lines[j].text) == Some(version) {
        read_line(&mut d, lines[j].text, version, lines[j].no);
        j += 1;
    }
    d.end = j;
    Some(d)
}

/// The terse version of a line that is one, from 2 to 5.
fn version_of(text: &str) -> Option<u32> {
    let mut f = text.trim().split(';');
    let v: u32 = f.next()?.parse().ok()?;
    let fio = f.next()?;
    ((2..=5).contains(&v) && fio.starts_with("fio-") && text.matches(';').count() >= 100)
        .then_some(v)
}

/// What a field of a direction's block measures, with its unit.
enum Field {
    Skip,
    Value(String, Unit),
    Percentile(&'static str),
}

fn read_line(d: &mut Draft, text: &str, version: u32, no: usize) {
    let fields: Vec<&str> = text.trim().split(';').collect();
    let job = fields.get(2).copied().unwrap_or("").to_string();
    let dirs: &[&str] = if version == 2 {
        &["read", "write"]
    } else {
        &["read", "write", "trim"]
    };
    let per_dir = if version >= 5 { 47 } else { 41 };
    let mut at = 5;
    for dir in dirs {
        let block = fields.get(at..at + per_dir).unwrap_or_default();
        direction(d, &job, dir, block, version, no);
        at += per_dir;
    }
    let pct = || parse_unit("%");
    let count = || Some(count_unit(""));
    let mut tail: Vec<(String, Option<Unit>)> = vec![
        ("cpu usr".into(), pct()),
        ("cpu sys".into(), pct()),
        ("cpu ctx".into(), count()),
        ("cpu majf".into(), count()),
        ("cpu minf".into(), count()),
    ];
    for depth in ["1", "2", "4", "8", "16", "32", ">=64"] {
        tail.push((format!("IO depth {depth}"), pct()));
    }
    for us in [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ] {
        tail.push((format!("IO latency <={us}us"), pct()));
    }
    for ms in [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ] {
        tail.push((format!("IO latency <={ms}ms"), pct()));
    }
    for (k, (name, unit)) in tail.into_iter().enumerate() {
        if let Some(v) = fields.get(at + k).and_then(|f| number(f)) {
            push(d, &job, name, v, unit, no);
        }
    }
    at += 34;
    // Disk stats: name, then read/write I/Os, merges, ticks, time in
    // queue and utilisation, as many disks as there are.
    const DISK: [&str; 8] = [
        "ios read",
        "ios write",
        "merge read",
        "merge write",
        "ticks read",
        "ticks write",
        "in_queue",
        "util",
    ];
    while let Some(disk) = fields
        .get(at)
        .filter(|f| !f.is_empty() && number(f).is_none())
    {
        for (k, name) in DISK.iter().enumerate() {
            let unit = if *name == "util" { pct() } else { count() };
            if let Some(v) = fields.get(at + 1 + k).and_then(|f| number(f)) {
                push(d, &job, format!("disk {disk} {name}"), v, unit, no);
            }
        }
        at += 9;
    }
}

/// One direction's block of fields.
fn direction(d: &mut Draft, job: &str, dir: &str, block: &[&str], version: u32, no: usize) {
    let io = block.first().and_then(|f| number(f)).unwrap_or(0.0);
    if io == 0.0 {
        return;
    }
    let mut names: Vec<Field> = vec![
        Field::Value("io".into(), unit("KiB")),
        Field::Value("bw".into(), unit("KiB/s")),
        Field::Value("iops".into(), unit("IOPS")),
        Field::Skip,
    ];
    for lat in ["slat", "clat"] {
        for stat in ["min", "max", "mean", "dev"] {
            names.push(Field::Value(format!("{lat} {stat}"), unit("usec")));
        }
    }
    names.extend((0..20).map(|_| Field::Percentile("clat")));
    for stat in ["min", "max", "mean", "dev"] {
        names.push(Field::Value(format!("lat {stat}"), unit("usec")));
    }
    let bw = names.len();
    for (stat, u) in [
        ("bw min", "KiB/s"),
        ("bw max", "KiB/s"),
        ("bw agg", "%"),
        ("bw mean", "KiB/s"),
        ("bw dev", "KiB/s"),
    ] {
        names.push(Field::Value(stat.into(), unit(u)));
    }
    if version >= 5 {
        names.push(Field::Skip);
        for stat in ["iops min", "iops max", "iops mean", "iops dev"] {
            names.push(Field::Value(stat.into(), unit("IOPS")));
        }
        names.push(Field::Skip);
    }
    // Bandwidth statistics without samples are all zero.
    let bw_empty = block
        .get(bw..bw + 5)
        .is_some_and(|f| f.iter().all(|f| number(f) == Some(0.0)));
    for (k, (field, raw)) in names.iter().zip(block).enumerate() {
        match field {
            Field::Skip => {}
            Field::Value(_, _) if bw_empty && (bw..bw + 5).contains(&k) => {}
            Field::Value(name, u) => {
                if let Some(v) = number(raw) {
                    push(d, job, format!("{dir} {name}"), v, Some(u.clone()), no);
                }
            }
            Field::Percentile(lat) => {
                let Some((rank, v)) = raw.split_once("%=") else {
                    continue;
                };
                let (Some(rank), Some(v)) = (number(rank), number(v)) else {
                    continue;
                };
                if rank > 0.0 {
                    let name = format!("{dir} {lat} p{rank}");
                    push(d, job, name, v, Some(unit("usec")), no);
                }
            }
        }
    }
}

fn unit(u: &str) -> Unit {
    parse_unit(u).unwrap_or_else(|| count_unit(u))
}

/// A field's number: `159.304360`, `65.710471%`.
fn number(f: &str) -> Option<f64> {
    f.trim().trim_end_matches('%').parse().ok()
}

fn push(d: &mut Draft, job: &str, metric: String, v: f64, unit: Option<Unit>, no: usize) {
    d.rows
        .push(Row::number(vec![job.to_string(), metric], v, unit, no));
}
