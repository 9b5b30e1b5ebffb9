use super::testing::{self, Synthetic};
use super::*;
use crate::matrix::Scalar;
use crate::record::knob::{Knob, KnobStatus};
use crate::results::CellStatus;

fn build_of(s: &Synthetic) -> (tempfile::TempDir, RunDir, Report) {
    let d = tempfile::tempdir().unwrap();
    let run = testing::write(d.path(), s).unwrap();
    let report = load(&run).unwrap();
    (d, run, report)
}

fn group(r: &Report, delay: i64) -> &Group {
    r.groups
        .iter()
        .find(|g| g.axes.get("delay") == Some(&Scalar::Int(delay)))
        .unwrap_or_else(|| panic!("no group for delay {delay}"))
}

fn verdict(r: &Report, delay: i64) -> String {
    let g = group(r, delay);
    let c = g
        .comparisons
        .iter()
        .find(|c| c.metric == "write.lat_mean")
        .unwrap();
    c.verdict.to_string()
}

fn cell_mut<'a>(s: &'a mut Synthetic, variant: &str, delay: i64, rep: u32) -> &'a mut CellRecord {
    s.cells
        .iter_mut()
        .find(|c| {
            c.variant == variant && c.rep == rep && c.axes.get("delay") == Some(&Scalar::Int(delay))
        })
        .unwrap()
}

/// io_poll_delay as 6.12 leaves it: written 10, read back -1.
fn ignored_poll_delay() -> Knob {
    Knob {
        path: "/sys/block/nvme0n1/queue/io_poll_delay".into(),
        wanted: "10".into(),
        before: "-1".into(),
        after: "-1".into(),
        status: KnobStatus::Ignored,
        reason: Some("wrote '10', read back '-1'".into()),
        probe: None,
        log: vec![],
        known: Some(
            "hybrid polling is gone: the kernel accepts any write and always reads -1".into(),
        ),
    }
}

fn claims_for_x86(s: &mut Synthetic) {
    s.manifest.matrix.claims[0] = testing::dm_delay_claim("x86_64").unwrap();
}

#[test]
fn dm_delay_verdicts() {
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    assert_eq!(r.groups.len(), 4);
    for d in [1, 2, 5] {
        assert_eq!(verdict(&r, d), "better", "delay {d}");
    }
    assert_eq!(verdict(&r, 20), "no change");
    let g = group(&r, 1);
    assert_eq!(g.config, "arch=x86_64,hz=100");
    assert_eq!(g.run_key, "delay=1");
    let c = &g.comparisons[0];
    assert_eq!(
        (c.base_variant.as_str(), c.variant.as_str()),
        ("before", "after")
    );
    let change = c.change.unwrap();
    assert!((change - (1.2 / 10.0 - 1.0)).abs() < 1e-9, "{change}");
    let [lo, hi] = c.change_ci.unwrap();
    assert!(lo <= change && change <= hi);
    assert_eq!(c.mann_whitney_p, Some(0.1));
    // Per-cell statistics.
    let s = &g.cells[0].metrics[0];
    assert_eq!(s.samples.len(), 3);
    let sm = s.summary.unwrap();
    assert_eq!(sm.n, 3);
    assert!((sm.median - 10e6).abs() < 1.0);
    let [a, b] = s.median_ci.unwrap();
    assert!(a <= sm.median && sm.median <= b);
    // Times are stored in ns and shown in ms.
    assert_eq!(r.metrics[0].display_unit, "ms");
    assert_eq!(r.metrics[0].scale, 1e6);
    // The claim was made on arm64: other conditions on x86_64, with the
    // measured value and the ratio, flagged, and it does not fail the run.
    assert_eq!(r.claims.len(), 8);
    assert!(
        r.claims
            .iter()
            .all(|c| c.status == ClaimStatus::OtherConditions
                && c.measured.is_some()
                && c.ratio.is_some()),
        "{:#?}",
        r.claims
    );
    assert!(
        g.flags.iter().any(|f| f.kind == FlagKind::ClaimConditions),
        "{:?}",
        g.flags
    );
    assert_eq!(exit_code(&r), 0, "{:?}", r.outcome);
    assert!(r.aa_noise.is_empty());
    assert!(r.completeness.complete());
    assert_eq!(r.completeness.planned, 24);
    // Latency distributions from fio's percentiles.
    assert_eq!(g.latency.len(), 2);
    assert_eq!(g.latency[0].dir, "write");
    assert!(g.latency[0].points.iter().any(|p| p[0] == 99.9));
}

#[test]
fn reports_are_reproducible() {
    let s = testing::before_after(3).unwrap();
    let (_d, run, a) = build_of(&s);
    let b = load(&run).unwrap();
    assert_eq!(
        render(&a, Format::Json).unwrap(),
        render(&b, Format::Json).unwrap()
    );
    assert_eq!(
        render(&a, Format::Html).unwrap(),
        render(&b, Format::Html).unwrap()
    );
}

#[test]
fn two_repetitions_are_too_few() {
    let (_d, _run, r) = build_of(&testing::before_after(2).unwrap());
    for d in [1, 2, 5, 20] {
        assert_eq!(verdict(&r, d), "too few runs");
    }
    let mut s = testing::before_after(2).unwrap();
    claims_for_x86(&mut s);
    let (_d, _run, r) = build_of(&s);
    assert!(
        r.claims.iter().all(|c| c.status == ClaimStatus::TooFewRuns),
        "{:#?}",
        r.claims
    );
    assert_eq!(exit_code(&r), 0);
    assert!(render(&r, Format::Text).unwrap().contains("too few runs"));
}

#[test]
fn a_a_run_shows_the_labs_noise() {
    let s = testing::dm_delay(&[("before", &[]), ("again", &[])], 3, |_, delay, rep| {
        let base = if delay == 20 { 20.0 } else { 10.0 };
        base * (1.0 + 0.003 * f64::from(rep) - 0.002 * (delay % 3) as f64)
    })
    .unwrap();
    let (_d, _run, r) = build_of(&s);
    for d in [1, 2, 5, 20] {
        assert_eq!(verdict(&r, d), "no change", "delay {d}");
    }
    assert_eq!(r.aa_noise.len(), 1);
    let aa = &r.aa_noise[0];
    assert_eq!(aa.variants, ["before".to_string(), "again".to_string()]);
    assert_eq!(aa.cells, 4);
    assert!(aa.max_abs_change < 0.05 && !aa.exceeds_noise, "{aa:?}");
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("A/A noise (before vs again"), "{text}");
    assert!(text.contains("median |change|"), "{text}");
    assert!(render(&r, Format::Markdown).unwrap().contains("A/A noise"));
    assert_eq!(exit_code(&r), 0);
}

#[test]
fn a_jiffies_clocksource_is_flagged() {
    let mut s = testing::before_after(3).unwrap();
    cell_mut(&mut s, "after", 2, 2).clocksource_after = "refined-jiffies".into();
    let (_d, _run, r) = build_of(&s);
    let g = group(&r, 2);
    let after = g.cells.iter().find(|c| c.variant == "after").unwrap();
    let f = after
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::JiffiesClocksource && f.message.contains("refined-jiffies"))
        .expect("flag");
    assert_eq!(f.reps, [2]);
    // The two variants were not measured on the same clocksources.
    assert!(
        g.comparisons[0]
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::ClocksourceMismatch),
        "{:?}",
        g.comparisons
    );
    // Other cells carry no such flag.
    assert!(group(&r, 1).cells.iter().all(|c| c.flags.is_empty()));
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("refined-jiffies"), "{text}");
    assert!(
        render(&r, Format::Html)
            .unwrap()
            .contains("refined-jiffies")
    );
}

#[test]
fn an_ignored_knob_is_flagged() {
    let mut s = testing::before_after(3).unwrap();
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 5, rep)
            .knobs
            .push(ignored_poll_delay());
    }
    let (_d, _run, r) = build_of(&s);
    let after = group(&r, 5)
        .cells
        .iter()
        .find(|c| c.variant == "after")
        .unwrap();
    let f = after
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::KnobIgnored)
        .expect("flag");
    assert!(f.message.contains("queue/io_poll_delay"), "{f:?}");
    assert!(f.message.contains("always reads -1"), "{f:?}");
    assert_eq!(f.reps, [1, 2, 3]);
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("io_poll_delay"), "{text}");
}

#[test]
fn host_load_high_cv_and_run_flags_are_carried() {
    let mut s = testing::before_after(3).unwrap();
    cell_mut(&mut s, "before", 1, 1).host_load = [3.5, 1.0, 1.0];
    cell_mut(&mut s, "before", 2, 3)
        .flags
        .push(crate::record::RunFlag::new(
            crate::record::RunFlagKind::ClockEvent,
            "TSC marked unstable",
        ));
    for (rep, v) in [(1, 9.0), (2, 12.0), (3, 10.0)] {
        cell_mut(&mut s, "before", 5, rep).metrics[0].value = v * 1e6;
    }
    let (_d, _run, r) = build_of(&s);
    let before = |d| {
        group(&r, d)
            .cells
            .iter()
            .find(|c| c.variant == "before")
            .unwrap()
    };
    assert!(
        before(1)
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::HostLoad && f.reps == [1])
    );
    assert!(
        before(2)
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::Run && f.message == "TSC marked unstable")
    );
    let cv = before(5)
        .flags
        .iter()
        .find(|f| f.kind == FlagKind::HighCv)
        .expect("cv flag");
    assert_eq!(cv.metric.as_deref(), Some("write.lat_mean"));
}

#[test]
fn text_fits_a_mail_and_shows_claims_next_to_measurements() {
    let mut s = testing::before_after(3).unwrap();
    claims_for_x86(&mut s);
    let (_d, _run, r) = build_of(&s);
    assert!(
        r.claims.iter().all(|c| c.status == ClaimStatus::Reproduced),
        "{:#?}",
        r.claims
    );
    let text = render(&r, Format::Text).unwrap();
    for line in text.lines() {
        assert!(
            line.chars().count() < 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // Claimed and measured on one line.
    let row = text
        .lines()
        .find(|l| l.contains("| 1 ") && l.contains("after") && l.contains("1.16"))
        .unwrap_or_else(|| panic!("no claim row for delay 1:\n{text}"));
    assert!(row.contains("1.20") && row.contains("reproduced"), "{row}");
    assert!(text.contains("9.97"));
    assert!(text.contains("one eighth of the delay"), "{text}");
    // Provenance under the tables.
    for want in [
        "linux 6.12.117",
        SUBJECT_START,
        "HZ:",
        "x86_64",
        "QEMU emulator version 9.2.0 (tcg)",
        "clocksource:",
        "repetitions:",
        "labhost",
        "lab:",
    ] {
        assert!(text.contains(want), "missing {want}:\n{text}");
    }
    assert_eq!(exit_code(&r), 0);
}

const SUBJECT_START: &str = "[PATCH] dm-delay";

#[test]
fn the_default_claim_is_shown_under_other_conditions_in_text() {
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("other conditions"), "{text}");
    // The measured value is there: 1.20 ms against the claimed 1.16.
    let row = text
        .lines()
        .find(|l| l.contains("| 1 ") && l.contains("after") && l.contains("1.16"))
        .unwrap_or_else(|| panic!("no claim row for delay 1:\n{text}"));
    assert!(row.contains("1.20"), "{row}");
    // Said once, above the table, not as a note on every row.
    assert!(
        text.contains("Claimed under: arch=arm64, hz=100."),
        "{text}"
    );
    assert!(!text.contains("[1] claim made for"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() < 80));
}

#[test]
fn html_is_self_contained() {
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    let html = render(&r, Format::Html).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<svg"));
    for bad in [
        "src=\"http",
        "<link",
        "<script",
        "href=\"http",
        "url(",
        "@import",
    ] {
        assert!(!html.contains(bad), "{bad}");
    }
    assert!(!html.contains("http://") && !html.contains("https://"));
    // A plot per metric and configuration, and a latency plot per cell.
    assert_eq!(html.matches("<svg").count(), 1 + 4);
    assert!(html.contains("write clat, arch=x86_64,hz=100,delay=1"));
}

#[test]
fn junit_fails_on_a_regression() {
    let mut s = testing::before_after(3).unwrap();
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 20, rep).metrics[0].value = (25.0 + f64::from(rep) * 0.1) * 1e6;
    }
    let (_d, _run, r) = build_of(&s);
    assert_eq!(verdict(&r, 20), "worse");
    assert_eq!(exit_code(&r), 1);
    assert_eq!(r.outcome.regressions.len(), 1);
    let xml = render(&r, Format::Junit).unwrap();
    assert!(xml.starts_with("<?xml"));
    assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
    assert!(xml.contains("type=\"regression\""));
    assert!(!xml.contains("skipped="), "{xml}");
    assert_eq!(xml.matches("<testcase").count(), 4 + 8 + 1);
    testing::xml_elements(&xml);
}

#[test]
fn json_round_trips() {
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    let json = render(&r, Format::Json).unwrap();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.groups.len(), r.groups.len());
    assert_eq!(exit_code(&back), exit_code(&r));
    // serde_json's float parsing is not always exact to the last bit.
    let a: serde_json::Value = serde_json::from_str(&json).unwrap();
    let b = serde_json::to_value(&back).unwrap();
    assert!(close(&a, &b), "round trip changed the model");
}

fn close(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
        }
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn exit_codes() {
    // 0: all fine (the arm64 claim is only not comparable).
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    assert_eq!(exit_code(&r), 0);
    assert_eq!(r.outcome.exit_code, 0);

    // 1: an unmet claim.
    let mut s = testing::before_after(3).unwrap();
    claims_for_x86(&mut s);
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 1, rep).metrics[0].value = 1.6e6;
    }
    let (_d, _run, r) = build_of(&s);
    assert_eq!(verdict(&r, 1), "better");
    let unmet: Vec<_> = r
        .claims
        .iter()
        .filter(|c| c.status == ClaimStatus::NotReproduced)
        .collect();
    assert_eq!(unmet.len(), 1, "{:#?}", r.claims);
    assert_eq!(
        (unmet[0].row_key.as_str(), unmet[0].variant.as_str()),
        ("1", "after")
    );
    assert!((unmet[0].ratio.unwrap() - 1.6 / 1.16).abs() < 1e-9);
    assert_eq!(exit_code(&r), 1);
    let xml = render(&r, Format::Junit).unwrap();
    assert!(xml.contains("type=\"unmet-claim\""), "{xml}");

    // 2: a planned repetition with no result, and one that failed.
    let mut s = testing::before_after(3).unwrap();
    s.cells.retain(|c| {
        !(c.variant == "after" && c.rep == 3 && c.axes.get("delay") == Some(&Scalar::Int(2)))
    });
    let (_d, _run, r) = build_of(&s);
    assert_eq!(exit_code(&r), 2);
    assert_eq!(r.completeness.missing.len(), 1);
    assert!(
        render(&r, Format::Text)
            .unwrap()
            .contains("rep 3: no result")
    );

    let mut s = testing::before_after(3).unwrap();
    let c = cell_mut(&mut s, "before", 5, 1);
    c.status = CellStatus::Failed;
    c.error = Some("fio: shmget: Function not implemented".into());
    c.metrics.clear();
    let (_d, _run, r) = build_of(&s);
    assert_eq!(exit_code(&r), 2);
    assert_eq!(r.completeness.failed.len(), 1);
    let before = group(&r, 5)
        .cells
        .iter()
        .find(|c| c.variant == "before")
        .unwrap();
    assert_eq!(before.reps_failed.len(), 1);
    assert!(
        before
            .flags
            .iter()
            .any(|f| f.kind == FlagKind::Failed && f.message.contains("shmget"))
    );
    // Two runs left: too few for a verdict, and said so.
    assert_eq!(verdict(&r, 5), "too few runs");
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("failed: fio: shmget"), "{text}");
    let xml = render(&r, Format::Junit).unwrap();
    assert!(xml.contains("<error"), "{xml}");

    // 2: a boot whose last attempt failed.
    let mut s = testing::before_after(3).unwrap();
    s.manifest.boots[0].error = Some("no SSH within 120 s".into());
    let (_d, _run, r) = build_of(&s);
    assert_eq!(exit_code(&r), 2);
    assert!(
        r.outcome
            .incomplete
            .iter()
            .any(|l| l.contains("boot(s) failed"))
    );

    // 2 wins over 1: an incomplete run's verdicts are not final.
    let mut s = testing::before_after(3).unwrap();
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 20, rep).metrics[0].value = 30e6;
    }
    s.cells.pop();
    let (_d, _run, r) = build_of(&s);
    assert_eq!(exit_code(&r), 2);
}

#[test]
fn missing_claim_tables_are_problems() {
    // A bad verdict.noise never reaches the report: the matrix is refused
    // when read (matrix::checks). The default stands when it is absent.
    let mut s = testing::before_after(3).unwrap();
    s.manifest.matrix.verdict.noise = None;
    s.manifest.claim_sources.clear();
    let (_d, _run, r) = build_of(&s);
    assert_eq!(r.settings.noise, 0.05);
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].claim, Some(1), "{:?}", r.problems);
    assert_eq!(exit_code(&r), 2);
}

/// A report.json written before problems were typed holds sentences:
/// they load, keeping the claim number the sentence gave.
#[test]
fn problems_in_words_load_as_typed() {
    let old = r#"["claim 2: tolerance '5x': not a percentage", "the run's plan has no cells"]"#;
    let p: Vec<Problem> = serde_json::from_str(old).unwrap();
    assert_eq!(p[0].claim, Some(2));
    assert_eq!(p[0].detail, "tolerance '5x': not a percentage");
    assert_eq!(p[1].claim, None);
    assert_eq!(
        p[0].to_string(),
        "claim 2: tolerance '5x': not a percentage"
    );
    let typed = Problem::of_claim(3, ProblemKind::ClaimSource, "no mail");
    let back: Problem = serde_json::from_str(&serde_json::to_string(&typed).unwrap()).unwrap();
    assert_eq!(back, typed);
}

#[test]
fn compare_two_runs_by_cell_id() {
    let d = tempfile::tempdir().unwrap();
    let night1 = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let mut s = testing::before_after(3).unwrap();
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 1, rep).metrics[0].value = 1.5e6 + f64::from(rep);
    }
    let night2 = testing::write(d.path(), &s).unwrap();
    let r = load_compare(&night1, &night2).unwrap();
    assert_eq!(r.kind, ReportKind::Compare);
    assert_eq!(r.groups.len(), 8);
    assert_eq!(r.settings.baseline, "a");
    assert_eq!(r.baseline_run.as_deref(), Some(night1.id().as_str()));
    let g = r
        .groups
        .iter()
        .find(|g| g.id.ends_with("-after:delay=1"))
        .unwrap();
    assert_eq!(g.cells.len(), 2);
    assert_eq!(g.comparisons[0].verdict, super::stats::Verdict::Worse);
    assert_eq!(exit_code(&r), 1);
    let same = r
        .groups
        .iter()
        .filter(|g| {
            g.comparisons
                .iter()
                .all(|c| c.verdict == super::stats::Verdict::NoChange)
        })
        .count();
    assert_eq!(same, 7);
    let text = render(&r, Format::Text).unwrap();
    assert!(text.lines().all(|l| l.chars().count() < 80), "{text}");
    assert!(text.contains("variant=after"), "{text}");
    for f in Format::ALL {
        render(&r, f).unwrap();
    }
}

#[test]
fn a_comparison_names_how_the_hosts_differ_and_flags_every_row() {
    let d = tempfile::tempdir().unwrap();
    let night1 = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let mut s = testing::before_after(3).unwrap();
    s.manifest.host.cpu_model = "Another CPU".into();
    for c in s.cells.iter_mut() {
        c.host_load = [5.0, 1.0, 1.0];
    }
    let night2 = testing::write(d.path(), &s).unwrap();
    let r = load_compare(&night1, &night2).unwrap();
    let what: Vec<&str> = r.context_diffs.iter().map(|d| d.what.as_str()).collect();
    assert_eq!(what, vec!["CPU model", "host load (median)"]);
    assert!(
        r.groups
            .iter()
            .all(|g| g.flags.iter().any(|f| f.kind == FlagKind::HostDiffers))
    );
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("The two runs differ"), "{text}");
    assert!(text.contains("CPU model: a "), "{text}");
    assert!(
        text.contains("H  the two runs' hosts or guests differ in 16 of 16"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&render(&r, Format::Json).unwrap()).unwrap();
    assert_eq!(json["context_diffs"][0]["b"], "Another CPU");
}

#[test]
fn two_runs_without_a_common_cell_are_an_error() {
    let d = tempfile::tempdir().unwrap();
    let a = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let mut s = testing::before_after(3).unwrap();
    for c in s.cells.iter_mut() {
        c.cell = format!("other-{}", c.cell);
    }
    let b = testing::write(d.path(), &s).unwrap();
    let e = format!("{:#}", load_compare(&a, &b).unwrap_err());
    assert!(
        e.contains("have no cell in common") && e.contains("other-"),
        "{e}"
    );
    let mut out = Vec::new();
    let e = cmd::compare(&a.id(), &b.id(), d.path(), &[Format::Text], None, &mut out).unwrap_err();
    assert_eq!(crate::error::classify(&e).exit_code(), 3);
}

#[test]
fn command_entry_points() {
    let d = tempfile::tempdir().unwrap();
    let run = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let mut out = Vec::new();
    let code = cmd::report(&run.id(), d.path(), &[Format::Text], None, &mut out).unwrap();
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("dm-delay: "), "{text}");
    assert!(!run.path.join("report.txt").exists());

    // One format alone goes to stdout, as `cargo metadata` does.
    let mut out = Vec::new();
    let code = cmd::report(&run.id(), d.path(), &[Format::Json], None, &mut out).unwrap();
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(json["schema_version"], 1);
    assert!(!run.path.join("report.json").exists());
    // Several are files: only with --out.
    let e = cmd::report(
        &run.id(),
        d.path(),
        &[Format::Junit, Format::Html],
        None,
        &mut Vec::new(),
    )
    .unwrap_err();
    assert_eq!(crate::error::classify(&e).exit_code(), 3);
    assert!(format!("{e:#}").contains("give --out DIR"), "{e:#}");
    let files = d.path().join("files");
    let mut out = Vec::new();
    let code = cmd::report(
        &run.path.display().to_string(),
        Path::new("/nonexistent"),
        &[Format::Junit, Format::Html, Format::Markdown, Format::Json],
        Some(&files),
        &mut out,
    )
    .unwrap();
    assert_eq!(code, 0);
    for f in [
        "report.junit.xml",
        "report.html",
        "report.md",
        "report.json",
    ] {
        assert!(files.join(f).is_file(), "{f}");
    }
    assert!(Format::parse("pdf").is_err());

    let other = testing::write(d.path(), &testing::before_after(3).unwrap()).unwrap();
    let outdir = d.path().join("out");
    let code = cmd::compare(
        &run.id(),
        &other.id(),
        d.path(),
        &[Format::Markdown, Format::Text],
        Some(&outdir),
        &mut Vec::new(),
    )
    .unwrap();
    assert_eq!(code, 0);
    assert!(outdir.join(format!("compare-{}.md", run.id())).is_file());

    write_markdown(&run).unwrap();
    let md = std::fs::read_to_string(run.path.join("report.md")).unwrap();
    assert!(md.starts_with("# dm-delay"));
    assert!(md.contains("| delay | variant | n | median"), "{md}");
}

#[test]
fn summary_is_a_before_after_table() {
    let (_d, _run, r) = build_of(&testing::before_after(3).unwrap());
    let s = text_summary(&r);
    assert!(
        s.contains("write.lat_mean (ms), lower is better: arch=x86_64,hz=100"),
        "{s}"
    );
    assert!(s.contains("| delay | before | after |"), "{s}");
    assert!(s.contains("Result: acceptable"), "{s}");
    assert!(s.lines().all(|l| l.chars().count() < 80));
}

#[test]
fn wrapping_keeps_lines_short() {
    let long = format!(
        "patches:     after: {} (blake3 0123456789ab)\n{}\n",
        "word ".repeat(30),
        "x".repeat(200)
    );
    for l in text::wrap(&long, 79).lines() {
        assert!(l.chars().count() <= 79, "{l}");
    }
}

/// Two variants without patches but from different kernel sources (6.1
/// against 6.12) are an A/B, however alike their names: no A/A line.
#[test]
fn variants_of_different_kernels_are_no_a_a_pair() {
    let mut s = testing::dm_delay(&[("previous", &[]), ("kthread", &[])], 3, |v, _, _| {
        if v == "previous" { 4.0 } else { 2.0 }
    })
    .unwrap();
    for k in s.manifest.kernels.values_mut() {
        if k.variant == "kthread" {
            k.source.version = "6.12.117".into();
            k.key = crate::record::kernel::Key(format!("{}-6.12", k.key.0));
        }
    }
    let (_d, _run, r) = build_of(&s);
    assert!(r.aa_noise.is_empty(), "{:?}", r.aa_noise);
    let text = render(&r, Format::Text).unwrap();
    assert!(!text.contains("A/A noise"), "{text}");
}

/// A run filtered to some cells: a claimed value of the cells it left
/// out is "not in this run", not unbound.
#[test]
fn claimed_values_a_filter_left_out_are_not_in_this_run() {
    let mut s = testing::before_after(3).unwrap();
    claims_for_x86(&mut s);
    s.manifest.matrix.filter = Some("delay=1,delay=2".into());
    s.manifest.plan.cells.retain(|c| {
        c.axes
            .get("delay")
            .is_some_and(|d| ["1", "2"].contains(&d.to_string().as_str()))
    });
    s.cells
        .retain(|c| s.manifest.plan.cells.iter().any(|p| p.id == c.cell));
    let (_d, _run, r) = build_of(&s);
    let out: Vec<_> = r
        .claims
        .iter()
        .filter(|c| c.status == ClaimStatus::NotInRun)
        .collect();
    assert!(!out.is_empty(), "{:#?}", r.claims);
    assert!(
        out.iter()
            .all(|c| c.binds.contains("delay=5") || c.binds.contains("delay=20"))
    );
    assert!(out[0].reasons[0].starts_with("not in this run: its filter (delay=1,delay=2)"));
    assert!(
        r.claims.iter().all(|c| c.status != ClaimStatus::Unbound),
        "{:#?}",
        r.claims
    );
}

#[test]
fn three_variants_and_one() {
    let s = testing::dm_delay(
        &[("before", &[]), ("after", &["m@x"]), ("again", &[])],
        3,
        |v, d, rep| testing::measured_ms(if v == "again" { "before" } else { v }, d, rep),
    )
    .unwrap();
    let (_d, _run, r) = build_of(&s);
    assert_eq!(r.groups[0].comparisons.len(), 2);
    assert_eq!(r.aa_noise.len(), 1);
    assert_eq!(
        r.aa_noise[0].variants,
        ["before".to_string(), "again".to_string()]
    );
    let text = render(&r, Format::Text).unwrap();
    assert!(text.lines().all(|l| l.chars().count() < 80), "{text}");
    assert!(text.contains("| variant |"), "{text}");
    for f in Format::ALL {
        render(&r, f).unwrap();
    }

    let s = testing::dm_delay(&[("before", &[])], 3, testing::measured_ms).unwrap();
    let (_d, _run, r) = build_of(&s);
    assert!(r.groups.iter().all(|g| g.comparisons.is_empty()));
    let text = render(&r, Format::Text).unwrap();
    assert!(text.contains("| median |"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() < 80), "{text}");
    assert_eq!(exit_code(&r), 0);
    for f in Format::ALL {
        render(&r, f).unwrap();
    }
}

/// Renders every format of a run with some of everything into
/// `$LAB_REPORT_DUMP`, to look at: `LAB_REPORT_DUMP=/tmp cargo test
/// --lib report::tests::dump -- --ignored`.
#[test]
#[ignore]
fn dump() {
    let Some(dir) = std::env::var_os("LAB_REPORT_DUMP") else {
        return;
    };
    let mut s = testing::before_after(3).unwrap();
    cell_mut(&mut s, "after", 2, 2).clocksource_after = "refined-jiffies".into();
    cell_mut(&mut s, "after", 5, 1)
        .knobs
        .push(ignored_poll_delay());
    let (_d, _run, r) = build_of(&s);
    let dir = Path::new(&dir);
    for f in Format::ALL {
        std::fs::write(
            dir.join(format!("report.{}", f.extension())),
            render(&r, f).unwrap(),
        )
        .unwrap();
    }
    let three = testing::dm_delay(
        &[("before", &[]), ("after", &["m@x"]), ("again", &[])],
        3,
        |v, d, rep| testing::measured_ms(if v == "again" { "before" } else { v }, d, rep),
    )
    .unwrap();
    let (_d, _run, r) = build_of(&three);
    std::fs::write(dir.join("three.txt"), render(&r, Format::Text).unwrap()).unwrap();
    // And one with a regression, an unmet claim and a failed repetition.
    let mut s = testing::before_after(3).unwrap();
    claims_for_x86(&mut s);
    for rep in 1..=3 {
        cell_mut(&mut s, "after", 20, rep).metrics[0].value = (25.0 + f64::from(rep) * 0.2) * 1e6;
        cell_mut(&mut s, "after", 1, rep).metrics[0].value = (1.6 + f64::from(rep) * 0.01) * 1e6;
    }
    let c = cell_mut(&mut s, "before", 5, 1);
    c.status = CellStatus::Failed;
    c.error = Some("fio: shmget: Function not implemented".into());
    c.metrics.clear();
    let (_d, _run, r) = build_of(&s);
    for f in Format::ALL {
        std::fs::write(
            dir.join(format!("bad.{}", f.extension())),
            render(&r, f).unwrap(),
        )
        .unwrap();
    }
}

/// One-off: the claim sources of the stored runs, extracted again from
/// the repo's copy of their mail with the current extractor, written as
/// JSON to `$TMPDIR/claim-sources.<run>.json`. Splice it into the run's
/// manifest.json (`scripts/migrate-claim-sources` does) when the claim
/// model changes; the measured data stay as they are.
#[test]
#[ignore = "rewrites test data on demand"]
fn regenerate_stored_claim_sources() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    for e in std::fs::read_dir(root.join("tests/data/runs")).unwrap() {
        let dir = e.unwrap().path();
        let text = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
        let m: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        for (i, s) in m["claim_sources"].as_array().unwrap().iter().enumerate() {
            let origin = s["origin"].as_str().unwrap();
            let name = Path::new(origin).file_name().unwrap();
            let mail = root.join("tests/data/patches").join(name);
            let tables = crate::mail::claims::extract(&std::fs::read(&mail).unwrap()).unwrap();
            let claims: Vec<usize> = match s["claims"].as_array() {
                Some(c) => c.iter().map(|x| x.as_u64().unwrap() as usize).collect(),
                None => vec![i + 1],
            };
            out.push(crate::results::ClaimSource {
                claims,
                variant: s["variant"].as_str().unwrap_or_default().to_string(),
                origin: origin.to_string(),
                tables,
            });
        }
        let run = dir.file_name().unwrap().to_string_lossy().into_owned();
        let f = std::env::temp_dir().join(format!("claim-sources.{run}.json"));
        std::fs::write(&f, serde_json::to_string_pretty(&out).unwrap()).unwrap();
    }
}

#[test]
fn a_loaded_host_is_one_legend_line_with_its_range_not_a_footnote_per_cell() {
    let mut s = testing::before_after(3).unwrap();
    for c in s.cells.iter_mut() {
        c.host_load = [2.2 + 0.1 * f64::from(c.rep), 1.0, 1.0];
        c.host_cores = 2;
    }
    cell_mut(&mut s, "before", 2, 3)
        .flags
        .push(crate::record::RunFlag::new(
            crate::record::RunFlagKind::ClockEvent,
            "TSC marked unstable",
        ));
    let (_d, _run, r) = build_of(&s);
    let text = text::render_text(&r).unwrap();
    let cells: usize = r.groups.iter().map(|g| g.cells.len()).sum();
    let legend: Vec<&str> = text.lines().filter(|l| l.starts_with("L  ")).collect();
    assert_eq!(
        legend,
        vec![format!("L  host load above its cores in {cells} of {cells} cells (2.3-2.5): timings may be inflated").as_str()],
        "{text}"
    );
    assert!(text.contains("!  flagged by the run in 1 of"), "{text}");
    assert!(text.contains("   e.g. TSC marked unstable"), "{text}");
    // The tables carry codes, not footnotes.
    let tables = text.split("\nFlags\n").next().unwrap();
    assert!(!tables.contains("[1]"), "{text}");
    assert!(text.lines().any(|l| l.contains("| L,X,! |")), "{text}");
    // The quickstart slice on a loaded host fits a screen.
    assert!(
        text.lines().count() <= 60,
        "{} lines:\n{text}",
        text.lines().count()
    );
}

#[test]
fn contention_alone_says_so_in_the_result_line() {
    use crate::record::host::Contention;
    let mut s = testing::before_after(3).unwrap();
    for c in s.cells.iter_mut() {
        c.contention = Some(Contention {
            contended: true,
            qemu_wait_pct: Some(40.0),
            ..Contention::default()
        });
    }
    let (_d, _run, r) = build_of(&s);
    assert_eq!(exit_code(&r), 2);
    let text = text::render_text(&r).unwrap();
    let line = text.lines().find(|l| l.starts_with("Result:")).unwrap();
    // QEMU waited 40% of each cell: timings may be up to 67% off. That
    // explains the 5 and 20 ms changes (-41%, +6%), not the 1 and 2 ms
    // ones (-88%, -76%), whose verdicts stand, with the flag.
    assert_eq!(
        line,
        "Result: contended host: 2 comparison(s) untrusted, verdicts not final (exit 2)."
    );
    let kept: Vec<_> = r
        .groups
        .iter()
        .flat_map(|g| &g.comparisons)
        .filter(|c| c.verdict != crate::report::stats::Verdict::Untrusted)
        .collect();
    assert_eq!(kept.len(), 2);
    for c in kept {
        assert_eq!(c.verdict, crate::report::stats::Verdict::Better);
        assert!(
            c.flags.iter().any(|f| f.kind == FlagKind::Contended
                && f.message.contains("up to 67%, not enough to explain")),
            "{:?}",
            c.flags
        );
    }
}
