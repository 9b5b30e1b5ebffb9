//! The report's lines of prose: A/A noise, what is incomplete, the
//! outcome, the method and the provenance.

use super::numbers as num;
use super::text::TEXT_WIDTH;
use super::{Report, ReportKind};

pub(super) fn aa_lines(r: &Report) -> Vec<String> {
    r.aa_noise
        .iter()
        .map(|a| {
            let warn = if a.exceeds_noise {
                format!(
                    "; above the {} noise threshold, so verdicts near it are not reliable",
                    num::percent(r.settings.noise)
                )
            } else {
                String::new()
            };
            format!(
                "A/A noise ({} vs {}, same patches), {}: median |change| {}, max {} over {} cells{warn}.",
                a.variants[0],
                a.variants[1],
                a.metric,
                num::percent(a.median_abs_change),
                num::percent(a.max_abs_change),
                a.cells
            )
        })
        .collect()
}

pub(super) fn incomplete_lines(r: &Report) -> Vec<String> {
    let c = &r.completeness;
    let mut out = Vec::new();
    if c.planned > 0 || c.done > 0 {
        out.push(format!(
            "{} of {} planned cell repetitions finished.",
            c.done, c.planned
        ));
    }
    for f in &c.failed {
        let err = f
            .error
            .as_deref()
            .map(|e| format!(": {}", e.lines().next().unwrap_or("").trim()))
            .unwrap_or_default();
        out.push(format!("{} rep {} {}{err}", f.cell, f.rep, f.status));
    }
    const LIST: usize = 20;
    for m in c.missing.iter().take(LIST) {
        out.push(format!("{} rep {}: no result", m.cell, m.rep));
    }
    if c.missing.len() > LIST {
        out.push(format!(
            "... and {} more cell repetitions with no result",
            c.missing.len() - LIST
        ));
    }
    out.extend(c.boot_errors.iter().cloned());
    let untrusted: Vec<_> = super::untrusted(r).collect();
    for (g, cmp) in untrusted.iter().take(LIST) {
        out.push(format!(
            "untrusted {} {}: {} against {}, contended samples: {}",
            cmp.metric,
            g.id,
            cmp.variant,
            cmp.base_variant,
            cmp.untrusted.join(", ")
        ));
    }
    if untrusted.len() > LIST {
        out.push(format!(
            "... and {} more untrusted comparisons",
            untrusted.len() - LIST
        ));
    }
    out.extend(r.problems.iter().map(|p| format!("problem: {p}")));
    out
}

pub(super) fn outcome_line(r: &Report) -> String {
    let o = &r.outcome;
    let mut parts = Vec::new();
    // Contention alone leaves every repetition done, so no Incomplete
    // section says why; this line does.
    // Each untrusted comparison is one line of `incomplete`: when they
    // are all of it, contention is the only reason.
    let contended = super::untrusted(r).count();
    if o.exit_code == 2 && contended > 0 && o.incomplete.len() == contended {
        parts.push(format!(
            "contended host: {} comparison(s) untrusted, verdicts not final",
            o.incomplete.len()
        ));
    } else if o.exit_code == 2 {
        parts.push("incomplete, so the verdicts are not final".to_string());
    }
    if !o.regressions.is_empty() {
        parts.push(format!("{} regression(s)", o.regressions.len()));
    }
    if !o.unmet_claims.is_empty() {
        parts.push(format!("{} unmet claim(s)", o.unmet_claims.len()));
    }
    if parts.is_empty() {
        parts.push("acceptable: no regression, no unmet claim".into());
    }
    format!("Result: {} (exit {}).", parts.join("; "), o.exit_code)
}

pub(super) fn method_lines(r: &Report) -> Vec<String> {
    let s = &r.settings;
    let against = match r.kind {
        ReportKind::Run => format!("Baseline: {}.", s.baseline),
        ReportKind::Compare => format!(
            "Run a ({}) is the baseline for run b ({}), cell by cell.",
            r.baseline_run.as_deref().unwrap_or("?"),
            r.run_id
        ),
    };
    vec![
        format!(
            "{against} Values are medians; change = ratio - 1 ({} bootstrap CI).",
            num::percent(s.level)
        ),
        format!(
            "Verdict: better or worse if |change| > {} and Mann-Whitney p < {} (or no \
             overlap), with {}+ runs each.",
            num::percent(s.noise),
            s.alpha,
            s.min_runs
        ),
    ]
}

pub(super) fn provenance_lines(r: &Report) -> Vec<(String, String)> {
    let p = &r.provenance;
    let mut out = Vec::new();
    let mut push = |k: &str, v: String| {
        if !v.is_empty() {
            out.push((k.to_string(), v));
        }
    };
    push("kernel", p.sources.join("; "));
    let mut patches: Vec<String> = Vec::new();
    for k in &p.kernels {
        for pa in &k.patches {
            let line = format!(
                "{}: {} (blake3 {})",
                k.variant,
                pa.subject,
                &pa.hash[..pa.hash.len().min(12)]
            );
            if !patches.contains(&line) {
                patches.push(line);
            }
        }
        for f in &k.fuzzed {
            let line = format!("{}: {f}", k.variant);
            if !patches.contains(&line) {
                patches.push(line);
            }
        }
    }
    if patches.is_empty() && !p.kernels.is_empty() {
        patches.push("none".into());
    }
    for (i, l) in patches.into_iter().enumerate() {
        push(if i == 0 { "patches" } else { "" }, l);
    }
    push("HZ", p.hz.join(", "));
    push("arch", p.arches.join(", "));
    push("QEMU", p.qemu.join("; "));
    push("clocksource", p.clocksources.join(", "));
    push("repetitions", p.repetitions.to_string());
    push("fio", p.fio.join(", "));
    push("host", p.host.clone());
    let lab = if p.lab_version == p.report_lab_version {
        format!("lab {}", p.lab_version)
    } else {
        format!(
            "lab {} (run), {} (report)",
            p.lab_version, p.report_lab_version
        )
    };
    push("lab", lab);
    push("run", format!("{} ({})", p.run_id, p.created));
    if let Some(b) = &r.baseline_provenance {
        push("baseline", format!("{} ({})", b.run_id, b.created));
    }
    out
}

/// Provenance as text: long values on lines of their own, short ones
/// (`HZ: 100`, `arch: x86_64`) side by side, so it stays a few lines.
pub(super) fn provenance_text(r: &Report) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut short: Vec<String> = Vec::new();
    for (k, v) in provenance_lines(r) {
        if !k.is_empty() && k.len() + v.len() < 28 {
            short.push(format!("{k}: {v}"));
            continue;
        }
        out.push(if k.is_empty() {
            format!("{:13}{v}", "")
        } else {
            format!("{:13}{v}", format!("{k}:"))
        });
    }
    let mut packed = String::new();
    for item in short {
        if !packed.is_empty() && packed.len() + 3 + item.len() > TEXT_WIDTH {
            out.push(std::mem::take(&mut packed));
        }
        if !packed.is_empty() {
            packed.push_str("   ");
        }
        packed.push_str(&item);
    }
    if !packed.is_empty() {
        out.push(packed);
    }
    out
}
