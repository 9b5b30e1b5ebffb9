//! `lab claims extract`: the claims of a mail as YAML (reads back as
//! `Vec<ClaimTable>`), JSON for machines (with a schema version), or
//! text re-aligned for a person.

use crate::mail::model::{ClaimTable, Unit, Value};
use anyhow::{Result, bail};
use std::io::Write;

/// The version of the JSON layout; bumped when a field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
    Text,
}

impl Format {
    pub fn parse(s: &str) -> Result<Format> {
        Ok(match s.trim().to_ascii_lowercase().as_str() {
            "yaml" | "yml" => Format::Yaml,
            "json" => Format::Json,
            "text" | "txt" => Format::Text,
            other => bail!("unknown claims format '{other}': use yaml, json or text"),
        })
    }
}

pub fn render(tables: &[ClaimTable], format: Format) -> Result<String> {
    Ok(match format {
        Format::Yaml => serde_saphyr::to_string(&tables.to_vec())?,
        Format::Json => {
            let mut out = Vec::new();
            write_json(tables, &mut out)?;
            String::from_utf8(out)?
        }
        Format::Text => tables
            .iter()
            .enumerate()
            .map(|(i, t)| text(i + 1, t))
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

/// The JSON document, `{"schema_version":1,"tables":[...]}`, with one
/// table to a line, compact: `grep` and `jq` read it as well as pretty
/// JSON does, and it is a quarter of the size (a 50 MB thread made 600
/// MB of pretty JSON, and its indentation cost as much as reading the
/// mail). Written in rounds: the tables of a round are serialized on
/// every core, so a big thread's JSON is neither held whole in memory
/// nor made on one core.
pub fn write_json(tables: &[ClaimTable], out: &mut dyn Write) -> Result<()> {
    const ROUND: usize = 8192;
    let mut w = std::io::BufWriter::new(out);
    write!(w, "{{\"schema_version\":{SCHEMA_VERSION},\"tables\":[")?;
    let mut first = true;
    for round in tables.chunks(ROUND) {
        crate::interrupt::check()?;
        let parts = crate::util::par_chunks(round, crate::util::ncpus(), |_, part| json_part(part));
        for p in parts {
            w.write_all(if first { b"\n" } else { b",\n" })?;
            w.write_all(&p?)?;
            first = false;
        }
    }
    w.write_all(if first { b"]}\n" } else { b"\n]}\n" })?;
    w.flush()?;
    Ok(())
}

/// Tables as elements of the document's `tables` array: one compact
/// line each, separated by commas.
fn json_part(tables: &[ClaimTable]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b",\n");
        }
        serde_json::to_writer(&mut out, t)?;
    }
    Ok(out)
}

/// Why a mail may show no tables: lab reads text/plain parts only.
pub fn html_only_hint(raw: &[u8]) -> &'static str {
    let text = String::from_utf8_lossy(raw).to_ascii_lowercase();
    if text.contains("content-type: text/html") && !text.contains("content-type: text/plain") {
        "; the mail has only an HTML part, and lab reads text/plain parts (patch mails to kernel lists are plain text: ask for that, or save the plain-text version)"
    } else {
        ""
    }
}

/// One table for a person: where it came from, its caption, then its
/// rows re-aligned under their headers.
fn text(n: usize, t: &ClaimTable) -> String {
    let mut out = String::new();
    let o = &t.origin;
    let from = match (&o.subject, &o.message_id) {
        (Some(s), Some(id)) => format!("message {}: {s} <{id}>", o.message),
        (Some(s), None) => format!("message {}: {s}", o.message),
        (None, Some(id)) => format!("message {}: <{id}>", o.message),
        (None, None) => format!("message {}", o.message),
    };
    let depth = match t.quote_depth {
        0 => String::new(),
        d => format!(", quoted at depth {d}"),
    };
    let kind = serde_json::to_value(t.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    out.push_str(&format!("claim {n}: {kind}, line {}{depth}\n", t.line));
    out.push_str(&format!("  {from}\n"));
    if let Some(c) = &t.caption {
        out.push_str(&format!("  {c}\n"));
    }
    if let Some(u) = &t.unit {
        out.push_str(&format!("  unit: {}\n", u.written));
    }
    out.push('\n');
    let mut grid: Vec<Vec<String>> = Vec::new();
    let mut head: Vec<String> = t.key_columns.clone();
    head.extend(t.columns.iter().map(|c| c.name.clone()));
    grid.push(head);
    for r in &t.rows {
        let mut line: Vec<String> = r.keys.clone();
        if let Some(u) = &r.unit
            && let Some(last) = line.last_mut()
            && !last.contains(&u.written)
        {
            last.push_str(&format!(" ({})", u.written));
        }
        line.extend(r.values.iter().map(cell));
        grid.push(line);
    }
    let width = grid.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..width)
        .map(|i| {
            grid.iter()
                .filter_map(|r| r.get(i))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let keys = t.key_columns.len();
    for r in &grid {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let pad = widths[i].saturating_sub(s.chars().count());
                if i < keys {
                    format!("{s}{}", " ".repeat(pad))
                } else {
                    format!("{}{s}", " ".repeat(pad))
                }
            })
            .collect();
        out.push_str(&format!("  {}\n", cells.join("  ").trim_end()));
    }
    if !t.conditions.is_empty() {
        let c: Vec<String> = t
            .conditions
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out.push_str(&format!("\n  conditions: {}\n", c.join(", ")));
    }
    for w in &t.warnings {
        out.push_str(&format!("  warning: {w}\n"));
    }
    out
}

fn cell(v: &Value) -> String {
    match v {
        Value::Number {
            value,
            unit,
            spread_pct,
        } => {
            let mut s = format!("{value}");
            if let Some(Unit { written, .. }) = unit {
                s.push_str(written);
            }
            if let Some(p) = spread_pct {
                s.push_str(&format!(" ±{p}%"));
            }
            s
        }
        Value::NotApplicable => "n/a".into(),
        Value::Missing => String::new(),
    }
}
