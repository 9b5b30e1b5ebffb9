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

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
