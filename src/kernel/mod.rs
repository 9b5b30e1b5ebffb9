//! Kernels: source trees, patches, kconfig merge and verify, builds, cache.

pub mod patch;
