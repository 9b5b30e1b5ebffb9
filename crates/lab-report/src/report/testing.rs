//! Synthetic runs shaped like the dm-delay reproduction, for the report
//! tests (unit and integration). Not used by the lab itself.

use crate::matrix::schema::ClaimDef;
use crate::matrix::{BaseConfig, Matrix, Scalar};
use crate::record::Accel;
use crate::record::bench::Metric;
use crate::record::guest::Probes;
use crate::record::kernel::Key;
use crate::record::kernel::SourceId;
use crate::record::kernel::{KernelBuild, PatchInfo};
use crate::results::host::HostInfo;
use crate::results::{
    BootRecord, CellRecord, CellStatus, ClaimSource, LAB_VERSION, Manifest, MatrixInfo, RunDir,
};
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The patch mail's table, as the author wrote it (arm64, HZ=100, ms).
pub const MAIL_TABLE: &str = "\
Single 4 KiB direct writes through a delay target on a memory-backed
null_blk device, arm64, HZ=100, mean latency in ms (300 writes each):

\tdelay\tbefore\tafter
\t 1\t 9.97\t 1.16
\t 2\t 9.97\t 2.38
\t 5\t 9.99\t 5.85
\t20\t20.06\t21.29

What remains above the requested delay is the kthread's polling
interval, one eighth of the delay.
";

pub const SUBJECT: &str = "[PATCH] dm-delay: do not round a short delay up to the next timer tick";

/// A stored run before it is written: change anything, then [`write`].
pub struct Synthetic {
    pub manifest: Manifest,
    pub cells: Vec<CellRecord>,
    /// fio JSON documents, by path relative to the run directory.
    pub fio: Vec<(String, String)>,
}

/// Mean write latency in ms that the tests measured on x86_64 at HZ=100
/// (lab notes), with a small spread per repetition.
pub fn measured_ms(variant: &str, delay: i64, rep: u32) -> f64 {
    let base = match (variant, delay) {
        ("after", 1) => 1.2,
        ("after", 2) => 2.2,
        ("after", 5) => 5.3,
        ("after", _) => 20.4,
        (_, 20) => 20.0,
        _ => 10.0,
    };
    base * (1.0 + 0.004 * (f64::from(rep) - 2.0))
}

fn matrix_text(variants: &[(&str, &[&str])], reps: u32) -> String {
    let mut v = String::new();
    for (name, patches) in variants {
        v.push_str(&format!("  - name: {name}\n"));
        if !patches.is_empty() {
            v.push_str("    patches:\n");
            for p in *patches {
                v.push_str(&format!("      - message-id: {p}\n"));
            }
        }
    }
    format!(
        "version: 1
name: dm-delay
description: Synthetic dm-delay run for the report tests.
variants:
{v}kernel_axes:
  arch: [x86_64]
  hz: {{100: [hz100]}}
run_axes:
  delay: [1, 2, 5, 20]
setup:
  - dm:
      name: delayed
      target: delay
      device: /dev/nullb0
      write_ms: \"{{{{ delay }}}}\"
workload:
  fio:
    filename: /dev/mapper/delayed
    rw: write
    bs: 4k
    direct: 1
    number_ios: 300
metrics: [write.lat_mean]
repetitions: {reps}
interleave: true
verdict:
  noise: 5%
  max_cv: 10%
  gate: [write.lat_mean]
"
    )
}

fn kernel_build(id: &str, variant: &str, patches: &[&str]) -> KernelBuild {
    KernelBuild {
        kernel: id.into(),
        arch: crate::matrix::Arch::X86_64,
        variant: variant.into(),
        // As the cache keys it: by what is built, not by the variant's
        // name, so two variants of one kernel share their key (an A/A).
        key: Key(format!(
            "key-{}-{}",
            id.strip_suffix(variant).unwrap_or(id),
            patches.join(",")
        )),
        source: SourceId {
            kind: "tarball".into(),
            location: "/usr/src/linux-source-6.12.tar.xz".into(),
            git_ref: None,
            hash: "5ca1ab1e0123456789abcdef".into(),
            version: "6.12.117".into(),
        },
        patches: patches
            .iter()
            .map(|p| PatchInfo {
                origin: format!("message-id {p}"),
                subject: SUBJECT.into(),
                message_id: Some(p.to_string()),
                hash: format!("{:0<64}", p.replace(['@', '.', '-'], "")),
            })
            .collect(),
        apply_method: if patches.is_empty() {
            "none"
        } else {
            "patch -F3"
        }
        .into(),
        fuzzed: vec![],
        fragments: vec![],
        base: BaseConfig::Target("tinyconfig".into()),
        config_hash: "c0ff1g".into(),
        hz: Some(100),
        compiler: "gcc 12.2.0".into(),
        build_id: Some("deadbeef".into()),
        image: PathBuf::from("/cache/bzImage"),
        config: PathBuf::from("/cache/.config"),
        vmlinux: PathBuf::from("/cache/vmlinux"),
        log: PathBuf::from("/cache/build.log"),
        build_dir: PathBuf::from("/cache/build"),
        build_secs: 590.0,
        phases: Default::default(),
        reused_tree_of: None,
        objects: 1200,
        built_at: "2026-11-01T10:00:00Z".into(),
        cached: false,
    }
}

/// fio's JSON for one cell repetition: the mean, and percentiles around it.
fn fio_json(mean_ns: f64) -> String {
    let pct: Vec<(String, f64)> = [
        (1.0, 0.90),
        (5.0, 0.93),
        (10.0, 0.95),
        (50.0, 1.0),
        (90.0, 1.04),
        (99.0, 1.15),
        (99.9, 1.4),
        (99.99, 1.6),
    ]
    .iter()
    .map(|(p, f)| (format!("{p:.6}"), (mean_ns * f).round()))
    .collect();
    let map: serde_json::Map<String, serde_json::Value> =
        pct.into_iter().map(|(k, v)| (k, v.into())).collect();
    serde_json::json!({
        "fio version": "fio-3.33",
        "jobs": [{
            "jobname": "lab",
            "error": 0,
            "write": {
                "total_ios": 300,
                "iops": 1e9 / mean_ns,
                "bw_bytes": 4096.0 * 1e9 / mean_ns,
                "lat_ns": {"mean": mean_ns},
                "clat_ns": {"mean": mean_ns * 0.99, "percentile": map},
            },
            "read": {"total_ios": 0},
        }]
    })
    .to_string()
}

/// A complete dm-delay shaped run: x86_64, HZ=100, delays 1, 2, 5, 20,
/// `reps` repetitions, `value(variant, delay, rep)` in ms. Variants come
/// with their patch message-ids; an `after` variant brings the mail's
/// claim (made on arm64 at HZ=100).
pub fn dm_delay(
    variants: &[(&str, &[&str])],
    reps: u32,
    value: impl Fn(&str, i64, u32) -> f64,
) -> Result<Synthetic> {
    let text = matrix_text(variants, reps);
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("matrices/synthetic-dm-delay.yaml");
    let matrix = Matrix::parse(&path, &text)?;
    let plan = matrix.plan()?;
    let mut kernels = BTreeMap::new();
    for k in &plan.kernels {
        let patches = variants
            .iter()
            .find(|(n, _)| *n == k.variant)
            .map(|(_, p)| *p)
            .unwrap_or(&[]);
        kernels.insert(k.id.clone(), kernel_build(&k.id, &k.variant, patches));
    }
    let probes = Probes {
        uname_r: "6.12.117".into(),
        build_id: Some("deadbeef".into()),
        hz_config: Some(100),
        hz_measured: Some(100),
        clocksource: "tsc".into(),
        available_clocksources: vec!["tsc".into(), "hpet".into()],
        cpus: 1,
        block_devices: vec!["nullb0".into()],
        fio_version: Some("fio-3.33".into()),
    };
    let boots: Vec<BootRecord> = plan
        .schedule
        .iter()
        .map(|s| {
            let b = plan.boot(&s.boot).expect("scheduled boot");
            BootRecord {
                boot: s.boot.clone(),
                rep: s.rep,
                kernel: b.kernel.clone(),
                variant: b.variant.clone(),
                arch: b.arch.name().into(),
                accel: Accel::Tcg,
                accel_reason: "nested KVM does not work here".into(),
                qemu_version: "QEMU emulator version 9.2.0".into(),
                qemu_command: vec!["qemu-system-x86_64".into()],
                console_log: format!("boots/{}/rep-{}/console.log", s.boot, s.rep),
                probes: Some(probes.clone()),
                ready_secs: Some(7.1),
                started: "2026-11-01T10:00:00Z".into(),
                ending: Some("quit".into()),
                error: None,
                clock_events: vec![],
            }
        })
        .collect();
    let mut cells = Vec::new();
    let mut fio = Vec::new();
    for s in &plan.schedule {
        for c in plan.cells_of_boot(&s.boot) {
            let delay = match c.axes.get("delay") {
                Some(Scalar::Int(d)) => *d,
                _ => 0,
            };
            let ns = value(&c.variant, delay, s.rep) * 1e6;
            let rel = format!(
                "cells/{}/rep-{}/fio.json",
                crate::results::path_part(&c.id),
                s.rep
            );
            fio.push((rel.clone(), fio_json(ns)));
            cells.push(CellRecord {
                cell: c.id.clone(),
                rep: s.rep,
                boot: c.boot.clone(),
                kernel: c.kernel.clone(),
                variant: c.variant.clone(),
                arch: c.arch.name().into(),
                axes: c.axes.clone(),
                status: CellStatus::Done,
                error: None,
                started: "2026-11-01T10:00:00Z".into(),
                secs: 4.0,
                host_load: [0.4, 0.5, 0.6],
                host_cores: 2,
                clocksource_before: "tsc".into(),
                clocksource_after: "tsc".into(),
                knobs: vec![],
                steps: vec![],
                metrics: vec![
                    Metric::new("write.lat_mean", ns, "ns"),
                    Metric::new("write.clat_mean", ns * 0.99, "ns"),
                    Metric::new("write.iops", 1e9 / ns, "IOPS"),
                ],
                fio_json: Some(rel),
                flags: vec![],
                contention: None,
                contended_attempts: vec![],
                guest_secs: None,
                perf: vec![],
            });
        }
    }
    let has_after = variants.iter().any(|(n, _)| *n == "after");
    let mut tables = crate::mail::claims::extract_text(MAIL_TABLE);
    for t in &mut tables {
        std::sync::Arc::make_mut(&mut t.origin).subject = Some(SUBJECT.into());
        std::sync::Arc::make_mut(&mut t.origin).message_id =
            Some("<20261031161158.94403-1-snitzer@kernel.org>".into());
    }
    let claims = if has_after {
        vec![dm_delay_claim("arm64")?]
    } else {
        vec![]
    };
    let manifest = Manifest {
        schema_version: crate::results::MANIFEST_SCHEMA,
        lab_version: LAB_VERSION.into(),
        run_id: "dm-delay-20261101-100000".into(),
        created: "2026-11-01T10:00:00Z".into(),
        matrix: MatrixInfo {
            path: "matrices/synthetic-dm-delay.yaml".into(),
            claims,
            ..MatrixInfo::of(&matrix, None, None)
        },
        plan,
        host: HostInfo {
            hostname: "labhost".into(),
            cpu_model: "Example CPU @ 2.0GHz".into(),
            cores: 2,
            mem_total_mib: 24_000,
            kernel: "6.1.0-26-amd64".into(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
        },
        kernels,
        images: BTreeMap::new(),
        boots,
        claim_sources: if has_after {
            vec![ClaimSource {
                claims: vec![1],
                variant: "after".into(),
                origin: "dm-delay-ns-expiry.mbox".into(),
                tables,
            }]
        } else {
            vec![]
        },
    };
    Ok(Synthetic {
        manifest,
        cells,
        fio,
    })
}

/// The mail's claim as matrices/dm-delay.yaml writes it, measured on
/// `arch` at HZ=100.
pub fn dm_delay_claim(arch: &str) -> Result<ClaimDef> {
    crate::util::from_yaml(&format!(
        "from_variant: after
table: 1
row_column: delay
row_axis: delay
columns: {{before: before, after: after}}
metric: write.lat_mean
unit: ms
tolerance: 15%
conditions: {{arch: {arch}, hz: 100}}
"
    ))
    .map_err(|e| anyhow::anyhow!("the dm-delay claim: {e}"))
}

/// The usual before/after run.
pub fn before_after(reps: u32) -> Result<Synthetic> {
    dm_delay(
        &[
            ("before", &[]),
            ("after", &["20261031161158.94403-1-snitzer@kernel.org"]),
        ],
        reps,
        measured_ms,
    )
}

/// Store a synthetic run under `root` with the run store's own API.
pub fn write(root: &Path, s: &Synthetic) -> Result<RunDir> {
    let run = RunDir::create(root, &s.manifest.matrix.name)?;
    let mut m = s.manifest.clone();
    m.run_id = run.id();
    run.write_manifest(&m)?;
    for c in &s.cells {
        run.write_cell(c)?;
    }
    for (rel, json) in &s.fio {
        crate::util::atomic_write(&run.path.join(rel), json.as_bytes())?;
    }
    run.write_records()?;
    Ok(run)
}

/// A minimal XML check for report tests: tags nest and close, and no tag
/// holds a `<`. Returns each element opened, with its attribute names.
pub fn xml_elements(xml: &str) -> Vec<(String, Vec<String>)> {
    let mut elements = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').expect("unclosed tag");
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        assert!(!tag.contains('<'), "bad tag {tag}");
        if let Some(closing) = tag.strip_prefix('/') {
            assert_eq!(
                stack.pop().as_deref(),
                Some(closing.trim()),
                "mismatched </{closing}>"
            );
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '/')
            .collect();
        let attrs = tag
            .split('"')
            .step_by(2)
            .filter_map(|p| p.trim().strip_suffix('='))
            .map(|a| a.split_whitespace().last().unwrap_or(a).to_string())
            .collect();
        if !tag.ends_with('/') {
            stack.push(name.clone());
        }
        elements.push((name, attrs));
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
    elements
}
