//! SSH keys for one lab instance: a client key, and a guest host key
//! that lab pins. Both live in the cache directory, private keys 0600.
//!
//! The guest runs dropbear, which reads its own host key format; lab
//! writes that format itself (it is four fields) instead of running
//! dropbearkey, so a foreign-arch image needs no emulation.

use anyhow::{Context, Result};
use russh::keys::ssh_key::private::{Ed25519Keypair, KeypairData};
use russh::keys::ssh_key::{LineEnding, PrivateKey, PublicKey};
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub struct Keys {
    pub dir: PathBuf,
    pub client: PrivateKey,
    pub host: PrivateKey,
}

impl Keys {
    /// Load the instance's keys, creating them on first use.
    pub fn load_or_create(dir: &Path) -> Result<Keys> {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let client = load_or_make(&dir.join("client_ed25519"))?;
        let host = load_or_make(&dir.join("guest_host_ed25519"))?;
        Ok(Keys {
            dir: dir.to_path_buf(),
            client,
            host,
        })
    }

    pub fn host_public(&self) -> &PublicKey {
        self.host.public_key()
    }

    /// The cpio layer the guest reads at boot: dropbear's host key and
    /// root's authorized_keys.
    pub fn guest_layer(&self) -> Result<Vec<u8>> {
        let authorized = format!("{}\n", self.client.public_key().to_openssh()?);
        Ok(crate::image::cpio::layer(&[
            (
                "etc/dropbear/dropbear_ed25519_host_key".to_string(),
                dropbear_ed25519(&self.host)?,
                0o600,
            ),
            (
                "root/.ssh/authorized_keys".to_string(),
                authorized.into_bytes(),
                0o600,
            ),
        ]))
    }
}

/// The key at `path`, made on first use. Two lab processes (or two
/// tests) that start on a fresh cache at once must end with one key:
/// each writes its candidate to a file of its own, and a hard link, which
/// never replaces, publishes the first; the others read that one back.
fn load_or_make(path: &Path) -> Result<PrivateKey> {
    if let Some(k) = load(path)? {
        return Ok(k);
    }
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut seed)?;
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let text = key.to_openssh(LineEnding::LF)?;
    let tmp = path.with_extension(format!("tmp.{}", crate::util::random_token()));
    {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("writing {}", tmp.display()))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {
            crate::util::atomic_write(
                &path.with_extension("pub"),
                format!("{}\n", key.public_key().to_openssh()?).as_bytes(),
            )?;
            Ok(key)
        }
        // Another process published its key first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            load(path)?.with_context(|| format!("{} vanished after it was made", path.display()))
        }
        Err(e) => Err(e).with_context(|| format!("publishing {}", path.display())),
    }
}

/// The key at `path`; None when there is none yet.
fn load(path: &Path) -> Result<Option<PrivateKey>> {
    match std::fs::read_to_string(path) {
        Ok(text) => PrivateKey::from_openssh(&text)
            .map(Some)
            .with_context(|| format!("parsing {}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// Dropbear's ed25519 key file: string "ssh-ed25519", then a 64-byte
/// string holding the 32-byte seed and the 32-byte public key.
pub fn dropbear_ed25519(key: &PrivateKey) -> Result<Vec<u8>> {
    let KeypairData::Ed25519(kp) = key.key_data() else {
        anyhow::bail!("the guest host key must be ed25519");
    };
    let mut out = Vec::new();
    let mut put = |b: &[u8]| {
        out.extend_from_slice(&(b.len() as u32).to_be_bytes());
        out.extend_from_slice(b);
    };
    put(b"ssh-ed25519");
    put(&kp.to_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight threads on a fresh directory at once (tests, or two lab
    /// processes on a new cache) all get the one key that was published.
    #[test]
    fn keys_made_at_once_are_one_key() {
        let d = tempfile::tempdir().unwrap();
        let keys: Vec<Keys> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|_| s.spawn(|| Keys::load_or_create(d.path()).unwrap()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let on_disk = Keys::load_or_create(d.path()).unwrap();
        for k in &keys {
            assert_eq!(k.client.public_key(), on_disk.client.public_key());
            assert_eq!(k.host.public_key(), on_disk.host.public_key());
        }
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn keys_are_made_once_with_private_mode_0600() {
        let d = tempfile::tempdir().unwrap();
        let a = Keys::load_or_create(d.path()).unwrap();
        let b = Keys::load_or_create(d.path()).unwrap();
        assert_eq!(a.host.public_key(), b.host.public_key());
        assert_eq!(a.client.public_key(), b.client.public_key());
        assert_ne!(a.client.public_key(), a.host.public_key());
        for f in ["client_ed25519", "guest_host_ed25519"] {
            let mode = std::fs::metadata(d.path().join(f))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(mode, 0o600, "{f}");
        }
    }

    /// dropbearkey (Debian's dropbear-bin) must read our file and print
    /// the same public key.
    #[test]
    fn dropbear_reads_the_host_key_lab_writes() {
        let d = tempfile::tempdir().unwrap();
        let k = Keys::load_or_create(d.path()).unwrap();
        let f = d.path().join("dropbear_key");
        std::fs::write(&f, dropbear_ed25519(&k.host).unwrap()).unwrap();
        let out = std::process::Command::new("dropbearkey")
            .arg("-y")
            .arg("-f")
            .arg(&f)
            .output()
            .expect("dropbearkey from Debian's dropbear-bin must be installed");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8_lossy(&out.stdout);
        let ours = k.host.public_key().to_openssh().unwrap();
        let b64 = ours.split_whitespace().nth(1).unwrap();
        assert!(
            printed.contains(b64),
            "dropbearkey printed:\n{printed}\nexpected {ours}"
        );
    }
}
