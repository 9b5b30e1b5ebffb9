//! `lab watch`: follow a list; `status`, `show` and `retry` read and
//! change the robot's state.

use crate::watch::state::{Status, Work};
use crate::watch::{self, Watch, budget, source::Source};
use anyhow::Result;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct WatchArgs {
    #[command(subcommand)]
    pub cmd: Option<WatchCmd>,
    /// A public-inbox git archive (git/N.git, or one epoch's repository),
    /// a maildir, or an mbox file that grows.
    #[arg(required = true)]
    pub source: Option<PathBuf>,
    #[command(flatten)]
    pub dir: DirArg,
    /// One pass: read what is new, draft, run, reply, then exit.
    #[arg(long)]
    pub once: bool,
    /// Seconds between passes over the source.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub poll: u64,
    /// Estimated time one mail may take (90s, 30m, 2h): a longer draft
    /// is cut to a slice, or waits.
    #[arg(long, default_value = "1h", value_parser = budget::parse_duration)]
    pub budget_mail: f64,
    /// Estimated time all mails of one day (UTC) may take.
    #[arg(long, default_value = "12h", value_parser = budget::parse_duration)]
    pub budget_day: f64,
    /// How long after its last patch arrived an incomplete series is
    /// handled with the patches it has.
    #[arg(long, default_value = "30m", value_parser = budget::parse_duration)]
    pub quiet: f64,
    /// The From: of the replies.
    #[arg(long, default_value = "lab watch <lab@localhost>")]
    pub from: String,
    /// Draft and check, but run nothing.
    #[arg(long)]
    pub no_run: bool,
    /// Force the accelerator (kvm or tcg) instead of probing.
    #[arg(long, env = "LAB_ACCEL", value_parser = super::run_cmd::parse_accel_or_probe)]
    pub accel: Option<super::run_cmd::AccelArg>,
    /// Seconds one cell may take before it fails (1 to 604800).
    #[arg(long, default_value_t = 900, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub cell_timeout: u64,
}

#[derive(clap::Args, Debug, Clone)]
pub struct DirArg {
    /// The robot's folder: state.sqlite, mails, drafts, runs, outbox/
    /// and index.html.
    #[arg(long = "dir", env = "LAB_WATCH_DIR", default_value = "watch")]
    pub path: PathBuf,
}

#[derive(clap::Subcommand, Debug)]
pub enum WatchCmd {
    /// A table of recent messages: state, claims bound, verdict, reply.
    Status {
        #[command(flatten)]
        dir: DirArg,
        /// How many messages, newest first.
        #[arg(long, default_value_t = 50)]
        limit: usize,
    },
    /// Everything lab recorded for one message.
    Show {
        msgid: String,
        #[command(flatten)]
        dir: DirArg,
    },
    /// Handle a message again from the start: draft, checks, run, reply.
    Retry {
        msgid: String,
        #[command(flatten)]
        dir: DirArg,
    },
}

pub fn watch_cmd(a: &WatchArgs) -> Result<i32> {
    match &a.cmd {
        Some(WatchCmd::Status { dir, limit }) => status(&dir.path, *limit),
        Some(WatchCmd::Show { msgid, dir }) => show(&dir.path, msgid),
        Some(WatchCmd::Retry { msgid, dir }) => retry(&dir.path, msgid),
        None => follow(a),
    }
}

fn follow(a: &WatchArgs) -> Result<i32> {
    let path = a.source.as_ref().expect("clap requires a source");
    let source = Source::detect(path).map_err(crate::error::input)?;
    let opts = watch::Options {
        dir: a.dir.path.clone(),
        once: a.once,
        poll: std::time::Duration::from_secs(a.poll),
        per_mail: a.budget_mail,
        per_day: a.budget_day,
        quiet: a.quiet,
        from: a.from.clone(),
        run: !a.no_run,
        accel: a.accel.and_then(|x| x.0),
        cell_timeout: std::time::Duration::from_secs(a.cell_timeout),
    };
    let cache = crate::cache::Cache::open_default()?;
    let events = super::ui::attach(crate::events::Events::silent());
    watch::watch(&source, &opts, &cache, &events)
}

/// The state of an existing watch folder; a missing one is the user's
/// mistake (exit 3), not an empty robot.
fn open(dir: &std::path::Path) -> Result<Watch> {
    if !dir.join("state.sqlite").is_file() {
        return Err(crate::error::input_error(format!(
            "{}: no lab watch state here (state.sqlite); give --dir, or start lab watch SOURCE",
            dir.display()
        )));
    }
    Watch::open(dir)
}

fn status(dir: &std::path::Path, limit: usize) -> Result<i32> {
    let w = open(dir)?;
    let rows = w.state.recent(limit)?;
    let text = watch::index::text(&rows, &w.state.counts()?);
    crate::out!("{text}")?;
    Ok(0)
}

fn find(w: &Watch, msgid: &str) -> Result<crate::watch::state::Row> {
    let id = msgid.trim().trim_start_matches('<').trim_end_matches('>');
    w.state.get(id)?.ok_or_else(|| {
        crate::error::input_error(format!(
            "no message <{}> in {}",
            crate::util::clip(&crate::util::escape_controls(id), 200),
            w.dir.display()
        ))
    })
}

fn show(dir: &std::path::Path, msgid: &str) -> Result<i32> {
    let w = open(dir)?;
    let r = find(&w, msgid)?;
    let esc = |s: &str| crate::util::escape_controls(s).into_owned();
    let mut o = String::new();
    let mut line = |k: &str, v: &str| {
        if !v.is_empty() {
            o.push_str(&format!("{k:<12} {}\n", esc(v)));
        }
    };
    line("message-id", &r.msgid);
    line("subject", &r.subject);
    line("from", &r.author);
    line("date", &r.date);
    line("kind", r.kind.as_str());
    if let (Some(p), Some(t)) = (r.part, r.total) {
        line("series", &format!("part {p} of {t}"));
    }
    line("numbers", &r.numbers.to_string());
    line("state", r.status.as_str());
    line("why", &r.reason);
    line("mail", &r.mail);
    let w2 = &r.work;
    let opt = |v: Option<String>| v.unwrap_or_default();
    line("draft", &opt(w2.matrix.clone()));
    line("cells", &opt(w2.cells.map(|n| n.to_string())));
    line(
        "claims",
        &opt(w2
            .claims
            .map(|c| format!("{c}, binding {} value(s)", w2.bound.unwrap_or(0)))),
    );
    line(
        "estimate",
        &opt(w2.estimate_secs.map(crate::util::human_secs)),
    );
    line("slice", &opt(w2.filter.clone()));
    line("run", &opt(w2.run_dir.clone()));
    line("exit", &opt(w2.run_exit.map(|e| e.to_string())));
    line("verdict", &opt(w2.verdict.clone()));
    line("reply", &opt(w2.reply.clone()));
    let again = w.state.seen_again(&r.msgid)?;
    if again > 0 {
        line("seen again", &again.to_string());
    }
    crate::out!("{o}")?;
    Ok(0)
}

fn retry(dir: &std::path::Path, msgid: &str) -> Result<i32> {
    let w = open(dir)?;
    let r = find(&w, msgid)?;
    if r.status == Status::Malformed {
        return Err(crate::error::input_error(format!(
            "<{}> is not a readable mail ({}); there is nothing to retry",
            crate::util::escape_controls(&r.msgid),
            r.reason
        )));
    }
    // A series is drafted at its head: retrying any of its patches
    // retries the series.
    let mut ids = vec![r.msgid.clone()];
    if let Some(key) = &r.series {
        ids = w.state.series(key)?.into_iter().map(|m| m.msgid).collect();
    }
    for id in &ids {
        w.state.set_work(id, &Work::default())?;
        w.state.set_status(id, Status::New, "retry asked")?;
    }
    eprintln!(
        "<{}> is new again{}: the next pass of lab watch drafts it from the start",
        crate::util::escape_controls(&r.msgid),
        if ids.len() > 1 {
            format!(
                ", with the {} other message(s) of its series",
                ids.len() - 1
            )
        } else {
            String::new()
        }
    );
    Ok(0)
}
