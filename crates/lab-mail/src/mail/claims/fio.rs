//! fio's text output pasted into a mail: the `read: IOPS=…, BW=…` line,
//! `slat`/`clat`/`lat (usec): min=…, max=…, avg=…, stdev=…`, the
//! `clat percentiles` block, `bw`, `iops` and `cpu` lines. Rows are keyed
//! by job, direction and metric (`randread`, `read`, `clat p99.00`).

use super::Draft;
use super::lines::Line;
use super::numbers::{Cell, count_unit, parse_cell, parse_unit};
use crate::mail::model::{ClaimKind, Row, Unit, Value};
use regex::Regex;
use std::sync::LazyLock;

static JOB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(\S+): \(groupid=(\d+), jobs=(\d+)\)").expect("constant regex")
});
static IO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(read|write|trim)\s*: IOPS=([^,\s]+), BW=([^\s(]+)").expect("constant regex")
});
/// fio 2.x's line: `write: io=445360KB, bw=7418.6KB/s, iops=463, runt=
/// 60033msec` (the job header above it is often cut from a mail; a
/// number the author made bold, `*iops=463*`, is still fio's). Older
/// fios set units and commas apart: `bw=618740 B/s, iops=151 , runt=`.
static IO_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(read|write|trim)\s*: io=\s*[^,]+?\s*, bw=\s*([^,]+?)\s*, \*?iops=\s*([^,\s]+)",
    )
    .expect("constant regex")
});
static STAT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(slat|clat|lat|bw|iops)\s*(?:\(\s*([^)]*?)\s*\))?\s*:\s*(min=.*)$")
        .expect("constant regex")
});
static PCT_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(clat|lat|slat) percentiles \((\w+)\):").expect("constant regex")
});
static PCT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([\d.]+)th=\[\s*(\d+)\]").expect("constant regex"));
static PAIR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\w+)=\s*([^,\s]+)").expect("constant regex"));
/// `nullb0: ios=27074/64000, merge=0/0, ticks=42/177, in_queue=219,
/// util=91.51%`: the disk's counts, read/write where a pair.
static DISK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(\S+): (ios=.*)$").expect("constant regex"));
static CPU: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*cpu\s*: (usr=.*)$").expect("constant regex"));
/// Lines fio prints that claim nothing here, but belong to its output.
static OTHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:\S+: \(g=\d+\)|fio-\d|Starting \d+ (?:process|thread)|Jobs: \d|lat \(\w+\)\s*: \d|\|\s+\d|IO depths|submit\s*:|complete\s*:|issued rwts|latency\s*:|Run status group|(?:READ|WRITE|TRIM): bw=|\(\d[^)]*\), io=|Disk stats|\S+: ios=)",
    )
    .expect("constant regex")
});

/// Whether a line is fio output, claim or not.
fn is_fio(text: &str) -> bool {
    JOB.is_match(text)
        || IO.is_match(text)
        || IO_OLD.is_match(text)
        || STAT.is_match(text)
        || PCT_HEAD.is_match(text)
        || CPU.is_match(text)
        || OTHER.is_match(text)
}

pub fn at(lines: &[Line], i: usize) -> Option<Draft> {
    let t = &lines[i].text;
    // Every line that starts fio's output has one of these.
    if !(t.contains("(g") || t.contains("IOPS=") || t.contains("iops=")) {
        return None;
    }
    if !(JOB.is_match(t)
        || IO.is_match(t)
        || IO_OLD.is_match(t)
        || OTHER.is_match(t) && t.contains("(g="))
    {
        return None;
    }
    let mut d = Draft::one_value(ClaimKind::Fio, &["job", "direction", "metric"], i);
    let mut job = String::new();
    let mut dir = String::new();
    let mut pct: Option<(String, Option<Unit>)> = None;
    let mut j = i;
    let mut end = i;
    while j < lines.len() {
        let line = &lines[j];
        if line.is_blank() {
            j += 1;
            continue;
        }
        let text = line.text;
        if !is_fio(text) {
            // A mailer's wrap: the tail of the line above, at the left
            // margin. A tail of words (`resets`) or of percentiles
            // (`20.00th=[916],`) is read on; any other ends fio's output
            // here, and the general reader takes the lines after it.
            let words = !text.bytes().any(|b| b.is_ascii_digit());
            let pcts = pct.is_some() && PCT.is_match(text);
            if !(wrapped_tail(text, lines[j - 1].text) && (words || pcts)) {
                break;
            }
            percentiles(&mut d, &job, &dir, pct.as_ref(), text, line.no);
            j += 1;
            end = j;
            continue;
        }
        let read_from = d.rows.len();
        if let Some(c) = JOB.captures(text) {
            job = c[1].to_string();
            d.conditions.insert(format!("{job} jobs"), c[3].to_string());
        } else if let Some(c) = IO.captures(text) {
            dir = c[1].to_string();
            pct = None;
            add(
                &mut d,
                k3(&job, &dir, "IOPS"),
                &c[2],
                parse_unit("IOPS"),
                line.no,
            );
            add(&mut d, k3(&job, &dir, "BW"), &c[3], None, line.no);
        } else if let Some(c) = IO_OLD.captures(text) {
            dir = c[1].to_string();
            pct = None;
            let iops = c[3].trim_matches('*');
            add(
                &mut d,
                k3(&job, &dir, "IOPS"),
                iops,
                parse_unit("IOPS"),
                line.no,
            );
            add(&mut d, k3(&job, &dir, "BW"), &c[2], None, line.no);
        } else if let Some(c) = STAT.captures(text) {
            let name = c[1].to_string();
            let unit = c.get(2).and_then(|u| parse_unit(u.as_str()));
            let unit = unit.or_else(|| (name == "iops").then(|| parse_unit("IOPS")).flatten());
            for p in PAIR.captures_iter(&c[3]) {
                if matches!(&p[1], "min" | "max" | "avg" | "stdev") {
                    let k = k3(&job, &dir, &format!("{name} {}", &p[1]));
                    add(&mut d, k, &p[2], unit.clone(), line.no);
                }
            }
        } else if let Some(c) = PCT_HEAD.captures(text) {
            pct = Some((c[1].to_string(), parse_unit(&c[2])));
        } else if let Some(c) = DISK.captures(text) {
            disk(&mut d, &job, &c[1], &c[2], line.no);
        } else if let Some(c) = CPU.captures(text) {
            for p in PAIR.captures_iter(&c[1]) {
                let unit = match &p[1] {
                    "usr" | "sys" => None,
                    "ctx" => Some(count_unit("")),
                    _ => continue,
                };
                let k = vec![job.clone(), "cpu".into(), p[1].to_string()];
                add(&mut d, k, &p[2], unit, line.no);
            }
        }
        if !DISK.is_match(text) {
            rest_of_line(&mut d, read_from, &job, &dir, text, line.no);
        }
        if text.trim_start().starts_with('|') {
            percentiles(&mut d, &job, &dir, pct.as_ref(), text, line.no);
        }
        j += 1;
        end = j;
    }
    d.end = end;
    Some(d)
}

/// The `1.00th=[  884]` entries of a line, under the percentiles'
/// heading `pct` (`clat`, its unit) when there is one.
fn percentiles(
    d: &mut Draft,
    job: &str,
    dir: &str,
    pct: Option<&(String, Option<Unit>)>,
    text: &str,
    no: usize,
) {
    let Some((name, unit)) = pct else { return };
    for p in PCT.captures_iter(text) {
        let k = k3(job, dir, &format!("{name} p{}", &p[1]));
        add(d, k, &p[2], unit.clone(), no);
    }
}

/// Whether `text` is the tail of `above`, cut by a mail client: at the
/// left margin, short, under a long indented line.
fn wrapped_tail(text: &str, above: &str) -> bool {
    !text.starts_with(char::is_whitespace)
        && text.len() <= 40
        && above.len() >= 60
        && above.starts_with(char::is_whitespace)
}

/// The numbers of a fio line that the rows above did not read, each a
/// row of its own: `(423MB/s)`, `per=99.71%`, latency buckets
/// (`lat (msec) : 4=0.01%`), `majf=0`, `total=0,24138,0,0` and the group
/// summary (`WRITE: bw=...`). fio's bookkeeping is not a result: the job
/// header, progress, `short=`/`dropped=`, the latency target, I/O depth
/// shares.
fn rest_of_line(d: &mut Draft, read_from: usize, job: &str, dir: &str, text: &str, no: usize) {
    use super::tokens::{Convention, Tok, scan};
    static SKIP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\S+: \(g(?:roupid)?=|Jobs: \d|latency\s*:|IO depths|submit\s*:|complete\s*:|Starting|fio-\d|Run status|Disk stats|clat percentiles|lat percentiles|slat percentiles|\|)")
            .expect("constant regex")
    });
    // `runt=` is fio 2.x's runtime, which the job set.
    const BOOKKEEPING: [&str; 5] = ["short", "dropped", "err", "pid", "runt"];
    if SKIP.is_match(text) {
        return;
    }
    let mut read: Vec<f64> = d.rows[read_from..]
        .iter()
        .flat_map(|r| &r.values)
        .filter_map(|v| match v {
            Value::Number { value, .. } => Some(*value),
            _ => None,
        })
        .collect();
    let label = text.split(':').next().unwrap_or("").trim().to_string();
    for t in scan(text, Convention::Us) {
        let Tok::Num(n) = t else { continue };
        // fio 2.x pads it: `runt= 60033msec`.
        let runt = text
            .get(..n.at)
            .is_some_and(|b| b.trim_end().ends_with("runt="));
        if n.parameter || runt || n.name.as_deref().is_some_and(|m| BOOKKEEPING.contains(&m)) {
            continue;
        }
        if let Some(k) = read
            .iter()
            .position(|v| (v - n.value).abs() <= 1e-9 * v.abs().max(1.0))
        {
            read.swap_remove(k);
            continue;
        }
        // An unnamed number is named by what its unit measures, so the
        // rows of one line stay apart: `(361MB/s)` is `read bw`, the
        // `(10.1GiB/30001msec)` amount is `read io`.
        let metric = match (&n.name, n.unit.as_ref().map(|u| u.kind)) {
            (Some(name), _) => format!("{label} {name}"),
            (None, Some(crate::mail::UnitKind::Throughput)) => format!("{label} bw"),
            (None, Some(crate::mail::UnitKind::Size)) => format!("{label} io"),
            (None, Some(crate::mail::UnitKind::Time)) => format!("{label} runtime"),
            (None, _) => label.clone(),
        };
        d.rows
            .push(Row::number(k3(job, dir, &metric), n.value, n.unit, no));
    }
}

fn disk(d: &mut Draft, job: &str, name: &str, stats: &str, no: usize) {
    for p in PAIR.captures_iter(stats) {
        let (key, raw) = (&p[1], p[2].trim_end_matches(','));
        let unit = if raw.ends_with('%') {
            parse_unit("%")
        } else {
            Some(count_unit(""))
        };
        let parts: Vec<&str> = raw.split('/').collect();
        let dirs: &[&str] = if parts.len() == 2 {
            &["read", "write"]
        } else {
            &[""]
        };
        for (part, dir) in parts.iter().zip(dirs) {
            let metric = format!("disk {name} {key} {dir}").trim_end().to_string();
            add(
                d,
                vec![job.to_string(), "disk".into(), metric],
                part,
                unit.clone(),
                no,
            );
        }
    }
}

/// A row of one value, with its unit in the cell (`1000KiB/s`) or the
/// row's (`clat (usec)`).
fn add(d: &mut Draft, keys: Vec<String>, raw: &str, unit: Option<Unit>, no: usize) {
    let value = match parse_cell(raw) {
        c @ Cell::Number { .. } => c.value(),
        _ => Value::Missing,
    };
    d.rows.push(Row {
        keys,
        unit,
        values: vec![value],
        line: no,
    });
}

fn k3(job: &str, dir: &str, metric: &str) -> Vec<String> {
    vec![job.to_string(), dir.to_string(), metric.to_string()]
}
