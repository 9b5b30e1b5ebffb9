//! `lab new --mail FILE`: write the matrix a mail describes.

use crate::draft::{self, Options};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

#[derive(clap::Args, Debug)]
pub struct NewArgs {
    /// The patch mail: a single mail, an mbox thread, `git format-patch`
    /// output or plain text.
    #[arg(long)]
    pub mail: PathBuf,
    /// The matrix's name (default: from the mail's subject).
    #[arg(long)]
    pub name: Option<String>,
    /// Where to write it (default: matrices/NAME.yaml); `-` for stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// One variant per cumulative prefix of a series: p1, p2, ..., after.
    #[arg(long)]
    pub per_patch: bool,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

pub fn new(a: &NewArgs) -> Result<i32> {
    let raw = crate::util::read_input(&a.mail, "--mail", crate::util::MAX_MAIL_INPUT)?;
    let name = match &a.name {
        Some(n) if !crate::matrix::fragments::is_plain_name(n) => {
            return Err(crate::error::input_error(format!(
                "--name '{n}': use letters, digits, '.', '_' and '-'"
            )));
        }
        Some(n) => n.clone(),
        None => draft::suggested_name(&raw),
    };
    let stdout = a.out.as_deref() == Some(Path::new("-"));
    let out = match &a.out {
        Some(o) if !stdout => o.clone(),
        _ if stdout => std::env::current_dir()?.join(format!("{name}.yaml")),
        _ => PathBuf::from("matrices").join(format!("{name}.yaml")),
    };
    // Only a regular file is replaced (by rename, so a symlink itself is
    // replaced, never written through): not a device, FIFO or directory.
    if let Ok(meta) = std::fs::symlink_metadata(&out)
        && !stdout
        && !meta.is_file()
        && !meta.file_type().is_symlink()
    {
        return Err(crate::error::input_error(format!(
            "--out {}: exists and is not a regular file; lab new writes a new file or replaces one",
            out.display()
        )));
    }
    if !stdout && out.exists() && !a.force {
        return Err(crate::error::input_error(format!(
            "{} exists; give --force to overwrite it, or --out FILE",
            out.display()
        )));
    }
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !stdout {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let opts = Options {
        name: Some(name),
        per_patch: a.per_patch,
        mail_ref: relative(dir, &a.mail),
    };
    let d = draft::draft(&raw, &opts, &out)?;
    if stdout {
        // The draft is the whole output: a closed stdout lost it, which
        // is an error here and not the quiet end of `lab plan | head`.
        crate::out!("{}", d.yaml)
            .and_then(|_| std::io::Write::flush(&mut std::io::stdout()))
            .map_err(|e| {
                crate::error::environment(anyhow::anyhow!(
                    "writing the draft to stdout: {}",
                    crate::util::io_reason(&e)
                ))
            })?;
    } else {
        crate::util::atomic_write(&out, d.yaml.as_bytes())?;
    }
    let shown = if stdout {
        "stdout".into()
    } else {
        out.display().to_string()
    };
    eprint!("{}", super::printable(&summary(&shown, &d)));
    if d.unrunnable.is_some() {
        eprintln!("fix its setup or filename, then lab plan {}", out.display());
        return Ok(crate::error::exit::INCOMPLETE);
    }
    if !stdout {
        eprintln!(
            "next: read its comments, then lab plan {0} && lab run {0}",
            out.display()
        );
    }
    Ok(0)
}

/// The one screen `lab new` prints: what the draft is, whether it runs,
/// what its claims bind, what it decided that the mail did not say, and
/// what it left as comments (with why), at most 72 columns a line.
fn summary(shown: &str, d: &draft::Draft) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    let _ = writeln!(o, "wrote {shown}");
    let _ = writeln!(o, "  cells     {}", d.cells);
    let _ = match &d.unrunnable {
        None => writeln!(o, "  runnable  yes"),
        Some(why) => writeln!(
            o,
            "  runnable  no: could not work out what the mail's fio job opens, or a\n    device its setup needs:\n    {}",
            crate::util::wrap_words(&crate::util::clip(why, 300), 66).join("\n    ")
        ),
    };
    let _ = if d.unrunnable.is_some() {
        writeln!(
            o,
            "  claims    {} kept, not bound until the draft plans",
            d.claims
        )
    } else {
        writeln!(
            o,
            "  claims    {} kept, binding {} value(s); every kept claim binds",
            d.claims, d.values
        )
    };
    let list = |o: &mut String, head: &str, items: &[String], max: usize| {
        if items.is_empty() {
            return;
        }
        let _ = writeln!(o, "  {head}");
        for i in items.iter().take(max) {
            // A long caption is in the file; two lines say enough here.
            for (k, l) in crate::util::wrap_words(&crate::util::clip(i, 130), 66)
                .into_iter()
                .enumerate()
            {
                let _ = writeln!(o, "    {}{l}", if k == 0 { "- " } else { "  " });
            }
        }
        if items.len() > max {
            let _ = writeln!(
                o,
                "    ... and {} more, in the file's comments",
                items.len() - max
            );
        }
    };
    list(&mut o, "inferred (check these first):", &d.inferred, 6);
    // `table 3 ("a long caption..."): why` → `table 3: why`; the
    // caption is beside it in the file.
    let tables: Vec<String> = d
        .unclaimed
        .iter()
        .map(|u| match (u.split_once(" (\""), u.rsplit_once("\"): ")) {
            (Some((head, _)), Some((_, why))) => format!("{head}: {why}"),
            _ => u.clone(),
        })
        .collect();
    list(&mut o, "tables left as comments:", &tables, 6);
    list(&mut o, "commands lab does not map:", &d.unmapped, 4);
    o
}

/// `to` as seen from `dir`, so the matrix finds its mail wherever the
/// two move together; absolute when they share no root.
fn relative(dir: &Path, to: &Path) -> String {
    let (Ok(d), Ok(t)) = (dir.canonicalize(), to.canonicalize()) else {
        return to.display().to_string();
    };
    let common = d
        .components()
        .zip(t.components())
        .take_while(|(a, b)| a == b)
        .count();
    if common <= 1 {
        return t.display().to_string();
    }
    let mut p = PathBuf::new();
    for _ in d.components().skip(common) {
        p.push("..");
    }
    for c in t.components().skip(common) {
        p.push(c);
    }
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn relative_paths_climb_to_the_common_folder() {
        let t = tempfile::tempdir().unwrap();
        let (m, mail) = (t.path().join("a/matrices"), t.path().join("a/mails/x.eml"));
        std::fs::create_dir_all(&m).unwrap();
        std::fs::create_dir_all(mail.parent().unwrap()).unwrap();
        std::fs::write(&mail, "x").unwrap();
        assert_eq!(super::relative(&m, &mail), "../mails/x.eml");
    }
}
