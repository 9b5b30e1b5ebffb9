//! `lab boot`: one kernel in QEMU, a command over SSH, a clean end.

use super::run_cmd::parse_accel;
use crate::guest::boot;
use crate::kernel::KernelBuild;
use crate::matrix::Arch;
use crate::vm::{Accel, BootConfig};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args, Clone, Debug)]
pub struct BootArgs {
    /// A kernel: its cache entry directory, a cache key (prefix), or an image file with --arch.
    #[arg(long)]
    pub kernel: String,
    /// The arch of a bare image file (x86_64, amd64, arm64, aarch64).
    #[arg(long, value_parser = super::arch)]
    pub arch: Option<Arch>,
    #[arg(long, value_parser = parse_accel)]
    pub accel: Option<Accel>,
    /// Guest CPUs (1 to 256).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub cpus: u32,
    /// MiB (128 to 1048576)
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(128..=1_048_576))]
    pub memory: u32,
    /// null_blk parameters, e.g. nr_devices=1,memory_backed=1,gb=1
    #[arg(long, default_value = "nr_devices=1,gb=1,memory_backed=1")]
    pub null_blk: String,
    /// Emulated NVMe namespaces (RAM-backed, 1 GiB each; 0 to 16).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=16))]
    pub nvme: u32,
    /// The guest's nvme.poll_queues.
    #[arg(long)]
    pub nvme_poll_queues: Option<u32>,
    /// Extra kernel command line.
    #[arg(long, default_value = "")]
    pub cmdline: String,
    /// Seconds from launch to SSH (1 to 86400).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub ready_timeout: Option<u64>,
    /// Where the console log and QMP socket go (default: a temp dir).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Run the command this many times on the one SSH session and print
    /// the median round trip (the command's output is shown once).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub repeat: u32,
    /// The command to run in the guest.
    #[arg(last = true)]
    pub command: Vec<String>,
}

/// Find a kernel: a cache entry dir, a key prefix, or an image file.
pub fn resolve_kernel(
    cache: &crate::cache::Cache,
    spec: &str,
    arch: Option<Arch>,
) -> Result<(PathBuf, Arch, Option<KernelBuild>)> {
    let p = Path::new(spec);
    if p.join("meta.json").is_file() {
        let b = KernelBuild::from_entry(p)?;
        return Ok((b.image.clone(), b.arch, Some(b)));
    }
    if p.is_file() {
        let arch = arch.context("a bare kernel image needs --arch x86_64 or --arch arm64")?;
        return Ok((p.to_path_buf(), arch, None));
    }
    let hits: Vec<_> = cache
        .list()?
        .into_iter()
        .filter(|(_, i)| {
            i.kind == "kernel" && (i.key.0.starts_with(spec) || i.label.starts_with(spec))
        })
        .collect();
    match hits.as_slice() {
        [(dir, _)] => {
            let b = KernelBuild::from_entry(dir)?;
            Ok((b.image.clone(), b.arch, Some(b)))
        }
        [] => bail!(
            "no kernel '{spec}': give a cache entry directory, a key prefix or kernel id from `lab cache ls`, or an image file with --arch"
        ),
        many => bail!(
            "'{spec}' matches {} kernels; give more of the key: {}",
            many.len(),
            many.iter()
                .map(|(_, i)| i.key.short().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

pub fn boot_cmd(a: &BootArgs) -> Result<i32> {
    let cache = crate::cache::Cache::open_default()?;
    // Which kernel and arch is what the user gave: a miss is exit 3.
    let (image, arch, build) =
        resolve_kernel(&cache, &a.kernel, a.arch).map_err(crate::error::input)?;
    let events = super::ui::attach(crate::events::Events::silent());
    let tmp = tempfile::tempdir()?;
    let dir = a.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let img = {
            let (c, e) = (cache.clone(), events.clone());
            tokio::task::spawn_blocking(move || crate::image::build(&c, arch, None, false, &e)).await??
        };
        let keys = boot::instance_keys(&cache)?;
        let initrd = boot::initrd(&cache, &img.path, &keys)?;
        let choice = crate::vm::accel::choose(arch, a.accel, &image, &cache).await?;
        let null_blk = a
            .null_blk
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())).with_context(|| format!("--null-blk: '{kv}' is not key=value")))
            .collect::<Result<_>>()
            .map_err(crate::error::input)?;
        let nvme = (0..a.nvme)
            .map(|i| crate::matrix::schema::NvmeDef {
                serial: Some(format!("lab{i}")),
                poll_queues: a.nvme_poll_queues.map(|q| crate::matrix::Scalar::Int(q as i64)),
                ..Default::default()
            })
            .collect();
        let cfg = BootConfig { arch, kernel: image, initrd, cpus: a.cpus, memory: a.memory, accel: choice.accel, null_blk, nvme, cmdline: a.cmdline.clone() };
        let deadline = a.ready_timeout.map(Duration::from_secs).unwrap_or_else(|| boot::default_deadline(&cfg));
        let b = boot::boot(&cfg, &dir, &keys, deadline).await?;
        if let Some(k) = &build
            && k.build_id.is_some()
            && k.build_id != b.probes.build_id
        {
            eprintln!("warning: the guest's build id {:?} differs from the kernel entry's {:?}", b.probes.build_id, k.build_id);
        }
        eprintln!(
            "boot: {arch} ready over SSH in {:.2} s ({}: {}); kernel {}, clocksource {}, console {}",
            b.ready_secs,
            choice.accel,
            choice.reason,
            b.probes.uname_r,
            b.probes.clocksource,
            dir.join("console.log").display()
        );
        let mut code = 0;
        if !a.command.is_empty() {
            let cmd = a.command.join(" ");
            let out = b.ssh.exec(&cmd).await?;
            crate::out!("{}", out.stdout)?;
            eprint!("{}", out.stderr);
            code = out.status.map(|s| s as i32).unwrap_or(128);
            if a.repeat > 1 {
                let mut secs = vec![out.secs];
                for _ in 1..a.repeat {
                    secs.push(b.ssh.exec(&cmd).await?.secs);
                }
                secs.sort_by(|x, y| x.total_cmp(y));
                eprintln!("ssh: {} runs of the command on one session, median round trip {:.3} s", secs.len(), secs[secs.len() / 2]);
            }
        }
        let end = b.shutdown().await;
        eprintln!("boot: ended by {}", end.how);
        Ok(code)
    })
}
