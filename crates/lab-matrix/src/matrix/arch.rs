//! The architectures lab builds and boots, and everything that differs
//! between them, in one table ([`ARCHES`]): the kernel build, the guest
//! userland, QEMU, and the shard planner's cost estimates. Each stage
//! reads its part from here (`vm::profile` the QEMU part); no other file
//! matches on an arch.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    X86_64,
    Arm64,
}

/// What QEMU needs to know of an arch.
pub struct Qemu {
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

/// Everything that differs between arches.
pub struct ArchFacts {
    pub arch: Arch,
    /// The name lab writes (`arch: x86_64`), then the other names it reads.
    pub names: &'static [&'static str],
    /// The kernel's `ARCH=`.
    pub kernel_arch: &'static str,
    /// The kernel image `make` produces: its target and its path in the
    /// build directory.
    pub image_target: &'static str,
    pub image_path: &'static str,
    /// `CROSS_COMPILE=` when building on another arch, and the Debian
    /// package of that compiler.
    pub cross_prefix: &'static str,
    pub cross_package: &'static str,
    /// Debian's architecture name, for mmdebstrap.
    pub debian: &'static str,
    /// Debian's multiarch triplet, the name of its library directories.
    pub triplet: &'static str,
    /// `e_machine` of the arch's ELF files (EM_X86_64, EM_AARCH64).
    pub elf_machine: u16,
    /// What glibc's `$PLATFORM` expands to.
    pub platform: &'static str,
    pub qemu: Qemu,
    /// A clean kernel build, in seconds (x86_64 measured at 9 min 50 s),
    /// and launch to SSH ready under TCG with the probes and the
    /// shutdown: the shard planner's estimates.
    pub clean_build_secs: f64,
    pub boot_secs: f64,
}

/// The one table, in [`Arch`]'s order.
pub const ARCHES: [ArchFacts; 2] = [
    ArchFacts {
        arch: Arch::X86_64,
        names: &["x86_64", "amd64", "x86-64"],
        kernel_arch: "x86_64",
        image_target: "bzImage",
        image_path: "arch/x86/boot/bzImage",
        cross_prefix: "x86_64-linux-gnu-",
        cross_package: "gcc-x86-64-linux-gnu",
        debian: "amd64",
        triplet: "x86_64-linux-gnu",
        elf_machine: 62,
        platform: "x86_64",
        qemu: Qemu {
            qemu: "qemu-system-x86_64",
            package: "qemu-system-x86",
            machine: "q35",
            cpu_tcg: "max",
            cpu_kvm: "host",
            console: "ttyS0",
            tcg_slowness: 1.0,
        },
        clean_build_secs: 600.0,
        boot_secs: 15.0,
    },
    ArchFacts {
        arch: Arch::Arm64,
        names: &["arm64", "aarch64"],
        kernel_arch: "arm64",
        image_target: "Image",
        image_path: "arch/arm64/boot/Image",
        cross_prefix: "aarch64-linux-gnu-",
        cross_package: "gcc-aarch64-linux-gnu",
        debian: "arm64",
        triplet: "aarch64-linux-gnu",
        elf_machine: 183,
        platform: "aarch64",
        qemu: Qemu {
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
        clean_build_secs: 350.0,
        boot_secs: 25.0,
    },
];

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Arm64];

    /// This arch's row of [`ARCHES`].
    pub fn facts(self) -> &'static ArchFacts {
        &ARCHES[self as usize]
    }

    pub fn parse(s: &str) -> Option<Arch> {
        ARCHES.iter().find(|f| f.names.contains(&s)).map(|f| f.arch)
    }

    pub fn name(self) -> &'static str {
        self.facts().names[0]
    }

    /// The kernel's `ARCH=`.
    pub fn kernel_arch(self) -> &'static str {
        self.facts().kernel_arch
    }

    /// Debian's architecture name, for mmdebstrap.
    pub fn debian(self) -> &'static str {
        self.facts().debian
    }

    /// The kernel image `make` produces, relative to the build directory.
    pub fn image_target(self) -> &'static str {
        self.facts().image_target
    }

    pub fn image_path(self) -> &'static str {
        self.facts().image_path
    }

    /// The arches lab supports, by name: `x86_64 and arm64`.
    pub fn known(conjunction: &str) -> String {
        let names: Vec<&str> = ARCHES.iter().map(|f| f.names[0]).collect();
        names.join(&format!(" {conjunction} "))
    }

    /// The host lab runs on.
    pub fn host() -> Option<Arch> {
        Arch::parse(std::env::consts::ARCH)
    }

    /// `CROSS_COMPILE=` prefix when building on `host`, and the Debian
    /// package that provides that compiler.
    pub fn cross_compile(self, host: Option<Arch>) -> Option<(&'static str, &'static str)> {
        let f = self.facts();
        (host != Some(self)).then_some((f.cross_prefix, f.cross_package))
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_arch_order_and_names_read_back() {
        for (i, a) in Arch::ALL.into_iter().enumerate() {
            assert_eq!(ARCHES[i].arch, a);
            for n in a.facts().names {
                assert_eq!(Arch::parse(n), Some(a), "{n}");
            }
            assert_eq!(a.to_string(), a.facts().names[0]);
        }
        assert_eq!(Arch::parse("riscv64"), None);
        assert_eq!(Arch::X86_64.cross_compile(Some(Arch::X86_64)), None);
        assert_eq!(
            Arch::Arm64.cross_compile(Some(Arch::X86_64)),
            Some(("aarch64-linux-gnu-", "gcc-aarch64-linux-gnu"))
        );
    }
}
