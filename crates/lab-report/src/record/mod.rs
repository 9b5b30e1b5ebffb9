//! Every type lab writes to disk, in one place: a run's `manifest.json`
//! and `records.jsonl`, and a cached kernel's `meta.json`. The stages
//! that fill them (guest, bench, host, kernel, vm) re-export them, so
//! that editing a stage's code cannot silently change the run store's
//! schema, and the report reads runs without the stages that made them.

pub mod bench;
pub mod fio;
pub mod guest;
pub mod host;
pub mod kernel;
pub mod knob;
pub mod problem;

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

impl std::fmt::Display for Accel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A condition the run saw in one cell, as stored with the cell. The
/// report maps the kind; it never reads the words.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunFlag {
    pub kind: RunFlagKind,
    /// What happened, for people.
    pub detail: String,
}

/// Which condition a [`RunFlag`] records. Clocksource facts are not
/// here: the cell records its clocksources, and the report decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunFlagKind {
    /// A derived metric could not be computed.
    Derived,
    /// A perf event was not counted.
    PerfEvent,
    /// Teardown failed: later cells on the boot may not start clean.
    Teardown,
    /// The console reported clock trouble while the cell ran.
    ClockEvent,
    /// Written by a lab from before flags were typed: words only.
    Legacy,
}

impl RunFlag {
    pub fn new(kind: RunFlagKind, detail: impl Into<String>) -> RunFlag {
        RunFlag {
            kind,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for RunFlag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.detail)
    }
}

/// Records written before flags were typed hold plain strings; they
/// load as [`RunFlagKind::Legacy`] with their words.
impl<'de> Deserialize<'de> for RunFlag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<RunFlag, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Typed { kind: RunFlagKind, detail: String },
            Words(String),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Typed { kind, detail } => RunFlag { kind, detail },
            Stored::Words(w) => RunFlag::new(RunFlagKind::Legacy, w),
        })
    }
}
