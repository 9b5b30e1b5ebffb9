//! What kind of failure an error is, so the exit code can tell CI whether
//! the user's input was wrong (3) or the tool or host failed (4).
//!
//! Errors stay `anyhow::Error` everywhere; the few places that know the
//! kind wrap them with [`input`] or [`environment`]. [`classify`] walks
//! the chain: the outermost explicit kind wins, parse errors of user
//! files count as input, and anything unknown is internal/environment.

use std::fmt;

/// Exit codes, the same in every command, the README and `--help`.
pub mod exit {
    /// Everything fine.
    pub const OK: i32 = 0;
    /// A regression or an unmet claim.
    pub const REGRESSION: i32 = 1;
    /// An incomplete run (missing or failed cells).
    pub const INCOMPLETE: i32 = 2;
    /// A usage or input error: bad arguments, a bad matrix, a missing file.
    pub const INPUT: i32 = 3;
    /// An internal or environment error: a missing tool, QEMU failing.
    pub const ENVIRONMENT: i32 = 4;
    /// Stopped by SIGINT or SIGTERM; finished work is kept.
    pub const INTERRUPTED: i32 = 130;
}

/// The help text's summary of the exit codes.
pub const EXIT_CODES_HELP: &str = "Exit codes: 0 fine, 1 regression or unmet claim, 2 incomplete run, \
3 usage or input error, 4 internal or environment error, 130 interrupted.";

/// The error a long loop returns when SIGINT or SIGTERM arrived
/// (`interrupt::check`).
#[derive(Debug)]
pub struct Interrupted;

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("interrupted")
    }
}
impl std::error::Error for Interrupted {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The user's arguments or files are wrong; fixing them fixes it.
    Input,
    /// The host lacks something, or a tool lab runs failed.
    Environment,
    /// Stopped by a signal.
    Interrupted,
}

impl Kind {
    pub fn exit_code(self) -> i32 {
        match self {
            Kind::Input => exit::INPUT,
            Kind::Environment => exit::ENVIRONMENT,
            Kind::Interrupted => exit::INTERRUPTED,
        }
    }
}

/// A marker in an error chain that says what kind of failure it is.
#[derive(Debug)]
pub struct LabError {
    pub kind: Kind,
    msg: String,
}

impl fmt::Display for LabError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for LabError {}

/// An input error with a message.
pub fn input_error(msg: impl fmt::Display) -> anyhow::Error {
    anyhow::Error::new(LabError {
        kind: Kind::Input,
        msg: msg.to_string(),
    })
}

/// Mark an error as the user's input being wrong. The message is kept.
pub fn input(e: anyhow::Error) -> anyhow::Error {
    mark(e, Kind::Input)
}

/// Mark an error as the host or a tool failing.
pub fn environment(e: anyhow::Error) -> anyhow::Error {
    mark(e, Kind::Environment)
}

fn mark(e: anyhow::Error, kind: Kind) -> anyhow::Error {
    if explicit_kind(&e).is_some() {
        return e;
    }
    // The message goes on as the outermost text; the chain below it stays
    // for `{:#}` printing, without repeating the message.
    let msg = format!("{e:#}");
    anyhow::Error::new(LabError { kind, msg })
}

fn explicit_kind(e: &anyhow::Error) -> Option<Kind> {
    for cause in e.chain() {
        if cause.is::<Interrupted>() {
            return Some(Kind::Interrupted);
        }
        if let Some(l) = cause.downcast_ref::<LabError>() {
            return Some(l.kind);
        }
    }
    None
}

/// The kind of an error: an explicit mark, else a guess from its causes.
pub fn classify(e: &anyhow::Error) -> Kind {
    if let Some(k) = explicit_kind(e) {
        return k;
    }
    for cause in e.chain() {
        if cause.is::<serde_saphyr::Error>()
            || cause.is::<serde_json::Error>()
            || cause.is::<std::num::ParseIntError>()
            || cause.is::<std::num::ParseFloatError>()
        {
            return Kind::Input;
        }
    }
    Kind::Environment
}

/// True when the error is a write to a closed pipe (`lab plan | head`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn explicit_marks_win_over_guesses() {
        let e = input(anyhow::anyhow!("m.yaml:3:1: bad"));
        assert_eq!(classify(&e), Kind::Input);
        assert_eq!(e.to_string(), "m.yaml:3:1: bad");
        // The outermost mark is kept when a second is added.
        let e = environment(e);
        assert_eq!(classify(&e), Kind::Input);
        let e = Err::<(), _>(input_error("x"))
            .context("loading")
            .unwrap_err();
        assert_eq!(classify(&e), Kind::Input);
    }

    #[test]
    fn parse_errors_are_input_and_io_is_environment() {
        let j = serde_json::from_str::<u32>("x").unwrap_err();
        let e = anyhow::Error::new(j).context("parsing cell.json");
        assert_eq!(classify(&e), Kind::Input);
        let io = std::io::Error::other("disk");
        assert_eq!(classify(&anyhow::Error::new(io)), Kind::Environment);
        assert_eq!(Kind::Input.exit_code(), 3);
        assert_eq!(Kind::Environment.exit_code(), 4);
    }

    #[test]
    fn broken_pipe_is_found_in_the_chain() {
        let io = std::io::Error::from(std::io::ErrorKind::BrokenPipe);
        let e = anyhow::Error::new(io).context("printing the plan");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}
