//! QEMU: the command line per arch, the accelerator probe, QMP, console.

pub mod accel;
pub mod cmdline;
pub mod console;
pub mod profile;
pub mod qmp;

pub use cmdline::BootConfig;
pub use profile::{Accel, profile};

use anyhow::{Context, Result, bail};
use console::{Console, Trouble};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A running QEMU. Dropping it kills QEMU; `shutdown` ends it politely.
pub struct Vm {
    child: tokio::process::Child,
    pub qmp: qmp::Qmp,
    pub console: Console,
    pub ssh_port: u16,
    /// The full command line, program first, for the record.
    pub command: Vec<String>,
    pub accel: Accel,
    pub qemu_version: String,
    pub started: Instant,
    nvme_images: Vec<PathBuf>,
    _group: crate::interrupt::GroupGuard,
    _sockdir: tempfile::TempDir,
}

/// How a VM ended.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Ending {
    /// "qmp-quit" or "killed".
    pub how: String,
    pub qmp_events: Vec<String>,
}

/// A free TCP port on 127.0.0.1. QEMU binds it a moment later; a race
/// with another program is caught by `launch`, which retries.
fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

impl Vm {
    /// Start QEMU with its console, QMP socket and files under `dir`.
    pub async fn launch(cfg: &BootConfig, dir: &Path) -> Result<Vm> {
        std::fs::create_dir_all(dir)?;
        let prof = profile(cfg.arch);
        if crate::util::which(prof.qemu).is_none() {
            bail!(
                "{} is not installed: install Debian's {} (apt-get install {}, or lab doctor --install)",
                prof.qemu,
                prof.package,
                prof.package
            );
        }
        let mut last_err = None;
        for _ in 0..3 {
            match Self::try_launch(cfg, dir).await {
                Ok(vm) => return Ok(vm),
                Err(e) if format!("{e:#}").contains("host forwarding") => last_err = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last_err.unwrap())
    }

    async fn try_launch(cfg: &BootConfig, dir: &Path) -> Result<Vm> {
        let prof = profile(cfg.arch);
        let console_log = dir.join("console.log");
        // A unix socket path may not exceed 108 bytes; run directories can.
        let sockdir = tempfile::Builder::new().prefix("lab-qmp-").tempdir()?;
        let qmp_socket = sockdir.path().join("qmp.sock");
        std::fs::write(&console_log, b"")?;
        let nvme_images = make_nvme_images(cfg, dir)?;
        let rt = cmdline::Runtime {
            console_log: console_log.clone(),
            qmp_socket: qmp_socket.clone(),
            ssh_port: free_port()?,
            nvme_images: nvme_images.clone(),
        };
        let args = cmdline::qemu_args(cfg, &rt);
        let qemu_log = dir.join("qemu.log");
        let mut cmd = std::process::Command::new(prof.qemu);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&qemu_log)?)
            .stderr(std::fs::File::create(dir.join("qemu.stderr"))?);
        crate::interrupt::own_group(&mut cmd);
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.kill_on_drop(true);
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .with_context(|| format!("starting {}", prof.qemu))?;
        let group = crate::interrupt::register_group(child.id().unwrap_or(0) as i32);
        let qmp = qmp::Qmp::connect(&qmp_socket, Duration::from_secs(10)).await;
        // QEMU opened its drives before QMP answered: RAM-backed images can
        // be unlinked now, so even a killed lab leaves nothing in /dev/shm.
        for img in nvme_images.iter().filter(|p| p.starts_with("/dev/shm")) {
            let _ = std::fs::remove_file(img);
        }
        let qmp = match qmp {
            Ok(q) => q,
            Err(e) => {
                let _ = child.kill().await;
                let stderr = std::fs::read_to_string(dir.join("qemu.stderr")).unwrap_or_default();
                bail!("QEMU did not start: {e:#}\n{}", stderr.trim());
            }
        };
        let qemu_version = qmp.version().await.unwrap_or_else(|_| "unknown".into());
        let mut command = vec![prof.qemu.to_string()];
        command.extend(args);
        Ok(Vm {
            child,
            qmp,
            console: Console::new(&console_log),
            ssh_port: rt.ssh_port,
            command,
            accel: cfg.accel,
            qemu_version,
            started,
            nvme_images,
            _group: group,
            _sockdir: sockdir,
        })
    }

    /// Fail when QEMU has exited or the console shows a panic or an oops.
    pub fn check(&mut self) -> Result<()> {
        self.console.scan();
        if let Some(t) = &self.console.trouble {
            let what = match t {
                Trouble::Panic(_) => "kernel panic",
                Trouble::Oops(_) => "kernel oops",
            };
            bail!(
                "{what}: {}\nlast console lines ({}):\n{}",
                t.line(),
                self.console.path().display(),
                self.console.tail(25)
            );
        }
        if let Ok(Some(status)) = self.child.try_wait() {
            // Give the console a moment: QEMU may exit just after the panic line.
            self.console.scan();
            let stderr = std::fs::read_to_string(self.console.path().with_file_name("qemu.stderr"))
                .unwrap_or_default();
            bail!(
                "QEMU exited ({status}) {}\nlast console lines ({}):\n{}",
                stderr.trim(),
                self.console.path().display(),
                self.console.tail(25)
            );
        }
        Ok(())
    }

    /// End the guest: QMP `quit`, then SIGKILL if it does not go in 5 s.
    pub async fn shutdown(mut self) -> Ending {
        let qmp_events = self.qmp.event_names();
        let how = if self.qmp.quit().await.is_ok()
            && tokio::time::timeout(Duration::from_secs(5), self.child.wait())
                .await
                .is_ok()
        {
            "qmp-quit"
        } else {
            let _ = self.child.kill().await;
            "killed"
        };
        for img in &self.nvme_images {
            let _ = std::fs::remove_file(img);
        }
        Ending {
            how: how.into(),
            qmp_events,
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }
}

/// Backing images for NVMe namespaces: in /dev/shm for `memory`, so the
/// device is as fast as RAM, or beside the console log for `file`.
fn make_nvme_images(cfg: &BootConfig, dir: &Path) -> Result<Vec<PathBuf>> {
    // Unique per VM: QEMU locks its images, so two VMs of one lab process
    // must not share a name.
    static SEQ: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let vm = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut out = Vec::new();
    for (i, n) in cfg.nvme.iter().enumerate() {
        let size = n
            .size
            .as_deref()
            .map(|s| cmdline::parse_size(s).with_context(|| format!("nvme size '{s}'")))
            .transpose()?
            .unwrap_or(1 << 30);
        let path = match n.backing.as_deref().unwrap_or("memory") {
            "memory" => PathBuf::from(format!(
                "/dev/shm/lab-nvme-{}-{vm}-{i}.img",
                std::process::id()
            )),
            "file" => dir.join(format!("nvme{i}.img")),
            other => bail!("nvme backing '{other}': use memory or file"),
        };
        let f =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        f.set_len(size)?;
        out.push(path);
    }
    Ok(out)
}
