//! One queued draft through `lab run` and `lab report`, to a reply in
//! the outbox. A run a restart left behind is resumed (`--resume`): the
//! cells it recorded are not measured again.

use super::state::{Row, Status, Work};
use super::{Options, Watch, reply, slug};
use crate::cache::Cache;
use crate::events::Events;
use crate::matrix::{Filter, Matrix};
use crate::report::{self, Format};
use crate::results::RunDir;
use anyhow::{Context, Result};
use std::path::Path;

pub fn run_one(
    w: &mut Watch,
    row: &Row,
    opts: &Options,
    cache: &Cache,
    events: &Events,
    rt: &tokio::runtime::Runtime,
) -> Result<()> {
    let slug = slug(&row.msgid);
    let root = w.dir.join("runs").join(&slug);
    let resume = if row.status == Status::Running {
        latest_run(&root)
    } else {
        None
    };
    let started = match &resume {
        Some(id) => format!("resuming run {id}"),
        None => "running".into(),
    };
    w.state.set_status(&row.msgid, Status::Running, &started)?;
    events.note(format!("<{}>: {started}", super::clip(&row.msgid, 60)));
    let result = measure(w, row, &slug, &root, resume, opts, cache, events, rt);
    let dir = match result {
        Ok(d) => d,
        // Stopped: the row stays running, and the next start resumes it.
        Err(e) if crate::interrupt::interrupted() => return Err(e),
        Err(e) => {
            let why = format!("the run failed: {e:#}");
            w.state.set_status(&row.msgid, Status::RunFailed, &why)?;
            events.warn(format!("<{}>: {}", super::clip(&row.msgid, 60), why));
            return Ok(());
        }
    };
    let mut work = row.work.clone();
    work.run_dir = Some(rel(&w.dir, &dir.path));
    match finish(w, row, &dir, &slug, opts, &mut work) {
        Ok(()) => {
            w.state.set_work(&row.msgid, &work)?;
            let why = format!("reply in {}", work.reply.clone().unwrap_or_default());
            w.state.set_status(&row.msgid, Status::Replied, &why)?;
            events.note(format!(
                "<{}>: {}; {why}",
                super::clip(&row.msgid, 60),
                work.verdict.clone().unwrap_or_default()
            ));
        }
        Err(e) => {
            w.state.set_work(&row.msgid, &work)?;
            let why = format!("the run ended, but its report failed: {e:#}");
            w.state.set_status(&row.msgid, Status::RunFailed, &why)?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn measure(
    w: &Watch,
    row: &Row,
    slug: &str,
    root: &Path,
    resume: Option<String>,
    opts: &Options,
    cache: &Cache,
    events: &Events,
    rt: &tokio::runtime::Runtime,
) -> Result<RunDir> {
    let yaml = w.dir.join("drafts").join(format!("{slug}.yaml"));
    let mbox = w.dir.join("drafts").join(format!("{slug}.mbox"));
    let matrix = Matrix::load(&yaml)?;
    let mut plan = matrix.plan()?;
    if let Some(f) = &row.work.filter {
        let f = Filter::parse(f)?;
        f.check(&matrix, &plan)?;
        plan = f.apply(&plan);
    }
    let run_opts = crate::run::RunOptions {
        results_root: root.to_path_buf(),
        resume,
        rerun_failed: false,
        jobs: 1,
        accel: opts.accel,
        mails: vec![mbox],
        claim_mails: vec![],
        filter: row.work.filter.clone(),
        shard: None,
        ready_timeout: None,
        cell_timeout: opts.cell_timeout,
    };
    // The time line `lab run` prints at its end, into the robot's log.
    let timeline = crate::events::Timeline::default();
    let timed = timeline.attach(events.clone());
    let start = std::time::Instant::now();
    let dir = rt.block_on(crate::run::run(cache, &matrix, &plan, &run_opts, &timed))?;
    let kernels: Vec<String> = plan.kernels.iter().map(|k| k.id.clone()).collect();
    events.note(timeline.line(&kernels, start.elapsed().as_secs_f64()));
    Ok(dir)
}

/// The run's report (markdown and HTML beside it) and the reply.
fn finish(
    w: &Watch,
    row: &Row,
    dir: &RunDir,
    slug: &str,
    opts: &Options,
    work: &mut Work,
) -> Result<()> {
    report::write_markdown(dir)?;
    let r = report::load(dir)?;
    crate::util::atomic_write(
        &dir.path.join("report.html"),
        report::render(&r, Format::Html)?.as_bytes(),
    )?;
    let exit = report::exit_code(&r);
    use report::ClaimStatus as C;
    let count = |pick: &dyn Fn(C) -> bool| r.claims.iter().filter(|c| pick(c.status)).count();
    let reproduced = count(&|s| s == C::Reproduced);
    let judged = count(&|s| matches!(s, C::Reproduced | C::NotReproduced));
    let outcome = match exit {
        // No claimed value judged (a contended host, a slice that ran
        // none under the mail's conditions) is no clean result.
        0 if judged == 0 && !r.claims.is_empty() => "no claimed value judged",
        0 => "fine",
        1 => "a regression or unmet claim",
        _ => "incomplete or untrusted",
    };
    work.run_exit = Some(exit);
    // Values the slice did not run, or ran under other conditions than
    // the mail's, are not judged: the verdict says how many.
    work.verdict = Some(format!(
        "{reproduced} of {judged} judged value(s) reproduced, {} not judged; {outcome}",
        r.claims.len() - judged
    ));
    let raw = std::fs::read(w.dir.join(&row.mail))
        .with_context(|| format!("reading the stored mail {}", row.mail))?;
    let note = match (&row.work.filter, row.work.estimate_secs) {
        (Some(f), Some(est)) => format!(
            "the draft was cut to {f} (estimated {}) to fit the robot's per-mail budget",
            crate::util::human_secs(est)
        ),
        _ => String::new(),
    };
    let body = report::render(&r, Format::Reply)?;
    let text = reply::compose(&reply::Reply {
        to: row,
        raw: &raw,
        from: &opts.from,
        note: &note,
        body: &body,
        run_dir: work.run_dir.as_deref().unwrap_or_default(),
        date: chrono::Utc::now().to_rfc2822(),
        token: crate::util::prefix(&crate::util::random_token(), 10).to_string(),
    });
    let path = reply::deliver(&w.dir.join("outbox"), &format!("{slug}.eml"), &text)?;
    work.reply = Some(rel(&w.dir, &path));
    Ok(())
}

/// The newest run directory under a message's results root.
fn latest_run(root: &Path) -> Option<String> {
    let mut runs: Vec<String> = std::fs::read_dir(root)
        .ok()?
        .flatten()
        .filter(|e| e.path().join("manifest.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    runs.pop()
}

fn rel(base: &Path, p: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}
