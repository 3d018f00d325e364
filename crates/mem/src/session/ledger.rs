//! The injection ledger of the session log: what each context hook put into each session's
//! context, whole or cut, so that a memory reaches the model once per session (again only
//! when it changed, whole once after it went cut, or after a compaction or a clear took it out
//! of the context).

use jiff::Timestamp;
use rusqlite::params;

use super::{SessionLog, known_session, session_error, time};
use crate::Result;

/// One memory a context hook sent.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sent {
    /// The memory's id.
    pub memory: String,
    /// The hash of its content, title and body (a changed memory has another).
    pub hash: String,
    /// Characters of its text as sent.
    pub chars: usize,
    /// Whether its line held only the start of its body (cut to fit one line), not all of it.
    pub cut: bool,
}

/// One row of the ledger, as `mem session show` lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Injection {
    /// The prompt it went with (0: the session's start).
    pub turn: i64,
    /// When.
    pub at: Option<Timestamp>,
    /// The hook's event (`SessionStart`, `UserPromptSubmit`), or `reset` where the context
    /// started again (a compaction, a clear).
    pub event: String,
    /// What was sent (nothing for a reset).
    pub sent: Option<Sent>,
}

/// The `event` of a ledger row that marks a new context.
pub const RESET: &str = "reset";

impl SessionLog {
    /// Records that `sent` went into `session`'s context with its prompt number `turn`, from the
    /// hook of `event`; with `event` [`RESET`], that the context started again (see
    /// [`SessionLog::record_reset`]). One transaction, the session made known to the log first.
    pub fn record_injections(
        &mut self,
        session: &str,
        turn: i64,
        event: &str,
        sent: &[Sent],
        at: Timestamp,
    ) -> Result<()> {
        let rows: Vec<(&str, &Sent)> = sent.iter().map(|s| (event, s)).collect();
        self.write_rows(session, turn, event == RESET, &rows, at)
    }

    /// Writes, in one transaction, a reset row when `reset` and then `rows` (each with its
    /// hook's event), all with `turn` and `at`, the session made known to the log first.
    fn write_rows(
        &mut self,
        session: &str,
        turn: i64,
        reset: bool,
        rows: &[(&str, &Sent)],
        at: Timestamp,
    ) -> Result<()> {
        let err = |e: rusqlite::Error| session_error(&self.path, &e);
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(err)?;
        known_session(&tx, session, at).map_err(err)?;
        if reset {
            tx.execute(
                "INSERT INTO injections (session, turn, at, event) VALUES (?1, ?2, ?3, ?4)",
                params![session, turn, at.as_second(), RESET],
            )
            .map_err(err)?;
        }
        for (event, s) in rows {
            tx.execute(
                "INSERT INTO injections (session, turn, at, event, memory, hash, chars, cut) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    session,
                    turn,
                    at.as_second(),
                    event,
                    s.memory,
                    s.hash,
                    s.chars as i64,
                    s.cut
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)
    }

    /// Records that `session`'s context started again (a compaction, a clear): what was sent
    /// before is sent again when it is relevant.
    pub fn record_reset(&mut self, session: &str, turn: i64, at: Timestamp) -> Result<()> {
        self.record_injections(session, turn, RESET, &[], at)
    }

    /// Records that `session` was resumed by an agent whose resumed conversation holds only
    /// what the hooks of the events `keeps` sent: when anything else had been sent since the
    /// last reset, a reset is recorded and the kept rows again after it (with `turn`), in one
    /// transaction, so that the rest is sent again. Returns whether anything was dropped.
    pub fn record_resume(
        &mut self,
        session: &str,
        turn: i64,
        keeps: &[&str],
        at: Timestamp,
    ) -> Result<bool> {
        let rows = self.since_reset(session)?;
        if rows.iter().all(|(event, _)| keeps.contains(&event.as_str())) {
            return Ok(false);
        }
        let kept: Vec<(&str, &Sent)> = rows
            .iter()
            .filter(|(event, _)| keeps.contains(&event.as_str()))
            .map(|(event, sent)| (event.as_str(), sent))
            .collect();
        self.write_rows(session, turn, true, &kept, at)?;
        Ok(true)
    }

    /// The memories sent into `session`'s context since its last reset, in order, each with
    /// its hook's event.
    fn since_reset(&self, session: &str) -> Result<Vec<(String, Sent)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT event, memory, hash, chars, cut FROM injections WHERE session = ?1 \
                 AND memory IS NOT NULL AND seq > (SELECT coalesce(max(seq), 0) FROM injections \
                 WHERE session = ?1 AND event = ?2) ORDER BY seq",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(params![session, RESET], |r| {
                let sent = Sent {
                    memory: r.get(1)?,
                    hash: r.get(2)?,
                    chars: r.get::<_, i64>(3)? as usize,
                    cut: r.get(4)?,
                };
                Ok((r.get::<_, String>(0)?, sent))
            })
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }

    /// What `session`'s context holds of mem's: the memories sent since its last reset, in
    /// order (a memory sent cut, then whole, has both rows).
    pub fn in_context(&self, session: &str) -> Result<Vec<Sent>> {
        Ok(self.since_reset(session)?.into_iter().map(|(_, s)| s).collect())
    }

    /// Whether anything was ever sent into `session`'s context.
    pub fn has_injections(&self, session: &str) -> Result<bool> {
        self.conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM injections WHERE session = ?1)",
                [session],
                |r| r.get(0),
            )
            .map_err(self.err())
    }

    /// The ledger of `session`, in order, up to prompt `turn` when given.
    pub fn injections(&self, session: &str, turn: Option<i64>) -> Result<Vec<Injection>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT turn, at, event, memory, hash, chars, cut FROM injections \
                 WHERE session = ?1 AND turn <= ?2 ORDER BY seq",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(params![session, turn.unwrap_or(i64::MAX)], |r| {
                let memory: Option<String> = r.get(3)?;
                let hash: Option<String> = r.get(4)?;
                let chars: i64 = r.get(5)?;
                let cut: bool = r.get(6)?;
                Ok(Injection {
                    turn: r.get(0)?,
                    at: time(r.get(1)?),
                    event: r.get(2)?,
                    sent: memory.map(|memory| Sent {
                        memory,
                        hash: hash.unwrap_or_default(),
                        chars: chars as usize,
                        cut,
                    }),
                })
            })
            .map_err(self.err())?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(self.err())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(memory: &str, hash: &str) -> Sent {
        Sent { memory: memory.into(), hash: hash.into(), chars: 100, cut: false }
    }

    #[test]
    fn the_context_holds_what_was_sent_since_the_last_reset() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::open_in(dir.path()).unwrap();
        let at: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        assert!(!log.has_injections("s").unwrap());
        log.record_injections("s", 0, "SessionStart", &[sent("a", "1"), sent("b", "1")], at)
            .unwrap();
        log.record_injections("s", 1, "UserPromptSubmit", &[sent("c", "1")], at).unwrap();
        log.record_injections("other", 0, "SessionStart", &[sent("d", "1")], at).unwrap();
        let held = |log: &SessionLog| -> Vec<String> {
            log.in_context("s")
                .unwrap()
                .into_iter()
                .map(|s| format!("{}{}", s.memory, s.hash))
                .collect()
        };
        assert_eq!(held(&log), ["a1", "b1", "c1"]);
        log.record_reset("s", 1, at).unwrap();
        assert!(held(&log).is_empty());
        log.record_injections("s", 2, "SessionStart", &[sent("a", "2")], at).unwrap();
        assert_eq!(held(&log), ["a2"]);
        assert!(log.has_injections("s").unwrap());
        let all = log.injections("s", None).unwrap();
        assert_eq!(all.len(), 5);
        assert_eq!(all[3].event, RESET);
        assert_eq!(all[3].sent, None);
        assert_eq!(log.injections("s", Some(0)).unwrap().len(), 2);
    }

    /// Issue #39, item 3: the ledger keeps whether each line went whole or cut, through a
    /// resume that keeps its rows too.
    #[test]
    fn the_ledger_keeps_whether_a_line_went_whole_or_cut() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::open_in(dir.path()).unwrap();
        let at: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let cut = Sent { cut: true, ..sent("a", "1") };
        log.record_injections("s", 0, "SessionStart", &[cut.clone(), sent("b", "1")], at).unwrap();
        log.record_injections("s", 1, "BeforeAgent", &[sent("a", "1")], at).unwrap();
        let cuts = |log: &SessionLog| -> Vec<(String, bool)> {
            log.in_context("s").unwrap().into_iter().map(|s| (s.memory, s.cut)).collect()
        };
        let both = [("a".to_string(), true), ("b".to_string(), false), ("a".to_string(), false)];
        assert_eq!(cuts(&log), both);
        assert!(log.record_resume("s", 2, &["BeforeAgent"], at).unwrap());
        assert_eq!(cuts(&log), [("a".to_string(), false)]);
        let all = log.injections("s", Some(0)).unwrap();
        assert_eq!(all[0].sent, Some(cut));
    }

    /// A log written before the ledger had its `cut` column (schema 3) gains it: its rows read
    /// as whole (they are not sent again), new rows say whole or cut.
    #[test]
    fn a_log_from_before_the_cut_column_migrates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::FILE);
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        crate::sqlite::migrate(&mut conn, &super::super::MIGRATIONS[..3]).unwrap().unwrap();
        conn.execute(
            "INSERT INTO injections (session, turn, at, event, memory, hash, chars) \
             VALUES ('s', 0, 1796205600, 'SessionStart', 'a', '1', 321)",
            [],
        )
        .unwrap();
        drop(conn);
        let mut log = SessionLog::open(&path, std::time::Duration::from_secs(1)).unwrap();
        let version: i64 = log.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, super::super::SCHEMA_VERSION);
        assert_eq!(log.in_context("s").unwrap(), [Sent { chars: 321, ..sent("a", "1") }]);
        let at: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let cut = Sent { cut: true, ..sent("b", "1") };
        log.record_injections("s", 1, "UserPromptSubmit", std::slice::from_ref(&cut), at).unwrap();
        assert_eq!(log.in_context("s").unwrap()[1], cut);
    }
}
