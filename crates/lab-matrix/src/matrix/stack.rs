//! Setup steps checked at plan time: device-mapper stacks name only
//! devices that exist in the guest or that an earlier step made, and
//! every name or path that reaches the guest shell has a safe shape.
//! (The guest quotes them anyway; this catches typos before a boot.)

use super::expand::BootSpec;
use super::schema::{DmDef, SetupStep};

/// Characters of a device-mapper name, a null_blk name, a module or
/// a parameter.
fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 127
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-+".contains(c))
}

/// Characters of a device or directory path.
pub fn is_path(s: &str) -> bool {
    s.starts_with('/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
}

/// What the guest has before the first step: null_blk module devices
/// and emulated NVMe namespaces.
struct Devices {
    nullb: u64,
    nvme: usize,
    made: Vec<String>,
    /// A configfs null_blk device exists: its index is the kernel's choice.
    configfs_nullb: bool,
    /// A shell step may have made anything.
    shell: bool,
    /// Directories a mount step mounted.
    mounts: Vec<String>,
    /// The last error was a device nothing makes, not a malformed step.
    missing: bool,
    /// A step made the cgroup the workload runs in.
    cgroup: bool,
}

impl Devices {
    fn has(&self, dev: &str) -> bool {
        if self.shell || self.made.iter().any(|m| m == dev) {
            return true;
        }
        if let Some(n) = dev
            .strip_prefix("/dev/nullb")
            .and_then(|n| n.parse::<u64>().ok())
        {
            return self.configfs_nullb || n < self.nullb;
        }
        // /dev/ngXnY is the namespace's generic character device (kernels
        // from 5.13), for io_uring passthrough.
        if let Some((c, ns)) = dev
            .strip_prefix("/dev/nvme")
            .or_else(|| dev.strip_prefix("/dev/ng"))
            .and_then(|r| r.split_once('n'))
            && let (Ok(c), Ok(ns)) = (c.parse::<usize>(), ns.parse::<u32>())
        {
            return c < self.nvme && ns == 1;
        }
        false
    }

    fn known(&self) -> String {
        let mut v: Vec<String> = (0..self.nullb).map(|i| format!("/dev/nullb{i}")).collect();
        v.extend((0..self.nvme).map(|i| format!("/dev/nvme{i}n1")));
        v.extend((0..self.nvme).map(|i| format!("/dev/ng{i}n1")));
        v.extend(self.made.iter().cloned());
        if v.is_empty() {
            "none".into()
        } else {
            v.join(", ")
        }
    }
}

/// Check one cell's rendered steps; the error names the step's index
/// and key, and the caller adds the step's location.
fn check(steps: &[SetupStep], boot: &BootSpec) -> Result<Devices, (usize, String, bool)> {
    // null_blk is built in: without parameters it makes /dev/nullb0.
    let nullb = if boot.null_blk.is_empty() {
        1
    } else {
        boot.null_blk
            .get("nr_devices")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1)
    };
    let mut d = Devices {
        nullb,
        nvme: boot.nvme.len(),
        made: vec![],
        configfs_nullb: false,
        shell: false,
        mounts: vec![],
        missing: false,
        cgroup: false,
    };
    for (i, s) in steps.iter().enumerate() {
        step(s, &mut d).map_err(|e| (i, e, d.missing))?;
    }
    Ok(d)
}

/// Why fio would refuse `value` for option `key`, for the options whose
/// values lab checks before a guest runs them: `numjobs` and `iodepth`
/// take a whole number, `runtime` also a duration (`30s`).
pub fn fio_value_error(key: &str, value: &str) -> Option<String> {
    let checked = matches!(key, "numjobs" | "iodepth" | "runtime");
    let ok = value.trim().parse::<u64>().is_ok() || (key == "runtime" && is_duration(value));
    (checked && !ok).then(|| format!("{key} '{value}': fio takes a whole number here"))
}

/// Check one cell: its steps (the error names the step's index), then
/// that its fio job opens something the boot or a step makes: a device
/// of the boot, a `/dev/mapper/NAME` of a dm step, or a file under a
/// mount. A job on a file of the guest's root file system measures the
/// image, not the device under test.
pub fn check_cell(
    steps: &[SetupStep],
    workload: Option<&super::schema::Workload>,
    boot: &BootSpec,
) -> Result<(), CellError> {
    let d = check(steps, boot).map_err(|(i, msg, missing)| CellError {
        step: Some(i),
        msg,
        missing,
    })?;
    let Some(super::schema::Workload::Fio(f)) = workload else {
        return Ok(());
    };
    // fio takes a whole number for these; `50%` (lkp's share of CPUs)
    // or `4 jobs` would fail in the guest, after the kernel builds.
    for (k, v) in [
        ("numjobs", &f.numjobs),
        ("iodepth", &f.iodepth),
        ("runtime", &f.runtime),
    ] {
        if let Some(e) = v.as_ref().and_then(|v| fio_value_error(k, &v.to_string())) {
            return Err(CellError::workload(e, false));
        }
    }
    if d.shell {
        return Ok(());
    }
    // fio opens a relative name in `directory` (or where it runs).
    let files = |filename: Option<String>, directory: Option<String>| match (filename, directory) {
        (Some(names), dir) => Some(
            names
                .split(':')
                .map(|n| match &dir {
                    Some(d) if !n.starts_with('/') => format!("{}/{n}", d.trim_end_matches('/')),
                    _ => n.to_string(),
                })
                .collect::<Vec<_>>(),
        ),
        (None, Some(dir)) => Some(vec![format!("{}/", dir.trim_end_matches('/'))]),
        (None, None) => None,
    };
    let global = files(
        f.filename.clone(),
        f.extra.get("directory").map(|v| v.to_string()),
    );
    // Each job opens its own file, or the global one.
    let per_job: Option<Vec<String>> = f
        .jobs
        .iter()
        .map(|j| match &j.options {
            Some(super::schema::FioOptions::Map(m)) => files(
                m.get("filename").map(|v| v.to_string()),
                m.get("directory").map(|v| v.to_string()),
            )
            .or_else(|| global.clone()),
            _ => global.clone(),
        })
        .collect::<Option<Vec<_>>>()
        .map(|v| v.concat());
    let files: Vec<String> = match (global.clone(), per_job) {
        (_, Some(jobs)) if !f.jobs.is_empty() => jobs,
        (Some(g), _) => g,
        _ => {
            return Err(CellError::workload(
                "filename: the fio job names no file or device, so it would write into the \
                 guest's root file system; give filename: a device of the boot, \
                 /dev/mapper/NAME of a dm step, or a file under a mount"
                    .into(),
                true,
            ));
        }
    };
    for file in &files {
        if file.starts_with("/dev/") {
            if !d.has(file) {
                return Err(CellError::workload(
                    format!(
                        "filename '{file}': no device of the boot and no setup step makes it \
                         (known: {})",
                        d.known()
                    ),
                    true,
                ));
            }
        } else if !d.mounts.iter().any(|m| under(file, m)) {
            let mounts = if d.mounts.is_empty() {
                "none".to_string()
            } else {
                d.mounts.join(", ")
            };
            return Err(CellError::workload(
                format!(
                    "filename '{file}': not under a directory a mount step mounts (mounts: {mounts}); \
                     add mkfs and mount steps, or name a device"
                ),
                true,
            ));
        }
    }
    // fio makes a file only when told how big (it fails with "you need
    // to specify size=" after the kernels are built).
    let sized = f.size.is_some()
        || ["size", "filesize", "io_size"]
            .iter()
            .any(|k| f.extra.contains_key(*k))
        || f.options.is_some()
        || !f.jobs.is_empty();
    if let Some(file) = files
        .iter()
        .find(|f| !f.starts_with("/dev/"))
        .filter(|_| !sized)
    {
        return Err(CellError::workload(
            format!(
                "filename '{file}': fio makes a file only when told its size; give size: (or \
                 filesize:), small enough that every job's file fits the device"
            ),
            false,
        ));
    }
    Ok(())
}

/// A cell that needs a device or a file that nothing in it makes: the
/// matrix is well formed but cannot run as written. It sits in the error
/// chain so that `lab new` can tell a draft it could not finish from a
/// bug of its own.
#[derive(Debug)]
pub struct Unrunnable(pub String);

impl std::fmt::Display for Unrunnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unrunnable {}

/// What [`check_cell`] found wrong: a setup step (by index) or, without
/// one, the workload.
#[derive(Debug)]
pub struct CellError {
    pub step: Option<usize>,
    pub msg: String,
    /// It needs a device or file that nothing makes ([`Unrunnable`]).
    pub missing: bool,
}

impl CellError {
    fn workload(msg: String, missing: bool) -> CellError {
        CellError {
            step: None,
            msg,
            missing,
        }
    }
}

/// fio's time values: `30`, `30s`, `2m`, `500ms`.
fn is_duration(s: &str) -> bool {
    let s = s.trim();
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    !digits.is_empty()
        && digits.parse::<u64>().is_ok()
        && ["", "s", "m", "h", "ms", "us", "d"].contains(&&s[digits.len()..])
}

/// Whether `path` is `dir` or under it.
fn under(path: &str, dir: &str) -> bool {
    let dir = dir.trim_end_matches('/');
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn need(d: &mut Devices, key: &str, dev: &str) -> Result<(), String> {
    if !is_path(dev) {
        return Err(format!(
            "{key} '{dev}': a device is an absolute path of letters, digits and /._-+:@"
        ));
    }
    if !d.has(dev) {
        d.missing = true;
        return Err(format!(
            "{key} '{dev}' does not exist in the guest and no earlier step makes it (known: {})",
            d.known()
        ));
    }
    Ok(())
}

fn number(key: &str, v: &Option<super::Scalar>) -> Result<(), String> {
    match v {
        None => Ok(()),
        Some(v) if v.to_string().parse::<u64>().is_ok() => Ok(()),
        Some(v) => Err(format!("{key} '{v}' is not a whole number")),
    }
}

fn dm(x: &DmDef, d: &mut Devices) -> Result<(), String> {
    if !is_name(&x.name) {
        return Err(format!(
            "dm.name '{}': use letters, digits and ._-+ (at most 127)",
            x.name
        ));
    }
    for (k, v) in [
        ("dm.device", &x.device),
        ("dm.write_device", &x.write_device),
        ("dm.flush_device", &x.flush_device),
    ] {
        if let Some(v) = v {
            need(d, k, v)?;
        }
    }
    for (k, v) in [
        ("dm.read_ms", &x.read_ms),
        ("dm.write_ms", &x.write_ms),
        ("dm.flush_ms", &x.flush_ms),
        ("dm.up_s", &x.up_s),
        ("dm.down_s", &x.down_s),
        ("dm.sectors", &x.sectors),
    ] {
        number(k, v)?;
    }
    // Which keys each target takes, and which it needs, is the enum's.
    super::dm::DmTarget::from_def(x)?;
    let node = format!("/dev/mapper/{}", x.name);
    if d.made.contains(&node) {
        return Err(format!("dm.name '{}' is made twice", x.name));
    }
    d.made.push(node);
    Ok(())
}

fn step(s: &SetupStep, d: &mut Devices) -> Result<(), String> {
    match s {
        SetupStep::Dm(x) => dm(x, d)?,
        SetupStep::NullBlk(n) => {
            if !is_name(&n.name) {
                return Err(format!(
                    "null_blk.name '{}': use letters, digits and ._-+",
                    n.name
                ));
            }
            for k in n.attrs.keys() {
                if !is_name(k) {
                    return Err(format!(
                        "null_blk attribute '{k}': not a configfs attribute name"
                    ));
                }
            }
            d.configfs_nullb = true;
            d.made.push(format!("/dev/{}", n.name));
        }
        SetupStep::ModuleParam(m) => {
            for (k, v) in [
                ("module_param.module", &m.module),
                ("module_param.param", &m.param),
            ] {
                if !is_name(v) {
                    return Err(format!("{k} '{v}': use letters, digits and ._-+"));
                }
            }
        }
        SetupStep::Knob(k) => {
            if !is_path(&k.path) {
                return Err(format!(
                    "knob.path '{}': an absolute path of letters, digits and /._-+:@",
                    k.path
                ));
            }
        }
        SetupStep::Mkfs(m) => {
            if !is_name(&m.fs) {
                return Err(format!("mkfs.fs '{}': a file system name, e.g. xfs", m.fs));
            }
            need(d, "mkfs.device", &m.device)?;
        }
        SetupStep::Mount(m) => {
            // `tmpfs`, `none`: a source that is not a device.
            if !(is_name(&m.device) && m.fs.is_some()) {
                need(d, "mount.device", &m.device)?;
            }
            if !is_path(&m.dir) {
                return Err(format!(
                    "mount.dir '{}': an absolute path of letters, digits and /._-+:@",
                    m.dir
                ));
            }
            d.mounts.push(m.dir.clone());
        }
        SetupStep::Shell(_) => d.shell = true,
        SetupStep::Cgroup(c) => {
            if let Some(e) = super::cgroup::name_error(&c.name) {
                return Err(e);
            }
            if d.cgroup {
                return Err(format!(
                    "cgroup '{}': a cell's workload runs in one cgroup, and this is its second",
                    c.name
                ));
            }
            need(d, "cgroup.device", &c.device)?;
            c.limits()?;
            d.cgroup = true;
        }
    }
    Ok(())
}
