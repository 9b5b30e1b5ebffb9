//! The machine a mail's commands need: its devices mapped onto lab's
//! null_blk and NVMe, the boot parameters, and the setup steps, with
//! the config symbols their targets, file systems and schedulers need.

use super::emit::Proposal;
use super::steps::{Scan, Step};
use super::{facts, shell};
use crate::matrix::{DmTarget, Scalar};

/// The mail's devices and lab's stand-ins for them.
pub(super) struct Devices {
    nullb: u32,
    nvme: u32,
    /// The mail's other disks (`/dev/sdb`), which become NVMe here.
    foreign: Vec<String>,
    /// The mail's RAM disks (`/dev/ram0` of brd, `/dev/pmem0`), which
    /// become memory-backed null_blk devices here, by their index.
    ram: Vec<(String, u32)>,
}

/// Block devices in memory: a RAM disk is a memory-backed null_blk.
const IN_MEMORY: [&str; 2] = ["ram", "pmem"];

impl Devices {
    pub(super) fn new(scan: &Scan, lower: &str) -> Devices {
        let mut names: Vec<String> = Vec::new();
        let mut see = |s: &str| {
            for w in s.split(|c: char| c.is_whitespace() || "\"'=,:()".contains(c)) {
                let d = w.strip_prefix("/dev/").or_else(|| {
                    w.strip_prefix("/sys/block/")
                        .map(|r| r.split('/').next().unwrap_or(""))
                });
                if let Some(d) =
                    d.filter(|d| !d.is_empty() && !d.starts_with("mapper") && !d.starts_with("dm-"))
                {
                    let d = d
                        .trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                        .to_string();
                    if !names.contains(&d) {
                        names.push(d);
                    }
                }
            }
        };
        for (s, _) in &scan.steps {
            see(&format!("{s:?}"));
        }
        for j in &scan.fio {
            j.options.iter().for_each(|(_, v)| see(v));
        }
        let idx = |d: &str, pre: &str| {
            d.strip_prefix(pre)
                .and_then(|r| r.split('n').next())
                .and_then(|n| n.parse::<u32>().ok())
        };
        let mut dv = Devices {
            nullb: 0,
            nvme: 0,
            foreign: vec![],
            ram: vec![],
        };
        for d in &names {
            let ram = IN_MEMORY.iter().find_map(|pre| {
                d.strip_prefix(pre)
                    .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|n| n.parse::<u32>().ok())
            });
            if let Some(i) = ram {
                dv.ram.push((d.clone(), i));
                dv.nullb = dv.nullb.max(i + 1);
            } else if let Some(i) = idx(d, "nullb") {
                dv.nullb = dv.nullb.max(i + 1);
            } else if let Some(i) = idx(d, "nvme").or_else(|| idx(d, "ng")) {
                // ngXnY: NVMe X's generic character device (passthrough).
                dv.nvme = dv.nvme.max(i + 1);
            } else if !d.starts_with("mapper") {
                dv.foreign.push(d.clone());
            }
        }
        if !dv.foreign.is_empty() {
            dv.nvme = dv.nvme.max(1);
        }
        let null_blk_named = lower.contains("null_blk")
            || lower.contains("nullb")
            || scan
                .steps
                .iter()
                .any(|(s, _)| matches!(s, Step::Module { module, .. } if module == "null_blk"));
        if dv.nullb == 0 && dv.nvme == 0 {
            if lower.contains("nvme") && !null_blk_named {
                dv.nvme = 1;
            } else {
                dv.nullb = 1;
            }
        } else if dv.nullb == 0 && null_blk_named {
            dv.nullb = 1;
        }
        dv
    }

    /// The device lab has for one the mail names.
    pub(super) fn map(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (d, i) in &self.ram {
            out = out
                .replace(&format!("/dev/{d}"), &format!("/dev/nullb{i}"))
                .replace(
                    &format!("/sys/block/{d}/"),
                    &format!("/sys/block/nullb{i}/"),
                );
        }
        for f in &self.foreign {
            out = out
                .replace(&format!("/dev/{f}"), "/dev/nvme0n1")
                .replace(&format!("/sys/block/{f}/"), "/sys/block/nvme0n1/");
        }
        out
    }

    pub(super) fn main(&self) -> &'static str {
        if self.nullb > 0 {
            "/dev/nullb0"
        } else {
            "/dev/nvme0n1"
        }
    }
}

/// The most vCPUs a draft gives a guest.
const MAX_CPUS: u32 = 2;

/// null_blk module parameters a matrix's `boot.null_blk` takes.
const NULL_BLK_KEYS: [&str; 11] = [
    "nr_devices",
    "gb",
    "memory_backed",
    "irqmode",
    "completion_nsec",
    "queue_mode",
    "submit_queues",
    "poll_queues",
    "hw_queue_depth",
    "bs",
    "shared_tags",
];

pub(super) fn boot(p: &mut Proposal, scan: &Scan, dv: &Devices, f: &facts::Facts) {
    let polled = scan
        .fio
        .iter()
        .any(|j| j.get("hipri").is_some() || j.get("ioengine") == Some("pvsync2"));
    p.cpus = 1;
    if let Some(c) = &f.cpus {
        p.cpus = c.value.min(MAX_CPUS);
        let cut = if c.value > MAX_CPUS {
            format!(
                "; {MAX_CPUS} here, as TCG on a small host gains nothing from more (raise it on a KVM runner)"
            )
        } else {
            String::new()
        };
        p.boot_notes
            .push(format!("{} CPU(s) from \"{}\"{cut}.", c.value, c.quote));
    }
    if polled && p.cpus < 2 {
        p.cpus = 2;
        p.boot_notes
            .push("Polled I/O needs a poll queue, which one vCPU does not get: 2 vCPUs.".into());
    }
    p.memory = if scan
        .steps
        .iter()
        .any(|(s, _)| matches!(s, Step::Mkfs { .. }))
    {
        2048
    } else {
        1024
    };
    if dv.nullb > 0 {
        let mut nb: Vec<(String, String)> = vec![
            ("nr_devices".into(), dv.nullb.to_string()),
            ("gb".into(), "1".into()),
            ("memory_backed".into(), "1".into()),
            ("queue_mode".into(), "2".into()),
            ("irqmode".into(), "0".into()),
        ];
        let mut from_mail = false;
        for (s, src) in &scan.steps {
            let Step::Module { module, params } = s else {
                continue;
            };
            if module != "null_blk" {
                continue;
            }
            from_mail = true;
            for (k, v) in params {
                if !NULL_BLK_KEYS.contains(&k.as_str()) {
                    p.boot_notes.push(format!("null_blk {k}={v} (\"{}\") is no boot.null_blk key; set it with a module_param step if it matters.", src.quote));
                    continue;
                }
                let v = if k == "gb" && v.parse::<u32>().is_ok_and(|g| g > 1) {
                    p.boot_notes.push(format!(
                        "null_blk gb={v} in the mail; 1 here, memory-backed in a 1 GiB guest."
                    ));
                    "1".to_string()
                } else {
                    v.clone()
                };
                match nb.iter_mut().find(|(x, _)| x == k) {
                    Some(e) => e.1 = v,
                    None => nb.push((k.clone(), v)),
                }
            }
        }
        if !from_mail {
            p.boot_notes.push(
                "null_blk as lab sets it up: memory-backed, 1 GiB, completing inline.".into(),
            );
        }
        p.null_blk = nb;
    }
    p.nvme = dv.nvme;
    p.nvme_poll = polled && dv.nvme > 0;
    for f in &dv.foreign {
        p.boot_notes.push(format!(
            "The mail's /dev/{f} is /dev/nvme0n1 here, an emulated NVMe drive in memory."
        ));
    }
    for (d, i) in &dv.ram {
        p.boot_notes.push(format!(
            "The mail's RAM disk /dev/{d} is /dev/nullb{i} here, a memory-backed null_blk device of 1 GiB."
        ));
    }
}

/// The dm targets lab writes as structured steps, and the config
/// symbols other targets, file systems and schedulers need.
/// A file the fio job opens outside `/dev` needs a file system under
/// it: when no mount step holds it, one is made on the main device and
/// mounted at the file's directory. The file system is the one the
/// mail's words name (xfs, ext4, btrfs), else xfs, and the note says so.
pub(super) fn mount_for_file(p: &mut Proposal, file: &str, dv: &Devices, words: &str) {
    if file.starts_with("/dev/") || !file.starts_with('/') {
        return;
    }
    let held = p.setup.iter().any(|(s, _)| {
        matches!(s, Step::Mount { dir, .. }
            if file.strip_prefix(dir.trim_end_matches('/')).is_some_and(|r| r.starts_with('/')))
    });
    if held {
        return;
    }
    let dir = match file.rsplit_once('/') {
        Some((d, _)) if !d.is_empty() => d.to_string(),
        _ => "/mnt".to_string(),
    };
    // The file system the mail names most often (`Does XFS sleep too?`
    // in a mail about ext4 names the other one once).
    let count = |fs: &str| {
        words
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| *w == fs)
            .count()
    };
    let named = ["xfs", "ext4", "btrfs"]
        .into_iter()
        .map(|fs| (count(fs), fs))
        .filter(|(n, _)| *n > 0)
        .fold(None, |best: Option<(usize, &str)>, x| match best {
            Some(b) if b.0 >= x.0 => Some(b),
            _ => Some(x),
        })
        .map(|(_, fs)| fs);
    let fs = named.unwrap_or("xfs").to_string();
    let why = match named {
        Some(f) => format!("the mail's fio opens {file}, on {f} as the mail says"),
        None => format!(
            "the mail's fio opens {file} and names no file system: xfs on lab's device, check it"
        ),
    };
    let device = dv.main().to_string();
    // As for a mail's own mkfs: the file system's tools want the room.
    p.memory = p.memory.max(2048);
    let steps = [
        Step::Mkfs {
            fs: fs.clone(),
            device: device.clone(),
            options: if fs == "ext4" {
                String::new()
            } else {
                "-f".into()
            },
        },
        Step::Mount {
            device,
            dir,
            fs: None,
            options: String::new(),
        },
    ];
    for s in steps {
        add_config(p, &s, &format!("for {fs}"));
        p.setup.push((s, Some(why.clone())));
    }
}

/// The I/O schedulers, by the name `queue/scheduler` takes and the
/// source file that is theirs.
const SCHEDULERS: [(&str, &str); 3] = [
    ("mq-deadline", "block/mq-deadline.c"),
    ("bfq", "block/bfq-"),
    ("kyber", "block/kyber-iosched.c"),
];

/// A series about an I/O scheduler (its subject names it, or its
/// diffstat touches its source) measures with that scheduler on: when
/// the mail writes no `queue/scheduler` itself, the knob is set on the
/// main device (an axis of devices moves it with them), and its config
/// symbol follows from the knob.
fn scheduler_under_test(p: &mut Proposal, dv: &Devices, lower: &str, subjects: &str) {
    if p.setup
        .iter()
        .any(|(s, _)| matches!(s, Step::Knob { path, .. } if path.ends_with("/queue/scheduler")))
    {
        return;
    }
    let words = |s: &str, name: &str| {
        s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .any(|w| w == name)
    };
    let mut named: Vec<&str> = SCHEDULERS
        .iter()
        .filter(|(n, _)| words(subjects, n))
        .map(|(n, _)| *n)
        .collect();
    let active = active_scheduler(lower);
    let why = if let Some(a) = active {
        named = vec![a];
        "the mail shows queue/scheduler with it active, in brackets"
    } else if named.is_empty() {
        named = SCHEDULERS
            .iter()
            .filter(|(_, f)| lower.contains(f))
            .map(|(n, _)| *n)
            .collect();
        "the patches change its source"
    } else {
        "the subject names it"
    };
    let Some(first) = named.first() else { return };
    let mut note = format!("The scheduler under test: {why}.");
    if named.len() > 1 {
        note.push_str(&format!(
            " The mail also names {}: make this an axis if its numbers are for them too.",
            named[1..].join(", ")
        ));
    }
    let dev = dv.main().trim_start_matches("/dev/").to_string();
    let s = Step::Knob {
        path: format!("/sys/block/{dev}/queue/scheduler"),
        value: first.to_string(),
    };
    add_config(p, &s, &format!("for {first}"));
    p.setup.push((s, Some(note)));
}

/// The scheduler a pasted `queue/scheduler` shows active: the one in
/// brackets on a line that lists another (`none [mq-deadline] kyber
/// bfq`).
fn active_scheduler(lower: &str) -> Option<&'static str> {
    // The schedulers lab drafts, and `none`.
    let all: Vec<&'static str> = std::iter::once("none")
        .chain(SCHEDULERS.iter().map(|(n, _)| *n))
        .collect();
    lower.lines().find_map(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        let active = all
            .iter()
            .copied()
            .find(|n| words.contains(&format!("[{n}]").as_str()))?;
        let others = words.iter().filter(|w| all.contains(w)).count();
        (others >= 1 && words.len() <= 6).then_some(active)
    })
}

/// The config symbols step `s` needs, added once each, saying what for.
pub(super) fn add_config(p: &mut Proposal, s: &Step, why: &str) {
    for c in needs(s) {
        if !p.config.iter().any(|(x, _)| x == c) {
            p.config.push((c.to_string(), why.to_string()));
        }
    }
}

fn needs(s: &Step) -> Vec<&'static str> {
    match s {
        // A named target's options the matrix adds itself (dm::config_fragment).
        Step::Dm {
            target: DmTarget::Table(t),
            ..
        } => match t.split_whitespace().nth(2).unwrap_or("") {
            "crypt" => vec![
                "CONFIG_DM_CRYPT=y",
                "CONFIG_CRYPTO_XTS=y",
                "CONFIG_CRYPTO_AES=y",
            ],
            "thin" | "thin-pool" => vec!["CONFIG_DM_THIN_PROVISIONING=y"],
            "cache" => vec!["CONFIG_DM_CACHE=y"],
            "mirror" => vec!["CONFIG_DM_MIRROR=y"],
            "snapshot" | "snapshot-origin" => vec!["CONFIG_DM_SNAPSHOT=y"],
            "verity" => vec!["CONFIG_DM_VERITY=y"],
            "integrity" => vec!["CONFIG_DM_INTEGRITY=y"],
            "writecache" => vec!["CONFIG_DM_WRITECACHE=y"],
            "raid" => vec!["CONFIG_DM_RAID=y"],
            "striped" => vec![],
            _ => vec![],
        },
        Step::Mkfs { fs, .. } => crate::matrix::fs::kconfig(fs).to_vec(),
        Step::Knob { path, value } if path.ends_with("/queue/scheduler") => match value.as_str() {
            "mq-deadline" => vec!["CONFIG_MQ_IOSCHED_DEADLINE=y"],
            "bfq" => vec!["CONFIG_IOSCHED_BFQ=y"],
            "kyber" => vec!["CONFIG_MQ_IOSCHED_KYBER=y"],
            _ => vec![],
        },
        Step::Knob { path, .. } if path.ends_with("/wbt_lat_usec") => {
            vec!["CONFIG_BLK_WBT=y", "CONFIG_BLK_WBT_MQ=y"]
        }
        _ => vec![],
    }
}

/// dm targets lab can infer from words alone ("dm-delay", "a flakey
/// target"), each with its structured table on a device.
const INFERABLE: [&str; 3] = ["delay", "flakey", "linear"];

pub(super) fn setup(p: &mut Proposal, scan: &Scan, dv: &Devices, lower: &str, subjects: &str) {
    let mut seen: Vec<Step> = Vec::new();
    for (s, src) in &scan.steps {
        let mut s = s.clone();
        match &mut s {
            Step::Module { module, .. } if module == "null_blk" => continue,
            // brd's disks are null_blk's here (see [`Devices::map`]).
            Step::Module { module, .. } if module == "brd" && !dv.ram.is_empty() => continue,
            Step::Module { params, .. } if params.is_empty() => continue,
            Step::Dm { target, .. } => match target {
                DmTarget::Table(t) => {
                    // A raw table is passed as written: its size must be a number.
                    let w = shell::words(t);
                    let mut fixed = dv.map(t);
                    // Sized by a command, or bigger than lab's 1 GiB devices.
                    let resize = w
                        .get(1)
                        .filter(|l| !matches!(l.parse::<u64>(), Ok(n) if n <= 2097152));
                    if let Some(len) = resize {
                        fixed = fixed.replacen(&dv.map(len), "2097152", 1);
                        p.boot_notes.push(format!("The table \"{t}\" is sized 2097152 sectors here: lab's devices are 1 GiB."));
                    }
                    *t = fixed;
                }
                // Only the device names change; the numbers stay as written.
                t => {
                    if let Some(d) = t.device_mut() {
                        *d = dv.map(d);
                    }
                }
            },
            Step::Knob { path, value } => {
                *path = dv.map(path);
                *value = dv.map(value);
            }
            Step::Mkfs { device, .. } => *device = dv.map(device),
            Step::Mount { device, .. } | Step::Cgroup { device, .. } => *device = dv.map(device),
            Step::Module { .. } => {}
        }
        if seen.contains(&s) {
            continue;
        }
        seen.push(s.clone());
        add_config(p, &s, &format!("for \"{}\"", src.quote));
        p.setup.push((s, Some(format!("\"{}\"", src.quote))));
    }
    scheduler_under_test(p, dv, lower, subjects);
    if seen.iter().any(|s| matches!(s, Step::Dm { .. })) {
        return;
    }
    // No dmsetup line: a target the subject or text names is set up on
    // the main device, and the comment says it was inferred.
    let named = INFERABLE
        .into_iter()
        .find(|t| subjects.contains(&format!("dm-{t}")))
        .or_else(|| {
            INFERABLE.into_iter().find(|t| {
                lower.contains(&format!("{t} target")) || lower.contains(&format!("dm-{t}"))
            })
        });
    let Some(t) = named else { return };
    let device = dv.main().to_string();
    let target = match t {
        "delay" => DmTarget::delay(device, Scalar::Str("1".into())),
        "flakey" => DmTarget::Flakey {
            device,
            up_s: Scalar::Str("5".into()),
            down_s: Scalar::Str("0".into()),
        },
        _ => DmTarget::Linear { device },
    };
    let name = if t == "delay" { "delayed" } else { t };
    let s = Step::Dm {
        name: name.into(),
        target,
    };
    add_config(p, &s, &format!("for the inferred dm-{t} target"));
    p.setup.push((
        s,
        Some(format!(
            "Inferred: the mail names the dm-{t} target but shows no dmsetup command."
        )),
    ));
}

#[cfg(test)]
mod tests {
    use super::active_scheduler;

    #[test]
    fn the_bracketed_scheduler_of_a_listing_is_active() {
        let pasted = "active scheduler:\n  /sys/block/sdh/queue/scheduler\n    none [mq-deadline] kyber bfq\n";
        assert_eq!(active_scheduler(pasted), Some("mq-deadline"));
        assert_eq!(active_scheduler("[none] mq-deadline\n"), Some("none"));
        // Brackets alone, or in a sentence, list nothing.
        assert_eq!(active_scheduler("we use [bfq] here\n"), None);
        assert_eq!(
            active_scheduler("with none, kyber or [bfq] the numbers are the same on this disk\n"),
            None
        );
    }
}
