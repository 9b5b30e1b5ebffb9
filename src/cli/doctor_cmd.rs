//! `lab doctor [--install]`: check the host, and install what is missing.

use crate::host::doctor;
use anyhow::Result;

/// Print the report; with `install`, install the missing packages (as
/// root with apt-get, else print the sudo command) and check again.
/// Returns 0 when nothing required is missing, else 4 (environment).
pub fn doctor(install: bool, probe_kvm: bool) -> Result<i32> {
    // Read-only: the cache is not created, and KVM is probed only when asked.
    let cache = crate::cache::Cache::open_existing()?;
    let root = crate::cache::default_root()?;
    let host_report = || {
        let facts = doctor::gather(cache.as_ref(), &root, doctor::cache_from(), probe_kvm);
        doctor::check(&doctor::items(), &doctor::System, &facts)
    };
    let report = host_report();
    crate::out!("{}", report.render())?;
    if report.missing_packages.is_empty() {
        if !report.optional_packages.is_empty() {
            crate::outln!(
                "\noptional: {}",
                doctor::sudo_command(&report.optional_packages)
            )?;
        }
        return Ok(report.exit_code());
    }
    if !install {
        crate::outln!(
            "\nmissing: {}\ninstall them with `lab doctor --install` (as root), or:\n  {}",
            report.missing_packages.join(" "),
            doctor::sudo_command(&report.missing_packages)
        )?;
        return Ok(report.exit_code());
    }
    if !doctor::is_root() {
        crate::outln!(
            "\n--install needs root; run:\n  {}",
            doctor::sudo_command(&report.missing_packages)
        )?;
        return Ok(report.exit_code());
    }
    crate::outln!("\ninstalling: {}", report.missing_packages.join(" "))?;
    doctor::apt_install(&report.missing_packages)?;
    crate::outln!("\nafter the install:")?;
    let again = host_report();
    crate::out!("{}", again.render())?;
    Ok(again.exit_code())
}
