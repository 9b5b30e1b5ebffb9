//! zstd for the initramfs, deterministic and shaped for the kernel.
//!
//! Deterministic: one fixed level and parameters, one thread (zstd's
//! multithreaded mode splits the input by timing-independent rules too,
//! but one thread leaves no doubt).
//!
//! Shaped for the kernel: `init/initramfs.c` looks for the next cpio
//! layer only at a 4-byte aligned offset after a compressed one, so the
//! frame's length is made a multiple of 4. Zero padding would do for the
//! kernel, but `zstd -t` rejects it; an empty raw block (3 bytes, legal
//! anywhere in a frame) keeps the file a valid zstd frame for every tool.

use anyhow::{Context, Result, bail};
use zstd::zstd_safe::CParameter;

/// The compression level. Measured on the 92 MB x86_64 userland, single
/// thread, loaded 2-core host: level 3 gives 35.3 MB in 1 s, 9 gives
/// 32.2 MB in 3.5 s, 12 gives 32.0 MB in 8 s, 19 gives 28.1 MB in 84 s.
/// The guest decompresses every level at about the same speed.
pub const LEVEL: i32 = 9;

/// Window of at most 8 MiB: the kernel's streaming decompressor
/// allocates the whole window up front, in a guest with little memory.
const WINDOW_LOG: u32 = 23;

pub fn compress(raw: &[u8]) -> Result<Vec<u8>> {
    let mut c = zstd::bulk::Compressor::new(LEVEL).context("creating a zstd compressor")?;
    c.set_parameter(CParameter::WindowLog(WINDOW_LOG))?;
    c.set_parameter(CParameter::ChecksumFlag(true))?;
    c.set_parameter(CParameter::ContentSizeFlag(true))?;
    c.set_parameter(CParameter::NbWorkers(0))?;
    let frame = c.compress(raw).context("zstd compression")?;
    align4(frame)
}

/// The archive inside a `.cpio.zst`.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    zstd::stream::decode_all(data).context("zstd decompression")
}

/// Insert empty raw blocks after the frame header until the frame's
/// length is a multiple of 4 (3·k ≡ −len mod 4 has a k in 0..4).
fn align4(mut frame: Vec<u8>) -> Result<Vec<u8>> {
    let k = (0..4)
        .find(|k| (frame.len() + 3 * k).is_multiple_of(4))
        .unwrap_or(0);
    if k == 0 {
        return Ok(frame);
    }
    let at = frame_header_len(&frame)?;
    // Block header: Last_Block 0, Block_Type 0 (raw), Block_Size 0.
    frame.splice(at..at, std::iter::repeat_n(0u8, 3 * k));
    Ok(frame)
}

/// Length of a zstd frame header (RFC 8878, 3.1.1.1): magic, descriptor,
/// then the window, dictionary and content size fields its flags select.
fn frame_header_len(frame: &[u8]) -> Result<usize> {
    if frame.len() < 6 || frame[..4] != [0x28, 0xb5, 0x2f, 0xfd] {
        bail!("not a zstd frame");
    }
    let fhd = frame[4];
    let single_segment = fhd & 0x20 != 0;
    let window = if single_segment { 0 } else { 1 };
    let dict = [0, 1, 2, 4][(fhd & 3) as usize];
    let fcs = match fhd >> 6 {
        0 if single_segment => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    Ok(5 + window + dict + fcs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize) -> Vec<u8> {
        // Compressible but not trivial: a repeating text with a counter.
        (0..n)
            .flat_map(|i| format!("line {} of the sample\n", i % 977).into_bytes())
            .take(n)
            .collect()
    }

    #[test]
    fn roundtrips_aligned_for_every_residue() {
        let mut residues = std::collections::BTreeSet::new();
        for n in [0, 1, 2, 3, 100, 1000, 4097, 70_000, 300_001] {
            let raw = sample(n);
            let unaligned = zstd::bulk::compress(&raw, LEVEL).unwrap();
            residues.insert(unaligned.len() % 4);
            let z = compress(&raw).unwrap();
            assert_eq!(z.len() % 4, 0, "n={n}");
            assert_eq!(decompress(&z).unwrap(), raw, "n={n}");
            let padded = align4(unaligned).unwrap();
            assert_eq!(padded.len() % 4, 0);
            assert_eq!(decompress(&padded).unwrap(), raw, "n={n}");
        }
        assert!(residues.len() > 1, "the samples must exercise the padding");
    }

    #[test]
    fn is_deterministic() {
        let raw = sample(500_000);
        assert_eq!(compress(&raw).unwrap(), compress(&raw).unwrap());
    }

    #[test]
    fn host_zstd_accepts_the_aligned_frame() {
        let raw = sample(123_457);
        let z = compress(&raw).unwrap();
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.zst");
        std::fs::write(&p, &z).unwrap();
        let out = std::process::Command::new("zstd")
            .args(["-d", "-c", "-q"])
            .arg(&p)
            .output()
            .expect("host zstd");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.stdout, raw);
    }

    #[test]
    fn header_length_follows_the_flags() {
        // Single segment, 1-byte content size: 4 + 1 + 1.
        assert_eq!(
            frame_header_len(&[0x28, 0xb5, 0x2f, 0xfd, 0x20, 0]).unwrap(),
            6
        );
        // Window byte, 4-byte dictionary id, 8-byte content size.
        assert_eq!(
            frame_header_len(&[0x28, 0xb5, 0x2f, 0xfd, 0xc3, 0]).unwrap(),
            18
        );
        assert!(frame_header_len(b"not zstd").is_err());
    }
}
