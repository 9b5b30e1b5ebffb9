//! Flags as a person reads them in a plain-text report: a short code
//! per kind in each table's flag column, and one line per kind below
//! the tables with its count and range. A loaded host flags every
//! cell; 24 footnotes saying the same thing hide the one that differs.
//! Per-cell detail stays in report.json and report.html.

use super::{Flag, FlagKind, Group, Report};

impl FlagKind {
    /// The code in a table's flag column.
    pub fn code(self) -> &'static str {
        match self {
            FlagKind::JiffiesClocksource => "J",
            FlagKind::ClockEvent => "E",
            FlagKind::ClocksourceMismatch => "S",
            FlagKind::AccelMismatch => "A",
            FlagKind::KnobIgnored => "K",
            FlagKind::HostLoad => "L",
            FlagKind::Contended => "C",
            FlagKind::Retried => "R",
            FlagKind::HighCv => "V",
            FlagKind::ClaimConditions => "X",
            FlagKind::Failed => "F",
            FlagKind::Missing => "M",
            FlagKind::KernelDiffers => "D",
            FlagKind::HostDiffers => "H",
            FlagKind::Run => "!",
        }
    }

    /// What the flag says, and what it means for the numbers.
    pub fn meaning(self) -> (&'static str, &'static str) {
        match self {
            FlagKind::JiffiesClocksource => (
                "guest kept time in ticks (jiffies)",
                "latencies are rounded to a tick",
            ),
            FlagKind::ClockEvent => ("clock trouble on the console", "times may be wrong"),
            FlagKind::ClocksourceMismatch => (
                "compared sides ran on different clocksources",
                "the change may be the clock's",
            ),
            FlagKind::AccelMismatch => (
                "compared sides ran with different accelerators",
                "the change may be the VM's",
            ),
            FlagKind::KnobIgnored => (
                "a knob the kernel did not apply",
                "the cell measured the kernel's default",
            ),
            FlagKind::HostLoad => ("host load above its cores", "timings may be inflated"),
            FlagKind::Contended => ("CPU contention during the cell", "timings may be inflated"),
            FlagKind::Retried => (
                "re-run after a contended attempt",
                "the last attempt is kept",
            ),
            FlagKind::HighCv => ("repetitions vary more than max_cv", "medians are less sure"),
            FlagKind::ClaimConditions => {
                ("a claim made under other conditions", "compare with care")
            }
            FlagKind::Failed => ("a repetition failed", "fewer samples than planned"),
            FlagKind::Missing => ("a repetition has no result", "fewer samples than planned"),
            FlagKind::KernelDiffers => (
                "the two runs built the kernel differently",
                "the change may be the build's",
            ),
            FlagKind::HostDiffers => (
                "the two runs' hosts or guests differ",
                "the change may be the machine's",
            ),
            FlagKind::Run => ("flagged by the run", "see the note"),
        }
    }

    /// Kinds whose messages differ in what they name (which knob, which
    /// console line), so the legend quotes a few.
    fn quoted(self) -> bool {
        !matches!(
            self,
            FlagKind::HostLoad
                | FlagKind::Contended
                | FlagKind::Retried
                | FlagKind::HighCv
                | FlagKind::Missing
                // The claims section says under which conditions.
                | FlagKind::ClaimConditions
        )
    }
}

/// At most `n` characters of `s`, cut at a word.
fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let cut: String = s.chars().take(n).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(a, _)| a);
    format!("{cut} ...")
}

/// Every flag of a group that concerns `metric`: the group's own, its
/// cells' and its comparisons'.
fn about<'a>(g: &'a Group, metric: Option<&'a str>) -> impl Iterator<Item = &'a Flag> {
    let on = move |f: &&Flag| match (metric, f.metric.as_deref()) {
        (Some(m), Some(fm)) => m == fm,
        _ => true,
    };
    g.flags
        .iter()
        .chain(g.cells.iter().flat_map(|c| c.flags.iter()))
        .chain(
            g.comparisons
                .iter()
                .filter(move |c| metric.is_none_or(|m| c.metric == m))
                .flat_map(|c| c.flags.iter()),
        )
        .filter(on)
}

/// The codes of a table row: `L,C`.
pub fn codes(g: &Group, metric: &str) -> String {
    let mut kinds: Vec<FlagKind> = about(g, Some(metric)).map(|f| f.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds.iter().map(|k| k.code()).collect::<Vec<_>>().join(",")
}

/// One kind of flag in the report: how many cells carry it, the range
/// of its figure, and for kinds that name something, up to two of what
/// they name. The text legend and the reply each lay it out.
pub struct LegendEntry {
    pub kind: FlagKind,
    /// `host load above its cores in 8 of 8 cells (2.3-3.1): timings
    /// may be inflated`: the kind's meaning, count, range and effect.
    pub summary: String,
    /// `e.g. knob ... ignored`, `and 3 more`.
    pub examples: Vec<String>,
}

/// One line per kind of flag in the report: code, meaning, how many
/// cells, the range of its value, what it means, and for kinds that
/// name something, up to two of what they name.
pub fn legend(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for e in legend_of(r, |_| true) {
        out.push(format!("{}  {}", e.kind.code(), e.summary));
        out.extend(e.examples.iter().map(|x| format!("   {x}")));
    }
    out
}

/// The legend's entries, for the kinds `keep` accepts only.
pub fn legend_of(r: &Report, keep: impl Fn(FlagKind) -> bool) -> Vec<LegendEntry> {
    let cells: usize = r.groups.iter().map(|g| g.cells.len()).sum();
    let mut kinds: Vec<FlagKind> = r
        .groups
        .iter()
        .flat_map(|g| about(g, None).map(|f| f.kind))
        .filter(|k| keep(*k))
        .collect();
    kinds.sort();
    kinds.dedup();
    let mut out = Vec::new();
    for k in kinds {
        // A cell counts when it, its group or its comparisons carry the kind.
        let mut n = 0;
        let mut values: Vec<f64> = Vec::new();
        let mut named: Vec<&str> = Vec::new();
        for g in &r.groups {
            let shared = g
                .flags
                .iter()
                .chain(g.comparisons.iter().flat_map(|c| c.flags.iter()));
            let group_has = shared.clone().any(|f| f.kind == k);
            for c in &g.cells {
                if group_has || c.flags.iter().any(|f| f.kind == k) {
                    n += 1;
                }
            }
            for f in about(g, None).filter(|f| f.kind == k) {
                values.extend(f.value);
                if !named.contains(&f.message.as_str()) {
                    named.push(&f.message);
                }
            }
        }
        let (what, means) = k.meaning();
        let range = match (
            values.iter().cloned().reduce(f64::min),
            values.iter().cloned().reduce(f64::max),
        ) {
            (Some(a), Some(b)) if (b - a).abs() < 0.05 => format!(" ({a:.1})"),
            (Some(a), Some(b)) => format!(" ({a:.1}-{b:.1})"),
            _ => String::new(),
        };
        let count = if n == 0 {
            String::new()
        } else {
            format!(" in {n} of {cells} cells")
        };
        let mut examples = Vec::new();
        if k.quoted() {
            for m in named.iter().take(2) {
                examples.push(format!("e.g. {}", short(m, 66)));
            }
            if named.len() > 2 {
                examples.push(format!("and {} more", named.len() - 2));
            }
        }
        out.push(LegendEntry {
            kind: k,
            summary: format!("{what}{count}{range}: {means}"),
            examples,
        });
    }
    out
}
