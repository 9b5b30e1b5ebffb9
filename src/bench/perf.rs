//! perf counters around a workload: `perf stat -x,` in the guest.
//!
//! `perf: {events: [...], system_wide: true}` in a matrix wraps each
//! cell's workload in `perf stat` and gives `perf.<event>` metrics. An
//! event the guest cannot count (under TCG there is no PMU, so `cycles`
//! and `instructions` are `<not supported>`) is recorded as such, with
//! perf's own reason, and flagged: never as 0, and never dropped.

use super::Metric;
pub use crate::record::bench::{PerfCount, PerfStatus};
use anyhow::{Result, bail};

/// Where perf's CSV goes in the guest, so it never mixes with the
/// workload's own output.
pub const CSV: &str = "/tmp/lab-perf.csv";

/// Event names perf accepts: letters, digits and `-_:./=,` inside one
/// name are refused here (`,` separates events on perf's command line).
pub fn check_event(name: &str) -> Result<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_:./".contains(c))
    {
        bail!("bad perf event '{name}': expected a perf event name such as context-switches");
    }
    Ok(())
}

/// The workload's command line wrapped in `perf stat`: `argv` is the
/// workload, already shell-quoted.
pub fn wrap(events: &[String], system_wide: bool, argv: &str) -> String {
    let mut s = format!("perf stat -x, -o {CSV} -e {}", events.join(","));
    if system_wide {
        s.push_str(" -a");
    }
    s.push_str(" -- ");
    s.push_str(argv);
    s
}

/// The command that prints perf's reason for an event it did not count.
pub fn reason_command(event: &str) -> String {
    format!("perf stat -v -x, -e {event} -- true 2>&1 >/dev/null")
}

/// perf's reason, from `reason_command`'s output: its warning lines.
pub fn reason_from(output: &str, event: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && (l.contains("not supported")
                    || l.contains(event) && !l.starts_with(&format!("{event}:"))
                    || l.contains("perf_event_open")
                    || l.contains("PMU"))
        })
        .filter(|l| !l.starts_with("Using ") && !l.starts_with("<not supported>"))
        .collect();
    if lines.is_empty() {
        "perf printed <not supported>".to_string()
    } else {
        lines.join(" ")
    }
}

/// After a wrapped workload: read perf's CSV, and ask perf why for each
/// event it did not count.
pub async fn collect(
    s: &crate::guest::ssh::Session,
    perf: &crate::matrix::perf::Perf,
) -> Result<Vec<PerfCount>> {
    let csv = s
        .exec(&format!("cat {CSV}; rm -f {CSV}"))
        .await?
        .check("reading perf stat's output")?
        .stdout;
    let mut counts = parse(&csv, &perf.events);
    for c in counts
        .iter_mut()
        .filter(|c| c.status == PerfStatus::NotSupported)
    {
        let out = s.exec(&reason_command(&c.event)).await?;
        c.reason = Some(reason_from(&out.stdout, &c.event));
    }
    Ok(counts)
}

/// One count per requested event, from `perf stat -x,` output.
pub fn parse(csv: &str, events: &[String]) -> Vec<PerfCount> {
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split(',').collect())
        .filter(|f: &Vec<&str>| f.len() >= 3)
        .collect();
    events
        .iter()
        .map(|ev| {
            let row = rows.iter().find(|f| {
                let name = f[2].trim();
                name == ev || name.split_once(':').is_some_and(|(n, _)| n == ev)
            });
            let Some(f) = row else {
                return PerfCount {
                    event: ev.clone(),
                    status: PerfStatus::Missing,
                    value: None,
                    unit: String::new(),
                    reason: Some("perf printed no line for it".into()),
                };
            };
            let (raw, unit) = (f[0].trim(), f[1].trim());
            let (status, value) = match raw {
                "<not supported>" => (PerfStatus::NotSupported, None),
                "<not counted>" => (PerfStatus::NotCounted, None),
                v => match v.parse::<f64>() {
                    Ok(x) => (PerfStatus::Counted, Some(x)),
                    Err(_) => (PerfStatus::Missing, None),
                },
            };
            // Clocks come in msec: lab keeps times in ns.
            let (value, unit) = match (value, unit) {
                (Some(x), "msec") => (Some(x * 1e6), "ns".to_string()),
                (v, "") => (v, "count".to_string()),
                (v, u) => (v, u.to_string()),
            };
            PerfCount {
                event: ev.clone(),
                status,
                value,
                unit,
                reason: match status {
                    PerfStatus::Counted => None,
                    PerfStatus::Missing => Some(format!("perf printed '{raw}'")),
                    _ => Some(format!("perf printed {raw}")),
                },
            }
        })
        .collect()
}

/// `perf.<event>` metrics for the counted events only; the others stay
/// in the cell's perf record, as not supported, and are flagged.
pub fn metrics(counts: &[PerfCount]) -> Vec<Metric> {
    counts
        .iter()
        .filter_map(|c| {
            c.value
                .filter(|_| c.status == PerfStatus::Counted)
                .map(|v| Metric::new(format!("perf.{}", c.event), v, &c.unit))
        })
        .collect()
}

/// The flags a cell carries for events perf did not count.
pub fn flags(counts: &[PerfCount]) -> Vec<crate::record::RunFlag> {
    counts
        .iter()
        .filter(|c| c.status != PerfStatus::Counted)
        .map(|c| {
            let detail = format!(
                "perf event {}: {}{}",
                c.event,
                c.status.word(),
                c.reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default()
            );
            crate::record::RunFlag::new(crate::record::RunFlagKind::PerfEvent, detail)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evs() -> Vec<String> {
        [
            "context-switches",
            "cpu-migrations",
            "task-clock",
            "cycles",
            "instructions",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// perf 6.1's `stat -x, -a` in a TCG guest (no PMU).
    const TCG: &str = "# started on Mon Nov 30 20:01:02 2026\n\n\
        1027,,context-switches,2003456789,100.00,512.654,/sec\n\
        3,,cpu-migrations,2003456789,100.00,1.497,/sec\n\
        2003.46,msec,task-clock,2003456789,100.00,1.000,CPUs utilized\n\
        <not supported>,,cycles,0,100.00,,\n\
        <not supported>,,instructions,0,100.00,,\n";

    #[test]
    fn counted_events_are_metrics_and_unsupported_ones_are_not_zero() {
        let c = parse(TCG, &evs());
        assert_eq!(c.len(), 5, "none dropped");
        assert_eq!(c[0].status, PerfStatus::Counted);
        assert_eq!((c[0].value, c[0].unit.as_str()), (Some(1027.0), "count"));
        assert_eq!((c[2].value, c[2].unit.as_str()), (Some(2003.46e6), "ns"));
        for x in &c[3..] {
            assert_eq!(x.status, PerfStatus::NotSupported, "{x:?}");
            assert_eq!(x.value, None);
        }
        let m = metrics(&c);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "perf.context-switches",
                "perf.cpu-migrations",
                "perf.task-clock"
            ]
        );
        let f = flags(&c);
        assert!(
            f.iter()
                .all(|f| f.kind == crate::record::RunFlagKind::PerfEvent)
        );
        assert_eq!(
            f.iter().map(|f| f.detail.as_str()).collect::<Vec<_>>(),
            [
                "perf event cycles: not supported (perf printed <not supported>)",
                "perf event instructions: not supported (perf printed <not supported>)"
            ]
        );
    }

    #[test]
    fn modifiers_missing_lines_and_not_counted() {
        let c = parse(
            "12,,cycles:u,100,50.00,,\n<not counted>,,instructions,0,0.00,,\n",
            &evs(),
        );
        assert_eq!(c[0].status, PerfStatus::Missing);
        assert_eq!(c[3].value, Some(12.0));
        assert_eq!(c[4].status, PerfStatus::NotCounted);
    }

    #[test]
    fn the_wrapper_and_reason() {
        let w = wrap(&evs()[..2], true, "fio --name=x");
        assert_eq!(
            w,
            "perf stat -x, -o /tmp/lab-perf.csv -e context-switches,cpu-migrations -a -- fio --name=x"
        );
        let out = "Using CPUID GenuineIntel-6-55-4\n\
                   Warning:\ncycles event is not supported by the kernel.\n\
                   cycles: 0 0 0\n<not supported>,,cycles,0,100.00,,\n";
        assert_eq!(
            reason_from(out, "cycles"),
            "cycles event is not supported by the kernel."
        );
        check_event("context-switches").unwrap();
        check_event("cycles:u").unwrap();
        assert!(check_event("a,b").is_err());
        assert!(check_event("x; rm").is_err());
    }
}
