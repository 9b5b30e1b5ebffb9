//! The matrix: parse a YAML file, validate it, expand it into cells.
//!
//! Everything here is pure apart from reading the matrix and its
//! fragments, so `lab plan` has no side effects and the expansion is
//! tested without a kernel in sight.

mod arch;
pub mod cgroup;
mod checks;
pub mod claims;
pub mod derived;
pub mod dm;
pub mod exclude;
pub mod expand;
mod filter;
pub mod fioopts;
pub mod fragments;
pub mod fs;
pub mod limits;
pub mod perf;
pub mod schema;
pub mod shard;
mod stack;
pub use stack::{fio_value_error, is_path};
pub mod template;
mod validate;
mod yaml_error;

pub use arch::{ARCHES, Arch, ArchFacts, Qemu};
pub use dm::DmTarget;
pub use expand::{BootSpec, CellSpec, KernelSpec, Plan, ScheduledBoot};
pub use filter::Filter;
pub use fragments::Fragment;
pub use schema::{Scalar, SetupStep, Workload};
/// The words of the plan error for a fio target no step creates; `lab new`
/// looks for them to say its draft is not runnable.
pub use stack::Unrunnable;

use anyhow::{Result, anyhow};
use schema::{KernelAxisDef, Loc, MatrixFile, OrderedMap, PatchDef, VariantDef};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The kernel source a matrix builds from.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A tarball such as Debian's `/usr/src/linux-source-6.12.tar.xz`.
    Tarball {
        path: PathBuf,
        debian_package: Option<String>,
    },
    /// A git tree and a ref in it.
    Git { repo: PathBuf, git_ref: String },
}

/// The default: Debian's linux-source-6.12, which `lab doctor --install` brings.
pub const DEFAULT_SOURCE: &str = "debian-6.12";

/// The HZ values the kernel offers.
pub const HZ_VALUES: [u32; 4] = [100, 250, 300, 1000];

/// The Debian sources lab knows by name.
pub const NAMED_SOURCES: [&str; 3] = ["debian-5.10", "debian-6.1", "debian-6.12"];

impl Source {
    /// Short words for a plan: `linux-source-6.1`, a path, `repo@ref`.
    pub fn label(&self) -> String {
        match self {
            Source::Tarball {
                debian_package: Some(p),
                ..
            } => p.clone(),
            Source::Tarball { path, .. } => path.display().to_string(),
            Source::Git { repo, git_ref } => format!("{}@{git_ref}", repo.display()),
        }
    }

    /// `debian-6.1` → Debian's linux-source-6.1 tarball.
    pub fn named(name: &str) -> Option<Source> {
        if !NAMED_SOURCES.contains(&name) {
            return None;
        }
        let version = name.strip_prefix("debian-")?;
        Some(Source::Tarball {
            path: PathBuf::from(format!("/usr/src/linux-source-{version}.tar.xz")),
            debian_package: Some(format!("linux-source-{version}")),
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum BaseConfig {
    /// A `make` target: tinyconfig, defconfig, allnoconfig.
    Target(String),
    /// A full .config file.
    File(PathBuf),
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Variant {
    pub name: String,
    pub description: String,
    pub patches: Vec<PatchDef>,
    pub fuzz: u8,
    /// This variant's own source, over the matrix's.
    pub source: Option<Source>,
}

/// One axis: a name and its values in the order they were written.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Axis {
    pub name: String,
    pub values: Vec<AxisValue>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AxisValue {
    pub value: Scalar,
    /// Fragments this value adds to a kernel (kernel axes only).
    pub fragments: Vec<Fragment>,
    /// The source this value builds from (kernel axes only).
    pub source: Option<Source>,
}

/// A matrix that parsed and passed every check.
#[derive(Clone, Debug, Serialize)]
pub struct Matrix {
    pub path: PathBuf,
    pub name: String,
    pub description: String,
    pub source: Source,
    pub base: BaseConfig,
    pub fragments: Vec<Fragment>,
    pub variants: Vec<Variant>,
    pub arches: Vec<Arch>,
    /// Kernel axes other than `arch`.
    pub kernel_axes: Vec<Axis>,
    pub boot_axes: Vec<Axis>,
    pub run_axes: Vec<Axis>,
    pub boot: schema::BootDef,
    pub setup: Vec<SetupStep>,
    /// Where each setup step is written: (line, column).
    pub setup_at: Vec<(usize, usize)>,
    /// Named workloads, in the order written.
    pub workloads: Vec<(String, Workload)>,
    pub workload: Option<schema::WorkloadRef>,
    /// Where `workload:` is written: (line, column).
    pub workload_at: (usize, usize),
    /// Combinations dropped from the product, and the only ones kept.
    pub exclude: Vec<exclude::Pick>,
    pub only: Vec<exclude::Pick>,
    pub derived: Vec<derived::DerivedSpec>,
    pub metrics: Vec<String>,
    pub repetitions: u32,
    pub interleave: bool,
    pub timing: bool,
    pub claims: Vec<schema::ClaimDef>,
    pub verdict: schema::VerdictDef,
    pub contention: ContentionPolicy,
    /// perf counters around each workload (`perf:`).
    pub perf: Option<perf::Perf>,
    /// Guest image extras (`image: {extras: [...]}`; `perf` when `perf:` is set).
    pub image_extras: Vec<String>,
    /// The file's bytes, hashed into the run's identity.
    #[serde(skip)]
    pub text: String,
}

/// A located error: `file:line:col: message`.
pub fn err_at<T>(file: &Path, loc: &Loc<T>, msg: impl std::fmt::Display) -> anyhow::Error {
    let l = &loc.referenced;
    if l.line() == 0 {
        anyhow!("{}: {msg}", file.display())
    } else {
        anyhow!("{}:{}:{}: {msg}", file.display(), l.line(), l.column())
    }
}

/// A cell or boot id as a directory name: readable, safe, and distinct
/// ids that would map to one name are refused at plan time (checks.rs).
pub fn dir_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._=,-@+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Matrix {
    pub fn load(path: &Path) -> Result<Matrix> {
        Matrix::load_limited(path, limits::DEFAULT_MAX_CELLS)
    }

    /// `load`, refusing a plan of more than `max_cells` cell runs.
    pub fn load_limited(path: &Path, max_cells: usize) -> Result<Matrix> {
        let data = crate::util::read_input(path, "the matrix", crate::util::MAX_SMALL_INPUT)?;
        let text = String::from_utf8(data).map_err(|e| {
            let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            crate::error::input_error(format!(
                "{}:{line}: the matrix is not UTF-8 text",
                path.display()
            ))
        })?;
        Matrix::parse_limited(path, &text, max_cells)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Matrix> {
        Matrix::parse_limited(path, text, limits::DEFAULT_MAX_CELLS)
    }

    fn parse_limited(path: &Path, text: &str, max_cells: usize) -> Result<Matrix> {
        let file: MatrixFile =
            crate::util::from_yaml(text).map_err(|e| yaml_error::describe(path, text, &e))?;
        validate(path, text, file, max_cells)
    }

    /// A kernel axis by name, `arch` included.
    pub fn kernel_axis_names(&self) -> Vec<String> {
        std::iter::once("arch".to_string())
            .chain(self.kernel_axes.iter().map(|a| a.name.clone()))
            .collect()
    }

    pub fn variant(&self, name: &str) -> Option<&Variant> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// Every axis name a filter or a template may use.
    pub fn all_axis_names(&self) -> Vec<String> {
        let mut v = self.kernel_axis_names();
        v.push("variant".into());
        v.extend(self.boot_axes.iter().map(|a| a.name.clone()));
        v.extend(self.run_axes.iter().map(|a| a.name.clone()));
        v
    }

    /// `file:line:col: msg`, or `file: msg` when the line is unknown.
    pub fn err_at_line(&self, at: (usize, usize), msg: impl std::fmt::Display) -> anyhow::Error {
        if at.0 == 0 {
            anyhow!("{}: {msg}", self.path.display())
        } else {
            anyhow!("{}:{}:{}: {msg}", self.path.display(), at.0, at.1)
        }
    }

    pub fn plan(&self) -> Result<Plan> {
        expand::expand(self)
    }
}

fn validate(path: &Path, text: &str, f: MatrixFile, max_cells: usize) -> Result<Matrix> {
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    if f.version.value != 1 {
        return Err(err_at(
            path,
            &f.version,
            format!(
                "version {} is not supported; lab reads version 1",
                f.version.value
            ),
        ));
    }

    let source = match &f.kernel.source {
        None => Source::named(DEFAULT_SOURCE).unwrap(),
        Some(loc) => validate::source(path, &dir, loc)?,
    };

    let base = base_config(path, &dir, f.kernel.base.as_ref())?;

    let dirs = fragments::search_dirs(path);
    let find = |name: &Loc<String>, what: &str| -> Result<Fragment> {
        fragments::resolve(&name.value, &dirs).ok_or_else(|| {
            err_at(path, name, format!(
                "unknown fragment '{}' in {what}: no {}.config in {} and no built-in fragment of that name (a fragment is a plain name: no '/' or '..')",
                name.value,
                name.value,
                dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" or ")
            ))
        })
    };

    let mut common = common_fragments(path, &f.kernel, &dirs, &find)?;

    let variants = variants(path, &dir, &f.variants)?;

    let (mut arches, kernel_axes) = kernel_axes(path, &dir, &f.kernel_axes, &f.variants, &find)?;
    if arches.is_empty() {
        arches.push(Arch::X86_64);
    }

    let mut seen: Vec<String> = std::iter::once("arch".to_string())
        .chain(kernel_axes.iter().map(|a| a.name.clone()))
        .collect();
    let boot_axes = plain_axes(path, f.boot_axes.as_ref(), &mut seen)?;
    let run_axes = plain_axes(path, f.run_axes.as_ref(), &mut seen)?;

    if f.repetitions.value == 0 {
        return Err(err_at(
            path,
            &f.repetitions,
            "repetitions must be at least 1",
        ));
    }

    let all_axes = axis_values(
        &arches,
        &variants,
        kernel_axes.iter().chain(&boot_axes).chain(&run_axes),
    );
    let exclude = exclude::picks(path, "exclude", f.exclude.as_ref(), &all_axes)?;
    let only = exclude::picks(path, "only", f.only.as_ref(), &all_axes)?;
    let workloads = validate::workloads(path, f.workloads.as_ref(), f.workload.as_ref())?;
    let derived = validate::derived(
        path,
        f.derived.as_ref(),
        &all_axes,
        &workloads,
        f.workload.as_ref(),
    )?;
    let (perf, image_extras) = perf::check(path, f.perf.as_ref(), f.image.as_ref())?;
    let setup_at = f
        .setup
        .iter()
        .map(|s| (s.referenced.line() as usize, s.referenced.column() as usize))
        .collect();

    let setup: Vec<SetupStep> = f.setup.into_iter().map(|s| s.value).collect();
    common.extend(dm::config_fragment(&setup, &common));
    let axes_json: Vec<(String, Vec<serde_json::Value>)> = all_axes
        .iter()
        .map(|(n, vs)| (n.clone(), vs.iter().map(Scalar::to_json).collect()))
        .collect();
    common.extend(fs::config_fragment(&setup, &common, &axes_json));
    common.extend(cgroup::config_fragment(&setup, &common));
    let m = Matrix {
        path: path.to_path_buf(),
        name: f.name,
        description: f.description,
        source,
        base,
        fragments: common,
        variants,
        arches,
        kernel_axes,
        boot_axes,
        run_axes,
        boot: f.boot,
        setup,
        setup_at,
        workloads,
        workload_at: f.workload.as_ref().map_or((0, 0), |w| {
            (w.referenced.line() as usize, w.referenced.column() as usize)
        }),
        workload: f.workload.map(|w| w.value),
        exclude,
        only,
        derived,
        metrics: f.metrics,
        repetitions: f.repetitions.value,
        interleave: f.interleave,
        timing: f.timing,
        claims: f.claims,
        verdict: f.verdict,
        contention: contention_policy(path, &f.contention)?,
        perf,
        image_extras,
        text: text.to_string(),
    };
    claims::check(&m)?;
    validate::metric_names(path, text, &m)?;
    // Every template must render for every cell; find out now, not in a guest.
    checks::check(&m, max_cells)?;
    Ok(m)
}

/// The fragments every kernel gets: `kernel.fragments` (lab's `base`
/// when none is named), then the inline `kernel.config` lines, each
/// checked to be a config line.
fn common_fragments(
    path: &Path,
    kernel: &schema::KernelSection,
    dirs: &[PathBuf],
    find: &dyn Fn(&Loc<String>, &str) -> Result<Fragment>,
) -> Result<Vec<Fragment>> {
    let mut common = Vec::new();
    if kernel.fragments.is_empty() {
        common.push(fragments::resolve("base", dirs).expect("built-in base fragment"));
    }
    for n in &kernel.fragments {
        common.push(find(n, "kernel.fragments")?);
    }
    if kernel.config.is_empty() {
        return Ok(common);
    }
    let mut text = String::new();
    for l in &kernel.config {
        if !fragments::is_config_line(&l.value) {
            return Err(err_at(
                path,
                l,
                format!(
                    "kernel.config: '{}' is not a `CONFIG_X=value` or `# CONFIG_X is not set` line",
                    l.value
                ),
            ));
        }
        text.push_str(l.value.trim());
        text.push('\n');
    }
    common.push(Fragment {
        name: "inline".into(),
        origin: format!("{}: kernel.config", path.display()),
        text,
    });
    Ok(common)
}

/// Every axis with its values, `arch` and `variant` first: what
/// `exclude:`, `only:` and derived metrics may name.
fn axis_values<'a>(
    arches: &[Arch],
    variants: &[Variant],
    axes: impl Iterator<Item = &'a Axis>,
) -> Vec<(String, Vec<Scalar>)> {
    let arch = arches
        .iter()
        .map(|a| Scalar::Str(a.name().into()))
        .collect();
    let variant = variants
        .iter()
        .map(|v| Scalar::Str(v.name.clone()))
        .collect();
    [("arch".to_string(), arch), ("variant".to_string(), variant)]
        .into_iter()
        .chain(axes.map(|a| {
            (
                a.name.clone(),
                a.values.iter().map(|v| v.value.clone()).collect(),
            )
        }))
        .collect()
}

/// `kernel.base`: a make target, or a config file next to the matrix.
fn base_config(path: &Path, dir: &Path, base: Option<&Loc<String>>) -> Result<BaseConfig> {
    Ok(match base {
        None => BaseConfig::Target("tinyconfig".into()),
        Some(b) if ["tinyconfig", "defconfig", "allnoconfig"].contains(&b.value.as_str()) => {
            BaseConfig::Target(b.value.clone())
        }
        Some(b) => {
            let p = dir.join(&b.value);
            if !p.is_file() {
                return Err(err_at(
                    path,
                    b,
                    format!(
                        "base '{}' is neither tinyconfig, defconfig, allnoconfig nor a config file ({} does not exist)",
                        b.value,
                        p.display()
                    ),
                ));
            }
            BaseConfig::File(p)
        }
    })
}

/// The variants: at least one, unique names.
fn variants(path: &Path, dir: &Path, defs: &Loc<Vec<VariantDef>>) -> Result<Vec<Variant>> {
    if defs.value.is_empty() {
        return Err(err_at(
            path,
            defs,
            "variants is empty: declare at least one variant",
        ));
    }
    let mut variants: Vec<Variant> = Vec::new();
    for v in &defs.value {
        if v.name.value.is_empty() || !is_id_safe(&v.name.value) {
            return Err(err_at(
                path,
                &v.name,
                format!(
                    "variant name '{}' must be letters, digits, '.', '_' or '-'",
                    v.name.value
                ),
            ));
        }
        if variants.iter().any(|o| o.name == v.name.value) {
            return Err(err_at(
                path,
                &v.name,
                format!("duplicate variant name '{}'", v.name.value),
            ));
        }
        let source = v
            .source
            .as_ref()
            .map(|s| validate::source(path, dir, s))
            .transpose()?;
        variants.push(Variant {
            source,
            name: v.name.value.clone(),
            description: v.description.clone(),
            patches: v
                .patches
                .iter()
                .map(|p| resolve_patch_path(dir, &p.value))
                .collect(),
            fuzz: v.fuzz,
        });
    }

    Ok(variants)
}

/// The kernel axes: `arch` is special; the rest map values to fragments
/// (and one axis may choose the source).
fn kernel_axes(
    path: &Path,
    dir: &Path,
    defs: &Loc<OrderedMap<KernelAxisDef>>,
    variant_defs: &Loc<Vec<VariantDef>>,
    find: &dyn Fn(&Loc<String>, &str) -> Result<Fragment>,
) -> Result<(Vec<Arch>, Vec<Axis>)> {
    let mut arches = Vec::new();
    let mut kernel_axes = Vec::new();
    for (name, def) in &defs.value.0 {
        let axis_name = name.value.to_string();
        check_axis_name(path, name, &axis_name)?;
        if axis_name == "arch" {
            let KernelAxisDef::Values(vals) = def else {
                return Err(err_at(
                    path,
                    name,
                    "arch takes a list, e.g. [x86_64, arm64]",
                ));
            };
            if vals.is_empty() {
                return Err(err_at(path, name, "axis 'arch' is empty"));
            }
            for v in vals {
                let a = Arch::parse(&v.value.to_string()).ok_or_else(|| {
                    err_at(
                        path,
                        v,
                        format!(
                            "unknown arch '{}': lab builds {}",
                            v.value,
                            Arch::known("and")
                        ),
                    )
                })?;
                if !arches.contains(&a) {
                    arches.push(a);
                }
            }
            continue;
        }
        let KernelAxisDef::Fragments(map) = def else {
            return Err(err_at(
                path,
                name,
                format!(
                    "kernel axis '{axis_name}' must map each value to fragments, e.g. {{100: [hz100]}}"
                ),
            ));
        };
        if map.0.is_empty() {
            return Err(err_at(path, name, format!("axis '{axis_name}' is empty")));
        }
        let mut values = Vec::new();
        for (val, def) in &map.0 {
            let what = format!("kernel_axes.{axis_name}.{}", val.value);
            let fragments = def
                .fragments()
                .iter()
                .map(|n| find(n, &what))
                .collect::<Result<Vec<_>>>()?;
            let source = match def.source() {
                None => None,
                Some(s) => {
                    if let Some(v) = variant_defs.value.iter().find(|v| v.source.is_some()) {
                        return Err(err_at(
                            path,
                            s,
                            format!(
                                "{what}.source: variant '{}' sets a source too; set sources on the variants or on one kernel axis",
                                v.name.value
                            ),
                        ));
                    }
                    Some(validate::source(path, dir, s)?)
                }
            };
            values.push(AxisValue {
                value: val.value.clone(),
                fragments,
                source,
            });
        }
        if values.iter().any(|v| v.source.is_some())
            && let Some(other) = kernel_axes
                .iter()
                .find(|a: &&Axis| a.values.iter().any(|v| v.source.is_some()))
        {
            return Err(err_at(
                path,
                name,
                format!(
                    "kernel axis '{axis_name}' sets sources, and so does '{}': one axis may choose the source",
                    other.name
                ),
            ));
        }
        kernel_axes.push(Axis {
            name: axis_name,
            values,
        });
    }
    Ok((arches, kernel_axes))
}

/// When a timing cell counts as contended, and what lab does about it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct ContentionPolicy {
    /// Re-runs of a contended cell, each after waiting for a quiet host.
    pub retries: u32,
    /// Host CPU pressure (PSI `some`) over a cell, in percent.
    pub psi_some_pct: f64,
    /// QEMU's run-queue wait over a cell, in percent of its wall time.
    pub qemu_wait_pct: f64,
    /// Other processes' CPU time over a cell, in percent of one core.
    pub others_cpu_pct: f64,
    /// Longest wait for a quiet host before a re-run, in seconds.
    pub quiet_wait_secs: u64,
}

impl Default for ContentionPolicy {
    fn default() -> Self {
        ContentionPolicy {
            retries: 2,
            psi_some_pct: 10.0,
            qemu_wait_pct: 5.0,
            // A quiet 2-core host shows under 5% (kernel threads, sshd,
            // a shell); one CPU hog 100%. Measured with
            // scripts/bench-contention (docs/fidelity.md).
            others_cpu_pct: 20.0,
            quiet_wait_secs: 60,
        }
    }
}

fn contention_policy(path: &Path, d: &schema::ContentionDef) -> Result<ContentionPolicy> {
    let mut p = ContentionPolicy::default();
    let pct = |v: &Option<Loc<String>>, default: f64| -> Result<f64> {
        match v {
            None => Ok(default),
            Some(l) => crate::units::parse_percent(&l.value)
                .map(|x| x * 100.0)
                .map_err(|e| err_at(path, l, format!("'{}': {e}", l.value))),
        }
    };
    p.psi_some_pct = pct(&d.psi_some, p.psi_some_pct)?;
    p.qemu_wait_pct = pct(&d.qemu_wait, p.qemu_wait_pct)?;
    p.others_cpu_pct = pct(&d.others_cpu, p.others_cpu_pct)?;
    if let Some(r) = &d.retries {
        if r.value > 10 {
            return Err(err_at(path, r, "contention.retries: at most 10"));
        }
        p.retries = r.value;
    }
    if let Some(w) = &d.quiet_wait {
        p.quiet_wait_secs = w.value;
    }
    Ok(p)
}

fn resolve_patch_path(dir: &Path, p: &PatchDef) -> PatchDef {
    let abs = |s: &String| dir.join(s).display().to_string();
    match p {
        PatchDef::Mail { mail } => PatchDef::Mail { mail: abs(mail) },
        PatchDef::Diff { diff } => PatchDef::Diff { diff: abs(diff) },
        PatchDef::MessageId { message_id, mail } => PatchDef::MessageId {
            message_id: message_id.clone(),
            mail: mail.as_ref().map(abs),
        },
    }
}

fn is_id_safe(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

fn check_axis_name(path: &Path, loc: &Loc<Scalar>, name: &str) -> Result<()> {
    if name == "variant" || !is_id_safe(name) || name.contains('-') {
        return Err(err_at(
            path,
            loc,
            format!("'{name}' cannot name an axis: use letters, digits and '_', and not 'variant'"),
        ));
    }
    Ok(())
}

fn plain_axes(
    path: &Path,
    axes: Option<&Loc<OrderedMap<Loc<Vec<Scalar>>>>>,
    seen: &mut Vec<String>,
) -> Result<Vec<Axis>> {
    let mut out = Vec::new();
    let Some(axes) = axes else { return Ok(out) };
    for (name, vals) in &axes.value.0 {
        let n = name.value.to_string();
        check_axis_name(path, name, &n)?;
        if seen.contains(&n) {
            return Err(err_at(path, name, format!("axis '{n}' is declared twice")));
        }
        if vals.value.is_empty() {
            return Err(err_at(path, vals, format!("axis '{n}' is empty")));
        }
        seen.push(n.clone());
        out.push(Axis {
            name: n,
            values: vals
                .value
                .iter()
                .map(|v| AxisValue {
                    value: v.clone(),
                    fragments: vec![],
                    source: None,
                })
                .collect(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod feature_tests;
#[cfg(test)]
mod tests;
