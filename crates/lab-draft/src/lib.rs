//! `lab new`: a matrix drafted from a mail, checked by planning it.

pub use lab_base::{error, interrupt, units, util};
pub use lab_mail::mail;
pub use lab_matrix::matrix;

pub mod draft;
