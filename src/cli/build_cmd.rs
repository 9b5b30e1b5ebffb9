//! `lab build`: every kernel of the matrix, from the cache when possible.

use super::MatrixArgs;
use crate::kernel::{BuildOptions, build_all};
use anyhow::Result;

pub fn build(m: &MatrixArgs, jobs: Option<usize>) -> Result<i32> {
    let (matrix, plan) = super::load_plan(m)?;
    crate::kernel::build::check_patches(&matrix, &plan.kernels, &m.mail)?;
    let cache = crate::cache::Cache::open_default()?;
    let events = super::ui::attach(crate::events::Events::silent());
    let opts = BuildOptions {
        mails: m.mail.clone(),
        jobs: jobs.unwrap_or_else(crate::util::ncpus),
    };
    let start = std::time::Instant::now();
    let (built, failed) = build_all(&cache, &matrix, &plan.kernels, &opts, &events);
    let fresh = built.iter().filter(|b| !b.cached).count();
    crate::outln!()?;
    for b in &built {
        let how = if b.cached {
            "cached".to_string()
        } else {
            let p = &b.phases;
            format!(
                "built in {} (configure {:.1} s, compile {:.1} s, link {:.1} s, image {:.1} s)",
                crate::util::human_secs(b.build_secs),
                p.configure,
                p.compile,
                p.link,
                p.image
            )
        };
        crate::outln!(
            "{:<28} {:<10} HZ={:<5} {}  {}",
            b.kernel,
            how,
            b.hz.map(|h| h.to_string()).unwrap_or("?".into()),
            b.key.short(),
            b.image.display()
        )?;
        for f in &b.fuzzed {
            crate::outln!(
                "{:<28} fuzz: {} hunk #{} of {} ({}) needed fuzz {}",
                "",
                f.patch,
                f.hunk,
                f.file,
                f.header,
                f.fuzz
            )?;
        }
    }
    if fresh == 0 && failed.is_empty() {
        crate::outln!(
            "nothing to build: all {} kernel(s) were in the cache ({})",
            built.len(),
            crate::util::human_secs(start.elapsed().as_secs_f64())
        )?;
    }
    if crate::interrupt::interrupted() {
        anyhow::bail!(crate::interrupt::Interrupted);
    }
    for (id, e) in &failed {
        eprintln!(
            "error: kernel {id}: {}",
            super::printable(&format!("{e:#}"))
        );
    }
    Ok(if failed.is_empty() { 0 } else { 1 })
}
