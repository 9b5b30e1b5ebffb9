//! Facts about the host, recorded with every run.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub cpu_model: String,
    pub cores: usize,
    pub mem_total_mib: u64,
    pub kernel: String,
    pub os: String,
}

impl HostInfo {
    pub fn read() -> HostInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| {
                l.starts_with("model name") || l.starts_with("Model") || l.starts_with("CPU part")
            })
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default();
        let mem_total_mib = std::fs::read_to_string("/proc/meminfo")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|kb| kb / 1024)
            .unwrap_or(0);
        let os = std::fs::read_to_string("/etc/os-release")
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("PRETTY_NAME="))
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_default();
        HostInfo {
            hostname: nix::unistd::gethostname()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cpu_model,
            cores: crate::util::ncpus(),
            mem_total_mib,
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .unwrap_or_default()
                .trim()
                .to_string(),
            os,
        }
    }
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let v: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    [
        v.first().copied().unwrap_or(0.0),
        v.get(1).copied().unwrap_or(0.0),
        v.get(2).copied().unwrap_or(0.0),
    ]
}
