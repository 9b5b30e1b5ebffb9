//! Templates in setup and workload values: `delay_ms: "{{ delay }}"`.
//!
//! minijinja with strict undefined variables, so a misspelt axis is an
//! error at plan time rather than an empty string in a dmsetup table.

use anyhow::{Result, anyhow};
use std::collections::BTreeMap;

/// The variables a cell's templates see: every axis, plus `arch` and `variant`.
pub type Vars = BTreeMap<String, serde_json::Value>;

pub fn render(template: &str, vars: &Vars) -> Result<String> {
    if !template.contains("{{") && !template.contains("{%") {
        return Ok(template.to_string());
    }
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // A matrix value is a short string; a template that loops for long
    // (`range(100000)` inside another) runs out of fuel: an input error,
    // never a hang.
    env.set_fuel(Some(FUEL));
    let ctx = minijinja::Value::from(minijinja::value::Serde(vars));
    let shown: String = template.escape_debug().take(200).collect();
    let out = env.render_str(template, ctx).map_err(|e| {
        let known: Vec<&str> = vars.keys().map(|s| s.as_str()).collect();
        anyhow!(
            "template '{shown}': {} (variables: {})",
            e,
            known.join(", ")
        )
    })?;
    if out.len() > MAX_RENDERED {
        return Err(anyhow!(
            "template '{shown}' renders {} bytes, more than the {MAX_RENDERED} a matrix value may have",
            out.len()
        ));
    }
    Ok(out)
}

/// Every string `template` renders to over the values of the axes it
/// names, each once: what a templated setup value can be in some cell,
/// known before the cells are expanded (a `mkfs` of `"{{ fs }}"` over
/// `fs: [xfs, ext4]` is both file systems). Only the axes the template
/// names are crossed, and at most `MAX_EACH` combinations are tried; a
/// combination that does not render is left out (expansion reports it).
pub fn render_each(template: &str, axes: &[(String, Vec<serde_json::Value>)]) -> Vec<String> {
    let mut env = minijinja::Environment::new();
    env.set_fuel(Some(FUEL));
    let Ok(t) = env.template_from_str(template) else {
        return Vec::new();
    };
    let named = t.undeclared_variables(false);
    let used: Vec<&(String, Vec<serde_json::Value>)> =
        axes.iter().filter(|(n, _)| named.contains(n)).collect();
    let mut out: Vec<String> = Vec::new();
    let mut pick = vec![0usize; used.len()];
    for _ in 0..MAX_EACH {
        let vars: Vars = used
            .iter()
            .zip(&pick)
            .filter_map(|((n, vs), &i)| Some((n.clone(), vs.get(i)?.clone())))
            .collect();
        if let Ok(s) = render(template, &vars)
            && !out.contains(&s)
        {
            out.push(s);
        }
        // The next combination, odometer-wise; done after the last.
        let Some(k) = (0..used.len()).find(|&k| pick[k] + 1 < used[k].1.len()) else {
            break;
        };
        pick[k] += 1;
        pick[..k].iter_mut().for_each(|p| *p = 0);
    }
    out
}

/// Combinations `render_each` tries.
const MAX_EACH: usize = 4096;

/// Instructions one template may run (minijinja's fuel).
const FUEL: u64 = 100_000;

/// The longest string a template may render to.
const MAX_RENDERED: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        [
            ("delay".to_string(), serde_json::json!(5)),
            ("arch".to_string(), serde_json::json!("x86_64")),
        ]
        .into_iter()
        .collect()
    }

    #[test]
    fn render_each_crosses_only_the_axes_a_template_names() {
        let axes = vec![
            ("fs".to_string(), vec![json!("xfs"), json!("ext4")]),
            ("qd".to_string(), vec![json!(1), json!(32)]),
            ("big".to_string(), (0..10_000).map(|i| json!(i)).collect()),
        ];
        assert_eq!(render_each("{{ fs }}", &axes), ["xfs", "ext4"]);
        assert_eq!(render_each("plain", &axes), ["plain"]);
        assert_eq!(
            render_each("{{ fs }}-{{ qd }}", &axes),
            ["xfs-1", "ext4-1", "xfs-32", "ext4-32"]
        );
        assert!(render_each("{{ nope }}", &axes).is_empty());
        assert!(render_each("{{ fs", &axes).is_empty());
        assert_eq!(render_each("{{ big % 2 }}", &axes), ["0", "1"]);
    }

    #[test]
    fn a_template_that_loops_for_long_runs_out_of_fuel() {
        let t = "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}";
        let start = std::time::Instant::now();
        let e = render(t, &vars()).unwrap_err().to_string();
        assert!(start.elapsed().as_secs() < 2, "{:?}", start.elapsed());
        assert!(e.contains("fuel"), "{e}");
        let e = render(
            "{% for i in range(1000) %}{{ 'y' * 100 }}{% endfor %}",
            &vars(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("more than the 65536"), "{e}");
    }

    #[test]
    fn renders_axes_with_their_type() {
        assert_eq!(render("{{ delay }}", &vars()).unwrap(), "5");
        assert_eq!(
            render("{{ delay * 2 }}ms on {{ arch }}", &vars()).unwrap(),
            "10ms on x86_64"
        );
        assert_eq!(render("plain", &vars()).unwrap(), "plain");
    }

    #[test]
    fn an_unknown_variable_is_an_error_naming_the_known_ones() {
        let e = render("{{ dealy }}", &vars()).unwrap_err().to_string();
        assert!(e.contains("dealy") || e.contains("undefined"), "{e}");
        assert!(
            e.contains("delay, arch") || e.contains("arch, delay"),
            "{e}"
        );
    }
}
