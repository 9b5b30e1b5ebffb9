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
