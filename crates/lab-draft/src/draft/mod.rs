//! `lab new`: a matrix drafted from a patch mail, so a reviewer starts
//! from the mail's own experiment rather than a blank file.
//!
//! The mail's commands (fio, dmsetup, knob writes, modprobe, mkfs,
//! mount, loops), its machine facts (version, HZ, arch, CPUs) and its
//! tables become the matrix's parts. What could not be mapped stays a
//! comment that quotes the mail; what was inferred says so. The draft is
//! planned and its claims bound before it is returned, so a claim that
//! binds to nothing is a comment with the binder's reason, not a claim.
//!
//! Pure: bytes in, YAML text out.

mod axes;
mod claim;
mod devices;
mod emit;
mod facts;
mod job_words;
mod kernel;
mod knob_axes;
mod knob_runs;
mod params;
mod shell;
mod stand_in;
mod steps;
mod sweeps;
#[cfg(test)]
mod tests;
mod tools;
mod workload;

use crate::mail::message::{self, Message};
use crate::mail::{ClaimTable, claims as mail_claims};
use anyhow::{Context, Result};
use emit::Proposal;
use std::path::Path;
use steps::Scan;
use workload::Workloads;

/// What `lab new` was asked for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub name: Option<String>,
    /// One variant per cumulative prefix of the series.
    pub per_patch: bool,
    /// The mail as the matrix names it: relative to the matrix's folder.
    pub mail_ref: String,
}

/// A drafted matrix and what it holds.
#[derive(Clone, Debug)]
pub struct Draft {
    pub name: String,
    pub yaml: String,
    /// Claims kept, and the values they bind to cells.
    pub claims: usize,
    pub values: usize,
    /// Tables left as comments, and commands not mapped, each with why.
    pub unclaimed: Vec<String>,
    pub unmapped: Vec<String>,
    /// What the draft decided that the mail did not say, one line each.
    pub inferred: Vec<String>,
    pub cells: usize,
    /// Why the draft cannot run as written (its fio job opens nothing the
    /// boot or setup makes), when lab could not work that out: the draft
    /// is still written, for the reviewer to finish.
    pub unrunnable: Option<String>,
}

/// One message, read for drafting.
struct Read {
    msg: Message,
    /// The text a person wrote, quote markers off, diff and signature cut.
    prose: String,
    /// The same, without the quoted lines: what this mail's author said.
    own: String,
    diff: bool,
}

/// Draft a matrix from a mail, an mbox, `git format-patch` output or
/// plain text; `out` is where the matrix will be written (its folder
/// anchors the mail path and the fragments when it is planned).
pub fn draft(raw: &[u8], opts: &Options, out: &Path) -> Result<Draft> {
    // A mail that cannot be parsed (MIME nested past the parser's limit,
    // say) is the user's input, as it is for `lab claims extract`.
    let msgs = messages(raw).map_err(crate::error::input)?;
    let tables = mail_claims::extract(raw)
        .context("reading the mail's tables")
        .map_err(crate::error::input)?;
    let mut p = propose(&msgs, &tables, opts);
    let mut dropped = 0;
    loop {
        let yaml = p.yaml();
        let unrunnable = |e: &anyhow::Error| {
            e.chain()
                .any(|c| c.is::<crate::matrix::Unrunnable>())
                .then(|| format!("{e:#}"))
        };
        let m = match crate::matrix::Matrix::parse(out, &yaml) {
            Ok(m) => m,
            Err(e) if unrunnable(&e).is_some() => {
                return Ok(Draft {
                    name: p.name.clone(),
                    claims: p.claims.len(),
                    values: 0,
                    unclaimed: p.unclaimed.clone(),
                    unmapped: p.unmapped.clone(),
                    inferred: p.inferred(),
                    cells: 0,
                    unrunnable: unrunnable(&e),
                    yaml,
                });
            }
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "the draft does not plan (a bug in lab new): {e:#}\n--- the draft:\n{yaml}"
                ));
            }
        };
        let plan = m.plan().context("planning the draft (a bug in lab new)")?;
        let commands = crate::matrix::claims::command_metrics(&m);
        // Every claim that binds badly is dropped in one pass: a mail of
        // many such tables costs one more planning, not one per table.
        let mut bad: Vec<(usize, String)> = Vec::new();
        let mut values = 0;
        let mut held: Held = Vec::new();
        for (k, def) in m.claims.iter().enumerate() {
            let n = p.claims[k].table;
            let t = &tables[n - 1];
            let b = crate::matrix::claims::bind(k + 1, def, t, &plan, &commands);
            if let Some(w) = binds_badly(&b) {
                bad.push((k, w));
                continue;
            }
            if let Some((other, w)) = disagrees(&b, n, t, &tables, &mut held) {
                // The earlier table, already passed, goes too.
                if let Some(e) = p.claims.iter().position(|c| c.table == other) {
                    bad.push((e, format!("{w} (table {n})")));
                }
                bad.push((k, format!("{w} (table {other})")));
                continue;
            }
            values += b.len();
        }
        bad.sort_by_key(|(k, _)| std::cmp::Reverse(*k));
        bad.dedup_by_key(|(k, _)| *k);
        if bad.is_empty() {
            return Ok(Draft {
                name: p.name.clone(),
                claims: p.claims.len(),
                values,
                unclaimed: p.unclaimed.clone(),
                unmapped: p.unmapped.clone(),
                inferred: p.inferred(),
                cells: plan.cells.len(),
                unrunnable: None,
                yaml,
            });
        }
        let mut gone: Vec<String> = Vec::new();
        for (k, why) in bad {
            let c = p.claims.remove(k);
            gone.push(format!("table {} (\"{}\"): {why}", c.table, c.about));
            dropped += 1;
        }
        p.unclaimed.extend(gone.into_iter().rev());
        debug_assert!(dropped <= tables.len());
    }
}

/// Why a claim's bindings cannot stand: a value bound to no cell, in
/// the wrong unit, claimed N/A yet measured, no value at all, or rows
/// that one cell cannot reproduce together.
fn binds_badly(b: &[crate::matrix::claims::Binding]) -> Option<String> {
    use crate::matrix::claims::Target;
    if b.is_empty() {
        return Some("none of its values is a claimed value".to_string());
    }
    let why = b.iter().find_map(|b| match &b.target {
        Target::Cells(_) | Target::Excluded => None,
        Target::Unbound(r) => Some(format!("row '{}', column '{}': {r}", b.row, b.column)),
        Target::WrongUnit(r) => Some(r.clone()),
        Target::NotApplicable(_) => Some("a value the mail calls N/A is measured".into()),
    });
    why.or_else(|| measures_more(b))
}

/// Two rows of one table that bind one cell's metric at values further
/// apart than a draft's tolerance measure something the matrix does not
/// vary (two cgroups' `READ:` lines, two devices, two jobs of one run):
/// no cell can reproduce both. Rows within it are samples of one
/// measurement (`IOPS=` printed once a second).
fn measures_more(bound: &[crate::matrix::claims::Binding]) -> Option<String> {
    let mut seen: Vec<(&str, &str, f64, &str)> = Vec::new();
    for b in bound {
        let (crate::matrix::claims::Target::Cells(cells), Some(v)) = (&b.target, b.claimed) else {
            continue;
        };
        for c in cells {
            if let Some((_, _, w, row)) = seen
                .iter()
                .find(|(sc, sm, ..)| *sc == c.as_str() && *sm == b.metric.as_str())
            {
                if apart(v, *w) && *row != b.row.as_str() {
                    return Some(format!(
                        "rows '{row}' and '{}' both give {} of {c} ({w} and {v} {}): they measure something the matrix does not vary (a cgroup, a device, a job)",
                        b.row, b.metric, b.unit
                    ));
                }
            } else {
                seen.push((c.as_str(), b.metric.as_str(), v, b.row.as_str()));
            }
        }
    }
    None
}

/// Two values of one cell's metric further apart than a draft's
/// tolerance (15%): no cell reproduces both.
fn apart(v: f64, w: f64) -> bool {
    (v - w).abs() > 0.15 * v.abs().max(w.abs())
}

/// What claims bound so far: cell, metric, value in the metric's unit,
/// table.
type Held = Vec<(String, String, f64, usize)>;

/// Two tables of one message and quote depth (one author's one run),
/// under different captions, that give one
/// cell's metric values further apart than a draft's tolerance measure
/// something the matrix does not vary (`dd /mnt/cmpr 4k` and `dd
/// /mnt/non-cmpr 4k` on one file): neither binds. The earlier table,
/// and why; `held` gains this table's values otherwise.
fn disagrees(
    bound: &[crate::matrix::claims::Binding],
    n: usize,
    t: &ClaimTable,
    tables: &[ClaimTable],
    held: &mut Held,
) -> Option<(usize, String)> {
    let mut mine: Held = Vec::new();
    for b in bound {
        let (crate::matrix::claims::Target::Cells(cells), Some(v)) = (&b.target, b.claimed) else {
            continue;
        };
        let v = v / b.from_stored;
        for c in cells {
            let other = held.iter().find(|(hc, hm, w, o)| {
                let u = &tables[*o - 1];
                *hc == *c
                    && *hm == b.metric
                    && u.origin.message == t.origin.message
                    && u.quote_depth == t.quote_depth
                    && u.caption.is_some()
                    && t.caption.is_some()
                    && u.caption != t.caption
                    && apart(v, *w)
            });
            if let Some((_, _, _, o)) = other {
                return Some((
                    *o,
                    format!(
                        "another table under another caption gives {} of {c} a value more than 15% apart: they measure something the matrix does not vary",
                        b.metric
                    ),
                ));
            }
            mine.push((c.clone(), b.metric.clone(), v, n));
        }
    }
    held.extend(mine);
    None
}

/// The name a draft of `raw` gets without `--name`: from its subject.
pub fn suggested_name(raw: &[u8]) -> String {
    let subject = messages(raw)
        .ok()
        .and_then(|ms| {
            ms.into_iter()
                .map(|m| m.msg.subject)
                .find(|s| !s.is_empty())
        })
        .unwrap_or_default();
    name_of(&strip_prefix(&subject))
}

fn messages(raw: &[u8]) -> Result<Vec<Read>> {
    let msgs = if raw.starts_with(b"From ") || message::looks_like_mail(raw) {
        message::parse_mbox(raw)?
    } else {
        vec![Message {
            parts: vec![message::Part {
                mimetype: "text/plain".into(),
                text: String::from_utf8_lossy(raw).into_owned(),
            }],
            ..Message::default()
        }]
    };
    Ok(msgs
        .into_iter()
        .flat_map(message::patch_sections)
        .map(|msg| {
            let texts: Vec<&str> = msg.plain_texts().collect();
            let diff = msg.parts.iter().any(|p| has_diff(&p.text));
            let said = texts
                .iter()
                .map(|t| prose(t))
                .collect::<Vec<_>>()
                .join("\n");
            let own = texts
                .iter()
                .map(|t| {
                    prose(
                        &t.lines()
                            .filter(|l| !l.starts_with('>'))
                            .collect::<Vec<_>>()
                            .join("\n"),
                    )
                })
                .collect::<Vec<_>>()
                .join("\n");
            Read {
                msg,
                prose: said,
                own,
                diff,
            }
        })
        .collect())
}

fn has_diff(text: &str) -> bool {
    let mut prev = "";
    text.lines().any(|l| {
        let hit =
            l.starts_with("diff --git ") || (prev.starts_with("--- ") && l.starts_with("+++ "));
        prev = l;
        hit
    })
}

/// What a person wrote: quote markers off, diffs left out as the
/// claims reader finds them (per quote depth, through their hunks), and
/// the text after a diff read on (the next `[PATCH 2/3]` of a pasted
/// series, a fio line below the patches); cut at the signature.
fn prose(text: &str) -> String {
    let lines = crate::mail::claims::lines::readable(text);
    let mut out = String::new();
    for (l, read) in text.lines().zip(&lines) {
        if l == "-- " {
            break;
        }
        if read.in_diff {
            continue;
        }
        let un = l.trim_start_matches(['>', ' ']);
        let un = if l.starts_with('>') { un } else { l };
        out.push_str(un);
        out.push('\n');
    }
    out
}

/// The parts of the matrix, before it is checked.
fn propose(msgs: &[Read], tables: &[ClaimTable], opts: &Options) -> Proposal {
    let mut p = Proposal::default();
    let first = msgs
        .iter()
        .find(|m| !m.msg.subject.is_empty())
        .map(|m| &m.msg);
    let subject = first.map(|m| m.subject.clone()).unwrap_or_default();
    let title = strip_prefix(&subject);
    p.name = opts.name.clone().unwrap_or_else(|| name_of(&title));
    p.description = if title.is_empty() {
        "drafted from a mail".into()
    } else {
        title.clone()
    };
    let by = first
        .map(|m| {
            [m.author.clone(), m.date.clone()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    p.head = vec![
        format!(
            "Drafted by `lab new` from {}{}{}.",
            opts.mail_ref,
            if subject.is_empty() { String::new() } else { format!(": \"{subject}\"") },
            if by.is_empty() { String::new() } else { format!(" ({by})") }
        ),
        "Comments say where each part came from, what was inferred and what the mail said that lab could not map. Read them, then:".into(),
        String::new(),
        format!("  lab plan {}.yaml", p.name),
        format!("  lab run {}.yaml", p.name),
        "  lab report RUN --format reply".into(),
    ];

    let subjects: String = msgs
        .iter()
        .map(|m| format!("{}\n", m.msg.subject))
        .collect();
    let all: String = msgs
        .iter()
        .map(|m| format!("{}\n{}\n", m.msg.subject, m.prose))
        .collect();
    let own: String = msgs
        .iter()
        .map(|m| format!("{}\n{}\n", m.msg.subject, m.own))
        .collect();
    let captions: String = tables
        .iter()
        .filter(|t| !claim::names_no_cell(t))
        .filter_map(|t| t.caption.clone())
        .collect::<Vec<_>>()
        .join("\n");
    // The authors' own words decide; quoted text only fills gaps.
    let mut text_facts = facts::of_text(&own);
    let quoted = facts::of_text(&all);
    if text_facts.hz.is_empty() {
        text_facts.hz = quoted.hz.clone();
    }
    if text_facts.arch.is_empty() {
        text_facts.arch = quoted.arch.clone();
    }
    if text_facts.versions.is_empty() {
        text_facts.versions = quoted.versions.clone();
    }
    let cap_facts = facts::of_text(&captions);

    // Commands.
    let mut scan = Scan::default();
    for m in msgs {
        steps::scan(&m.prose, &mut scan);
    }
    for (src, why) in &scan.unmapped {
        p.unmapped.push(format!("\"{}\": {why}", src.quote));
    }

    kernel::kernel(&mut p, &facts::of_text(&subjects), &text_facts, &cap_facts);
    kernel::variants(&mut p, msgs, opts, &text_facts.versions);

    // Devices: the mail's names mapped onto lab's null_blk and NVMe.
    let lower = all.to_ascii_lowercase();
    let devices = devices::Devices::new(&scan, &lower);
    devices::boot(&mut p, &scan, &devices, &text_facts);
    devices::setup(
        &mut p,
        &scan,
        &devices,
        &lower,
        &subjects.to_ascii_lowercase(),
    );
    axes::workloads(&mut p, &scan, &devices, tables, &own);
    p.measured_with = scan
        .fio
        .iter()
        .filter_map(|j| claim::caption_program(&j.src.quote))
        .collect();
    axes::table_axes(&mut p, tables);
    sweeps::caption_axes(&mut p, tables);
    knob_axes::mode_axes(&mut p, tables);
    // Each message's commands, read once: the knobs it sets in turn, and
    // the command above each table's numbers.
    let commands = command_lines(msgs);
    let bodies: Vec<Vec<&str>> = msgs.iter().map(|m| body_lines(m).collect()).collect();
    let runs = knob_runs::apply(&mut p, knob_runs::find(&commands, &bodies));
    p.perf = scan.perf_events.clone();
    p.perf_system_wide = scan.perf_system_wide;
    let bare = bare_multiplied(tables, &all);
    claims(
        &mut p,
        tables,
        &bare,
        &|s| devices.map(s),
        &commands,
        &banners(msgs),
        &runs,
    );
    p.claim_mail = opts.mail_ref.clone();
    p
}

/// `[PATCH v2 3/7] dm: x` → `dm: x`; `Re: ...` likewise.
fn strip_prefix(s: &str) -> String {
    let mut t = s.trim();
    loop {
        let l = t.to_ascii_lowercase();
        if l.starts_with("re:") || l.starts_with("aw:") {
            t = t[3..].trim_start();
        } else if t.starts_with('[')
            && let Some(e) = t.find(']')
        {
            t = t[e + 1..].trim_start();
        } else {
            return t.to_string();
        }
    }
}

/// A matrix name from a title: `dm-delay: do not round ...` →
/// `dm-delay-do-not-round`.
fn name_of(title: &str) -> String {
    let mut out = String::new();
    for w in title.split(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_') {
        // A single long word (a hash, a path) is cut: the name stays short.
        let w: String = w
            .trim_matches('-')
            .to_ascii_lowercase()
            .chars()
            .take(32)
            .collect();
        let w = w.trim_matches('-');
        if w.is_empty() {
            continue;
        }
        if out.len() + w.len() + 1 > 32 && !out.is_empty() {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(w);
    }
    if out.is_empty() {
        "from-mail".into()
    } else {
        out
    }
}

/// The tables (from 1) whose first row the mail writes as its key and
/// numbers with a multiplier and no unit (`QD1  155K  162K`).
fn bare_multiplied(tables: &[ClaimTable], text: &str) -> Vec<usize> {
    static BARE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|\s)\d+(?:\.\d+)?[KMG](?:\s|$)").expect("valid regex")
    });
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    tables
        .iter()
        .enumerate()
        .filter(|(_, t)| t.unit.is_none() && t.columns.iter().all(|c| c.unit.is_none()))
        .filter_map(|(i, t)| {
            let key = t.rows.first()?.keys.last()?.trim();
            let written = lines
                .iter()
                .find(|l| !key.is_empty() && l.starts_with(key))?;
            BARE.is_match(written).then_some(i + 1)
        })
        .collect()
}

/// Each message's logical lines that may be commands (quote markers
/// off, wrapped commands joined), numbered as the claims reader numbers
/// the lines of a message's body.
fn command_lines(msgs: &[Read]) -> Vec<Vec<(usize, String)>> {
    msgs.iter()
        .map(|m| {
            let body: Vec<&str> = body_lines(m)
                .map(|l| l.trim_start_matches(['>', ' ']))
                .collect();
            shell::logical_lines(&body.join("\n"))
                .into_iter()
                .filter(|l| l.text.split_whitespace().nth(1).is_some())
                .map(|l| (l.line, l.text))
                .collect()
        })
        .collect()
}

/// Each message's section banners (`==========for-next==========`):
/// body line and the name between the marks.
fn banners(msgs: &[Read]) -> Vec<Vec<(usize, String)>> {
    msgs.iter()
        .map(|m| {
            body_lines(m)
                .enumerate()
                .filter_map(|(i, l)| Some((i + 1, crate::mail::claims::banner(l)?.to_string())))
                .collect()
        })
        .collect()
}

/// The lines of a message's text parts, as the claims reader numbers
/// them (from 1, in this order).
fn body_lines(m: &Read) -> impl Iterator<Item = &str> {
    m.msg
        .parts
        .iter()
        .filter(|p| p.mimetype.starts_with("text/"))
        .flat_map(|p| p.text.lines())
}

fn claims(
    p: &mut Proposal,
    tables: &[ClaimTable],
    bare: &[usize],
    device: &dyn Fn(&str) -> String,
    commands: &[Vec<(usize, String)>],
    sections: &[Vec<(usize, String)>],
    runs: &[knob_runs::KnobRun],
) {
    // A templated rw takes its axis's values.
    let rws = |j: &workload::Job| -> Vec<&'static str> {
        let rw = j.get("rw").unwrap_or("read");
        let axis = rw
            .strip_prefix("{{")
            .and_then(|r| r.strip_suffix("}}"))
            .map(str::trim);
        match axis.and_then(|a| p.run_axes.iter().find(|(n, ..)| n == a)) {
            Some((_, vs, _)) => vs.iter().map(|v| workload::direction(v)).collect(),
            None => vec![workload::direction(rw)],
        }
    };
    let directions: Vec<&'static str> = match &p.workloads {
        Some(Workloads::One(j)) => rws(j),
        Some(Workloads::Named(ws)) => ws.iter().flat_map(|(_, j)| rws(j)).collect(),
        None => vec![],
    };
    let mut axes: Vec<(String, Vec<String>)> = p
        .run_axes
        .iter()
        .map(|(n, v, _)| (n.clone(), v.clone()))
        .collect();
    axes.push(("arch".into(), p.arch.clone()));
    axes.push(("hz".into(), p.hz.iter().map(|h| h.to_string()).collect()));
    let above = claim::commands_above(tables, &p.measured_by, commands);
    let ctx = claim::Ctx {
        axes: &axes,
        directions: directions.clone(),
        measured_by: &p.measured_by,
        measured_with: &p.measured_with,
        above: &above,
        subject: &p.description,
        bare_multiplied: bare,
        device,
    };
    for (i, t) in tables.iter().enumerate() {
        match claim::draft(i + 1, t, &ctx) {
            Ok(c) => p.claims.push(c),
            Err(why) => {
                let about = t
                    .caption
                    .clone()
                    .map(|c| c.lines().map(str::trim).collect::<Vec<_>>().join(" "))
                    .unwrap_or_else(|| format!("line {} of message {}", t.line, t.origin.message));
                p.unclaimed
                    .push(format!("table {} (\"{about}\"): {why}", i + 1));
            }
        }
    }
    // Numbers printed after the mail set a knob were measured with it;
    // a table under a caption that set a swept axis, at the caption's
    // value (in its section).
    let sections_at = sweeps::section_values(tables, &p.run_axes);
    for c in &mut p.claims {
        let i = c.table.wrapping_sub(1);
        let Some(t) = tables.get(i) else {
            continue;
        };
        for r in runs {
            if let Some(v) = knob_runs::value_at(r, t.origin.message, t.line) {
                c.measured_at(&r.axis, v);
            }
        }
        for (a, v) in sections_at.get(i).into_iter().flatten() {
            c.measured_at(a, v);
        }
    }
    claim::section_sides(&mut p.claims, tables, sections);
    claim::caption_sides(&mut p.claims, tables, &mut p.unclaimed);
    claim::order_sides(&mut p.claims, tables);
    let mut metrics: Vec<String> = Vec::new();
    for c in &p.claims {
        let ms: Vec<String> = match &c.rows {
            claim::Rows::Metrics(ms) => ms.iter().map(|(_, m)| m.clone()).collect(),
            _ if !c.column_metrics.is_empty() => {
                c.column_metrics.iter().map(|(_, m)| m.clone()).collect()
            }
            _ => c.metric.iter().cloned().collect(),
        };
        for m in ms {
            if !metrics.contains(&m) {
                metrics.push(m);
            }
        }
    }
    metrics.retain(|m| m != crate::matrix::claims::SKIP);
    for m in &metrics {
        let def = match m.as_str() {
            "iops.total" => Some("read.iops + write.iops"),
            "bw.total" => Some("read.bw + write.bw"),
            "cpu.total" => Some("cpu.usr + cpu.sys"),
            _ => None,
        };
        if let Some(d) = def {
            p.derived.push((m.clone(), d.into()));
        }
        if let Some(e) = m.strip_prefix("perf.")
            && !p.perf.iter().any(|x| x == e)
        {
            p.perf.push(e.to_string());
        }
    }
    if metrics.is_empty() {
        let mut ds = directions;
        ds.sort();
        ds.dedup();
        for d in ds {
            for d in if d == "both" {
                vec!["read", "write"]
            } else {
                vec![d]
            } {
                metrics.push(format!("{d}.iops"));
                metrics.push(format!("{d}.lat_mean"));
            }
        }
    }
    p.metrics = metrics;
}
