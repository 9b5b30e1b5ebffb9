//! `lab claims extract`: a mail's tables of numbers, printed.

use crate::mail::claims::{self, render, render::Format};
use anyhow::Result;
use std::io::Write;
use std::path::Path;

/// `lab claims extract MAIL --format F`: 0 with or without claims (a
/// mail with none is no unmet claim, so not 1; stderr says why), 3 for a
/// file that cannot be read.
pub fn extract(mail: &Path, format: Format, out: &mut dyn Write) -> Result<i32> {
    let raw = crate::util::read_input(mail, "reading", crate::util::MAX_MAIL_INPUT)?;
    let tables = match claims::extract(&raw) {
        Ok(t) => t,
        Err(e) if e.is::<crate::interrupt::Interrupted>() => return Err(e),
        Err(e) => {
            return Err(crate::error::input_error(format!(
                "{}: {e:#}",
                mail.display()
            )));
        }
    };
    if tables.is_empty() {
        eprintln!(
            "no tables of numbers found in {}{}",
            crate::util::escape_controls(&mail.display().to_string()),
            render::html_only_hint(&raw)
        );
        return Ok(0);
    }
    if format == Format::Json {
        render::write_json(&tables, out)?;
    } else {
        out.write_all(render::render(&tables, format)?.as_bytes())?;
    }
    // Freeing a big thread's tables one by one only delays the exit.
    std::mem::forget(tables);
    Ok(0)
}
