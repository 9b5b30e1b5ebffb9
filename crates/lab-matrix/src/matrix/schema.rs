//! The matrix file, version 1, as it is written in YAML.
//!
//! Every struct denies unknown keys, so a typo is an error with a line
//! and column, not a silently ignored setting. Values that later checks
//! may reject carry their `Spanned` location.

use serde::{Deserialize, Deserializer, Serialize};
use serde_saphyr::Spanned;

pub type Loc<T> = Spanned<T>;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatrixFile {
    pub version: Loc<u32>,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub kernel: KernelSection,
    pub variants: Loc<Vec<VariantDef>>,
    /// Axes that change the kernel: `arch`, and named fragment sets.
    pub kernel_axes: Loc<OrderedMap<KernelAxisDef>>,
    /// Axes that change how a kernel is booted, not how it is built.
    #[serde(default)]
    pub boot_axes: Option<Loc<OrderedMap<Loc<Vec<Scalar>>>>>,
    #[serde(default)]
    pub boot: BootDef,
    /// Axes that change one cell: templated into setup and workload.
    #[serde(default)]
    pub run_axes: Option<Loc<OrderedMap<Loc<Vec<Scalar>>>>>,
    /// Combinations left out: partial axis maps, e.g. `{io_poll: 0, io_poll_delay: [0, 10]}`.
    #[serde(default)]
    pub exclude: Option<Loc<Vec<Loc<AxisPick>>>>,
    /// When given, only combinations matching one of these maps run.
    #[serde(default)]
    pub only: Option<Loc<Vec<Loc<AxisPick>>>>,
    #[serde(default)]
    pub setup: Vec<Loc<SetupStep>>,
    /// Named workloads a cell picks with `workload: "{{ axis }}"`.
    #[serde(default)]
    pub workloads: Option<Loc<OrderedMap<Workload>>>,
    pub workload: Option<Loc<WorkloadRef>>,
    /// Metrics computed from others and from axis values, per repetition.
    #[serde(default)]
    pub derived: Option<Loc<OrderedMap<Loc<DerivedDef>>>>,
    /// Metrics shown in tables, e.g. `write.lat_mean`.
    #[serde(default)]
    pub metrics: Vec<String>,
    #[serde(default = "one")]
    pub repetitions: Loc<u32>,
    /// Run the variants in A B A B order inside each repetition block.
    #[serde(default)]
    pub interleave: bool,
    /// Cells whose timing matters: `--jobs` warns before running them
    /// beside another VM, and a loaded host is flagged on each cell.
    #[serde(default = "yes")]
    pub timing: bool,
    #[serde(default)]
    pub claims: Vec<ClaimDef>,
    #[serde(default)]
    pub verdict: VerdictDef,
    /// When a timing cell counts as measured on a contended host.
    #[serde(default)]
    pub contention: ContentionDef,
    /// perf counters around each workload (see `matrix::perf`).
    #[serde(default)]
    pub perf: Option<Loc<super::perf::PerfDef>>,
    /// The guest image: `image: {extras: [perf]}`.
    #[serde(default)]
    pub image: Option<Loc<super::perf::ImageDef>>,
}

fn one() -> Loc<u32> {
    Spanned::new(
        1,
        serde_saphyr::Location::UNKNOWN,
        serde_saphyr::Location::UNKNOWN,
    )
}
fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSection {
    #[serde(default)]
    pub source: Option<Loc<SourceDef>>,
    /// tinyconfig, defconfig, allnoconfig, or a path to a full config.
    #[serde(default)]
    pub base: Option<Loc<String>>,
    /// Fragments applied to every kernel, before the axes' fragments.
    #[serde(default)]
    pub fragments: Vec<Loc<String>>,
    /// `CONFIG_X=y` lines applied after the fragments: a matrix that
    /// needs a symbol or two carries them without a fragment file.
    #[serde(default)]
    pub config: Vec<Loc<String>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
pub enum SourceDef {
    /// `debian-6.12`: Debian's linux-source-6.12 tarball.
    Named(String),
    Tarball {
        tarball: String,
    },
    Git {
        git: String,
        #[serde(rename = "ref")]
        git_ref: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantDef {
    pub name: Loc<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub patches: Vec<Loc<PatchDef>>,
    /// Largest fuzz `patch -F` may use; 0 means exact (git apply) only.
    #[serde(default)]
    pub fuzz: u8,
    /// Overrides `kernel.source` for this variant's kernels.
    #[serde(default)]
    pub source: Option<Loc<SourceDef>>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
pub enum PatchDef {
    /// A mbox or single mail with one or more patches.
    Mail { mail: String },
    /// A plain unified diff.
    Diff { diff: String },
    /// A lore Message-ID, matched against `--mail` files, then `mail`
    /// (a file beside the matrix), then fetched with b4.
    MessageId {
        #[serde(rename = "message-id")]
        message_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mail: Option<String>,
    },
}

/// `arch: [x86_64, arm64]`, or a fragment set per value:
/// `hz: {100: [hz100], 250: [hz250]}`, or a source and fragments per
/// value: `kver: {6.1: {source: debian-6.1}, 6.12: {source: debian-6.12}}`.
#[derive(Debug)]
pub enum KernelAxisDef {
    Values(Vec<Loc<Scalar>>),
    Fragments(OrderedMap<KernelValueDef>),
}

/// One kernel axis value: fragment names, or a source with fragments.
#[derive(Debug)]
pub enum KernelValueDef {
    Fragments(Vec<Loc<String>>),
    Source(KernelValueSource),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelValueSource {
    #[serde(default)]
    pub source: Option<Loc<SourceDef>>,
    #[serde(default)]
    pub fragments: Vec<Loc<String>>,
}

impl KernelValueDef {
    pub fn fragments(&self) -> &[Loc<String>] {
        match self {
            KernelValueDef::Fragments(f) => f,
            KernelValueDef::Source(s) => &s.fragments,
        }
    }
    pub fn source(&self) -> Option<&Loc<SourceDef>> {
        match self {
            KernelValueDef::Fragments(_) => None,
            KernelValueDef::Source(s) => s.source.as_ref(),
        }
    }
}

/// A list or a map, told apart without buffering (which loses locations).
macro_rules! seq_or_map {
    ($ty:ty, $what:expr, $seq:expr, $map:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Visit;
                impl<'de> serde::de::Visitor<'de> for Visit {
                    type Value = $ty;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_seq<A: serde::de::SeqAccess<'de>>(
                        self,
                        s: A,
                    ) -> Result<Self::Value, A::Error> {
                        Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(s))
                            .map($seq)
                    }
                    fn visit_map<A: serde::de::MapAccess<'de>>(
                        self,
                        m: A,
                    ) -> Result<Self::Value, A::Error> {
                        Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                            .map($map)
                    }
                }
                d.deserialize_any(Visit)
            }
        }
    };
}

seq_or_map!(
    KernelValueDef,
    "a list of fragment names, or {source: ..., fragments: [...]}",
    KernelValueDef::Fragments,
    KernelValueDef::Source
);

// Not `#[serde(untagged)]`: that buffers the input and loses the
// locations that error messages need. A visitor keeps them.
seq_or_map!(
    KernelAxisDef,
    "a list of values, or a mapping of value to fragment names",
    KernelAxisDef::Values,
    KernelAxisDef::Fragments
);

#[derive(Debug, Default, Deserialize, Clone, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BootDef {
    /// Guest CPUs.
    #[serde(default)]
    pub cpus: Option<u32>,
    /// Guest memory in MiB.
    #[serde(default)]
    pub memory: Option<u32>,
    /// Extra kernel command line, templated with kernel and boot axes.
    #[serde(default)]
    pub cmdline: String,
    /// null_blk module parameters, on the kernel command line.
    #[serde(default)]
    pub null_blk: Option<NullBlkDef>,
    /// Emulated NVMe controllers, one namespace each.
    #[serde(default)]
    pub nvme: Vec<NvmeDef>,
    /// Seconds from launch to SSH before the boot is failed.
    #[serde(default)]
    pub ready_timeout: Option<u64>,
}

/// null_blk's module parameters. Values may be templates.
#[derive(Debug, Default, Deserialize, Clone, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NullBlkDef {
    pub nr_devices: Option<Scalar>,
    pub gb: Option<Scalar>,
    pub memory_backed: Option<Scalar>,
    pub irqmode: Option<Scalar>,
    pub completion_nsec: Option<Scalar>,
    pub queue_mode: Option<Scalar>,
    pub submit_queues: Option<Scalar>,
    pub poll_queues: Option<Scalar>,
    pub hw_queue_depth: Option<Scalar>,
    pub bs: Option<Scalar>,
    /// One tag set shared by all the devices.
    pub shared_tags: Option<Scalar>,
}

#[derive(Debug, Default, Deserialize, Clone, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NvmeDef {
    #[serde(default)]
    pub serial: Option<String>,
    /// Size of the namespace, e.g. `1G`.
    #[serde(default)]
    pub size: Option<String>,
    /// `memory` (a RAM-backed image, the default) or `file`.
    #[serde(default)]
    pub backing: Option<String>,
    /// I/O queue pairs (`max_ioqpairs`).
    #[serde(default)]
    pub queues: Option<u32>,
    #[serde(default)]
    pub mdts: Option<u32>,
    #[serde(default)]
    pub logical_block_size: Option<u32>,
    /// The guest's `nvme.poll_queues`; a template.
    #[serde(default)]
    pub poll_queues: Option<Scalar>,
}

/// One setup step of a cell. Strings are minijinja templates over the
/// cell's axes.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum SetupStep {
    /// A device-mapper device.
    Dm(DmDef),
    /// A sysfs or procfs knob: written, then read back.
    Knob(KnobDef),
    /// A module parameter under /sys/module: written, then read back.
    ModuleParam(ModuleParamDef),
    /// A null_blk device made through configfs.
    NullBlk(NullBlkDeviceDef),
    Mkfs(MkfsDef),
    Mount(MountDef),
    /// A shell command, with an optional command that undoes it.
    Shell(ShellDef),
    /// A cgroup v2 group the workload runs in, with `io.max` limits on
    /// one device (`matrix::cgroup`).
    Cgroup(CgroupDef),
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DmDef {
    pub name: String,
    /// One of `dm::TARGETS`, or absent with `table` set. Which of the
    /// keys below each target takes is `dm::DmTarget`'s.
    #[serde(default)]
    pub target: Option<String>,
    /// The lower device; for delay, the read device.
    #[serde(default)]
    pub device: Option<String>,
    /// delay target: read delay in ms, and a separate write delay.
    #[serde(default)]
    pub read_ms: Option<Scalar>,
    #[serde(default)]
    pub write_ms: Option<Scalar>,
    /// delay target: writes go here (default: `device`).
    #[serde(default)]
    pub write_device: Option<String>,
    /// delay target: flushes go to their own device with their own delay.
    #[serde(default)]
    pub flush_device: Option<String>,
    #[serde(default)]
    pub flush_ms: Option<Scalar>,
    /// flakey target: seconds up, then seconds failing every I/O.
    #[serde(default)]
    pub up_s: Option<Scalar>,
    #[serde(default)]
    pub down_s: Option<Scalar>,
    /// Table size in 512-byte sectors; the lower device's size when
    /// absent (zero and error without a device: 1 GiB).
    #[serde(default)]
    pub sectors: Option<Scalar>,
    /// A raw table, passed to `dmsetup create --table`.
    #[serde(default)]
    pub table: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KnobDef {
    pub path: String,
    pub value: Scalar,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModuleParamDef {
    pub module: String,
    pub param: String,
    pub value: Scalar,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NullBlkDeviceDef {
    pub name: String,
    /// configfs attributes, e.g. `memory_backed: 1`, `size: 1024` (MiB).
    #[serde(flatten)]
    pub attrs: std::collections::BTreeMap<String, Scalar>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MkfsDef {
    pub fs: String,
    pub device: String,
    #[serde(default)]
    pub options: String,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MountDef {
    pub device: String,
    pub dir: String,
    #[serde(default)]
    pub fs: Option<String>,
    #[serde(default)]
    pub options: String,
}

/// `cgroup: {name: lab, device: /dev/nullb0, rbps: 10MB/s}`: the group
/// is made under the cgroup2 root with the io controller on, its limits
/// are written to `io.max` for the device and read back, the workload
/// runs in it, and teardown removes it. Values are templates.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CgroupDef {
    pub name: String,
    /// The device the limits apply to: one the boot or setup makes.
    pub device: String,
    #[serde(default)]
    pub rbps: Option<Scalar>,
    #[serde(default)]
    pub wbps: Option<Scalar>,
    #[serde(default)]
    pub riops: Option<Scalar>,
    #[serde(default)]
    pub wiops: Option<Scalar>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShellDef {
    pub run: String,
    #[serde(default)]
    pub undo: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Workload {
    Fio(Box<FioDef>),
    Command(CommandDef),
}

/// `workload:` is a workload, or the name of one in `workloads:`
/// (usually a template such as `"{{ wl }}"`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum WorkloadRef {
    Named(String),
    Inline(Workload),
}

impl<'de> Deserialize<'de> for WorkloadRef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = WorkloadRef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("{fio: ...}, {command: ...} or the name of a workload")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(WorkloadRef::Named(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(WorkloadRef::Inline)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// fio options as a map (`{rw: randwrite, bs: 4k}`) or in fio's
/// command-line form (`--rw=randwrite --bs=4k --group_reporting`).
/// Planning turns the line into the map; a flag has an empty value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum FioOptions {
    Line(String),
    Map(std::collections::BTreeMap<String, Scalar>),
}

impl<'de> Deserialize<'de> for FioOptions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = FioOptions;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("fio options: a map, or a line such as \"--rw=read --bs=4k\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(FioOptions::Line(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(FioOptions::Map)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// One job of a multi-job fio workload; its metrics are `<name>.<metric>`.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FioJobDef {
    pub name: String,
    #[serde(default)]
    pub options: Option<FioOptions>,
}

/// The direction a fio `rw=` moves data: `read`, `write`, `both` for a
/// mixed job, or `trim`. fio's default is a sequential read.
pub fn fio_direction(rw: &str) -> &'static str {
    match rw {
        "write" | "randwrite" | "trimwrite" => "write",
        "rw" | "readwrite" | "randrw" => "both",
        "trim" | "randtrim" => "trim",
        _ => "read",
    }
}

/// The fio `rw=` a person's label for a direction names: `randread`,
/// `rand read`, `random write`, `seq read`, `overwrite` (a write over
/// data already there), `mixed`, `rw`. None when any word of the label
/// is not one of a direction's (`read IOPS`, `4k read` are not labels
/// of a direction alone), so a column of such labels is an rw axis.
pub fn fio_rw_named(label: &str) -> Option<&'static str> {
    let l = label.trim().to_ascii_lowercase();
    let mut random = None;
    let (mut reads, mut writes, mut trims, mut both) = (false, false, false, false);
    for w in l
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let (r, rest) = match w {
            "rand" | "random" => (Some(true), ""),
            "seq" | "sequential" => (Some(false), ""),
            _ => match w.strip_prefix("rand").or_else(|| w.strip_prefix("random")) {
                Some(rest) => (Some(true), rest),
                None => match w.strip_prefix("seq") {
                    Some(rest) => (Some(false), rest),
                    None => (None, w),
                },
            },
        };
        if r.is_some() {
            if random.is_some_and(|x| Some(x) != r) {
                return None;
            }
            random = r;
        }
        match rest {
            "" => {}
            "read" | "reads" | "rd" => reads = true,
            "write" | "writes" | "wr" | "overwrite" | "overwrites" => writes = true,
            "trim" | "trims" | "discard" => trims = true,
            "rw" | "readwrite" | "mixed" => both = true,
            _ => return None,
        }
    }
    // fio spells a random direction with `rand` before the sequential one.
    let (seq, rand) = match (reads, writes, trims, both || (reads && writes)) {
        (_, _, false, true) => ("rw", "randrw"),
        (true, false, false, false) => ("read", "randread"),
        (false, true, false, false) => ("write", "randwrite"),
        (false, false, true, false) => ("trim", "randtrim"),
        _ => return None,
    };
    Some(if random.unwrap_or(false) { rand } else { seq })
}

/// A fio workload. Every value may be a template. The named fields,
/// any other fio option written beside them (`time_based: 1`,
/// `directory: /mnt/xfs`, `iodepth_batch_submit: 8`) and `options` are
/// fio's global options; `jobs` run in one invocation. Other keys are
/// taken as fio's own option names, as a reviewer copies them from a
/// mail; the names are checked for fio's syntax at plan time, and the
/// ones lab sets itself are refused.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
pub struct FioDef {
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub rw: Option<Scalar>,
    #[serde(default)]
    pub bs: Option<Scalar>,
    #[serde(default)]
    pub direct: Option<Scalar>,
    #[serde(default)]
    pub ioengine: Option<Scalar>,
    #[serde(default)]
    pub iodepth: Option<Scalar>,
    #[serde(default)]
    pub numjobs: Option<Scalar>,
    /// Seconds; fio's `time_based` is set with it.
    #[serde(default)]
    pub runtime: Option<Scalar>,
    #[serde(default)]
    pub number_ios: Option<Scalar>,
    #[serde(default)]
    pub size: Option<Scalar>,
    #[serde(default)]
    pub hipri: Option<Scalar>,
    #[serde(default)]
    pub fsync: Option<Scalar>,
    #[serde(default)]
    pub fdatasync: Option<Scalar>,
    /// Any other fio option, passed as `--key=value`.
    #[serde(default)]
    pub extra: std::collections::BTreeMap<String, Scalar>,
    /// fio options written beside the named fields; the plan moves them
    /// into `extra`.
    #[serde(default, flatten)]
    pub beside: std::collections::BTreeMap<String, Scalar>,
    /// More global options, as a map or a command line.
    #[serde(default)]
    pub options: Option<FioOptions>,
    /// Jobs run side by side in one fio; empty means one job, `lab`.
    #[serde(default)]
    pub jobs: Vec<FioJobDef>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CommandDef {
    pub run: String,
    /// Metrics read from stdout: name → regex with one capture group.
    pub metrics: Vec<CommandMetricDef>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CommandMetricDef {
    pub name: String,
    pub regex: String,
    #[serde(default)]
    pub unit: String,
    /// Multiply the captured number by this to get the stored unit.
    #[serde(default)]
    pub scale: Option<f64>,
}

/// How a mail's table maps onto the matrix: where the table is, what
/// its rows and columns are, and which metric its numbers measure.
/// Checked by `matrix::claims`; the shapes are in the README.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClaimDef {
    /// The mail holding the table; the variant's patch mail when absent.
    #[serde(default)]
    pub source: Option<ClaimSourceDef>,
    /// The variant whose patch mail holds the table (when no `source`),
    /// and the variant of every value when neither rows nor columns
    /// name one.
    #[serde(default)]
    pub from_variant: Option<Loc<String>>,
    /// Which table of the source, counting from 1.
    #[serde(default = "first")]
    pub table: Loc<usize>,
    /// The key column that holds the row key, for `row_axis`.
    #[serde(default)]
    pub row_column: Option<String>,
    /// Rows are values of this axis.
    #[serde(default)]
    pub row_axis: Option<Loc<String>>,
    /// Rows keyed by several columns: one axis per key column, in order.
    #[serde(default)]
    pub row_axes: Vec<Loc<String>>,
    /// Rows that are variants or metrics rather than axis values.
    #[serde(default)]
    pub rows: Option<Loc<RowsDef>>,
    /// For `rows: metric`: row label → metric. Otherwise column → metric,
    /// for a table whose columns measure different things (`IOPS`, `sys`).
    #[serde(default)]
    pub metrics: std::collections::BTreeMap<String, String>,
    /// The group headers above blocks of rows (the first key column) are
    /// values of this axis.
    #[serde(default)]
    pub group_axis: Option<Loc<String>>,
    /// Table column → variant, or → axis value with `column_axis`.
    #[serde(default)]
    pub columns: std::collections::BTreeMap<String, String>,
    /// Row label → what it stands for, when the mail names it otherwise:
    /// `{unpatched: before}` for `rows: variant`, `{QD32: 32}` for an axis.
    #[serde(default)]
    pub aliases: std::collections::BTreeMap<String, String>,
    /// Row label → the variant its values belong to, whatever their
    /// column: `before: 9812 IOPS` in a list that also has `lat: 5 -> 4`.
    #[serde(default)]
    pub row_variants: std::collections::BTreeMap<String, String>,
    /// Columns are values of this axis; `columns` may rename them.
    #[serde(default)]
    pub column_axis: Option<Loc<String>>,
    /// Every value measures this metric (unless `rows: metric`).
    #[serde(default)]
    pub metric: Option<Loc<String>>,
    /// The unit of the claimed values when the table names none.
    #[serde(default)]
    pub unit: Option<Loc<String>>,
    /// Allowed relative difference, e.g. `15%`; [`DEFAULT_TOLERANCE`]
    /// when absent, as a reviewer writing a quick check expects.
    #[serde(default = "default_tolerance")]
    pub tolerance: Loc<String>,
    /// The conditions the claim was measured under, e.g. `{arch: arm64, hz: 100}`.
    #[serde(default)]
    pub conditions: std::collections::BTreeMap<String, Loc<Scalar>>,
}

/// Where a claim's table is.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged, deny_unknown_fields)]
pub enum ClaimSourceDef {
    /// A mail, an mbox thread, a commit message or a text file.
    Mail { mail: String },
    /// A message matched in the `--mail` and `--claims` files.
    MessageId {
        #[serde(rename = "message-id")]
        message_id: String,
    },
}

/// What a claim's rows are, when not axis values.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RowsDef {
    Variant,
    Metric,
    /// Each row is one run of the same measurement; its key only numbers
    /// it (`(1) iops`, `(2) iops`): every row binds to the same cells.
    Run,
}

/// The tolerance of a claim that gives none: the one `lab new` writes.
pub const DEFAULT_TOLERANCE: &str = "15%";

fn default_tolerance() -> Loc<String> {
    Spanned::new(
        DEFAULT_TOLERANCE.to_string(),
        serde_saphyr::Location::UNKNOWN,
        serde_saphyr::Location::UNKNOWN,
    )
}

fn first() -> Loc<usize> {
    Spanned::new(
        1,
        serde_saphyr::Location::UNKNOWN,
        serde_saphyr::Location::UNKNOWN,
    )
}

#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct VerdictDef {
    /// A change smaller than this is `no change`, e.g. `5%`.
    #[serde(default)]
    pub noise: Option<crate::units::Percent>,
    /// A coefficient of variation above this flags a cell, e.g. `10%`.
    #[serde(default)]
    pub max_cv: Option<crate::units::Percent>,
    /// Metrics whose regressions fail CI; all shown metrics when empty.
    #[serde(default)]
    pub gate: Vec<String>,
    /// Which variant is the baseline; the first variant when absent.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Lower is better for these metrics, e.g. latencies. Defaults by name.
    #[serde(default)]
    pub lower_is_better: Vec<String>,
}

/// `contention: {retries: 2, psi_some: 10%, qemu_wait: 5%, others_cpu: 20%, quiet_wait: 60}`
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContentionDef {
    /// Re-runs of a contended timing cell once the host is quiet.
    #[serde(default)]
    pub retries: Option<Loc<u32>>,
    /// Host CPU pressure over a cell above which it is contended.
    #[serde(default)]
    pub psi_some: Option<Loc<String>>,
    /// QEMU's run-queue wait over a cell above which it is contended.
    #[serde(default)]
    pub qemu_wait: Option<Loc<String>>,
    /// Other processes' CPU time over a cell (percent of one core) above
    /// which QEMU's wait counts as contention.
    #[serde(default)]
    pub others_cpu: Option<Loc<String>>,
    /// Seconds to wait for a quiet host before a re-run.
    #[serde(default)]
    pub quiet_wait: Option<Loc<u64>>,
}

/// A partial axis map for `exclude:` and `only:`: axis → value or values.
pub type AxisPick = OrderedMap<Loc<OneOrMany>>;

/// One value or a list of values.
#[derive(Debug, Clone, PartialEq)]
pub enum OneOrMany {
    One(Scalar),
    Many(Vec<Scalar>),
}

impl OneOrMany {
    pub fn values(&self) -> Vec<&Scalar> {
        match self {
            OneOrMany::One(s) => vec![s],
            OneOrMany::Many(v) => v.iter().collect(),
        }
    }
}

impl<'de> Deserialize<'de> for OneOrMany {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = OneOrMany;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an axis value or a list of values")
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(OneOrMany::One(Scalar::Bool(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(OneOrMany::One(Scalar::Int(v)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map(|v| OneOrMany::One(Scalar::Int(v)))
                    .map_err(E::custom)
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(OneOrMany::One(Scalar::Float(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(OneOrMany::One(Scalar::Str(v.to_string())))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                s: A,
            ) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(s))
                    .map(OneOrMany::Many)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A derived metric: an expression, or `{expr: ..., unit: ...}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DerivedFull {
    pub expr: String,
    #[serde(default)]
    pub unit: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct DerivedDef(pub DerivedFull);

impl<'de> Deserialize<'de> for DerivedDef {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = DerivedDef;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an expression, or {expr: ..., unit: ...}")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(DerivedDef(DerivedFull {
                    expr: v.to_string(),
                    unit: None,
                }))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> Result<Self::Value, A::Error> {
                Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(m))
                    .map(DerivedDef)
            }
        }
        d.deserialize_any(Visit)
    }
}

/// A YAML scalar kept with its type, so `{{ delay }}` renders as `1`, not `"1"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::Int(i) => write!(f, "{i}"),
            Scalar::Float(x) => write!(f, "{x}"),
            Scalar::Str(s) => f.write_str(s),
        }
    }
}

impl Scalar {
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A YAML mapping that keeps the order it was written in, and the location
/// of each key. Axis values keep their order: `100, 250, 1000`.
#[derive(Debug)]
pub struct OrderedMap<V>(pub Vec<(Loc<Scalar>, V)>);

impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = OrderedMap<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<Loc<Scalar>, V>()? {
                    out.push((k, v));
                }
                Ok(OrderedMap(out))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
    }
}
