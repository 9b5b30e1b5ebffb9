//! What the guest reported and what a cell's setup did, as stored in a
//! run: the boot's probes, knob writes and their verdicts, setup steps.

use super::knob::Knob;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Probes {
    pub uname_r: String,
    pub build_id: Option<String>,
    /// CONFIG_HZ from /proc/config.gz.
    pub hz_config: Option<u32>,
    /// The HZ whose tick count since boot matches the time since boot.
    pub hz_measured: Option<u32>,
    pub clocksource: String,
    pub available_clocksources: Vec<String>,
    pub cpus: u32,
    pub block_devices: Vec<String>,
    /// The version fio itself printed in its JSON, from the boot's first
    /// fio cell: the fio that produced the numbers (the probe does not
    /// start fio, which costs 80 ms under TCG).
    pub fio_version: Option<String>,
}

/// A clocksource that counts in ticks: timings are then HZ-coarse.
pub fn is_jiffies(clocksource: &str) -> bool {
    clocksource.contains("jiffies")
}

/// A console line that says timing went wrong: the TSC marked unstable,
/// the clocksource watchdog complaining, or a switch to a jiffies clock.
/// Ordinary boot lines about clocksources are kept as provenance but are
/// not trouble.
pub fn is_clock_trouble(line: &str) -> bool {
    line.contains("unstable")
        || line.contains("watchdog")
        || line.contains("skew")
        || (line.contains("Switched to clocksource") && line.contains("jiffies"))
}

/// What one step did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: String,
    pub command: String,
    pub secs: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knob: Option<Knob>,
}
