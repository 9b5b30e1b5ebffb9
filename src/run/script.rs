//! A whole cell as one guest script: clocksource, setup, workload,
//! clocksource, teardown, written to the boot's guest shell
//! (`guest::shell`) instead of one SSH command per step (each about
//! 0.08 s under TCG, five or more per cell).
//!
//! The script prints only framed sections; each command's output is
//! captured (`$(...)`, which drops trailing newlines) and printed inside
//! its frame, so nothing a command prints can be taken for a frame (the
//! frame carries a random token). The workload's stderr is the script's.
//! Knobs, module parameters and perf keep the command-by-command path:
//! lab reads their effects back between commands.

use crate::guest::setup::{self, StepRecord};
use crate::matrix::perf::Perf;
use crate::matrix::{CellSpec, Workload};
use anyhow::{Result, bail};

const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";

/// The script for one cell, and what it needs to read the output back.
pub struct CellScript {
    pub text: String,
    token: String,
    /// (what, command) of each setup step, in order.
    steps: Vec<(String, String)>,
}

/// One command's result inside the script.
#[derive(Clone, Debug, PartialEq)]
pub struct Ran {
    pub status: u32,
    pub secs: f64,
    pub output: String,
}

/// What the script reported.
#[derive(Debug, Default)]
pub struct ScriptRun {
    pub clocksource_before: String,
    pub clocksource_after: String,
    /// The steps that ran, in order; the last one failed if it is not 0.
    pub steps: Vec<Ran>,
    /// Each undo that ran: (the step it undoes, result).
    pub undos: Vec<(usize, Ran)>,
    /// The workload, its stdout in `output`.
    pub workload: Option<Ran>,
    pub workload_stderr: String,
}

/// The script, or None when the cell needs lab between its commands
/// (a knob, a module parameter, perf).
pub fn plan(cell: &CellSpec, perf: Option<&Perf>) -> Result<Option<CellScript>> {
    if perf.is_some() {
        return Ok(None);
    }
    let mut steps = Vec::new();
    let mut undos: Vec<(usize, String)> = Vec::new();
    for (i, step) in cell.setup.iter().enumerate() {
        let Some(shell) = setup::as_shell(step) else {
            return Ok(None);
        };
        let (cmd, undo) = shell?;
        steps.push((setup::describe(step), cmd));
        if let Some(u) = undo {
            undos.push((i, u));
        }
    }
    let workload = match &cell.workload {
        None => None,
        Some(Workload::Fio(def)) => Some(crate::bench::fio::command_line(def)),
        Some(Workload::Command(c)) => Some(c.run.clone()),
    }
    .map(|w| setup::in_cgroup(&cell.setup, w));
    let token = crate::util::random_token();
    let q = crate::util::shell_quote;
    // Builtins only between commands: each program started costs 5 to
    // 50 ms under TCG, and the clock is read with `read`, not `$(...)`.
    let mut t = format!(
        "lab_t={token}\n\
         m() {{ printf '\\n@@%s %s\\n' \"$lab_t\" \"$*\"; }}\n\
         now() {{ read lab_u _ </proc/uptime; lab_u=${{lab_u%.*}}${{lab_u#*.}}; }}\n\
         run() {{ now; lab_t0=$lab_u; lab_o=$(eval \"$1\" 2>&1); rc=$?; now; el=$((lab_u - lab_t0)); }}\n\
         cs() {{ lab_c=; {{ read lab_c <{CLOCKSOURCE}; }} 2>/dev/null; printf %s \"$lab_c\"; }}\n\
         m cs-before; cs\n"
    );
    // Undo, newest first, what steps before `upto` did.
    let undo_block = |upto: usize| -> String {
        undos
            .iter()
            .rev()
            .filter(|(i, _)| *i < upto)
            .map(|(i, u)| format!("run {}; m undo {i} $rc $el; printf %s \"$lab_o\"\n", q(u)))
            .collect()
    };
    for (i, (_, cmd)) in steps.iter().enumerate() {
        t.push_str(&format!(
            "run {}; m step {i} $rc $el; printf %s \"$lab_o\"\n\
             if [ $rc -ne 0 ]; then\n{}m end; exit 0\nfi\n",
            q(cmd),
            undo_block(i)
        ));
    }
    // The workload's stderr is the script's own; its stdout is kept
    // until the frames after it.
    if let Some(w) = &workload {
        t.push_str(&format!(
            "now; lab_t0=$lab_u; lab_w=$(eval {}); wrc=$?; now; wel=$((lab_u - lab_t0))\n",
            q(w)
        ));
    }
    t.push_str("m cs-after; cs\n");
    t.push_str(&undo_block(steps.len()));
    if workload.is_some() {
        t.push_str("m workload $wrc $wel; printf %s \"$lab_w\"\n");
    }
    t.push_str("m end\n");
    Ok(Some(CellScript {
        text: t,
        token,
        steps,
    }))
}

impl CellScript {
    /// Read the script's output. A script that stopped before its end
    /// frame (the guest died, the shell failed) is an error. Its stderr
    /// is the workload's.
    pub fn parse(&self, stdout: &str, stderr: &str) -> Result<ScriptRun> {
        let mark = format!("@@{} ", self.token);
        let mut sections: Vec<(Vec<String>, String)> = Vec::new();
        for line in stdout.split_inclusive('\n') {
            match line.strip_prefix(&mark) {
                Some(head) => sections.push((
                    head.split_whitespace().map(String::from).collect(),
                    String::new(),
                )),
                None => {
                    if let Some((_, body)) = sections.last_mut() {
                        body.push_str(line);
                    }
                }
            }
        }
        // Each frame starts with a newline so it is at a line start; that
        // newline belongs to no section.
        for (_, body) in sections.iter_mut() {
            if body.ends_with('\n') {
                body.pop();
            }
        }
        if sections.last().map(|(h, _)| h.first().map(String::as_str)) != Some(Some("end")) {
            bail!(
                "the cell's guest script stopped before its end (output: {})",
                crate::util::prefix(stdout.trim(), 300)
            );
        }
        let num = |h: &[String], i: usize| -> Result<u64> {
            h.get(i).and_then(|v| v.parse().ok()).ok_or_else(|| {
                anyhow::anyhow!("malformed frame in the cell script's output: {h:?}")
            })
        };
        let ran = |h: &[String], body: &str| -> Result<Ran> {
            Ok(Ran {
                status: num(h, 2)? as u32,
                secs: num(h, 3)? as f64 / 100.0,
                output: body.to_string(),
            })
        };
        let mut r = ScriptRun {
            workload_stderr: stderr.to_string(),
            ..Default::default()
        };
        for (h, body) in &sections {
            match h.first().map(String::as_str) {
                Some("cs-before") => r.clocksource_before = body.trim().to_string(),
                Some("cs-after") => r.clocksource_after = body.trim().to_string(),
                Some("step") => r.steps.push(ran(h, body)?),
                Some("undo") => r.undos.push((num(h, 1)? as usize, ran(h, body)?)),
                Some("workload") => {
                    r.workload = Some(Ran {
                        status: num(h, 1)? as u32,
                        secs: num(h, 2)? as f64 / 100.0,
                        output: body.clone(),
                    })
                }
                _ => {}
            }
        }
        Ok(r)
    }

    /// The records of the steps that ran, and the error of the one that
    /// failed, named the way the command-by-command path names it.
    pub fn step_records(&self, run: &ScriptRun) -> (Vec<StepRecord>, Option<anyhow::Error>) {
        let mut records = Vec::new();
        for (i, ran) in run.steps.iter().enumerate() {
            let Some((what, cmd)) = self.steps.get(i) else {
                break;
            };
            if ran.status != 0 {
                let err = anyhow::anyhow!(
                    "setup step '{what}': {what} failed in the guest (exit status {}): {}",
                    ran.status,
                    ran.output.trim()
                );
                return (records, Some(err));
            }
            records.push(StepRecord {
                step: what.clone(),
                command: cmd.clone(),
                secs: ran.secs,
                knob: None,
            });
        }
        (records, None)
    }

    /// The first undo that failed, as a teardown error.
    pub fn teardown_error(&self, run: &ScriptRun) -> Option<anyhow::Error> {
        run.undos.iter().find(|(_, r)| r.status != 0).map(|(i, r)| {
            let what = self.steps.get(*i).map(|s| s.0.as_str()).unwrap_or("?");
            anyhow::anyhow!(
                "undoing '{what}' failed in the guest (exit status {}): {}",
                r.status,
                r.output.trim()
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::schema::{CommandDef, ShellDef};
    use crate::matrix::{Arch, SetupStep};

    fn cell(setup: Vec<SetupStep>, run: &str) -> CellSpec {
        CellSpec {
            id: "c".into(),
            boot: "b".into(),
            kernel: "k".into(),
            arch: Arch::X86_64,
            variant: "v".into(),
            axes: Default::default(),
            run_axes: Default::default(),
            setup,
            workload: Some(Workload::Command(CommandDef {
                run: run.into(),
                metrics: vec![],
            })),
            derived: vec![],
        }
    }

    fn shell(run: &str, undo: Option<&str>) -> SetupStep {
        SetupStep::Shell(ShellDef {
            run: run.into(),
            undo: undo.map(String::from),
        })
    }

    /// The script under the host's own /bin/sh, which is the guest's
    /// (dash); /proc/uptime and the clocksource file are the host's.
    /// Run as the guest's shell runs it (`guest::shell::wrap`).
    fn sh(script: &CellScript) -> (String, String) {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "( eval {} ) </dev/null",
                crate::util::shell_quote(&script.text)
            ))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success());
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    }

    fn run_script(script: &CellScript) -> ScriptRun {
        let (out, err) = sh(script);
        script.parse(&out, &err).unwrap()
    }

    #[test]
    fn a_cell_runs_in_order_and_undoes_newest_first() {
        let d = tempfile::tempdir().unwrap();
        let log = d.path().join("log");
        let l = log.display();
        let c = cell(
            vec![
                shell(
                    &format!("echo a >> {l}"),
                    Some(&format!("echo undo-a >> {l}")),
                ),
                shell(
                    &format!("echo b >> {l}; echo said b"),
                    Some(&format!("echo undo-b >> {l}")),
                ),
            ],
            &format!("echo w >> {l}; printf 'x\\n@@fake 1\\nlast'; echo oops >&2; exit 3"),
        );
        let s = plan(&c, None).unwrap().unwrap();
        let run = run_script(&s);
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "a\nb\nw\nundo-b\nundo-a\n"
        );
        assert_eq!(run.steps.len(), 2);
        assert_eq!(run.steps[1].output, "said b");
        let (records, failed) = s.step_records(&run);
        assert!(failed.is_none());
        assert_eq!(
            records[0].step,
            "shell echo a >> ".to_string() + &l.to_string()
        );
        let w = run.workload.as_ref().unwrap();
        assert_eq!((w.status, w.output.as_str()), (3, "x\n@@fake 1\nlast"));
        assert_eq!(run.workload_stderr, "oops\n");
        assert!(!run.clocksource_before.is_empty());
        assert_eq!(run.clocksource_before, run.clocksource_after);
        assert_eq!(
            run.undos.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            [1, 0]
        );
        assert!(s.teardown_error(&run).is_none());
    }

    #[test]
    fn a_failed_step_stops_the_cell_and_undoes_what_ran() {
        let d = tempfile::tempdir().unwrap();
        let l = d.path().join("log");
        let l = l.display();
        let c = cell(
            vec![
                shell(
                    &format!("echo a >> {l}"),
                    Some(&format!("echo undo-a >> {l}")),
                ),
                shell("echo no such device >&2; exit 2", Some("echo never")),
                shell(&format!("echo c >> {l}"), None),
            ],
            &format!("echo w >> {l}"),
        );
        let s = plan(&c, None).unwrap().unwrap();
        let run = run_script(&s);
        assert_eq!(
            std::fs::read_to_string(d.path().join("log")).unwrap(),
            "a\nundo-a\n"
        );
        let (records, failed) = s.step_records(&run);
        assert_eq!(records.len(), 1);
        let e = failed.unwrap().to_string();
        assert!(
            e.contains("exit status 2") && e.contains("no such device"),
            "{e}"
        );
        assert!(run.workload.is_none());
    }

    #[test]
    fn a_failed_undo_is_a_teardown_error_and_a_cut_output_an_error() {
        let c = cell(vec![shell("true", Some("echo busy >&2; exit 1"))], "true");
        let s = plan(&c, None).unwrap().unwrap();
        let (out, err) = sh(&s);
        let run = s.parse(&out, &err).unwrap();
        let e = s.teardown_error(&run).unwrap().to_string();
        assert!(
            e.contains("undoing 'shell true'") && e.contains("busy"),
            "{e}"
        );
        let cut = &out[..out.len() / 2];
        assert!(
            s.parse(cut, "")
                .unwrap_err()
                .to_string()
                .contains("stopped before its end")
        );
    }

    #[test]
    fn a_step_with_a_syntax_error_or_an_exit_fails_alone() {
        let c = cell(
            vec![
                shell("lab_d=/nonexistent; exit 0", None),
                shell("if then fi", None),
            ],
            "true",
        );
        let s = plan(&c, None).unwrap().unwrap();
        let run = run_script(&s);
        assert_eq!(run.steps.len(), 2);
        assert_eq!(run.steps[0].status, 0);
        assert_eq!(run.steps[1].status, 2, "{:?}", run.steps[1]);
        assert!(s.step_records(&run).1.is_some());
    }

    #[test]
    fn knobs_and_perf_keep_the_command_by_command_path() {
        let knob: SetupStep = crate::util::from_yaml("knob: {path: /sys/x, value: 1}").unwrap();
        assert!(plan(&cell(vec![knob], "true"), None).unwrap().is_none());
        let perf = Perf {
            events: vec!["cycles".into()],
            system_wide: false,
        };
        assert!(plan(&cell(vec![], "true"), Some(&perf)).unwrap().is_none());
    }
}
