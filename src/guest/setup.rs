//! A cell's setup steps in the guest, and the teardown that undoes them
//! so the next cell on the same boot starts clean.

use super::knob::{self, Knob};
use super::ssh::Session;
use crate::matrix::SetupStep;
use crate::matrix::schema::DmDef;
use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

/// What one step did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: String,
    pub command: String,
    pub secs: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knob: Option<Knob>,
}

/// How to undo what was done, newest first.
#[derive(Default)]
pub struct Undo(Vec<UndoAction>);

enum UndoAction {
    Shell(String),
    Knob(Knob),
}

/// The shell command that makes a device-mapper device, and the one
/// that removes it. Without udev, `dmsetup create` makes no
/// /dev/mapper node, and a write to that path would land in a regular
/// file on devtmpfs; so the node is made with `mknodes` and checked.
pub fn dm_commands(d: &DmDef) -> Result<(String, String)> {
    let name = &d.name;
    let dev = || {
        d.device.clone().ok_or_else(|| {
            anyhow::anyhow!(
                "dm {name}: target {} needs a device",
                d.target.as_deref().unwrap_or("?")
            )
        })
    };
    let table = match (d.target.as_deref(), &d.table) {
        (None, Some(t)) => t.clone(),
        (Some("delay"), None) => {
            let dev = dev()?;
            let r = d
                .read_ms
                .as_ref()
                .map(|x| x.to_string())
                .unwrap_or_else(|| "0".into());
            let w = d
                .write_ms
                .as_ref()
                .map(|x| x.to_string())
                .unwrap_or_else(|| r.clone());
            format!("0 $(blockdev --getsz {dev}) delay {dev} 0 {r} {dev} 0 {w}")
        }
        (Some("linear"), None) => {
            let dev = dev()?;
            format!("0 $(blockdev --getsz {dev}) linear {dev} 0")
        }
        (Some("zero"), None) => {
            let s = d
                .sectors
                .as_ref()
                .map(|x| x.to_string())
                .unwrap_or_else(|| "2097152".into());
            format!("0 {s} zero")
        }
        (Some(t), None) => {
            bail!("dm {name}: unknown target '{t}' (delay, linear, zero, or give a raw table)")
        }
        (Some(_), Some(_)) => bail!("dm {name}: give either target or table, not both"),
        (None, None) => bail!("dm {name}: needs a target or a table"),
    };
    let create = format!(
        "export DM_DISABLE_UDEV=1; dmsetup create {name} --table \"{table}\" && dmsetup mknodes {name} && test -b /dev/mapper/{name}"
    );
    Ok((
        create,
        format!("export DM_DISABLE_UDEV=1; dmsetup remove {name}"),
    ))
}

fn describe(step: &SetupStep) -> String {
    match step {
        SetupStep::Dm(d) => format!("dm {}", d.name),
        SetupStep::Knob(k) => format!("knob {}={}", k.path, k.value),
        SetupStep::ModuleParam(m) => format!("module param {}.{}={}", m.module, m.param, m.value),
        SetupStep::NullBlk(n) => format!("null_blk {}", n.name),
        SetupStep::Mkfs(m) => format!("mkfs.{} {}", m.fs, m.device),
        SetupStep::Mount(m) => format!("mount {} {}", m.device, m.dir),
        SetupStep::Shell(s) => format!("shell {}", s.run),
    }
}

/// Run the steps in order. On failure, what was done so far is undone
/// before the error returns.
pub async fn apply(
    s: &Session,
    steps: &[SetupStep],
    kernel: Option<(u32, u32)>,
) -> Result<(Vec<StepRecord>, Undo)> {
    let mut undo = Undo::default();
    let mut records = Vec::new();
    for step in steps {
        match apply_one(s, step, kernel, &mut undo).await {
            Ok(r) => records.push(r),
            Err(e) => {
                let _ = teardown(s, undo).await;
                return Err(e.context(format!("setup step '{}'", describe(step))));
            }
        }
    }
    Ok((records, undo))
}

async fn shell(s: &Session, cmd: &str, what: &str) -> Result<f64> {
    let o = s.exec(cmd).await?.check(what)?;
    Ok(o.secs)
}

async fn apply_one(
    s: &Session,
    step: &SetupStep,
    kernel: Option<(u32, u32)>,
    undo: &mut Undo,
) -> Result<StepRecord> {
    let what = describe(step);
    let rec = |command: String, secs: f64, knob: Option<Knob>| StepRecord {
        step: what.clone(),
        command,
        secs,
        knob,
    };
    Ok(match step {
        SetupStep::Dm(d) => {
            let (create, remove) = dm_commands(d)?;
            let secs = shell(s, &create, &what).await?;
            undo.0.push(UndoAction::Shell(remove));
            rec(create, secs, None)
        }
        SetupStep::Knob(k) => {
            let start = std::time::Instant::now();
            let kn = knob::set(s, &k.path, &k.value.to_string(), kernel).await?;
            undo.0.push(UndoAction::Knob(kn.clone()));
            rec(
                format!("echo {} > {}", k.value, k.path),
                start.elapsed().as_secs_f64(),
                Some(kn),
            )
        }
        SetupStep::ModuleParam(m) => {
            let path = format!("/sys/module/{}/parameters/{}", m.module, m.param);
            let start = std::time::Instant::now();
            let w = s.exec(&format!("test -w {path}")).await?;
            if !w.ok() {
                bail!(
                    "{path} is not writable at run time: set {}.{}={} on the kernel command line (boot.cmdline) instead",
                    m.module,
                    m.param,
                    m.value
                );
            }
            let kn = knob::set(s, &path, &m.value.to_string(), kernel).await?;
            undo.0.push(UndoAction::Knob(kn.clone()));
            rec(
                format!("echo {} > {path}", m.value),
                start.elapsed().as_secs_f64(),
                Some(kn),
            )
        }
        SetupStep::NullBlk(n) => {
            let dir = format!("/sys/kernel/config/nullb/{}", n.name);
            let mut cmd = format!("mkdir {dir}");
            for (k, v) in &n.attrs {
                cmd.push_str(&format!(" && echo {v} > {dir}/{k}"));
            }
            cmd.push_str(&format!(" && echo 1 > {dir}/power"));
            let secs = shell(s, &cmd, &what).await?;
            undo.0.push(UndoAction::Shell(format!(
                "echo 0 > {dir}/power; rmdir {dir}"
            )));
            rec(cmd, secs, None)
        }
        SetupStep::Mkfs(m) => {
            let force = if m.fs == "xfs" { "-f " } else { "" };
            let cmd = format!("mkfs.{} {force}{} {}", m.fs, m.options, m.device);
            let secs = shell(s, &cmd, &what).await?;
            rec(cmd, secs, None)
        }
        SetupStep::Mount(m) => {
            let fs =
                m.fs.as_ref()
                    .map(|f| format!("-t {f} "))
                    .unwrap_or_default();
            let opts = if m.options.is_empty() {
                String::new()
            } else {
                format!("-o {} ", m.options)
            };
            let cmd = format!(
                "mkdir -p {} && mount {fs}{opts}{} {}",
                m.dir, m.device, m.dir
            );
            let secs = shell(s, &cmd, &what).await?;
            undo.0.push(UndoAction::Shell(format!("umount {}", m.dir)));
            rec(cmd, secs, None)
        }
        SetupStep::Shell(sh) => {
            let secs = shell(s, &sh.run, &what).await?;
            if let Some(u) = &sh.undo {
                undo.0.push(UndoAction::Shell(u.clone()));
            }
            rec(sh.run.clone(), secs, None)
        }
    })
}

/// Undo in reverse order. Every action is tried; the first error is returned.
pub async fn teardown(s: &Session, undo: Undo) -> Result<()> {
    let mut first: Option<anyhow::Error> = None;
    for a in undo.0.into_iter().rev() {
        let r = match &a {
            UndoAction::Shell(c) => s
                .exec(c)
                .await
                .and_then(|o| o.check(&format!("teardown '{c}'")).map(|_| ())),
            UndoAction::Knob(k) => knob::restore(s, k).await,
        };
        if let Err(e) = r
            && first.is_none()
        {
            first = Some(e);
        }
    }
    first.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::Scalar;

    fn dm(target: Option<&str>) -> DmDef {
        DmDef {
            name: "delayed".into(),
            target: target.map(String::from),
            device: Some("/dev/nullb0".into()),
            read_ms: Some(Scalar::Int(1)),
            write_ms: Some(Scalar::Int(5)),
            sectors: None,
            table: None,
        }
    }

    #[test]
    fn delay_tables_carry_separate_read_and_write_delays_and_make_the_node() {
        let (c, r) = dm_commands(&dm(Some("delay"))).unwrap();
        assert!(c.contains("delay /dev/nullb0 0 1 /dev/nullb0 0 5"), "{c}");
        assert!(
            c.contains("DM_DISABLE_UDEV=1")
                && c.contains("dmsetup mknodes delayed")
                && c.contains("test -b /dev/mapper/delayed"),
            "{c}"
        );
        assert!(r.ends_with("dmsetup remove delayed"));
    }

    #[test]
    fn zero_linear_raw_and_bad_tables() {
        assert!(
            dm_commands(&dm(Some("zero")))
                .unwrap()
                .0
                .contains("\"0 2097152 zero\"")
        );
        assert!(
            dm_commands(&dm(Some("linear")))
                .unwrap()
                .0
                .contains("linear /dev/nullb0 0")
        );
        let mut raw = dm(None);
        raw.table = Some("0 8 zero".into());
        assert!(
            dm_commands(&raw)
                .unwrap()
                .0
                .contains("--table \"0 8 zero\"")
        );
        assert!(
            dm_commands(&dm(Some("mirror")))
                .unwrap_err()
                .to_string()
                .contains("unknown target 'mirror'")
        );
        assert!(dm_commands(&dm(None)).is_err());
    }
}
