//! The robot's memory, in SQLite: every message seen (by Message-ID),
//! what lab made of it, its draft, run and reply, and how far each
//! source has been read. A restart, or a `kill -9`, loses nothing that
//! was committed: a message and the source cursor that passed it are
//! written in one transaction, so none is handled twice or skipped.

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;

/// Where a message is in the robot's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// Stored, not yet looked at.
    New,
    /// Nothing to do: no numbers, or a reply to a patch lab has not seen.
    Ignored,
    /// Could not be read as a mail.
    Malformed,
    /// A patch of a series, handled with the series' head message.
    InSeries,
    /// A series still missing patches, within its quiet period.
    Waiting,
    /// Drafted, but the draft failed its checks; nothing runs.
    DraftFailed,
    /// Its estimated cost does not fit today's budget; tried again later.
    OverBudget,
    Queued,
    Running,
    /// Ran, and its reply is in the outbox.
    Replied,
    /// The run could not start or ended with an error.
    RunFailed,
}

impl Status {
    pub const ALL: [Status; 11] = [
        Status::New,
        Status::Ignored,
        Status::Malformed,
        Status::InSeries,
        Status::Waiting,
        Status::DraftFailed,
        Status::OverBudget,
        Status::Queued,
        Status::Running,
        Status::Replied,
        Status::RunFailed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Ignored => "ignored",
            Status::Malformed => "malformed",
            Status::InSeries => "in-series",
            Status::Waiting => "waiting",
            Status::DraftFailed => "draft-failed",
            Status::OverBudget => "over-budget",
            Status::Queued => "queued",
            Status::Running => "running",
            Status::Replied => "replied",
            Status::RunFailed => "run-failed",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

/// What a message is, as the classifier saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A patch, or a series' cover letter.
    Patch,
    /// A reply in a thread.
    Reply,
    /// Neither: an announcement, a question, a robot's report.
    Other,
    Malformed,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Patch => "patch",
            Kind::Reply => "reply",
            Kind::Other => "other",
            Kind::Malformed => "malformed",
        }
    }
    pub fn parse(s: &str) -> Kind {
        match s {
            "patch" => Kind::Patch,
            "reply" => Kind::Reply,
            "malformed" => Kind::Malformed,
            _ => Kind::Other,
        }
    }
}

/// One message's row.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The Message-ID without brackets, or `sha:HASH` of the raw mail
    /// when it has none.
    pub msgid: String,
    pub subject: String,
    pub author: String,
    pub date: String,
    /// In-Reply-To and References, oldest first.
    pub refs: Vec<String>,
    pub kind: Kind,
    /// The series' key (its thread root) for patches of a numbered series.
    pub series: Option<String>,
    /// `[PATCH n/total]`; 0 is a cover letter.
    pub part: Option<u32>,
    pub total: Option<u32>,
    /// Claimed values the mail holds (0: no numbers).
    pub numbers: u32,
    /// The stored raw mail, relative to the watch directory.
    pub mail: String,
    pub first_seen: i64,
    pub status: Status,
    pub reason: String,
    pub work: Work,
}

/// What was done for a message that was drafted: the draft, its checks,
/// the budget's decision, the run and the reply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Work {
    pub matrix: Option<String>,
    pub cells: Option<u32>,
    pub claims: Option<u32>,
    pub bound: Option<u32>,
    pub estimate_secs: Option<f64>,
    pub filter: Option<String>,
    pub run_dir: Option<String>,
    pub run_exit: Option<i32>,
    pub verdict: Option<String>,
    pub reply: Option<String>,
}

pub struct State {
    db: Connection,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS messages(
  msgid TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  author TEXT NOT NULL,
  date TEXT NOT NULL,
  refs TEXT NOT NULL,
  kind TEXT NOT NULL,
  series TEXT,
  part INTEGER,
  total INTEGER,
  numbers INTEGER NOT NULL,
  mail TEXT NOT NULL,
  first_seen INTEGER NOT NULL,
  seen_again INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  matrix TEXT, cells INTEGER, claims INTEGER, bound INTEGER,
  estimate_secs REAL, filter TEXT,
  run_dir TEXT, run_exit INTEGER, verdict TEXT, reply TEXT,
  updated INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_status ON messages(status);
CREATE TABLE IF NOT EXISTS cursors(source TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY(source, key));
CREATE TABLE IF NOT EXISTS spent(day TEXT NOT NULL, msgid TEXT NOT NULL, secs REAL NOT NULL,
  PRIMARY KEY(day, msgid));
PRAGMA user_version = 1;
";

const COLUMNS: &str = "msgid, subject, author, date, refs, kind, series, part, total, numbers, \
     mail, first_seen, status, reason, matrix, cells, claims, bound, estimate_secs, filter, \
     run_dir, run_exit, verdict, reply";

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl State {
    pub fn open(path: &Path) -> Result<State> {
        Self::open_db(path).with_context(|| format!("lab watch's state {}", path.display()))
    }

    fn open_db(path: &Path) -> Result<State> {
        let db = Connection::open(path)?;
        // WAL: `lab watch status` reads while the robot writes.
        db.pragma_update(None, "journal_mode", "WAL")?;
        // In WAL mode, NORMAL loses no committed transaction when the
        // process dies (kill -9), only when the machine does; FULL would
        // fsync every message of a first pass over a big archive.
        db.pragma_update(None, "synchronous", "NORMAL")?;
        db.busy_timeout(std::time::Duration::from_secs(10))?;
        db.execute_batch(SCHEMA)?;
        Ok(State { db })
    }

    /// Store a message seen for the first time, and the cursor that
    /// passed it, in one transaction. False when the Message-ID was seen
    /// before (a cross-post, a resend): then only its count goes up.
    pub fn insert(&mut self, row: &Row, cursor: Option<(&str, &str, &str)>) -> Result<bool> {
        let tx = self.db.transaction()?;
        let fresh = tx.execute(
            "INSERT OR IGNORE INTO messages(msgid, subject, author, date, refs, kind, series, part, \
             total, numbers, mail, first_seen, status, reason, updated) \
             VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?12)",
            params![
                row.msgid,
                row.subject,
                row.author,
                row.date,
                row.refs.join(" "),
                row.kind.as_str(),
                row.series,
                row.part,
                row.total,
                row.numbers,
                row.mail,
                row.first_seen,
                row.status.as_str(),
                row.reason,
            ],
        )? == 1;
        if !fresh {
            tx.execute(
                "UPDATE messages SET seen_again = seen_again + 1 WHERE msgid = ?1",
                params![row.msgid],
            )?;
        }
        if let Some((s, k, v)) = cursor {
            set_cursor(&tx, s, k, v)?;
        }
        tx.commit()?;
        Ok(fresh)
    }

    pub fn cursor(&self, source: &str, key: &str) -> Result<Option<String>> {
        Ok(self
            .db
            .query_row(
                "SELECT value FROM cursors WHERE source = ?1 AND key = ?2",
                params![source, key],
                |r| r.get(0),
            )
            .optional()?)
    }

    pub fn set_cursor(&self, source: &str, key: &str, value: &str) -> Result<()> {
        set_cursor(&self.db, source, key, value)
    }

    pub fn get(&self, msgid: &str) -> Result<Option<Row>> {
        Ok(self
            .db
            .query_row(
                &format!("SELECT {COLUMNS} FROM messages WHERE msgid = ?1"),
                params![msgid],
                read_row,
            )
            .optional()?)
    }

    /// Messages in one status, oldest first.
    pub fn with_status(&self, status: Status) -> Result<Vec<Row>> {
        self.rows(
            "WHERE status = ?1 ORDER BY first_seen, rowid",
            params![status.as_str()],
        )
    }

    /// The most recent `limit` messages, newest first.
    pub fn recent(&self, limit: usize) -> Result<Vec<Row>> {
        self.rows(
            "ORDER BY first_seen DESC, rowid DESC LIMIT ?1",
            params![limit as i64],
        )
    }

    /// Every message of one series, in patch order.
    pub fn series(&self, key: &str) -> Result<Vec<Row>> {
        self.rows("WHERE series = ?1 ORDER BY part, first_seen", params![key])
    }

    /// The rows `tail` (a WHERE and ORDER BY clause) selects.
    fn rows(&self, tail: &str, args: impl rusqlite::Params) -> Result<Vec<Row>> {
        let mut st = self
            .db
            .prepare(&format!("SELECT {COLUMNS} FROM messages {tail}"))?;
        let rows = st.query_map(args, read_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    pub fn set_status(&self, msgid: &str, status: Status, reason: &str) -> Result<()> {
        self.db.execute(
            "UPDATE messages SET status = ?2, reason = ?3, updated = ?4 WHERE msgid = ?1",
            params![msgid, status.as_str(), reason, now()],
        )?;
        Ok(())
    }

    pub fn set_work(&self, msgid: &str, w: &Work) -> Result<()> {
        self.db.execute(
            "UPDATE messages SET matrix = ?2, cells = ?3, claims = ?4, bound = ?5, \
             estimate_secs = ?6, filter = ?7, run_dir = ?8, run_exit = ?9, verdict = ?10, \
             reply = ?11, updated = ?12 WHERE msgid = ?1",
            params![
                msgid,
                w.matrix,
                w.cells,
                w.claims,
                w.bound,
                w.estimate_secs,
                w.filter,
                w.run_dir,
                w.run_exit,
                w.verdict,
                w.reply,
                now()
            ],
        )?;
        Ok(())
    }

    /// How often a message was seen again after its first time.
    pub fn seen_again(&self, msgid: &str) -> Result<u32> {
        Ok(self
            .db
            .query_row(
                "SELECT seen_again FROM messages WHERE msgid = ?1",
                params![msgid],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// Estimated seconds already granted on `day` (YYYY-MM-DD, UTC).
    pub fn spent(&self, day: &str) -> Result<f64> {
        Ok(self.db.query_row(
            "SELECT COALESCE(SUM(secs), 0) FROM spent WHERE day = ?1",
            params![day],
            |r| r.get(0),
        )?)
    }

    pub fn spend(&self, day: &str, msgid: &str, secs: f64) -> Result<()> {
        self.db.execute(
            "INSERT OR REPLACE INTO spent(day, msgid, secs) VALUES(?1, ?2, ?3)",
            params![day, msgid, secs],
        )?;
        Ok(())
    }

    /// Counts per status, in the enum's order, zeros left out.
    pub fn counts(&self) -> Result<Vec<(Status, u32)>> {
        let mut out = Vec::new();
        for s in Status::ALL {
            let n: u32 = self.db.query_row(
                "SELECT COUNT(*) FROM messages WHERE status = ?1",
                params![s.as_str()],
                |r| r.get(0),
            )?;
            if n > 0 {
                out.push((s, n));
            }
        }
        Ok(out)
    }
}

fn set_cursor(db: &Connection, source: &str, key: &str, value: &str) -> Result<()> {
    db.execute(
        "INSERT OR REPLACE INTO cursors(source, key, value) VALUES(?1, ?2, ?3)",
        params![source, key, value],
    )?;
    Ok(())
}

fn read_row(r: &rusqlite::Row) -> rusqlite::Result<Row> {
    let refs: String = r.get(4)?;
    let status: String = r.get(12)?;
    Ok(Row {
        msgid: r.get(0)?,
        subject: r.get(1)?,
        author: r.get(2)?,
        date: r.get(3)?,
        refs: refs.split_whitespace().map(str::to_string).collect(),
        kind: Kind::parse(&r.get::<_, String>(5)?),
        series: r.get(6)?,
        part: r.get(7)?,
        total: r.get(8)?,
        numbers: r.get(9)?,
        mail: r.get(10)?,
        first_seen: r.get(11)?,
        // A status this version does not know (a newer lab wrote it) is
        // shown as new, and looked at again.
        status: Status::parse(&status).unwrap_or(Status::New),
        reason: r.get(13)?,
        work: Work {
            matrix: r.get(14)?,
            cells: r.get(15)?,
            claims: r.get(16)?,
            bound: r.get(17)?,
            estimate_secs: r.get(18)?,
            filter: r.get(19)?,
            run_dir: r.get(20)?,
            run_exit: r.get(21)?,
            verdict: r.get(22)?,
            reply: r.get(23)?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str) -> Row {
        Row {
            msgid: id.into(),
            subject: "[PATCH] x".into(),
            author: "a".into(),
            date: "d".into(),
            refs: vec!["r1".into(), "r2".into()],
            kind: Kind::Patch,
            series: None,
            part: None,
            total: None,
            numbers: 3,
            mail: "mails/x.eml".into(),
            first_seen: 5,
            status: Status::New,
            reason: String::new(),
            work: Work::default(),
        }
    }

    #[test]
    fn a_message_is_stored_once_and_survives_reopening() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.sqlite");
        {
            let mut s = State::open(&p).unwrap();
            assert!(s.insert(&row("a@b"), Some(("src", "k", "c1"))).unwrap());
            assert!(!s.insert(&row("a@b"), Some(("src", "k", "c2"))).unwrap());
            s.set_status("a@b", Status::Queued, "fits").unwrap();
            let w = Work {
                filter: Some("delay=1".into()),
                estimate_secs: Some(12.5),
                ..Work::default()
            };
            s.set_work("a@b", &w).unwrap();
        }
        let s = State::open(&p).unwrap();
        let r = s.get("a@b").unwrap().unwrap();
        assert_eq!(r.status, Status::Queued);
        assert_eq!(r.reason, "fits");
        assert_eq!(r.refs, vec!["r1", "r2"]);
        assert_eq!(r.work.filter.as_deref(), Some("delay=1"));
        assert_eq!(s.seen_again("a@b").unwrap(), 1);
        assert_eq!(s.cursor("src", "k").unwrap().as_deref(), Some("c2"));
        assert_eq!(s.with_status(Status::Queued).unwrap().len(), 1);
        assert_eq!(s.counts().unwrap(), vec![(Status::Queued, 1)]);
    }

    #[test]
    fn the_day_budget_adds_up_and_a_regrant_replaces() {
        let t = tempfile::tempdir().unwrap();
        let s = State::open(&t.path().join("s.sqlite")).unwrap();
        s.spend("2026-12-02", "a", 100.0).unwrap();
        s.spend("2026-12-02", "b", 50.0).unwrap();
        s.spend("2026-12-02", "a", 30.0).unwrap();
        s.spend("2026-12-03", "c", 7.0).unwrap();
        assert_eq!(s.spent("2026-12-02").unwrap(), 80.0);
    }

    #[test]
    fn every_status_reads_back() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
    }
}
