//! JUnit XML for CI: a test case per compared cell and metric and per
//! claim; regressions and unmet claims are failures, an incomplete run
//! is an error. Only the attributes every JUnit schema knows are
//! written: name, tests, failures, errors, time, classname, and
//! message and type on failures.

use super::numbers as num;
use super::{ClaimStatus, Report};
use anyhow::Result;
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use std::time::Duration;

/// A cell's seconds as a Duration; nonsense (NaN, negative, 1e308 from
/// an edited cell.json) must not panic the report.
fn secs(s: f64) -> Duration {
    if s.is_finite() && s > 0.0 {
        Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX)
    } else {
        Duration::ZERO
    }
}

fn failure(kind: NonSuccessKind, ty: &str, message: String, description: String) -> TestCaseStatus {
    let mut st = TestCaseStatus::non_success(kind);
    st.set_type(ty)
        .set_message(message)
        .set_description(description);
    st
}

pub fn render(r: &Report) -> Result<String> {
    let mut report = quick_junit::Report::new(format!("lab {}", r.title));
    let prefix = format!("lab.{}", r.matrix.name);
    let (cmp_suite, total) = comparisons(r, &prefix);
    report.add_test_suite(cmp_suite);
    if !r.claims.is_empty() {
        report.add_test_suite(claims(r, &prefix));
    }
    report.add_test_suite(run(r, &prefix));
    report.set_time(secs(total));

    let xml = report.to_string()?;
    Ok(strip_skipped(&xml))
}

/// One test case per comparison, failed when it is a regression; the
/// suite's time, the cells' own, is returned beside it.
fn comparisons(r: &Report, prefix: &str) -> (TestSuite, f64) {
    let mut cmp_suite = TestSuite::new(format!("{}: comparisons", r.title));
    let mut total = 0.0;
    for g in &r.groups {
        let cell_secs = |variant: &str| {
            g.cells
                .iter()
                .find(|c| c.variant == variant)
                .map(|c| c.secs)
                .unwrap_or(0.0)
        };
        for c in &g.comparisons {
            let unit = r
                .metrics
                .iter()
                .find(|m| m.name == c.metric)
                .map(|m| (m.display_unit.clone(), m.scale))
                .unwrap_or_default();
            let value = |v: Option<f64>| {
                if unit.1 > 0.0 {
                    format!("{} {}", num::opt_value(v.map(|x| x / unit.1)), unit.0)
                } else {
                    num::opt_value(v)
                }
            };
            let detail = format!(
                "{} {}: {} {} -> {} {}, change {} (95% CI {}), Mann-Whitney p {}, verdict {}",
                c.metric,
                g.id,
                c.base_variant,
                value(c.base_median),
                c.variant,
                value(c.median),
                num::opt_change(c.change),
                num::change_ci(c.change_ci),
                num::p_value(c.mann_whitney_p),
                c.verdict
            );
            let flags = super::text::group_flags(g, &c.metric);
            let description = if flags.is_empty() {
                detail.clone()
            } else {
                format!("{detail}\nflags:\n{}", flags.join("\n"))
            };
            let status = if c.regression {
                failure(
                    NonSuccessKind::Failure,
                    "regression",
                    format!(
                        "{} is worse than {} by {}",
                        c.variant,
                        c.base_variant,
                        num::opt_change(c.change)
                    ),
                    description,
                )
            } else {
                TestCaseStatus::success()
            };
            let mut tc = TestCase::new(
                format!("{} {} vs {} {}", g.id, c.variant, c.base_variant, c.metric),
                status,
            );
            let t = cell_secs(&c.variant) + cell_secs(&c.base_variant);
            total += t;
            tc.set_classname(if g.config.is_empty() {
                prefix.to_string()
            } else {
                format!("{prefix}.{}", g.config)
            })
            .set_time(secs(t));
            cmp_suite.add_test_case(tc);
        }
    }
    cmp_suite.set_time(secs(total));
    (cmp_suite, total)
}

/// One test case per claimed value, failed when it is not reproduced.
fn claims(r: &Report, prefix: &str) -> TestSuite {
    let mut suite = TestSuite::new(format!("{}: claims", r.title));
    for c in &r.claims {
        let detail = format!(
            "claim {} ({}={} {}): claimed {} {}, measured {} {}, ratio {}, tolerance {}, {}{}",
            c.claim,
            c.row_axis,
            c.row_key,
            c.column,
            num::opt_value(c.claimed),
            c.unit,
            num::opt_value(c.measured),
            c.unit,
            num::ratio(c.ratio),
            num::percent(c.tolerance),
            c.status,
            if c.reasons.is_empty() {
                String::new()
            } else {
                format!("\n{}", c.reasons.join("\n"))
            }
        );
        let status = if c.status == ClaimStatus::NotReproduced {
            failure(
                NonSuccessKind::Failure,
                "unmet-claim",
                format!(
                    "claimed {} {}, measured {} {} (ratio {}, tolerance {})",
                    num::opt_value(c.claimed),
                    c.unit,
                    num::opt_value(c.measured),
                    c.unit,
                    num::ratio(c.ratio),
                    num::percent(c.tolerance)
                ),
                detail,
            )
        } else {
            TestCaseStatus::success()
        };
        // The status is in the name: an unbound or not-applicable
        // claim passes, but a reader of the CI page still sees it.
        let name = if c.group.is_empty() {
            format!(
                "claim {} {}={} {}: {}",
                c.claim, c.row_axis, c.row_key, c.column, c.status
            )
        } else {
            format!("claim {} {} {}: {}", c.claim, c.group, c.variant, c.status)
        };
        let mut tc = TestCase::new(name, status);
        tc.set_classname(format!("{prefix}.claims"))
            .set_time(Duration::ZERO);
        suite.add_test_case(tc);
    }
    suite.set_time(Duration::ZERO);
    suite
}

/// One test case: every planned cell finished and nothing kept lab from
/// checking; an error (not a failure) otherwise.
fn run(r: &Report, prefix: &str) -> TestSuite {
    let mut run = TestSuite::new(format!("{}: run", r.title));
    let complete = r.completeness.complete() && r.problems.is_empty();
    let status = if complete {
        TestCaseStatus::success()
    } else {
        failure(
            NonSuccessKind::Error,
            "incomplete",
            r.outcome.incomplete.join("; "),
            super::text::incomplete_lines(r).join("\n"),
        )
    };
    let mut tc = TestCase::new("every planned cell finished", status);
    tc.set_classname(format!("{prefix}.run"))
        .set_time(Duration::ZERO);
    run.add_test_case(tc);
    run.set_time(Duration::ZERO);
    run
}

/// quick-junit always writes `skipped`, which the common JUnit schemas
/// do not allow on `<testsuites>` (and the strict ones nowhere). This
/// report never skips, so the attribute goes.
fn strip_skipped(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    for line in xml.split_inclusive('\n') {
        let t = line.trim_start();
        if t.starts_with("<testsuites") || t.starts_with("<testsuite ") {
            out.push_str(&line.replacen(" skipped=\"0\"", "", 1));
        } else {
            out.push_str(line);
        }
    }
    out
}
