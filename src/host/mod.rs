//! The host lab runs on: its facts, its CPU pressure and the packages it needs.

pub mod doctor;
pub mod pressure;
