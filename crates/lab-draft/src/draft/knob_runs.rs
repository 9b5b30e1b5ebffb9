//! A knob the mail sets to one value, runs, then sets to another and
//! runs again (`cat .../read_ahead_kb` shows 128, dd runs; `echo 15360 >
//! .../read_ahead_kb`, dd runs): the experiment turns that knob. Its
//! values become an axis named after the knob's file, its step takes
//! the axis, and the numbers printed after each setting were measured
//! with that value.

use super::emit::Proposal;
use super::steps::Step;
use regex::Regex;
use std::sync::LazyLock;

/// A knob set to more than one value, one run after another.
#[derive(Clone, Debug, PartialEq)]
pub struct KnobRun {
    pub axis: String,
    pub path: String,
    pub values: Vec<String>,
    /// Where each value took effect: message (from 1), body line, value.
    pub marks: Vec<(usize, usize, String)>,
}

/// Files written to act, not to set: writing the same value again is
/// the point (`echo 3 > drop_caches`).
const ACTIONS: [&str; 4] = ["drop_caches", "compact_memory", "delete", "reset"];

/// The knobs each message's commands set to two values or more.
/// `commands` are each message's (body line, logical command line);
/// `bodies` each message's body lines, for the value a `cat` prints.
pub fn find(commands: &[Vec<(usize, String)>], bodies: &[Vec<&str>]) -> Vec<KnobRun> {
    static ECHO: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*(?:sudo\s+)?echo\s+(\S+)\s*(?:>|\|\s*(?:sudo\s+)?tee)\s*(/(?:sys|proc)/\S+)\s*$",
        )
        .expect("constant regex")
    });
    static CAT: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:sudo\s+)?cat\s+(/(?:sys|proc)/\S+)\s*$").expect("constant regex")
    });
    let mut runs: Vec<KnobRun> = Vec::new();
    for (m, lines) in commands.iter().enumerate() {
        for (line, text) in lines {
            let text = text.trim_start_matches(['#', '$', ' ']);
            let (path, value) = if let Some(c) = ECHO.captures(text) {
                (c[2].to_string(), c[1].trim_matches(['"', '\'']).to_string())
            } else if let Some(c) = CAT.captures(text) {
                // `cat` shows the value then in force, on the next line.
                let shown = bodies
                    .get(m)
                    .and_then(|b| b.get(*line))
                    .map(|l| l.trim_start_matches(['>', ' ']).trim())
                    .filter(|v| !v.is_empty() && !v.contains(char::is_whitespace));
                match shown {
                    Some(v) => (c[1].to_string(), v.to_string()),
                    None => continue,
                }
            } else {
                continue;
            };
            let path = path.replace("\\:", ":");
            let file = path.rsplit('/').next().unwrap_or("").to_string();
            if file.is_empty() || ACTIONS.contains(&file.as_str()) {
                continue;
            }
            let run = match runs.iter_mut().find(|r| r.path == path) {
                Some(r) => r,
                None => {
                    runs.push(KnobRun {
                        axis: file,
                        path,
                        values: Vec::new(),
                        marks: Vec::new(),
                    });
                    runs.last_mut().expect("just pushed")
                }
            };
            if !run.values.contains(&value) {
                run.values.push(value.clone());
            }
            run.marks.push((m + 1, *line, value));
        }
    }
    runs.retain(|r| r.values.len() >= 2);
    runs
}

/// Each run becomes an axis whose values the knob's step takes, unless
/// an axis of that name is there already or the mail writes the knob
/// nowhere lab can (no step of that path). Returns the runs applied.
pub fn apply(p: &mut Proposal, runs: Vec<KnobRun>) -> Vec<KnobRun> {
    let mut applied = Vec::new();
    for r in runs {
        if p.run_axes.iter().any(|(n, ..)| *n == r.axis) {
            continue;
        }
        let Some(at) = p
            .setup
            .iter()
            .position(|(s, _)| matches!(s, Step::Knob { path, .. } if *path == r.path))
        else {
            continue;
        };
        let note = p.setup[at].1.clone();
        p.setup
            .retain(|(s, _)| !matches!(s, Step::Knob { path, .. } if *path == r.path));
        let at = at.min(p.setup.len());
        p.setup.insert(
            at,
            (
                Step::Knob {
                    path: r.path.clone(),
                    value: format!("{{{{ {} }}}}", r.axis),
                },
                note,
            ),
        );
        let lines: Vec<String> = r
            .marks
            .iter()
            .map(|(_, l, v)| format!("{v} at line {l}"))
            .collect();
        p.run_axes.push((
            r.axis.clone(),
            r.values.clone(),
            Some(format!(
                "the mail sets {} to each value in turn and runs after each ({})",
                r.path,
                lines.join(", ")
            )),
        ));
        applied.push(r);
    }
    applied
}

/// The value a run's knob held at a message's body line: the last one
/// set above it in that message.
pub fn value_at(r: &KnobRun, message: usize, line: usize) -> Option<&str> {
    r.marks
        .iter()
        .filter(|(m, l, _)| *m == message && *l < line)
        .max_by_key(|(_, l, _)| *l)
        .map(|(_, _, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_knob_shown_then_set_is_a_run_and_an_action_is_not() {
        let body = [
            "# cat /sys/class/bdi/0\\:55/read_ahead_kb",
            "128",
            "",
            "# echo 3 > /proc/sys/vm/drop_caches",
            "# echo 15360 > /sys/class/bdi/0\\:55/read_ahead_kb",
            "# echo 1 > /proc/sys/vm/drop_caches",
        ];
        let commands: Vec<(usize, String)> = [1, 4, 5, 6]
            .iter()
            .map(|&l| (l, body[l - 1].to_string()))
            .collect();
        let runs = find(&[commands], &[body.to_vec()]);
        assert_eq!(runs.len(), 1, "{runs:#?}");
        assert_eq!(runs[0].axis, "read_ahead_kb");
        assert_eq!(runs[0].path, "/sys/class/bdi/0:55/read_ahead_kb");
        assert_eq!(runs[0].values, ["128", "15360"]);
        assert_eq!(value_at(&runs[0], 1, 3), Some("128"));
        assert_eq!(value_at(&runs[0], 1, 9), Some("15360"));
        assert_eq!(value_at(&runs[0], 1, 1), None);
        assert_eq!(value_at(&runs[0], 2, 9), None);
    }
}
