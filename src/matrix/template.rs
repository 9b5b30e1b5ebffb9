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
    let ctx = minijinja::Value::from(minijinja::value::Serde(vars));
    env.render_str(template, ctx).map_err(|e| {
        let known: Vec<&str> = vars.keys().map(|s| s.as_str()).collect();
        anyhow!(
            "template '{template}': {} (variables: {})",
            e,
            known.join(", ")
        )
    })
}

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
