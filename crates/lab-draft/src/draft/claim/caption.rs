//! What a table's caption says: the axis values it names, the command
//! that measured it, its unit and its program.

use super::*;

/// The values of the matrix's axes a caption names, one per axis that
/// it names exactly one value of: `1ms` or `1 ms` for delay, `QD32` or
/// `iodepth=32` for iodepth, `8 jobs` for numjobs, a word for a word
/// value (`nvme0n1`, `randread`).
pub(super) fn caption_values(caption: &str, ctx: &Ctx) -> Vec<(String, String)> {
    let toks: Vec<String> = caption
        .to_ascii_lowercase()
        .split(|c: char| c.is_whitespace() || ",;:()[]".contains(c))
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end_matches('.').to_string())
        .collect();
    let has = |t: &str| toks.iter().any(|x| x == t);
    let pair = |a: &str, b: &[&str]| {
        toks.windows(2)
            .any(|w| w[0] == a && b.contains(&w[1].as_str()))
    };
    let mut out = Vec::new();
    for (axis, values) in ctx.axes {
        if values.len() < 2 || axis == "arch" || axis == "hz" {
            continue;
        }
        let named: Vec<&String> = values
            .iter()
            .filter(|v| {
                let v = v.to_ascii_lowercase();
                let numeric = v.parse::<f64>().is_ok();
                match axis.as_str() {
                    "delay" => has(&format!("{v}ms")) || pair(&v, &["ms", "msec"]),
                    "iodepth" => {
                        has(&format!("qd{v}"))
                            || has(&format!("qd={v}"))
                            || has(&format!("iodepth={v}"))
                    }
                    "numjobs" => {
                        pair(&v, &["jobs", "job", "threads", "thread"])
                            || has(&format!("numjobs={v}"))
                    }
                    "bs" => has(&v) || has(&format!("bs={v}")),
                    _ if numeric => has(&format!("{axis}={v}")),
                    _ => has(&v),
                }
            })
            .collect();
        if let [one] = named[..] {
            out.push((axis.clone(), one.clone()));
        }
    }
    out
}

/// The axis values of the cells a caption's command measured: the
/// numbers under `$ fio ...` are that job's (its workload, and the
/// device it opened). The first command the caption quotes decides.
pub(super) fn measured_by(caption: &str, ctx: &Ctx) -> Vec<(String, String)> {
    let Some(quote) = command_in(caption, ctx.measured_by) else {
        return Vec::new();
    };
    ctx.measured_by
        .iter()
        .filter(|(q, ..)| q == quote)
        .map(|(_, a, v)| (a.clone(), v.clone()))
        .collect()
}

/// The command of `measured` that `caption` quotes, if any.
fn command_in<'a>(caption: &str, measured: &'a [(String, String, String)]) -> Option<&'a String> {
    let norm = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let cap = norm(caption);
    measured.iter().map(|(q, ..)| q).find(|q| {
        let q = norm(q);
        !q.is_empty() && cap.contains(&q)
    })
}

/// A sentence's caption cut before the command it goes on to quote,
/// when numbers come first (`... from 2.62M to 3.17M in my setup
/// Without fixedbufs # t/io_uring ...`); whole otherwise.
pub(super) fn before_command_below(caption: &str, ctx: &Ctx) -> String {
    let norm = caption.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(q) = command_in(&norm, ctx.measured_by) else {
        return norm;
    };
    let q = q.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(at) = norm.find(&q) else {
        return norm;
    };
    let numbers_first = norm[..at].split_whitespace().any(|w| {
        w.trim_start_matches(['~', '('])
            .starts_with(|c: char| c.is_ascii_digit())
    });
    if numbers_first {
        norm[..at].to_string()
    } else {
        norm
    }
}

/// How far below a command's first table its output may go on (in
/// lines of the message) and still be that command's.
const OUTPUT_LINES: usize = 16;

/// For each table whose own caption quotes none of the commands
/// `measured`: the caption of the nearest table above it in the same
/// message (within [`OUTPUT_LINES`]) that quotes one, else the nearest
/// command line above it in its message (`lines`, per message from 1:
/// line number and text), within as many lines. fio's output is read
/// from `Run status group 0 (all jobs):` down, a blank line below the
/// command.
pub fn commands_above(
    tables: &[ClaimTable],
    measured: &[(String, String, String)],
    lines: &[Vec<(usize, String)>],
) -> Vec<Option<String>> {
    let mut out = vec![None; tables.len()];
    if measured.is_empty() {
        return out;
    }
    let mut last: Option<(usize, usize, &str)> = None; // message, line, caption
    for (i, t) in tables.iter().enumerate() {
        let cap = t.caption.as_deref().unwrap_or("");
        if command_in(cap, measured).is_some() {
            last = Some((t.origin.message, t.line, cap));
            continue;
        }
        if let Some((m, line, cap)) = last
            && m == t.origin.message
            && t.line >= line
            && t.line - line <= OUTPUT_LINES
        {
            out[i] = Some(cap.to_string());
            continue;
        }
        out[i] = lines
            .get(t.origin.message.wrapping_sub(1))
            .into_iter()
            .flatten()
            .rev()
            .skip_while(|(l, _)| *l >= t.line)
            .take_while(|(l, _)| t.line - l <= OUTPUT_LINES)
            .find(|(_, text)| command_in(text, measured).is_some())
            .map(|(_, text)| text.clone());
    }
    out
}

pub(super) static UNIT_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:\bin |\(|\[)\s*(ms|msec|us|usec|µs|ns|nsec|s|sec|[kmg]i?b/s|iops|k ?iops)\s*[)\],]?")
        .expect("valid regex")
});

/// Unit words that are units wherever they stand in a caption (`ms`
/// or `s` alone may be a delay or a duration).
pub(super) static UNIT_ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[\s(\[,])(k ?iops|iops|[kmg]i?b/s|usecs?|msecs?|nsecs?|µs)(?:$|[\s)\],.;:])",
    )
    .expect("valid regex")
});

/// The unit a caption names: "mean latency in ms", "(usec)", "[MiB/s]",
/// "(4k random read, KIOPS, ...)".
pub fn caption_unit(caption: &str) -> Option<String> {
    UNIT_WORD
        .captures(caption)
        .or_else(|| UNIT_ANYWHERE.captures(caption))
        .map(|c| c[1].to_string())
}

/// Programs whose numbers a mail shows under their command line; lab
/// measures with fio only.
pub(super) const PROGRAMS: [&str; 16] = [
    "fio",
    "dd",
    "mkfs",
    "xfs_io",
    "hdparm",
    "iozone",
    "bonnie++",
    "dbench",
    "pgbench",
    "sysbench",
    "fs_mark",
    "filebench",
    "t/io_uring",
    "io_uring",
    "blktests",
    "stress-ng",
];

/// The program a caption runs, when the caption is a command line
/// (`# dd if=/dev/loop0 ...`, `$ time mkfs.ext4 ...`).
pub fn caption_program(caption: &str) -> Option<String> {
    let first = caption.lines().next()?.trim();
    let (cmd, prompted) = match first
        .strip_prefix("# ")
        .or_else(|| first.strip_prefix("$ "))
    {
        Some(c) => (c, true),
        None => (first, false),
    };
    let mut words = cmd.split_whitespace();
    let mut w = words.next()?;
    // Wrappers, their options and a CPU list (`taskset -c 1,2`).
    let cpus = |w: &str| w.chars().all(|c| c.is_ascii_digit() || ",-".contains(c));
    while ["time", "sudo", "taskset", "perf", "numactl", "stat"].contains(&w)
        || w.starts_with('-')
        || cpus(w)
    {
        w = words.next()?;
    }
    let prog = w.rsplit('/').next().unwrap_or(w);
    let known = PROGRAMS
        .iter()
        .any(|p| prog == *p || prog.starts_with(&format!("{p}.")));
    (known || (prompted && cmd.contains(" -"))).then(|| prog.to_string())
}

/// A lone number in a sentence (`sees 10 ms each time`) names neither a
/// side nor a cell: drafting it, or reading the setup from its sentence,
/// would guess both.
pub fn names_no_cell(t: &ClaimTable) -> bool {
    t.kind == crate::mail::ClaimKind::Prose
        && t.columns.len() == 1
        && side(&t.columns[0].name) == Side::Unknown
}
