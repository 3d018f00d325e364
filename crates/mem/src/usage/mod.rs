//! The usage log: append-only `retrieved` and `used` events in `.mem/usage.db` (SQLite in WAL
//! mode, a busy timeout, a schema version with migrations), and the watermarks that say which
//! events `mem sync` has folded into the memory files.
//!
//! Unlike the index, the log is not derivable: events not yet synced live only here. A locked
//! or damaged database is therefore an error with its fix, never silently recreated.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, params};

use crate::decay::Reinforcement;
use crate::{Error, Result};

pub mod last_used;
pub mod shared;

/// File name of the log inside `.mem/`.
pub const FILE: &str = "usage.db";

/// The migrations, in order; the schema version is how many have run (`PRAGMA user_version`).
/// Never edit one that has shipped: add a new file.
const MIGRATIONS: &[&str] =
    &[include_str!("migrations/001_events.sql"), include_str!("migrations/002_machine.sql")];

/// WAL size past which a writer checkpoints and truncates it.
const WAL_LIMIT: u64 = 512 * 1024;

/// Schema version of a database this code writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// An open usage log.
pub struct UsageLog {
    conn: Connection,
    path: PathBuf,
}

/// Unsynced events of one memory, in time order, and the last sequence number among them.
#[derive(Clone, Debug, PartialEq)]
pub struct Unsynced {
    /// The events.
    pub events: Vec<Reinforcement>,
    /// Highest `seq` among them (the watermark once they are folded).
    pub last_seq: i64,
}

impl UsageLog {
    /// Opens (creating if needed) the log at `path`, waiting up to `busy` for other writers,
    /// and brings its schema up to date.
    pub fn open(path: &Path, busy: Duration) -> Result<UsageLog> {
        let conn = Connection::open(path).map_err(|e| usage_error(path, &e))?;
        UsageLog::init(conn, path, busy)
    }

    /// An in-memory log, for tests.
    pub fn open_in_memory() -> Result<UsageLog> {
        let conn =
            Connection::open_in_memory().map_err(|e| usage_error(Path::new(":memory:"), &e))?;
        UsageLog::init(conn, Path::new(":memory:"), Duration::from_secs(1))
    }

    fn init(conn: Connection, path: &Path, busy: Duration) -> Result<UsageLog> {
        let err = |e: rusqlite::Error| usage_error(path, &e);
        // WAL lets readers and one writer work at once; NORMAL syncs at checkpoints only.
        crate::sqlite::open_wal(&conn, busy).map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
        // A short-lived process (every `mem recall`) would otherwise checkpoint and fsync on
        // close; `after_write` truncates the WAL once it has grown instead (see there).
        conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(err)?;
        let mut log = UsageLog { conn, path: path.to_path_buf() };
        log.migrate()?;
        Ok(log)
    }

    fn migrate(&mut self) -> Result<()> {
        let migrated = crate::sqlite::migrate(&mut self.conn, MIGRATIONS)
            .map_err(|e| usage_error(&self.path, &e))?;
        migrated.map_err(|version| Error::Usage {
            path: self.path.clone(),
            message: format!(
                "its schema version is {version}, newer than this mem knows ({SCHEMA_VERSION}); \
                 upgrade mem"
            ),
        })
    }

    /// Every process that opens the database reads the whole WAL, and a WAL left behind by
    /// processes that do not checkpoint on close only grows: past `WAL_LIMIT` bytes, fold it
    /// into the database and truncate it (one fsync every few dozen recalls).
    /// The events are committed before this runs, so a failed checkpoint (another process
    /// reading, say) is not an error: the WAL stays as it is and the next writer tries again.
    fn after_write(&self) -> Result<()> {
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        if std::fs::metadata(&wal).is_ok_and(|m| m.len() > WAL_LIMIT) {
            let _best_effort =
                self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
        }
        Ok(())
    }

    /// Makes every later commit of this connection durable (`synchronous = FULL`), as `mem
    /// sync` needs: its watermark must not be lost after the file it describes was written.
    pub fn durable(&self) -> Result<()> {
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| usage_error(&self.path, &e))
    }

    /// Records that recall returned `ranked` (ids, best first) for a query, in one transaction.
    pub fn record_retrieved(
        &mut self,
        ranked: &[&str],
        query_hash: &str,
        at: Timestamp,
    ) -> Result<()> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| usage_error(&path, &e);
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut insert = tx
                .prepare_cached(
                    "INSERT INTO events (memory_id, kind, at, rank, query_hash) \
                     VALUES (?1, 'retrieved', ?2, ?3, ?4)",
                )
                .map_err(err)?;
            for (i, id) in ranked.iter().enumerate() {
                insert
                    .execute(params![id, at.as_second(), i as i64 + 1, query_hash])
                    .map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        self.after_write()
    }

    /// Records that the memories `ids` were used, in one transaction.
    pub fn record_used(&mut self, ids: &[&str], at: Timestamp) -> Result<()> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| usage_error(&path, &e);
        let tx = self.conn.transaction().map_err(err)?;
        {
            let mut insert = tx
                .prepare_cached("INSERT INTO events (memory_id, kind, at) VALUES (?1, 'used', ?2)")
                .map_err(err)?;
            for id in ids {
                insert.execute(params![id, at.as_second()]).map_err(err)?;
            }
        }
        tx.commit().map_err(err)?;
        self.after_write()
    }

    /// Ids that have events not yet folded into their files, sorted.
    pub fn unsynced_ids(&self) -> Result<Vec<String>> {
        let err = |e: rusqlite::Error| usage_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT e.memory_id FROM events e LEFT JOIN synced s USING (memory_id) \
                 WHERE e.seq > COALESCE(s.seq, 0) ORDER BY e.memory_id",
            )
            .map_err(err)?;
        let ids = stmt.query_map([], |r| r.get(0)).map_err(err)?;
        ids.collect::<rusqlite::Result<Vec<String>>>().map_err(err)
    }

    /// The events of `id` not yet folded into its file, in time order.
    pub fn unsynced(&self, id: &str) -> Result<Unsynced> {
        let err = |e: rusqlite::Error| usage_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT seq, kind, at, rank FROM events WHERE memory_id = ?1 \
                 AND seq > COALESCE((SELECT seq FROM synced WHERE memory_id = ?1), 0) \
                 ORDER BY at, seq",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                ))
            })
            .map_err(err)?;
        let mut out = Unsynced { events: Vec::new(), last_seq: 0 };
        for row in rows {
            let (seq, kind, at, rank) = row.map_err(err)?;
            let at = Timestamp::from_second(at).map_err(|e| Error::Usage {
                path: self.path.clone(),
                message: format!("event {seq} has an impossible time: {e}"),
            })?;
            out.last_seq = out.last_seq.max(seq);
            out.events.push(match kind.as_str() {
                "used" => Reinforcement::Used { at },
                _ => Reinforcement::Retrieved {
                    at,
                    rank: rank.unwrap_or(1).clamp(1, i64::from(u32::MAX)) as u32,
                },
            });
        }
        Ok(out)
    }

    /// Notes that `id`'s file is about to be rewritten to content hashing to `hash`, folding
    /// events up to `seq`.
    pub fn begin_sync(&self, id: &str, seq: i64, hash: &[u8]) -> Result<()> {
        self.conn
            .execute(
                "INSERT OR REPLACE INTO pending_sync (memory_id, seq, hash) VALUES (?1, ?2, ?3)",
                params![id, seq, hash],
            )
            .map_err(|e| usage_error(&self.path, &e))?;
        Ok(())
    }

    /// Moves `id`'s watermark to `seq` and clears its pending sync, in one transaction.
    pub fn finish_sync(&mut self, id: &str, seq: i64) -> Result<()> {
        let path = self.path.clone();
        let err = |e: rusqlite::Error| usage_error(&path, &e);
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO synced (memory_id, seq) VALUES (?1, ?2) \
             ON CONFLICT (memory_id) DO UPDATE SET seq = max(seq, excluded.seq)",
            params![id, seq],
        )
        .map_err(err)?;
        tx.execute("DELETE FROM pending_sync WHERE memory_id = ?1", [id]).map_err(err)?;
        tx.commit().map_err(err)
    }

    /// Drops `id`'s pending sync (its file was not rewritten).
    pub fn discard_pending(&self, id: &str) -> Result<()> {
        self.conn
            .execute("DELETE FROM pending_sync WHERE memory_id = ?1", [id])
            .map_err(|e| usage_error(&self.path, &e))?;
        Ok(())
    }

    /// Syncs a crash left unfinished: (id, seq, hash of the content being written).
    pub fn pending(&self) -> Result<Vec<(String, i64, Vec<u8>)>> {
        let err = |e: rusqlite::Error| usage_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare("SELECT memory_id, seq, hash FROM pending_sync ORDER BY memory_id")
            .map_err(err)?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).map_err(err)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(err)
    }

    /// The name of this log's usage file in the root's `usage/` folder, chosen (from `now`
    /// and randomness) the first time it is asked for.
    pub fn machine(&self, now: Timestamp) -> Result<String> {
        let err = |e: rusqlite::Error| usage_error(&self.path, &e);
        let name = crate::format::MemoryId::generate(now).as_str().to_lowercase();
        self.conn
            .execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('machine', ?1)", [&name])
            .map_err(err)?;
        self.conn
            .query_row("SELECT value FROM meta WHERE key = 'machine'", [], |r| r.get(0))
            .map_err(err)
    }

    /// The name of this log's usage file, if a write has chosen it yet (see [`UsageLog::machine`]);
    /// only reads, for the commands that write nothing (a dry run, `mem show`).
    pub fn machine_name(&self) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = 'machine'", [], |r| r.get(0))
            .optional()
            .map_err(|e| usage_error(&self.path, &e))
    }

    /// Events not yet in this machine's usage file, whose last event is number `written`, nor
    /// folded into an `access:` line by an older `mem sync`: (seq, memory id, event), in order.
    pub fn events_after(&self, written: i64) -> Result<Vec<(i64, String, Reinforcement)>> {
        let err = |e: rusqlite::Error| usage_error(&self.path, &e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT e.seq, e.memory_id, e.kind, e.at, e.rank FROM events e \
                 LEFT JOIN synced s USING (memory_id) \
                 WHERE e.seq > ?1 AND e.seq > COALESCE(s.seq, 0) ORDER BY e.seq",
            )
            .map_err(err)?;
        let rows = stmt
            .query_map([written], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, Option<i64>>(4)?,
                ))
            })
            .map_err(err)?;
        let mut out = Vec::new();
        for row in rows {
            let (seq, id, kind, at, rank) = row.map_err(err)?;
            out.push((seq, id, self.event(seq, &kind, at, rank)?));
        }
        Ok(out)
    }

    /// When the first event of this log happened, if it has any.
    pub fn first_event_at(&self) -> Result<Option<Timestamp>> {
        let at: Option<i64> = self
            .conn
            .query_row("SELECT min(at) FROM events", [], |r| r.get(0))
            .map_err(|e| usage_error(&self.path, &e))?;
        at.map(|at| self.event(0, "used", at, None).map(|e| e.at())).transpose()
    }

    fn event(&self, seq: i64, kind: &str, at: i64, rank: Option<i64>) -> Result<Reinforcement> {
        let at = Timestamp::from_second(at).map_err(|e| Error::Usage {
            path: self.path.clone(),
            message: format!("event {seq} has an impossible time: {e}"),
        })?;
        Ok(match kind {
            "used" => Reinforcement::Used { at },
            _ => Reinforcement::Retrieved {
                at,
                rank: rank.unwrap_or(1).clamp(1, i64::from(u32::MAX)) as u32,
            },
        })
    }

    /// Number of events, for reports.
    pub fn event_count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| usage_error(&self.path, &e))
    }

    /// SQLite's own consistency check; `Ok` when it says "ok".
    pub fn check(&self) -> Result<()> {
        let verdict: Option<String> = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .optional()
            .map_err(|e| usage_error(&self.path, &e))?;
        match verdict.as_deref() {
            Some("ok") => Ok(()),
            other => Err(Error::Usage {
                path: self.path.clone(),
                message: format!("failed its consistency check: {}", other.unwrap_or("no answer")),
            }),
        }
    }
}

/// A stable short hash of a query, recorded with `retrieved` events instead of the text.
pub fn query_hash(query: &str) -> String {
    let normal = query.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    blake3::hash(normal.as_bytes()).to_hex()[..16].to_string()
}

/// Maps a SQLite error to one that says what to do.
fn usage_error(path: &Path, e: &rusqlite::Error) -> Error {
    use rusqlite::ErrorCode;
    let message = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => format!(
            "is locked by another process ({e}); wait for it to finish and try again, or raise \
             [usage] busy_timeout_ms in mem.toml"
        ),
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => format!(
            "is damaged ({e}); it only holds usage events not yet written to the memory files by \
             `mem sync`: move it aside (e.g. `mv {0} {0}.broken`) and run the command again",
            path.display()
        ),
        _ => e.to_string(),
    };
    Error::Usage { path: path.to_path_buf(), message }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decay::Reinforcement;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    #[test]
    fn events_fold_once() {
        let mut log = UsageLog::open_in_memory().unwrap();
        log.record_retrieved(&["a", "b"], &query_hash("Login  test"), t(10)).unwrap();
        log.record_used(&["a"], t(20)).unwrap();
        assert_eq!(log.unsynced_ids().unwrap(), ["a", "b"]);
        let a = log.unsynced("a").unwrap();
        assert_eq!(
            a.events,
            [Reinforcement::Retrieved { at: t(10), rank: 1 }, Reinforcement::Used { at: t(20) }]
        );
        log.begin_sync("a", a.last_seq, b"hash").unwrap();
        assert_eq!(log.pending().unwrap().len(), 1);
        log.finish_sync("a", a.last_seq).unwrap();
        assert!(log.pending().unwrap().is_empty());
        assert_eq!(log.unsynced_ids().unwrap(), ["b"]);
        assert!(log.unsynced("a").unwrap().events.is_empty());
        log.record_used(&["a"], t(30)).unwrap();
        assert_eq!(log.unsynced("a").unwrap().events, [Reinforcement::Used { at: t(30) }]);
        assert_eq!(log.event_count().unwrap(), 4);
        log.check().unwrap();
    }

    #[test]
    fn query_hashes_ignore_case_and_spacing() {
        assert_eq!(query_hash("Login  test"), query_hash("login test"));
        assert_ne!(query_hash("login"), query_hash("logout"));
    }

    #[test]
    fn the_wal_stays_bounded_across_short_lived_processes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let ranked: Vec<String> = (0..20).map(|i| format!("m{i}")).collect();
        let ranked: Vec<&str> = ranked.iter().map(String::as_str).collect();
        for _ in 0..300 {
            let mut log = UsageLog::open(&path, Duration::from_secs(1)).unwrap();
            log.record_retrieved(&ranked, "h", t(0)).unwrap();
        }
        let wal = std::fs::metadata(dir.path().join(format!("{FILE}-wal"))).unwrap().len();
        assert!(wal < 2 * WAL_LIMIT, "WAL is {wal} bytes");
        let log = UsageLog::open(&path, Duration::from_secs(1)).unwrap();
        assert_eq!(log.event_count().unwrap(), 6_000);
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        UsageLog::open(&path, Duration::from_millis(100)).unwrap();
        let conn = Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", SCHEMA_VERSION + 1).unwrap();
        drop(conn);
        let e = UsageLog::open(&path, Duration::from_millis(100)).err().unwrap().to_string();
        assert!(e.contains("upgrade mem"), "{e}");
    }
}
