//! Checks that catch at plan time what would otherwise fail in a guest,
//! an hour into a run: the plan's size, names used as paths, files that
//! do not exist, fragment lines kconfig would drop, knobs outside sysfs
//! and procfs, and cells that would share a directory.
//!
//! Only reads: planning stays free of side effects.

use super::{Matrix, Plan, Source, limits};
use crate::matrix::schema::{PatchDef, SetupStep};
use anyhow::{Result, bail};
use std::collections::BTreeMap;

/// Guest memory below this does not hold the initramfs and fio.
pub const MIN_MEMORY_MIB: u32 = 128;

/// Every check; returns the plan it had to expand anyway.
pub fn check(m: &Matrix, max_cells: usize) -> Result<Plan> {
    let p = m.path.display();
    limits::check_size(m, max_cells)?;
    check_name(m)?;
    check_axis_values(m)?;
    for f in m.fragments.iter().chain(
        m.kernel_axes
            .iter()
            .flat_map(|a| &a.values)
            .flat_map(|v| &v.fragments),
    ) {
        check_fragment_lines(f)?;
    }
    if m.boot.cpus == Some(0) {
        bail!("{p}: boot.cpus is 0: a guest needs at least 1 CPU");
    }
    if let Some(mem) = m.boot.memory
        && mem < MIN_MEMORY_MIB
    {
        bail!(
            "{p}: boot.memory is {mem} MiB: a guest needs at least {MIN_MEMORY_MIB} (the value is in MiB, e.g. 1024)"
        );
    }
    check_files(m)?;
    let plan = m.plan().map_err(|e| locate_template(m, e))?;
    check_cells(m, &plan)?;
    check_axes_used(m)?;
    Ok(plan)
}

/// A template error names the template; put the matrix's line and
/// column in front, where the template is written.
fn locate_template(m: &Matrix, e: anyhow::Error) -> anyhow::Error {
    let msg = format!("{e:#}");
    let Some(t) = msg
        .split_once("template '")
        .and_then(|(_, r)| r.split_once("': "))
        .map(|(t, _)| t)
    else {
        return e;
    };
    let Some(at) = m.text.find(t) else { return e };
    let line = m.text[..at].matches('\n').count() + 1;
    let col = m.text[..at].rfind('\n').map_or(at, |nl| at - nl - 1) + 1;
    let p = m.path.display().to_string();
    let rest = msg
        .strip_prefix(&format!("{p}: "))
        .unwrap_or(&msg)
        .to_string();
    anyhow::anyhow!("{p}:{line}:{col}: {rest}")
}

fn check_name(m: &Matrix) -> Result<()> {
    let n = &m.name;
    // The run directory is NAME-DATE-TIME, and a file name has at most
    // 255 bytes: a name of 100 leaves room, and reads whole in a listing.
    if n.len() > 100 {
        bail!(
            "{}: name is {} characters long; a matrix name has at most 100 (it names the run directory)",
            m.path.display(),
            n.len()
        );
    }
    let ok = !n.is_empty()
        && !n.starts_with('.')
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if !ok {
        bail!(
            "{}: name '{}' names the run directory: use letters, digits, '.', '_' or '-', not starting with '.'",
            m.path.display(),
            crate::util::clip(n, 100)
        );
    }
    Ok(())
}

/// `[1, 1]` and `[1, "1"]` would give two cells the same id.
fn check_axis_values(m: &Matrix) -> Result<()> {
    for a in m.kernel_axes.iter().chain(&m.boot_axes).chain(&m.run_axes) {
        let mut seen: Vec<String> = Vec::new();
        for v in &a.values {
            let s = v.value.to_string();
            if seen.contains(&s) {
                bail!(
                    "{}: axis '{}' has the value '{s}' twice (as written, or once as a number and once as a string): each value makes a cell id",
                    m.path.display(),
                    a.name
                );
            }
            seen.push(s);
        }
    }
    Ok(())
}

/// The names a matrix's templates read: identifiers inside `{{ }}` and
/// `{% %}`, outside comments.
fn template_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for line in text.lines() {
        let line = line.split(" #").next().unwrap_or(line);
        if line.trim_start().starts_with('#') {
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(['{']) {
            let after = &rest[at + 1..];
            let close = match after.chars().next() {
                Some('{') => "}}",
                Some('%') => "%}",
                _ => {
                    rest = after;
                    continue;
                }
            };
            let body = &after[1..];
            let end = body.find(close).unwrap_or(body.len());
            names.extend(
                body[..end]
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .filter(|w| !w.is_empty()),
            );
            rest = &body[end..];
        }
    }
    names
}

/// A boot or run axis no template reads makes cells that all run the
/// same thing: their differences are noise, reported as results.
fn check_axes_used(m: &Matrix) -> Result<()> {
    let used = template_names(&m.text);
    for (section, axes) in [("boot_axes", &m.boot_axes), ("run_axes", &m.run_axes)] {
        for a in axes.iter().filter(|a| a.values.len() > 1) {
            if used.contains(&a.name.as_str()) {
                continue;
            }
            let at = m
                .text
                .find(&format!("{section}:"))
                .and_then(|s| {
                    m.text[s..]
                        .find(&format!("\n  {}:", a.name))
                        .map(|i| s + i + 3)
                })
                .unwrap_or(0);
            let line = m.text[..at].matches('\n').count() + 1;
            bail!(
                "{}:{line}:3: {section}.{} is read by no template (write {{{{ {} }}}} in the step, workload or boot option it changes): its values would make cells that all run the same thing",
                m.path.display(),
                a.name,
                a.name,
            );
        }
    }
    Ok(())
}

/// A fragment line is empty, a comment, `CONFIG_X=value` or
/// `# CONFIG_X is not set`; anything else kconfig drops silently.
pub fn check_fragment_lines(f: &super::Fragment) -> Result<()> {
    for (i, line) in f.text.lines().enumerate() {
        let t = line.trim();
        let ok = if t.is_empty() {
            true
        } else if let Some(c) = t.strip_prefix('#') {
            let c = c.trim();
            match c.strip_prefix("CONFIG_") {
                Some(rest) => rest.ends_with(" is not set") || !super::fragments::is_symbol(rest),
                None => true,
            }
        } else {
            super::fragments::is_config_line(t)
        };
        if !ok {
            bail!(
                "{}:{}: fragment '{}': '{line}' is not a kconfig line: write CONFIG_X=y, CONFIG_X=value or '# CONFIG_X is not set'",
                f.origin,
                i + 1,
                f.name
            );
        }
    }
    Ok(())
}

/// Patch files and a tarball or git source the user named must exist.
fn check_files(m: &Matrix) -> Result<()> {
    let p = m.path.display();
    match &m.source {
        Source::Tarball {
            path,
            debian_package: None,
        } if !path.is_file() => {
            bail!(
                "{p}: kernel.source: tarball {} does not exist",
                path.display()
            )
        }
        Source::Git { repo, .. } if !repo.is_dir() => {
            bail!(
                "{p}: kernel.source: git tree {} does not exist",
                repo.display()
            )
        }
        _ => {}
    }
    for v in &m.variants {
        for patch in &v.patches {
            let (key, file) = match patch {
                PatchDef::Mail { mail } => ("mail", mail),
                PatchDef::Diff { diff } => ("diff", diff),
                PatchDef::MessageId { .. } => continue,
            };
            if !std::path::Path::new(file).is_file() {
                bail!(
                    "{p}: variant '{}': patches: {{{key}: ...}}: {file} does not exist",
                    v.name
                );
            }
        }
    }
    Ok(())
}

/// Checks on the rendered cells: knob paths, module parameters, and
/// directory names that must not collide.
fn check_cells(m: &Matrix, plan: &Plan) -> Result<()> {
    let p = m.path.display();
    {
        for cell in &plan.cells {
            for step in &cell.setup {
                match step {
                    SetupStep::Knob(k) => {
                        let ok = (k.path.starts_with("/sys/") || k.path.starts_with("/proc/"))
                            && !k.path.split('/').any(|s| s == "..");
                        if !ok {
                            bail!(
                                "{p}: cell {}: setup knob path '{}' is outside /sys and /proc (or uses '..'): a knob is a sysfs or procfs file",
                                cell.id,
                                k.path
                            );
                        }
                    }
                    SetupStep::ModuleParam(mp) => {
                        for (what, v) in [("module", &mp.module), ("param", &mp.param)] {
                            if v.is_empty() || v.contains('/') || v == ".." || v.contains(' ') {
                                bail!(
                                    "{p}: cell {}: setup module_param {what} '{v}' is not a plain name",
                                    cell.id
                                );
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let mut dirs: BTreeMap<String, &str> = BTreeMap::new();
    for id in plan
        .cells
        .iter()
        .map(|c| c.id.as_str())
        .chain(plan.boots.iter().map(|b| b.id.as_str()))
    {
        if let Some(other) = dirs.insert(super::dir_name(id), id)
            && other != id
        {
            bail!(
                "{p}: cells '{other}' and '{id}' would share the directory {}: make the axis values differ in letters or digits, not only in punctuation or spaces",
                super::dir_name(id)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(text: &str) -> super::super::Fragment {
        super::super::Fragment {
            name: "x".into(),
            origin: "kconfigs/x.config".into(),
            text: text.into(),
        }
    }

    #[test]
    fn fragment_lines_are_kconfig_or_comments() {
        check_fragment_lines(&frag("CONFIG_A=y\n# CONFIG_B is not set\n\n# a note\n")).unwrap();
        let e = check_fragment_lines(&frag("CONFIG_A=y\nHZ=100\n"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("kconfigs/x.config:2: fragment 'x': 'HZ=100'"),
            "{e}"
        );
        assert!(check_fragment_lines(&frag("CONFIG_A=\n")).is_err());
    }
}
