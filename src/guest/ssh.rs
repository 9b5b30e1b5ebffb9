//! One russh session per boot, reused for every command: a fresh
//! connection costs about 1.1 s under TCG, a command on a live session 0.08 s.

use anyhow::{Context, Result, bail};
use russh::keys::{PrivateKeyWithHashAlg, PublicKey, PublicKeyOrCertificate};
use russh::{ChannelMsg, client};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one command did in the guest.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    /// None when the command died of a signal.
    pub status: Option<u32>,
    pub signal: Option<String>,
    pub secs: f64,
}

impl Output {
    pub fn ok(&self) -> bool {
        self.status == Some(0)
    }

    /// Turn a failed command into an error that shows what it said.
    pub fn check(self, what: &str) -> Result<Output> {
        if self.ok() {
            return Ok(self);
        }
        let how = match (&self.status, &self.signal) {
            (Some(s), _) => format!("exit status {s}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "no exit status".into(),
        };
        bail!(
            "{what} failed in the guest ({how}): {}{}",
            self.stderr.trim(),
            if self.stderr.trim().is_empty() {
                self.stdout.trim()
            } else {
                ""
            }
        )
    }
}

struct Pin {
    expected: PublicKey,
    /// The key a refused guest presented, for the error message.
    seen: Arc<Mutex<Option<String>>>,
}

impl client::Handler for Pin {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let presented = match key {
            PublicKeyOrCertificate::PublicKey { key, .. } => key.clone(),
            PublicKeyOrCertificate::Certificate(c) => PublicKey::from(c.public_key().clone()),
        };
        let ok = presented.key_data() == self.expected.key_data();
        if !ok {
            *self.seen.lock().unwrap() = Some(presented.to_openssh().unwrap_or_default());
        }
        Ok(ok)
    }
}

const KEEPALIVE_SECS: u64 = 5;
const KEEPALIVE_MAX: usize = 4;

pub struct Session {
    handle: client::Handle<Pin>,
    /// Opened at the first script; gone again if a script ends it.
    shell: tokio::sync::Mutex<Option<super::shell::Shell>>,
}

/// Why a connection attempt failed: worth retrying, or final.
pub enum ConnectError {
    NotYet(anyhow::Error),
    Refused(anyhow::Error),
}

impl Session {
    /// One attempt to connect and authenticate as root.
    pub async fn connect(port: u16, keys: &super::keys::Keys) -> Result<Session, ConnectError> {
        let config = Arc::new(client::Config {
            inactivity_timeout: None,
            // A guest on this host that misses 4 keepalives 5 s apart
            // is gone (network down, hung): the cell fails in about 25 s
            // as a lost connection, not at the cell timeout.
            keepalive_interval: Some(Duration::from_secs(KEEPALIVE_SECS)),
            keepalive_max: KEEPALIVE_MAX,
            ..Default::default()
        });
        let seen = Arc::new(Mutex::new(None));
        let pin = Pin {
            expected: keys.host_public().clone(),
            seen: seen.clone(),
        };
        let connect = client::connect(config, ("127.0.0.1", port), pin);
        let mut handle = match tokio::time::timeout(Duration::from_secs(20), connect).await {
            Err(_) => {
                return Err(ConnectError::NotYet(anyhow::anyhow!(
                    "SSH handshake timed out"
                )));
            }
            Ok(Err(e)) => {
                if let Some(k) = seen.lock().unwrap().take() {
                    return Err(ConnectError::Refused(anyhow::anyhow!(
                        "the guest presented host key {k}, not the pinned key {}; refusing to talk to it",
                        keys.host_public().to_openssh().unwrap_or_default()
                    )));
                }
                return Err(ConnectError::NotYet(
                    anyhow::Error::new(e).context("SSH connect"),
                ));
            }
            Ok(Ok(h)) => h,
        };
        let key = PrivateKeyWithHashAlg::new(Arc::new(keys.client.clone()), None);
        let auth = handle
            .authenticate_publickey("root", key)
            .await
            .map_err(|e| ConnectError::NotYet(e.into()))?;
        if !auth.success() {
            return Err(ConnectError::Refused(anyhow::anyhow!(
                "the guest refused lab's client key for root"
            )));
        }
        Ok(Session {
            handle,
            shell: tokio::sync::Mutex::new(None),
        })
    }

    /// Run a script (the boot probe, a cell) in the boot's long-lived
    /// guest shell (`shell`).
    pub async fn script(&self, script: &str) -> Result<Output> {
        let mut slot = self.shell.lock().await;
        if slot.as_ref().is_none_or(|s| s.busy) {
            let ch = self
                .handle
                .channel_open_session()
                .await
                .context("opening an SSH channel")?;
            ch.exec(true, "exec sh").await.context("SSH exec")?;
            *slot = Some(super::shell::Shell::new(ch, crate::util::random_token()));
        }
        let shell = slot.as_mut().expect("opened above");
        let out = shell.run(script).await;
        if out.is_err() {
            // The next script gets a new shell, or the same error if the
            // connection is gone.
            *slot = None;
            if let Some(e) = self.lost("a guest script") {
                return Err(e);
            }
        }
        out
    }

    /// The error for a connection that keepalives found dead, if it is.
    fn lost(&self, running: &str) -> Option<anyhow::Error> {
        self.handle.is_closed().then(|| {
            anyhow::anyhow!(
                "lost the connection to the guest: it answered no SSH keepalive for {} s while running {running}",
                KEEPALIVE_SECS * (KEEPALIVE_MAX as u64 + 1),
            )
        })
    }

    /// Run a shell command and collect everything it says.
    pub async fn exec(&self, command: &str) -> Result<Output> {
        self.exec_with_input(command, None).await
    }

    pub async fn exec_with_input(&self, command: &str, input: Option<&[u8]>) -> Result<Output> {
        let start = Instant::now();
        let mut ch = self
            .handle
            .channel_open_session()
            .await
            .context("opening an SSH channel")?;
        ch.exec(true, command).await.context("SSH exec")?;
        if let Some(data) = input {
            ch.data(data).await.context("sending input over SSH")?;
        }
        ch.eof().await.ok();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let (mut status, mut signal) = (None, None);
        while let Some(msg) = ch.wait().await {
            match msg {
                ChannelMsg::Data { data } => out.extend_from_slice(&data),
                ChannelMsg::ExtendedData { data, .. } => err.extend_from_slice(&data),
                ChannelMsg::ExitStatus { exit_status } => status = Some(exit_status),
                ChannelMsg::ExitSignal { signal_name, .. } => {
                    signal = Some(format!("{signal_name:?}"))
                }
                _ => {}
            }
        }
        if status.is_none()
            && signal.is_none()
            && let Some(e) = self.lost(&format!("`{}`", crate::util::prefix(command, 80)))
        {
            return Err(e);
        }
        Ok(Output {
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr: String::from_utf8_lossy(&err).into_owned(),
            status,
            signal,
            secs: start.elapsed().as_secs_f64(),
        })
    }

    /// Copy bytes into a guest file.
    pub async fn upload(&self, path: &str, data: &[u8], mode: u32) -> Result<()> {
        let q = crate::util::shell_quote(path);
        self.exec_with_input(&format!("cat > {q} && chmod {mode:o} {q}"), Some(data))
            .await?
            .check(&format!("writing {path}"))?;
        Ok(())
    }

    /// Copy a guest file out.
    pub async fn download(&self, path: &str) -> Result<Vec<u8>> {
        let o = self
            .exec(&format!("base64 {}", crate::util::shell_quote(path)))
            .await?
            .check(&format!("reading {path}"))?;
        use base64::Engine;
        let clean: String = o.stdout.split_whitespace().collect();
        Ok(base64::engine::general_purpose::STANDARD.decode(clean)?)
    }

    pub async fn close(self) {
        let _ = self
            .handle
            .disconnect(russh::Disconnect::ByApplication, "", "en")
            .await;
    }
}
