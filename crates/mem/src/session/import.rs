//! Incremental import of a transcript into the session log: the lines after the offset the
//! last import stopped at, in one transaction with the new offset, so that an import cut short
//! (a kill, a power cut) leaves the log as it was and the next one appends exactly what is
//! missing. A message an agent writes again under its id (Gemini CLI) is logged once: the ids
//! of the messages logged are kept with the events.

use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use rusqlite::{OptionalExtension, params};

use crate::agent::{Agent, Fold};
use crate::json::{JsonLine, read_json_lines};
use crate::{Error, Result};

use super::SessionLog;
use super::events::{Kind, LineState, NewEvent};

/// What an import of one transcript did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Imported {
    /// The session.
    pub session: String,
    /// Events appended.
    pub events: usize,
    /// Lines read past the previous offset: each value (lines joined after a raw line break
    /// count once) and each run of lines given up on.
    pub lines: usize,
    /// Of those, the runs given up on: not JSON, or longer than the line limit.
    pub skipped: usize,
    /// Bytes at the end left for the next import: a last line without its line break (still
    /// being written, or cut short) is not an event yet.
    pub pending_bytes: u64,
    /// Secrets redacted from the new events.
    pub redacted: usize,
    /// The transcript is shorter than what was already imported from it (it was replaced or
    /// cut): nothing was imported, and the log keeps what it had.
    pub shrunk: bool,
}

impl SessionLog {
    /// Appends to the log what `transcript` holds past the point the last import of it stopped
    /// (the file is known by its canonical path), as events of `session` (created if new; its
    /// agent is that of the first line recognised; `memory` is the id of its digest in
    /// the long-term layer). One transaction: all of it or nothing.
    pub fn import(
        &mut self,
        transcript: &Path,
        session: &str,
        memory: Option<&str>,
    ) -> Result<Imported> {
        // One key per file, however the hooks name it.
        let canonical = std::fs::canonicalize(transcript);
        let key = canonical.as_deref().unwrap_or(transcript).to_string_lossy().into_owned();
        let path = self.path.clone();
        let err = |e: rusqlite::Error| super::session_error(&path, &e);
        // Read the offset inside the transaction: another capture of the same transcript (the
        // Stop and SessionEnd hooks, the checkpoint hook) waits here, then reads what this one
        // committed.
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        // A file another session wrote before (a path reused) is read from its start.
        let source = super::read_source(&tx, &key).map_err(err)?.filter(|s| s.session == session);
        let io = |e: std::io::Error| Error::io(transcript, e);
        let mut file = std::fs::File::open(transcript).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        let mut imported = Imported { session: session.to_string(), ..Imported::default() };
        let offset = source.as_ref().map_or(0, |s| s.offset);
        if len < offset {
            imported.shrunk = true;
            return Ok(imported);
        }
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut reader = BufReader::with_capacity(64 * 1024, file);
        let (mut state, turn) = session_state(&tx, session).map_err(err)?;
        // The messages an earlier import logged: a later copy of one adds nothing.
        let logged = logged_messages(&tx, session).map_err(err)?;
        state.fold.released.clone_from(&logged);
        let mut added = Added { turn, ..Added::default() };
        let log = Log { tx: &tx, session, sql: &err, io: &io };
        let taken = append(&log, &mut reader, &mut state, &mut added, &mut imported)?;
        let end = offset + taken;
        imported.pending_bytes = len.saturating_sub(end);
        imported.redacted = state.redacted;
        update_session(&tx, session, memory, &state, &added, imported.events).map_err(err)?;
        let new = state.fold.released.difference(&logged);
        record_messages(&tx, session, new).map_err(err)?;
        let (lines, skipped) = source.map_or((0, 0), |s| (s.lines, s.skipped));
        tx.execute(
            "INSERT INTO sources (path, session, offset, lines, skipped) VALUES (?1, ?2, ?3, ?4, ?5) \
             ON CONFLICT (path) DO UPDATE SET session = ?2, offset = ?3, lines = ?4, skipped = ?5",
            params![
                key,
                session,
                end as i64,
                (lines + imported.lines) as i64,
                (skipped + imported.skipped) as i64
            ],
        )
        .map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(imported)
    }
}

impl SessionLog {
    /// Has the next import of `transcript` read it from its start: mem rewrote it other than by
    /// appending (an agent's session read again as another branch of its tree). Its events stay
    /// logged; the messages logged by id ([`crate::agent::Fold::released`]) are not logged again.
    pub fn read_again(&mut self, transcript: &Path) -> Result<()> {
        let canonical = std::fs::canonicalize(transcript);
        let key = canonical.as_deref().unwrap_or(transcript).to_string_lossy().into_owned();
        self.conn
            .execute("UPDATE sources SET offset = 0 WHERE path = ?1", [key])
            .map_err(|e| super::session_error(&self.path, &e))?;
        Ok(())
    }
}

/// What an import adds to a session besides its events: the turn reached, the first prompt,
/// the times of the first and last events.
#[derive(Default)]
struct Added {
    turn: i64,
    first_prompt: Option<String>,
    first_at: Option<i64>,
    last_at: Option<i64>,
}

/// The session being appended to, in its transaction, and how its failures are told: of the
/// log (`sql`), of reading the transcript (`io`).
struct Log<'a> {
    tx: &'a rusqlite::Transaction<'a>,
    session: &'a str,
    sql: &'a dyn Fn(rusqlite::Error) -> Error,
    io: &'a dyn Fn(std::io::Error) -> Error,
}

/// What the log knows of `session` to carry its transcript on (the agent's reader with the
/// metadata last recorded, the turn reached); a new session is added, its agent unknown.
fn session_state(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
) -> rusqlite::Result<(LineState, i64)> {
    let known = tx
        .query_row(
            "SELECT project, model, mode, turns, agent FROM sessions WHERE id = ?1",
            [session],
            |r| {
                let agent = Agent::from_name(&r.get::<_, String>(4)?);
                let fold = Fold::resumed(agent, r.get(0)?, r.get(1)?, r.get(2)?);
                Ok((LineState { fold, redacted: 0 }, r.get::<_, i64>(3)?))
            },
        )
        .optional()?;
    match known {
        Some(known) => Ok(known),
        None => {
            tx.execute("INSERT INTO sessions (id, agent) VALUES (?1, 'unknown')", [session])?;
            Ok((LineState::default(), 0))
        }
    }
}

/// The ids of the messages of `session` already logged (see [`crate::agent::Fold::released`]).
fn logged_messages(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
) -> rusqlite::Result<std::collections::HashSet<String>> {
    let mut stmt = tx.prepare_cached("SELECT id FROM messages WHERE session = ?1")?;
    let ids = stmt.query_map([session], |r| r.get(0))?;
    ids.collect()
}

/// Records that the messages `ids` of `session` are logged.
fn record_messages<'a>(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    ids: impl Iterator<Item = &'a String>,
) -> rusqlite::Result<()> {
    let mut insert =
        tx.prepare_cached("INSERT OR IGNORE INTO messages (session, id) VALUES (?1, ?2)")?;
    for id in ids {
        insert.execute(params![session, id])?;
    }
    Ok(())
}

/// Appends the events of the lines `reader` holds (whole lines only) to `session`, a prompt
/// starting each turn; returns the bytes taken.
fn append(
    log: &Log<'_>,
    reader: &mut impl std::io::BufRead,
    state: &mut LineState,
    added: &mut Added,
    imported: &mut Imported,
) -> Result<u64> {
    let mut insert = log
        .tx
        .prepare_cached(
            "INSERT INTO events (session, turn, at, kind, tool, call_id, command, files, \
             status, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )
        .map_err(log.sql)?;
    let mut take = |events: Vec<NewEvent>, imported: &mut Imported| -> Result<()> {
        for event in events {
            if event.kind == Kind::Prompt {
                added.turn += 1;
                if added.first_prompt.is_none() {
                    added.first_prompt = Some(event.text.clone());
                }
            }
            let at = event.at.map(|t| t.as_second());
            if at.is_some() {
                added.first_at = added.first_at.or(at);
                added.last_at = at.max(added.last_at);
            }
            let files = (!event.files.is_empty()).then(|| event.files.join("\n"));
            insert
                .execute(params![
                    log.session,
                    added.turn,
                    at,
                    event.kind.as_str(),
                    event.tool,
                    event.call_id,
                    event.command,
                    files,
                    event.status,
                    event.text
                ])
                .map_err(log.sql)?;
            imported.events += 1;
        }
        Ok(())
    };
    let taken = read_json_lines(reader, true, log.io, |line| {
        imported.lines += 1;
        match line {
            JsonLine::Skipped { .. } => imported.skipped += 1,
            JsonLine::Value { value, .. } => take(state.events(&value), imported)?,
        }
        Ok(())
    })?;
    // Imports come between an agent's turns (its hooks): a message the agent may write again
    // under its id is whole by then.
    take(state.finish(), imported)?;
    Ok(taken)
}

/// The session's row brought up to date: its agent once known (a row's agent is never
/// rewritten), the metadata last recorded, turns, events, first prompt, digest and times.
fn update_session(
    tx: &rusqlite::Transaction<'_>,
    session: &str,
    memory: Option<&str>,
    state: &LineState,
    added: &Added,
    events: usize,
) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE sessions SET agent = CASE agent WHEN 'unknown' THEN COALESCE(?2, agent) \
         ELSE agent END, project = ?3, model = ?4, mode = ?5, turns = ?6, \
         events = events + ?7, first_prompt = COALESCE(first_prompt, ?8), \
         memory = COALESCE(?9, memory), started_at = COALESCE(started_at, ?10), \
         last_at = MAX(COALESCE(last_at, 0), COALESCE(?11, 0)) WHERE id = ?1",
        params![
            session,
            state.fold.agent.map(Agent::name),
            state.fold.cwd,
            state.fold.model,
            state.fold.mode,
            added.turn,
            events as i64,
            added.first_prompt,
            memory,
            added.first_at,
            added.last_at
        ],
    )?;
    Ok(())
}
