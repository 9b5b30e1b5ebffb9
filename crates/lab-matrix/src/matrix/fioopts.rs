//! fio options in fio's command-line form, read at plan time:
//! `--rw=randwrite --bs=4k --numjobs=32 --group_reporting`.

use super::schema::{FioOptions, Scalar};
use std::collections::BTreeMap;

/// Options lab sets itself; a matrix may not change them.
const RESERVED: [&str; 4] = ["output-format", "output", "name", "new_group"];

/// fio's switches that are off unless given (`--hipri`, `fixedbufs=1`):
/// a job without one runs it at 0, so two jobs that differ by one of
/// them differ in its value.
pub const OFF_BY_DEFAULT: [&str; 9] = [
    "hipri",
    "fixedbufs",
    "registerfiles",
    "sqthread_poll",
    "direct",
    "end_fsync",
    "overwrite",
    "nowait",
    "time_based",
];

/// The options as a map; a flag (`--group_reporting`) has an empty value.
pub fn to_map(o: &FioOptions) -> Result<BTreeMap<String, Scalar>, String> {
    let map = match o {
        FioOptions::Map(m) => m.clone(),
        FioOptions::Line(l) => parse_line(l)?,
    };
    for k in map.keys() {
        check_key(k)?;
    }
    Ok(map)
}

pub(super) fn check_key(k: &str) -> Result<(), String> {
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c))
    {
        return Err(format!(
            "fio option '{k}': names are letters, digits, '_' and '-'"
        ));
    }
    if RESERVED.contains(&k) {
        return Err(format!("fio option '{k}' is set by lab"));
    }
    Ok(())
}

fn parse_line(line: &str) -> Result<BTreeMap<String, Scalar>, String> {
    let mut out = BTreeMap::new();
    for word in line.split_whitespace() {
        let Some(opt) = word.strip_prefix("--") else {
            return Err(format!(
                "fio option '{word}': write each option as --name=value or --flag"
            ));
        };
        let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
        if v.contains(['\'', '"']) {
            return Err(format!(
                "fio option '{k}': quotes are not needed and not read"
            ));
        }
        check_key(k)?;
        if out
            .insert(k.to_string(), Scalar::Str(v.to_string()))
            .is_some()
        {
            return Err(format!("fio option '{k}' is given twice"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_command_line_form() {
        let m = to_map(&FioOptions::Line(
            "--rw=randwrite --bs=4k --numjobs=32 --iodepth=64 --ioengine=libaio --group_reporting"
                .into(),
        ))
        .unwrap();
        assert_eq!(m["rw"], Scalar::Str("randwrite".into()));
        assert_eq!(m["numjobs"], Scalar::Str("32".into()));
        assert_eq!(m["group_reporting"], Scalar::Str(String::new()));
        assert_eq!(m.len(), 6);
    }

    #[test]
    fn errors_name_the_option() {
        let e = |l: &str| to_map(&FioOptions::Line(l.into())).unwrap_err();
        assert!(e("--rw=read bs=4k").contains("'bs=4k'"));
        assert!(e("--rw=read --rw=write").contains("'rw' is given twice"));
        assert!(e("--output-format=normal").contains("'output-format' is set by lab"));
        assert!(e("--r;w=1").contains("'r;w'"));
        assert!(e("--filename='/dev/x'").contains("'filename'"));
    }
}
