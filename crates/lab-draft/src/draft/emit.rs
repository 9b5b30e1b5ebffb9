//! A draft as matrix YAML, with the comments that say where each part
//! came from. Written by hand: comments are half of a draft, and no
//! YAML serializer writes them.

use super::claim::{ClaimDraft, Rows};
use super::steps::Step;
use super::workload::{Job, Workloads};

/// Everything a drafted matrix holds, and the notes beside each part.
#[derive(Clone, Debug, Default)]
pub struct Proposal {
    pub head: Vec<String>,
    pub name: String,
    pub description: String,
    pub source: String,
    pub source_notes: Vec<String>,
    pub config: Vec<(String, String)>,
    pub variants: Vec<VariantDraft>,
    pub variant_notes: Vec<String>,
    pub arch: Vec<String>,
    pub hz: Vec<u32>,
    pub kernel_notes: Vec<String>,
    pub cpus: u32,
    pub memory: u32,
    pub boot_notes: Vec<String>,
    pub null_blk: Vec<(String, String)>,
    pub nvme: u32,
    pub nvme_poll: bool,
    pub run_axes: Vec<(String, Vec<String>, Option<String>)>,
    pub setup: Vec<(Step, Option<String>)>,
    pub workloads: Option<Workloads>,
    /// The axis that picks a named workload.
    pub workload_axis: String,
    pub workload_notes: Vec<String>,
    /// Each command of the mail that became a workload: its text, and
    /// the axis and value of the cells that run it.
    pub measured_by: Vec<(String, String, String)>,
    /// Programs other than fio whose commands became workloads (`dd`,
    /// fio's `t/io_uring`): their numbers are the workloads'.
    pub measured_with: Vec<String>,
    pub derived: Vec<(String, String)>,
    pub perf: Vec<String>,
    pub perf_system_wide: bool,
    pub metrics: Vec<String>,
    pub claims: Vec<ClaimDraft>,
    pub claim_mail: String,
    pub unclaimed: Vec<String>,
    pub unmapped: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct VariantDraft {
    pub name: String,
    pub description: String,
    pub message_ids: Vec<String>,
    /// The file holding the patches when b4 and `--mail` don't.
    pub mail: Option<String>,
    pub fuzz: u8,
    /// The variant's own tree, when the variants are two kernels.
    pub source: Option<String>,
}

impl Proposal {
    /// The notes that say the draft decided something the mail did not
    /// say, first sentence each: what a reviewer must check first.
    pub fn inferred(&self) -> Vec<String> {
        const WORDS: [&str; 8] = [
            "inferred",
            "stands in",
            "names no",
            "holds no",
            "nearest",
            "under test",
            "check it",
            "lab's default",
        ];
        let setup = self.setup.iter().filter_map(|(_, n)| n.as_ref());
        self.source_notes
            .iter()
            .chain(&self.variant_notes)
            .chain(&self.kernel_notes)
            .chain(&self.boot_notes)
            .chain(setup)
            .chain(&self.workload_notes)
            .filter(|n| {
                let l = n.to_ascii_lowercase();
                WORDS.iter().any(|w| l.contains(w))
            })
            .map(|n| {
                let first = n.split(". ").next().unwrap_or(n).trim_end_matches('.');
                crate::util::clip(first, 200).into_owned()
            })
            .chain(self.claims.iter().filter(|c| c.inferred_unit).map(|c| {
                format!(
                    "table {}: numbers written 155K with no unit, read as IOPS",
                    c.table
                )
            }))
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            })
    }
}

/// A YAML scalar: plain when it reads back as the same string or
/// number, else double-quoted.
pub fn q(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+".contains(c))
        && (!s.starts_with(['-', '+']) || s.parse::<f64>().is_ok())
        && ![
            "yes", "no", "true", "false", "null", "on", "off", "y", "n", "~",
        ]
        .contains(&s.to_ascii_lowercase().as_str());
    if plain {
        return s.to_string();
    }
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// A mapping's entries with each key once: YAML refuses a key twice, and
/// the binder, which matches labels without regard to case, would use the
/// first anyway. A mail's table may repeat a column name (`IOS/call` for
/// both halves of `32/31`): a repeat with the same mapping is dropped; one
/// with another mapping is named in a comment at `indent`.
fn unique_keys<'a>(
    out: &mut String,
    indent: usize,
    entries: &'a [(String, String)],
) -> Vec<(&'a String, &'a String)> {
    let mut kept: Vec<(&String, &String)> = Vec::new();
    for (k, v) in entries {
        let same = |x: &&String| x.trim().eq_ignore_ascii_case(k.trim());
        match kept.iter().find(|(x, _)| same(x)) {
            None => kept.push((k, v)),
            Some((_, first)) if *first == v => {}
            Some((x, first)) => comment(
                out,
                indent,
                &format!(
                    "The mail names two columns or rows '{x}'; both bind as the first: {first} (the other would be {v})."
                ),
            ),
        }
    }
    kept
}

/// Comment lines, wrapped to 72 columns at `indent`.
fn comment(out: &mut String, indent: usize, text: &str) {
    // YAML allows no control characters, comments included: a mail's
    // ESC or NUL is written as \x1b.
    let text = crate::util::escape_controls_keep_lines(text);
    let pad = " ".repeat(indent);
    let width = 72usize.saturating_sub(indent + 2).max(30);
    for para in text.split('\n') {
        // A command line is copied whole, not wrapped.
        if para.starts_with("  ") {
            out.push_str(&format!("{pad}#{para}\n"));
            continue;
        }
        let mut line = String::new();
        for w in para.split_whitespace() {
            // A key or hash in a quoted command is elided, not wrapped.
            let short;
            let w = if w.chars().count() > 40 {
                short = format!("{}...", w.chars().take(16).collect::<String>());
                short.as_str()
            } else {
                w
            };
            if !line.is_empty() && line.len() + 1 + w.len() > width {
                out.push_str(&format!("{pad}# {line}\n"));
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(w);
        }
        out.push_str(&format!(
            "{pad}#{}{line}\n",
            if line.is_empty() { "" } else { " " }
        ));
    }
}

fn notes(out: &mut String, indent: usize, ns: &[String]) {
    for n in ns {
        comment(out, indent, n);
    }
}

fn list(vs: &[String]) -> String {
    format!(
        "[{}]",
        vs.iter().map(|v| q(v)).collect::<Vec<_>>().join(", ")
    )
}

impl Proposal {
    pub fn yaml(&self) -> String {
        let mut o = String::new();
        notes(&mut o, 0, &self.head);
        o.push_str(&format!("version: 1\nname: {}\n", q(&self.name)));
        o.push_str(&format!("description: {}\n\n", q(&self.description)));
        self.yaml_kernel(&mut o);
        self.yaml_variants(&mut o);
        self.yaml_boot(&mut o);
        self.yaml_setup(&mut o);
        self.yaml_workloads(&mut o);
        o.push_str(&format!(
            "\nmetrics: {}\nrepetitions: 3\ninterleave: true\n",
            list(&self.metrics)
        ));
        o.push_str("\nverdict:\n  noise: 5%\n  max_cv: 10%\n");
        if !self.claims.is_empty() {
            o.push_str("\nclaims:\n");
            for c in &self.claims {
                o.push_str(&claim(c, &self.claim_mail));
            }
        }
        self.yaml_left_out(&mut o);
        o
    }

    /// `kernel:`: the source, base and fragments, and the config lines with why.
    fn yaml_kernel(&self, o: &mut String) {
        o.push_str("kernel:\n");
        notes(o, 2, &self.source_notes);
        o.push_str(&format!(
            "  source: {}\n  base: tinyconfig\n  fragments: [base]\n",
            q(&self.source)
        ));
        if !self.config.is_empty() {
            o.push_str("  config:\n");
            let mut last = None;
            for (line, why) in &self.config {
                if last != Some(why) {
                    comment(o, 4, why);
                }
                last = Some(why);
                o.push_str(&format!("    - {}\n", q(line)));
            }
        }
    }

    /// `variants:` with their patches.
    fn yaml_variants(&self, o: &mut String) {
        o.push_str("\nvariants:\n");
        notes(o, 2, &self.variant_notes);
        for v in &self.variants {
            o.push_str(&format!(
                "  - name: {}\n    description: {}\n",
                q(&v.name),
                q(&v.description)
            ));
            if let Some(src) = &v.source {
                o.push_str(&format!("    source: {}\n", q(src)));
            }
            if v.fuzz > 0 {
                comment(
                    o,
                    4,
                    "A mail's patch rarely matches a Debian tree line for line; lab records every hunk that needed fuzz.",
                );
                o.push_str(&format!("    fuzz: {}\n", v.fuzz));
            }
            if v.message_ids.is_empty()
                && let Some(m) = &v.mail
            {
                o.push_str(&format!("    patches:\n      - {{mail: {}}}\n", q(m)));
            }
            if !v.message_ids.is_empty() {
                o.push_str("    patches:\n");
                for id in &v.message_ids {
                    match &v.mail {
                        Some(m) => o.push_str(&format!(
                            "      - {{message-id: {}, mail: {}}}\n",
                            q(id),
                            q(m)
                        )),
                        None => o.push_str(&format!("      - {{message-id: {}}}\n", q(id))),
                    }
                }
            }
        }
    }

    /// `kernel_axes:` and `boot:`: arch, HZ, CPUs, memory, null_blk and NVMe.
    fn yaml_boot(&self, o: &mut String) {
        o.push_str("\nkernel_axes:\n");
        notes(o, 2, &self.kernel_notes);
        o.push_str(&format!("  arch: {}\n", list(&self.arch)));
        if !self.hz.is_empty() {
            o.push_str("  hz:\n");
            for h in &self.hz {
                o.push_str(&format!("    {h}: [hz{h}]\n"));
            }
        }
        o.push_str("\nboot:\n");
        notes(o, 2, &self.boot_notes);
        o.push_str(&format!(
            "  cpus: {}\n  memory: {}\n",
            self.cpus, self.memory
        ));
        if !self.null_blk.is_empty() {
            o.push_str("  null_blk:\n");
            for (k, v) in &self.null_blk {
                o.push_str(&format!("    {k}: {}\n", q(v)));
            }
        }
        if self.nvme > 0 {
            o.push_str("  nvme:\n");
            for i in 0..self.nvme {
                o.push_str(&format!(
                    "    - serial: lab{i}\n      size: 1G\n      backing: memory\n"
                ));
                if self.nvme_poll {
                    o.push_str("      poll_queues: 1\n");
                }
            }
        }
    }

    /// `run_axes:` and `setup:`, each with the mail's words it came from.
    fn yaml_setup(&self, o: &mut String) {
        if !self.run_axes.is_empty() {
            o.push_str("\nrun_axes:\n");
            for (name, values, note) in &self.run_axes {
                if let Some(n) = note {
                    comment(o, 2, n);
                }
                o.push_str(&format!("  {}: {}\n", q(name), list(values)));
            }
        }
        if !self.setup.is_empty() {
            o.push_str("\nsetup:\n");
            for (s, note) in &self.setup {
                if let Some(n) = note {
                    comment(o, 2, n);
                }
                o.push_str(&step(s));
            }
        }
    }

    /// The fio workload or workloads, derived metrics and perf events.
    fn yaml_workloads(&self, o: &mut String) {
        o.push('\n');
        notes(o, 0, &self.workload_notes);
        match &self.workloads {
            Some(Workloads::One(j)) => {
                o.push_str("workload:\n  fio:\n");
                o.push_str(&job(j, 4));
            }
            Some(Workloads::Named(ws)) => {
                o.push_str("workloads:\n");
                for (n, j) in ws {
                    o.push_str(&format!("  {}:\n    fio:\n", q(n)));
                    o.push_str(&job(j, 6));
                }
                o.push_str(&format!("workload: \"{{{{ {} }}}}\"\n", self.workload_axis));
            }
            None => {}
        }
        if !self.derived.is_empty() {
            o.push_str("\nderived:\n");
            for (k, v) in &self.derived {
                o.push_str(&format!("  {}: {}\n", q(k), q(v)));
            }
        }
        if !self.perf.is_empty() {
            o.push_str(&format!("\nperf:\n  events: {}\n", list(&self.perf)));
            if self.perf_system_wide {
                o.push_str("  system_wide: true\n");
            }
        }
    }

    /// Comments for the tables and commands the draft does not use.
    fn yaml_left_out(&self, o: &mut String) {
        if !self.unclaimed.is_empty() {
            o.push('\n');
            comment(o, 0, "Tables of the mail that are no claim here:");
            for u in &self.unclaimed {
                comment(o, 0, &format!("- {u}"));
            }
        }
        if !self.unmapped.is_empty() {
            o.push('\n');
            comment(o, 0, "Commands of the mail that lab does not map:");
            for u in &self.unmapped {
                comment(o, 0, &format!("- {u}"));
            }
        }
    }
}

fn step(s: &Step) -> String {
    match s {
        Step::Dm { name, target } => {
            let mut o = format!("  - dm:\n      name: {}\n", q(name));
            for (k, v) in target.fields() {
                o.push_str(&format!("      {k}: {}\n", q(&v)));
            }
            o
        }
        Step::Knob { path, value } => {
            format!("  - knob: {{path: {}, value: {}}}\n", q(path), q(value))
        }
        Step::Module { module, params } => params
            .iter()
            .map(|(k, v)| {
                format!(
                    "  - module_param: {{module: {}, param: {}, value: {}}}\n",
                    q(module),
                    q(k),
                    q(v)
                )
            })
            .collect(),
        Step::Mkfs {
            fs,
            device,
            options,
        } => {
            let opts = if options.is_empty() {
                String::new()
            } else {
                format!(", options: {}", q(options))
            };
            format!("  - mkfs: {{fs: {}, device: {}{opts}}}\n", q(fs), q(device))
        }
        Step::Mount {
            device,
            dir,
            fs,
            options,
        } => {
            let mut o = format!("  - mount: {{device: {}, dir: {}", q(device), q(dir));
            if let Some(f) = fs {
                o.push_str(&format!(", fs: {}", q(f)));
            }
            if !options.is_empty() {
                o.push_str(&format!(", options: {}", q(options)));
            }
            o.push_str("}\n");
            o
        }
        Step::Cgroup {
            name,
            device,
            limits,
        } => {
            let mut o = format!("  - cgroup: {{name: {}, device: {}", q(name), q(device));
            for (k, v) in limits {
                o.push_str(&format!(", {k}: {}", q(v)));
            }
            o.push_str("}\n");
            o
        }
    }
}

/// fio's options lab names; the rest go under `extra`.
const NAMED: [&str; 13] = [
    "filename",
    "rw",
    "bs",
    "direct",
    "ioengine",
    "iodepth",
    "numjobs",
    "runtime",
    "number_ios",
    "size",
    "hipri",
    "fsync",
    "fdatasync",
];

fn job(j: &Job, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut o = String::new();
    let mut extra = String::new();
    for (k, v, note) in &j.options {
        let named = NAMED.contains(&k.as_str());
        let (to, pad) = if named {
            (&mut o, pad.clone())
        } else {
            (&mut extra, format!("{pad}  "))
        };
        if let Some(n) = note {
            comment(to, pad.len(), n);
        }
        // fio's flags take no value: `--time_based`, `--hipri`.
        let v = if v.is_empty() {
            if named { "1" } else { "\"\"" }
        } else {
            v
        };
        let v = if v == "\"\"" { v.to_string() } else { q(v) };
        to.push_str(&format!("{pad}{k}: {v}\n"));
    }
    if !extra.is_empty() {
        o.push_str(&format!("{pad}extra:\n{extra}"));
    }
    o
}

fn claim(c: &ClaimDraft, mail: &str) -> String {
    let mut o = String::new();
    comment(&mut o, 2, &format!("Table {}: \"{}\"", c.table, c.about));
    o.push_str(&format!(
        "  - source: {{mail: {}}}\n    table: {}\n",
        q(mail),
        c.table
    ));
    if let Some(v) = &c.from_variant {
        o.push_str(&format!("    from_variant: {}\n", q(v)));
    }
    if c.group_variants {
        o.push_str("    group_axis: variant\n");
    }
    match &c.rows {
        Rows::Axis { column, axis } => o.push_str(&format!(
            "    row_column: {}\n    row_axis: {}\n",
            q(column),
            q(axis)
        )),
        Rows::Axes(axes) => o.push_str(&format!(
            "    row_axes: [{}]\n",
            axes.iter().map(|a| q(a)).collect::<Vec<_>>().join(", ")
        )),
        Rows::Variants => o.push_str("    rows: variant\n"),
        Rows::Metrics(ms) => {
            o.push_str("    rows: metric\n    metrics:\n");
            for (label, m) in unique_keys(&mut o, 6, ms) {
                if let Some((_, why)) = c.skipped.iter().find(|(l, _)| l == label) {
                    comment(&mut o, 6, &format!("not a claim: {why}"));
                }
                o.push_str(&format!("      {}: {}\n", q(label), q(m)));
            }
        }
        Rows::Single => {}
        Rows::Runs => o.push_str("    rows: run\n"),
    }
    if !c.row_variants.is_empty() {
        o.push_str("    row_variants:\n");
        for (a, v) in unique_keys(&mut o, 6, &c.row_variants) {
            o.push_str(&format!("      {}: {}\n", q(a), q(v)));
        }
    }
    if !c.aliases.is_empty() {
        o.push_str("    aliases:\n");
        for (a, v) in unique_keys(&mut o, 6, &c.aliases) {
            o.push_str(&format!("      {}: {}\n", q(a), q(v)));
        }
    }
    if let Some(a) = &c.column_axis {
        o.push_str(&format!("    column_axis: {}\n", q(a)));
    }
    if !c.columns.is_empty() {
        let cols: Vec<String> = unique_keys(&mut o, 4, &c.columns)
            .into_iter()
            .map(|(k, v)| format!("{}: {}", q(k), q(v)))
            .collect();
        o.push_str(&format!("    columns: {{{}}}\n", cols.join(", ")));
    }
    if !c.column_metrics.is_empty() {
        o.push_str("    metrics:\n");
        for (col, m) in unique_keys(&mut o, 6, &c.column_metrics) {
            if let Some((_, why)) = c.skipped.iter().find(|(l, _)| l == col) {
                comment(&mut o, 6, &format!("not a claim: {why}"));
            }
            o.push_str(&format!("      {}: {}\n", q(col), q(m)));
        }
    }
    if let Some(m) = &c.metric {
        o.push_str(&format!("    metric: {}\n", q(m)));
    }
    if let Some(u) = &c.unit {
        if c.inferred_unit {
            comment(
                &mut o,
                4,
                "The mail writes these numbers with a multiplier and no unit (155K): read as IOPS, inferred.",
            );
        }
        o.push_str(&format!("    unit: {}\n", q(u)));
    }
    comment(
        &mut o,
        4,
        "A draft's tolerance: tighten it once an A/A run shows the noise.",
    );
    o.push_str(&format!(
        "    tolerance: {}\n",
        crate::matrix::schema::DEFAULT_TOLERANCE
    ));
    if !c.conditions.is_empty() {
        let cs: Vec<String> = unique_keys(&mut o, 4, &c.conditions)
            .into_iter()
            .map(|(k, v)| format!("{k}: {}", q(v)))
            .collect();
        o.push_str(&format!("    conditions: {{{}}}\n", cs.join(", ")));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_back_as_written() {
        assert_eq!(q("randread"), "randread");
        assert_eq!(q("/dev/nvme0n1"), "/dev/nvme0n1");
        assert_eq!(q("4k"), "4k");
        assert_eq!(q("-1"), "-1");
        assert_eq!(q("{{ delay }}"), "\"{{ delay }}\"");
        assert_eq!(q("yes"), "\"yes\"");
        assert_eq!(q("a b"), "\"a b\"");
        assert_eq!(q("-x"), "\"-x\"");
    }

    #[test]
    fn comments_wrap_at_72_columns() {
        let mut o = String::new();
        comment(&mut o, 2, &"word ".repeat(40));
        assert!(
            o.lines().all(|l| l.len() <= 72 && l.starts_with("  # ")),
            "{o}"
        );
    }
}
