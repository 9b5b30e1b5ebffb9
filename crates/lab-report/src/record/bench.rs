//! What a workload measured, as stored in a run: metrics and perf counts.

use serde::{Deserialize, Serialize};

/// One measured number. Times are nanoseconds; `unit` says what it is.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Metric {
    /// e.g. `write.lat_mean`, `read.iops`, `cpu.sys`
    pub name: String,
    pub value: f64,
    pub unit: String,
}

impl Metric {
    pub fn new(name: impl Into<String>, value: f64, unit: &str) -> Metric {
        Metric {
            name: name.into(),
            value,
            unit: unit.to_string(),
        }
    }
}

/// What perf said about one event.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PerfStatus {
    Counted,
    /// `<not supported>`: the kernel or the (virtual) CPU has no such counter.
    NotSupported,
    /// `<not counted>`: the counter existed but never ran.
    NotCounted,
    /// perf printed no line for the event.
    Missing,
}

impl PerfStatus {
    pub fn word(self) -> &'static str {
        match self {
            PerfStatus::Counted => "counted",
            PerfStatus::NotSupported => "not supported",
            PerfStatus::NotCounted => "not counted",
            PerfStatus::Missing => "missing",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PerfCount {
    pub event: String,
    pub status: PerfStatus,
    /// The count (task-clock and cpu-clock in ns); only when counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    pub unit: String,
    /// perf's reason when the event was not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
