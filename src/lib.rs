//! lab: reproduce block-layer and device-mapper patch claims.
//!
//! The modules follow the pipeline, left to right:
//! `matrix` → `kernel` → `image` → `vm` → `guest` → `bench` → `results` → `report`.
//! Planning (`matrix`) is pure; everything with side effects sits further right.

pub mod bench;
pub mod cache;
pub mod cli;
pub mod error;
pub mod events;
pub mod guest;
pub mod host;
pub mod image;
pub mod interrupt;
pub mod kernel;
pub mod mail;
pub mod matrix;
pub mod record;
pub mod report;
pub mod results;
pub mod run;
pub mod util;
pub mod vm;
