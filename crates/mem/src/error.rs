//! The library's error types: [`Error`], a variant per failure, each message saying how to fix
//! it, and the detailed errors it wraps ([`FormatError`] of a memory file, [`EmbedError`] of the
//! model). This module depends on no other module of the crate.

use std::path::PathBuf;

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
    #[error("invalid memory id {:?}: {reason}", crate::error::clip_id(id))]
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
    /// A setting of `mem.toml` (or its command-line override) is out of range.
    #[error("{}: {source}", path.display())]
    Setting {
        /// The settings file.
        path: PathBuf,
        /// The key and what is wrong with its value.
        source: SettingError,
    },
    /// A workspace checkpoint could not be taken, listed or restored (see
    /// [`crate::checkpoint`]); the message says why and, where there is one, the fix.
    #[error("{0}")]
    Checkpoint(String),
    /// The root is not checked against code: only a project root (`.memory/` at the top of a
    /// git work tree, found from the working directory, not given with `--dir`/`MEM_DIR`) is.
    #[error(
        "{} is not a project root: only the .memory/ folder at the top of a git work tree, found \
         from the working directory (not given with --dir or MEM_DIR), is checked against the \
         code; run this inside the repository, or `mem init --project` there",
        .0.display()
    )]
    NotProject(PathBuf),
    /// No memory root was given and none was found.
    #[error("no memory root: pass --dir DIR, set MEM_DIR, or run `mem init` in a folder")]
    NoRootFound,
    /// The memory root given is a file, not a folder.
    #[error("memory root {} is a file, not a folder; pass the folder that holds the memories", .0.display())]
    RootIsFile(PathBuf),
    /// A file mem was about to create exists already.
    #[error("{} exists already; mem never replaces a file it is creating: move that file away (or give the memory another id) and run the command again", .0.display())]
    Exists(PathBuf),
    /// The memory root does not exist or is not a folder.
    #[error("memory root {} does not exist; create it with `mem init {}`", .0.display(), .0.display())]
    NoRoot(PathBuf),
    /// A new memory's content is not acceptable (no text, importance out of range).
    #[error("{0}")]
    InvalidMemory(String),
    /// Two versions of a memory file cannot be merged (a side is not a memory, or they hold
    /// different memories): the git merge driver leaves the conflict to git, `mem resolve`
    /// leaves the file as it is.
    #[error("{0}")]
    Merge(String),
    /// The user layer's clone of its remote (`[layers] user_remote`) cannot be made or synced,
    /// or is refused (see [`crate::remote`]); the message says what failed and the fix.
    #[error("{0}")]
    Remote(String),
    /// A memory cannot be marked as replaced by itself.
    #[error("a memory cannot supersede itself")]
    SelfSupersede,
    /// The memory was invalidated already; it is not invalidated twice.
    #[error("memory {id} is already invalid since {since} ({path})")]
    AlreadyInvalid {
        /// The memory.
        id: String,
        /// When it became invalid.
        since: jiff::Timestamp,
        /// Its file, relative to the root.
        path: String,
    },
    /// A memory file reached through a symbolic link that leaves the root: read and recalled,
    /// never written, moved or deleted.
    #[error("{} is reached through a symbolic link that leaves the memory root: mem reads it but never writes, moves or deletes it; change it where it lives", .0.display())]
    OutsideRoot(PathBuf),
    /// `.mem/`, or something in it, is a symbolic link or not a plain file or folder: mem
    /// writes, replaces and deletes files there, so it never follows one (see
    /// `store::state_dir`).
    #[error("{} is {what}; mem writes and deletes files in .mem/ and never follows links there: remove it (`mem index` rebuilds what .mem/ derives; if you moved .mem/ elsewhere yourself, move the folder back in place of the link)", path.display())]
    UnsafeState {
        /// The link or odd file.
        path: PathBuf,
        /// What it is ("a symbolic link to ...", "not a folder" ...).
        what: String,
    },
    /// A memory file that broke the format when it was last read and has not changed since
    /// (not read again; see `index::BadFile`).
    #[error("{message}")]
    StillBad {
        /// The file, relative to the memory root.
        path: PathBuf,
        /// The failure as it was reported then (`path:line: reason`).
        message: String,
    },
    /// A move (prune, restore) finds its destination taken by another memory.
    #[error("{} exists and holds another memory ({other}); move one of them elsewhere, then run the command again", to.display())]
    MoveBlocked {
        /// The destination, relative to the root.
        to: PathBuf,
        /// The id of the memory already there.
        other: String,
    },
    /// No archived memory has the id `mem restore` was given.
    #[error("no archived memory with id {0:?} under archive/")]
    NotArchived(String),
    /// An operation needs the embedding model and none is configured.
    #[error(
        "no embedding model is configured: set [embed] model_dir in your user configuration (~/.config/mem/config.toml) or MEM_EMBED_MODEL_DIR; `scripts/fetch-model.sh DIR` fetches one"
    )]
    NoModel,
    /// An operation needs a memory's vector and it has none yet.
    #[error("{0} has no vector yet; run `mem index`")]
    NoVector(String),
    /// A labelled query file for `mem eval` is not usable.
    #[error("{0}")]
    QueryFile(String),
    /// A file-system operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A file that a clone, an agent or another program controls is not read (see
    /// `untrusted`): not a regular file, too large, or a link out of its folder.
    #[error("cannot read {}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why it is not read.
        source: Unreadable,
    },
    /// The usage database cannot be used.
    #[error("usage database {}: {message}", path.display())]
    Usage {
        /// The database file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// The session log cannot be used.
    #[error("session log {}: {message}", path.display())]
    Session {
        /// The database file.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A memory root found above the folder belongs to another user.
    #[error(
        "the memory root {} belongs to {owner}, not to you: mem does not use a root someone \
         else owns (its memories would reach your sessions, and your sessions' digests its \
         folder); if you trust it, run `mem allow {}`",
        root.display(),
        root.display()
    )]
    ForeignRoot {
        /// The root.
        root: PathBuf,
        /// Its owner, as `alice (uid 1001)` or `uid 1001`.
        owner: String,
    },
    /// No session of the session log has this id (or starts with it).
    #[error("session log {}: no session {id:?}: `mem session list` shows them", path.display())]
    NoSuchSession {
        /// The database file.
        path: PathBuf,
        /// The id asked for.
        id: String,
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
    #[error("{message}")]
    Capture {
        /// Which step failed.
        kind: CaptureFailure,
        /// What went wrong and what to do.
        message: String,
    },
    /// The embedding model cannot be loaded or run.
    #[error("embedding model: {0}")]
    Embed(#[from] EmbedError),
    /// The search index failed in a way a rebuild did not fix.
    #[error(
        "index error: {0} (run `mem index --rebuild`: it rebuilds the index from the memory files and keeps the usage log)"
    )]
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

/// An id as shown in a message: whole when short, else its first 60 characters and its length.
pub(crate) fn clip_id(id: &str) -> String {
    match id.char_indices().nth(60) {
        None => id.to_string(),
        Some((i, _)) => format!("{}… ({} characters)", &id[..i], id.chars().count()),
    }
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Why a file that a clone, an agent or another program controls is not read (see
/// `untrusted::read`). The message reads after "cannot read PATH: ".
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unreadable {
    /// Not a regular file: a FIFO would wait for a writer, a device such as `/dev/zero` never
    /// ends. The value says what it is ("a FIFO (named pipe)", "a character device").
    #[error("not a regular file but {0}")]
    NotRegular(&'static str),
    /// A symbolic link out of the folder of a file that is mem's own (a usage file).
    #[error(
        "a symbolic link out of its folder (to {}); mem reads its own files only where they are: replace the link with the file, or remove it",
        .0.display()
    )]
    LinkOut(PathBuf),
    /// Larger than mem reads of such a file.
    #[error("{size} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// Its size, or what was read of it.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file system refused.
    #[error("{0}")]
    Io(std::io::Error),
}

/// Why a memory file does not follow the contract. `line` is 1-based within the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The file does not start with a `---` line.
    #[error("no front-matter: a memory file starts with a `---` line, then YAML, then `---`")]
    NoFrontMatter,
    /// The file starts with a UTF-8 byte-order mark, before its `---` line.
    #[error(
        "the file starts with a UTF-8 byte-order mark (BOM) before its `---` line; save it as UTF-8 without a BOM"
    )]
    ByteOrderMark,
    /// The opening `---` has no closing `---`.
    #[error("front-matter opened on line 1 is never closed by a `---` line")]
    Unterminated,
    /// The front-matter is not valid YAML.
    #[error("invalid YAML in front-matter: {message}")]
    Yaml {
        /// Line of the problem, when the YAML parser knows it.
        line: Option<usize>,
        /// The parser's message.
        message: String,
    },
    /// The front-matter is valid YAML but not a mapping of keys to values.
    #[error("front-matter must be a mapping of `key: value` lines")]
    NotMapping,
    /// A required key is absent.
    #[error("missing required field `{0}`")]
    Missing(&'static str),
    /// A key has a value of the wrong type or out of range.
    #[error("field `{field}`: {message}")]
    Field {
        /// The key.
        field: &'static str,
        /// Line of the key.
        line: Option<usize>,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The file is not UTF-8.
    #[error("not valid UTF-8 (first bad byte at offset {offset}); memory files must be UTF-8 text")]
    NotUtf8 {
        /// Line of the first invalid byte.
        line: usize,
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The file is larger than the configured limit.
    #[error("file is {size} bytes, over the {limit}-byte limit (`max_file_bytes` in mem.toml)")]
    TooLarge {
        /// Size of the file.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The front-matter is larger than mem parses (`format::MAX_FRONT_MATTER_BYTES`).
    #[error(
        "front-matter is {size} bytes, over the {limit}-byte limit; keep long text in the body"
    )]
    FrontMatterTooLarge {
        /// Size of the front-matter.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The front-matter opens more YAML flow collections (`[`, `{`) than mem parses
    /// (`format::MAX_FLOW_OPENERS`): the YAML parser's work grows with their nesting.
    #[error(
        "front-matter has {count} `[` or `{{`, over the limit of {limit} (deeply nested YAML is refused before parsing); write lists one item per line"
    )]
    TooNested {
        /// Line of the first bracket over the limit.
        line: usize,
        /// Brackets counted up to there.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// The file holds git's conflict markers: a merge without mem's merge driver left both
    /// sides of a change in it.
    #[error(
        "git conflict markers: a merge left both sides of a change here; `mem resolve` on this file keeps each side as a memory"
    )]
    ConflictMarkers {
        /// Line of the first `<<<<<<<`.
        line: usize,
    },
}

impl FormatError {
    /// The 1-based line the problem is on, where there is one.
    pub fn line(&self) -> Option<usize> {
        match self {
            FormatError::NoFrontMatter
            | FormatError::ByteOrderMark
            | FormatError::Unterminated
            | FormatError::NotMapping => Some(1),
            FormatError::Yaml { line, .. } | FormatError::Field { line, .. } => *line,
            FormatError::NotUtf8 { line, .. }
            | FormatError::TooNested { line, .. }
            | FormatError::ConflictMarkers { line } => Some(*line),
            FormatError::Missing(_)
            | FormatError::TooLarge { .. }
            | FormatError::FrontMatterTooLarge { .. } => None,
        }
    }
}

/// Why the embedding model cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The configured folder, or one file in it, is missing.
    #[error("{} is missing; run `scripts/fetch-model.sh {}` to fetch the model", path.display(), dir.display())]
    Missing {
        /// The missing file or folder.
        path: PathBuf,
        /// The model folder.
        dir: PathBuf,
    },
    /// A file exists but could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// ONNX Runtime could not be loaded, or is too old.
    #[error("ONNX Runtime {} cannot be used: {message}; it must be ONNX Runtime 1.24 or later for Linux x86_64 (`scripts/fetch-model.sh DIR` puts 1.24.4 into DIR; ORT_DYLIB_PATH names another)", path.display())]
    Runtime {
        /// The library file.
        path: PathBuf,
        /// What the loader said.
        message: String,
    },
    /// The model or tokenizer files are not usable.
    #[error("{} is not a usable {what}: {message}; fetch the files again with `scripts/fetch-model.sh {}`", path.display(), dir.display())]
    Model {
        /// The file at fault.
        path: PathBuf,
        /// The model folder.
        dir: PathBuf,
        /// "ONNX model" or "tokenizer".
        what: &'static str,
        /// What fastembed or ONNX Runtime said.
        message: String,
    },
    /// The model failed to load earlier in this process (the message says why).
    #[error("{0}")]
    Unusable(String),
    /// Running the model failed.
    #[error("embedding failed: {0}")]
    Inference(String),
}

/// A setting out of range: its section and key, and what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("[{section}] {key} {message}")]
pub struct SettingError {
    /// The `mem.toml` section (`ranking`, `embed`...).
    pub section: &'static str,
    /// The key in that section.
    pub key: &'static str,
    /// What the value must be, and the value found.
    pub message: String,
}

/// Which step of `mem capture` failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CaptureFailure {
    /// The hook payload is empty, not JSON, or lacks a field.
    Payload,
    /// The transcript cannot be read or is in no known format.
    Transcript,
    /// The session's memory file cannot be written (another memory holds its path).
    SessionFile,
    /// The capture could not be logged.
    Log,
    /// The session's events could not be appended to the session log.
    SessionLog,
    /// The facts the user stated could not be written or counted.
    Facts,
}

/// Why a git process of mem's gave no output (`crate::git`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GitFailure {
    /// git is not on the `PATH`.
    #[error("git is not on the PATH")]
    NoGit,
    /// It could not be started or read from.
    #[error("cannot run git: {0}")]
    Io(std::io::Error),
    /// Its stdout went over the bound (in MiB): it was stopped.
    #[error("its output went over {0} MiB and was not read")]
    TooLong(usize),
    /// The repository's configuration names a filter driver mem cannot turn off safely.
    #[error(
        "the repository's configuration names a filter driver {0:?} that mem cannot turn off \
         (its name holds `=` or a control character)"
    )]
    Filter(String),
    /// It ran past its time limit (in seconds), in the user's own repository: it was stopped,
    /// with what it started.
    #[error("it ran for {0} s without ending (an address that does not answer?) and was stopped")]
    TimedOut(u64),
}
