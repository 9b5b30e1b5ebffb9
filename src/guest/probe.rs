//! What the guest says about itself right after boot, and around each
//! timing cell: kernel, build id, HZ, clocksources, CPUs, block devices.
//!
//! A clocksource can change under a running guest ("Marking TSC
//! unstable"), and from then on timings advance in ticks. So the
//! clocksource is read again after every cell, not just at boot.

use super::ssh::Session;
pub use crate::record::guest::{Probes, is_jiffies};
use anyhow::{Context, Result};

/// One shell script on the boot's shell, one round trip: each section is
/// tagged. Files are read with the shell's `read`; the only programs
/// started are sed (the clock and jiffies, one read of /proc/timer_list),
/// od, zcat and grep: each program costs 10 to 50 ms under TCG.
const SCRIPT: &str = r#"
say() { v=; { read v <"$1"; } 2>/dev/null; echo "$v"; }
echo "@jiffies"; sed -n -e 's/^now at \([0-9]*\) nsecs.*/\1/p' -e '/^jiffies: /{s/^jiffies: *\([0-9]*\).*/\1/p;q;}' /proc/timer_list 2>/dev/null
echo "@uname"; say /proc/sys/kernel/osrelease
echo "@notes"; od -An -v -tx1 /sys/kernel/notes 2>/dev/null
echo "@hz"; zcat /proc/config.gz 2>/dev/null | grep '^CONFIG_HZ='
echo "@cs"; say /sys/devices/system/clocksource/clocksource0/current_clocksource
echo "@avail"; say /sys/devices/system/clocksource/clocksource0/available_clocksource
echo "@cpus"; say /sys/devices/system/cpu/online
echo "@block"; for d in /sys/block/*; do [ -e "$d" ] && echo "${d##*/}"; done
exit 0
"#;

pub async fn probe(s: &Session) -> Result<Probes> {
    let out = s.script(SCRIPT).await?.check("probing the guest")?;
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
        cpus: count_cpus(&get("cpus")).context("guest CPU count")?,
        block_devices: get("block").split_whitespace().map(String::from).collect(),
        fio_version: None,
    })
}

/// CPUs in a sysfs list such as `0`, `0-3` or `0-1,4`.
fn count_cpus(list: &str) -> Option<u32> {
    let mut n: u64 = 0;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let here = match part.split_once('-') {
            Some((a, b)) => b
                .parse::<u64>()
                .ok()?
                .checked_sub(a.parse().ok()?)?
                .checked_add(1)?,
            None => part.parse::<u64>().map(|_| 1).ok()?,
        };
        n = n.checked_add(here)?;
    }
    u32::try_from(n).ok().filter(|n| *n > 0)
}

/// The HZ the kernel's tick ran at, from one read of /proc/timer_list:
/// `now_ns jiffies`. jiffies starts at INITIAL_JIFFIES, 2^32 - 300 × HZ
/// on 64-bit kernels, so for the HZ the kernel was built with, the ticks
/// counted since boot over HZ match the clock since boot; for any other
/// standard HZ they are off by 50 s or more (while the boot is young).
/// No sleep is needed: the whole boot is the interval. The ticks lag
/// the clock by the time before the first tick (about 0.1 s under TCG).
fn measured_hz(line: &str) -> Option<u32> {
    let v: Vec<u64> = line
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [now_ns, jiffies] = v[..] else {
        return None;
    };
    let secs = now_ns as f64 / 1e9;
    let off = |hz: u32| {
        let initial = (1u64 << 32) - 300 * hz as u64;
        (jiffies.wrapping_sub(initial) as i64 as f64 / hz as f64 - secs).abs()
    };
    let mut by_fit: Vec<(f64, u32)> = crate::matrix::HZ_VALUES
        .into_iter()
        .map(|hz| (off(hz), hz))
        .collect();
    by_fit.sort_by(|a, b| a.0.total_cmp(&b.0));
    let [(best, hz), (next, _), ..] = by_fit[..] else {
        return None;
    };
    // Near 300 s of uptime every HZ's count wraps together: then no HZ
    // stands out, and none is claimed.
    (best <= 1.0 + 0.1 * secs && next >= 10.0 * best.max(1.0)).then_some(hz)
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
        // Read in a guest: 2.39 s after boot, 228 ticks at HZ=100.
        let text = format!(
            "@jiffies\n2387855979\n4294937524\n@uname\n6.12.117\n@notes\n {}\n@hz\nCONFIG_HZ=100\n@cs\ntsc\n@avail\ntsc hpet acpi_pm \n@cpus\n0\n@block\nnullb0\nnvme0n1\n",
            hex.join(" ")
        );
        let p = parse(&text).unwrap();
        assert_eq!(p.uname_r, "6.12.117");
        assert_eq!(p.build_id.as_deref(), Some("deadbeef"));
        assert_eq!(p.hz_config, Some(100));
        assert_eq!(p.hz_measured, Some(100));
        assert_eq!(p.cpus, 1);
        assert_eq!(p.clocksource, "tsc");
        assert_eq!(p.available_clocksources, ["tsc", "hpet", "acpi_pm"]);
        assert_eq!(p.block_devices, ["nullb0", "nvme0n1"]);
        assert_eq!(p.fio_version, None);
    }

    /// jiffies for a kernel built with `hz`, `secs` after boot, whose
    /// first tick came `lag` s after its clock started.
    fn reading(hz: u64, secs: f64, lag: f64) -> String {
        let ticks = (hz as f64 * (secs - lag)) as u64;
        format!(
            "{} {}",
            (secs * 1e9) as u64,
            (1u64 << 32) - 300 * hz + ticks
        )
    }

    #[test]
    fn hz_is_the_one_whose_ticks_since_boot_match_the_clock() {
        for hz in crate::matrix::HZ_VALUES {
            for (secs, lag) in [
                (1.5, 0.0),
                (2.4, 0.11),
                (9.0, 0.6),
                (40.0, 2.0),
                (400.0, 1.0),
            ] {
                assert_eq!(
                    measured_hz(&reading(hz as u64, secs, lag)),
                    Some(hz),
                    "{hz} Hz, {secs} s, lag {lag}"
                );
            }
        }
        // An arm64 guest: 1.49 s after boot, 148 ticks at HZ=100.
        assert_eq!(measured_hz("1487628752 4294937444"), Some(100));
        // A tick that ran at 250 Hz in a kernel whose jiffies started as
        // for HZ=100 fits no HZ.
        assert_eq!(
            measured_hz(&format!("2000000000 {}", (1u64 << 32) - 30000 + 500)),
            None
        );
        // At 300 s every count wraps together: nothing stands out.
        assert_eq!(measured_hz(&reading(250, 300.0, 0.1)), None);
        assert_eq!(measured_hz("0 7 8"), None);
        assert_eq!(measured_hz(""), None);
    }

    #[test]
    fn cpus_are_counted_from_the_online_list() {
        assert_eq!(count_cpus("0"), Some(1));
        assert_eq!(count_cpus("0-3"), Some(4));
        assert_eq!(count_cpus("0-1,4,6-7"), Some(5));
        assert_eq!(count_cpus(""), None);
        assert_eq!(count_cpus("3-1"), None);
        assert_eq!(count_cpus("x"), None);
        assert_eq!(count_cpus("0-4294967295"), None);
        assert_eq!(count_cpus("0-18446744073709551615"), None);
    }

    #[test]
    fn jiffies_clocksources_are_flagged() {
        assert!(is_jiffies("refined-jiffies"));
        assert!(is_jiffies("jiffies"));
        assert!(!is_jiffies("tsc"));
        assert!(!is_jiffies("arch_sys_counter"));
    }
}
