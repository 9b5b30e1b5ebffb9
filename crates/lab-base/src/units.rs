//! lab's one vocabulary of units: the spellings mails and matrices
//! write (`usec`, `KiB/s`, `k IOPS`), their canonical symbols and
//! scales, the unit a report shows a stored metric in, and the typed
//! [`Percent`] of tolerances and noise. The claims reader, the matrix's
//! binding and the renderers all use this table; there is no other.

use anyhow::{Result, bail};
use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::sync::LazyLock;

/// What a quantity measures; units convert only within one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnitKind {
    /// Base: nanoseconds.
    Time,
    /// Base: bytes per second.
    Throughput,
    /// Base: operations (I/Os) per second.
    Rate,
    /// Base: percent.
    Percent,
    /// Base: one event.
    Count,
    /// Base: hertz.
    Frequency,
    /// Base: bytes (`io=92.6GiB`).
    Size,
    /// Base: one time as much (`3.2x`, a speedup or a slowdown).
    Ratio,
}

/// A unit as written, with what it measures and its scale.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// As the mail wrote it: `usec`, `MiB/s`, `k IOPS`.
    pub written: String,
    /// The canonical symbol: `us`, `MiB/s`, `IOPS`; one of a fixed set,
    /// so not copied into every value that carries it.
    pub symbol: std::borrow::Cow<'static, str>,
    pub kind: UnitKind,
    /// A value in this unit times `scale` is in the kind's base unit.
    pub scale: f64,
}

impl Unit {
    /// `value` in this unit, expressed in `to`; None across kinds.
    pub fn convert(&self, value: f64, to: &Unit) -> Option<f64> {
        (self.kind == to.kind).then(|| value * self.scale / to.scale)
    }
}

/// The unit a word names, or None. Accepts the spellings mails use:
/// `usec`, `µs`, `KiB/s`, `k IOPS`, `KIOPS`, `ops/s`, `%`, `MBps`.
pub fn parse_unit(word: &str) -> Option<Unit> {
    let w = word.trim();
    // The longest spelling is `microseconds`: a longer word is no unit.
    if w.is_empty() || w.len() > 16 {
        return None;
    }
    // Read for every word of a mail: borrowed unless there is something
    // to squeeze or lower.
    use std::borrow::Cow;
    let squeezed: Cow<str> = if w.contains(char::is_whitespace) {
        Cow::Owned(w.split_whitespace().collect())
    } else {
        Cow::Borrowed(w)
    };
    let lower: Cow<str> =
        if squeezed.is_ascii() && !squeezed.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Borrowed(&squeezed)
        } else {
            Cow::Owned(squeezed.to_lowercase())
        };
    let (symbol, kind, scale): (&str, UnitKind, f64) = match lower.as_ref() {
        "ns" | "nsec" | "nsecs" | "nanoseconds" => ("ns", UnitKind::Time, 1.0),
        "us" | "usec" | "usecs" | "µs" | "μs" | "microseconds" => ("us", UnitKind::Time, 1e3),
        "ms" | "msec" | "msecs" | "milliseconds" => ("ms", UnitKind::Time, 1e6),
        "s" | "sec" | "secs" | "seconds" | "second" => ("s", UnitKind::Time, 1e9),
        "min" | "mins" | "minutes" => ("min", UnitKind::Time, 60e9),
        "iops" => ("IOPS", UnitKind::Rate, 1.0),
        "kiops" => ("KIOPS", UnitKind::Rate, 1e3),
        "miops" => ("MIOPS", UnitKind::Rate, 1e6),
        "ops/s" | "op/s" | "ops/sec" | "ops" | "qps" | "/s" => ("ops/s", UnitKind::Rate, 1.0),
        "kops/s" | "kops" => ("kops/s", UnitKind::Rate, 1e3),
        "%" | "percent" => ("%", UnitKind::Percent, 1.0),
        "count" | "counts" | "events" => ("count", UnitKind::Count, 1.0),
        "hz" => ("Hz", UnitKind::Frequency, 1.0),
        "khz" => ("kHz", UnitKind::Frequency, 1e3),
        "mhz" => ("MHz", UnitKind::Frequency, 1e6),
        "ghz" => ("GHz", UnitKind::Frequency, 1e9),
        "x" | "×" => ("x", UnitKind::Ratio, 1.0),
        _ => return throughput(&squeezed, w).or_else(|| per_second(&lower, w)),
    };
    Some(Unit {
        written: w.to_string(),
        symbol: symbol.into(),
        kind,
        scale,
    })
}

/// `KB/s`, `kB/s`, `KiB/s`, `MB/s`, `MiB/s`, `GB/s`, `MB/sec`, `MBps`.
/// `KB` is taken as 1000 bytes, as fio's `kB` is.
fn throughput(squeezed: &str, written: &str) -> Option<Unit> {
    static RE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^([kKMGT]?)(i?)B(?:/s|/sec|ps)$").expect("constant regex"));
    if !squeezed.contains('B') {
        return None;
    }
    let c = RE.captures(squeezed)?;
    let binary = !c[2].is_empty();
    let (prefix, power) = match &c[1] {
        "" => ("", 0),
        "k" | "K" => (if binary { "Ki" } else { "k" }, 1),
        "M" => (if binary { "Mi" } else { "M" }, 2),
        "G" => (if binary { "Gi" } else { "G" }, 3),
        _ => (if binary { "Ti" } else { "T" }, 4),
    };
    if binary && power == 0 {
        return None;
    }
    let base: f64 = if binary { 1024.0 } else { 1000.0 };
    Some(Unit {
        written: written.to_string(),
        symbol: known_symbol(format!("{prefix}B/s")),
        kind: UnitKind::Throughput,
        scale: base.powi(power),
    })
}

/// `calls/s`, `req/s`, `flushes/sec`: things per second, a rate.
fn per_second(lower: &str, written: &str) -> Option<Unit> {
    let thing = lower
        .strip_suffix("/s")
        .or_else(|| lower.strip_suffix("/sec"))?;
    // perf's `K/sec`, `M/sec`: thousands or millions a second.
    let (symbol, scale) = match thing {
        "k" => ("kops/s", 1e3),
        "m" => ("Mops/s", 1e6),
        "g" => ("Gops/s", 1e9),
        _ => ("ops/s", 1.0),
    };
    let word = thing.len() >= 2 || scale > 1.0;
    let word = word && thing.len() <= 12 && thing.chars().all(|c| c.is_ascii_lowercase());
    word.then(|| Unit {
        written: written.to_string(),
        symbol: symbol.into(),
        kind: UnitKind::Rate,
        scale,
    })
}

/// The plain count unit, for perf stat events.
pub fn count_unit(written: &str) -> Unit {
    Unit {
        written: written.to_string(),
        symbol: "count".into(),
        kind: UnitKind::Count,
        scale: 1.0,
    }
}

/// A symbol built from parts, borrowed when it is a known one.
fn known_symbol(s: String) -> std::borrow::Cow<'static, str> {
    const KNOWN: [&str; 11] = [
        "B/s", "kB/s", "KB/s", "MB/s", "GB/s", "TB/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "KB/s",
    ];
    match KNOWN.iter().find(|k| **k == s) {
        Some(k) => std::borrow::Cow::Borrowed(k),
        None => std::borrow::Cow::Owned(s),
    }
}

/// `15%` → 0.15; a bare number is taken as a fraction (`0.15`).
pub fn parse_percent(s: &str) -> Result<f64> {
    let t = s.trim();
    let v = if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map(|x| x / 100.0)
    } else {
        t.parse::<f64>()
    };
    match v {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => bail!("expected a percentage such as 15%"),
    }
}

/// The unit to show a metric in, and the divisor from its stored unit,
/// chosen so that the largest value reads with few digits: ms for
/// 1e6..1e9 ns, and so on.
pub fn display_unit(unit: &str, values: impl IntoIterator<Item = f64>) -> (String, f64) {
    let max = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let pick = |steps: &[(&str, f64)]| {
        let (u, s) = steps
            .iter()
            .rev()
            .find(|(_, s)| max >= *s)
            .unwrap_or(&steps[0]);
        (u.to_string(), *s)
    };
    match unit {
        "ns" => pick(&[("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]),
        "B/s" => pick(&[
            ("B/s", 1.0),
            ("KiB/s", 1024.0),
            ("MiB/s", 1024.0 * 1024.0),
            ("GiB/s", 1024.0 * 1024.0 * 1024.0),
        ]),
        "IOPS" => pick(&[("IOPS", 1.0), ("kIOPS", 1e3), ("MIOPS", 1e6)]),
        other => (other.to_string(), 1.0),
    }
}

/// A fraction: `5%` is 0.05.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(pub f64);

impl Percent {
    pub fn parse(s: &str) -> Result<Percent, String> {
        parse_percent(s)
            .map(Percent)
            .map_err(|_| format!("'{s}' is not a percentage: write e.g. 5% or 0.05"))
    }

    pub fn fraction(self) -> f64 {
        self.0
    }
}

impl std::fmt::Display for Percent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let p = (self.0 * 100.0 * 1e6).round() / 1e6;
        write!(f, "{p}%")
    }
}

impl Serialize for Percent {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Percent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Percent;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a percentage such as 5% (or a fraction such as 0.05)")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Percent, E> {
                Percent::parse(v).map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Percent, E> {
                Percent::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Percent, E> {
                Percent::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Percent, E> {
                Percent::parse(&v.to_string()).map_err(E::custom)
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_reads_both_spellings_and_round_trips() {
        let p: Percent = serde_json::from_str("\"5%\"").unwrap();
        assert_eq!(p, Percent(0.05));
        let p: Percent = serde_json::from_str("0.1").unwrap();
        assert_eq!(p, Percent(0.1));
        assert_eq!(serde_json::to_string(&Percent(0.15)).unwrap(), "\"15%\"");
        let e = serde_json::from_str::<Percent>("\"lots\"").unwrap_err();
        assert!(e.to_string().contains("'lots' is not a percentage"), "{e}");
        assert!(serde_json::from_str::<Percent>("\"-5%\"").is_err());
    }

    #[test]
    fn unit_words() {
        let u = |w: &str| parse_unit(w).map(|u| (u.symbol, u.kind, u.scale));
        assert_eq!(u("usec"), Some(("us".into(), UnitKind::Time, 1e3)));
        assert_eq!(u("µs"), Some(("us".into(), UnitKind::Time, 1e3)));
        assert_eq!(u("ns"), Some(("ns".into(), UnitKind::Time, 1.0)));
        assert_eq!(u("ms"), Some(("ms".into(), UnitKind::Time, 1e6)));
        assert_eq!(u("s"), Some(("s".into(), UnitKind::Time, 1e9)));
        assert_eq!(u("KB/s"), Some(("kB/s".into(), UnitKind::Throughput, 1e3)));
        assert_eq!(u("kB/s"), Some(("kB/s".into(), UnitKind::Throughput, 1e3)));
        assert_eq!(
            u("KiB/s"),
            Some(("KiB/s".into(), UnitKind::Throughput, 1024.0))
        );
        assert_eq!(u("MB/s"), Some(("MB/s".into(), UnitKind::Throughput, 1e6)));
        assert_eq!(
            u("MiB/s"),
            Some(("MiB/s".into(), UnitKind::Throughput, 1048576.0))
        );
        assert_eq!(u("GB/s"), Some(("GB/s".into(), UnitKind::Throughput, 1e9)));
        assert_eq!(u("MBps"), Some(("MB/s".into(), UnitKind::Throughput, 1e6)));
        assert_eq!(u("IOPS"), Some(("IOPS".into(), UnitKind::Rate, 1.0)));
        assert_eq!(u("k IOPS"), Some(("KIOPS".into(), UnitKind::Rate, 1e3)));
        assert_eq!(u("KIOPS"), Some(("KIOPS".into(), UnitKind::Rate, 1e3)));
        assert_eq!(u("ops/s"), Some(("ops/s".into(), UnitKind::Rate, 1.0)));
        assert_eq!(u("%"), Some(("%".into(), UnitKind::Percent, 1.0)));
        assert_eq!(u("GHz"), Some(("GHz".into(), UnitKind::Frequency, 1e9)));
        assert_eq!(u("bogus"), None);
        assert_eq!(u("B"), None);
        assert_eq!(parse_unit("usec").unwrap().written, "usec");
    }

    #[test]
    fn stored_units_show_in_few_digits() {
        assert_eq!(display_unit("ns", [1.2e6, 2.0e7]), ("ms".into(), 1e6));
        assert_eq!(display_unit("IOPS", [180_000.0]).0, "kIOPS");
        assert_eq!(display_unit("%", [50.0]), ("%".into(), 1.0));
    }
}
