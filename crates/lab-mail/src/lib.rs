//! lab's first stage: mails, mboxes and patch series, and the claims
//! reader that finds a mail's numbers (`lab claims extract`).

// The modules keep the paths they had in the one-crate layout
// (`crate::util`, `crate::error`), so code moves between crates unchanged.
pub use lab_base::{error, interrupt, units, util};

pub mod mail;
