//! The mail's commands as matrix parts: device-mapper tables, knob
//! writes, modules, mkfs and mount, fio jobs and perf events.
//!
//! A loop variable becomes an axis named after where it lands: the
//! delay field of a delay table is `delay`, `--iodepth=$qd` is
//! `iodepth`, a knob's value is the knob's name.

use super::shell::{self, Found, Simple};
use crate::matrix::{DmTarget, Scalar};

/// Where a step came from in the mail.
#[derive(Clone, Debug, PartialEq)]
pub struct Src {
    pub line: usize,
    pub quote: String,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Dm {
        name: String,
        target: DmTarget,
    },
    Knob {
        path: String,
        value: String,
    },
    /// `modprobe MOD k=v ...`: null_blk's become boot parameters.
    Module {
        module: String,
        params: Vec<(String, String)>,
    },
    Mkfs {
        fs: String,
        device: String,
        options: String,
    },
    Mount {
        device: String,
        dir: String,
        fs: Option<String>,
        options: String,
    },
    /// A cgroup the workload runs in, with `io.max` limits (key, value).
    Cgroup {
        name: String,
        device: String,
        limits: Vec<(String, String)>,
    },
}

/// One fio job: its options in the order written.
#[derive(Clone, Debug, PartialEq)]
pub struct FioJob {
    pub name: Option<String>,
    pub options: Vec<(String, String)>,
    pub src: Src,
}

impl FioJob {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.as_str())
    }
}

/// Everything the commands of a mail give.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    pub steps: Vec<(Step, Src)>,
    pub fio: Vec<FioJob>,
    pub perf_events: Vec<String>,
    pub perf_system_wide: bool,
    /// Axes from loops: name, values, where.
    pub axes: Vec<(String, Vec<String>, Src)>,
    /// Commands read but not mapped, and why.
    pub unmapped: Vec<(Src, String)>,
}

/// Programs whose lines are commands even without a prompt.
const KNOWN: [&str; 17] = [
    "fio",
    "dmsetup",
    "modprobe",
    "mount",
    "echo",
    "sysctl",
    "perf",
    "dd",
    "nvme",
    "blkdiscard",
    "xfs_io",
    "blockdev",
    "insmod",
    "umount",
    "fstrim",
    "mkfs",
    "mke2fs",
];

/// A stand-in for a loop variable while a command is read.
const MARK: &str = "\u{1}";

pub fn scan(text: &str, into: &mut Scan) {
    for f in shell::commands(text) {
        command(&f, into);
    }
    for job in ini_jobs(text) {
        into.fio.push(job);
    }
    // Without a command or job file, options listed in brackets.
    if into.fio.is_empty() {
        into.fio.extend(super::params::jobs(text));
    }
    into.fio = std::mem::take(&mut into.fio)
        .into_iter()
        .flat_map(super::params::one_per_alternative)
        .collect();
}

fn command(f: &Found, into: &mut Scan) {
    let src = Src {
        line: f.line,
        quote: f.text.clone(),
    };
    let first = f.pipeline[0].words[0].as_str();
    let program = first.rsplit('/').next().unwrap_or(first);
    let known =
        KNOWN.contains(&program) || program.starts_with("mkfs.") || first.ends_with("t/io_uring");
    if !known {
        if f.prompted {
            into.unmapped
                .push((src, format!("lab does not run `{program}`")));
        }
        return;
    }
    // The loop variable, marked, so whatever reads the command finds
    // where it went.
    let marked: Vec<Simple> = match &f.looped {
        Some(l) => f
            .pipeline
            .iter()
            .map(|s| Simple {
                words: s
                    .words
                    .iter()
                    .map(|w| shell::substitute(w, &l.var, MARK))
                    .collect(),
                redirect: s
                    .redirect
                    .as_ref()
                    .map(|r| shell::substitute(r, &l.var, MARK)),
            })
            .collect(),
        None => f.pipeline.clone(),
    };
    let before = (into.steps.len(), into.fio.len());
    let axis = read(&marked, &src, into);
    let Some(l) = &f.looped else { return };
    // A loop is an axis only when it drafted something its variable
    // varies: a command lab left out (a knob path with a placeholder,
    // a program it does not run) gives cells that would all be the same.
    let drafted = into.steps.len() > before.0 || into.fio.len() > before.1;
    if !drafted
        || !marked
            .iter()
            .any(|s| s.words.iter().any(|w| w.contains(MARK)))
    {
        return;
    }
    // One loop, one axis: a command that opens the loop's device
    // (`--filename=/dev/mapper/delay$d`) takes the axis an earlier
    // command of the loop named (`delay`).
    let name = axis
        .filter(|a| a != "filename" && a != "directory")
        .or_else(|| {
            into.axes
                .iter()
                .find(|(_, vs, _)| *vs == l.values)
                .map(|(n, ..)| n.clone())
        })
        .unwrap_or_else(|| l.var.clone());
    let with = format!("{{{{ {name} }}}}");
    for (s, _) in &mut into.steps[before.0..] {
        fill_step(s, &with);
    }
    for j in &mut into.fio[before.1..] {
        for (_, v) in &mut j.options {
            *v = v.replace(MARK, &with);
        }
    }
    if !into.axes.iter().any(|(n, ..)| *n == name) {
        into.axes.push((name, l.values.clone(), src));
    }
}

fn fill_step(s: &mut Step, with: &str) {
    // A loop variable in a dm name becomes the same template as in the
    // table, so each cell's device is named as the mail's commands name
    // it (`dm-delay-{{ delay }}ms`), and fio lines outside the loop that
    // open one of them (`/dev/mapper/dm-delay-10ms`) say which value
    // they measured.
    let name = |n: &mut String| *n = n.replace(MARK, with);
    let f = |v: &mut String| {
        *v = v
            .replace(&format!("/dev/mapper/{MARK}"), "")
            .replace(MARK, with)
    };
    match s {
        Step::Dm { name: n, target } => {
            name(n);
            target.for_each_text(f)
        }
        Step::Knob { path, value } => {
            f(path);
            f(value)
        }
        Step::Module { params, .. } => params.iter_mut().for_each(|(_, v)| f(v)),
        Step::Mkfs {
            device, options, ..
        } => {
            f(device);
            f(options)
        }
        Step::Mount {
            device,
            dir,
            options,
            ..
        } => {
            f(device);
            f(dir);
            f(options)
        }
        Step::Cgroup { device, limits, .. } => {
            f(device);
            limits.iter_mut().for_each(|(_, v)| f(v))
        }
    }
}

/// Read one pipeline; the axis name a marked word lands in, if any.
/// Each program lab can run has its own reader below.
fn read(p: &[Simple], src: &Src, into: &mut Scan) -> Option<String> {
    // `fio ... | grep READ`: what ran is before the filters of its output.
    const FILTERS: [&str; 12] = [
        "grep", "egrep", "awk", "sed", "head", "tail", "cut", "sort", "uniq", "tr", "wc", "less",
    ];
    let filter = |s: &Simple| {
        s.words
            .first()
            .is_some_and(|w| FILTERS.contains(&w.rsplit('/').next().unwrap_or(w)))
    };
    let ran = p.len() - p.iter().rev().take_while(|s| filter(s)).count();
    let p = &p[..ran.max(1)];
    let last = p.last()?;
    let w: Vec<&str> = last.words.iter().map(String::as_str).collect();
    let prog = w[0].rsplit('/').next().unwrap_or(w[0]);
    match prog {
        "dmsetup" if w.get(1) == Some(&"create") => read_dmsetup(p, &w, src, into),
        "dmsetup" => None,
        "echo" | "printf" => read_echo(p, &w, src, into),
        "tee" if p.len() == 2 => {
            let value = p[0].words[1..].join(" ");
            let path = w.last()?.to_string();
            knob(path, value, src, into)
        }
        "sysctl" => read_sysctl(&w, src, into),
        "modprobe" | "insmod" => read_modprobe(&w, src, into),
        "mkfs" | "mke2fs" => {
            let i = w.iter().position(|x| *x == "-t")?;
            let fs = w.get(i + 1)?.to_string();
            let rest: Vec<&str> = w[1..]
                .iter()
                .enumerate()
                .filter(|(k, _)| *k + 1 != i && *k != i)
                .map(|(_, x)| *x)
                .collect();
            mkfs(fs, &rest, src, into)
        }
        p if p.starts_with("mkfs.") => {
            let fs = p.trim_start_matches("mkfs.").to_string();
            mkfs(fs, &w[1..], src, into)
        }
        "mount" => read_mount(&w, src, into),
        // fio's own peak-IOPS tool: the same I/O as one fio job.
        "io_uring" if w[0].ends_with("t/io_uring") => {
            into.fio.push(super::tools::t_io_uring(&w[1..], src));
            None
        }
        "fio" => {
            let (job, axis) = fio_args(&w[1..], src);
            match job {
                Some(j) => into.fio.push(j),
                None => into
                    .unmapped
                    .push((src.clone(), "a fio job file lab cannot see".into())),
            }
            axis
        }
        "perf" if w.get(1) == Some(&"stat") => read_perf_stat(last, &w, src, into),
        "dd" => {
            match super::tools::dd(&w[1..], src) {
                Ok(j) => into.fio.push(j),
                Err(why) => into.unmapped.push((src.clone(), why)),
            }
            None
        }
        _ => {
            into.unmapped
                .push((src.clone(), format!("lab does not run `{prog}`")));
            None
        }
    }
}

fn marked(s: &str) -> bool {
    s.contains(MARK)
}

/// `dmsetup create NAME --table T`, or the table echoed into it.
fn read_dmsetup(p: &[Simple], w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let name = w.get(2).map(|n| n.to_string()).unwrap_or_default();
    let table = match w.iter().position(|x| *x == "--table") {
        Some(i) => w.get(i + 1).map(|t| t.to_string()),
        None if p.len() > 1 && p[0].words[0] == "echo" => Some(p[0].words[1..].join(" ")),
        None => None,
    };
    let Some(table) = table else {
        into.unmapped.push((
            src.clone(),
            "a dm table lab cannot see (heredoc or file)".into(),
        ));
        return None;
    };
    let (t, axis) = dm_table(&table);
    let step = Step::Dm {
        name: name.trim_start_matches("/dev/mapper/").into(),
        target: t,
    };
    into.steps.push((step, src.clone()));
    axis
}

/// `echo V > /sys/...` or `echo V | tee /sys/...`: a knob.
fn read_echo(p: &[Simple], w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let value = w[1..].join(" ");
    let path = p.last()?.redirect.clone().or_else(|| {
        (p.len() == 2 && p[1].words.first().map(String::as_str) == Some("tee"))
            .then(|| p[1].words.last().cloned())
            .flatten()
    })?;
    (path.starts_with("/sys/") || path.starts_with("/proc/"))
        .then(|| knob(path, value, src, into))
        .flatten()
}

/// A knob step; its file's name is the axis when the value is marked.
fn knob(path: String, value: String, src: &Src, into: &mut Scan) -> Option<String> {
    let axis = marked(&value).then(|| path.rsplit('/').next().unwrap_or("knob").to_string());
    push_knob(path, value, src, into);
    axis
}

/// A knob step, unless its path is one lab cannot write as given: a
/// placeholder the mail leaves to the reader (`/sys/fs/btrfs/<uuid>/`)
/// or characters no sysfs path has. That one is named, not drafted.
fn push_knob(path: String, value: String, src: &Src, into: &mut Scan) {
    if crate::matrix::is_path(&path) {
        into.steps.push((Step::Knob { path, value }, src.clone()));
    } else {
        into.unmapped.push((
            src.clone(),
            format!("the knob path '{path}' is not one lab can write (a placeholder?)"),
        ));
    }
}

/// `sysctl a.b.c=v`: the knob under /proc/sys.
fn read_sysctl(w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let kv = w.iter().skip(1).find(|x| x.contains('='))?;
    let (k, v) = kv.split_once('=')?;
    let path = format!("/proc/sys/{}", k.trim().replace('.', "/"));
    let axis = marked(v).then(|| k.rsplit('.').next().unwrap_or(k).to_string());
    push_knob(path, v.trim().into(), src, into);
    axis
}

/// `modprobe MODULE k=v ...`: the parameter whose value is marked is
/// the axis.
fn read_modprobe(w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let args: Vec<&str> = w[1..]
        .iter()
        .copied()
        .filter(|x| !x.starts_with('-'))
        .collect();
    let module = args.first()?.trim_end_matches(".ko").replace('-', "_");
    let params: Vec<(String, String)> = args[1..]
        .iter()
        .filter_map(|a| a.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let axis = params
        .iter()
        .find(|(_, v)| marked(v))
        .map(|(k, _)| k.clone());
    into.steps
        .push((Step::Module { module, params }, src.clone()));
    axis
}

/// Where the mail's commands ran: a relative path in them (`mount
/// /dev/ram0 testdir`, `fio --filename=testdir/1`) is taken from here.
pub(super) const WORKDIR: &str = "/mnt/fio";

/// `mount [-t FS] [-o OPTS] DEVICE DIR`; a relative DIR is under [`WORKDIR`].
fn read_mount(w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let (mut fs, mut options, mut pos) = (None, String::new(), vec![]);
    let mut it = w[1..].iter();
    while let Some(a) = it.next() {
        match *a {
            "-t" => fs = it.next().map(|x| x.to_string()),
            "-o" => options = it.next().map(|x| x.to_string()).unwrap_or_default(),
            x if x.starts_with('-') => {}
            x => pos.push(x.to_string()),
        }
    }
    let [device, dir] = <[String; 2]>::try_from(pos).ok()?;
    let dir = if dir.starts_with('/') {
        dir
    } else {
        let rel = dir.trim_start_matches("./").trim_end_matches('/');
        if rel.is_empty() || rel == "." {
            WORKDIR.to_string()
        } else {
            format!("{WORKDIR}/{rel}")
        }
    };
    // `mount $DEV /mnt`, `mount UUID=... /mnt`: a device the mail leaves
    // to its shell; named, not drafted (the workload's file still gets a
    // file system of lab's).
    if !crate::matrix::is_path(&device) || !crate::matrix::is_path(&dir) {
        into.unmapped.push((
            src.clone(),
            format!(
                "mount {device} {dir}: not a device and folder lab can name (a shell variable?)"
            ),
        ));
        return None;
    }
    let step = Step::Mount {
        device,
        dir,
        fs,
        options,
    };
    into.steps.push((step, src.clone()));
    None
}

/// `perf stat [-e EVENTS] [-a] -- COMMAND`: the events are counted, and
/// the command is read as if it stood alone.
fn read_perf_stat(last: &Simple, w: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let mut i = 2;
    while i < w.len() {
        match w[i] {
            "-e" | "--event" => {
                for ev in w.get(i + 1).iter().flat_map(|e| e.split(',')) {
                    if !into.perf_events.iter().any(|x| x == ev) {
                        into.perf_events.push(ev.to_string());
                    }
                }
                i += 2;
            }
            "-a" | "--all-cpus" => {
                into.perf_system_wide = true;
                i += 1;
            }
            "--" => {
                i += 1;
                break;
            }
            x if x.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let inner = Simple {
        words: last.words.get(i..).unwrap_or_default().to_vec(),
        redirect: None,
    };
    if inner.words.is_empty() {
        return None;
    }
    read(&[inner], src, into)
}

fn mkfs(fs: String, args: &[&str], src: &Src, into: &mut Scan) -> Option<String> {
    let device = args
        .iter()
        .rev()
        .find(|a| a.starts_with("/dev/"))?
        .to_string();
    let options: Vec<&str> = args.iter().copied().filter(|a| *a != device).collect();
    into.steps.push((
        Step::Mkfs {
            fs,
            device,
            options: options.join(" "),
        },
        src.clone(),
    ));
    None
}

/// `0 $(blockdev --getsz DEV) delay DEV 0 5`: the structured targets lab
/// knows, else the raw table; and the axis a marked delay stands for.
fn dm_table(t: &str) -> (DmTarget, Option<String>) {
    let w = shell::words(t);
    let args: Vec<&str> = w.iter().skip(3).map(String::as_str).collect();
    let target = w.get(2).map(String::as_str).unwrap_or("");
    let dev = |i: usize| args.get(i).map(|s| s.to_string()).unwrap_or_default();
    match (target, args.len()) {
        ("delay", 3 | 6) => {
            let ms = dev(2);
            let axis = ms.contains(MARK).then(|| "delay".to_string());
            (DmTarget::delay(dev(0), Scalar::Str(ms)), axis)
        }
        ("linear", 2) => (DmTarget::Linear { device: dev(0) }, None),
        ("flakey", 4) => {
            let axis = dev(2).contains(MARK).then(|| "up_s".to_string());
            (
                DmTarget::Flakey {
                    device: dev(0),
                    up_s: Scalar::Str(dev(2)),
                    down_s: Scalar::Str(dev(3)),
                },
                axis,
            )
        }
        ("zero", _) => (DmTarget::Zero, None),
        ("error", _) => (DmTarget::Error, None),
        _ => (DmTarget::Table(t.trim().to_string()), None),
    }
}

/// A fio command line's options; None for a job file argument.
fn fio_args(w: &[&str], src: &Src) -> (Option<FioJob>, Option<String>) {
    let mut opts: Vec<(String, String)> = Vec::new();
    let mut name = None;
    let mut file = false;
    let mut i = 0;
    while i < w.len() {
        let a = w[i];
        i += 1;
        // fio takes its long options after one dash too: `-name=x`.
        let Some(o) = a
            .strip_prefix("--")
            .or_else(|| a.strip_prefix('-').filter(|o| o.len() > 1))
        else {
            file |= !a.starts_with('-');
            continue;
        };
        let (k, v) = match o.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            // `--rw randread`: fio reads the next word as the value.
            None if w.get(i).is_some_and(|n| !n.starts_with('-')) && !FLAGS.contains(&o) => {
                i += 1;
                (o.to_string(), w[i - 1].to_string())
            }
            None => (o.to_string(), String::new()),
        };
        // `--` alone, `--=x`: not an option.
        if k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
        {
            continue;
        }
        if k == "name" {
            name = Some(v.clone());
        }
        opts.push((k, v));
    }
    if opts.is_empty() && file {
        return (None, None);
    }
    // The loop's variable may also label the job (`--name=rr-$depth`)
    // or its output: the option it changes names the axis.
    let marked = |labels: bool| {
        opts.iter()
            .find(|(k, v)| {
                v.contains(MARK) && labels == super::workload::DROPPED.contains(&k.as_str())
            })
            .map(|(k, _)| k.clone())
    };
    let axis = marked(false).or_else(|| marked(true));
    let job = FioJob {
        name,
        options: opts,
        src: src.clone(),
    };
    (Some(job), axis)
}

/// fio options that take no value.
const FLAGS: [&str; 8] = [
    "time_based",
    "group_reporting",
    "direct",
    "randrepeat",
    "norandommap",
    "thread",
    "minimal",
    "hipri",
];

/// fio job files pasted in the text: `[global]` and `[job]` sections of
/// `key=value` lines. Each job section is one job, with the globals.
pub fn ini_jobs(text: &str) -> Vec<FioJob> {
    let mut out = Vec::new();
    let mut global: Vec<(String, String)> = Vec::new();
    let mut cur: Option<FioJob> = None;
    let mut in_file = false;
    // Where the `[global]` section began, and whether a job followed it.
    let mut global_at: Option<Src> = None;
    let mut had_job = false;
    // A job file of only `[global]` (its job named on the command line,
    // or cut from the mail) is one job of those options.
    let lone_global = |global: &[(String, String)], at: &Option<Src>, had_job: bool| {
        let io = global
            .iter()
            .any(|(k, _)| ["rw", "readwrite", "bs"].contains(&k.as_str()));
        (!had_job && io && global.len() >= 2)
            .then(|| at.clone())
            .flatten()
            .map(|src| FioJob {
                name: None,
                options: global.to_vec(),
                src,
            })
    };
    let all: Vec<&str> = text.lines().collect();
    for (i, raw) in all.iter().enumerate() {
        let t = raw.trim();
        // "with below fio parameters:" and the options, one per line, no
        // section: a job file of only `[global]`.
        if !in_file && bare_options_at(&all, i) {
            in_file = true;
            global.clear();
            had_job = false;
            global_at = Some(Src {
                line: i + 1,
                quote: t.to_string(),
            });
        }
        if let Some(s) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            // `[...]` marks a cut in a quote, not a job.
            let plain = s.chars().any(|c| c.is_ascii_alphanumeric())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
            if !plain {
                continue;
            }
            out.extend(cur.take().filter(|j| j.options.len() > global.len()));
            in_file = true;
            if s == "global" {
                out.extend(lone_global(&global, &global_at, had_job));
                global.clear();
                had_job = false;
                global_at = Some(Src {
                    line: i + 1,
                    quote: t.to_string(),
                });
            } else {
                had_job = true;
                cur = Some(FioJob {
                    name: Some(s.to_string()),
                    options: global.clone(),
                    src: Src {
                        line: i + 1,
                        quote: t.to_string(),
                    },
                });
            }
            continue;
        }
        if !in_file {
            continue;
        }
        // `submitter=0, tid=5256, file=...` is a program's output: a job
        // file has one option per line. `bs=4k:` over results is their
        // caption, and ends the job.
        let kv = t
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(_, v)| !v.split(", ").skip(1).any(|w| w.contains('=')) && !v.ends_with(':'));
        let is_key =
            |k: &str| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        match (kv, &mut cur) {
            (Some((k, v)), Some(j)) if is_key(k) => set(&mut j.options, k, v),
            (Some((k, v)), None) if is_key(k) => set(&mut global, k, v),
            (None, Some(j)) if is_key(t) => set(&mut j.options, t, ""),
            (None, None) if is_key(t) => set(&mut global, t, ""),
            _ if t.is_empty() || t.starts_with(';') || t.starts_with('#') => {}
            _ => {
                in_file = false;
                out.extend(cur.take().filter(|j| j.options.len() > global.len()));
                out.extend(lone_global(&global, &global_at, had_job));
                global.clear();
                global_at = None;
            }
        }
    }
    out.extend(cur.filter(|j| !j.options.is_empty()));
    out.extend(lone_global(&global, &global_at, had_job));
    out
}

/// Whether three lines from `i` on are each one fio option as a job file
/// writes it (`ioengine=libaio`), one of them saying what the I/O is.
fn bare_options_at(lines: &[&str], i: usize) -> bool {
    const KEYS: [&str; 16] = [
        "rw",
        "readwrite",
        "bs",
        "blocksize",
        "ioengine",
        "iodepth",
        "numjobs",
        "direct",
        "runtime",
        "size",
        "filename",
        "directory",
        "time_based",
        "ramp_time",
        "buffered",
        "group_reporting",
    ];
    let option = |l: &str| {
        let t = l.trim();
        let key = t.split_once('=').map_or(t, |(k, _)| k).trim();
        // One option a line: `bs=4k  IOPS=11.1k, BW=...` is a result.
        KEYS.contains(&key) && t.matches('=').count() <= 1 && !t.contains(' ')
    };
    let run: Vec<&str> = lines[i..].iter().take(3).copied().collect();
    run.len() == 3
        && run.iter().all(|l| option(l))
        && lines[i..].iter().take_while(|l| option(l)).any(|l| {
            ["rw=", "readwrite=", "ioengine="]
                .iter()
                .any(|p| l.trim().starts_with(p))
        })
}

fn set(opts: &mut Vec<(String, String)>, k: &str, v: &str) {
    match opts.iter_mut().find(|(x, _)| x == k) {
        Some(o) => o.1 = v.to_string(),
        None => opts.push((k.to_string(), v.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(t: &str) -> Scan {
        let mut s = Scan::default();
        scan(t, &mut s);
        s
    }

    #[test]
    fn a_delay_loop_is_an_axis_and_one_dm_step() {
        let s = scanned(
            "for d in 1 5 10; do\n  dmsetup create delay$d --table \"0 $(blockdev --getsz /dev/nullb0) delay /dev/nullb0 0 $d\"\n  fio --name=w --filename=/dev/mapper/delay$d --rw=write --bs=4k\ndone\n",
        );
        assert_eq!(s.axes.len(), 1, "{s:#?}");
        assert_eq!(s.axes[0].0, "delay");
        assert_eq!(s.axes[0].1, vec!["1", "5", "10"]);
        assert_eq!(
            s.steps[0].0,
            Step::Dm {
                name: "delay{{ delay }}".into(),
                target: DmTarget::delay("/dev/nullb0".into(), Scalar::Str("{{ delay }}".into()))
            }
        );
        // The device each cell makes is named as the loop named it.
        assert_eq!(
            s.fio[0].get("filename"),
            Some("/dev/mapper/delay{{ delay }}")
        );
    }

    /// A loop variable that also labels the job names no axis `name`:
    /// the option it changes does, and every use takes the template.
    #[test]
    fn a_loop_labelling_its_jobs_is_the_axis_of_what_it_changes() {
        let s = scanned(
            "for qd in 1 4 16; do\n  fio --name=rr-$qd --rw=randread --iodepth=$qd --filename=/dev/nullb0\ndone\n",
        );
        assert_eq!(s.axes.len(), 1, "{s:#?}");
        assert_eq!(s.axes[0].0, "iodepth");
        assert_eq!(s.fio[0].get("iodepth"), Some("{{ iodepth }}"));
        let j = super::super::workload::clean(&s.fio[0], &|d| d.to_string());
        assert_eq!(j.get("iodepth"), Some("{{ iodepth }}"), "{j:?}");
    }

    #[test]
    fn knobs_modules_mkfs_mount_perf() {
        let s = scanned(
            "# echo 0 > /sys/block/nullb0/queue/nomerges\necho mq-deadline | sudo tee /sys/block/nvme0n1/queue/scheduler\nsysctl -w vm.dirty_ratio=5\nmodprobe null_blk queue_mode=2 irqmode=0 gb=4\nmkfs.xfs -f /dev/nvme0n1\nmkfs -t ext4 -q /dev/nullb0\nmount -o noatime /dev/nvme0n1 /mnt\nperf stat -a -e cycles,context-switches -- fio --name=x --rw=read\n$ git am x.mbox\n",
        );
        let steps: Vec<&Step> = s.steps.iter().map(|(s, _)| s).collect();
        assert_eq!(
            steps[0],
            &Step::Knob {
                path: "/sys/block/nullb0/queue/nomerges".into(),
                value: "0".into()
            }
        );
        assert_eq!(
            steps[1],
            &Step::Knob {
                path: "/sys/block/nvme0n1/queue/scheduler".into(),
                value: "mq-deadline".into()
            }
        );
        assert_eq!(
            steps[2],
            &Step::Knob {
                path: "/proc/sys/vm/dirty_ratio".into(),
                value: "5".into()
            }
        );
        assert!(
            matches!(steps[3], Step::Module { module, params } if module == "null_blk" && params.len() == 3)
        );
        assert_eq!(
            steps[4],
            &Step::Mkfs {
                fs: "xfs".into(),
                device: "/dev/nvme0n1".into(),
                options: "-f".into()
            }
        );
        assert_eq!(
            steps[5],
            &Step::Mkfs {
                fs: "ext4".into(),
                device: "/dev/nullb0".into(),
                options: "-q".into()
            }
        );
        assert_eq!(
            steps[6],
            &Step::Mount {
                device: "/dev/nvme0n1".into(),
                dir: "/mnt".into(),
                fs: None,
                options: "noatime".into()
            }
        );
        assert_eq!(s.perf_events, vec!["cycles", "context-switches"]);
        assert!(s.perf_system_wide);
        assert_eq!(s.fio[0].get("rw"), Some("read"));
        assert_eq!(s.unmapped.len(), 1);
        assert!(s.unmapped[0].1.contains("git"));
    }

    #[test]
    fn fio_job_files_and_space_separated_values() {
        let s = scanned(
            "Job file:\n\n[global]\nioengine=io_uring\ndirect=1\nbs=4k\n\n[randread]\nrw=randread\niodepth=32\n\n[randwrite]\nrw=randwrite\n\nThanks\n\nfio --rw randread --bs 4k --time_based\n",
        );
        assert_eq!(s.fio.len(), 3, "{s:#?}");
        // The command line first, then the job file's two jobs.
        assert_eq!(s.fio[0].get("rw"), Some("randread"));
        assert_eq!(s.fio[0].get("bs"), Some("4k"));
        assert_eq!(s.fio[0].get("time_based"), Some(""));
        assert_eq!(s.fio[1].get("ioengine"), Some("io_uring"));
        assert_eq!(s.fio[1].get("iodepth"), Some("32"));
        assert_eq!(s.fio[2].get("rw"), Some("randwrite"));
        assert_eq!(s.fio[2].get("iodepth"), None);
    }

    /// fio's single-dash long options, and t/io_uring read as the fio
    /// job it stands for (its defaults where the line gives none); a
    /// program's `key=value, key=value` output and a `[...]` cut are no
    /// job file.
    #[test]
    fn single_dash_fio_t_io_uring_and_no_job_file_from_output() {
        let s = scanned(
            "$ fio -name=x -rw=randwrite -bs=8k -filename=/dev/nullb0\n\
             $ sudo taskset -c 1 ./t/io_uring -b512 -d64 -p0 -B0 -u1 -n2 /dev/ng0n1\n\
             [...]\nsubmitter=0, tid=5256, file=/dev/ng0n1, node=-1\n\
             polled=0, fixedbufs=0/0, register_files=1, buffered=1, QD=128\n",
        );
        assert_eq!(s.fio.len(), 2, "{s:#?}");
        assert_eq!(s.fio[0].get("rw"), Some("randwrite"));
        assert_eq!(s.fio[0].get("bs"), Some("8k"));
        assert_eq!(s.fio[0].get("filename"), Some("/dev/nullb0"));
        let u = &s.fio[1];
        for (k, v) in [
            ("rw", "randread"),
            ("bs", "512"),
            ("ioengine", "io_uring_cmd"),
            ("cmd_type", "nvme"),
            ("iodepth", "64"),
            ("iodepth_batch_submit", "32"),
            ("direct", "1"),
            ("registerfiles", "1"),
            ("numjobs", "2"),
            ("runtime", "5"),
            ("filename", "/dev/ng0n1"),
        ] {
            assert_eq!(u.get(k), Some(v), "{k}: {u:?}");
        }
        assert_eq!(u.get("hipri"), None, "-p0: {u:?}");
        assert_eq!(u.get("fixedbufs"), None, "-B0: {u:?}");
    }

    /// A job file of only `[global]` is one job; a `[global]` followed by
    /// jobs is not one more.
    #[test]
    fn options_one_a_line_without_a_section_are_a_job() {
        let s = scanned(
            "with below fio parameters.\n\n direct=1\n ioengine=libaio\n iodepth=10\n rw=randwrite\n\nBefore:\n bs=4k       IOPS=11.1k, BW=43.2MiB/s\n bs=16k      IOPS=11.1k, BW=173MiB/s\n",
        );
        assert_eq!(s.fio.len(), 1, "{:?}", s.fio);
        let o = &s.fio[0].options;
        assert!(o.contains(&("ioengine".into(), "libaio".into())), "{o:?}");
        assert!(
            !o.iter().any(|(k, _)| k == "bs"),
            "results are no options: {o:?}"
        );
    }

    #[test]
    fn a_job_file_of_only_global_options_is_one_job() {
        let s = scanned(
            "fio jobfile:\n[global]\nrw=randrw\nbs=4k\nfilename=f.0:f.1\n\nfrom 3018MB/s to 4059MB/s\n",
        );
        assert_eq!(s.fio.len(), 1, "{s:#?}");
        assert_eq!(s.fio[0].get("rw"), Some("randrw"));
        assert_eq!(s.fio[0].get("filename"), Some("f.0:f.1"));
        let s = scanned("[global]\nrw=read\nbs=4k\n[a]\niodepth=1\n[b]\niodepth=8\n");
        assert_eq!(s.fio.len(), 2, "{s:#?}");
    }
}
