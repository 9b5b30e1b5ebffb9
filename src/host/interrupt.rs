//! Ctrl-C and SIGTERM: stop cleanly, lose nothing, leave no process.
//!
//! The handler only sets a flag. A watcher thread forwards the signal to
//! the process groups of registered children (make, QEMU), which run in
//! groups of their own so that a SIGTERM sent to lab alone still reaches
//! them. Work loops check `interrupted()` between steps.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

static FLAG: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static INSTALLED: std::sync::Once = std::sync::Once::new();

extern "C" fn on_signal(sig: i32) {
    if FLAG.swap(true, Ordering::SeqCst) && sig == libc::SIGINT {
        // A second Ctrl-C: the user wants out now.
        unsafe { libc::_exit(130) };
    }
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Install the handlers once per process.
pub fn install() {
    INSTALLED.call_once(|| {
        use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
        let act = SigAction::new(
            SigHandler::Handler(on_signal),
            SaFlags::SA_RESTART,
            SigSet::empty(),
        );
        for s in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            unsafe { sigaction(s, &act) }.expect("installing a signal handler");
        }
        std::thread::spawn(forwarder);
    });
}

fn forwarder() {
    loop {
        std::thread::sleep(Duration::from_millis(50));
        if FLAG.load(Ordering::SeqCst) {
            let sig = SIGNAL.load(Ordering::SeqCst);
            for pgid in GROUPS.lock().unwrap().iter() {
                unsafe { libc::kill(-pgid, sig) };
            }
            // Forward once; children that ignore it are killed by their owners.
            GROUPS.lock().unwrap().clear();
            while GROUPS.lock().unwrap().is_empty() {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
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

#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}
impl std::error::Error for Interrupted {}

/// Keeps a child's process group registered for signal forwarding.
pub struct GroupGuard(i32);

pub fn register_group(pgid: i32) -> GroupGuard {
    GROUPS.lock().unwrap().push(pgid);
    if interrupted() {
        unsafe { libc::kill(-pgid, SIGNAL.load(Ordering::SeqCst).max(libc::SIGTERM)) };
    }
    GroupGuard(pgid)
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        GROUPS.lock().unwrap().retain(|g| *g != self.0);
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
