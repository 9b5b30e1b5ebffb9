//! Benchmark tools other than fio, read as the fio job they stand for.

use super::steps::{FioJob, Src};

/// fio's `t/io_uring` as a fio job: its options (`-b512 -d128 -p1 ...`,
/// with t/io_uring's defaults for those not given) as fio's, its files
/// as fio's `filename`. What fio has no option for is left out.
pub fn t_io_uring(w: &[&str], src: &Src) -> FioJob {
    let mut given: Vec<(char, String)> = Vec::new();
    let mut files: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < w.len() {
        let a = w[i];
        i += 1;
        let Some(o) = a.strip_prefix('-') else {
            files.push(a);
            continue;
        };
        let mut cs = o.chars();
        let Some(flag) = cs.next() else { continue };
        let mut v: String = cs.collect();
        if v.is_empty() && w.get(i).is_some_and(|n| !n.starts_with('-')) {
            v = w[i].to_string();
            i += 1;
        }
        given.push((flag, v));
    }
    let get = |f: char, default: &str| {
        given
            .iter()
            .rev()
            .find(|(g, _)| *g == f)
            .map_or(default.to_string(), |(_, v)| v.clone())
    };
    let on = |f: char, default: &str| get(f, default) != "0";
    let engine = if on('u', "0") {
        "io_uring_cmd"
    } else if on('S', "0") {
        "pvsync2"
    } else if on('a', "0") {
        "libaio"
    } else {
        "io_uring"
    };
    let mut opts: Vec<(String, String)> = vec![
        (
            "rw".into(),
            if on('R', "1") { "randread" } else { "read" }.into(),
        ),
        ("bs".into(), get('b', "4096")),
        ("ioengine".into(), engine.into()),
        ("iodepth".into(), get('d', "128")),
        ("iodepth_batch_submit".into(), get('s', "32")),
        ("iodepth_batch_complete_min".into(), get('c', "32")),
        ("direct".into(), if on('O', "1") { "1" } else { "0" }.into()),
    ];
    if engine == "io_uring_cmd" {
        opts.push(("cmd_type".into(), "nvme".into()));
    }
    for (flag, key) in [('p', "hipri"), ('B', "fixedbufs"), ('F', "registerfiles")] {
        if engine != "pvsync2" && engine != "libaio" && on(flag, "1") {
            opts.push((key.into(), "1".into()));
        }
    }
    if engine == "pvsync2" && on('p', "1") {
        opts.push(("hipri".into(), "1".into()));
    }
    let threads = get('n', "1");
    if threads != "1" {
        opts.push(("numjobs".into(), threads));
    }
    // Without -r it runs until stopped: the draft's note says 5 s.
    let runtime = given
        .iter()
        .find(|(f, _)| *f == 'r')
        .map_or("5".to_string(), |r| r.1.clone());
    opts.push(("runtime".into(), runtime));
    opts.push(("time_based".into(), String::new()));
    if !files.is_empty() {
        opts.push(("filename".into(), files.join(":")));
    }
    FioJob {
        name: None,
        options: opts,
        src: src.clone(),
    }
}

/// Files `dd` reads or writes that are no file under test.
const STREAMS: [&str; 4] = ["/dev/zero", "/dev/null", "/dev/urandom", "/dev/random"];

/// `dd` as the fio job it stands for: one sequential stream in blocks
/// of `bs`, reading `if=` into /dev/null or writing /dev/zero to `of=`,
/// synchronously (psync, one block in flight), `count` blocks long.
/// Its flags map to fio's: `direct` to `direct=1`, `dsync`/`sync` to
/// `sync=1`, `conv=fdatasync`/`fsync` to `end_fsync=1`. Err says why
/// not: a line without `if=` or `of=`, a copy between two files or a
/// stream to a stream (no file under test), a file named by a shell
/// variable, a block size that is no size.
pub fn dd(w: &[&str], src: &Src) -> Result<FioJob, String> {
    let op = |k: &str| {
        w.iter()
            .rev()
            .find_map(|a| a.strip_prefix(k).and_then(|v| v.strip_prefix('=')))
    };
    if op("if").is_none() && op("of").is_none() {
        return Err("a dd line without if= or of=".into());
    }
    let no_file = || {
        "a dd that copies between two files or two streams, or names its file with a shell \
         variable, measures no file lab can make"
            .to_string()
    };
    let (input, output) = (op("if"), op("of").unwrap_or("/dev/null"));
    let flags = |k: &str| op(k).map_or(Vec::new(), |v| v.split(',').collect::<Vec<_>>());
    let (rw, file, flags) = match input {
        Some(i) if !STREAMS.contains(&i) && STREAMS.contains(&output) => {
            ("read", i, flags("iflag"))
        }
        Some(i) if STREAMS.contains(&i) && !STREAMS.contains(&output) => {
            ("write", output, flags("oflag"))
        }
        _ => return Err(no_file()),
    };
    // A file named by a variable lab does not know (`of=$DIR/file$i`).
    if file.contains('$') || file.contains('`') {
        return Err(no_file());
    }
    let bs = op("bs").or_else(|| op(if rw == "read" { "ibs" } else { "obs" }));
    let bs = match bs {
        None => 512,
        Some(b) => dd_bytes(b).ok_or_else(|| format!("dd's block size '{b}' is no size"))?,
    };
    let mut opts: Vec<(String, String)> = vec![
        ("rw".into(), rw.into()),
        ("bs".into(), fio_size(bs)),
        ("ioengine".into(), "psync".into()),
        ("iodepth".into(), "1".into()),
    ];
    if flags.contains(&"direct") {
        opts.push(("direct".into(), "1".into()));
    }
    if flags.iter().any(|f| *f == "dsync" || *f == "sync") {
        opts.push(("sync".into(), "1".into()));
    }
    let conv = op("conv").unwrap_or("");
    if rw == "write" && conv.split(',').any(|c| c == "fdatasync" || c == "fsync") {
        opts.push(("end_fsync".into(), "1".into()));
    }
    if let Some(n) = op("count").and_then(|c| c.parse::<u64>().ok()) {
        opts.push(("size".into(), fio_size(n.saturating_mul(bs))));
    }
    opts.push(("filename".into(), file.into()));
    Ok(FioJob {
        name: None,
        options: opts,
        src: src.clone(),
    })
}

/// A dd size operand in bytes: `4k`/`4K` and `1M` are powers of 1024,
/// `1kB`/`1MB` powers of 1000, `c` one byte, `w` two, `b` 512;
/// `2x4k` multiplies. None if it is not a size.
fn dd_bytes(s: &str) -> Option<u64> {
    s.split('x')
        .try_fold(1u64, |n, f| n.checked_mul(dd_size(f)?))
}

/// One factor of a dd size operand.
fn dd_size(s: &str) -> Option<u64> {
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let suffix = &s[digits..];
    let pow = |base: u64, c: char| {
        let e = "KMGTPE".find(c.to_ascii_uppercase())? as u32 + 1;
        base.checked_pow(e)
    };
    let scale = match suffix {
        "" | "c" => 1,
        "w" => 2,
        "b" => 512,
        _ => {
            let mut cs = suffix.chars();
            let c = cs.next()?;
            match cs.as_str() {
                "" | "iB" => pow(1024, c)?,
                "B" => pow(1000, c)?,
                _ => return None,
            }
        }
    };
    n.checked_mul(scale)
}

/// Bytes as fio writes sizes: `4k`, `1m`, or a plain number.
fn fio_size(b: u64) -> String {
    for (unit, s) in [(1u64 << 30, "g"), (1 << 20, "m"), (1 << 10, "k")] {
        if b >= unit && b.is_multiple_of(unit) {
            return format!("{}{s}", b / unit);
        }
    }
    b.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> Src {
        Src {
            line: 1,
            quote: String::new(),
        }
    }

    #[test]
    fn dd_reads_and_writes_as_fio_jobs() {
        let j = dd(
            &[
                "if=/dev/sdb",
                "of=/dev/null",
                "bs=1M",
                "count=4096",
                "iflag=direct",
            ],
            &src(),
        )
        .unwrap();
        assert_eq!(j.get("rw"), Some("read"));
        assert_eq!(j.get("bs"), Some("1m"));
        assert_eq!(j.get("size"), Some("4g"));
        assert_eq!(j.get("direct"), Some("1"));
        let j = dd(
            &[
                "if=/dev/zero",
                "of=/mnt/f",
                "bs=64kB",
                "conv=fdatasync",
                "oflag=dsync",
            ],
            &src(),
        )
        .unwrap();
        assert_eq!(j.get("rw"), Some("write"));
        assert_eq!(j.get("bs"), Some("64000"));
        assert_eq!(j.get("end_fsync"), Some("1"));
        assert_eq!(j.get("sync"), Some("1"));
        // A copy between files, a stream to a stream, a variable: none.
        assert!(dd(&["if=/a", "of=/b"], &src()).is_err());
        assert!(dd(&["if=/dev/zero", "of=/dev/null"], &src()).is_err());
        assert!(dd(&["if=/dev/zero", "of=$DIR/f"], &src()).is_err());
        assert!(
            dd(&["/mnt/f", "4k"], &src())
                .unwrap_err()
                .contains("without if=")
        );
        assert!(
            dd(&["if=/mnt/f", "bs=4q"], &src())
                .unwrap_err()
                .contains("'4q' is no size")
        );
    }

    #[test]
    fn dd_sizes_multiply_without_recursion_or_overflow() {
        assert_eq!(dd_bytes("2x4k"), Some(8192));
        assert_eq!(dd_bytes("512b"), Some(512 * 512));
        assert_eq!(
            dd_bytes("1x".repeat(100_000).trim_end_matches('x')),
            Some(1)
        );
        assert_eq!(dd_bytes("99999999999G"), None);
        assert_eq!(dd_bytes("4q"), None);
    }
}
