//! The facts capture took from each session (`crate::capture::facts`): which statement of
//! which session became or reinforced which memory, so that a transcript read again gives
//! nothing twice.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use super::{SessionLog, session_error};
use crate::Result;

/// Where a fact memory was stated: a session, the turn whose prompt said it, and what capture
/// did with it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct FactOrigin {
    /// The session.
    pub session: String,
    /// The turn of the session log (the number of its prompt) that stated it, when the log
    /// holds the prompt.
    pub turn: Option<i64>,
    /// When it was stated.
    pub at: Option<Timestamp>,
    /// `added`, `used` or `superseded`.
    pub outcome: String,
}

impl SessionLog {
    /// Where the fact memory `memory` was stated (see [`FactOrigin`]), oldest first.
    pub fn fact_origins(&self, memory: &str) -> Result<Vec<FactOrigin>> {
        let err = |e: rusqlite::Error| session_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT f.session, f.outcome, f.at, (SELECT MAX(e.turn) FROM events e \
                 WHERE e.session = f.session AND e.kind = 'prompt' AND e.at <= f.at) \
                 FROM facts f WHERE f.memory = ?1 ORDER BY f.at, f.session",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map(params![memory], |row| {
                let at: Option<i64> = row.get(2)?;
                Ok(FactOrigin {
                    session: row.get(0)?,
                    outcome: row.get(1)?,
                    at: at.and_then(|s| Timestamp::from_second(s).ok()),
                    turn: row.get(3)?,
                })
            })
            .map_err(err)?;
        rows.collect::<std::result::Result<_, _>>().map_err(err)
    }

    /// The memory the statement `key` of `session` was taken as, if it was.
    pub fn fact_taken(&self, session: &str, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row(
                "SELECT memory FROM facts WHERE session = ?1 AND key = ?2",
                params![session, key],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| session_error(&self.path, &e))
    }

    /// The fact memories the statements of `session` were taken as (added, used or
    /// superseding), in the order they were taken: what that session's history holds already.
    pub fn facts_of(&self, session: &str) -> Result<Vec<String>> {
        let err = |e: rusqlite::Error| session_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare("SELECT memory FROM facts WHERE session = ?1 ORDER BY at, rowid")
            .map_err(err)?;
        let rows = stmt.query_map(params![session], |row| row.get(0)).map_err(err)?;
        rows.collect::<std::result::Result<_, _>>().map_err(err)
    }

    /// Records that the statement `key` of `session`, made at `at`, was taken as `memory`
    /// (`outcome`: added, used or superseded). Once: a second record of the pair is ignored.
    pub fn record_fact(
        &mut self,
        session: &str,
        key: &str,
        memory: &str,
        outcome: &str,
        at: Timestamp,
    ) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR IGNORE INTO facts (session, key, memory, outcome, at) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![session, key, memory, outcome, at.as_second()],
            )
            .map(drop)
            .map_err(|e| session_error(&self.path, &e))
    }

    /// How many statements were taken, by outcome (added, used, superseded), over every
    /// session.
    pub fn fact_counts(&self) -> Result<Vec<(String, i64)>> {
        let err = |e: rusqlite::Error| session_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare("SELECT outcome, COUNT(*) FROM facts GROUP BY outcome ORDER BY outcome")
            .map_err(err)?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?))).map_err(err)?;
        rows.collect::<std::result::Result<_, _>>().map_err(err)
    }
}
