//! The run store: `results/<run-id>/`, written so that nothing completed
//! is ever lost.
//!
//! Layout:
//! - `manifest.json`: provenance (matrix, lab version, host, kernels,
//!   images, boots with their probes), rewritten after every boot;
//! - `cells/<cell>/rep-<n>/cell.json`: one finished cell repetition,
//!   written once, atomically, the moment it ends;
//! - `cells/<cell>/rep-<n>/fio.json`: fio's raw output;
//! - `boots/<boot>/rep-<n>/console.log`: the serial console;
//! - `records.jsonl`: one line per cell, repetition and metric,
//!   regenerated from the cell files (so it is never half-written).
//!
//! A cell repetition counts as done when its cell.json says so; resume
//! runs whatever has no such file.

pub mod claim_sources;
pub mod host;
pub mod merge;

use crate::matrix::Plan;
use crate::matrix::expand::AxisValues;
use crate::matrix::schema::{ClaimDef, VerdictDef};
use crate::record::Accel;
use crate::record::bench::Metric;
use crate::record::guest::Probes;
use crate::record::guest::StepRecord;
use crate::record::kernel::KernelBuild;
use crate::record::knob::Knob;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub use crate::util::LAB_VERSION;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MatrixInfo {
    pub path: String,
    pub name: String,
    pub description: String,
    /// blake3 of the matrix file's bytes.
    pub hash: String,
    /// The file itself, so a report can show exactly what ran.
    pub text: String,
    pub filter: Option<String>,
    /// `i/N` for a shard of a sharded run.
    pub shard: Option<String>,
    pub metrics: Vec<String>,
    pub repetitions: u32,
    pub interleave: bool,
    pub timing: bool,
    pub verdict: VerdictDef,
    pub claims: Vec<ClaimDef>,
    /// The metrics the matrix defines itself, with their units: derived,
    /// perf and command metrics (`matrix::claims::command_metrics`), so
    /// the report binds claims as `lab plan` did. Empty in runs recorded
    /// before it was kept; see [`MatrixInfo::metric_defs`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metric_defs: Vec<crate::matrix::schema::CommandMetricDef>,
}

impl MatrixInfo {
    /// What a run records of the matrix it ran, and of the selection.
    pub fn of(m: &crate::matrix::Matrix, filter: Option<String>, shard: Option<String>) -> Self {
        MatrixInfo {
            path: m.path.display().to_string(),
            name: m.name.clone(),
            description: m.description.clone(),
            hash: crate::util::hash_bytes(m.text.as_bytes()),
            text: m.text.clone(),
            filter,
            shard,
            metrics: m.metrics.clone(),
            repetitions: m.repetitions,
            interleave: m.interleave,
            timing: m.timing,
            verdict: m.verdict.clone(),
            claims: m.claims.clone(),
            metric_defs: crate::matrix::claims::command_metrics(m),
        }
    }

    /// The matrix's own metrics; for a run recorded before they were
    /// kept, rebuilt from its plan: the derived metrics and every command
    /// workload's (perf counters are then unknown).
    pub fn metric_defs(
        &self,
        plan: &crate::matrix::Plan,
    ) -> Vec<crate::matrix::schema::CommandMetricDef> {
        use crate::matrix::schema::{CommandMetricDef, Workload};
        if !self.metric_defs.is_empty() {
            return self.metric_defs.clone();
        }
        let mut out: Vec<CommandMetricDef> = Vec::new();
        let commands = plan.cells.iter().filter_map(|c| match &c.workload {
            Some(Workload::Command(c)) => Some(c.metrics.iter().cloned()),
            _ => None,
        });
        let derived = plan.derived.iter().map(|d| CommandMetricDef {
            name: d.name.clone(),
            regex: String::new(),
            unit: d.unit.clone(),
            scale: None,
        });
        for d in commands.flatten().chain(derived) {
            if !out.iter().any(|o| o.name == d.name) {
                out.push(d);
            }
        }
        out
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ImageInfo {
    pub arch: String,
    pub sha256: String,
    pub key: String,
    pub packages: Vec<(String, String)>,
}

/// One boot of one kernel, for one repetition block.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BootRecord {
    pub boot: String,
    pub rep: u32,
    pub kernel: String,
    pub variant: String,
    pub arch: String,
    pub accel: Accel,
    pub accel_reason: String,
    pub qemu_version: String,
    pub qemu_command: Vec<String>,
    /// Relative to the run directory.
    pub console_log: String,
    pub probes: Option<Probes>,
    /// Launch to SSH ready.
    pub ready_secs: Option<f64>,
    pub started: String,
    pub ending: Option<String>,
    pub error: Option<String>,
    /// Console lines about clocksources (e.g. "Marking TSC unstable").
    pub clock_events: Vec<String>,
}

/// The tables of one mail that claims read, recorded when the run
/// starts so the report needs nothing but the run directory.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClaimSource {
    /// The claims (from 1) that read this mail.
    #[serde(default)]
    pub claims: Vec<usize>,
    /// The variant whose patch mail this is; empty for other mails.
    #[serde(default)]
    pub variant: String,
    /// The file, and the message-id when one message was picked.
    pub origin: String,
    pub tables: Vec<crate::mail::ClaimTable>,
}

/// The layout `Manifest` is written in; see `Manifest::schema_version`.
pub const MANIFEST_SCHEMA: u32 = 1;

fn manifest_schema_v1() -> u32 {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Manifest {
    /// The layout of this file and of `records.jsonl`. Runs stored before
    /// it was written are layout 1.
    #[serde(default = "manifest_schema_v1")]
    pub schema_version: u32,
    pub lab_version: String,
    pub run_id: String,
    pub created: String,
    pub matrix: MatrixInfo,
    pub plan: Plan,
    pub host: host::HostInfo,
    pub kernels: BTreeMap<String, KernelBuild>,
    pub images: BTreeMap<String, ImageInfo>,
    pub boots: Vec<BootRecord>,
    pub claim_sources: Vec<ClaimSource>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    Done,
    Failed,
    Interrupted,
}

/// One cell, one repetition.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellRecord {
    pub cell: String,
    pub rep: u32,
    pub boot: String,
    pub kernel: String,
    pub variant: String,
    pub arch: String,
    pub axes: AxisValues,
    pub status: CellStatus,
    pub error: Option<String>,
    pub started: String,
    pub secs: f64,
    /// The host's 1, 5 and 15 minute load averages as the cell started.
    pub host_load: [f64; 3],
    pub host_cores: usize,
    pub clocksource_before: String,
    pub clocksource_after: String,
    pub knobs: Vec<Knob>,
    pub steps: Vec<StepRecord>,
    pub metrics: Vec<Metric>,
    /// fio's raw JSON, relative to the run directory.
    pub fio_json: Option<String>,
    /// Conditions the run saw that make this cell's numbers suspect.
    pub flags: Vec<crate::record::RunFlag>,
    /// Host CPU contention measured over this attempt (timing cells).
    #[serde(default)]
    pub contention: Option<crate::record::host::Contention>,
    /// Earlier attempts of this repetition, re-run because the host was
    /// contended: what each measured.
    #[serde(default)]
    pub contended_attempts: Vec<crate::record::host::Contention>,
    /// What perf said about each event, counted or not (`perf:`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub perf: Vec<crate::record::bench::PerfCount>,
    /// Where the cell's time went in the guest, when it ran as one script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_secs: Option<GuestSecs>,
}

/// A cell's parts timed by the guest's own clock (/proc/uptime, to the
/// centisecond): what a cell costs beyond its workload's I/O, e.g. fio's
/// start and dm's create and remove (`scripts/bench-run`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct GuestSecs {
    /// The setup steps, together.
    pub setup: f64,
    /// The workload, from its start to its exit.
    pub workload: f64,
    /// The undos, together.
    pub teardown: f64,
}

/// One line of records.jsonl.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Record {
    pub cell: String,
    pub rep: u32,
    pub kernel: String,
    pub variant: String,
    pub arch: String,
    pub axes: AxisValues,
    pub metric: String,
    pub value: f64,
    pub unit: String,
}

/// A set of (cell id, repetition) pairs.
pub type CellReps = BTreeSet<(String, u32)>;

/// A run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    pub path: PathBuf,
}

/// Cell ids become directory names: keep them readable and safe.
pub use crate::matrix::dir_name as path_part;

impl RunDir {
    /// A new run directory under `root`, named after the matrix and the time.
    pub fn create(root: &Path, matrix_name: &str) -> Result<RunDir> {
        std::fs::create_dir_all(root).with_context(|| format!("creating {}", root.display()))?;
        let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
        let mut id = format!("{matrix_name}-{stamp}");
        let mut n = 1;
        while root.join(&id).exists() {
            n += 1;
            id = format!("{matrix_name}-{stamp}-{n}");
        }
        let path = root.join(&id);
        std::fs::create_dir(&path)?;
        Ok(RunDir { path })
    }

    /// An existing run, by directory or by id under `root`.
    pub fn open(root: &Path, id_or_path: &str) -> Result<RunDir> {
        let direct = PathBuf::from(id_or_path);
        let path = if direct.join("manifest.json").is_file() {
            direct
        } else {
            root.join(id_or_path)
        };
        if !path.join("manifest.json").is_file() {
            anyhow::bail!(
                "no run '{id_or_path}': neither {} nor {} holds a manifest.json",
                id_or_path,
                path.display()
            );
        }
        Ok(RunDir { path })
    }

    pub fn id(&self) -> String {
        self.path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub fn manifest_path(&self) -> PathBuf {
        self.path.join("manifest.json")
    }

    /// The manifest. One from a newer lab is read with a warning: what it
    /// added is unknown here and left out of reports.
    pub fn read_manifest(&self) -> Result<Manifest> {
        let m: Manifest = crate::util::read_json(&self.manifest_path())?;
        if m.schema_version > MANIFEST_SCHEMA {
            eprintln!(
                "warning: {} was written by a newer lab (layout {}; this lab reads layout {} \
                 and leaves out what it does not know): update lab to read all of it",
                self.manifest_path().display(),
                m.schema_version,
                MANIFEST_SCHEMA
            );
        }
        Ok(m)
    }

    pub fn write_manifest(&self, m: &Manifest) -> Result<()> {
        crate::util::atomic_write_json(&self.manifest_path(), m)
    }

    pub fn cell_dir(&self, cell: &str, rep: u32) -> PathBuf {
        self.path
            .join("cells")
            .join(path_part(cell))
            .join(format!("rep-{rep}"))
    }

    pub fn boot_dir(&self, boot: &str, rep: u32) -> PathBuf {
        self.path
            .join("boots")
            .join(path_part(boot))
            .join(format!("rep-{rep}"))
    }

    pub fn write_cell(&self, c: &CellRecord) -> Result<()> {
        crate::util::atomic_write_json(&self.cell_dir(&c.cell, c.rep).join("cell.json"), c)
    }

    /// Every cell record in the run.
    pub fn cells(&self) -> Result<Vec<CellRecord>> {
        let mut out = Vec::new();
        let root = self.path.join("cells");
        // A run directory may come from another machine's CI job: its
        // parts are read where they are, never through a symlink.
        let real_dir = |p: &Path| -> Result<bool> {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => Ok(true),
                Ok(m) if m.file_type().is_symlink() => Err(crate::error::input_error(format!(
                    "{}: a symlink where lab writes a directory; a run directory is read only as lab wrote it",
                    p.display()
                ))),
                _ => Ok(false),
            }
        };
        if !real_dir(&root)? {
            return Ok(out);
        }
        let rd = std::fs::read_dir(&root).with_context(|| format!("reading {}", root.display()))?;
        for cell in rd.flatten() {
            if !real_dir(&cell.path())? {
                continue;
            }
            let reps = std::fs::read_dir(cell.path())
                .with_context(|| format!("reading {}", cell.path().display()))?;
            for rep in reps.flatten() {
                let f = rep.path().join("cell.json");
                if real_dir(&rep.path())?
                    && std::fs::symlink_metadata(&f).is_ok_and(|m| m.is_file())
                {
                    out.push(crate::util::read_json(&f)?);
                }
            }
        }
        out.sort_by(|a: &CellRecord, b: &CellRecord| (&a.cell, a.rep).cmp(&(&b.cell, b.rep)));
        Ok(out)
    }

    /// (cell, rep) pairs that finished, and those that failed.
    pub fn finished(&self) -> Result<(CellReps, CellReps)> {
        let mut done = BTreeSet::new();
        let mut failed = BTreeSet::new();
        for c in self.cells()? {
            match c.status {
                CellStatus::Done => done.insert((c.cell, c.rep)),
                CellStatus::Failed => failed.insert((c.cell, c.rep)),
                CellStatus::Interrupted => false,
            };
        }
        Ok((done, failed))
    }

    /// records.jsonl is derived from the cell files, but other tools read
    /// it: a line that is not a record is an error naming the line.
    pub fn check_records(&self) -> Result<()> {
        let path = self.path.join("records.jsonl");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(());
        };
        for (i, line) in text.lines().enumerate() {
            if let Err(e) = serde_json::from_str::<Record>(line) {
                anyhow::bail!(
                    "{}:{}: not a record ({e}); `lab merge` or a finished `lab run --resume` rewrites it from the cell files",
                    path.display(),
                    i + 1
                );
            }
        }
        Ok(())
    }

    /// Rebuild records.jsonl from the cell files, atomically.
    pub fn write_records(&self) -> Result<usize> {
        let records = records_of(&self.cells()?);
        let mut text = String::new();
        for r in &records {
            text.push_str(&serde_json::to_string(r)?);
            text.push('\n');
        }
        crate::util::atomic_write(&self.path.join("records.jsonl"), text.as_bytes())?;
        Ok(records.len())
    }

    pub fn records(&self) -> Result<Vec<Record>> {
        let text = std::fs::read_to_string(self.path.join("records.jsonl")).unwrap_or_default();
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| Ok(serde_json::from_str(l)?))
            .collect()
    }
}

/// The records of the cells that finished.
pub fn records_of(cells: &[CellRecord]) -> Vec<Record> {
    let mut out = Vec::new();
    for c in cells.iter().filter(|c| c.status == CellStatus::Done) {
        for m in &c.metrics {
            out.push(Record {
                cell: c.cell.clone(),
                rep: c.rep,
                kernel: c.kernel.clone(),
                variant: c.variant.clone(),
                arch: c.arch.clone(),
                axes: c.axes.clone(),
                metric: m.name.clone(),
                value: m.value,
                unit: m.unit.clone(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
