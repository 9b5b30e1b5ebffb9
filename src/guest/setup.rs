//! A cell's setup steps in the guest, and the teardown that undoes them
//! so the next cell on the same boot starts clean.

use super::knob::{self, Knob};
use super::ssh::Session;
use crate::matrix::DmTarget;
use crate::matrix::SetupStep;
use crate::matrix::schema::{CgroupDef, DmDef};
pub use crate::record::guest::StepRecord;
use anyhow::{Result, bail};

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
/// A table's size is its lower device's (`blockdev --getsz`) unless the
/// matrix gives `sectors`. Every value is shell-quoted; a raw table is
/// passed as written, with no shell expansion.
pub fn dm_commands(d: &DmDef) -> Result<(String, String)> {
    let name = &d.name;
    let body = DmTarget::from_def(d)
        .map_err(|e| anyhow::anyhow!("dm {name}: {e}"))?
        .table();
    let (qn, node) = (q(name), q(&format!("/dev/mapper/{name}")));
    let mut size = String::new();
    let table = match (&d.table, &d.sectors, &d.device) {
        (Some(_), _, _) => q(&body),
        (None, Some(s), _) => q(&format!("0 {s} {body}")),
        (None, None, Some(dev)) => {
            size = sectors_of(dev);
            format!("\"0 $lab_sz\"{}", q(&format!(" {body}")))
        }
        (None, None, None) => q(&format!("0 2097152 {body}")),
    };
    // With DM_DISABLE_UDEV=1 dmsetup makes the node itself; `mknodes`
    // (one more dmsetup start, 50 ms under TCG) only if it did not.
    let create = format!(
        "export DM_DISABLE_UDEV=1; {size}dmsetup create {qn} --table {table} && {{ test -b {node} || dmsetup mknodes {qn}; }} && test -b {node}"
    );
    Ok((
        create,
        format!("export DM_DISABLE_UDEV=1; dmsetup remove {qn}"),
    ))
}

/// Shell that sets `lab_sz` to a device's size in 512-byte sectors, as
/// `blockdev --getsz` gives it: from sysfs with the shell's own `read`
/// where the device has a /sys/class/block entry (no program to start),
/// else from blockdev (a dm device's node is named after its dm-N).
fn sectors_of(dev: &str) -> String {
    let sys = dev
        .strip_prefix("/dev/")
        .filter(|n| !n.is_empty() && !n.contains('/'))
        .map(|n| {
            format!(
                "{{ read lab_sz <{}; }} 2>/dev/null || ",
                q(&format!("/sys/class/block/{n}/size"))
            )
        })
        .unwrap_or_default();
    format!("{sys}lab_sz=$(blockdev --getsz {}) || exit 1; ", q(dev))
}

/// The one quoting helper for commands built here.
fn q(s: &str) -> String {
    crate::util::shell_quote(s)
}

pub fn describe(step: &SetupStep) -> String {
    match step {
        SetupStep::Dm(d) => format!("dm {}", d.name),
        SetupStep::Knob(k) => format!("knob {}={}", k.path, k.value),
        SetupStep::ModuleParam(m) => format!("module param {}.{}={}", m.module, m.param, m.value),
        SetupStep::NullBlk(n) => format!("null_blk {}", n.name),
        SetupStep::Mkfs(m) => format!("mkfs.{} {}", m.fs, m.device),
        SetupStep::Mount(m) => format!("mount {} {}", m.device, m.dir),
        SetupStep::Shell(s) => format!("shell {}", s.run),
        SetupStep::Cgroup(c) => format!("cgroup {} on {}", c.name, c.device),
    }
}

/// The commands that make a cgroup v2 group with its `io.max` limits on
/// one device, and remove it. cgroup2 is mounted at its usual place if
/// nothing is there, the io controller is turned on for the root's
/// children, and the limits are read back from `io.max`: a kernel that
/// ignores or rewrites a limit fails the step, naming what it read.
/// The device's number comes from its node, so a /dev/mapper name works.
pub fn cgroup_commands(c: &CgroupDef) -> Result<(String, String)> {
    use crate::matrix::cgroup::ROOT;
    let limits = c.limits().map_err(|e| anyhow::anyhow!(e))?;
    let want: Vec<String> = limits.iter().map(|(k, v)| format!("{k}={v}")).collect();
    // io.max lists a device only while one of its limits is not `max`.
    let all_max = limits.iter().all(|(_, v)| v == "max");
    let dir = q(&format!("{ROOT}/{}", c.name));
    let root = q(ROOT);
    // Once the group exists, a failure removes it again: the step's undo
    // runs only for a step that succeeded.
    let make = format!(
        "grep -q \"^[^ ]* {ROOT} cgroup2 \" /proc/mounts || mount -t cgroup2 none {root} || exit 1; \
         grep -qw io {root}/cgroup.controllers || {{ echo 'cgroup2 has no io controller: the kernel needs CONFIG_BLK_CGROUP' >&2; exit 1; }}; \
         echo +io > {root}/cgroup.subtree_control && mkdir {dir} || exit 1; \
         lab_fail() {{ echo \"$1\" >&2; rmdir {dir}; exit 1; }}; \
         lab_mm=$(stat -L -c %t:%T {dev}) || lab_fail 'no device number for {dev_text}'; \
         lab_dev=$((0x${{lab_mm%:*}})):$((0x${{lab_mm#*:}})); \
         echo \"$lab_dev {want}\" > {dir}/io.max || lab_fail 'io.max refused the limits'; \
         lab_got=$(grep \"^$lab_dev \" {dir}/io.max); \
         if [ -z \"$lab_got\" ]; then [ {all_max} = true ] || lab_fail \"io.max reads back no line for $lab_dev\"; \
         else for lab_kv in {want}; do case \" $lab_got \" in *\" $lab_kv \"*) ;; \
         *) lab_fail \"io.max reads back '$lab_got', not $lab_kv\";; esac; done; fi",
        dev = q(&c.device),
        dev_text = c.device.replace('\'', ""),
        want = want.join(" "),
    );
    // fio's processes have exited when teardown runs; a moment's wait
    // covers a child the kernel has not reaped yet.
    let remove = format!("rmdir {dir} 2>/dev/null || {{ sleep 0.5; rmdir {dir}; }}");
    Ok((make, remove))
}

/// The workload's command line, run in the cell's cgroup if its setup
/// makes one: a shell puts itself in the group, then becomes a shell
/// running the command as written, so every process the workload starts
/// is in the group.
pub fn in_cgroup(steps: &[SetupStep], cmd: String) -> String {
    match crate::matrix::cgroup::of_cell(steps) {
        Some(c) => {
            let procs = q(&format!(
                "{}/{}/cgroup.procs",
                crate::matrix::cgroup::ROOT,
                c.name
            ));
            format!(
                "sh -c {} lab {}",
                q(&format!("echo $$ > {procs} && exec sh -c \"$1\"")),
                q(&cmd)
            )
        }
        None => cmd,
    }
}

/// `mkfs.<fs> [-f] <options…> <device>`; each option word is quoted.
pub fn mkfs_command(m: &crate::matrix::schema::MkfsDef) -> String {
    let mut a = vec![q(&format!("mkfs.{}", m.fs))];
    if m.fs == "xfs" {
        a.push("-f".into());
    }
    a.extend(m.options.split_whitespace().map(q));
    a.push(q(&m.device));
    a.join(" ")
}

/// The mount command and the umount that undoes it.
pub fn mount_commands(m: &crate::matrix::schema::MountDef) -> (String, String) {
    let mut a = vec!["mount".to_string()];
    if let Some(f) = &m.fs {
        a.extend(["-t".into(), q(f)]);
    }
    if !m.options.is_empty() {
        a.extend(["-o".into(), q(&m.options)]);
    }
    a.extend([q(&m.device), q(&m.dir)]);
    (
        format!("mkdir -p {} && {}", q(&m.dir), a.join(" ")),
        format!("umount {}", q(&m.dir)),
    )
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
    if let Some(plan) = as_shell(step) {
        let (cmd, undo_cmd) = plan?;
        let secs = shell(s, &cmd, &what).await?;
        if let Some(u) = undo_cmd {
            undo.0.push(UndoAction::Shell(u));
        }
        return Ok(rec(cmd, secs, None));
    }
    Ok(match step {
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
        _ => unreachable!("every other step is a shell command (as_shell)"),
    })
}

/// A step that is one shell command, and the command that undoes it if
/// any. None for knobs and module parameters: lab reads their writes
/// back and decides from the kernel whether they took.
pub fn as_shell(step: &SetupStep) -> Option<Result<(String, Option<String>)>> {
    Some(Ok(match step {
        SetupStep::Dm(d) => match dm_commands(d) {
            Ok((create, remove)) => (create, Some(remove)),
            Err(e) => return Some(Err(e)),
        },
        SetupStep::NullBlk(n) => {
            let dir = format!("/sys/kernel/config/nullb/{}", n.name);
            let mut cmd = format!("mkdir {}", q(&dir));
            for (k, v) in &n.attrs {
                cmd.push_str(&format!(
                    " && echo {} > {}",
                    q(&v.to_string()),
                    q(&format!("{dir}/{k}"))
                ));
            }
            cmd.push_str(&format!(" && echo 1 > {}", q(&format!("{dir}/power"))));
            let undo = format!("echo 0 > {}; rmdir {}", q(&format!("{dir}/power")), q(&dir));
            (cmd, Some(undo))
        }
        SetupStep::Mkfs(m) => (mkfs_command(m), None),
        SetupStep::Mount(m) => {
            let (cmd, umount) = mount_commands(m);
            (cmd, Some(umount))
        }
        SetupStep::Shell(sh) => (sh.run.clone(), sh.undo.clone()),
        SetupStep::Cgroup(c) => match cgroup_commands(c) {
            Ok((make, remove)) => (make, Some(remove)),
            Err(e) => return Some(Err(e)),
        },
        SetupStep::Knob(_) | SetupStep::ModuleParam(_) => return None,
    }))
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
            ..Default::default()
        }
    }

    #[test]
    fn delay_tables_carry_separate_read_and_write_delays_and_make_the_node() {
        let (c, r) = dm_commands(&dm(Some("delay"))).unwrap();
        assert!(
            c.contains("{ read lab_sz </sys/class/block/nullb0/size; } 2>/dev/null || lab_sz=$(blockdev --getsz /dev/nullb0) || exit 1; ")
                && c.contains("--table \"0 $lab_sz\"' delay /dev/nullb0 0 1 /dev/nullb0 0 5'"),
            "{c}"
        );
        assert!(
            c.contains("DM_DISABLE_UDEV=1")
                && c.contains("{ test -b /dev/mapper/delayed || dmsetup mknodes delayed; }")
                && c.ends_with("&& test -b /dev/mapper/delayed"),
            "{c}"
        );
        assert!(r.ends_with("dmsetup remove delayed"));
    }

    #[test]
    fn a_device_size_is_read_from_sysfs_or_else_from_blockdev() {
        let sh = |snippet: String| {
            std::process::Command::new("sh")
                .arg("-c")
                .arg(snippet + "echo \"$lab_sz\"")
                .output()
                .unwrap()
        };
        // Any block device the host has: its sysfs size, no blockdev.
        let dev = std::fs::read_dir("/sys/class/block")
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok());
        if let Some(e) = dev {
            let name = e.file_name().to_string_lossy().into_owned();
            let want = std::fs::read_to_string(e.path().join("size")).unwrap();
            let out = sh(sectors_of(&format!("/dev/{name}")));
            assert_eq!(String::from_utf8_lossy(&out.stdout), want);
        }
        // No sysfs entry: blockdev is asked, and its failure fails the step.
        let s = sectors_of("/dev/mapper/lab-no-such");
        assert!(
            s.starts_with("lab_sz=$(blockdev --getsz /dev/mapper/lab-no-such)"),
            "{s}"
        );
        assert!(!sh(sectors_of("/dev/lab-no-such")).status.success());
    }

    #[test]
    fn delay_with_its_own_write_and_flush_devices() {
        let mut d = dm(Some("delay"));
        d.write_device = Some("/dev/mapper/zero".into());
        d.flush_device = Some("/dev/nullb1".into());
        d.flush_ms = Some(Scalar::Int(7));
        d.sectors = Some(Scalar::Int(2048));
        let (c, _) = dm_commands(&d).unwrap();
        assert!(
            c.contains(
                "--table '0 2048 delay /dev/nullb0 0 1 /dev/mapper/zero 0 5 /dev/nullb1 0 7'"
            ),
            "{c}"
        );
        assert!(!c.contains("blockdev"), "{c}");
    }

    #[test]
    fn zero_error_flakey_linear_raw_and_bad_tables() {
        let mut z = dm(Some("zero"));
        z.device = None;
        assert!(
            dm_commands(&z)
                .unwrap()
                .0
                .contains("--table '0 2097152 zero'")
        );
        let mut e = dm(Some("error"));
        e.sectors = Some(Scalar::Int(8));
        assert!(dm_commands(&e).unwrap().0.contains("--table '0 8 error'"));
        let mut f = dm(Some("flakey"));
        f.up_s = Some(Scalar::Int(5));
        f.down_s = Some(Scalar::Int(1));
        assert!(
            dm_commands(&f)
                .unwrap()
                .0
                .contains("' flakey /dev/nullb0 0 5 1'")
        );
        assert!(
            dm_commands(&dm(Some("linear")))
                .unwrap()
                .0
                .contains("' linear /dev/nullb0 0'")
        );
        let mut raw = dm(None);
        raw.table = Some("0 8 zero".into());
        assert!(dm_commands(&raw).unwrap().0.contains("--table '0 8 zero'"));
        assert!(
            dm_commands(&dm(Some("mirror")))
                .unwrap_err()
                .to_string()
                .contains("unknown target 'mirror'")
        );
        assert!(dm_commands(&dm(None)).is_err());
    }

    #[test]
    fn names_and_arguments_are_quoted() {
        let mut d = dm(Some("linear"));
        d.name = "a b;reboot".into();
        let (c, r) = dm_commands(&d).unwrap();
        assert!(c.contains("dmsetup create 'a b;reboot' --table"), "{c}");
        assert!(c.contains("test -b '/dev/mapper/a b;reboot'"), "{c}");
        assert!(r.ends_with("dmsetup remove 'a b;reboot'"), "{r}");
        let m = crate::matrix::schema::MkfsDef {
            fs: "xfs".into(),
            device: "/dev/mapper/d".into(),
            options: "-m crc=1 -L it's".into(),
        };
        assert_eq!(
            mkfs_command(&m),
            "mkfs.xfs -f -m crc=1 -L 'it'\\''s' /dev/mapper/d"
        );
        let mt = crate::matrix::schema::MountDef {
            device: "/dev/mapper/d".into(),
            dir: "/mnt/x y".into(),
            fs: Some("xfs".into()),
            options: "noatime,logbsize=256k".into(),
        };
        let (c, u) = mount_commands(&mt);
        assert_eq!(
            c,
            "mkdir -p '/mnt/x y' && mount -t xfs -o noatime,logbsize=256k /dev/mapper/d '/mnt/x y'"
        );
        assert_eq!(u, "umount '/mnt/x y'");
    }

    fn cgroup(rbps: &str) -> crate::matrix::schema::CgroupDef {
        crate::matrix::schema::CgroupDef {
            name: "lab".into(),
            device: "/dev/mapper/a b".into(),
            rbps: Some(Scalar::Str(rbps.into())),
            wbps: None,
            riops: None,
            wiops: Some(Scalar::Int(100)),
        }
    }

    /// The cgroup step's commands are one shell each (checked by `sh -n`),
    /// with the limits as the kernel takes them and the device quoted;
    /// the workload's command runs, as written, under a shell that moves
    /// itself into the group.
    #[test]
    fn a_cgroup_step_is_two_shell_commands_and_wraps_the_workload() {
        let (make, remove) = cgroup_commands(&cgroup("10MB/s")).unwrap();
        for c in [&make, &remove] {
            let ok = std::process::Command::new("sh")
                .args(["-n", "-c", c])
                .status()
                .unwrap();
            assert!(ok.success(), "{c}");
        }
        assert!(make.contains("rbps=10000000 wiops=100"), "{make}");
        assert!(make.contains("'/dev/mapper/a b'"), "{make}");
        assert!(remove.starts_with("rmdir /sys/fs/cgroup/lab"), "{remove}");
        assert!(cgroup_commands(&cgroup("fast")).is_err());

        let steps = [SetupStep::Cgroup(cgroup("max"))];
        let w = in_cgroup(&steps, "fio --name='a b' --rw=read".into());
        assert_eq!(
            w,
            "sh -c 'echo $$ > /sys/fs/cgroup/lab/cgroup.procs && exec sh -c \"$1\"' lab 'fio --name='\\''a b'\\'' --rw=read'"
        );
        assert_eq!(in_cgroup(&[], "fio".into()), "fio");
    }
}
