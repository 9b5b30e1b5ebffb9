//! What the guest says about itself right after boot, and around each
//! timing cell: kernel, build id, HZ, clocksources, CPUs, block devices.
//!
//! A clocksource can change under a running guest ("Marking TSC
//! unstable"), and from then on timings advance in ticks. So the
//! clocksource is read again after every cell, not just at boot.

use super::ssh::Session;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Probes {
    pub uname_r: String,
    pub build_id: Option<String>,
    /// CONFIG_HZ from /proc/config.gz.
    pub hz_config: Option<u32>,
    /// HZ measured from the jiffies count over the probe's own run.
    pub hz_measured: Option<u32>,
    pub clocksource: String,
    pub available_clocksources: Vec<String>,
    pub cpus: u32,
    pub block_devices: Vec<String>,
    pub fio_version: Option<String>,
}

/// One shell script, one round trip: each section is tagged. HZ is
/// measured from /proc/timer_list's clock (`now at N nsecs`) and its
/// jiffies, read at the start and the end. 0.1 s of ticks tells 100,
/// 250, 300 and 1000 apart to within a tick; under TCG the script's own
/// run takes longer than that, so it sleeps only when it ran faster (a
/// 1 s sleep once cost every boot a second). Files are read with the
/// shell's `read`: each program started costs 10 to 50 ms under TCG.
const SCRIPT: &str = r#"
tl() { sed -n -e 's/^now at \([0-9]*\) nsecs.*/\1/p' -e 's/^jiffies: *\([0-9]*\).*/\1/p' /proc/timer_list 2>/dev/null | head -2 | tr '\n' ' '; }
now() { read u _ </proc/uptime; u=${u%.*}${u#*.}; }
say() { v=; { read v <"$1"; } 2>/dev/null; echo "$v"; }
t1=$(tl); now; u1=$u
echo "@uname"; say /proc/sys/kernel/osrelease
echo "@notes"; od -An -v -tx1 /sys/kernel/notes 2>/dev/null
echo "@hz"; zcat /proc/config.gz 2>/dev/null | grep '^CONFIG_HZ='
echo "@cs"; say /sys/devices/system/clocksource/clocksource0/current_clocksource
echo "@avail"; say /sys/devices/system/clocksource/clocksource0/available_clocksource
echo "@cpus"; grep -c ^processor /proc/cpuinfo
echo "@block"; (cd /sys/block && for d in *; do [ -e "$d" ] && echo "$d"; done)
echo "@fio"; fio --version 2>/dev/null
now; [ $((u - u1)) -ge 10 ] || sleep 0.1
echo "@jiffies"; echo "$t1$(tl)"
"#;

pub async fn probe(s: &Session) -> Result<Probes> {
    let out = s.exec(SCRIPT).await?.check("probing the guest")?;
    parse(&out.stdout)
}

fn sections(text: &str) -> std::collections::HashMap<String, String> {
    let mut m = std::collections::HashMap::new();
    let mut cur = String::new();
    for line in text.lines() {
        if let Some(tag) = line.strip_prefix('@') {
            cur = tag.trim().to_string();
            m.entry(cur.clone()).or_insert_with(String::new);
        } else if !cur.is_empty() {
            let e = m.entry(cur.clone()).or_insert_with(String::new);
            e.push_str(line);
            e.push('\n');
        }
    }
    m
}

pub fn parse(text: &str) -> Result<Probes> {
    let s = sections(text);
    let get = |k: &str| s.get(k).map(|v| v.trim().to_string()).unwrap_or_default();
    let notes: Vec<u8> = get("notes")
        .split_whitespace()
        .filter_map(|h| u8::from_str_radix(h, 16).ok())
        .collect();
    Ok(Probes {
        uname_r: get("uname"),
        build_id: build_id_from_notes(&notes),
        hz_config: get("hz")
            .strip_prefix("CONFIG_HZ=")
            .and_then(|v| v.parse().ok()),
        hz_measured: measured_hz(&get("jiffies")),
        clocksource: get("cs"),
        available_clocksources: get("avail").split_whitespace().map(String::from).collect(),
        cpus: get("cpus").parse().context("guest CPU count")?,
        block_devices: get("block").split_whitespace().map(String::from).collect(),
        fio_version: Some(get("fio")).filter(|v| !v.is_empty()),
    })
}

/// The nearest standard HZ to the jiffies rate between two reads of
/// /proc/timer_list: `now_ns jiffies now_ns jiffies`.
fn measured_hz(line: &str) -> Option<u32> {
    let v: Vec<f64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [t1, j1, t2, j2] = v[..] else { return None };
    let rate = (j2 - j1) / ((t2 - t1) / 1e9);
    if !rate.is_finite() || rate <= 0.0 {
        return None;
    }
    crate::matrix::HZ_VALUES.into_iter().min_by(|a, b| {
        ((*a as f64 - rate).abs())
            .partial_cmp(&(*b as f64 - rate).abs())
            .unwrap()
    })
}

/// The GNU build id in /sys/kernel/notes: a list of ELF notes, each
/// namesz, descsz, type, then name and desc padded to 4 bytes.
pub fn build_id_from_notes(b: &[u8]) -> Option<String> {
    let mut i = 0;
    let u32at = |i: usize| {
        b.get(i..i + 4)
            .map(|x| u32::from_ne_bytes(x.try_into().unwrap()) as usize)
    };
    while i + 12 <= b.len() {
        let (namesz, descsz, typ) = (u32at(i)?, u32at(i + 4)?, u32at(i + 8)?);
        let name_start = i + 12;
        let desc_start = name_start + namesz.div_ceil(4) * 4;
        let next = desc_start + descsz.div_ceil(4) * 4;
        let name = b.get(name_start..name_start + namesz)?;
        if typ == 3 && name.starts_with(b"GNU") {
            return Some(
                b.get(desc_start..desc_start + descsz)?
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect(),
            );
        }
        i = next;
    }
    None
}

/// The clocksource now, and whether it is a tick-based one whose
/// timings cannot be trusted below a tick.
pub async fn clocksource(s: &Session) -> Result<String> {
    let o = s
        .exec("cat /sys/devices/system/clocksource/clocksource0/current_clocksource")
        .await?
        .check("reading the clocksource")?;
    Ok(o.stdout.trim().to_string())
}

pub fn is_jiffies(clocksource: &str) -> bool {
    clocksource.contains("jiffies")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_section() {
        // A note: namesz=4 ("GNU\0"), descsz=4, type=3, desc=de ad be ef.
        let mut note = Vec::new();
        for v in [4u32, 4, 3] {
            note.extend_from_slice(&v.to_ne_bytes());
        }
        note.extend_from_slice(b"GNU\0");
        note.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        let hex: Vec<String> = note.iter().map(|b| format!("{b:02x}")).collect();
        let text = format!(
            "@uname\n6.12.117\n@notes\n {}\n@hz\nCONFIG_HZ=100\n@cs\ntsc\n@avail\ntsc hpet acpi_pm \n@cpus\n1\n@block\nnullb0 nvme0n1\n@fio\nfio-3.33\n@jiffies\n1500000000 4294937296 1800000000 4294937326 \n",
            hex.join(" ")
        );
        let p = parse(&text).unwrap();
        assert_eq!(p.uname_r, "6.12.117");
        assert_eq!(p.build_id.as_deref(), Some("deadbeef"));
        assert_eq!(p.hz_config, Some(100));
        assert_eq!(p.hz_measured, Some(100));
        // 0.3 s of ticks tells the neighbours 250 and 300 apart.
        assert_eq!(measured_hz("0 0 300000000 75"), Some(250));
        assert_eq!(measured_hz("0 0 300000000 89"), Some(300));
        assert_eq!(measured_hz("0 0 300000000 301"), Some(1000));
        assert_eq!(measured_hz("0 7"), None);
        assert_eq!(p.clocksource, "tsc");
        assert_eq!(p.available_clocksources, ["tsc", "hpet", "acpi_pm"]);
        assert_eq!(p.block_devices, ["nullb0", "nvme0n1"]);
        assert_eq!(p.fio_version.as_deref(), Some("fio-3.33"));
    }

    #[test]
    fn jiffies_clocksources_are_flagged() {
        assert!(is_jiffies("refined-jiffies"));
        assert!(is_jiffies("jiffies"));
        assert!(!is_jiffies("tsc"));
        assert!(!is_jiffies("arch_sys_counter"));
    }
}
