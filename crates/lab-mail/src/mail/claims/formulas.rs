//! Tables of a formula's outputs. A mail that defines `var1 = 65536 *
//! nr_cpus / (...)` and then tabulates `var1` beside its inputs shows
//! what the formula gives, not what anything measured: the columns are
//! computed. Decided from the mail's own definitions, so it holds for
//! any name and any formula.

use crate::mail::model::{ClaimKind, ClaimTable};
use regex::Regex;
use std::collections::HashSet;
use std::sync::LazyLock;

static DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[\s>+]*([A-Za-z_][A-Za-z0-9_]*)(\([\w, ]*\))?\s*=\s*(.+?)\s*;?\s*$")
        .expect("constant regex")
});

/// A call, or an operator with a name for an operand: an expression,
/// not a setting (`bs=4k`) or a reading (`bw=1.2GB/s`, `IOS/call=32`).
/// A `/` or `+` counts spaced or beside a bracket, as units never are.
static EXPR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z_]\w*\((?:[^)]|$)|[A-Za-z_]\w*\s*\*|\*\s*[A-Za-z_(]|[\w)]\s+[/+]\s+[A-Za-z_(]|[A-Za-z_]\w*\s+[/+]\s+[\w(]|\)\s*[/+]|[/+]\s*\(")
        .expect("constant regex")
});

/// The right side of `=` outside brackets holds no list (`, `) and no
/// other assignment: one expression.
fn one_expression(rhs: &str) -> bool {
    let mut depth = 0i32;
    for c in rhs.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' | '=' if depth <= 0 => return false,
            _ => {}
        }
    }
    true
}

/// `log(x) = ilog2(x) * 0.69`, `var1 = 65536*nr_cpus / (...)`: a line
/// that defines a name or function by an expression, whose numbers are
/// the formula's constants.
pub fn is_formula(text: &str) -> bool {
    text.contains('=')
        && text.len() < 512
        && DEF
            .captures(text)
            .is_some_and(|c| one_expression(&c[3]) && EXPR.is_match(&c[3]))
}

/// Which of `wanted` the body defines by an expression. Only lines
/// that assign one of them are read with the regexes: a big body's
/// other lines cost a byte search.
fn defined(body: &str, wanted: &HashSet<String>) -> HashSet<String> {
    let mut names = HashSet::new();
    for line in body.lines().filter(|l| l.contains('=')) {
        let name = assigned(line);
        if !name.is_empty() && wanted.contains(&name.to_ascii_lowercase()) && is_formula(line) {
            names.insert(name.to_ascii_lowercase());
        }
    }
    names
}

/// The name a line assigns to (`var1` of `\tvar1 = ...`, `log` of
/// `log(x) = ...`), or "".
fn assigned(line: &str) -> &str {
    let t = line.trim_start_matches(|c: char| c.is_whitespace() || c == '>' || c == '+');
    let end = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    &t[..end]
}

/// `tables` without those whose every value column the body defines
/// by a formula.
pub fn drop_computed(body: &str, tables: &mut Vec<ClaimTable>) {
    if !tables.iter().any(|t| t.kind == ClaimKind::Table) || !body.contains('=') {
        return;
    }
    let wanted: HashSet<String> = tables
        .iter()
        .filter(|t| t.kind == ClaimKind::Table)
        .flat_map(|t| t.columns.iter().map(|c| c.name.trim().to_ascii_lowercase()))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let names = defined(body, &wanted);
    if names.is_empty() {
        return;
    }
    tables.retain(|t| {
        t.kind != ClaimKind::Table
            || t.columns.is_empty()
            || !t
                .columns
                .iter()
                .all(|c| names.contains(&c.name.trim().to_ascii_lowercase()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_define_names_and_settings_do_not() {
        let body = "\tvar1 = 65536*nr_cpus / (45426 * ilog2(nr_cpus) + 65536)\n\
                    > +\tthreshold = MEMCG_CHARGE_BATCH *\n\
                    var3 = roundup_pow_of_two(var2)\n\
                    bs=4k\n\
                    bw = 1.2GB/s\n\
                    iops = 1000 / 3\n\
                    IOPS=3520608, IOS/call=32/31, inflight=47 (47)\n\
                    log(x) = ilog2(x) * log(2)/log(e) ~ ilog2(x) * 0.69\n";
        let wanted: HashSet<String> = ["var1", "var3", "threshold", "log", "bs", "bw", "iops"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let got = defined(body, &wanted);
        assert!(got.contains("var1") && got.contains("var3"), "{got:?}");
        assert!(got.contains("log"), "{got:?}");
        for setting in ["bs", "bw", "iops"] {
            assert!(!got.contains(setting), "{setting}: {got:?}");
        }
    }
}
