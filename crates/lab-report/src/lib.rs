//! The run store and what is made of it: every type written to disk
//! (`record`), run directories, resume and merge (`results`), and the
//! statistics, verdicts and renderers (`report`). It reads runs; it
//! never starts a guest, so it does not depend on tokio, russh or qapi.

pub use lab_base::{error, interrupt, units, util};
pub use lab_mail::mail;
pub use lab_matrix::matrix;

pub mod record;
pub mod report;
pub mod results;
