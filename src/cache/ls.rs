//! The table `lab cache ls` prints.

use super::Cache;
use super::size::{Inodes, human_bytes};
use anyhow::Result;
use comfy_table::{Table, presets::ASCII_MARKDOWN};

/// The table `lab cache ls` prints, oldest entry first.
pub fn ls_text(cache: &Cache) -> Result<String> {
    let entries = cache.list()?;
    let mut t = Table::new();
    t.load_style(ASCII_MARKDOWN)
        .set_header(["kind", "key", "label", "size", "created"]);
    let mut all = Inodes::default();
    for (path, info) in &entries {
        let own = Inodes::of(path);
        // entry.json may come from an imported archive: no raw escapes.
        let shown = |s: &str| crate::util::escape_controls(s).into_owned();
        t.add_row([
            shown(&info.kind),
            shown(info.key.short()),
            shown(&info.label),
            human_bytes(own.bytes()),
            shown(&info.created),
        ]);
        all.extend(own);
    }
    let roots = super::buildroot::build_roots(cache);
    let mut roots_text = String::new();
    if !roots.is_empty() {
        let mut r = Table::new();
        r.load_style(ASCII_MARKDOWN).set_header([
            "build root",
            "last built",
            "own size",
            "last used",
        ]);
        let entries_only = all.clone();
        for root in &roots {
            let inodes = Inodes::of(&root.dir);
            // What the root adds: its objects, not the source it links to.
            let own = inodes.minus(std::iter::once(&entries_only));
            r.add_row([
                root.name.clone(),
                root.last_built.clone().unwrap_or_default(),
                human_bytes(own.bytes()),
                crate::util::rfc3339(root.used),
            ]);
            all.extend(inodes);
        }
        roots_text = format!(
            "\n{r}\n{} build roots: work trees for patched rebuilds; \
             `lab cache gc --build-roots` removes them (their kernels stay cached)\n",
            roots.len()
        );
    }
    Ok(format!(
        "cache {}\n{t}\n{} entries{roots_text}\n{} on disk (hard links counted once)\n",
        cache.root().display(),
        entries.len(),
        human_bytes(all.bytes())
    ))
}
