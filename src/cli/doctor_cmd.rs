//! `lab doctor [--install]`: check the host, and install what is missing.

use crate::host::doctor;
use anyhow::Result;

/// Print the report; with `install`, install the missing packages (as
/// root with apt-get, else print the sudo command) and check again.
/// Returns 0 when nothing required is missing, else 1.
pub fn doctor(install: bool) -> Result<i32> {
    let cache = crate::cache::Cache::open_default()?;
    let report = host_report(&cache);
    print!("{}", report.render());
    if report.missing_packages.is_empty() {
        if !report.optional_packages.is_empty() {
            println!(
                "\noptional: {}",
                doctor::sudo_command(&report.optional_packages)
            );
        }
        return Ok(report.exit_code());
    }
    if !install {
        println!(
            "\nmissing: {}\ninstall them with `lab doctor --install` (as root), or:\n  {}",
            report.missing_packages.join(" "),
            doctor::sudo_command(&report.missing_packages)
        );
        return Ok(report.exit_code());
    }
    if !doctor::is_root() {
        println!(
            "\n--install needs root; run:\n  {}",
            doctor::sudo_command(&report.missing_packages)
        );
        return Ok(report.exit_code());
    }
    println!("\ninstalling: {}", report.missing_packages.join(" "));
    doctor::apt_install(&report.missing_packages)?;
    println!("\nafter the install:");
    let again = host_report(&cache);
    print!("{}", again.render());
    Ok(again.exit_code())
}

fn host_report(cache: &crate::cache::Cache) -> doctor::Report {
    let facts = doctor::gather(cache, doctor::cache_from());
    doctor::check(&doctor::items(), &doctor::System, &facts)
}
