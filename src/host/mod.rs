//! The host lab runs on: its facts and the packages it needs.

pub mod doctor;
/// Moved to the crate root; kept as a path for callers not yet updated.
pub use crate::interrupt;
