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

/// Instructions one template may run (minijinja's fuel).
const FUEL: u64 = 100_000;

/// The longest string a template may render to.
const MAX_RENDERED: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        [
            ("delay".to_string(), serde_json::json!(5)),
            ("arch".to_string(), serde_json::json!("x86_64")),
        ]
        .into_iter()
        .collect()
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
