//! Expansion: a matrix becomes kernels, boots and cells, each with a
//! stable id, and a schedule saying in which order boots happen.
//!
//! Ids are made of axis values, never of positions, so adding a value to
//! an axis leaves every existing id (and its stored results) alone.

use super::derived::DerivedSpec;
use super::schema::{FioDef, FioOptions, WorkloadRef};
use super::template::{Vars, render};
use super::{Arch, Axis, Fragment, Matrix, Scalar, SetupStep, Source, Workload};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Axis name → value, in axis order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AxisValues(pub Vec<(String, Scalar)>);

// Read back in the order written: a report lists axes as the matrix did.
impl<'de> Deserialize<'de> for AxisValues {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = AxisValues;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping of axis names to values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<AxisValues, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = m.next_entry::<String, Scalar>()? {
                    v.push(e);
                }
                Ok(AxisValues(v))
            }
        }
        d.deserialize_map(Visit)
    }
}

impl AxisValues {
    pub fn get(&self, name: &str) -> Option<&Scalar> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    pub fn vars(&self) -> Vars {
        self.0
            .iter()
            .map(|(n, v)| (n.clone(), v.to_json()))
            .collect()
    }

    fn with(&self, name: &str, v: Scalar) -> AxisValues {
        let mut c = self.clone();
        c.0.push((name.to_string(), v));
        c
    }

    /// `delay=1,rw=read`
    pub fn label(&self) -> String {
        self.0
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Serialize for AxisValues {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KernelSpec {
    /// e.g. `x86_64-hz100-after`
    pub id: String,
    pub arch: Arch,
    pub variant: String,
    /// Kernel axes, `arch` first.
    pub axes: AxisValues,
    /// In merge order: common, the arch's own, then each axis's.
    pub fragments: Vec<Fragment>,
    /// The kernel whose build tree this one starts from: same source and
    /// config, and a patch series this one extends. Only its touched
    /// files rebuild.
    pub base_kernel: Option<String>,
    /// What it builds from: a kernel axis value's source, else the
    /// variant's, else the matrix's. Absent in runs made before sources
    /// could differ between kernels.
    #[serde(default)]
    pub source: Option<Source>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BootSpec {
    /// The kernel id, plus `@name=value,…` for boot axes.
    pub id: String,
    pub kernel: String,
    pub arch: Arch,
    pub variant: String,
    /// Kernel and boot axes.
    pub axes: AxisValues,
    pub cpus: u32,
    pub memory: u32,
    /// Extra kernel command line, rendered.
    pub cmdline: String,
    /// null_blk module parameters, rendered.
    pub null_blk: BTreeMap<String, String>,
    pub nvme: Vec<super::schema::NvmeDef>,
    pub ready_timeout: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellSpec {
    /// The boot id, plus `:name=value,…` for run axes.
    pub id: String,
    pub boot: String,
    pub kernel: String,
    pub arch: Arch,
    pub variant: String,
    /// Every axis: kernel, boot and run, plus `variant`.
    pub axes: AxisValues,
    pub run_axes: AxisValues,
    /// Setup and workload with every template rendered.
    pub setup: Vec<SetupStep>,
    pub workload: Option<Workload>,
    /// Metrics the run computes from the workload's and the axes', per
    /// repetition (the matrix's `derived:`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<DerivedSpec>,
}

/// One boot in the order the run performs them.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScheduledBoot {
    pub boot: String,
    /// Repetition, from 1.
    pub rep: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    pub matrix: String,
    pub kernels: Vec<KernelSpec>,
    pub boots: Vec<BootSpec>,
    pub cells: Vec<CellSpec>,
    pub repetitions: u32,
    pub schedule: Vec<ScheduledBoot>,
    /// Every axis of each combination `exclude:` or `only:` dropped, so
    /// a report can tell "excluded" (n/a) from "missing".
    #[serde(default)]
    pub excluded: Vec<AxisValues>,
    /// Metrics the run computes from others, per repetition.
    #[serde(default)]
    pub derived: Vec<DerivedSpec>,
}

impl Plan {
    pub fn kernel(&self, id: &str) -> Option<&KernelSpec> {
        self.kernels.iter().find(|k| k.id == id)
    }
    pub fn boot(&self, id: &str) -> Option<&BootSpec> {
        self.boots.iter().find(|b| b.id == id)
    }
    /// Cells before `exclude:` and `only:`.
    pub fn cells_before(&self) -> usize {
        self.cells.len() + self.excluded.len()
    }
    pub fn cells_of_boot<'a>(&'a self, boot: &'a str) -> impl Iterator<Item = &'a CellSpec> + 'a {
        self.cells.iter().filter(move |c| c.boot == boot)
    }
}

/// The cartesian product of axes, first axis slowest.
fn product(axes: &[Axis], start: AxisValues) -> Vec<(AxisValues, Vec<Fragment>)> {
    let mut acc = vec![(start, Vec::new())];
    for axis in axes {
        let mut next = Vec::new();
        for (vals, frags) in &acc {
            for v in &axis.values {
                let mut f = frags.clone();
                f.extend(v.fragments.iter().cloned());
                next.push((vals.with(&axis.name, v.value.clone()), f));
            }
        }
        acc = next;
    }
    acc
}

fn id_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub(super) fn expand(m: &Matrix) -> Result<Plan> {
    let mut kernels = kernels(m);
    let mut boots = boots(m, &kernels)?;
    let (cells, excluded) = cells(m, &boots)?;
    // A kernel or boot whose every cell is excluded is not built or booted.
    if !excluded.is_empty() {
        boots.retain(|b| cells.iter().any(|c| c.boot == b.id));
        kernels.retain(|k| boots.iter().any(|b| b.kernel == k.id));
        let ids: Vec<String> = kernels.iter().map(|k| k.id.clone()).collect();
        for k in &mut kernels {
            if k.base_kernel.as_ref().is_some_and(|b| !ids.contains(b)) {
                k.base_kernel = None;
            }
        }
    }

    let schedule = schedule(&boots, m.repetitions, m.interleave);
    Ok(Plan {
        matrix: m.name.clone(),
        kernels,
        boots,
        cells,
        repetitions: m.repetitions,
        schedule,
        excluded,
        derived: m.derived.clone(),
    })
}

/// Kernels: arch × kernel axes × variant, each patched variant based on
/// the longest earlier variant of the same source whose patches it extends.
fn kernels(m: &Matrix) -> Vec<KernelSpec> {
    let mut kernels = Vec::new();
    for &arch in &m.arches {
        let arch_frag =
            super::fragments::resolve(arch.name(), &super::fragments::search_dirs(&m.path));
        let start = AxisValues(vec![("arch".into(), Scalar::Str(arch.name().into()))]);
        for (axes, axis_frags) in product(&m.kernel_axes, start) {
            let mut fragments = m.fragments.clone();
            fragments.extend(arch_frag.clone());
            fragments.extend(axis_frags);
            let stem: Vec<String> = std::iter::once(arch.name().to_string())
                .chain(
                    axes.0
                        .iter()
                        .skip(1)
                        .map(|(n, v)| id_part(&format!("{n}{v}"))),
                )
                .collect();
            let axis_source = m.kernel_axes.iter().find_map(|a| {
                let v = axes.get(&a.name)?;
                a.values.iter().find(|x| &x.value == v)?.source.clone()
            });
            let source_of = |v: &super::Variant| {
                axis_source
                    .clone()
                    .or_else(|| v.source.clone())
                    .unwrap_or_else(|| m.source.clone())
            };
            for (vi, v) in m.variants.iter().enumerate() {
                let source = source_of(v);
                // The longest earlier variant of the same source whose
                // patches this one extends.
                let base = m.variants[..vi]
                    .iter()
                    .filter(|b| {
                        b.patches.len() < v.patches.len()
                            && v.patches.starts_with(&b.patches)
                            && source_of(b) == source
                    })
                    .max_by_key(|b| b.patches.len())
                    .map(|b| format!("{}-{}", stem.join("-"), b.name));
                kernels.push(KernelSpec {
                    id: format!("{}-{}", stem.join("-"), v.name),
                    arch,
                    variant: v.name.clone(),
                    axes: axes.clone(),
                    fragments: fragments.clone(),
                    base_kernel: base,
                    source: Some(source),
                });
            }
        }
    }
    kernels
}

/// Boots: each kernel × boot axes, with its null_blk and NVMe rendered.
fn boots(m: &Matrix, kernels: &[KernelSpec]) -> Result<Vec<BootSpec>> {
    let mut boots = Vec::new();
    for k in kernels {
        for (axes, _) in product(&m.boot_axes, k.axes.clone()) {
            let boot_part = AxisValues(axes.0[k.axes.0.len()..].to_vec());
            let id = if boot_part.0.is_empty() {
                k.id.clone()
            } else {
                format!("{}@{}", k.id, boot_part.label())
            };
            let vars = axes.with("variant", Scalar::Str(k.variant.clone())).vars();
            let r = |s: &str, what: &str| {
                render(s, &vars).with_context(|| format!("{}: boot {id}: {what}", m.path.display()))
            };
            let mut null_blk = BTreeMap::new();
            if let Some(nb) = &m.boot.null_blk {
                let json = serde_json::to_value(nb)?;
                for (k, v) in json.as_object().into_iter().flatten() {
                    if v.is_null() {
                        continue;
                    }
                    let s = match v {
                        serde_json::Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    null_blk.insert(k.clone(), r(&s, &format!("boot.null_blk.{k}"))?);
                }
            }
            let nvme = m
                .boot
                .nvme
                .iter()
                .map(|n| render_value(n, &vars))
                .collect::<Result<Vec<_>>>()
                .with_context(|| format!("{}: boot {id}: boot.nvme", m.path.display()))?;
            for (i, n) in nvme.iter().enumerate() {
                check_nvme(n).map_err(|e| {
                    anyhow::anyhow!("{}: boot {id}: boot.nvme[{i}].{e}", m.path.display())
                })?;
            }
            boots.push(BootSpec {
                id: id.clone(),
                kernel: k.id.clone(),
                arch: k.arch,
                variant: k.variant.clone(),
                axes,
                cpus: m.boot.cpus.unwrap_or(1),
                memory: m.boot.memory.unwrap_or(1024),
                cmdline: r(&m.boot.cmdline, "boot.cmdline")?,
                null_blk,
                nvme,
                ready_timeout: m.boot.ready_timeout,
            });
        }
    }
    Ok(boots)
}

/// Cells: each boot × run axes, less the excluded combinations, with
/// setup and workload rendered and checked against what the boot has.
fn cells(m: &Matrix, boots: &[BootSpec]) -> Result<(Vec<CellSpec>, Vec<AxisValues>)> {
    let mut cells = Vec::new();
    let mut excluded = Vec::new();
    for b in boots {
        let with_variant = b.axes.with("variant", Scalar::Str(b.variant.clone()));
        for (axes, _) in product(&m.run_axes, with_variant) {
            if m.exclude.iter().any(|p| p.matches(&axes))
                || (!m.only.is_empty() && !m.only.iter().any(|p| p.matches(&axes)))
            {
                excluded.push(axes);
                continue;
            }
            let run_axes = AxisValues(axes.0[b.axes.0.len() + 1..].to_vec());
            let id = if run_axes.0.is_empty() {
                b.id.clone()
            } else {
                format!("{}:{}", b.id, run_axes.label())
            };
            let vars = axes.vars();
            let ctx = || format!("{}: cell {id}", m.path.display());
            let setup = m
                .setup
                .iter()
                .map(|s| render_value(s, &vars))
                .collect::<Result<Vec<_>>>()
                .with_context(ctx)?;
            let workload = cell_workload(m, &vars)
                .map_err(|e| m.err_at_line(m.workload_at, format!("cell {id}: {e:#}")))?;
            super::stack::check_cell(&setup, workload.as_ref(), b).map_err(|e| {
                let located = match e.step {
                    Some(i) => {
                        let at = m.setup_at.get(i).copied().unwrap_or((0, 0));
                        m.err_at_line(at, format!("cell {id}: setup[{i}]: {}", e.msg))
                    }
                    None => m.err_at_line(m.workload_at, format!("cell {id}: workload: {}", e.msg)),
                };
                if e.missing {
                    anyhow::Error::new(super::stack::Unrunnable(located.to_string()))
                } else {
                    located
                }
            })?;
            cells.push(CellSpec {
                id,
                boot: b.id.clone(),
                kernel: b.kernel.clone(),
                arch: b.arch,
                variant: b.variant.clone(),
                axes,
                run_axes,
                setup,
                workload,
                derived: m.derived.clone(),
            });
        }
    }
    Ok((cells, excluded))
}

/// The cell's workload, rendered: the inline one, or the named one its
/// axes pick. fio options in command-line form become maps here.
fn cell_workload(m: &Matrix, vars: &Vars) -> Result<Option<Workload>> {
    let w = match &m.workload {
        None => return Ok(None),
        Some(WorkloadRef::Inline(w)) => w,
        Some(WorkloadRef::Named(t)) => {
            let n = render(t, vars)?;
            &m.workloads
                .iter()
                .find(|(w, _)| *w == n)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "workload '{n}' is not in workloads ({})",
                        super::validate::names(&m.workloads)
                    )
                })?
                .1
        }
    };
    Ok(Some(match render_value(w, vars)? {
        Workload::Fio(f) => Workload::Fio(Box::new(fio_options(*f)?)),
        other => other,
    }))
}

/// Options lines become maps; every job must end up with rw and filename.
fn fio_options(mut f: FioDef) -> Result<FioDef> {
    use super::fioopts::to_map;
    let err = |e: String| anyhow::anyhow!("fio: {e}");
    for (k, v) in std::mem::take(&mut f.beside) {
        if f.extra.insert(k.clone(), v).is_some() {
            return Err(err(format!(
                "option '{k}' is given twice: beside extra and in it"
            )));
        }
    }
    for k in f.extra.keys() {
        super::fioopts::check_key(k).map_err(err)?;
    }
    if let Some(o) = f.options.take() {
        for (k, v) in to_map(&o).map_err(err)? {
            if f.extra.insert(k.clone(), v).is_some() {
                return Err(err(format!(
                    "option '{k}' is given twice: beside options and in options"
                )));
            }
        }
        f.options = Some(FioOptions::Map(Default::default()));
    }
    let global = |k: &str, named: bool| named || f.extra.contains_key(k);
    let (rw, file) = (
        global("rw", f.rw.is_some()),
        // fio makes its own files in a `directory`.
        global("filename", f.filename.is_some()) || global("directory", false),
    );
    let mut seen = Vec::new();
    for j in &mut f.jobs {
        if !super::is_id_safe(&j.name) || j.name.contains('.') {
            return Err(err(format!(
                "job name '{}': letters, digits, '_' and '-'",
                j.name
            )));
        }
        if seen.contains(&j.name) {
            return Err(err(format!("job '{}' is declared twice", j.name)));
        }
        seen.push(j.name.clone());
        let map = j
            .options
            .as_ref()
            .map(to_map)
            .transpose()
            .map_err(err)?
            .unwrap_or_default();
        for (k, have) in [("rw", rw), ("filename", file)] {
            let named = map.contains_key(k) || (k == "filename" && map.contains_key("directory"));
            if !have && !named {
                return Err(err(format!(
                    "job '{}' has no {k}, and there is no global one",
                    j.name
                )));
            }
        }
        j.options = Some(FioOptions::Map(map));
    }
    for (k, have) in [("rw", rw), ("filename", file)] {
        if f.jobs.is_empty() && !have {
            return Err(err(format!("the job has no {k}")));
        }
    }
    Ok(f)
}

/// Interleaved: every boot once per repetition block (A B A B), so drift
/// over time hits every variant alike. Otherwise each boot's repetitions
/// run back to back (A A B B), which reuses a warm host cache.
pub fn schedule(boots: &[BootSpec], reps: u32, interleave: bool) -> Vec<ScheduledBoot> {
    let mut out = Vec::new();
    if interleave {
        for rep in 1..=reps {
            out.extend(boots.iter().map(|b| ScheduledBoot {
                boot: b.id.clone(),
                rep,
            }));
        }
    } else {
        for b in boots {
            out.extend((1..=reps).map(|rep| ScheduledBoot {
                boot: b.id.clone(),
                rep,
            }));
        }
    }
    out
}

/// Render every string inside a value as a template.
fn render_value<T: Serialize + serde::de::DeserializeOwned>(v: &T, vars: &Vars) -> Result<T> {
    fn walk(v: &mut serde_json::Value, vars: &Vars) -> Result<()> {
        match v {
            serde_json::Value::String(s) => *s = render(s, vars)?,
            serde_json::Value::Array(a) => a.iter_mut().try_for_each(|x| walk(x, vars))?,
            serde_json::Value::Object(o) => o.values_mut().try_for_each(|x| walk(x, vars))?,
            _ => {}
        }
        Ok(())
    }
    let mut j = serde_json::to_value(v)?;
    walk(&mut j, vars)?;
    Ok(serde_json::from_value(j)?)
}

/// An emulated NVMe controller's options reach QEMU's `-device` and
/// `-drive` strings, where a comma starts another option: only plain
/// words pass (`serial: "x,drive=foo"` would add a drive option).
fn check_nvme(n: &super::schema::NvmeDef) -> std::result::Result<(), String> {
    let shown = |s: &str| s.escape_debug().take(40).collect::<String>();
    if let Some(s) = &n.serial {
        let ok = !s.is_empty()
            && s.len() <= 20
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if !ok {
            return Err(format!(
                "serial: '{}' is not an NVMe serial: 1 to 20 letters, digits, '.', '_' or '-'",
                shown(s)
            ));
        }
    }
    if let Some(b) = &n.backing
        && !["memory", "file"].contains(&b.as_str())
    {
        return Err(format!("backing: '{}': use memory or file", shown(b)));
    }
    if let Some(sz) = &n.size
        && crate::util::parse_size(sz).map_or(true, |b| b == 0)
    {
        return Err(format!(
            "size: '{}' is not a size such as 1G or 512M",
            shown(sz)
        ));
    }
    Ok(())
}
