//! The host lab runs on: its facts, its signals, the packages it needs.

pub mod doctor;
pub mod interrupt;
pub mod pressure;
