//! A boot: QEMU started, the guest reached over SSH, probed, and ended.
//!
//! Readiness is polled against a deadline that scales under TCG. While
//! waiting, the console and QEMU are checked every round, so a panic
//! ends the wait at once with the panic text, not at the deadline.

use super::keys::Keys;
use super::probe::{self, Probes};
use super::ssh::{ConnectError, Session};
use crate::vm::{Accel, BootConfig, Vm, profile};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub struct Booted {
    pub vm: Vm,
    pub ssh: Session,
    pub probes: Probes,
    /// Launch to SSH ready.
    pub ready_secs: f64,
}

/// The default readiness deadline: generous under TCG, scaled per arch.
pub fn default_deadline(cfg: &BootConfig) -> Duration {
    match cfg.accel {
        Accel::Kvm => Duration::from_secs(30),
        Accel::Tcg => Duration::from_secs_f64(90.0 * profile(cfg.arch).tcg_slowness),
    }
}

/// The initrd QEMU gets: the userland image, decompressed, with the keys
/// layer after it; the kernel unpacks concatenated archives in order.
///
/// Decompressed because under TCG the guest's zstd is the slowest part of
/// booting: on the reference machine unpacking the 31 MB .zst took 9 s,
/// the 92 MB raw archive 3 s. The cache keeps the compressed image; this
/// raw copy is made once per image and keys.
pub fn initrd(cache: &crate::cache::Cache, userland: &Path, keys: &Keys) -> Result<PathBuf> {
    let layer = keys.guest_layer()?;
    let key = crate::cache::KeyBuilder::new("initrd")
        .field("format", "raw-v1")
        .field("userland", crate::util::hash_file(userland)?)
        .field("keys", &layer)
        .finish();
    let (entry, _) = cache.get_or_make("initrd", &key, "userland (raw) + keys", |dir| {
        let zst =
            std::fs::read(userland).with_context(|| format!("reading {}", userland.display()))?;
        let mut data = crate::image::compress::decompress(&zst)?;
        data.extend_from_slice(&layer);
        // The keys layer holds the guest's private host key: owner only.
        use std::io::Write;
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let path = dir.join("initrd.img");
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(&data))
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    })?;
    Ok(entry.join("initrd.img"))
}

/// Boot and wait for SSH. On failure QEMU is ended before returning.
pub async fn boot(cfg: &BootConfig, dir: &Path, keys: &Keys, deadline: Duration) -> Result<Booted> {
    let mut vm = Vm::launch(cfg, dir).await?;
    match wait_ready(&mut vm, keys, deadline).await {
        Ok(ssh) => {
            let ready_secs = vm.started.elapsed().as_secs_f64();
            match probe::probe(&ssh).await {
                Ok(probes) => Ok(Booted {
                    vm,
                    ssh,
                    probes,
                    ready_secs,
                }),
                Err(e) => {
                    ssh.close().await;
                    vm.shutdown().await;
                    Err(e)
                }
            }
        }
        Err(e) => {
            vm.shutdown().await;
            Err(e)
        }
    }
}

async fn wait_ready(vm: &mut Vm, keys: &Keys, deadline: Duration) -> Result<Session> {
    let start = Instant::now();
    let mut last: Option<anyhow::Error> = None;
    loop {
        crate::interrupt::check()?;
        vm.check()?;
        // SSH is tried once the guest says it started dropbear; before
        // that a connection only waits in QEMU's forwarder.
        if vm.console.ready || start.elapsed() > Duration::from_secs(20) {
            match Session::connect(vm.ssh_port, keys).await {
                Ok(s) => return Ok(s),
                Err(ConnectError::Refused(e)) => return Err(e),
                Err(ConnectError::NotYet(e)) => last = Some(e),
            }
        }
        if start.elapsed() > deadline {
            vm.check()?;
            let why = last
                .map(|e| format!("{e:#}"))
                .unwrap_or_else(|| "the guest never said lab-guest-ready".into());
            bail!(
                "the guest was not reachable over SSH within {} s ({why}); last console lines ({}):\n{}",
                deadline.as_secs(),
                vm.console.path().display(),
                vm.console.tail(25)
            );
        }
        // The console is a file read from where the last scan ended, so
        // polling it often costs little, and the boot is seen sooner.
        let poll = if vm.console.ready { 50 } else { 20 };
        tokio::time::sleep(Duration::from_millis(poll)).await;
    }
}

impl Booted {
    /// End the boot: close SSH, then QMP quit (SIGKILL as the fallback).
    pub async fn shutdown(self) -> crate::vm::Ending {
        self.ssh.close().await;
        self.vm.shutdown().await
    }
}

/// Keys for this lab instance, under the cache.
pub fn instance_keys(cache: &crate::cache::Cache) -> Result<Keys> {
    Keys::load_or_create(&cache.root().join("keys")).context("loading lab's SSH keys")
}
