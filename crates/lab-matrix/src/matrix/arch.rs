//! The architectures lab builds and boots, and what differs between them
//! at build time. The QEMU side lives in `vm::profile`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    X86_64,
    Arm64,
}

impl Arch {
    pub const ALL: [Arch; 2] = [Arch::X86_64, Arch::Arm64];

    pub fn parse(s: &str) -> Option<Arch> {
        match s {
            "x86_64" | "amd64" | "x86-64" => Some(Arch::X86_64),
            "arm64" | "aarch64" => Some(Arch::Arm64),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
        }
    }

    /// The kernel's `ARCH=`.
    pub fn kernel_arch(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
        }
    }

    /// Debian's architecture name, for mmdebstrap.
    pub fn debian(self) -> &'static str {
        match self {
            Arch::X86_64 => "amd64",
            Arch::Arm64 => "arm64",
        }
    }

    /// The kernel image `make` produces, relative to the build directory.
    pub fn image_target(self) -> &'static str {
        match self {
            Arch::X86_64 => "bzImage",
            Arch::Arm64 => "Image",
        }
    }

    pub fn image_path(self) -> &'static str {
        match self {
            Arch::X86_64 => "arch/x86/boot/bzImage",
            Arch::Arm64 => "arch/arm64/boot/Image",
        }
    }

    /// The host lab runs on.
    pub fn host() -> Option<Arch> {
        Arch::parse(std::env::consts::ARCH)
    }

    /// `CROSS_COMPILE=` prefix when building on `host`, and the Debian
    /// package that provides that compiler.
    pub fn cross_compile(self, host: Option<Arch>) -> Option<(&'static str, &'static str)> {
        if host == Some(self) {
            return None;
        }
        Some(match self {
            Arch::X86_64 => ("x86_64-linux-gnu-", "gcc-x86-64-linux-gnu"),
            Arch::Arm64 => ("aarch64-linux-gnu-", "gcc-aarch64-linux-gnu"),
        })
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
