//! `lab merge`: the run directories of a sharded run, made into one.
//!
//! Shards must come from the same matrix file (by hash), the same lab
//! version and the same `--filter`, and no cell repetition (or boot
//! repetition) may appear in two of them. The merged run gets the union
//! of kernels, images, boots and claim sources; its plan lists kernels,
//! boots, cells and the schedule in the full plan's order when the
//! matrix recorded in the manifests still expands, else shard by shard.
//! The cell and boot trees are copied, and records.jsonl is rebuilt from
//! the copied cell files. The result appears at `out` by rename, whole.

use super::{Manifest, RunDir};
use crate::matrix::{Filter, Matrix, Plan};
use anyhow::{Context, Result, bail};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The run directories `paths` name: each path is a run directory (it
/// holds a manifest.json), or a directory whose subdirectories are runs,
/// as `lab run --results DIR` and CI artifact downloads leave them.
pub fn find_runs(paths: &[PathBuf]) -> Result<Vec<RunDir>> {
    let mut out = Vec::new();
    for p in paths {
        if p.join("manifest.json").is_file() {
            out.push(RunDir { path: p.clone() });
            continue;
        }
        let rd = std::fs::read_dir(p).with_context(|| format!("reading {}", p.display()))?;
        let mut found: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|d| d.join("manifest.json").is_file())
            .collect();
        if found.is_empty() {
            bail!(
                "{} is not a run directory: neither it nor a directory in it holds a manifest.json",
                p.display()
            );
        }
        found.sort();
        out.extend(found.into_iter().map(|path| RunDir { path }));
    }
    Ok(out)
}

/// Merge the runs in `dirs` (see [`find_runs`]) into a new run directory
/// `out`, which must not exist or be empty.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<RunDir> {
    let runs = find_runs(dirs).map_err(crate::error::input)?;
    if runs.is_empty() {
        return Err(crate::error::input_error(
            "lab merge: no run directories given",
        ));
    }
    for d in dirs.iter().chain(runs.iter().map(|r| &r.path)) {
        if is_inside(out, d) {
            return Err(crate::error::input_error(format!(
                "--out {} is inside the input {}: merge into a directory outside every input",
                out.display(),
                d.display()
            )));
        }
    }
    if std::fs::symlink_metadata(out).is_ok() {
        let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none());
        let why = match empty {
            Ok(true) => None,
            Ok(false) => Some("exists and is not empty"),
            Err(_) => Some("exists and is not a directory"),
        };
        if let Some(why) = why {
            return Err(crate::error::input_error(format!(
                "--out {}: {why}; merge into a new directory",
                out.display()
            )));
        }
    }
    let manifests: Vec<Manifest> = runs
        .iter()
        .map(|r| {
            r.read_manifest()
                .with_context(|| format!("reading the manifest of {}", r.path.display()))
        })
        .collect::<Result<_>>()?;
    check_same_origin(&runs, &manifests).map_err(crate::error::input)?;
    check_no_duplicates(&runs, &manifests).map_err(crate::error::input)?;
    let merged = merged_manifest(&runs, &manifests, out)?;

    // Build beside `out`, then rename: a merge that fails leaves nothing.
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let name = out
        .file_name()
        .with_context(|| format!("{} names no directory", out.display()))?
        .to_string_lossy()
        .into_owned();
    let tmp = parent.join(format!(".{name}.merging-{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp)?;
    }
    // An interrupted merge removes the half-built directory.
    let guard = crate::interrupt::temp_guard(&tmp);
    std::fs::create_dir(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let built = (|| -> Result<()> {
        for r in &runs {
            for sub in ["cells", "boots"] {
                let from = r.path.join(sub);
                match std::fs::symlink_metadata(&from) {
                    Ok(m) if m.is_dir() => copy_tree(&from, &tmp.join(sub))
                        .with_context(|| format!("copying {}", from.display()))?,
                    Ok(_) => return Err(not_run_content(&from)),
                    Err(_) => {}
                }
            }
        }
        let dir = RunDir { path: tmp.clone() };
        dir.write_manifest(&merged)?;
        dir.write_records()?;
        Ok(())
    })();
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if out.exists() {
        std::fs::remove_dir(out)?;
    }
    guard
        .commit(|| std::fs::rename(&tmp, out))
        .with_context(|| format!("moving {} to {}", tmp.display(), out.display()))?;
    Ok(RunDir {
        path: out.to_path_buf(),
    })
}

/// Whether `path` (which may not exist yet) is `dir` or lies under it,
/// after resolving symlinks and `..` in the part that exists.
fn is_inside(path: &Path, dir: &Path) -> bool {
    let Ok(dir) = dir.canonicalize() else {
        return false;
    };
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match std::env::current_dir() {
            Ok(c) => c.join(path),
            Err(_) => return false,
        }
    };
    // The longest existing ancestor, canonical, plus the rest as written.
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut full = c;
            for part in rest.iter().rev() {
                full.push(part);
            }
            return full.starts_with(&dir);
        }
        match (cur.parent(), cur.file_name()) {
            (Some(p), Some(n)) => {
                rest.push(n.to_os_string());
                cur = p;
            }
            _ => return false,
        }
    }
}

fn check_same_origin(runs: &[RunDir], ms: &[Manifest]) -> Result<()> {
    let (r0, m0) = (&runs[0], &ms[0]);
    let first = r0.path.display();
    for (r, m) in runs.iter().zip(ms).skip(1) {
        let this = r.path.display();
        if m.matrix.hash != m0.matrix.hash {
            bail!(
                "{first} and {this} ran different matrices ({} {} and {} {}); only shards of one matrix merge",
                m0.matrix.path,
                crate::util::prefix(&m0.matrix.hash, 12),
                m.matrix.path,
                crate::util::prefix(&m.matrix.hash, 12),
            );
        }
        if m.lab_version != m0.lab_version {
            bail!(
                "{first} ran lab {} and {this} lab {}; only shards of one lab version merge",
                m0.lab_version,
                m.lab_version
            );
        }
        if m.matrix.filter != m0.matrix.filter {
            let f = |x: &Option<String>| x.clone().unwrap_or_else(|| "no filter".into());
            bail!(
                "{first} ran with {} and {this} with {}; only shards of one filter merge",
                f(&m0.matrix.filter),
                f(&m.matrix.filter)
            );
        }
    }
    // Shards of one split: same total, each index once.
    let mut seen: BTreeMap<&str, &RunDir> = BTreeMap::new();
    let mut total: Option<(&str, &RunDir)> = None;
    for (r, m) in runs.iter().zip(ms) {
        let Some(s) = m.matrix.shard.as_deref() else {
            continue;
        };
        if let Some(other) = seen.insert(s, r) {
            bail!(
                "shard {s} appears twice: {} and {}",
                other.path.display(),
                r.path.display()
            );
        }
        let n = s.split_once('/').map(|(_, n)| n).unwrap_or(s);
        match total {
            None => total = Some((n, r)),
            Some((t, other)) if t != n => bail!(
                "{} is a shard of {t} and {} a shard of {n}: shards of different splits do not merge",
                other.path.display(),
                r.path.display()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

fn check_no_duplicates(runs: &[RunDir], ms: &[Manifest]) -> Result<()> {
    let mut cells: HashMap<(String, u32), &Path> = HashMap::new();
    let mut boots: HashMap<(String, u32), &Path> = HashMap::new();
    for (r, m) in runs.iter().zip(ms) {
        for c in r.cells()? {
            if let Some(other) = cells.insert((c.cell.clone(), c.rep), &r.path) {
                bail!(
                    "cell {} rep {} is in both {} and {}",
                    c.cell,
                    c.rep,
                    other.display(),
                    r.path.display()
                );
            }
        }
        for b in &m.boots {
            if let Some(other) = boots.insert((b.boot.clone(), b.rep), &r.path) {
                bail!(
                    "boot {} rep {} is in both {} and {}",
                    b.boot,
                    b.rep,
                    other.display(),
                    r.path.display()
                );
            }
        }
    }
    Ok(())
}

fn merged_manifest(runs: &[RunDir], ms: &[Manifest], out: &Path) -> Result<Manifest> {
    let m0 = &ms[0];
    let mut kernels = BTreeMap::new();
    let mut kernel_from: BTreeMap<String, &Path> = BTreeMap::new();
    let mut images = BTreeMap::new();
    let mut image_from: BTreeMap<String, &Path> = BTreeMap::new();
    let mut boots = Vec::new();
    let mut claim_sources = Vec::new();
    for (r, m) in runs.iter().zip(ms) {
        for (id, k) in &m.kernels {
            match kernels.get(id) {
                None => {
                    kernels.insert(id.clone(), k.clone());
                    kernel_from.insert(id.clone(), &r.path);
                }
                Some(old) if old.key == k.key => {}
                Some(old) => bail!(
                    "kernel {id} is build {} in {} and build {} in {}",
                    old.key.short(),
                    kernel_from[id].display(),
                    k.key.short(),
                    r.path.display()
                ),
            }
        }
        for (id, i) in &m.images {
            match images.get(id) {
                None => {
                    images.insert(id.clone(), i.clone());
                    image_from.insert(id.clone(), &r.path);
                }
                Some(old) if old_is_same_image(old, i) => {}
                Some(old) => bail!(
                    "image {id} differs: sha256 {} in {} and {} in {}; the shards booted different guest userlands",
                    crate::util::prefix(&old.sha256, 12),
                    image_from[id].display(),
                    crate::util::prefix(&i.sha256, 12),
                    r.path.display()
                ),
            }
        }
        boots.extend(m.boots.iter().cloned());
        for c in &m.claim_sources {
            let have = claim_sources
                .iter()
                .any(|x: &super::ClaimSource| x.variant == c.variant && x.origin == c.origin);
            if !have {
                claim_sources.push(c.clone());
            }
        }
    }
    let plan = merged_plan(ms);
    // Boots in the order they ran.
    boots.sort_by(|a, b| a.started.cmp(&b.started));
    let mut matrix = m0.matrix.clone();
    matrix.shard = None;
    Ok(Manifest {
        schema_version: crate::results::MANIFEST_SCHEMA,
        lab_version: m0.lab_version.clone(),
        run_id: out
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        created: crate::util::now_rfc3339(),
        matrix,
        plan,
        host: m0.host.clone(),
        kernels,
        images,
        boots,
        claim_sources,
    })
}

fn old_is_same_image(a: &super::ImageInfo, b: &super::ImageInfo) -> bool {
    a.sha256 == b.sha256 && a.key == b.key
}

/// The full plan the shards were cut from, if the recorded matrix still
/// expands (its fragments are found relative to its recorded path).
fn full_plan(m: &Manifest) -> Option<Plan> {
    if crate::util::hash_bytes(m.matrix.text.as_bytes()) != m.matrix.hash {
        return None;
    }
    let matrix = Matrix::parse(Path::new(&m.matrix.path), &m.matrix.text).ok()?;
    let plan = matrix.plan().ok()?;
    match &m.matrix.filter {
        Some(f) => Some(Filter::parse(f).ok()?.apply(&plan)),
        None => Some(plan),
    }
}

/// Items of every shard, each id once: in `order` when it names them all,
/// else shard by shard.
fn union_in_order<T: Clone>(
    shards: &[&[T]],
    id: impl Fn(&T) -> String,
    order: Option<Vec<String>>,
) -> Vec<T> {
    let mut by_id: BTreeMap<String, T> = BTreeMap::new();
    let mut concat = Vec::new();
    for s in shards {
        for x in s.iter() {
            let k = id(x);
            if !by_id.contains_key(&k) {
                by_id.insert(k.clone(), x.clone());
                concat.push(k);
            }
        }
    }
    let ids = match order {
        Some(o) => {
            let ordered: Vec<String> = o.into_iter().filter(|k| by_id.contains_key(k)).collect();
            if ordered.len() == by_id.len() {
                ordered
            } else {
                concat
            }
        }
        None => concat,
    };
    ids.into_iter()
        .map(|k| by_id.remove(&k).expect("every id is in the map"))
        .collect()
}

fn merged_plan(ms: &[Manifest]) -> Plan {
    let full = full_plan(&ms[0]);
    let plans: Vec<&Plan> = ms.iter().map(|m| &m.plan).collect();
    let order = |f: &dyn Fn(&Plan) -> Vec<String>| full.as_ref().map(f);
    let kernels = union_in_order(
        &plans
            .iter()
            .map(|p| p.kernels.as_slice())
            .collect::<Vec<_>>(),
        |k| k.id.clone(),
        order(&|p| p.kernels.iter().map(|k| k.id.clone()).collect()),
    );
    let boots = union_in_order(
        &plans.iter().map(|p| p.boots.as_slice()).collect::<Vec<_>>(),
        |b| b.id.clone(),
        order(&|p| p.boots.iter().map(|b| b.id.clone()).collect()),
    );
    let cells = union_in_order(
        &plans.iter().map(|p| p.cells.as_slice()).collect::<Vec<_>>(),
        |c| c.id.clone(),
        order(&|p| p.cells.iter().map(|c| c.id.clone()).collect()),
    );
    let sched_id = |s: &crate::matrix::ScheduledBoot| format!("{}\u{0}{}", s.boot, s.rep);
    let schedule = union_in_order(
        &plans
            .iter()
            .map(|p| p.schedule.as_slice())
            .collect::<Vec<_>>(),
        sched_id,
        order(&|p| p.schedule.iter().map(sched_id).collect()),
    );
    if let Some(f) = &full {
        let have: BTreeSet<&str> = kernels.iter().map(|k| k.id.as_str()).collect();
        let missing: Vec<&str> = f
            .kernels
            .iter()
            .map(|k| k.id.as_str())
            .filter(|k| !have.contains(k))
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "warning: lab merge: no shard ran kernel(s) {}; their cells will show as missing",
                missing.join(", ")
            );
        }
    }
    Plan {
        matrix: ms[0].plan.matrix.clone(),
        kernels,
        boots,
        cells,
        repetitions: ms[0].plan.repetitions,
        schedule,
        excluded: ms[0].plan.excluded.clone(),
        derived: ms[0].plan.derived.clone(),
    }
}

/// A shard artifact may come from a hostile job: a symlink in it could
/// pull host files (`~/.ssh`) into the merged, uploaded run, and a FIFO
/// would block the copy. lab writes only directories and regular files.
fn not_run_content(p: &Path) -> anyhow::Error {
    crate::error::input_error(format!(
        "{}: not a directory or regular file (a symlink, FIFO or device); \
         a run directory holds only what lab wrote, so this one is not merged",
        p.display()
    ))
}

/// Copy a directory tree; a file that is already at the destination is
/// an error, never overwritten, and anything but a directory or regular
/// file is refused (`not_run_content`).
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let ft = e.file_type()?;
        if ft.is_dir() {
            copy_tree(&src, &dst)?;
        } else if !ft.is_file() {
            return Err(not_run_content(&src));
        } else if dst.exists() {
            bail!("{} would overwrite {}", src.display(), dst.display());
        } else {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("copying {} to {}", src.display(), dst.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{
        BootRecord, CellRecord, CellStatus, ClaimSource, ImageInfo, LAB_VERSION, MatrixInfo,
    };
    use super::*;
    use crate::matrix::shard;
    use crate::record::Accel;
    use crate::record::bench::Metric;
    use crate::record::kernel::KernelBuild;
    use crate::record::kernel::Key;

    fn matrix_path() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("matrices/dm-delay.yaml")
    }

    fn full() -> (Matrix, Plan) {
        let m = Matrix::load(&matrix_path()).unwrap();
        let p = m.plan().unwrap();
        (m, p)
    }

    fn build(id: &str, key: &str) -> KernelBuild {
        let dir = PathBuf::from("/nonexistent/kernel");
        KernelBuild {
            kernel: id.into(),
            arch: crate::matrix::Arch::X86_64,
            variant: "before".into(),
            key: Key(key.repeat(64 / key.len())),
            source: crate::record::kernel::SourceId {
                kind: "tarball".into(),
                location: "/usr/src/linux-source-6.12.tar.xz".into(),
                git_ref: None,
                hash: "h".into(),
                version: "6.12.117".into(),
            },
            patches: vec![],
            apply_method: "none".into(),
            fuzzed: vec![],
            fragments: vec![],
            base: crate::matrix::BaseConfig::Target("tinyconfig".into()),
            config_hash: "c".into(),
            hz: Some(100),
            compiler: "gcc".into(),
            build_id: None,
            image: dir.join("bzImage"),
            config: dir.join("config"),
            vmlinux: dir.join("vmlinux"),
            log: dir.join("build.log"),
            build_dir: dir.clone(),
            build_secs: 1.0,
            phases: Default::default(),
            reused_tree_of: None,
            objects: 1,
            built_at: "t".into(),
            cached: false,
        }
    }

    fn manifest(m: &Matrix, plan: Plan, shard: Option<&str>) -> Manifest {
        let kernels = plan
            .kernels
            .iter()
            .map(|k| (k.id.clone(), build(&k.id, &format!("{:02x}", k.id.len()))))
            .collect();
        let boots = plan
            .schedule
            .iter()
            .map(|s| BootRecord {
                boot: s.boot.clone(),
                rep: s.rep,
                kernel: plan.boot(&s.boot).unwrap().kernel.clone(),
                variant: "v".into(),
                arch: "x86_64".into(),
                accel: Accel::Tcg,
                accel_reason: "test".into(),
                qemu_version: "q".into(),
                qemu_command: vec![],
                console_log: format!("boots/{}/rep-{}/console.log", s.boot, s.rep),
                probes: None,
                ready_secs: Some(1.0),
                started: format!("2026-11-01T00:00:{:02}Z", s.rep),
                ending: None,
                error: None,
                clock_events: vec![],
            })
            .collect();
        Manifest {
            schema_version: crate::results::MANIFEST_SCHEMA,
            lab_version: LAB_VERSION.into(),
            run_id: "r".into(),
            created: "t".into(),
            matrix: MatrixInfo::of(m, None, shard.map(String::from)),
            plan,
            host: Default::default(),
            kernels,
            images: [(
                "x86_64".to_string(),
                ImageInfo {
                    arch: "x86_64".into(),
                    sha256: "aa".into(),
                    key: "k".into(),
                    packages: vec![],
                },
            )]
            .into(),
            boots,
            claim_sources: vec![ClaimSource {
                claims: vec![1],
                variant: "after".into(),
                origin: "mail".into(),
                tables: vec![],
            }],
        }
    }

    fn cell(c: &crate::matrix::CellSpec, rep: u32, value: f64) -> CellRecord {
        CellRecord {
            cell: c.id.clone(),
            rep,
            boot: c.boot.clone(),
            kernel: c.kernel.clone(),
            variant: c.variant.clone(),
            arch: c.arch.to_string(),
            axes: c.axes.clone(),
            status: CellStatus::Done,
            error: None,
            started: "t".into(),
            secs: 1.0,
            host_load: [0.0; 3],
            host_cores: 2,
            clocksource_before: "tsc".into(),
            clocksource_after: "tsc".into(),
            knobs: vec![],
            steps: vec![],
            metrics: vec![Metric::new("write.lat_mean", value, "ns")],
            fio_json: None,
            flags: vec![],
            contention: None,
            contended_attempts: vec![],
            guest_secs: None,
            perf: vec![],
        }
    }

    /// Shard `i` of `n` of dm-delay, as `lab run --shard i/N` would leave it:
    /// every cell of every rep done, a console log per boot.
    fn shard_run(root: &Path, i: usize, n: usize) -> RunDir {
        let (m, p) = full();
        let sub = shard::select(&p, i, n);
        let run = RunDir::create(&root.join(format!("shard-{i}")), "dm-delay").unwrap();
        run.write_manifest(&manifest(&m, sub.clone(), Some(&format!("{i}/{n}"))))
            .unwrap();
        for s in &sub.schedule {
            let d = run.boot_dir(&s.boot, s.rep);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("console.log"), format!("{} {}", s.boot, s.rep)).unwrap();
            for c in sub.cells_of_boot(&s.boot) {
                run.write_cell(&cell(c, s.rep, 1e6 + s.rep as f64)).unwrap();
                std::fs::write(
                    run.cell_dir(&c.id, s.rep).join("fio.json"),
                    format!("{{\"cell\":\"{}\"}}", c.id),
                )
                .unwrap();
            }
        }
        run
    }

    #[test]
    fn two_shards_merge_into_the_whole_run() {
        let d = tempfile::tempdir().unwrap();
        let a = shard_run(d.path(), 1, 2);
        let b = shard_run(d.path(), 2, 2);
        let out = d.path().join("merged");
        // The shard directories are given as CI leaves them: a directory
        // holding one run each.
        let merged = merge(&[d.path().join("shard-1"), d.path().join("shard-2")], &out).unwrap();
        assert_eq!(merged.path, out);
        let m = merged.read_manifest().unwrap();
        let (_, plan) = full();
        // The plan is the full plan, in its own order.
        let ids =
            |v: &[crate::matrix::KernelSpec]| v.iter().map(|k| k.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&m.plan.kernels), ids(&plan.kernels));
        assert_eq!(
            m.plan.cells.iter().map(|c| &c.id).collect::<Vec<_>>(),
            plan.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
        );
        assert_eq!(m.plan.schedule, plan.schedule);
        assert_eq!(m.plan.boots.len(), plan.boots.len());
        assert_eq!(m.matrix.shard, None);
        assert_eq!(m.run_id, "merged");
        assert_eq!(m.kernels.len(), 12);
        assert_eq!(m.boots.len(), plan.schedule.len());
        assert_eq!(m.images.len(), 1);
        assert_eq!(m.claim_sources.len(), 1);
        // Every cell of every rep, with its files, and the records.
        let cells = merged.cells().unwrap();
        assert_eq!(cells.len(), plan.cells.len() * 3);
        assert_eq!(merged.records().unwrap().len(), plan.cells.len() * 3);
        let c = &plan.cells[5];
        let fio = std::fs::read_to_string(merged.cell_dir(&c.id, 2).join("fio.json")).unwrap();
        assert!(fio.contains(&c.id));
        let sched = &plan.schedule[7];
        let log = merged.boot_dir(&sched.boot, sched.rep).join("console.log");
        assert_eq!(
            std::fs::read_to_string(log).unwrap(),
            format!("{} {}", sched.boot, sched.rep)
        );
        // The shards are left alone and no temp directory is left behind.
        assert!(a.path.join("manifest.json").is_file() && b.path.join("cells").is_dir());
        let leftovers: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty());
        // A second merge into the same place refuses.
        let again = merge(&[a.path.clone(), b.path.clone()], &out).unwrap_err();
        assert!(again.to_string().contains("not empty"), "{again}");
    }

    #[test]
    fn a_cell_in_two_shards_is_an_error_naming_both() {
        let d = tempfile::tempdir().unwrap();
        let a = shard_run(d.path(), 1, 2);
        let b = shard_run(d.path(), 2, 2);
        // Shard 2 also ran one of shard 1's cells.
        let (_, plan) = full();
        let stolen = a.cells().unwrap()[0].clone();
        b.write_cell(&stolen).unwrap();
        let out = d.path().join("merged");
        let e = format!(
            "{:#}",
            merge(&[a.path.clone(), b.path.clone()], &out).unwrap_err()
        );
        assert!(
            e.contains(&format!("cell {} rep {}", stolen.cell, stolen.rep)),
            "{e}"
        );
        assert!(e.contains(&a.path.display().to_string()), "{e}");
        assert!(e.contains(&b.path.display().to_string()), "{e}");
        assert!(!out.exists());
        assert!(plan.cells.iter().any(|c| c.id == stolen.cell));
    }

    #[test]
    fn different_matrices_versions_filters_or_splits_do_not_merge() {
        let d = tempfile::tempdir().unwrap();
        let a = shard_run(d.path(), 1, 2);
        let b = shard_run(d.path(), 2, 2);
        let out = d.path().join("merged");
        let try_with = |edit: &dyn Fn(&mut Manifest)| {
            let orig = b.read_manifest().unwrap();
            let mut m = orig.clone();
            edit(&mut m);
            b.write_manifest(&m).unwrap();
            let e = format!(
                "{:#}",
                merge(&[a.path.clone(), b.path.clone()], &out).unwrap_err()
            );
            b.write_manifest(&orig).unwrap();
            assert!(!out.exists());
            e
        };
        let e = try_with(&|m| m.matrix.hash = "0123456789abcdef".into());
        assert!(e.contains("ran different matrices"), "{e}");
        assert!(e.contains(&b.path.display().to_string()), "{e}");
        let e = try_with(&|m| m.lab_version = "9.9.9".into());
        assert!(e.contains("lab 9.9.9"), "{e}");
        let e = try_with(&|m| m.matrix.filter = Some("hz=100".into()));
        assert!(e.contains("hz=100") && e.contains("no filter"), "{e}");
        let e = try_with(&|m| m.matrix.shard = Some("1/2".into()));
        assert!(e.contains("shard 1/2 appears twice"), "{e}");
        let e = try_with(&|m| m.matrix.shard = Some("2/3".into()));
        assert!(e.contains("different splits"), "{e}");
        // The same kernel id in both, from different builds.
        let in_a = a
            .read_manifest()
            .unwrap()
            .kernels
            .keys()
            .next()
            .unwrap()
            .clone();
        let e = try_with(&|m| {
            m.kernels.insert(in_a.clone(), build(&in_a, "ff"));
        });
        assert!(e.contains(&format!("kernel {in_a} is build")), "{e}");
        let e = try_with(&|m| m.images.get_mut("x86_64").unwrap().sha256 = "bb".into());
        assert!(e.contains("image x86_64 differs"), "{e}");
        // And with b restored, the merge goes through.
        merge(&[a.path.clone(), b.path.clone()], &out).unwrap();
    }

    #[test]
    fn without_an_expandable_matrix_the_plan_is_concatenated() {
        let d = tempfile::tempdir().unwrap();
        let a = shard_run(d.path(), 1, 2);
        let b = shard_run(d.path(), 2, 2);
        for r in [&a, &b] {
            let mut m = r.read_manifest().unwrap();
            m.matrix.path = "/nonexistent/matrices/gone.yaml".into();
            m.matrix.text = "not: [a matrix".into();
            m.matrix.hash = crate::util::hash_bytes(m.matrix.text.as_bytes());
            r.write_manifest(&m).unwrap();
        }
        let merged = merge(&[a.path.clone(), b.path.clone()], &d.path().join("m")).unwrap();
        let m = merged.read_manifest().unwrap();
        let pa = a.read_manifest().unwrap().plan;
        let pb = b.read_manifest().unwrap().plan;
        let expect: Vec<String> = pa
            .kernels
            .iter()
            .chain(&pb.kernels)
            .map(|k| k.id.clone())
            .collect();
        assert_eq!(
            m.plan
                .kernels
                .iter()
                .map(|k| k.id.clone())
                .collect::<Vec<_>>(),
            expect
        );
        assert_eq!(m.plan.cells.len(), pa.cells.len() + pb.cells.len());
    }

    #[test]
    fn a_directory_without_runs_is_named() {
        let d = tempfile::tempdir().unwrap();
        let e = merge(&[d.path().to_path_buf()], &d.path().join("out")).unwrap_err();
        assert!(e.to_string().contains("is not a run directory"), "{e}");
    }
}
