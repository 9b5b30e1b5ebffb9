//! Real QEMU (TCG or KVM, as probed), a lab-built kernel, the lab image,
//! and russh to the guest's dropbear.

mod common;

use lab::guest::boot::{self, Booted};
use lab::guest::keys::Keys;
use lab::matrix::Arch;
use lab::vm::BootConfig;
use std::time::{Duration, Instant};

async fn config(initrd: std::path::PathBuf) -> BootConfig {
    let k = tokio::task::spawn_blocking(|| {
        common::kernel(&common::small_kernels(), "x86_64-hz100-before")
    })
    .await
    .unwrap();
    let accel = lab::vm::accel::choose(Arch::X86_64, None, &k.image, &common::cache())
        .await
        .unwrap()
        .accel;
    BootConfig {
        arch: Arch::X86_64,
        kernel: k.image,
        initrd,
        cpus: 1,
        memory: 1024,
        accel,
        null_blk: [("nr_devices", "1"), ("gb", "1"), ("memory_backed", "1")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        nvme: vec![lab::matrix::schema::NvmeDef {
            serial: Some("labtest".into()),
            size: Some("256M".into()),
            ..Default::default()
        }],
        cmdline: String::new(),
    }
}

fn keys() -> Keys {
    boot::instance_keys(&common::cache()).unwrap()
}

fn lab_initrd(keys: &Keys) -> std::path::PathBuf {
    boot::initrd(&common::cache(), &common::image(Arch::X86_64), keys).unwrap()
}

async fn up(cfg: &BootConfig, keys: &Keys, dir: &std::path::Path) -> Booted {
    boot::boot(cfg, dir, keys, boot::default_deadline(cfg))
        .await
        .expect("boot")
}

#[tokio::test(flavor = "multi_thread")]
async fn boots_and_runs_commands_over_one_ssh_session_then_quits_over_qmp() {
    let keys = keys();
    let cfg = config(lab_initrd(&keys)).await;
    let dir = tempfile::tempdir().unwrap();
    let b = up(&cfg, &keys, dir.path()).await;
    eprintln!("ready in {:.2} s, probes {:?}", b.ready_secs, b.probes);

    let o = b.ssh.exec("uname -r; ls /dev/nvme0n1 /dev/nullb0; cat /sys/devices/system/clocksource/clocksource0/current_clocksource").await.unwrap();
    assert!(o.ok(), "{o:?}");
    assert!(o.stdout.starts_with("6.12."), "{}", o.stdout);
    assert!(
        o.stdout.contains("/dev/nvme0n1") && o.stdout.contains("/dev/nullb0"),
        "{}",
        o.stdout
    );
    // The probe reads the clocksource the kernel runs on. Under TCG the
    // kernel may replace tsc-early with tsc (once the TSC is calibrated)
    // between the probe and this command: that one switch is the
    // kernel's, any other difference is the probe's error.
    let now = o.stdout.lines().nth(3).unwrap();
    assert!(
        now == b.probes.clocksource || (b.probes.clocksource == "tsc-early" && now == "tsc"),
        "probe said {}, the guest now says {now}",
        b.probes.clocksource
    );

    // Exit status, stderr, and death by signal are all reported.
    let o = b.ssh.exec("echo oops >&2; exit 3").await.unwrap();
    assert_eq!((o.status, o.stderr.trim()), (Some(3), "oops"));
    let o = b.ssh.exec("kill -9 $$").await.unwrap();
    assert_eq!(o.status, None);
    assert!(o.signal.as_deref().unwrap_or("").contains("KILL"), "{o:?}");

    // The session is reused: a command on it is quick.
    let t = Instant::now();
    for _ in 0..5 {
        b.ssh.exec("true").await.unwrap().check("true").unwrap();
    }
    eprintln!(
        "5 commands on one session: {:.2} s",
        t.elapsed().as_secs_f64()
    );

    // Files both ways.
    let data: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    b.ssh.upload("/tmp/blob", &data, 0o600).await.unwrap();
    assert_eq!(b.ssh.download("/tmp/blob").await.unwrap(), data);

    // Probes: the HZ the kernel was built with, a real clocksource, the devices.
    assert_eq!(b.probes.hz_config, Some(100));
    assert_eq!(b.probes.hz_measured, Some(100));
    assert!(b.probes.block_devices.iter().any(|d| d == "nullb0"));
    assert!(b.probes.block_devices.iter().any(|d| d.starts_with("nvme")));
    assert!(
        b.probes.available_clocksources.len() >= 2,
        "{:?}",
        b.probes.available_clocksources
    );
    // The fio version comes from the first fio cell, not the probe.
    assert_eq!(b.probes.fio_version, None);

    assert_eq!(b.vm.qmp.status().await.unwrap(), "running");
    let pid = b.vm.pid().unwrap();
    let end = b.shutdown().await;
    assert_eq!(end.how, "qmp-quit");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "QEMU {pid} still runs"
    );
}

/// A guest runs strangers' patches: it must not reach a service on the
/// host's loopback (user-mode networking's 10.0.2.2), while lab still
/// reaches the guest's SSH through its forward.
#[tokio::test(flavor = "multi_thread")]
async fn a_guest_cannot_reach_a_listener_on_the_hosts_loopback() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let keys = keys();
    let cfg = config(lab_initrd(&keys)).await;
    let dir = tempfile::tempdir().unwrap();
    let b = up(&cfg, &keys, dir.path()).await;
    // The guest's network is up (the forward works: we are talking to it).
    let o = b
        .ssh
        .exec(&format!(
            "ip addr show dev eth0 | grep -c 10.0.2.15; \
             echo hello | timeout 5 busybox nc 10.0.2.2 {port}; echo rc=$?"
        ))
        .await
        .unwrap();
    eprintln!("guest: {}{}", o.stdout, o.stderr);
    assert!(o.stdout.starts_with('1'), "eth0 has its address: {o:?}");
    assert!(!o.stdout.contains("rc=0"), "nc succeeded: {o:?}");
    let accepted = listener.accept();
    b.shutdown().await;
    assert!(
        matches!(&accepted, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the guest connected to the host's 127.0.0.1:{port}: {accepted:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_init_fails_the_boot_fast_with_the_panic_text() {
    let keys = keys();
    let mut cfg = config(lab_initrd(&keys)).await;
    // /bin/false as init exits at once: "Attempted to kill init!"
    cfg.cmdline = "rdinit=/bin/false".into();
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let err = match boot::boot(&cfg, dir.path(), &keys, Duration::from_secs(120)).await {
        Ok(_) => panic!("a guest whose init exits must not boot"),
        Err(e) => format!("{e:#}"),
    };
    let secs = t.elapsed().as_secs_f64();
    assert!(err.contains("Kernel panic"), "{err}");
    assert!(err.contains("Attempted to kill init"), "{err}");
    assert!(secs < 60.0, "took {secs:.1} s to notice the panic");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guest_with_another_host_key_is_refused() {
    let other = tempfile::tempdir().unwrap();
    let impostor = Keys::load_or_create(other.path()).unwrap();
    let mine = keys();
    // The guest gets the impostor's host key; lab pins its own.
    let cfg = config(lab_initrd(&impostor)).await;
    let dir = tempfile::tempdir().unwrap();
    let err = match boot::boot(&cfg, dir.path(), &mine, Duration::from_secs(120)).await {
        Ok(_) => panic!("lab talked to a guest with the wrong host key"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("not the pinned key"), "{err}");
}

/// Children of `pid` whose command line mentions qemu-system.
fn qemu_children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().nth(1))
            .and_then(|x| x.parse::<u32>().ok());
        let cmd = std::fs::read_to_string(format!("/proc/{p}/cmdline")).unwrap_or_default();
        if ppid == Some(pid) && cmd.contains("qemu-system") {
            out.push(p);
        }
    }
    out
}

fn kill_lab_during_boot(signal: i32) {
    let k = common::kernel(&common::small_kernels(), "x86_64-hz100-before");
    common::image(Arch::X86_64);
    let entry = k.image.parent().unwrap().to_path_buf();
    let mut lab = std::process::Command::new(common::lab_bin())
        .args(["boot", "--kernel"])
        .arg(&entry)
        .args(["--", "sleep", "60"])
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let qemu = loop {
        let q = qemu_children(lab.id());
        if let Some(q) = q.first() {
            break *q;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "lab started no QEMU");
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(500));
    unsafe { libc::kill(lab.id() as i32, signal) };
    let _ = lab.wait();
    let t = Instant::now();
    while std::path::Path::new(&format!("/proc/{qemu}")).exists() {
        // A zombie has no cmdline left; only a live QEMU counts.
        let alive = std::fs::read_to_string(format!("/proc/{qemu}/cmdline"))
            .is_ok_and(|c| c.contains("qemu"));
        if !alive {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "QEMU {qemu} survived lab (signal {signal})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_during_a_boot_leaves_no_qemu() {
    kill_lab_during_boot(libc::SIGTERM);
}

#[test]
fn sigkill_during_a_boot_leaves_no_qemu() {
    kill_lab_during_boot(libc::SIGKILL);
}
