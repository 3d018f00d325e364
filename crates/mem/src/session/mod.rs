//! The session log: agent sessions as append-only events in `.mem/sessions.db` (SQLite, WAL,
//! every commit synced), one per memory root on each machine. Events come from the Claude
//! Code and Codex transcripts that `mem capture` reads ([`SessionLog::import`], incremental)
//! and from the checkpoint hook ([`SessionLog::record_checkpoint`]); the state of a session
//! ([`resume`]) is a projection of its events. Like the usage log, it is not derived state:
//! nothing in `mem` deletes it or rebuilds it. See docs/agents.md, "Sessions and resume".

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};

use crate::{Error, Result};

pub mod events;
mod facts;
mod import;
pub mod ledger;
pub mod resume;

pub use events::Kind;
pub use facts::FactOrigin;
pub use import::Imported;

/// File name of the log inside `.mem/`.
pub const FILE: &str = "sessions.db";

/// The migrations, in order (see [`crate::sqlite::migrate`]). Never edit one that has shipped.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_sessions.sql"),
    include_str!("migrations/002_injections.sql"),
    include_str!("migrations/003_messages.sql"),
    include_str!("migrations/004_injections_cut.sql"),
    include_str!("migrations/005_facts.sql"),
];

/// Most matching events a search ranks: a query that matches more is answered from its most
/// recent matches (a word in every other event of a thousand sessions would take over 100 ms).
pub const RANKED_MATCHES: usize = 10_000;

/// How long a front end that has no configuration at hand waits for another process writing
/// the log (the engine uses `[usage] busy_timeout_ms`, whose default this is).
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Schema version of a database this code writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// An open session log.
pub struct SessionLog {
    conn: Connection,
    path: PathBuf,
}

/// How far a transcript has been imported.
#[derive(Clone, Debug, PartialEq)]
struct Source {
    /// The session its lines were imported into.
    session: String,
    offset: u64,
    lines: usize,
    skipped: usize,
}

/// One session, as `mem session list` shows it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Session {
    /// The agent's session id.
    pub id: String,
    /// The agent (the `claude-code` of rows older logs wrote is read as Claude Code); `None`
    /// before the first line of its transcript is read (the row says `unknown`).
    pub agent: Option<crate::agent::Agent>,
    /// The working directory it last recorded.
    pub project: Option<String>,
    /// Its first event.
    pub started_at: Option<Timestamp>,
    /// Its last event.
    pub last_at: Option<Timestamp>,
    /// User prompts.
    pub turns: i64,
    /// Events in the log.
    pub events: i64,
    /// The first prompt.
    pub first_prompt: Option<String>,
    /// The id of its digest in the long-term layer.
    pub memory: Option<String>,
    /// The model it last recorded.
    pub model: Option<String>,
    /// The permission mode it last recorded.
    pub mode: Option<String>,
}

/// One event of the log.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LoggedEvent {
    /// Its place in the log (increasing).
    pub seq: i64,
    /// Its session.
    pub session: String,
    /// The prompt it follows (0 before the first).
    pub turn: i64,
    /// When it happened.
    pub at: Option<Timestamp>,
    /// What it records.
    pub kind: Kind,
    /// The tool, for calls and results.
    pub tool: Option<String>,
    /// Ties a result to its call.
    pub call_id: Option<String>,
    /// The shell command a call ran.
    pub command: Option<String>,
    /// Files a call wrote.
    pub files: Vec<String>,
    /// A result's exit status (0 success).
    pub status: Option<i64>,
    /// A checkpoint event's checkpoint number.
    pub checkpoint: Option<String>,
    /// Its text.
    pub text: String,
}

/// One answer of [`SessionLog::search`].
#[derive(Clone, Debug, serde::Serialize)]
pub struct Hit {
    /// The session.
    pub session: String,
    /// Its project.
    pub project: Option<String>,
    /// The event's turn.
    pub turn: i64,
    /// The event's place in the log.
    pub seq: i64,
    /// When it happened.
    pub at: Option<Timestamp>,
    /// What it records.
    pub kind: Kind,
    /// The text around the matches, matches in `[` `]`.
    pub snippet: String,
}

/// What `mem health` reports about the log.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct LogHealth {
    /// Sessions.
    pub sessions: i64,
    /// Events.
    pub events: i64,
    /// Transcripts imported.
    pub transcripts: i64,
    /// Transcript lines skipped (not JSON, or too long).
    pub skipped_lines: i64,
    /// What `PRAGMA quick_check` said, when it was not `ok`.
    pub problem: Option<String>,
}

impl SessionLog {
    /// Opens (creating if needed) the log at `path`, waiting up to `busy` for other writers.
    /// Every commit is synced (`synchronous = FULL`): an event appended survives a power cut.
    pub fn open(path: &Path, busy: Duration) -> Result<SessionLog> {
        let conn = Connection::open(path).map_err(|e| session_error(path, &e))?;
        let err = |e: rusqlite::Error| session_error(path, &e);
        crate::sqlite::open_wal(&conn, busy).map_err(err)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(err)?;
        let mut log = SessionLog { conn, path: path.to_path_buf() };
        let migrated = crate::sqlite::migrate(&mut log.conn, MIGRATIONS)
            .map_err(|e| session_error(path, &e))?;
        migrated.map_err(|version| Error::Session {
            path: path.to_path_buf(),
            message: format!(
                "its schema version is {version}, newer than this mem knows ({SCHEMA_VERSION}); \
                 upgrade mem"
            ),
        })?;
        Ok(log)
    }

    /// Opens the log at `path` only if it exists.
    pub fn open_existing(path: &Path, busy: Duration) -> Result<Option<SessionLog>> {
        if !path.exists() {
            return Ok(None);
        }
        SessionLog::open(path, busy).map(Some)
    }

    /// Opens (creating if needed) the log of the memory root `root`, waiting up to
    /// [`BUSY_TIMEOUT`] for other writers.
    pub fn open_in(root: &Path) -> Result<SessionLog> {
        SessionLog::open(&crate::store::state_dir(root)?.join(FILE), BUSY_TIMEOUT)
    }

    /// The log of the memory root `root`, if it has one (never created here).
    pub fn existing_in(root: &Path) -> Result<Option<SessionLog>> {
        match crate::store::existing_state_dir(root)? {
            Some(dir) => SessionLog::open_existing(&dir.join(FILE), BUSY_TIMEOUT),
            None => Ok(None),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        move |e| session_error(&self.path, &e)
    }

    /// Records that checkpoint `checkpoint` was taken before turn `turn` of `session`
    /// (committed before this returns). The session is created if the log does not know it.
    pub fn record_checkpoint(
        &mut self,
        session: &str,
        turn: i64,
        checkpoint: &str,
        repository: &Path,
        at: Timestamp,
    ) -> Result<()> {
        let err = |e: rusqlite::Error| session_error(&self.path, &e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        known_session(&tx, session, at).map_err(err)?;
        tx.execute(
            "INSERT INTO events (session, turn, at, kind, checkpoint, text) \
             VALUES (?1, ?2, ?3, 'checkpoint', ?4, ?5)",
            params![
                session,
                turn,
                at.as_second(),
                checkpoint,
                format!("checkpoint {checkpoint} of {}", repository.display())
            ],
        )
        .map_err(err)?;
        tx.execute("UPDATE sessions SET events = events + 1 WHERE id = ?1", [session])
            .map_err(err)?;
        tx.commit().map_err(err)
    }

    /// The turns whose checkpoint was taken in `repository` (its top folder), as (checkpoint,
    /// session, turn), oldest first.
    pub fn checkpoint_turns(&self, repository: &Path) -> Result<Vec<(String, String, i64)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT checkpoint, session, turn FROM events WHERE kind = 'checkpoint' \
                 AND text = 'checkpoint ' || checkpoint || ' of ' || ?1 ORDER BY seq",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([repository.to_string_lossy()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }

    /// The turns `session` has had (its prompts in the log).
    pub fn turns(&self, session: &str) -> Result<i64> {
        let turns = self
            .conn
            .query_row("SELECT turns FROM sessions WHERE id = ?1", [session], |r| r.get(0))
            .optional()
            .map_err(self.err())?;
        Ok(turns.unwrap_or(0))
    }

    /// The text of `session`'s last prompt, if it has one.
    pub fn last_prompt(&self, session: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT text FROM events WHERE session = ?1 AND kind = 'prompt' \
                 ORDER BY seq DESC LIMIT 1",
                [session],
                |r| r.get(0),
            )
            .optional()
            .map_err(self.err())
    }

    /// Sessions, the most recent first (`project`: only those whose project is that folder or
    /// inside it), at most `limit`.
    pub fn list(&self, project: Option<&str>, limit: usize) -> Result<Vec<Session>> {
        self.list_from(project, 0, limit)
    }

    /// [`SessionLog::list`] past its first `skip` sessions: a page of the list.
    pub fn list_from(
        &self,
        project: Option<&str>,
        skip: usize,
        limit: usize,
    ) -> Result<Vec<Session>> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "{SELECT_SESSIONS} \
                 WHERE ?1 IS NULL OR project = ?1 OR substr(project, 1, length(?1) + 1) = ?1 || '/' \
                 ORDER BY COALESCE(last_at, started_at, 0) DESC, id LIMIT ?2 OFFSET ?3"
            ))
            .map_err(self.err())?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let skip = i64::try_from(skip).unwrap_or(i64::MAX);
        let rows =
            stmt.query_map(params![project, limit, skip], session_row).map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }

    /// How many sessions the log holds.
    pub fn count(&self) -> Result<usize> {
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |row| row.get(0))
            .map_err(self.err())?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// The session `id`, or the one whose id starts with `id` when only one does.
    pub fn session(&self, id: &str) -> Result<Session> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "{SELECT_SESSIONS} WHERE id = ?1 OR substr(id, 1, length(?1)) = ?1 \
                 ORDER BY id != ?1, id LIMIT 3"
            ))
            .map_err(self.err())?;
        let found = stmt
            .query_map([id], session_row)
            .map_err(self.err())?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(self.err())?;
        match &found[..] {
            [] => Err(Error::NoSuchSession { path: self.path.clone(), id: id.to_string() }),
            [one, ..] if one.id == id => Ok(one.clone()),
            [one] => Ok(one.clone()),
            _ => Err(Error::Session {
                path: self.path.clone(),
                message: format!("{id:?} starts more than one session id; give more of it"),
            }),
        }
    }

    /// The events of `session`, in order, up to turn `upto` when given.
    pub fn events(&self, session: &str, upto: Option<i64>) -> Result<Vec<LoggedEvent>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, session, turn, at, kind, tool, call_id, command, files, status, \
                 checkpoint, text FROM events WHERE session = ?1 AND (?2 IS NULL OR turn <= ?2) \
                 ORDER BY seq",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(params![session, upto], |r| {
                let kind: String = r.get(4)?;
                let files: Option<String> = r.get(8)?;
                Ok(LoggedEvent {
                    seq: r.get(0)?,
                    session: r.get(1)?,
                    turn: r.get(2)?,
                    at: time(r.get(3)?),
                    kind: Kind::parse(&kind).unwrap_or(Kind::Meta),
                    tool: r.get(5)?,
                    call_id: r.get(6)?,
                    command: r.get(7)?,
                    files: files.map(|f| f.lines().map(String::from).collect()).unwrap_or_default(),
                    status: r.get(9)?,
                    checkpoint: r.get(10)?,
                    text: r.get(11)?,
                })
            })
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }

    /// Full-text search over the events' text: the best `limit` events (SQLite FTS5, BM25),
    /// each with a snippet. Every word must match (stems, any order); when no event has them
    /// all, events with any of them are returned. Only the [`RANKED_MATCHES`] most recent
    /// matching events are ranked.
    pub fn search(&self, query: &str, project: Option<&str>, limit: usize) -> Result<Vec<Hit>> {
        let words: Vec<String> = search_terms(query).iter().map(|w| format!("\"{w}\"")).collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let all = self.search_fts(&words.join(" AND "), project, limit)?;
        if !all.is_empty() || words.len() == 1 {
            return Ok(all);
        }
        self.search_fts(&words.join(" OR "), project, limit)
    }

    fn search_fts(&self, fts: &str, project: Option<&str>, limit: usize) -> Result<Vec<Hit>> {
        // Ranking costs about a microsecond per matching event: a word in most events of a
        // large log is ranked among its most recent matches only.
        let cutoff: i64 = self
            .conn
            .prepare_cached(
                "SELECT rowid FROM events_fts WHERE events_fts MATCH ?1 \
                 ORDER BY rowid DESC LIMIT 1 OFFSET ?2",
            )
            .and_then(|mut stmt| {
                stmt.query_row(params![fts, RANKED_MATCHES as i64 - 1], |r| r.get(0)).optional()
            })
            .map_err(self.err())?
            .unwrap_or(0);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT e.session, s.project, e.turn, e.seq, e.at, e.kind, \
                 snippet(events_fts, 0, '[', ']', '…', 16) \
                 FROM events_fts JOIN events e ON e.seq = events_fts.rowid \
                 JOIN sessions s ON s.id = e.session \
                 WHERE events_fts MATCH ?1 AND events_fts.rowid >= ?4 \
                 AND (?2 IS NULL OR s.project = ?2 OR substr(s.project, 1, length(?2) + 1) = ?2 || '/') \
                 ORDER BY rank LIMIT ?3",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(params![fts, project, limit as i64, cutoff], |r| {
                let kind: String = r.get(5)?;
                Ok(Hit {
                    session: r.get(0)?,
                    project: r.get(1)?,
                    turn: r.get(2)?,
                    seq: r.get(3)?,
                    at: time(r.get(4)?),
                    kind: Kind::parse(&kind).unwrap_or(Kind::Meta),
                    snippet: r.get::<_, String>(6)?.replace('\n', " "),
                })
            })
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }

    /// Counts, and the outcome of SQLite's own consistency check.
    pub fn health(&self) -> Result<LogHealth> {
        let count = |sql: &str| -> Result<i64> {
            self.conn.query_row(sql, [], |r| r.get(0)).map_err(self.err())
        };
        let check: String =
            self.conn.query_row("PRAGMA quick_check", [], |r| r.get(0)).map_err(self.err())?;
        Ok(LogHealth {
            sessions: count("SELECT count(*) FROM sessions")?,
            events: count("SELECT count(*) FROM events")?,
            transcripts: count("SELECT count(*) FROM sources")?,
            skipped_lines: count("SELECT COALESCE(sum(skipped), 0) FROM sources")?,
            problem: (check != "ok").then_some(check),
        })
    }
}

/// The most words a search looks for: the rest of a longer query is left out (a word repeated
/// 8,000 times took a search minutes).
pub const MAX_SEARCH_TERMS: usize = 16;

/// The longest word searched, in characters; a longer one is cut.
pub const MAX_TERM_CHARS: usize = 64;

/// The words `session search` looks for in `query`: runs of letters, digits and `_`, each once
/// (case aside), cut to [`MAX_TERM_CHARS`], the first [`MAX_SEARCH_TERMS`] of them.
pub fn search_terms(query: &str) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(|w| w.chars().take(MAX_TERM_CHARS).collect::<String>())
        .filter(|w| seen.insert(w.to_lowercase()))
        .take(MAX_SEARCH_TERMS)
        .collect()
}

/// How far the transcript `path` has been imported.
fn read_source(conn: &Connection, path: &str) -> rusqlite::Result<Option<Source>> {
    let sql = "SELECT session, offset, lines, skipped FROM sources WHERE path = ?1";
    conn.query_row(sql, [path], |r| {
        Ok(Source {
            session: r.get(0)?,
            offset: r.get::<_, i64>(1)? as u64,
            lines: r.get::<_, i64>(2)? as usize,
            skipped: r.get::<_, i64>(3)? as usize,
        })
    })
    .optional()
}

/// The columns [`session_row`] reads, in its order.
const SELECT_SESSIONS: &str = "SELECT id, agent, project, started_at, last_at, turns, events, \
    first_prompt, memory, model, mode FROM sessions";

/// A [`Session`] from a row of [`SELECT_SESSIONS`].
fn session_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Session> {
    Ok(Session {
        id: r.get(0)?,
        agent: crate::agent::Agent::from_name(&r.get::<_, String>(1)?),
        project: r.get(2)?,
        started_at: time(r.get(3)?),
        last_at: time(r.get(4)?),
        turns: r.get(5)?,
        events: r.get(6)?,
        first_prompt: r.get(7)?,
        memory: r.get(8)?,
        model: r.get(9)?,
        mode: r.get(10)?,
    })
}

fn time(seconds: Option<i64>) -> Option<Timestamp> {
    seconds.and_then(|s| Timestamp::from_second(s).ok())
}

/// Adds `session` to the sessions, its agent unknown, unless it is there: a hook may record
/// something of a session before the session's transcript is read.
fn known_session(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    at: Timestamp,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR IGNORE INTO sessions (id, agent, started_at, last_at) \
         VALUES (?1, 'unknown', ?2, ?2)",
        params![session, at.as_second()],
    )
    .map(drop)
}

/// Maps a SQLite error to one that says what to do.
fn session_error(path: &Path, e: &rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    let message = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            format!("is locked by another process ({e}); wait for it to finish and try again")
        }
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => format!(
            "is damaged ({e}); mem never deletes it: move it aside (e.g. `mv {0} {0}.broken`), \
             then `mem capture` starts a new log (transcripts still on disk are read again \
             whole)",
            path.display()
        ),
        _ => e.to_string(),
    };
    Error::Session { path: path.to_path_buf(), message }
}

#[cfg(test)]
mod tests;
