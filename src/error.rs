//! The library's error type: one enum, a variant per failure, each message saying how to fix it.

use std::path::PathBuf;

use crate::format::FormatError;

/// Result alias used throughout the library; refer to it as `crate::Result<T>`.
pub type Result<T> = std::result::Result<T, Error>;

/// Everything that can go wrong inside the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A memory file could not be parsed; `path:line: reason`.
    #[error("{}{}: {source}", path.display(), source.line().map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        /// The file, relative to the memory root where possible.
        path: PathBuf,
        /// What is wrong with it.
        source: FormatError,
    },
    /// A memory id is malformed (empty, contains `/`, `..`, or characters outside `[A-Za-z0-9._-]`).
    #[error("invalid memory id {id:?}: {reason}")]
    InvalidId {
        /// The rejected id.
        id: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// No memory has the requested id.
    #[error("no memory with id {0:?} (try `mem list` to see the ids)")]
    NotFound(String),
    /// Several files claim the same id.
    #[error("id {id:?} is used by {} files: {}; give each file its own id", paths.len(), paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    DuplicateId {
        /// The shared id.
        id: String,
        /// Every file that uses it.
        paths: Vec<PathBuf>,
    },
    /// `mem.toml` is not valid.
    #[error("{}: {message}", path.display())]
    Config {
        /// The settings file.
        path: PathBuf,
        /// What is wrong, with line and column when the TOML parser gives them.
        message: String,
    },
    /// The memory root does not exist or is not a folder.
    #[error("memory root {} does not exist; create it with `mem init {}`", .0.display(), .0.display())]
    NoRoot(PathBuf),
    /// A caller-supplied value is invalid (an empty memory text, an importance out of range...).
    #[error("{0}")]
    Invalid(String),
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The usage database cannot be used.
    #[error("usage database {}: {message}", path.display())]
    Usage {
        /// The database file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// The summariser command of `mem reflect` failed for one cluster.
    #[error("summariser `{command}` {message}")]
    Summarizer {
        /// The command line.
        command: String,
        /// What went wrong: timeout, exit status, empty output.
        message: String,
    },
    /// `mem capture` could not use its hook payload or the session's transcript, or could not
    /// write or log the session memory.
    #[error("{0}")]
    Capture(String),
    /// The embedding model cannot be loaded or run.
    #[error("embedding model: {0}")]
    Embed(#[from] crate::embed::EmbedError),
    /// The search index failed in a way a rebuild did not fix.
    #[error("index error: {0} (delete the .mem/ folder of the memory root and run `mem index`)")]
    Index(#[from] tantivy::TantivyError),
}

/// The message a caught panic carried (`panic!` with a text or a format), else `fallback`.
pub fn panic_message(panic: &(dyn std::any::Any + Send), fallback: &str) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| fallback.to_string())
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
