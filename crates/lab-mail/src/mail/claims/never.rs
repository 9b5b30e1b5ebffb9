//! Lines that never hold a claim, whatever layout they sit in:
//! commands, code and dates (no table row), and dumps and records (no
//! row and no part of a sentence either). Kept apart from the readers
//! so each reader asks the same question.

use regex::Regex;
use std::sync::LazyLock;

/// Lines that never hold claims: commands (a prompt, a command name, an
/// option), code, disassembly, hex dumps, stack traces, kernel log
/// records, dates and a shortlog's `Name (3):`.
pub(super) fn never_claims(text: &str) -> bool {
    if super::lines::is_command(text) {
        return true;
    }
    const COMMANDS: [&str; 24] = [
        "fio",
        "iostat",
        "sar",
        "perf",
        "dd",
        "echo",
        "sudo",
        "cat",
        "dmsetup",
        "modprobe",
        "cryptsetup",
        "mkfs",
        "mount",
        "losetup",
        "taskset",
        "numactl",
        "nvme",
        "time",
        "hyperfine",
        "make",
        "git",
        "for",
        "while",
        "blkparse",
    ];
    // zsh's `time` prints after the command it timed, on its line:
    // `make > /dev/null  130.54s user 10.41s system 969% cpu 14.537 total`.
    static TIMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\ds user [\d.:]+s? system \d+% cpu [\d.:]+ total\s*$").expect("constant regex")
    });
    if text.contains(" total") && TIMED.is_match(text) {
        return false;
    }
    // `(dd if=/dev/zero ...)`, `` `fio ...` ``: a command in brackets.
    let t = text.trim_start().trim_start_matches(['(', '`']);
    let first = t.split_whitespace().next().unwrap_or("");
    first == "#"
        || first == "$"
        || first.starts_with("./")
        || first.ends_with(".sh")
        || (COMMANDS.contains(&first) && is_command_line(&t[first.len()..]))
        || is_invocation(first, &t[first.len()..])
        || is_dump(text)
        || is_code_or_date(text)
        || super::formulas::is_formula(text)
}

/// Lines of code, commands and dates: no table row (a sentence may
/// still mention an option or a date, and its own claims stand).
fn is_code_or_date(text: &str) -> bool {
    static CODE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
            (?:^|\s)--?[A-Za-z][\w-]*=      # an option with a value
            | \\$                             # a continued command
            | [{;]\s*$ | \w\(.*,\s*$          # code
            | ^\s*\#\s*(?:define|undef|include|if|ifdef|ifndef|elif|else|endif|pragma)\b  # the C preprocessor
            | \b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun),\s
            | \b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2},?\s+(?:19|20)\d\d
            | ^\s*[A-Z][\w.'-]*(?:\s[A-Z][\w.'-]*)*\s\(\d+\):$   # shortlog
            | ^\s*v\d+:\s                   # a changelog entry
            | ^\s*\[\d{1,3}\]:?\s+\w+://         # a footnote's link
            | \[\s*\d+\.\d{6}\]              # a dmesg time stamp, quoted in a sentence
            ",
        )
        .expect("constant regex")
    });
    CODE.is_match(text)
}

/// Dumps and records that no sentence holds a claim in: disassembly,
/// hex, stack frames, kernel log records, diff hunks, process listings,
/// a tool's state or settings lines (`latency : target=0, window=0, ...`, df, lsblk,
/// sysctl), a command's quoted arguments.
pub(super) fn is_dump(text: &str) -> bool {
    static DUMP: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?x)
            ^\s*[0-9a-fA-F]{8,16}:\s          # objdump or hex dump address
            | \+0x[0-9a-f]+/0x[0-9a-f]+       # stack frame
            | ^\s*\d+,\d+,\d+,[-c];           # /dev/kmsg record
            | (?:\b[0-9a-f]{2}\b\s+){6}       # hex bytes
            | (?:\b[0-9a-f]{16}\b\s*){2}      # 64-bit words
            | \b(?:PID|Comm|Hardware\ name):  # a kernel log header
            | ^\s*\[\s*\d+\.\d{6}\]           # a kernel log line
            | ^\s*@@\s-\d+(?:,\d+)?\s\+\d+(?:,\d+)?\s@@  # a diff hunk
            | ^\s*-?[\d.]+\s+[+|](?:-+\+|\s)[\s*\#+|o.x~-]*$  # an ASCII plot's axis tick
            | ^\s*/dev/\S+\s+(?:[\d.]+[KMGTP]?\s+){3}\d+%\s+/   # df
            | ^\s*/dev/\S+\s+/\S*\s+\w+\s+(?:rw|ro)\b\S*\s+\d+\s+\d+\s*$   # /proc/mounts
            | ^\s*(?:Data|Metadata|System|GlobalReserve),\s*[\w/]+:\s*total=  # btrfs fi df
            | \b\d+\s+blocks\s+(?:super\s+[\d.]+\s+)?(?:level\s+\d+,\s+)?\d+k\s+chunk  # /proc/mdstat's array
            | ^\s*bitmap:\s+\d+/\d+\s+pages\s+\[\d+KB\],\s+\d+KB\s+chunk   # /proc/mdstat's bitmap
            | ^\s*Events\s:\s\d+\s*$                                        # mdadm --detail's event count
            | :\s\d+\sextents?\sfound\s*$                                  # filefrag's summary of a file's layout
            | \b\d{1,3}(?:\.\d{1,3}){3}(?:[.:]\d+)?:?\s*(?:→|->|>)\s*\d{1,3}(?:\.\d{1,3}){3}\b  # a packet trace's record (tshark, tcpdump): source to destination
            | \bioengine=|Laying\ out\ IO\ file               # fio's job description
            | \btarget=\d+,\ window=                          # fio's latency target
            | \b(?:bsize|sectsz|agcount|agsize|isize|sunit|swidth|extsz)=\d  # mkfs.xfs, xfs_info
            | ^\^?[0-9a-f]{8,}\s.*\b\d{4}-\d\d-\d\d\s+\d+\s   # git blame
            | \s\d+:\d+\s+[01]\s+\S+\s+[01]\s+(?:disk|part|rom|loop|lvm|crypt|raid\d*|mpath)\b  # lsblk
            | ^\s*(?:\[pid\s+\d+\]\s*)?[a-z_]\w*\(.*\)\s+=\s+-?(?:0x[0-9a-f]+|\d+)\b  # strace
            | ^\s*(?:kernel|vm|net|fs|dev|abi|debug|user)\.[\w.]+\s*=\s*\S+\s*$   # a sysctl setting
            | ^\s*(?:Tasks|Threads):\s+\d+\s+total,\s+\d+\s+running   # top's process states
            | ^\s*(?:cpu|cpuset|io|memory|pids|blkio|hugetlb|rdma|misc)\.[a-z_.]*[a-z]\s*=\s*\S+\s*$  # a cgroup file's setting
            | ^\s*(?:export\s+\w+|CONFIG_\w+)=              # a shell variable or kconfig setting
            | ^\s*\x22[^\x22]*\x22(?:\s+\x22[^\x22]*\x22){2,}   # a command's quoted arguments
            | ^\s*[a-z_][\w-]*\s+\d+\s+\d+\.\d\s+\d+\.\d\s+\d+\s+\d+\s+(?:\?|pts/\d+|tty\w*)\s+[RSDZTtWXIiLlNs<+]+\s   # ps aux: user, pid, %cpu, %mem, vsz, rss, tty, state
            ",
        )
        .expect("constant regex")
    });
    DUMP.is_match(text) || is_device_listing(text)
}

/// A row of a device listing (`blockdev --report`, `mdadm --detail`'s
/// members, `ls -l /dev`): numbers that describe a device (major and
/// minor, sector counts, offsets, sizes), then the device's path last.
/// A result names its device before its numbers, or in a sentence.
fn is_device_listing(text: &str) -> bool {
    let t = text.trim_end();
    let Some((head, path)) = t.rsplit_once(char::is_whitespace) else {
        return false;
    };
    path.starts_with("/dev/")
        && head
            .split_whitespace()
            .filter(|w| w.bytes().all(|b| b.is_ascii_digit()))
            .count()
            >= 3
        && !head.contains(['.', ';', '='])
}

/// `dbench -D $MNT -t 200 40`, `t/io_uring -b512 -d128`: a program's
/// name, then options and a shell variable or path: any program.
fn is_invocation(first: &str, rest: &str) -> bool {
    static OPTION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?:^|\s)--?[A-Za-z][\w-]*").expect("constant regex"));
    let program = !first.is_empty()
        && first.starts_with(|c: char| c.is_ascii_lowercase())
        && first
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-./+".contains(&b));
    program && rest.contains(['$', '/']) && OPTION.is_match(rest)
}

/// After a command's name: options, assignments, paths or quotes, as
/// command lines have (`fio --name=x`, `dd if=/dev/zero`), and which
/// a table row led by the same word (`fio cpu usage | 100%`) has not.
fn is_command_line(rest: &str) -> bool {
    // Options, paths and quotes; or the shell's redirections and
    // chaining (`echo 512 > blocksize &&`).
    const SHELL: [&str; 6] = [" > ", ">>", " | ", "&&", "||", "$("];
    !rest.starts_with(':')
        && (rest.contains(" -")
            || rest.contains(['=', '/', '\'', '"'])
            || rest.contains(" $")
            || SHELL.iter().any(|s| rest.contains(s)))
}
