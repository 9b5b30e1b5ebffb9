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

fn load_or_make(path: &Path) -> Result<PrivateKey> {
    if path.exists() {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        return PrivateKey::from_openssh(&text)
            .with_context(|| format!("parsing {}", path.display()));
    }
    let mut seed = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut seed)?;
    let key = PrivateKey::from(Ed25519Keypair::from_seed(&seed));
    let text = key.to_openssh(LineEnding::LF)?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text.as_bytes())?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
    std::fs::rename(&tmp, path)?;
    std::fs::write(
        path.with_extension("pub"),
        format!("{}\n", key.public_key().to_openssh()?),
    )?;
    Ok(key)
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
