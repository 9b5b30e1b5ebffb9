//! The terminal side of the event stream: progress bars on a terminal,
//! plain timestamped lines elsewhere (CI logs, pipes).

use crate::events::{Event, Events};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct State {
    multi: MultiProgress,
    bars: HashMap<String, (ProgressBar, String)>,
    /// Without a terminal, progress lines are throttled per id.
    last_plain: HashMap<String, std::time::Instant>,
}

/// How often a log (not a terminal) gets a progress line for one piece of work.
const PLAIN_EVERY: Duration = Duration::from_secs(30);

/// Subscribe the terminal to `events`.
pub fn attach(events: Events) -> Events {
    let tty = std::io::stderr().is_terminal();
    let multi = MultiProgress::with_draw_target(if tty {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    });
    let state = Arc::new(Mutex::new(State {
        multi,
        bars: HashMap::new(),
        last_plain: HashMap::new(),
    }));
    events.subscribe(move |e| on_event(&state, tty, e))
}

fn on_event(state: &Mutex<State>, tty: bool, e: &Event) {
    let mut st = state.lock().unwrap();
    match e {
        Event::Started { id, what, total } => {
            if !tty {
                eprintln!("[{}] {what}", stamp());
                return;
            }
            let bar = match total {
                Some(n) => ProgressBar::new(*n).with_style(
                    ProgressStyle::with_template(
                        "{spinner} {prefix} [{bar:20}] {pos}/{len} {msg} ({elapsed})",
                    )
                    .unwrap()
                    .progress_chars("=> "),
                ),
                None => ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{spinner} {prefix} {msg} ({elapsed})").unwrap(),
                ),
            };
            let bar = st.multi.add(bar);
            bar.set_prefix(what.clone());
            bar.enable_steady_tick(Duration::from_millis(200));
            st.bars.insert(id.clone(), (bar, what.clone()));
        }
        Event::Progress { id, phase, done } => {
            if let Some((bar, _)) = st.bars.get(id) {
                bar.set_message(phase.clone());
                if let Some(d) = done {
                    bar.set_position(*d);
                }
            } else if !tty {
                let now = std::time::Instant::now();
                let due = st
                    .last_plain
                    .get(id)
                    .is_none_or(|t| now.duration_since(*t) >= PLAIN_EVERY);
                // Named phases (configure, make) always show; counts are throttled.
                if due || done.is_none() && !phase.contains(' ') {
                    st.last_plain.insert(id.clone(), now);
                    eprintln!("[{}] {id}: {phase}", stamp());
                }
            }
        }
        Event::Finished {
            id,
            ok,
            cached,
            secs,
            message,
        } => {
            let mark = if !ok {
                "FAILED"
            } else if *cached {
                "cached"
            } else {
                "done"
            };
            let line = format!(
                "{mark:>6} {id} {message} ({})",
                crate::util::human_secs(*secs)
            );
            match st.bars.remove(id) {
                Some((bar, _)) => {
                    bar.finish_and_clear();
                    st.multi.remove(&bar);
                    let _ = st.multi.println(line);
                }
                None => eprintln!("{line}"),
            }
        }
        Event::Warning { message } => print_line(&st, tty, &format!("warning: {message}")),
        Event::Note { message } => print_line(&st, tty, message),
    }
}

fn print_line(st: &State, tty: bool, line: &str) {
    if tty && !st.bars.is_empty() {
        let _ = st.multi.println(line);
    } else {
        eprintln!("{line}");
    }
}

fn stamp() -> String {
    chrono::Local::now().format("%H:%M:%S").to_string()
}
