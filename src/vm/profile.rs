//! One table of per-architecture QEMU profiles, as virtme-ng keeps them:
//! everything that differs between arches is here and nowhere else.

use crate::matrix::Arch;
pub use crate::record::Accel;

pub struct Profile {
    pub arch: Arch,
    pub qemu: &'static str,
    /// The Debian package that provides `qemu`.
    pub package: &'static str,
    pub machine: &'static str,
    pub cpu_tcg: &'static str,
    pub cpu_kvm: &'static str,
    /// The serial console's device name in the guest.
    pub console: &'static str,
    /// Scales the readiness deadline: emulating a foreign arch is slower.
    pub tcg_slowness: f64,
}

pub const PROFILES: [Profile; 2] = [
    Profile {
        arch: Arch::X86_64,
        qemu: "qemu-system-x86_64",
        package: "qemu-system-x86",
        machine: "q35",
        cpu_tcg: "max",
        cpu_kvm: "host",
        console: "ttyS0",
        tcg_slowness: 1.0,
    },
    Profile {
        arch: Arch::Arm64,
        qemu: "qemu-system-aarch64",
        package: "qemu-system-arm",
        machine: "virt",
        // `max` without pauth-impdef=on is 3x slower under TCG; the
        // cortex-a57 model has no pointer authentication to emulate.
        cpu_tcg: "cortex-a57",
        cpu_kvm: "host",
        console: "ttyAMA0",
        tcg_slowness: 1.5,
    },
];

pub fn profile(arch: Arch) -> &'static Profile {
    PROFILES
        .iter()
        .find(|p| p.arch == arch)
        .expect("every arch has a profile")
}
