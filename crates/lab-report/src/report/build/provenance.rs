//! What a report says about where its numbers came from: completeness,
//! kernels, patches, boots and the host.

use super::*;

pub(super) fn completeness_of(s: &Side) -> Completeness {
    let plan = &s.m.plan;
    let mut planned: BTreeSet<(String, u32)> = BTreeSet::new();
    if plan.schedule.is_empty() {
        for c in &plan.cells {
            for rep in 1..=plan.repetitions {
                planned.insert((c.id.clone(), rep));
            }
        }
    } else {
        for sb in &plan.schedule {
            for c in plan.cells_of_boot(&sb.boot) {
                planned.insert((c.id.clone(), sb.rep));
            }
        }
    }
    let status: BTreeMap<(String, u32), CellStatus> = s
        .cells
        .iter()
        .map(|c| ((c.cell.clone(), c.rep), c.status))
        .collect();
    let done = planned
        .iter()
        .filter(|k| status.get(*k) == Some(&CellStatus::Done))
        .count();
    let missing = planned
        .iter()
        .filter(|k| !status.contains_key(*k))
        .map(|(cell, rep)| RepRef {
            cell: cell.clone(),
            rep: *rep,
        })
        .collect();
    let failed = s
        .cells
        .iter()
        .filter(|c| c.status != CellStatus::Done)
        .map(|c| RepProblem {
            cell: c.cell.clone(),
            rep: c.rep,
            status: if c.status == CellStatus::Failed {
                "failed".into()
            } else {
                "interrupted".into()
            },
            error: c.error.clone(),
        })
        .collect();
    // A boot counts as failed when its last attempt did.
    let mut last: BTreeMap<(&str, u32), &BootRecord> = BTreeMap::new();
    for b in &s.m.boots {
        last.insert((&b.boot, b.rep), b);
    }
    let boot_errors = last
        .values()
        .filter_map(|b| {
            b.error
                .as_ref()
                .map(|e| format!("boot {} rep {}: {}", b.boot, b.rep, first_line(e)))
        })
        .collect();
    Completeness {
        planned: planned.len(),
        done,
        missing,
        failed,
        boot_errors,
    }
}

pub(in crate::report) fn distinct(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !i.is_empty() && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn short(hash: &str) -> &str {
    crate::util::prefix(hash, 12)
}

pub(super) fn provenance(s: &Side) -> Provenance {
    let m = s.m;
    // Kernels in plan order, then any other recorded build.
    let mut ids: Vec<&String> = m.plan.kernels.iter().map(|k| &k.id).collect();
    ids.extend(m.kernels.keys());
    let ids = distinct(ids.into_iter().cloned());
    let kernels: Vec<KernelProvenance> = ids
        .iter()
        .filter_map(|id| m.kernels.get(id))
        .map(|k| KernelProvenance {
            kernel: k.kernel.clone(),
            variant: k.variant.clone(),
            arch: k.arch.name().to_string(),
            source: source_label(&k.source),
            hz: k.hz,
            patches: k
                .patches
                .iter()
                .map(|p| PatchProvenance {
                    subject: p.subject.clone(),
                    hash: p.hash.clone(),
                    message_id: p.message_id.clone(),
                })
                .collect(),
            apply_method: k.apply_method.clone(),
            fuzzed: k
                .fuzzed
                .iter()
                .map(|f| {
                    format!(
                        "{}: hunk {} needed fuzz {} (offset {})",
                        f.file, f.hunk, f.fuzz, f.offset
                    )
                })
                .collect(),
            config_hash: k.config_hash.clone(),
            build_id: k.build_id.clone(),
        })
        .collect();
    let sources = distinct(kernels.iter().map(|k| k.source.clone()));
    let mut hz = distinct(kernels.iter().filter_map(|k| k.hz.map(|h| h.to_string())));
    if hz.is_empty() {
        hz = distinct(
            m.plan
                .kernels
                .iter()
                .filter_map(|k| k.axes.get("hz").map(|v| v.to_string()))
                .chain(
                    m.boots
                        .iter()
                        .filter_map(|b| b.probes.as_ref()?.hz_config.map(|h| h.to_string())),
                ),
        );
    }
    let arches = distinct(
        m.plan
            .kernels
            .iter()
            .map(|k| k.arch.name().to_string())
            .chain(s.cells.iter().map(|c| c.arch.clone())),
    );
    let qemu = distinct(
        m.boots
            .iter()
            .map(|b| format!("{} ({})", b.qemu_version.trim(), b.accel.name())),
    );
    let clocksources = distinct(
        m.boots
            .iter()
            .filter_map(|b| b.probes.as_ref().map(|p| p.clocksource.clone()))
            .chain(
                s.cells
                    .iter()
                    .flat_map(|c| [c.clocksource_before.clone(), c.clocksource_after.clone()]),
            ),
    );
    let fio = distinct(
        m.boots
            .iter()
            .filter_map(|b| b.probes.as_ref()?.fio_version.clone()),
    );
    let h = &m.host;
    let host = [
        h.hostname.clone(),
        h.cpu_model.clone(),
        if h.cores > 0 {
            format!("{} cores", h.cores)
        } else {
            String::new()
        },
        if h.mem_total_mib > 0 {
            format!("{} MiB", h.mem_total_mib)
        } else {
            String::new()
        },
        h.os.clone(),
        if h.kernel.is_empty() {
            String::new()
        } else {
            format!("Linux {}", h.kernel)
        },
    ]
    .into_iter()
    .filter(|x| !x.is_empty())
    .collect::<Vec<_>>()
    .join(", ");
    Provenance {
        run_id: m.run_id.clone(),
        created: m.created.clone(),
        lab_version: m.lab_version.clone(),
        report_lab_version: LAB_VERSION.to_string(),
        kernels,
        sources,
        hz,
        arches,
        qemu,
        clocksources,
        repetitions: m.matrix.repetitions.max(m.plan.repetitions),
        host,
        host_cores: h.cores,
        fio,
    }
}

fn source_label(s: &crate::record::kernel::SourceId) -> String {
    let version = if s.version.is_empty() {
        "linux".to_string()
    } else {
        format!("linux {}", s.version)
    };
    let what = match &s.git_ref {
        Some(r) => format!("git {} {r}", s.location),
        None => Path::new(&s.location)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| s.location.clone()),
    };
    format!("{version} ({what}, {})", short(&s.hash))
}

/// A variant's patches: the hashes its kernel builds record, or failing
/// those, the patch list the matrix file gives it.
pub(super) fn patches_of(m: &Manifest, variant: &str) -> Option<Vec<String>> {
    if let Some(k) = m.kernels.values().find(|k| k.variant == variant) {
        return Some(k.patches.iter().map(|p| p.hash.clone()).collect());
    }
    #[derive(serde::Deserialize)]
    struct MatrixVariants {
        variants: Vec<VariantPatches>,
    }
    #[derive(serde::Deserialize)]
    struct VariantPatches {
        name: String,
        #[serde(default)]
        patches: Vec<crate::matrix::schema::PatchDef>,
    }
    let parsed: MatrixVariants = crate::util::from_yaml(&m.matrix.text).ok()?;
    let v = parsed.variants.into_iter().find(|v| v.name == variant)?;
    Some(
        v.patches
            .iter()
            .map(|p| serde_json::to_string(p).unwrap_or_default())
            .collect(),
    )
}

/// What a variant's kernels are built from (see `VariantInfo::kernel`):
/// the cache keys of its builds, one per arch and kernel axis; for a run
/// without recorded builds, its source and patches as the matrix says.
pub(super) fn kernel_of(m: &Manifest, variant: &str) -> Option<Vec<String>> {
    let mut keys: Vec<String> = m
        .kernels
        .values()
        .filter(|k| k.variant == variant)
        .map(|k| k.key.0.clone())
        .collect();
    if !keys.is_empty() {
        keys.sort();
        return Some(keys);
    }
    #[derive(serde::Deserialize)]
    struct MatrixVariants {
        variants: Vec<VariantSource>,
    }
    #[derive(serde::Deserialize)]
    struct VariantSource {
        name: String,
        #[serde(default)]
        source: Option<serde_json::Value>,
        #[serde(default)]
        patches: Vec<crate::matrix::schema::PatchDef>,
    }
    let parsed: MatrixVariants = crate::util::from_yaml(&m.matrix.text).ok()?;
    let v = parsed.variants.into_iter().find(|v| v.name == variant)?;
    let source = v.source.map(|s| s.to_string()).unwrap_or_default();
    Some(
        std::iter::once(source)
            .chain(
                v.patches
                    .iter()
                    .map(|p| serde_json::to_string(p).unwrap_or_default()),
            )
            .collect(),
    )
}
