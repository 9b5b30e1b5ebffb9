//! The serial console: written to a file by QEMU, read here for the
//! signs that end a boot early (panic, oops) or matter for timing
//! (clocksource changes).

pub use crate::record::guest::is_clock_trouble;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub enum Trouble {
    Panic(String),
    Oops(String),
}

impl Trouble {
    pub fn line(&self) -> &str {
        match self {
            Trouble::Panic(l) | Trouble::Oops(l) => l,
        }
    }
}

/// What the console has shown so far.
#[derive(Debug, Default)]
pub struct Console {
    path: PathBuf,
    offset: u64,
    partial: String,
    pub trouble: Option<Trouble>,
    pub ready: bool,
    /// Lines about clocksources, e.g. "Marking TSC unstable".
    pub clock_lines: Vec<String>,
}

const PANIC: &[&str] = &["Kernel panic - not syncing"];
const OOPS: &[&str] = &[
    "Oops:",
    "BUG: ",
    "general protection fault",
    "Unable to handle kernel",
    "Internal error:",
    "WARNING: CPU:",
];

impl Console {
    pub fn new(path: &Path) -> Console {
        Console {
            path: path.to_path_buf(),
            ..Default::default()
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read what was appended since the last call.
    pub fn scan(&mut self) {
        let Ok(mut f) = std::fs::File::open(&self.path) else {
            return;
        };
        if f.seek(SeekFrom::Start(self.offset)).is_err() {
            return;
        }
        let mut buf = Vec::new();
        if f.read_to_end(&mut buf).is_err() {
            return;
        }
        self.offset += buf.len() as u64;
        self.partial.push_str(&String::from_utf8_lossy(&buf));
        let mut rest = String::new();
        let text = std::mem::take(&mut self.partial);
        let mut lines: Vec<&str> = text.split('\n').collect();
        if !text.ends_with('\n') {
            rest = lines.pop().unwrap_or("").to_string();
        }
        for l in lines {
            self.line(l.trim_end_matches('\r'));
        }
        self.partial = rest;
    }

    fn line(&mut self, l: &str) {
        if l.contains("lab-guest-ready") {
            self.ready = true;
        }
        if l.contains("clocksource") || l.contains("TSC") || l.contains("tsc:") {
            self.clock_lines.push(l.trim().to_string());
        }
        if self.trouble.is_none() {
            if PANIC.iter().any(|p| l.contains(p)) {
                self.trouble = Some(Trouble::Panic(l.trim().to_string()));
            } else if OOPS.iter().any(|p| l.contains(p)) {
                self.trouble = Some(Trouble::Oops(l.trim().to_string()));
            }
        }
    }

    /// The last `n` lines, for error messages.
    pub fn tail(&self, n: usize) -> String {
        crate::util::tail_lines(&self.path, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn finds_panic_readiness_and_clock_lines_across_partial_writes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("console.log");
        let mut f = std::fs::File::create(&p).unwrap();
        let mut c = Console::new(&p);
        write!(
            f,
            "[    0.5] clocksource: Switched to clocksource tsc\n[ 1.0] lab-guest-re"
        )
        .unwrap();
        c.scan();
        assert!(!c.ready);
        assert_eq!(c.clock_lines.len(), 1);
        writeln!(f, "ady").unwrap();
        c.scan();
        assert!(c.ready);
        writeln!(
            f,
            "[ 2.0] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000100"
        )
        .unwrap();
        c.scan();
        assert!(
            matches!(&c.trouble, Some(Trouble::Panic(l)) if l.contains("Attempted to kill init"))
        );
        assert!(c.tail(1).contains("Kernel panic"));
    }

    #[test]
    fn only_clock_trouble_is_trouble() {
        assert!(is_clock_trouble(
            "tsc: Marking TSC unstable due to clocksource watchdog"
        ));
        assert!(is_clock_trouble(
            "clocksource: Switched to clocksource refined-jiffies"
        ));
        assert!(!is_clock_trouble(
            "clocksource: Switched to clocksource tsc"
        ));
        assert!(!is_clock_trouble(
            "clocksource: hpet: mask: 0xffffffff max_cycles: 0xffffffff"
        ));
    }
}
