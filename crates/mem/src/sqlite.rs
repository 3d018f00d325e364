//! What the SQLite logs of `.mem/` (the usage log, the session log) share: opening in WAL mode
//! with a busy wait, and migrations counted by `PRAGMA user_version`.

use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

/// Sets the busy timeout and WAL mode on `conn`. Switching a new database to WAL needs it to
/// itself, and SQLite does not wait for that: retried while another process creates it too.
pub(crate) fn open_wal(conn: &Connection, busy: Duration) -> rusqlite::Result<()> {
    conn.busy_timeout(busy)?;
    let mut waited = Duration::ZERO;
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => return Ok(()),
            Err(e) if is_busy(&e) && waited < busy => {
                std::thread::sleep(Duration::from_millis(10));
                waited += Duration::from_millis(10);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether `e` says another connection holds the database.
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// Runs the `migrations` a database has not run yet (its schema version is how many it has),
/// in one immediate transaction: two processes creating the database both wait here, and the
/// second finds the schema current. `Ok(Err(version))` when the database is newer than this
/// code.
pub(crate) fn migrate(
    conn: &mut Connection,
    migrations: &[&str],
) -> rusqlite::Result<Result<(), i64>> {
    let latest = migrations.len() as i64;
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current == latest {
        return Ok(Ok(()));
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > latest {
        return Ok(Err(version));
    }
    for (i, sql) in migrations.iter().enumerate().skip(version as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1)?;
    }
    tx.commit()?;
    Ok(Ok(()))
}
