//! A percentage read from YAML (`5%`, or a fraction such as `0.05`),
//! checked when the matrix is read so `noise: lots` fails at plan time
//! with its line and column, not in the report.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A fraction: `5%` is 0.05.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Percent(pub f64);

impl Percent {
    pub fn parse(s: &str) -> Result<Percent, String> {
        crate::util::parse_percent(s)
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
}
