//! `lab image build`: the guest userland, as a reproducible initramfs.

use crate::matrix::Arch;
use anyhow::Result;
use std::path::PathBuf;

pub fn build(arch: Option<Arch>, recipe: Option<PathBuf>) -> Result<i32> {
    let cache = crate::cache::Cache::open_default()?;
    let events = super::ui::attach(crate::events::Events::silent());
    let arches = match arch {
        Some(a) => vec![a],
        None => Arch::ALL.to_vec(),
    };
    for arch in arches {
        let img = crate::image::build(&cache, arch, recipe.as_deref(), true, &events)?;
        crate::outln!(
            "{arch}: {} sha256 {} {}({} packages)",
            img.path.display(),
            img.sha256,
            if img.cached {
                "cache hit, unchanged "
            } else {
                ""
            },
            img.packages.len()
        )?;
    }
    Ok(0)
}
