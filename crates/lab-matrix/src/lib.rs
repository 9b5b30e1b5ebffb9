//! The experiment matrix: parsed, validated, expanded into cells and
//! bound to a mail's claims. Pure: nothing here starts a process.

pub use lab_base::{error, interrupt, units, util};
pub use lab_mail::mail;

pub mod matrix;
