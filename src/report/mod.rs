//! Reports: statistics, claims, and the renderers.

pub mod claims;
pub mod stats;
