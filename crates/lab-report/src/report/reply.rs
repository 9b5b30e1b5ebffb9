//! `lab report --format reply`: plain text to paste under the quoted
//! mail. The mail's own table with the measured numbers beside it, the
//! verdict in one paragraph, the environment on one line and the flags
//! that matter; no line over 72 columns, as mail replies go.

use super::numbers as num;
use super::{ClaimCheck, ClaimStatus, Report};

pub const WIDTH: usize = 72;

pub fn render(r: &Report) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut keys: Vec<(usize, String)> = Vec::new();
    for c in &r.claims {
        let k = (c.claim, c.config.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    for (n, config) in &keys {
        let checks: Vec<&ClaimCheck> = r
            .claims
            .iter()
            .filter(|c| c.claim == *n && &c.config == config)
            .collect();
        out.extend(claim_table(*n, config, &checks));
        out.push(String::new());
    }
    if keys.is_empty() {
        out.push("The matrix binds no claim of the mail.".into());
        out.push(String::new());
    }
    out.extend(wrap(&verdict(r), ""));
    out.push(String::new());
    out.extend(wrap(&environment(r), ""));
    let flags = flags(r);
    if !flags.is_empty() {
        out.push(String::new());
        out.push("Flags:".into());
        // No code letters: the reply has no table of codes.
        for e in flags {
            out.extend(wrap(&e.summary, "- "));
            for x in &e.examples {
                out.extend(wrap(x, "    "));
            }
        }
    }
    let mut s = out.join("\n");
    s.push('\n');
    s
}

/// The mail's table: its rows, and for each claimed column the claimed
/// and the measured value. Too wide a table becomes one line per value.
fn claim_table(n: usize, config: &str, checks: &[&ClaimCheck]) -> Vec<String> {
    let first = checks[0];
    let mut out = Vec::new();
    let head = if config.is_empty() {
        format!("Claim {n}, table {}", first.table)
    } else {
        format!("Claim {n}, table {}, measured on {config}", first.table)
    };
    // The conditions that pick the cells (`delay=1, job=read`), less
    // those the config already names.
    let config_parts: Vec<&str> = config.split(',').map(str::trim).collect();
    let picked: Vec<&str> = first
        .conditions
        .split(", ")
        .filter(|c| !c.is_empty() && !config_parts.contains(c))
        .collect();
    let head = if picked.is_empty() {
        head
    } else {
        format!("{head}, claimed for {}", picked.join(", "))
    };
    out.extend(wrap(
        &format!(
            "{head}: {}, tolerance {}.",
            super::metrics_phrase(checks),
            num::percent(first.tolerance)
        ),
        "",
    ));
    // What the mail ran for it, and the bound it states: the reader of
    // the reply sees which numbers these are without the mail open.
    if let Some(c) = &first.caption {
        out.extend(wrap(&format!("Mail: {c}"), "  "));
    }
    if let Some(b) = &first.theoretical_max {
        out.extend(wrap(&format!("Bound in the mail: {b}"), "  "));
    }
    let mut rows: Vec<&str> = Vec::new();
    let mut cols: Vec<&str> = Vec::new();
    for c in checks {
        if !rows.contains(&c.row_key.as_str()) {
            rows.push(&c.row_key);
        }
        if !cols.contains(&c.column.as_str()) {
            cols.push(&c.column);
        }
    }
    let value = |row: &str, col: &str| checks.iter().find(|c| c.row_key == row && c.column == col);
    let claimed = |c: &ClaimCheck| c.claimed.map(num::value).unwrap_or_else(|| "N/A".into());
    let mut grid: Vec<Vec<String>> = vec![];
    let mut header = vec![if first.row_axis.is_empty() {
        "row".to_string()
    } else {
        first.row_axis.clone()
    }];
    for col in &cols {
        header.push(col.to_string());
        header.push("lab".into());
    }
    grid.push(header);
    for row in &rows {
        let mut line = vec![row.to_string()];
        for col in &cols {
            match value(row, col) {
                Some(c) => {
                    line.push(claimed(c));
                    line.push(mark(c));
                }
                None => line.extend(["".into(), "".into()]),
            }
        }
        grid.push(line);
    }
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|i| grid.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let total: usize = widths.iter().sum::<usize>() + 2 * widths.len();
    if total <= WIDTH {
        for r in &grid {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    if i == 0 {
                        format!("{v:<w$}", w = widths[i])
                    } else {
                        format!("{v:>w$}", w = widths[i])
                    }
                })
                .collect();
            out.push(format!("  {}", cells.join("  ")).trim_end().to_string());
        }
    } else {
        for c in checks {
            out.extend(wrap(
                &format!(
                    "{} {}: claimed {}, lab {}",
                    c.row_key,
                    c.column,
                    claimed(c),
                    mark(c)
                ),
                "  ",
            ));
        }
    }
    let legend: Vec<String> = [
        (ClaimStatus::NotReproduced, "!", "outside the tolerance"),
        (
            ClaimStatus::OtherConditions,
            "~",
            "measured under other conditions",
        ),
        (ClaimStatus::Unbound, "?", "unbound: no cell measures it"),
        (ClaimStatus::NotInRun, "=", "not in this run (filtered out)"),
        (ClaimStatus::TooFewRuns, "*", "too few runs"),
        (ClaimStatus::Contended, "#", "contended host: not judged"),
    ]
    .iter()
    .filter(|(s, _, _)| checks.iter().any(|c| c.status == *s))
    .map(|(_, m, what)| format!("{m} {what}"))
    .collect();
    if !legend.is_empty() {
        out.extend(wrap(&legend.join("; "), "  "));
    }
    out
}

/// The measured value with a mark for anything but a plain verdict.
fn mark(c: &ClaimCheck) -> String {
    let m = match c.status {
        ClaimStatus::NotReproduced => "!",
        ClaimStatus::OtherConditions => "~",
        ClaimStatus::TooFewRuns => "*",
        ClaimStatus::Contended => "#",
        ClaimStatus::Unbound => return "?".into(),
        ClaimStatus::NotInRun => return "=".into(),
        ClaimStatus::NotApplicable => return "N/A".into(),
        ClaimStatus::NoData => return "-".into(),
        ClaimStatus::Reproduced => "",
    };
    format!("{}{m}", num::opt_value(c.measured))
}

fn verdict(r: &Report) -> String {
    let mut parts = Vec::new();
    let count = |s: ClaimStatus| r.claims.iter().filter(|c| c.status == s).count();
    let total = r.claims.len();
    if total > 0 {
        let mut said = Vec::new();
        for s in [
            ClaimStatus::Reproduced,
            ClaimStatus::NotReproduced,
            ClaimStatus::OtherConditions,
            ClaimStatus::TooFewRuns,
            ClaimStatus::Contended,
            ClaimStatus::NoData,
            ClaimStatus::NotApplicable,
            ClaimStatus::NotInRun,
            ClaimStatus::Unbound,
        ] {
            let k = count(s);
            if k > 0 {
                said.push(format!("{k} {s}"));
            }
        }
        parts.push(format!(
            "Of {total} claimed value(s) checked against this run: {}.",
            said.join(", ")
        ));
    }
    let mut better = 0;
    let mut worse = 0;
    let mut same = 0;
    for c in r.groups.iter().flat_map(|g| &g.comparisons) {
        match c.verdict.as_str() {
            "better" => better += 1,
            "worse" => worse += 1,
            "no change" => same += 1,
            _ => {}
        }
    }
    if better + worse + same > 0 {
        parts.push(format!(
            "Against {}, {better} cell(s) got better, {worse} worse and {same} show no change beyond {} noise.",
            r.settings.baseline,
            num::percent(r.settings.noise)
        ));
    }
    let o = &r.outcome;
    parts.push(match o.exit_code {
        0 => "Verdict: acceptable, no regression and no unmet claim.".to_string(),
        1 => format!(
            "Verdict: {} regression(s) and {} unmet claim(s).",
            o.regressions.len(),
            o.unmet_claims.len()
        ),
        _ => format!(
            "Verdict: incomplete ({}).",
            o.incomplete.first().cloned().unwrap_or_default()
        ),
    });
    parts.join(" ")
}

/// One line: arch, HZ, kernel, accelerator and clocksource.
fn environment(r: &Report) -> String {
    let p = &r.provenance;
    let join = |v: &[String]| {
        if v.is_empty() {
            "?".into()
        } else {
            v.join("+")
        }
    };
    let kernel = p
        .sources
        .iter()
        .map(|s| s.split(" (").next().unwrap_or(s).to_string())
        .collect::<Vec<_>>();
    let mut accels: Vec<String> = Vec::new();
    for a in r
        .groups
        .iter()
        .flat_map(|g| &g.cells)
        .flat_map(|c| &c.accels)
    {
        if !accels.contains(a) {
            accels.push(a.clone());
        }
    }
    format!(
        "Env: {}, HZ={}, {}, {}, clocksource {}",
        join(&p.arches),
        join(&p.hz),
        join(&kernel),
        join(&accels),
        join(&p.clocksources)
    )
}

/// Flags that change how far a number can be trusted: one line per
/// kind with its count and range, as the text report's legend has them
/// (a loaded host flags every cell; a line per cell would bury the rest).
fn flags(r: &Report) -> Vec<super::flags::LegendEntry> {
    use super::FlagKind as K;
    super::flags::legend_of(r, |k| {
        matches!(
            k,
            K::JiffiesClocksource
                | K::ClockEvent
                | K::ClocksourceMismatch
                | K::AccelMismatch
                | K::KnobIgnored
                | K::HostLoad
                | K::Contended
                | K::HighCv
                | K::Failed
        )
    })
}

/// Words wrapped to [`WIDTH`], the first line after `lead`, the rest
/// indented as far; a word longer than a line is cut.
fn wrap(text: &str, lead: &str) -> Vec<String> {
    let indent = " ".repeat(lead.chars().count());
    let mut out = Vec::new();
    let mut line = lead.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word: String = word.to_string();
        let room = WIDTH - indent.len();
        if word.chars().count() > room {
            word = word.chars().take(room).collect();
        }
        let len = line.chars().count() + usize::from(!empty) + word.chars().count();
        if !empty && len > WIDTH {
            out.push(std::mem::replace(&mut line, indent.clone()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(&word);
        empty = false;
    }
    if !empty {
        out.push(line);
    }
    out
}
