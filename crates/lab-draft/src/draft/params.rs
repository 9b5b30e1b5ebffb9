//! fio parameters written in prose, in brackets, instead of a command:
//! `(ioengine=io_uring, iodepth=128, numjobs=1, rw=randread, direct=1,
//! bs=4k)` above a table is the job its numbers come from; and option
//! values written as alternatives (`-rw=read[,write,rw]`), one run each.

use super::steps::{FioJob, Src};

/// fio options a list must name two of to be a job.
const FIO_KEYS: [&str; 14] = [
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "iodepth",
    "numjobs",
    "ioengine",
    "direct",
    "runtime",
    "size",
    "hipri",
    "sqthread_poll",
    "fixedbufs",
    "registerfiles",
];

/// The longest bracketed list read (a stray `(` opens no novel).
const MAX_LIST: usize = 400;

/// Each bracketed list of three or more `key=value` pairs, two of them
/// fio options, as a job; its quote is the list as written, one space
/// between words, so a table whose caption holds it is its job's.
pub fn jobs(text: &str) -> Vec<FioJob> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'(' {
            i += 1;
            continue;
        }
        let Some(end) = closing(&text[i..]) else {
            i += 1;
            continue;
        };
        let inner = &text[i + 1..i + end];
        if let Some(options) = options(inner) {
            let quote = text[i..=i + end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            out.push(FioJob {
                name: None,
                options,
                src: Src {
                    line: text[..i].matches('\n').count() + 1,
                    quote,
                },
            });
            i += end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// The offset of the `)` that closes the `(` `s` starts with, nested
/// brackets counted, within [`MAX_LIST`] bytes and two line breaks.
fn closing(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut breaks = 0;
    for (k, c) in s.char_indices().take_while(|(k, _)| *k < MAX_LIST) {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            '\n' => {
                breaks += 1;
                if breaks > 2 {
                    return None;
                }
            }
            _ => {}
        }
    }
    None
}

/// The `key=value` pairs of a list, when it is a job's: three or more
/// pairs, two of them fio options, and more pairs than other words. A
/// value's own note in brackets (`bs=12k(4k for every NVMe device)`) is
/// left out.
fn options(inner: &str) -> Option<Vec<(String, String)>> {
    let mut opts: Vec<(String, String)> = Vec::new();
    let mut words = 0;
    for w in inner.split(|c: char| c.is_whitespace() || c == ',' || c == ';') {
        let w = w.trim_matches(|c: char| c == '(' || c == ')');
        if w.is_empty() {
            continue;
        }
        match w.split_once('=') {
            Some((k, v))
                if !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !v.is_empty() =>
            {
                let v = v.split('(').next().unwrap_or(v);
                opts.push((k.to_ascii_lowercase(), v.to_string()));
            }
            _ => words += 1,
        }
    }
    let known = opts
        .iter()
        .filter(|(k, _)| FIO_KEYS.contains(&k.as_str()))
        .count();
    (opts.len() >= 3 && known >= 2 && opts.len() > words).then_some(opts)
}

/// A job whose option the mail wrote as alternatives (`-rw=read[,write,rw]`,
/// `--bs={4k,64k}`, `--iodepth=1|32`: it ran once with each) as one job
/// per alternative, so they vary that option.
pub(super) fn one_per_alternative(job: FioJob) -> Vec<FioJob> {
    // At most 64 runs from one command: more is no experiment a mail
    // ran, and a stranger's line must not multiply without bound.
    let runs = job
        .options
        .iter()
        .filter_map(|(_, v)| alternatives(v))
        .try_fold(1usize, |n, vs| n.checked_mul(vs.len()).filter(|n| *n <= 64));
    if runs.is_none() {
        return vec![job];
    }
    let found = job
        .options
        .iter()
        .enumerate()
        .find_map(|(i, (_, v))| alternatives(v).map(|vs| (i, vs)));
    let Some((i, values)) = found else {
        return vec![job];
    };
    // Each alternative, with any later option's alternatives in turn.
    values
        .into_iter()
        .flat_map(|v| {
            let mut j = job.clone();
            j.options[i].1 = v;
            one_per_alternative(j)
        })
        .collect()
}

/// `read[,write,rw]`, `{4k,64k}` or `1|32`: the values, when each is a
/// plain word (fio's own lists, `bs=4k,8k` for reads and writes, are
/// none of these forms).
fn alternatives(v: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = if let Some((first, rest)) = v.split_once("[,") {
        let rest = rest.strip_suffix(']')?;
        std::iter::once(first).chain(rest.split(',')).collect()
    } else if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        inner.split(',').collect()
    } else if v.contains('|') {
        v.split('|').collect()
    } else {
        return None;
    };
    let word = |p: &&str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.".contains(c))
    };
    (parts.len() >= 2 && parts.len() <= 16 && parts.iter().all(word))
        .then(|| parts.iter().map(|p| p.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_expand_within_a_bound() {
        let job = |opts: &[(&str, &str)]| FioJob {
            name: None,
            options: opts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            src: Src {
                line: 1,
                quote: String::new(),
            },
        };
        let two = one_per_alternative(job(&[("rw", "read[,write]"), ("bs", "{4k,64k}")]));
        let got: Vec<(Option<&str>, Option<&str>)> =
            two.iter().map(|j| (j.get("rw"), j.get("bs"))).collect();
        assert_eq!(
            got,
            [
                (Some("read"), Some("4k")),
                (Some("read"), Some("64k")),
                (Some("write"), Some("4k")),
                (Some("write"), Some("64k"))
            ]
        );
        // fio's own comma list is no alternative.
        assert_eq!(one_per_alternative(job(&[("bs", "4k,8k")])).len(), 1);
        // 16^20 runs from one hostile line: left as written.
        let many: Vec<(String, String)> = (0..20)
            .map(|i| {
                (
                    format!("o{i}"),
                    format!(
                        "{{{}}}",
                        (0..16).map(|n| n.to_string()).collect::<Vec<_>>().join(",")
                    ),
                )
            })
            .collect();
        let refs: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(one_per_alternative(job(&refs)).len(), 1);
    }

    use super::jobs;

    #[test]
    fn a_bracketed_list_of_fio_options_is_a_job() {
        let j = jobs(
            "- One process reading dm-linear.\n\n(ioengine=io_uring, iodepth=128, numjobs=1, rw=randread, sqthread_poll=0\ndirect=1, bs=12k(4k for every NVMe device))\n\nThe table (see above) and (a=1, b=2) say nothing.\n",
        );
        assert_eq!(j.len(), 1, "{j:?}");
        assert_eq!(j[0].get("numjobs"), Some("1"));
        assert_eq!(j[0].get("direct"), Some("1"));
        assert_eq!(j[0].get("bs"), Some("12k"));
        assert_eq!(j[0].src.line, 3);
        assert!(
            j[0].src
                .quote
                .starts_with("(ioengine=io_uring, iodepth=128")
        );
        assert!(!j[0].src.quote.contains('\n'));
        // Words outnumbering the pairs: a sentence, not a job.
        assert!(
            jobs("(we ran it with rw=randread bs=4k iodepth=1 on the box for a day)").is_empty()
        );
    }
}
