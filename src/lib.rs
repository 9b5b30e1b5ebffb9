//! lab: reproduce block-layer and device-mapper patch claims.
//!
//! The pipeline, left to right:
//! `mail` → `draft` → `matrix` → `kernel` → `cache` → `image` → `vm` →
//! `guest` → `bench` → `results` → `report`, with `run` driving the
//! stages and `cli` doing the arguments and the terminal.
//!
//! The pure stages are crates of their own (`crates/`): lab-base,
//! lab-mail, lab-matrix, lab-draft and lab-report (the run store's
//! types, results and report). This crate holds everything with side
//! effects and re-exports the others under their old paths, so
//! `lab::matrix::Matrix` is what it was.

pub use lab_base::{error, interrupt, units, util};
pub use lab_draft::draft;
pub use lab_mail::mail;
pub use lab_matrix::matrix;
pub use lab_report::{record, report, results};

pub mod bench;
pub mod cache;
pub mod cli;
pub mod events;
pub mod guest;
pub mod host;
pub mod image;
pub mod kernel;
pub mod run;
pub mod vm;
pub mod watch;
