//! One shell kept open in the guest for a boot's scripts: its probe and
//! its cells.
//!
//! A command on a new channel costs about 80 ms under TCG: dropbear
//! forks, a shell starts, and the channel is opened and closed. A script
//! written to a shell that is already running costs one fork. Each
//! script runs in a subshell with stdin from /dev/null, so it can neither
//! change the shell nor read the scripts after it, and ends with a marker
//! on stdout (carrying its exit status) and one on stderr.

use super::ssh::Output;
use anyhow::{Result, bail};
use russh::client::Msg;
use russh::{Channel, ChannelMsg};
use std::time::Instant;

pub struct Shell {
    ch: Channel<Msg>,
    token: String,
    /// A script was sent and its end not read: its caller gave up (a
    /// timeout, Ctrl-C), and what the shell says next is not the next
    /// script's.
    pub busy: bool,
}

impl Shell {
    pub fn new(ch: Channel<Msg>, token: String) -> Shell {
        Shell {
            ch,
            token,
            busy: false,
        }
    }

    /// Run one script; its stdout, stderr and exit status. An error means
    /// the shell is gone (the guest died, or a script ended the shell).
    pub async fn run(&mut self, script: &str) -> Result<Output> {
        let start = Instant::now();
        self.busy = true;
        self.ch.data(wrap(script, &self.token).as_bytes()).await?;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        loop {
            if let Some((status, o, e)) = finished(&out, &err, &self.token) {
                self.busy = false;
                return Ok(Output {
                    stdout: String::from_utf8_lossy(o).into_owned(),
                    stderr: String::from_utf8_lossy(e).into_owned(),
                    status: Some(status),
                    signal: None,
                    secs: start.elapsed().as_secs_f64(),
                });
            }
            match self.ch.wait().await {
                Some(ChannelMsg::Data { data }) => out.extend_from_slice(&data),
                Some(ChannelMsg::ExtendedData { data, .. }) => err.extend_from_slice(&data),
                Some(ChannelMsg::Eof | ChannelMsg::Close) | None => bail!(
                    "the guest's shell ended during a script (output: {})",
                    crate::util::prefix(String::from_utf8_lossy(&out).trim(), 300)
                ),
                Some(ChannelMsg::ExitStatus { exit_status }) => {
                    bail!("the guest's shell exited with status {exit_status} during a script")
                }
                Some(_) => {}
            }
        }
    }
}

/// The script as the shell reads it: quoted and run by `eval` in a
/// subshell (a syntax error fails the script, not the shell), stdin from
/// /dev/null, then the two end markers.
pub fn wrap(script: &str, token: &str) -> String {
    format!(
        "( eval {} ) </dev/null\nprintf '\\n@@%s-done %d\\n' {token} $?\nprintf '\\n@@%s-done\\n' {token} >&2\n",
        crate::util::shell_quote(script)
    )
}

/// The exit status, stdout and stderr once both markers have come.
fn finished<'a>(out: &'a [u8], err: &'a [u8], token: &str) -> Option<(u32, &'a [u8], &'a [u8])> {
    // On bytes: a command's output need not be UTF-8. The marker is the
    // last line, so only the tail is searched (this runs at every chunk).
    let mark = format!("\n@@{token}-done ");
    let from = out.len().saturating_sub(mark.len() + 12);
    let at = from
        + out[from..]
            .windows(mark.len())
            .rposition(|w| w == mark.as_bytes())?;
    let tail = out[at + mark.len()..].strip_suffix(b"\n")?;
    let status = std::str::from_utf8(tail).ok()?.parse().ok()?;
    let emark = format!("\n@@{token}-done\n");
    let e = err.strip_suffix(emark.as_bytes())?;
    Some((status, &out[..at], e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several scripts through one host shell, as the guest's reads them.
    #[test]
    fn scripts_run_one_after_another_in_one_shell() {
        let t = "0123abcd";
        let input = [
            "x=1; echo one; echo warn >&2; exit 3",
            // Reads stdin: must not eat the next script.
            "cat; echo \"x=$x\"",
            "if then fi",
            "printf 'no newline'",
        ]
        .map(|s| wrap(s, t))
        .concat();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "printf %s {} | sh",
                crate::util::shell_quote(&input)
            ))
            .output()
            .unwrap();
        // Split at the markers as `run` would, one script at a time.
        let (mut o, mut e) = (&out.stdout[..], &out.stderr[..]);
        let (om, em) = (format!("\n@@{t}-done "), format!("\n@@{t}-done\n"));
        let mut outs = vec![];
        while !o.is_empty() {
            let at = |b: &[u8], m: &str| b.windows(m.len()).position(|w| w == m.as_bytes());
            let oend = at(o, &om).unwrap() + om.len();
            let oend = oend + o[oend..].iter().position(|&c| c == b'\n').unwrap() + 1;
            let eend = at(e, &em).unwrap() + em.len();
            let (status, so, se) = finished(&o[..oend], &e[..eend], t).unwrap();
            outs.push((
                status,
                String::from_utf8_lossy(so).into_owned(),
                String::from_utf8_lossy(se).into_owned(),
            ));
            (o, e) = (&o[oend..], &e[eend..]);
        }
        assert_eq!(outs.len(), 4, "{outs:?}");
        assert_eq!(outs[0], (3, "one\n".into(), "warn\n".into()));
        assert_eq!((outs[1].0, outs[1].1.as_str()), (0, "x=\n"));
        assert_eq!(outs[2].0, 2, "{:?}", outs[2]);
        assert_eq!((outs[3].0, outs[3].1.as_str()), (0, "no newline"));
    }

    #[test]
    fn output_is_not_finished_until_both_markers_came() {
        let t = "tok";
        assert!(finished(b"x\n@@tok-done 0\n", b"", t).is_none());
        assert!(finished(b"x\n@@tok-done 0", b"\n@@tok-done\n", t).is_none());
        assert!(finished(b"@@tok-done 0\n", b"\n@@tok-done\n", t).is_none());
        let (s, o, e) = finished(b"x\n\n@@tok-done 7\n", b"w\n@@tok-done\n", t).unwrap();
        assert_eq!((s, o, e), (7, &b"x\n"[..], &b"w"[..]));
        // Output that is not UTF-8 is cut at the same byte.
        let (_, o, _) = finished(b"\xff\xfe\n@@tok-done 0\n", b"\n@@tok-done\n", t).unwrap();
        assert_eq!(o, b"\xff\xfe");
        // A long output: the marker is found at its end.
        let mut long = vec![b'x'; 100_000];
        long.extend_from_slice(b"\n@@tok-done 255\n");
        let (s, o, _) = finished(&long, b"\n@@tok-done\n", t).unwrap();
        assert_eq!((s, o.len()), (255, 100_000));
    }
}
