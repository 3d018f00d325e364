//! The errors of the team store; each message says how to fix the problem.

/// `Result` of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What can go wrong with a team store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `[team]` of the user configuration cannot be used.
    #[error("[team] {0}")]
    Settings(String),
    /// The server could not be reached or refused the connection.
    #[error("cannot connect to the team store {target}: {}", describe(source))]
    Connect {
        /// The host, port and database, without a password.
        target: String,
        /// What the client said.
        source: postgres::Error,
    },
    /// TLS could not be set up for a host that needs it.
    #[error("TLS for the team store: {0}")]
    Tls(String),
    /// The database has no schema of mem's yet.
    #[error("the team store has no schema yet: run `mem team init`")]
    NoSchema,
    /// The database's schema is newer than this binary knows.
    #[error(
        "the team store's schema is version {found}, newer than this mem knows ({known}): \
         update mem on this machine"
    )]
    SchemaTooNew {
        /// The database's version.
        found: i32,
        /// This binary's newest version.
        known: i32,
    },
    /// The database's schema is older than this binary's.
    #[error(
        "the team store's schema is version {found}, older than this mem's ({known}): run \
         `mem team init` to migrate it"
    )]
    SchemaOld {
        /// The database's version.
        found: i32,
        /// This binary's newest version.
        known: i32,
    },
    /// `mem team grant` named a role the server does not have.
    #[error("the team store has no role {0:?}: create it first (CREATE ROLE ... LOGIN)")]
    NoRole(String),
    /// A statement failed.
    #[error("the team store: {}", describe(.0))]
    Postgres(#[from] postgres::Error),
    /// A root's record of what it pushed (`.mem/team-pushed`) is not one mem wrote.
    #[error(
        "{} is not a record mem wrote ({reason}): delete it, and the next push writes it anew",
        path.display()
    )]
    Record {
        /// The record's file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Reading the root failed.
    #[error(transparent)]
    Mem(#[from] mem::Error),
}

/// What the client or the server said, with its cause (the client's own message is only
/// "db error" or "error connecting to server").
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}
