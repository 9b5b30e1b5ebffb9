//! Choosing KVM or TCG.
//!
//! `/dev/kvm` existing proves nothing: under nested virtualisation it can
//! hang at 100% sys or die with an internal error. KVM is used only after
//! a bounded probe boot shows the guest kernel printing; the answer is
//! remembered for the host's boot id, so each host pays for it once.

use super::profile::{Accel, profile};
use crate::matrix::Arch;
use anyhow::Result;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Choice {
    pub accel: Accel,
    /// Why, in words: "forced", "probe boot printed in 0.4 s", "no /dev/kvm".
    pub reason: String,
}

const PROBE_DEADLINE: Duration = Duration::from_secs(8);

pub async fn choose(
    arch: Arch,
    forced: Option<Accel>,
    kernel: &Path,
    cache: &crate::cache::Cache,
) -> Result<Choice> {
    if let Some(a) = forced {
        return Ok(Choice {
            accel: a,
            reason: format!("--accel {a}"),
        });
    }
    if Arch::host() != Some(arch) {
        return Ok(Choice {
            accel: Accel::Tcg,
            reason: format!("{arch} guest on a {} host", std::env::consts::ARCH),
        });
    }
    let kvm_ok = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    if !kvm_ok {
        return Ok(Choice {
            accel: Accel::Tcg,
            reason: "no usable /dev/kvm".into(),
        });
    }
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let memo =
        cache
            .root()
            .join("probes")
            .join(format!("kvm-{}-{}.json", arch.name(), boot_id.trim()));
    if let Ok(c) = crate::util::read_json::<Choice>(&memo) {
        return Ok(c);
    }
    let c = probe(arch, kernel).await;
    crate::util::atomic_write_json(&memo, &c)?;
    Ok(c)
}

/// Boot the kernel with KVM and no initrd: it prints its banner, fails to
/// find a root and panics; with panic=-1 and -no-reboot QEMU then exits.
async fn probe(arch: Arch, kernel: &Path) -> Choice {
    let prof = profile(arch);
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            return Choice {
                accel: Accel::Tcg,
                reason: format!("KVM probe could not start: {e}"),
            };
        }
    };
    let log = dir.path().join("console.log");
    let mut cmd = tokio::process::Command::new(prof.qemu);
    cmd.args([
        "-M",
        prof.machine,
        "-accel",
        "kvm",
        "-cpu",
        prof.cpu_kvm,
        "-m",
        "256M",
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-no-reboot",
    ])
    .arg("-kernel")
    .arg(kernel)
    .args(["-append", &format!("console={} panic=-1", prof.console)])
    .args([
        "-chardev",
        &format!("file,id=con,path={}", log.display()),
        "-serial",
        "chardev:con",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let start = Instant::now();
    let Ok(mut child) = cmd.spawn() else {
        return Choice {
            accel: Accel::Tcg,
            reason: format!("{} would not start for the KVM probe", prof.qemu),
        };
    };
    while start.elapsed() < PROBE_DEADLINE {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.contains("Linux version") {
            let _ = child.kill().await;
            return Choice {
                accel: Accel::Kvm,
                reason: format!(
                    "KVM probe boot printed after {:.1} s",
                    start.elapsed().as_secs_f64()
                ),
            };
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Choice {
                accel: Accel::Tcg,
                reason: format!("KVM probe boot failed ({status}) before printing; using TCG"),
            };
        }
    }
    let _ = child.kill().await;
    Choice {
        accel: Accel::Tcg,
        reason: format!(
            "KVM probe boot printed nothing in {} s; using TCG",
            PROBE_DEADLINE.as_secs()
        ),
    }
}
