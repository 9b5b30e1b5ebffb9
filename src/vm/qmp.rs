//! QMP through the `qapi` crate: status, powerdown, quit, and events.
//!
//! QMP replies and events share one stream, so a task keeps reading it
//! for as long as the VM lives; events are kept for the boot record.

use anyhow::{Context, Result};
use futures::StreamExt;
use qapi::futures::{QapiService, QmpStreamTokio};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::WriteHalf;
use tokio::net::UnixStream;

type Service = QapiService<QmpStreamTokio<WriteHalf<UnixStream>>>;

pub struct Qmp {
    service: Service,
    /// Event names with their arrival time, e.g. "SHUTDOWN", "RESET".
    pub events: Arc<Mutex<Vec<String>>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Qmp {
    /// Connect, retrying while QEMU creates the socket.
    pub async fn connect(socket: &Path, deadline: Duration) -> Result<Qmp> {
        let start = std::time::Instant::now();
        let stream = loop {
            match QmpStreamTokio::open_uds(socket).await {
                Ok(s) => break s,
                Err(e) if start.elapsed() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("connecting to QMP at {}", socket.display()));
                }
            }
        };
        let stream = stream
            .negotiate()
            .await
            .context("QMP capabilities negotiation")?;
        let (service, mut events) = stream.into_parts();
        let log = Arc::new(Mutex::new(Vec::new()));
        let log2 = log.clone();
        let reader = tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                match ev {
                    Ok(e) => log2.lock().unwrap().push(event_name(&e)),
                    // An event newer than the crate's schema ends the
                    // stream (qapi-rs issue 23); replies then stop too,
                    // and callers fall back to signals.
                    Err(e) => {
                        log2.lock().unwrap().push(format!("stream-error: {e}"));
                        break;
                    }
                }
            }
        });
        Ok(Qmp {
            service,
            events: log,
            reader,
        })
    }

    /// `query-status`: e.g. "running", "paused", "shutdown".
    pub async fn status(&self) -> Result<String> {
        let s = tokio::time::timeout(
            Duration::from_secs(5),
            self.service.execute(qapi::qmp::query_status {}),
        )
        .await
        .context("query-status timed out")??;
        Ok(serde_json::to_value(s.status)?
            .as_str()
            .unwrap_or("unknown")
            .to_string())
    }

    /// QEMU's version as `qemu --version` puts it: `7.2.22 (Debian
    /// 1:7.2+dfsg-7)`, the distribution's package in parentheses.
    pub async fn version(&self) -> Result<String> {
        let v = tokio::time::timeout(
            Duration::from_secs(5),
            self.service.execute(qapi::qmp::query_version {}),
        )
        .await
        .context("query-version timed out")??;
        Ok(version_string(
            [v.qemu.major, v.qemu.minor, v.qemu.micro],
            &v.package,
        ))
    }

    pub async fn powerdown(&self) -> Result<()> {
        self.service.execute(qapi::qmp::system_powerdown {}).await?;
        Ok(())
    }

    /// `quit`: QEMU exits at once. The reply may not arrive before the
    /// socket closes, so a closed stream counts as success.
    pub async fn quit(&self) -> Result<()> {
        match tokio::time::timeout(
            Duration::from_secs(3),
            self.service.execute(qapi::qmp::quit {}),
        )
        .await
        {
            Ok(Ok(_)) | Ok(Err(_)) => Ok(()),
            Err(_) => anyhow::bail!("QMP quit got no answer in 3 s"),
        }
    }

    pub fn event_names(&self) -> Vec<String> {
        self.events.lock().unwrap().clone()
    }
}

impl Drop for Qmp {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn event_name(e: &qapi::qmp::Event) -> String {
    serde_json::to_value(e)
        .ok()
        .and_then(|v| v.get("event").and_then(|x| x.as_str()).map(String::from))
        .unwrap_or_else(|| {
            format!("{e:?}")
                .split(['(', ' ', '{'])
                .next()
                .unwrap_or("event")
                .to_string()
        })
}

fn version_string([major, minor, micro]: [i64; 3], package: &str) -> String {
    match package.trim() {
        "" => format!("{major}.{minor}.{micro}"),
        p => format!("{major}.{minor}.{micro} ({p})"),
    }
}

#[cfg(test)]
mod tests {
    use super::version_string;

    #[test]
    fn the_package_is_set_apart_from_the_version() {
        assert_eq!(
            version_string([7, 2, 22], "Debian 1:7.2+dfsg-7+deb12u18+b3"),
            "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"
        );
        assert_eq!(version_string([9, 2, 0], " "), "9.2.0");
    }
}
