//! The guest: SSH session, commands, knobs, probes, cell setup.

pub mod boot;
pub mod keys;
pub mod knob;
pub mod probe;
pub mod setup;
pub mod shell;
pub mod ssh;
