//! The QEMU side of each arch (binary, machine, CPU models, console),
//! read from the one arch table, `matrix::arch::ARCHES`.

use crate::matrix::Arch;
pub use crate::matrix::Qemu as Profile;
pub use crate::record::Accel;

pub fn profile(arch: Arch) -> &'static Profile {
    &arch.facts().qemu
}
