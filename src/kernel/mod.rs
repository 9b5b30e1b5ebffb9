//! Kernels: source trees, patches, kconfig merge and verify, builds, cache.

pub mod build;
pub mod debian;
pub mod kconfig;
pub mod make;
pub mod patch;
pub mod source;

pub use build::{BuildOptions, KernelBuild, build_all};
