//! One typed event stream for the whole pipeline.
//!
//! Stages emit events; they never print. The progress bars, the plain
//! log for non-terminals, and tests all subscribe to the same stream, the
//! way cargo-nextest keeps its runner and reporter apart.

use serde::Serialize;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A long piece of work began. `total` is set when it can be counted.
    Started {
        id: String,
        what: String,
        total: Option<u64>,
    },
    /// The work moved on: a phase name, or a count towards `total`.
    Progress {
        id: String,
        phase: String,
        done: Option<u64>,
    },
    /// The work ended. `cached` means nothing had to be done.
    Finished {
        id: String,
        ok: bool,
        cached: bool,
        secs: f64,
        message: String,
    },
    /// Something a user must see, such as a fuzzed hunk or an ignored knob.
    Warning { message: String },
    /// A plain line of information.
    Note { message: String },
}

type Sink = Arc<dyn Fn(&Event) + Send + Sync>;

/// A cloneable handle that fans each event out to every subscriber.
#[derive(Clone, Default)]
pub struct Events {
    sinks: Vec<Sink>,
}

impl Events {
    /// An event stream nobody listens to, for library calls and tests
    /// that only care about results.
    pub fn silent() -> Self {
        Events::default()
    }

    pub fn subscribe(mut self, sink: impl Fn(&Event) + Send + Sync + 'static) -> Self {
        self.sinks.push(Arc::new(sink));
        self
    }

    pub fn emit(&self, e: Event) {
        for s in &self.sinks {
            s(&e);
        }
    }

    pub fn started(&self, id: &str, what: &str, total: Option<u64>) {
        self.emit(Event::Started {
            id: id.into(),
            what: what.into(),
            total,
        });
    }

    pub fn phase(&self, id: &str, phase: &str) {
        self.emit(Event::Progress {
            id: id.into(),
            phase: phase.into(),
            done: None,
        });
    }

    pub fn count(&self, id: &str, phase: &str, done: u64) {
        self.emit(Event::Progress {
            id: id.into(),
            phase: phase.into(),
            done: Some(done),
        });
    }

    pub fn finished(
        &self,
        id: &str,
        ok: bool,
        cached: bool,
        secs: f64,
        message: impl Into<String>,
    ) {
        self.emit(Event::Finished {
            id: id.into(),
            ok,
            cached,
            secs,
            message: message.into(),
        });
    }

    pub fn warn(&self, message: impl Into<String>) {
        self.emit(Event::Warning {
            message: message.into(),
        });
    }

    pub fn note(&self, message: impl Into<String>) {
        self.emit(Event::Note {
            message: message.into(),
        });
    }
}

/// Collects events in memory; tests assert on what a stage reported.
#[derive(Clone, Default)]
pub struct Recorder(Arc<Mutex<Vec<Event>>>);

impl Recorder {
    pub fn attach(&self, events: Events) -> Events {
        let me = self.clone();
        events.subscribe(move |e| me.0.lock().unwrap().push(e.clone()))
    }

    pub fn events(&self) -> Vec<Event> {
        self.0.lock().unwrap().clone()
    }

    pub fn warnings(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Event::Warning { message } => Some(message),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subscriber_sees_every_event() {
        let a = Recorder::default();
        let b = Recorder::default();
        let ev = b.attach(a.attach(Events::silent()));
        ev.warn("hunk #1 needed fuzz 3");
        ev.finished("k1", true, true, 0.1, "cache hit");
        assert_eq!(a.events(), b.events());
        assert_eq!(a.warnings(), vec!["hunk #1 needed fuzz 3".to_string()]);
    }
}

/// How long each piece of work took, from its `Finished` events: the
/// time line `lab run` prints at its end, so a slow first result says
/// where its minutes went.
#[derive(Clone, Default)]
pub struct Timeline(Arc<std::sync::Mutex<TimelineState>>);

#[derive(Default)]
struct TimelineState {
    done: Vec<(String, f64, bool)>,
    attached: Option<std::time::Instant>,
    /// Seconds from `attach` to the start of the cells.
    cells_at: Option<f64>,
}

impl Timeline {
    /// `events`, with this time line listening.
    pub fn attach(&self, events: Events) -> Events {
        let t = self.clone();
        if let Ok(mut s) = self.0.lock() {
            s.attached = Some(std::time::Instant::now());
        }
        events.subscribe(move |e| {
            let Ok(mut s) = t.0.lock() else { return };
            match e {
                Event::Finished {
                    id, secs, cached, ..
                } => s.done.push((id.clone(), *secs, *cached)),
                Event::Started { id, .. } if id == "cells" && s.cells_at.is_none() => {
                    s.cells_at = s.attached.map(|a| a.elapsed().as_secs_f64());
                }
                _ => {}
            }
        })
    }

    /// `kernels 412.0 s (1 built, 1 cached), images 31.0 s (1 built),
    /// boots and cells 118.3 s; total 530.3 s` for a run of `total`
    /// seconds whose kernels have the ids `kernels`. Images build beside
    /// the kernels, so boots and cells are what follows both.
    pub fn line(&self, kernels: &[String], total: f64) -> String {
        let (v, cells_at) = self
            .0
            .lock()
            .map(|s| (s.done.clone(), s.cells_at))
            .unwrap_or_default();
        let part = |pick: &dyn Fn(&str) -> bool| {
            let xs: Vec<&(String, f64, bool)> = v.iter().filter(|(id, ..)| pick(id)).collect();
            let secs: f64 = xs.iter().map(|x| x.1).sum();
            let cached = xs.iter().filter(|x| x.2).count();
            (secs, xs.len() - cached, cached)
        };
        let (ks, kb, kc) = part(&|id| kernels.iter().any(|k| k == id));
        let (is, ib, ic) = part(&|id| id.starts_with("image"));
        let rest = (total - cells_at.unwrap_or(ks + is)).max(0.0);
        let how = |b: usize, c: usize| match (b, c) {
            (0, 0) => String::new(),
            (0, _) => " (cached)".into(),
            (_, 0) => format!(" ({b} built)"),
            _ => format!(" ({b} built, {c} cached)"),
        };
        format!(
            "time line: kernels {ks:.1} s{}, images {is:.1} s{}, boots and cells {rest:.1} s; total {total:.1} s",
            how(kb, kc),
            how(ib, ic)
        )
    }
}

#[cfg(test)]
mod timeline_tests {
    use super::*;

    #[test]
    fn the_time_line_sums_kernels_and_images_and_leaves_the_rest_to_cells() {
        let t = Timeline::default();
        let e = t.attach(Events::silent());
        e.finished("x86_64-hz100-before", true, false, 400.0, "built");
        e.finished("x86_64-hz100-after", true, true, 0.0, "cache hit");
        e.finished("image-x86_64", true, true, 0.0, "cached");
        let kernels = vec![
            "x86_64-hz100-before".to_string(),
            "x86_64-hz100-after".to_string(),
        ];
        assert_eq!(
            t.line(&kernels, 520.0),
            "time line: kernels 400.0 s (1 built, 1 cached), images 0.0 s (cached), boots and cells 120.0 s; total 520.0 s"
        );
        // Once the cells start, what came before is kernels and images
        // side by side: the rest is measured from there.
        let t = Timeline::default();
        let e = t.attach(Events::silent());
        e.finished("image-x86_64", true, false, 0.05, "built");
        e.started("cells", "cells", Some(1));
        let line = t.line(&[], 10.0);
        assert!(line.contains("images 0.1 s (1 built)"), "{line}");
        let rest: f64 = line.split("boots and cells ").nth(1).unwrap()[..4]
            .trim()
            .parse()
            .unwrap();
        assert!(rest > 9.0 && rest <= 10.0, "{line}");
    }
}
