//! Shared set-up for the integration tests: real kernels, real images.
//!
//! Tests use lab's own cache (LAB_CACHE, else ~/.cache/lab), so the first
//! test to need a kernel builds it (about ten minutes on two cores) and
//! every later one, in any test binary, gets a cache hit.
#![allow(dead_code)]

use lab::cache::Cache;
use lab::events::Events;
use lab::kernel::{BuildOptions, KernelBuild};
use lab::matrix::{Arch, Matrix};
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The patch mail the dm-delay matrix reproduces: the repo's copy of
/// shared/mail/dm-delay-ns-expiry.mbox, so a clone anywhere can test.
pub fn shared_mail() -> PathBuf {
    let p = repo().join("tests/data/patches/dm-delay-ns-expiry.mbox");
    assert!(
        p.is_file(),
        "the shared patch mail is missing at {}",
        p.display()
    );
    p
}

pub fn cache() -> Cache {
    Cache::open_default().expect("opening lab's cache")
}

/// Log lines to the test's output, so a slow first build shows progress.
pub fn events() -> Events {
    Events::silent().subscribe(|e| match e {
        lab::events::Event::Progress { done: Some(_), .. } => {}
        other => eprintln!("{other:?}"),
    })
}

/// The small matrix's kernels: x86_64 HZ=100, before and after.
pub fn small_kernels() -> Vec<KernelBuild> {
    build_matrix(&repo().join("tests/data/matrices/small.yaml"), None)
}

pub fn build_matrix(path: &Path, filter: Option<&str>) -> Vec<KernelBuild> {
    let m = Matrix::load(path).unwrap();
    let mut plan = m.plan().unwrap();
    if let Some(f) = filter {
        plan = lab::matrix::Filter::parse(f).unwrap().apply(&plan);
    }
    let opts = BuildOptions {
        mails: vec![shared_mail()],
        ..Default::default()
    };
    let (built, failed) = lab::kernel::build_all(&cache(), &m, &plan.kernels, &opts, &events());
    assert!(
        failed.is_empty(),
        "kernel builds failed: {:?}",
        failed
            .iter()
            .map(|(k, e)| format!("{k}: {e:#}"))
            .collect::<Vec<_>>()
    );
    built
}

pub fn kernel(builds: &[KernelBuild], id: &str) -> KernelBuild {
    builds
        .iter()
        .find(|b| b.kernel == id)
        .unwrap_or_else(|| panic!("no kernel {id}"))
        .clone()
}

/// The guest image for an arch (built once, then a cache hit).
pub fn image(arch: Arch) -> PathBuf {
    lab::image::build(&cache(), arch, None, false, &events())
        .expect("building the guest image")
        .path
}

/// The lab binary cargo built for these tests.
pub fn lab_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lab"))
}

/// The one run a `lab run` wrote under `results`.
pub fn only_run(results: &Path) -> lab::results::RunDir {
    let dirs: Vec<_> = std::fs::read_dir(results)
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("manifest.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "expected one run in {}", results.display());
    lab::results::RunDir {
        path: dirs[0].path(),
    }
}

/// The QEMU processes whose command line names `needle`.
pub fn qemus(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|p| {
            let pid: i32 = p.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(p.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline);
            (cmdline.contains("qemu-system") && cmdline.contains(needle)).then_some(pid)
        })
        .collect()
}
