//! What kept lab from checking something: written in `report.json`,
//! found by `results` (a claim's mail) and by `report` (the rest).

use serde::{Deserialize, Serialize};

/// Something that kept lab from checking what it should have: the
/// report is then incomplete (exit 2), never a verdict. Typed so that
/// code finds a claim's problem by its number, not by a sentence's
/// prefix; shown as `claim N: detail` or as the detail alone.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    /// The claim it concerns, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim: Option<usize>,
    pub kind: ProblemKind,
    pub detail: String,
}

/// What kind of problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// A claim's mail or table could not be read.
    ClaimSource,
    /// A claim's tolerance is no percentage.
    ClaimTolerance,
    /// A claim whose table binds to nothing.
    ClaimUnbound,
    /// A value no measurement can give (a negative duration).
    InvalidValue,
    /// One cell's repetition recorded twice.
    DuplicateRecord,
    /// The verdict's baseline is no variant of the run.
    Baseline,
    /// The run planned no cells.
    EmptyPlan,
    /// Written in words by an older lab.
    Other,
}

impl Problem {
    pub fn new(kind: ProblemKind, detail: impl Into<String>) -> Problem {
        Problem {
            claim: None,
            kind,
            detail: detail.into(),
        }
    }

    pub fn of_claim(claim: usize, kind: ProblemKind, detail: impl Into<String>) -> Problem {
        Problem {
            claim: Some(claim),
            ..Problem::new(kind, detail)
        }
    }
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.claim {
            Some(n) => write!(f, "claim {n}: {}", self.detail),
            None => f.write_str(&self.detail),
        }
    }
}

/// Reports written before problems were typed hold plain sentences:
/// they load as `Other`, with the claim number read back from the
/// sentence the old code wrote (`claim N: ...`).
impl<'de> Deserialize<'de> for Problem {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Typed {
            #[serde(default)]
            claim: Option<usize>,
            kind: ProblemKind,
            detail: String,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Stored {
            Typed(Typed),
            Words(String),
        }
        Ok(match Stored::deserialize(d)? {
            Stored::Typed(t) => Problem {
                claim: t.claim,
                kind: t.kind,
                detail: t.detail,
            },
            Stored::Words(w) => {
                let numbered = w.strip_prefix("claim ").and_then(|r| {
                    let (n, rest) = r.split_once(": ")?;
                    Some((n.parse().ok()?, rest))
                });
                match numbered {
                    Some((n, rest)) => Problem::of_claim(n, ProblemKind::Other, rest),
                    None => Problem::new(ProblemKind::Other, w),
                }
            }
        })
    }
}
