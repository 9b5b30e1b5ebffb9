//! Ctrl-C and SIGTERM: stop cleanly, lose nothing, leave no process.
//!
//! The handler only sets a flag. A watcher thread forwards the signal to
//! the process groups of registered children (make, QEMU), which run in
//! groups of their own so that a SIGTERM sent to lab alone still reaches
//! them. Commands with children and finished work to keep (`run`,
//! `build`, `boot`) are [`Mode::Cooperative`]: their loops check
//! `interrupted()` between steps. Every other command is
//! [`Mode::Immediate`]: the watcher removes the temp files registered
//! with [`TempGuard`] and exits at once, so `lab plan` or
//! `lab claims extract` stop within a fraction of a second and leave no
//! half-written file (outputs are written to a temp name, then renamed).

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static FLAG: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static INSTALLED: std::sync::Once = std::sync::Once::new();
static IMMEDIATE: AtomicBool = AtomicBool::new(false);
static TEMPS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// How a command reacts to SIGINT and SIGTERM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Work loops poll `interrupted()` and wind down themselves.
    Cooperative,
    /// Remove registered temp files and exit with 130 at once.
    Immediate,
}

/// What a stopped command prints on stderr.
pub const MESSAGE: &str = "interrupted: everything finished so far is kept; run the same command again (lab run: --resume) to continue";

extern "C" fn on_signal(sig: i32) {
    if FLAG.swap(true, Ordering::SeqCst) && sig == libc::SIGINT {
        // A second Ctrl-C: the user wants out now.
        unsafe { libc::_exit(130) };
    }
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Install the handlers once per process.
pub fn install(mode: Mode) {
    IMMEDIATE.store(mode == Mode::Immediate, Ordering::SeqCst);
    INSTALLED.call_once(|| {
        use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
        let act = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            // Cannot fail for these signals; if it did, lab would only
            // lose its clean stop, so there is nothing to report.
            let _ = unsafe { sigaction(s, &act) };
        }
        std::thread::spawn(forwarder);
    });
}

fn groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|p| p.into_inner())
}

fn temps() -> std::sync::MutexGuard<'static, Vec<std::path::PathBuf>> {
    TEMPS.lock().unwrap_or_else(|p| p.into_inner())
}

fn forwarder() {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if FLAG.load(Ordering::SeqCst) {
            let sig = SIGNAL.load(Ordering::SeqCst);
            for pgid in groups().iter() {
                unsafe { libc::kill(-pgid, sig) };
            }
            if IMMEDIATE.load(Ordering::SeqCst) {
                exit_now();
            }
            // Forward once; children that ignore it are killed by their owners.
            groups().clear();
            while groups().is_empty() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Remove every registered temp path, say so, and leave with 130. The
/// lock is held to the end, so no rename races the removal.
fn exit_now() -> ! {
    let t = temps();
    for p in t.iter() {
        // Move it aside first: the main thread may still be writing into
        // it by its old name, and must not refill what is being removed.
        let mut aside = p.clone().into_os_string();
        aside.push(format!(".interrupted-{}", std::process::id()));
        let aside = std::path::PathBuf::from(aside);
        let p = if std::fs::rename(p, &aside).is_ok() {
            aside
        } else {
            p.clone()
        };
        for _ in 0..20 {
            let gone = if p.is_dir() {
                std::fs::remove_dir_all(&p).is_ok()
            } else {
                std::fs::remove_file(&p).is_ok() || !p.exists()
            };
            if gone || !p.exists() {
                break;
            }
        }
    }
    eprintln!("{MESSAGE}");
    unsafe { libc::_exit(crate::error::exit::INTERRUPTED) }
}

/// For `main` after an error: when the error came from an interrupt in
/// [`Mode::Immediate`], the watcher is removing temp files and will exit
/// with 130; wait for it rather than report the error the interrupt
/// caused. Returns at once otherwise.
pub fn settle() {
    if interrupted() && IMMEDIATE.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_secs(5));
    }
}

/// A temp file or directory that must not outlive an interrupted
/// command. Dropping the guard only forgets the path: the owner renames
/// or removes it on the normal path.
pub struct TempGuard(std::path::PathBuf);

/// Create a temp file or directory and register it in one step: an
/// interrupted exit waits for `make`, then removes what it made.
pub fn create_temp<T, E>(
    make: impl FnOnce() -> Result<T, E>,
    path: impl FnOnce(&T) -> std::path::PathBuf,
) -> Result<(T, TempGuard), E> {
    let mut t = temps();
    let v = make()?;
    let p = path(&v);
    t.push(p.clone());
    Ok((v, TempGuard(p)))
}

/// Register a temp path; register it before creating it, so that no
/// interrupt falls between the two.
pub fn temp_guard(path: &std::path::Path) -> TempGuard {
    temps().push(path.to_path_buf());
    TempGuard(path.to_path_buf())
}

impl TempGuard {
    /// Run `f` (a rename) while no interrupted exit can remove the path
    /// half-way: the exit waits for `f`, then finds nothing to remove.
    pub fn commit<T>(self, f: impl FnOnce() -> T) -> T {
        let mut t = temps();
        let r = f();
        t.retain(|p| *p != self.0);
        r
    }
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        temps().retain(|p| *p != self.0);
    }
}

pub fn interrupted() -> bool {
    FLAG.load(Ordering::SeqCst)
}

/// An error for work that stopped because the user asked.
pub fn check() -> anyhow::Result<()> {
    if interrupted() {
        anyhow::bail!(Interrupted);
    }
    Ok(())
}

/// Defined with the other error kinds, so that `error` need not import
/// this module (and the two do not import each other).
pub use crate::error::Interrupted;

/// Keeps a child's process group registered for signal forwarding.
pub struct GroupGuard(i32);

pub fn register_group(pgid: i32) -> GroupGuard {
    groups().push(pgid);
    if interrupted() {
        unsafe { libc::kill(-pgid, SIGNAL.load(Ordering::SeqCst).max(libc::SIGTERM)) };
    }
    GroupGuard(pgid)
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        groups().retain(|g| *g != self.0);
    }
}

/// Make a `Command` start its child in a new process group, and have the
/// kernel kill it if lab dies without cleaning up (SIGKILL, a crash).
pub fn own_group(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    unsafe {
        cmd.pre_exec(|| {
            libc::setpgid(0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
}
