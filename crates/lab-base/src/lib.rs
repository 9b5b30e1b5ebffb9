//! What every stage of lab shares: the error kinds and exit codes
//! (`error`), SIGINT/SIGTERM handling that keeps finished work
//! (`interrupt`), and small helpers for files, YAML and text (`util`).

pub mod error;
pub mod interrupt;
pub mod units;
pub mod util;
