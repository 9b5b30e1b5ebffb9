//! `perf:` and `image:` in a matrix: perf counters around each workload,
//! and the guest image extras that bring perf.
//!
//! ```yaml
//! perf: {events: [context-switches, cycles], system_wide: true}
//! image: {extras: [perf]}
//! ```
//!
//! `perf:` needs the `perf` extra; it is added when the matrix does not
//! name it, so the two keys cannot disagree.

use super::schema::Loc;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// `perf:` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerfDef {
    pub events: Loc<Vec<Loc<String>>>,
    /// `perf stat -a`: count on every CPU, not only the workload's tasks.
    #[serde(default)]
    pub system_wide: bool,
}

/// `image:` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageDef {
    #[serde(default)]
    pub extras: Vec<Loc<String>>,
}

/// perf counters a matrix asks for, checked.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Perf {
    pub events: Vec<String>,
    pub system_wide: bool,
}

/// The extras lab's built-in guest recipe (images/lab.yaml) defines.
/// `image::recipe` tests that the two lists agree.
pub const KNOWN_EXTRAS: &[&str] = &["perf"];

/// Check `perf:` and `image:`; the image extras include `perf` when
/// `perf:` is given.
pub fn check(
    file: &Path,
    perf: Option<&Loc<PerfDef>>,
    image: Option<&Loc<ImageDef>>,
) -> Result<(Option<Perf>, Vec<String>)> {
    let mut extras: Vec<String> = Vec::new();
    if let Some(img) = image {
        for x in &img.value.extras {
            if !KNOWN_EXTRAS.contains(&x.value.as_str()) {
                return Err(super::err_at(
                    file,
                    x,
                    format!(
                        "image.extras: unknown extra '{}' (known: {})",
                        x.value,
                        KNOWN_EXTRAS.join(", ")
                    ),
                ));
            }
            if !extras.contains(&x.value) {
                extras.push(x.value.clone());
            }
        }
    }
    let Some(p) = perf else {
        return Ok((None, extras));
    };
    if p.value.events.value.is_empty() {
        return Err(super::err_at(
            file,
            &p.value.events,
            "perf.events: name at least one event (e.g. context-switches)",
        ));
    }
    let mut events = Vec::new();
    for e in &p.value.events.value {
        let ok = !e.value.is_empty()
            && e.value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_:./".contains(c));
        if !ok {
            return Err(super::err_at(
                file,
                e,
                format!(
                    "perf.events: bad event '{}': expected a perf event name such as context-switches",
                    e.value
                ),
            ));
        }
        if events.contains(&e.value) {
            return Err(super::err_at(
                file,
                e,
                format!("perf.events: '{}' is listed twice", e.value),
            ));
        }
        events.push(e.value.clone());
    }
    if !extras.iter().any(|x| x == "perf") {
        extras.push("perf".into());
    }
    Ok((
        Some(Perf {
            events,
            system_wide: p.value.system_wide,
        }),
        extras,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Both {
        perf: Option<Loc<PerfDef>>,
        image: Option<Loc<ImageDef>>,
    }

    fn run(yaml: &str) -> Result<(Option<Perf>, Vec<String>)> {
        let b: Both = crate::util::from_yaml(yaml).unwrap();
        check(Path::new("m.yaml"), b.perf.as_ref(), b.image.as_ref())
    }

    #[test]
    fn perf_brings_the_perf_extra() {
        let (p, x) =
            run("perf: {events: [context-switches, cycles], system_wide: true}\n").unwrap();
        let p = p.unwrap();
        assert_eq!(p.events, ["context-switches", "cycles"]);
        assert!(p.system_wide);
        assert_eq!(x, ["perf"]);
        let (p, x) = run("image: {extras: [perf]}\n").unwrap();
        assert_eq!((p, x), (None, vec!["perf".to_string()]));
    }

    #[test]
    fn errors_name_the_line_column_and_key() {
        let e = run("perf:\n  events: [context-switches, 'a,b']\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.yaml:2:"), "{e}");
        assert!(e.contains("perf.events: bad event 'a,b'"), "{e}");
        let e = run("image:\n  extras: [perf, gdb]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("m.yaml:2:") && e.contains("unknown extra 'gdb' (known: perf)"),
            "{e}"
        );
        let e = run("perf: {events: []}\n").unwrap_err().to_string();
        assert!(e.contains("name at least one event"), "{e}");
        let e = run("perf: {events: [cycles, cycles]}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'cycles' is listed twice"), "{e}");
        assert!(
            crate::util::from_yaml::<Both>("perf: {events: [x], system: 1}\n").is_err(),
            "unknown keys are refused"
        );
    }
}
