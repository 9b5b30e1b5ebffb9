//! The QEMU command line for one boot: pure, so it is tested without QEMU.

use super::profile::{Accel, profile};
use crate::matrix::Arch;
use crate::matrix::schema::NvmeDef;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Everything a boot needs that is not a file lab owns.
#[derive(Clone, Debug)]
pub struct BootConfig {
    pub arch: Arch,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub cpus: u32,
    /// MiB
    pub memory: u32,
    pub accel: Accel,
    /// null_blk module parameters.
    pub null_blk: BTreeMap<String, String>,
    pub nvme: Vec<NvmeDef>,
    /// Extra kernel command line.
    pub cmdline: String,
}

/// Paths and ports chosen at launch time.
#[derive(Clone, Debug)]
pub struct Runtime {
    pub console_log: PathBuf,
    pub qmp_socket: PathBuf,
    pub ssh_port: u16,
    /// One backing image per NVMe controller.
    pub nvme_images: Vec<PathBuf>,
}

/// The guest kernel command line.
pub fn kernel_cmdline(cfg: &BootConfig) -> String {
    let p = profile(cfg.arch);
    // panic=-1 with -no-reboot makes a panicking guest end QEMU at once,
    // so a failed boot is noticed in seconds, not at the SSH deadline.
    let mut parts = vec![
        format!("console={}", p.console),
        "panic=-1".to_string(),
        "rdinit=/init".to_string(),
    ];
    for (k, v) in &cfg.null_blk {
        parts.push(format!("null_blk.{k}={v}"));
    }
    let poll: Vec<String> = cfg
        .nvme
        .iter()
        .filter_map(|n| n.poll_queues.as_ref().map(|q| q.to_string()))
        .collect();
    if let Some(q) = poll.first() {
        parts.push(format!("nvme.poll_queues={q}"));
    }
    if !cfg.cmdline.trim().is_empty() {
        parts.push(cfg.cmdline.trim().to_string());
    }
    parts.join(" ")
}

pub fn qemu_args(cfg: &BootConfig, rt: &Runtime) -> Vec<String> {
    let p = profile(cfg.arch);
    let mut a: Vec<String> = Vec::new();
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
    push(&["-M", p.machine, "-accel", cfg.accel.name()]);
    push(&[
        "-cpu",
        if cfg.accel == Accel::Kvm {
            p.cpu_kvm
        } else {
            p.cpu_tcg
        },
    ]);
    push(&[
        "-smp",
        &cfg.cpus.to_string(),
        "-m",
        &format!("{}M", cfg.memory),
    ]);
    push(&[
        "-nodefaults",
        "-no-user-config",
        "-display",
        "none",
        "-no-reboot",
    ]);
    push(&["-kernel", &cfg.kernel.display().to_string()]);
    push(&["-initrd", &cfg.initrd.display().to_string()]);
    push(&["-append", &kernel_cmdline(cfg)]);
    push(&[
        "-chardev",
        &format!("file,id=con,path={}", opt_value(&rt.console_log)),
        "-serial",
        "chardev:con",
    ]);
    push(&[
        "-chardev",
        &format!(
            "socket,id=qmp,path={},server=on,wait=off",
            opt_value(&rt.qmp_socket)
        ),
        "-mon",
        "chardev=qmp,mode=control",
    ]);
    // restrict=on: the guest runs a stranger's patch and must reach
    // nothing of the host (user-mode networking would otherwise let it
    // connect to every service on the host's loopback through 10.0.2.2).
    // The forward for SSH, from the host in, still works.
    push(&[
        "-netdev",
        &format!(
            "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{}-:22",
            rt.ssh_port
        ),
    ]);
    push(&[
        "-device",
        // No option ROM: SeaBIOS would load and run iPXE's under TCG
        // for a network boot that never happens.
        "virtio-net-pci,netdev=n0,romfile=",
        "-device",
        "virtio-rng-pci",
    ]);
    for (i, (n, img)) in cfg.nvme.iter().zip(&rt.nvme_images).enumerate() {
        push(&[
            "-drive",
            &format!("file={},if=none,id=nvm{i},format=raw", opt_value(img)),
        ]);
        let mut dev = format!(
            "nvme,id=nvme{i},serial={}",
            n.serial.clone().unwrap_or_else(|| format!("lab{i}"))
        );
        if let Some(q) = n.queues {
            dev.push_str(&format!(",max_ioqpairs={q}"));
        }
        if let Some(m) = n.mdts {
            dev.push_str(&format!(",mdts={m}"));
        }
        push(&["-device", &dev]);
        let lbs = n.logical_block_size.unwrap_or(512);
        push(&[
            "-device",
            &format!(
                "nvme-ns,drive=nvm{i},bus=nvme{i},logical_block_size={lbs},physical_block_size={lbs}"
            ),
        ]);
    }
    a
}

/// A path as a value in QEMU's `key=value,…` options, where a comma is
/// written twice. Run directories hold cell ids like `poll_queues=2,jobs=1`.
fn opt_value(p: &std::path::Path) -> String {
    p.display().to_string().replace(',', ",,")
}

/// `1G`, `512M`, `4096` (bytes) → bytes; one parser for every size.
pub fn parse_size(s: &str) -> Option<u64> {
    crate::cache::size::parse_size(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(arch: Arch) -> BootConfig {
        BootConfig {
            arch,
            kernel: "/k/bzImage".into(),
            initrd: "/r/initrd".into(),
            cpus: 2,
            memory: 1024,
            accel: Accel::Tcg,
            null_blk: [
                ("memory_backed".to_string(), "1".to_string()),
                ("gb".to_string(), "1".to_string()),
            ]
            .into(),
            nvme: vec![],
            cmdline: "quiet".into(),
        }
    }

    fn rt() -> Runtime {
        Runtime {
            console_log: "/r/console.log".into(),
            qmp_socket: "/r/qmp.sock".into(),
            ssh_port: 2222,
            nvme_images: vec!["/dev/shm/n0".into()],
        }
    }

    #[test]
    fn x86_64_boots_q35_on_ttys0_with_null_blk_parameters() {
        let args = qemu_args(&cfg(Arch::X86_64), &rt()).join(" ");
        assert!(
            args.contains("-M q35 -accel tcg -cpu max -smp 2 -m 1024M"),
            "{args}"
        );
        assert!(
            args.contains(
                "console=ttyS0 panic=-1 rdinit=/init null_blk.gb=1 null_blk.memory_backed=1 quiet"
            ),
            "{args}"
        );
        assert!(
            args.contains("user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:2222-:22"),
            "{args}"
        );
        assert!(
            args.contains("-chardev socket,id=qmp,path=/r/qmp.sock,server=on,wait=off -mon chardev=qmp,mode=control"),
            "{args}"
        );
    }

    #[test]
    fn arm64_uses_virt_cortex_a57_and_ttyama0() {
        let args = qemu_args(&cfg(Arch::Arm64), &rt()).join(" ");
        assert!(
            args.contains("-M virt -accel tcg -cpu cortex-a57"),
            "{args}"
        );
        assert!(args.contains("console=ttyAMA0"), "{args}");
    }

    #[test]
    fn nvme_devices_carry_their_settings_and_poll_queues_reach_the_guest() {
        let mut c = cfg(Arch::X86_64);
        c.nvme = vec![NvmeDef {
            serial: Some("pollme".into()),
            queues: Some(4),
            mdts: Some(7),
            logical_block_size: Some(4096),
            poll_queues: Some(crate::matrix::Scalar::Int(2)),
            ..Default::default()
        }];
        let args = qemu_args(&c, &rt()).join(" ");
        assert!(
            args.contains("-device nvme,id=nvme0,serial=pollme,max_ioqpairs=4,mdts=7"),
            "{args}"
        );
        assert!(
            args.contains("nvme-ns,drive=nvm0,bus=nvme0,logical_block_size=4096"),
            "{args}"
        );
        assert!(args.contains("nvme.poll_queues=2"), "{args}");
    }

    #[test]
    fn commas_in_paths_are_doubled() {
        let mut r = rt();
        r.console_log = "/res/b@pq=2,jobs=1/console.log".into();
        let args = qemu_args(&cfg(Arch::X86_64), &r).join(" ");
        assert!(
            args.contains("file,id=con,path=/res/b@pq=2,,jobs=1/console.log"),
            "{args}"
        );
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }
}
