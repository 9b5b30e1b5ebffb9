//! `make` in a build root: the command lab runs, its log, its progress,
//! and the time line of a build (`Phases`).

use crate::events::Events;
use crate::matrix::Arch;
pub use crate::record::kernel::Phases;
use anyhow::{Context, Result, bail};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// `make` in a build root, as lab runs it.
pub struct Make<'a> {
    pub tree: &'a Path,
    pub out: &'a Path,
    pub arch: Arch,
    pub cross: Option<&'static str>,
    pub jobs: usize,
}

impl Make<'_> {
    fn command(&self) -> Command {
        let mut c = Command::new("make");
        c.arg("-C")
            .arg(self.tree)
            .arg(format!("O={}", self.out.display()));
        c.arg(format!("ARCH={}", self.arch.kernel_arch()));
        if let Some(cc) = self.cross {
            c.arg(format!("CROSS_COMPILE={cc}"));
        }
        // The banner (`uname -v`, /proc/version) otherwise records who built
        // the kernel, where and when; fixed values make the same inputs give
        // the same image and build id.
        c.env("KBUILD_BUILD_USER", "lab")
            .env("KBUILD_BUILD_HOST", "lab")
            .env("KBUILD_BUILD_TIMESTAMP", "1970-01-01 00:00:00 UTC")
            .env("KBUILD_BUILD_VERSION", "1");
        c
    }

    /// A quick make target (configuration), its output into the log.
    pub fn quick(&self, target: &str) -> Result<()> {
        std::fs::create_dir_all(self.out)?;
        let log = self.out.join("lab-config.log");
        let mut c = self.command();
        c.arg(target);
        let out = c
            .output()
            .with_context(|| format!("running {}", crate::util::describe(&c)))?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        f.write_all(&out.stdout)?;
        f.write_all(&out.stderr)?;
        if !out.status.success() {
            bail!(
                "{} failed ({}):\n{}",
                crate::util::describe(&c),
                out.status,
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(15)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        Ok(())
    }

    /// The real build, streamed to lab-build.log with a live object count.
    /// Returns the objects built and the time line of the make.
    pub fn build(&self, events: &Events, id: &str, expected: Option<u64>) -> Result<(u64, Phases)> {
        let log_path = self.out.join("lab-build.log");
        let mut log = std::fs::File::create(&log_path)?;
        let mut c = self.command();
        c.arg(format!("-j{}", self.jobs))
            .arg(self.arch.image_target())
            .arg("vmlinux");
        c.stdout(Stdio::piped()).stderr(Stdio::piped());
        crate::interrupt::own_group(&mut c);
        writeln!(log, "$ {}", crate::util::describe(&c))?;
        let mut child = c
            .spawn()
            .with_context(|| format!("running {}", crate::util::describe(&c)))?;
        let _guard = crate::interrupt::register_group(child.id() as i32);
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let tx2 = tx.clone();
        let t1 = std::thread::spawn(move || {
            BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .for_each(|l| drop(tx2.send(l)))
        });
        let stdout = child.stdout.take().unwrap();
        let t2 = std::thread::spawn(move || {
            BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
                .for_each(|l| drop(tx.send(l)))
        });
        let mut objects = 0u64;
        let mut last_emit = Instant::now();
        let start = Instant::now();
        let mut marks = Marks::default();
        for line in rx {
            writeln!(log, "{line}")?;
            let t = line.trim_start();
            marks.see(t, start.elapsed().as_secs_f64());
            if ["CC ", "AS ", "LD ", "AR "]
                .iter()
                .any(|p| t.starts_with(p))
            {
                objects += 1;
                if last_emit.elapsed().as_millis() > 300 {
                    last_emit = Instant::now();
                    let what = t.split_whitespace().last().unwrap_or("");
                    match expected {
                        Some(n) => events.emit(crate::events::Event::Progress {
                            id: id.into(),
                            phase: format!("{} / ~{n}: {what}", objects),
                            done: None,
                        }),
                        None => events.phase(id, &format!("{objects} objects: {what}")),
                    }
                }
            }
        }
        let _ = (t1.join(), t2.join());
        let status = child.wait()?;
        log.flush()?;
        crate::interrupt::check()?;
        if !status.success() {
            let tail = crate::util::tail_lines(&log_path, 30);
            let hint = if tail.contains("No space left on device") {
                "\n(the disk is full)"
            } else {
                ""
            };
            bail!(
                "kernel build failed ({status}); the last lines of {}:\n{tail}{hint}",
                log_path.display()
            );
        }
        Ok((objects, marks.phases(start.elapsed().as_secs_f64())))
    }
}

/// The times of the kbuild lines that start each phase.
#[derive(Default)]
struct Marks {
    link: Option<f64>,
    image: Option<f64>,
}

impl Marks {
    fn see(&mut self, line: &str, at: f64) {
        let mut words = line.split_whitespace();
        let (Some(verb), Some(target)) = (words.next(), words.next()) else {
            return;
        };
        // `LD vmlinux.o` starts the link; what follows `SYSMAP
        // System.map` (the last step of vmlinux) is the boot image.
        if self.link.is_none() && verb == "LD" && target == "vmlinux.o" {
            self.link = Some(at);
        }
        if verb == "SYSMAP" && target == "System.map" {
            self.image = Some(at);
        }
    }

    fn phases(&self, end: f64) -> Phases {
        let link = self.link.unwrap_or(end);
        let image = self.image.unwrap_or(end).max(link);
        Phases {
            configure: 0.0,
            compile: link,
            link: image - link,
            image: end - image,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_split_at_the_vmlinux_link_and_the_system_map() {
        let mut m = Marks::default();
        for (line, at) in [
            ("CC      drivers/md/dm-delay.o", 3.0),
            ("LD      vmlinux.o", 5.0),
            ("LD      .tmp_vmlinux1", 6.0),
            ("SYSMAP  System.map", 9.5),
            ("LZ4     arch/x86/boot/compressed/vmlinux.bin.lz4", 10.0),
        ] {
            m.see(line, at);
        }
        let p = m.phases(11.0);
        assert_eq!((p.compile, p.link, p.image), (5.0, 4.5, 1.5));
        // Nothing relinked: it all counts as compile.
        let p = Marks::default().phases(4.0);
        assert_eq!((p.compile, p.link, p.image), (4.0, 0.0, 0.0));
    }
}
