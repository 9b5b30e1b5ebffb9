//! The `cgroup` setup step: a cgroup v2 group the cell's workload runs
//! in, with the block throttle's limits (`io.max`) on one device. The one
//! place that knows the limits' keys, how a value may be written, and
//! the kernel options the step needs.

use super::Fragment;
use super::schema::{CgroupDef, Scalar, SetupStep};
use crate::units::{UnitKind, parse_unit};

/// `io.max`'s keys, as Documentation/admin-guide/cgroup-v2.rst names
/// them: bytes and I/Os per second, read and write.
pub const IO_MAX_KEYS: [&str; 4] = ["rbps", "wbps", "riops", "wiops"];

/// What the step needs built in: cgroups, the block controller and its
/// throttle (io.max is the throttle's file).
pub const KCONFIG: [&str; 3] = [
    "CONFIG_CGROUPS=y",
    "CONFIG_BLK_CGROUP=y",
    "CONFIG_BLK_DEV_THROTTLING=y",
];

/// Where the guest mounts cgroup2, and so where a group's files are.
pub const ROOT: &str = "/sys/fs/cgroup";

impl CgroupDef {
    /// The limits the step sets, in `io.max`'s order, each as the kernel
    /// takes it (`max` or an integer).
    pub fn limits(&self) -> Result<Vec<(&'static str, String)>, String> {
        let mut out = Vec::new();
        for (key, v) in IO_MAX_KEYS
            .iter()
            .zip([&self.rbps, &self.wbps, &self.riops, &self.wiops])
        {
            if let Some(v) = v {
                out.push((*key, io_max_value(key, v)?));
            }
        }
        if out.is_empty() {
            return Err(format!(
                "cgroup '{}': set at least one of {}",
                self.name,
                IO_MAX_KEYS.join(", ")
            ));
        }
        Ok(out)
    }
}

/// One limit as `io.max` takes it: `max`, a whole number, or for the
/// byte limits a rate with its unit (`10MB/s` is 10,000,000 bytes a
/// second, `10MiB/s` 10,485,760: lab's one unit table), for the I/O
/// limits a rate in IOPS (`5k IOPS`). A template left unrendered is let
/// through: the cell's check sees the rendered value.
pub fn io_max_value(key: &str, v: &Scalar) -> Result<String, String> {
    let written = v.to_string();
    let w = written.trim();
    if w.contains("{{") || w == "max" {
        return Ok(w.to_string());
    }
    if let Scalar::Int(n) = v
        && *n > 0
    {
        return Ok(n.to_string());
    }
    let bytes = key.ends_with("bps");
    let split = w
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(w.len());
    let (num, unit) = w.split_at(split);
    let n: Option<f64> = num.parse().ok();
    let scale = match unit.trim() {
        "" => Some(1.0),
        u => parse_unit(u).and_then(|u| {
            let want = if bytes {
                UnitKind::Throughput
            } else {
                UnitKind::Rate
            };
            (u.kind == want).then_some(u.scale)
        }),
    };
    match (n, scale) {
        (Some(n), Some(s)) if (n * s).round() >= 1.0 && n * s < 1e19 => {
            Ok(format!("{}", (n * s).round() as u64))
        }
        _ => Err(format!(
            "cgroup.{key} '{w}': max, a whole number{}",
            if bytes {
                " of bytes a second, or a rate such as 10MB/s or 4MiB/s"
            } else {
                " of I/Os a second, or a rate such as 5k IOPS"
            }
        )),
    }
}

/// A group's name: one directory under the cgroup2 root.
pub fn name_error(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name != "."
        && name != ".."
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    (!ok).then(|| format!("cgroup.name '{name}': one directory name of letters, digits and ._-"))
}

/// The options the setup's cgroup steps need and no fragment sets, as
/// one fragment (`cgroups`); None without a cgroup step.
pub fn config_fragment(steps: &[SetupStep], have: &[Fragment]) -> Option<Fragment> {
    if !steps.iter().any(|s| matches!(s, SetupStep::Cgroup(_))) {
        return None;
    }
    super::fragments::implied(
        "cgroups",
        "implied by the setup's cgroup steps",
        KCONFIG.iter().copied(),
        have,
    )
}

/// The cgroup a cell's workload runs in: its one cgroup step's.
pub fn of_cell(steps: &[SetupStep]) -> Option<&CgroupDef> {
    steps.iter().find_map(|s| match s {
        SetupStep::Cgroup(c) => Some(c),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_max_whole_numbers_or_rates_with_a_unit() {
        let v = |s: &str| io_max_value("rbps", &Scalar::Str(s.into()));
        assert_eq!(v("max"), Ok("max".into()));
        assert_eq!(
            io_max_value("rbps", &Scalar::Int(1048576)),
            Ok("1048576".into())
        );
        assert_eq!(v("10MB/s"), Ok("10000000".into()));
        assert_eq!(v("1MiB/s"), Ok("1048576".into()));
        assert_eq!(v("1.5 MB/s"), Ok("1500000".into()));
        assert_eq!(
            io_max_value("wiops", &Scalar::Str("5k IOPS".into())),
            Ok("5000".into())
        );
        assert_eq!(
            io_max_value("wiops", &Scalar::Str("100000".into())),
            Ok("100000".into())
        );
        // A byte limit in IOPS, an I/O limit in bytes, zero, words: errors
        // that name the key.
        assert!(
            v("5k IOPS")
                .unwrap_err()
                .starts_with("cgroup.rbps '5k IOPS'")
        );
        assert!(io_max_value("riops", &Scalar::Str("1MB/s".into())).is_err());
        assert!(v("0").is_err());
        assert!(io_max_value("rbps", &Scalar::Int(0)).is_err());
        assert!(v("fast").is_err());
        assert!(v("1e400").is_err());
        assert_eq!(v("{{ rbps }}"), Ok("{{ rbps }}".into()));
    }

    #[test]
    fn a_name_is_one_directory() {
        assert_eq!(name_error("lab-1.a_b"), None);
        for bad in ["", ".", "..", "a/b", "a b", "$(x)"] {
            assert!(name_error(bad).is_some(), "{bad}");
        }
    }
}
