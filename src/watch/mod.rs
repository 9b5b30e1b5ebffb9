//! `lab watch`: a claims robot that follows a mailing list. Each new
//! message is classified; a patch (or series, or a reply with results to
//! a patch it knows) with numbers is drafted with `lab new`, the draft's
//! own checks decide whether it may run, a budget decides how much of
//! it runs, one run at a time, and the reply goes into an outbox maildir
//! for a person to read and send. Nothing is ever sent.
//!
//! Every decision is written to SQLite (`state`) as it is made, so a
//! restart, even after `kill -9` mid-run, goes on where it stopped: the
//! run is resumed and no message is handled twice.
//!
//! Mails are never executed: their commands reach a guest only as matrix
//! steps the drafter wrote, and each run boots its own VMs.

pub mod budget;
pub mod classify;
pub mod index;
pub mod reply;
pub mod source;
pub mod state;

use crate::cache::Cache;
use crate::events::Events;
use crate::vm::Accel;
use anyhow::{Context, Result};
use source::Source;
use state::{Kind, Row, State, Status, Work};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Options {
    pub dir: PathBuf,
    pub once: bool,
    /// Seconds between passes over the source.
    pub poll: Duration,
    /// Estimated seconds one mail may cost, and all mails of one day.
    pub per_mail: f64,
    pub per_day: f64,
    /// Seconds after a series' last patch arrived before an incomplete
    /// series is handled with the patches it has.
    pub quiet: f64,
    pub from: String,
    /// False: draft and budget, but run nothing (`--no-run`).
    pub run: bool,
    pub accel: Option<Accel>,
    pub cell_timeout: Duration,
}

/// The watch directory: state, stored mails, drafts, runs and outbox.
pub struct Watch {
    pub dir: PathBuf,
    pub state: State,
}

impl Watch {
    pub fn open(dir: &Path) -> Result<Watch> {
        for d in [
            "mails",
            "drafts",
            "runs",
            "outbox/tmp",
            "outbox/new",
            "outbox/cur",
        ] {
            std::fs::create_dir_all(dir.join(d))
                .with_context(|| format!("creating {}", dir.join(d).display()))?;
        }
        let state = State::open(&dir.join("state.sqlite"))?;
        Ok(Watch {
            dir: dir.to_path_buf(),
            state,
        })
    }

    /// Store every message the source has not handed out before.
    pub fn ingest(&mut self, src: &Source, events: &Events) -> Result<usize> {
        let id = src.id();
        let mut n = 0;
        loop {
            crate::interrupt::check()?;
            let batch = {
                let state = &self.state;
                src.poll(&|k| state.cursor(&id, k).ok().flatten(), 200)?
            };
            if batch.is_empty() {
                return Ok(n);
            }
            for inc in batch {
                let hash = crate::util::hash_bytes(&inc.raw);
                let rel = format!("mails/{}.eml", crate::util::prefix(&hash, 24));
                let path = self.dir.join(&rel);
                if !path.exists() {
                    crate::util::atomic_write(&path, &inc.raw)?;
                }
                let row = classify::classify(&inc.raw, &rel, state::now());
                let (s, k, v) = &inc.cursor;
                if self.state.insert(&row, Some((s, k, v)))? {
                    n += 1;
                    // A line for what may need work; the rest are counted
                    // (a first pass over an archive is many thousands).
                    if row.kind == Kind::Patch || row.numbers > 0 {
                        events.note(format!(
                            "new {}: {} <{}>",
                            row.kind.as_str(),
                            clip(&row.subject, 60),
                            clip(&row.msgid, 60)
                        ));
                    }
                } else {
                    events.note(format!(
                        "seen before: <{}> (a resend or cross-post)",
                        clip(&row.msgid, 60)
                    ));
                }
            }
        }
    }

    /// Decide what each new or waiting message needs, drafting where
    /// there is something to run. A message's failure is recorded
    /// against it; the robot goes on.
    pub fn triage(&mut self, opts: &Options, cache: &Cache, events: &Events) -> Result<()> {
        let mut rows = self.state.with_status(Status::New)?;
        rows.extend(self.state.with_status(Status::Waiting)?);
        for row in rows {
            crate::interrupt::check()?;
            // A row handled earlier in this pass (a series' other patches).
            let Some(now) = self.state.get(&row.msgid)? else {
                continue;
            };
            if !matches!(now.status, Status::New | Status::Waiting) {
                continue;
            }
            self.triage_one(&now, opts, cache, events)?;
        }
        // Drafts that waited for the day's budget: those the per-mail
        // budget let through carry an estimate.
        for row in self.state.with_status(Status::OverBudget)? {
            if let Some(est) = row.work.estimate_secs {
                self.grant(&row.msgid, est, "", opts)?;
            }
        }
        Ok(())
    }

    fn triage_one(
        &mut self,
        row: &Row,
        opts: &Options,
        cache: &Cache,
        events: &Events,
    ) -> Result<()> {
        let ignore = |why: &str| self.set(row, Status::Ignored, why, events);
        match row.kind {
            Kind::Malformed => Ok(()),
            Kind::Other => ignore(if row.numbers > 0 {
                "numbers, but neither a patch nor a reply to one"
            } else {
                "neither a patch nor a reply to one"
            }),
            Kind::Reply => {
                let Some(parent) = self.known_patch(&row.refs)? else {
                    return ignore("a reply, to no patch lab has seen");
                };
                if row.numbers == 0 {
                    return ignore("a reply without numbers of its own");
                }
                let mut thread = self.thread_of(&parent)?;
                thread.push(row.clone());
                self.draft(row, &thread, opts, cache, events)
            }
            Kind::Patch => match &row.series {
                None if row.numbers == 0 => ignore("a patch without numbers"),
                None => self.draft(row, std::slice::from_ref(row), opts, cache, events),
                Some(key) => self.triage_series(row, key, opts, cache, events),
            },
        }
    }

    /// A series is handled once, at its head (the cover letter, or its
    /// first patch), when every patch is in or its quiet period passed.
    fn triage_series(
        &mut self,
        row: &Row,
        key: &str,
        opts: &Options,
        cache: &Cache,
        events: &Events,
    ) -> Result<()> {
        let members = self.state.series(key)?;
        let total = row.total.unwrap_or(1);
        let have: Vec<u32> = members.iter().filter_map(|m| m.part).collect();
        let missing: Vec<String> = (1..=total)
            .filter(|p| !have.contains(p))
            .map(|p| p.to_string())
            .collect();
        let last = members.iter().map(|m| m.first_seen).max().unwrap_or(0);
        if !missing.is_empty() && ((state::now() - last) as f64) < opts.quiet {
            let why = format!(
                "series: waiting for patch {} of {total}",
                missing.join(", ")
            );
            return self.set(row, Status::Waiting, &why, events);
        }
        let head = members
            .iter()
            .min_by_key(|m| (m.part.unwrap_or(u32::MAX), m.first_seen))
            .unwrap_or(row);
        for m in &members {
            if m.msgid != head.msgid {
                let why = format!("handled with the series' head <{}>", head.msgid);
                self.state.set_status(&m.msgid, Status::InSeries, &why)?;
            }
        }
        if members.iter().map(|m| m.numbers).sum::<u32>() == 0 {
            return self.set(head, Status::Ignored, "a series without numbers", events);
        }
        let head = head.clone();
        self.draft(&head, &members, opts, cache, events)
    }

    /// The patch (or series head) lab has seen that a reply's references name.
    fn known_patch(&self, refs: &[String]) -> Result<Option<Row>> {
        for id in refs.iter().rev() {
            if let Some(r) = self.state.get(id)?
                && r.kind == Kind::Patch
            {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// The mails a reply's draft reads before the reply: the patch, or
    /// its whole series in order.
    fn thread_of(&self, patch: &Row) -> Result<Vec<Row>> {
        match &patch.series {
            Some(k) => self.state.series(k),
            None => Ok(vec![patch.clone()]),
        }
    }

    fn set(&self, row: &Row, status: Status, why: &str, events: &Events) -> Result<()> {
        self.state.set_status(&row.msgid, status, why)?;
        if status == Status::Ignored && row.numbers == 0 {
            // Most of a list: counted in the pass's summary instead.
            return Ok(());
        }
        events.note(format!(
            "<{}>: {}: {}",
            clip(&row.msgid, 60),
            status.as_str(),
            clip(why, 300)
        ));
        Ok(())
    }

    /// Draft `row` from `thread` (an mbox of the mails in order), check
    /// the draft, and let the budget decide how much of it runs.
    fn draft(
        &mut self,
        row: &Row,
        thread: &[Row],
        opts: &Options,
        cache: &Cache,
        events: &Events,
    ) -> Result<()> {
        let slug = slug(&row.msgid);
        let mbox_path = self.dir.join("drafts").join(format!("{slug}.mbox"));
        let yaml_path = self.dir.join("drafts").join(format!("{slug}.yaml"));
        let mut mbox = Vec::new();
        for m in thread {
            let raw = std::fs::read(self.dir.join(&m.mail))?;
            mbox.extend_from_slice(&as_mbox_entry(&raw));
        }
        crate::util::atomic_write(&mbox_path, &mbox)?;
        let checked = checks::check(&mbox, &slug, &yaml_path, &mbox_path, cache);
        let mut work = Work {
            matrix: Some(format!("drafts/{slug}.yaml")),
            ..Work::default()
        };
        let c = match checked {
            Ok(c) => c,
            Err(why) => {
                self.state.set_work(&row.msgid, &work)?;
                return self.set(row, Status::DraftFailed, &why, events);
            }
        };
        work.cells = Some(c.cells);
        work.claims = Some(c.claims);
        work.bound = Some(c.values.len() as u32);
        match budget::decide(&c.plan, &c.values, &c.cached, opts.per_mail) {
            budget::Decision::Wait(why) => {
                self.state.set_work(&row.msgid, &work)?;
                self.set(row, Status::OverBudget, &why, events)
            }
            budget::Decision::Run {
                filter,
                estimate_secs,
                note,
                ..
            } => {
                work.filter = filter;
                work.estimate_secs = Some(estimate_secs);
                self.state.set_work(&row.msgid, &work)?;
                let (granted, now) = self.grant(&row.msgid, estimate_secs, &note, opts)?;
                events.note(format!(
                    "<{}>: drafted {} cell(s), {} claim(s) binding {} value(s); {}",
                    clip(&row.msgid, 60),
                    c.cells,
                    c.claims,
                    c.values.len(),
                    if granted { "queued" } else { "over budget" }
                ));
                if !now.is_empty() {
                    events.note(format!("  {}", clip(&now, 300)));
                }
                Ok(())
            }
        }
    }

    /// Queue a draft when its estimate fits what is left of today's
    /// budget; otherwise it stays over budget, and says until when.
    /// `note` says what the per-mail budget cut. Returns whether it was
    /// queued, and the reason stored with it.
    fn grant(
        &self,
        msgid: &str,
        estimate: f64,
        note: &str,
        opts: &Options,
    ) -> Result<(bool, String)> {
        let day = budget::today();
        let spent = self.state.spent(&day)?;
        if spent + estimate > opts.per_day {
            let why = format!(
                "waits for tomorrow's budget: estimated {}, and {} of today's {} is left{}",
                crate::util::human_secs(estimate),
                crate::util::human_secs((opts.per_day - spent).max(0.0)),
                crate::util::human_secs(opts.per_day),
                if note.is_empty() {
                    String::new()
                } else {
                    format!(" ({note})")
                }
            );
            self.state.set_status(msgid, Status::OverBudget, &why)?;
            return Ok((false, why));
        }
        self.state.spend(&day, msgid, estimate)?;
        self.state.set_status(msgid, Status::Queued, note)?;
        Ok((true, note.to_string()))
    }

    /// Run what is queued, one matrix at a time: first a run a restart
    /// left behind (resumed), then the queue in arrival order.
    pub fn run_queue(
        &mut self,
        opts: &Options,
        cache: &Cache,
        events: &Events,
        rt: &tokio::runtime::Runtime,
    ) -> Result<()> {
        loop {
            crate::interrupt::check()?;
            let next = self
                .state
                .with_status(Status::Running)?
                .into_iter()
                .chain(self.state.with_status(Status::Queued)?)
                .next();
            let Some(row) = next else {
                return Ok(());
            };
            runner::run_one(self, &row, opts, cache, events, rt)?;
            self.write_index()?;
        }
    }

    /// `index.html` beside the outbox: the status table, linked.
    pub fn write_index(&self) -> Result<()> {
        let rows = self.state.recent(500)?;
        let counts = self.state.counts()?;
        let dir = self.dir.clone();
        let html = index::html(&rows, &counts, &|r: &Row| {
            let d = r.work.run_dir.as_ref()?;
            dir.join(d)
                .join("report.html")
                .is_file()
                .then(|| format!("{d}/report.html"))
        });
        crate::util::atomic_write(&self.dir.join("index.html"), html.as_bytes())
    }
}

mod checks;
mod runner;

/// Follow `source` until interrupted (or one pass with `--once`).
pub fn watch(source: &Source, opts: &Options, cache: &Cache, events: &Events) -> Result<i32> {
    let mut w = Watch::open(&opts.dir)?;
    let rt = tokio::runtime::Runtime::new()?;
    loop {
        match pass(&mut w, source, opts, cache, events, &rt) {
            Ok(()) => {}
            Err(e) if crate::interrupt::interrupted() || opts.once => return Err(e),
            // A source that fails once (a git fetch under way, a full
            // disk) is tried again at the next pass: the robot stays up.
            Err(e) => events.warn(format!(
                "this pass failed: {e:#}; trying again in {}",
                crate::util::human_secs(opts.poll.as_secs_f64())
            )),
        }
        if opts.once {
            return Ok(crate::error::exit::OK);
        }
        // Sleep in short steps, so Ctrl-C is seen at once.
        let until = std::time::Instant::now() + opts.poll;
        while std::time::Instant::now() < until {
            crate::interrupt::check()?;
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

/// One pass: read the source, triage, run the queue, write the index.
fn pass(
    w: &mut Watch,
    source: &Source,
    opts: &Options,
    cache: &Cache,
    events: &Events,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    let n = w.ingest(source, events)?;
    if n > 0 || opts.once {
        events.note(format!("{n} new message(s) from {}", source.id()));
    }
    w.triage(opts, cache, events)?;
    if n > 0 || opts.once {
        let counts: Vec<String> = w
            .state
            .counts()?
            .iter()
            .map(|(s, k)| format!("{k} {}", s.as_str()))
            .collect();
        events.note(format!("messages: {}", counts.join(", ")));
    }
    w.write_index()?;
    if opts.run {
        w.run_queue(opts, cache, events, rt)?;
    }
    w.write_index()
}

/// A file name for a message's draft and run: its Message-ID's hash.
pub fn slug(msgid: &str) -> String {
    format!(
        "m{}",
        crate::util::prefix(&crate::util::hash_bytes(msgid.as_bytes()), 12)
    )
}

/// One message as an mbox entry: a `From ` separator, body lines that
/// start with `From ` quoted (mboxrd), and a blank line after it.
fn as_mbox_entry(raw: &[u8]) -> Vec<u8> {
    let body = classify::strip_from_line(raw);
    let mut out = b"From lab-watch@localhost Thu Jan  1 00:00:00 1970\n".to_vec();
    for line in body.split_inclusive(|&b| b == b'\n') {
        let rest = line
            .iter()
            .skip_while(|&&b| b == b'>')
            .copied()
            .collect::<Vec<_>>();
        if rest.starts_with(b"From ") {
            out.push(b'>');
        }
        out.extend_from_slice(line);
    }
    if !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}

fn clip(s: &str, n: usize) -> String {
    crate::util::clip(&crate::util::escape_controls(s), n).into_owned()
}
