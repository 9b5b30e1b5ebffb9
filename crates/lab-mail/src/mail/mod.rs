//! Mail: mbox splitting, patch mails, and the claims a mail makes.
//!
//! Everything that reads a mail lives here, so `kernel/` (patches) and
//! `report/` (claims) share one reader, and `run/` and `results/` need
//! not import `report/` to store what a mail claimed.

pub mod claims;
pub mod mbox;
pub mod message;
pub mod model;

pub use model::{ClaimKind, ClaimTable, Column, Origin, Row, Unit, UnitKind, Value};
