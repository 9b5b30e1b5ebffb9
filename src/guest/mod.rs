//! The guest: SSH session, commands, knobs, probes.

// pub mod keys; (waits for image::cpio)
// pub mod ssh;
