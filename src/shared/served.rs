//! Hooks answered by the session's `mem mcp`, which already holds the root open and the
//! embedding model loaded: the server side listens on a Unix socket in a private folder
//! ([`folders`]), the hook side asks it before doing the work itself. A hook is served only when
//! everything that changes its answer is the same in both processes (the [`Key`]); otherwise, or
//! when no server answers in time, the hook does the work in-process and says nothing.
//! `MEM_NO_SERVER=1` turns both sides off. See docs/architecture.md ("Served hooks") and
//! docs/security.md.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use mem::agent::Agent;
use mem::engine::ContextOptions;
use mem::session::ledger::Sent;
use mem::store::RootSource;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufRead, AsyncBufReadExt as _, AsyncReadExt as _};

pub mod client;

/// A socket a session's server answers hooks on, removed when dropped.
pub trait Socket: Send {
    /// Where it listens.
    fn path(&self) -> &Path;
}

/// How `mem mcp` starts answering the hooks of its root from the layers it holds (the served
/// front end's `listen`, handed over by `crate::commands`): `Ok(None)` when served hooks are off.
pub type Listen = fn(
    &crate::shared::Globals,
    std::sync::Arc<std::sync::Mutex<Option<mem::engine::Layers>>>,
) -> Result<Option<Box<dyn Socket>>, String>;

/// The variable that turns served hooks off (any value but empty or `0`).
pub const OFF_ENV: &str = "MEM_NO_SERVER";

/// The most bytes of one request line (it holds the prompt): a hook with a longer one works
/// in-process, and a server reads no further.
pub const MAX_REQUEST: u64 = 1 << 20;

/// Whether served hooks are on in this process (`MEM_NO_SERVER` unset, empty or `0`).
pub fn enabled() -> bool {
    std::env::var_os(OFF_ENV).is_none_or(|v| v.is_empty() || v == "0")
}

/// The folders servers listen in, the one this process would listen in first:
/// `$XDG_RUNTIME_DIR/mem`, and `mem-<uid>` in the system's temporary folder (a server started
/// without `XDG_RUNTIME_DIR`, as an agent that passes few variables to its MCP servers starts
/// it, listens there), then this user's own folder of a random name ([`own_folder`]), where a
/// server listens when another user took `mem-<uid>` first.
pub fn folders() -> Vec<PathBuf> {
    let mut folders = Vec::new();
    if let Some(run) = runtime_folder() {
        folders.push(run);
    }
    folders.push(shared_folder());
    folders.extend(own_folder());
    folders
}

/// `$XDG_RUNTIME_DIR/mem`, when the variable names an absolute folder: a folder only this user
/// can create.
fn runtime_folder() -> Option<PathBuf> {
    let run = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)?;
    run.is_absolute().then(|| run.join("mem"))
}

/// `mem-<uid>` in the system's temporary folder, which any user can create first.
fn shared_folder() -> PathBuf {
    std::env::temp_dir().join(format!("mem-{}", uid()))
}

/// The file that records this user's own folder: in the user's cache folder
/// (`$XDG_CACHE_HOME/mem/served-folder`, else `~/.cache/mem/served-folder`), which only the user
/// can write.
fn record() -> Option<PathBuf> {
    Some(dirs::cache_dir()?.join("mem").join("served-folder"))
}

/// This user's own folder for the sockets, as [`record`] names it, when it is private
/// ([`not_private`]): a folder of a random name made by a server that found `mem-<uid>` taken.
fn own_folder() -> Option<PathBuf> {
    let text = std::fs::read_to_string(record()?).ok()?;
    let folder = PathBuf::from(text.trim_end_matches('\n'));
    (folder.is_absolute() && not_private(&folder).is_none()).then_some(folder)
}

/// The folder a server listens in, made private if it is missing: `$XDG_RUNTIME_DIR/mem` when
/// the variable is set, else `mem-<uid>` in the temporary folder; when another user took that
/// one (or left it open), this user's own folder ([`own_folder`]), made first if there is none:
/// a fresh folder of a random name (no one can make it first) recorded in the user's cache
/// folder.
pub fn listen_folder() -> Result<PathBuf, String> {
    if let Some(run) = runtime_folder() {
        return make_private(&run).map(|()| run);
    }
    let shared = shared_folder();
    let taken = match make_private(&shared) {
        Ok(()) => return Ok(shared),
        Err(why) => why,
    };
    if let Some(own) = own_folder() {
        return Ok(own);
    }
    let record =
        record().ok_or(format!("{taken}, and there is no cache folder to note another"))?;
    let fresh = tempfile::Builder::new()
        .prefix(&format!("mem-{}-", uid()))
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(std::env::temp_dir())
        .map_err(|e| format!("{taken}, and cannot make another folder: {e}"))?
        .keep();
    let noted = (|| -> std::io::Result<()> {
        let folder = record.parent().unwrap_or(Path::new("/"));
        std::fs::create_dir_all(folder)?;
        let mut file = tempfile::NamedTempFile::new_in(folder)?;
        writeln!(file, "{}", fresh.display())?;
        file.persist(&record).map_err(|e| e.error)?;
        Ok(())
    })();
    if let Err(e) = noted {
        let _ = std::fs::remove_dir(&fresh);
        return Err(format!("{taken}, and cannot note another in {}: {e}", record.display()));
    }
    not_private(&fresh).map_or(Ok(fresh), Err)
}

/// This process's user id.
pub fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Why `folder` is not private (a real folder of this user's that no one else may enter), or
/// `None` when it is.
pub fn not_private(folder: &Path) -> Option<String> {
    let meta = match std::fs::symlink_metadata(folder) {
        Ok(meta) => meta,
        Err(e) => return Some(format!("{}: {e}", folder.display())),
    };
    if !meta.is_dir() {
        return Some(format!("{} is not a folder", folder.display()));
    }
    if meta.uid() != uid() {
        return Some(format!("{} belongs to another user (uid {})", folder.display(), meta.uid()));
    }
    if meta.mode() & 0o077 != 0 {
        return Some(format!(
            "{} can be entered by other users (mode {:o})",
            folder.display(),
            meta.mode() & 0o777
        ));
    }
    None
}

/// `folder` made (mode 0700) if it is missing, then checked with [`not_private`].
fn make_private(folder: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(folder) {
        Ok(()) => {
            // The mode a folder gets is masked by the umask: set it whole.
            let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700));
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make {}: {e}", folder.display())),
    }
    not_private(folder).map_or(Ok(()), Err)
}

/// The start of the socket names of the servers of `root`: a hash of its canonical path.
pub fn prefix(root: &Path) -> String {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
    format!("{}-", &hash[..16])
}

/// The sockets in `folder` whose names start with `prefix` (the servers of one root,
/// [`prefix`]) and each one's process id.
fn sockets(folder: &Path, prefix: &str) -> Vec<(PathBuf, i32)> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    let mut found: Vec<(PathBuf, i32)> = entries
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let pid = name.strip_prefix(prefix)?.strip_suffix(".sock")?.parse().ok()?;
            Some((folder.join(name), pid))
        })
        .collect();
    found.sort();
    found
}

/// Whether the process `pid` is alive (a socket whose server is not is stale).
pub fn alive(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// Everything that changes a hook's answer, part by part (each value hashed): a hook is
/// served only by a server whose key is equal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key(BTreeMap<String, String>);

impl Key {
    /// The key of this process for the root `root`, found as `source`: the binary (version and
    /// file), the root, the model folder and runtime, the user configuration file's content, and
    /// the variables that decide the layers and homes read (`HOME`, `XDG_*`, `MEM_DIR`, each
    /// agent's home variables).
    pub fn of(root: &Path, source: RootSource) -> Key {
        let mut parts = BTreeMap::new();
        let mut put = |name: &str, value: &[u8]| {
            parts.insert(name.to_string(), blake3::hash(value).to_hex()[..16].to_string());
        };
        let exe = std::env::current_exe().ok().and_then(|exe| {
            let meta = std::fs::metadata(&exe).ok()?;
            Some(format!("{} {} {}", exe.display(), meta.len(), meta.mtime_nsec() + meta.mtime()))
        });
        put("binary", format!("{} {exe:?}", env!("CARGO_PKG_VERSION")).as_bytes());
        let canonical = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        put("root", format!("{} {source:?}", canonical.display()).as_bytes());
        let model = super::open::model_overrides(false).ok();
        put("model", format!("{model:?}").as_bytes());
        let user = super::user::path().and_then(|path| std::fs::read(path).ok());
        put("user configuration", &user.unwrap_or_default());
        for var in key_vars() {
            let value = std::env::var_os(&var);
            put(&var, format!("{value:?}").as_bytes());
        }
        Key(parts)
    }

    /// The names of the parts in which `other` differs from this key.
    pub fn differs(&self, other: &Key) -> Vec<String> {
        let mut names: Vec<String> = self.0.keys().chain(other.0.keys()).cloned().collect();
        names.sort();
        names.dedup();
        names.retain(|name| self.0.get(name) != other.0.get(name));
        names
    }
}

/// The variables a key holds: the user's home and XDG folders, `MEM_DIR`, the model's, and
/// every variable that moves an agent's home or configuration folder (sorted; `mem setup
/// codex` has Codex pass each of them to `mem mcp`).
pub(crate) fn key_vars() -> Vec<String> {
    let mut vars: Vec<String> = [
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "MEM_DIR",
        mem::embed::MODEL_DIR_ENV,
        mem::embed::ORT_LIB_ENV,
    ]
    .map(String::from)
    .into();
    for agent in Agent::ALL {
        let spec = agent.spec();
        vars.extend(std::iter::once(&spec.home).chain(&spec.config).map(|h| h.var.to_string()));
    }
    vars.sort();
    vars.dedup();
    vars
}

/// What a hook asks a server.
#[derive(Debug, Serialize, Deserialize)]
pub enum Request {
    /// Whether the server would serve this key, and what it has served (for `mem health`).
    Status {
        /// The asker's key.
        key: Key,
    },
    /// The context block for `options` at `now` (the caller's time), after a refresh.
    Context {
        /// The asker's key.
        key: Key,
        /// The caller's time.
        now: Timestamp,
        /// What the block holds.
        options: ContextOptions,
        /// Whose hook asks, from where.
        asked: Asked,
    },
    /// Bring the layers up to date with the files at `now` and embed what changed, then say
    /// so: a capture asks it after writing its digest, so that the next prompt's hook finds
    /// the digest embedded (the agent waits for the capture, not yet for the user).
    Refresh {
        /// The asker's key.
        key: Key,
        /// The caller's time.
        now: Timestamp,
    },
}

/// The hook that asks: its agent (whose own memories are never sent back to it) and the
/// payload's working directory (which decides the agents' project folder for the per-user root).
#[derive(Debug, Serialize, Deserialize)]
pub struct Asked {
    /// The agent's name.
    pub agent: String,
    /// The payload's working directory.
    pub cwd: Option<String>,
}

/// What a server answers, one line each.
#[derive(Debug, Serialize, Deserialize)]
pub enum Reply {
    /// The key differs in these parts: ask no further.
    Other {
        /// The parts that differ.
        differs: Vec<String>,
    },
    /// The server is busy with another call: work in-process.
    Busy,
    /// The server took the request; the answer follows on the next line.
    Accepted,
    /// The answer of a [`Request::Context`].
    Answer(Answer),
    /// A [`Request::Refresh`] is done.
    Refreshed,
    /// The request failed in the server: work in-process (which reports the failure).
    Failed {
        /// Why.
        message: String,
    },
    /// The answer of a [`Request::Status`].
    Status {
        /// The server's process id.
        pid: u32,
        /// How many hooks it answered.
        answered: u64,
        /// The parts in which the asker's key differs (empty: it would be served).
        differs: Vec<String>,
    },
}

/// A context block, served or made in-process.
#[derive(Debug, Serialize, Deserialize)]
pub struct Answer {
    /// The Markdown block.
    pub text: String,
    /// How many memories the block could show (0: nothing to say).
    pub memories: usize,
    /// The memories the block holds.
    pub sent: Vec<Sent>,
    /// The warnings the root's configuration gives (a hook in-process prints them when it
    /// opens the root).
    pub warnings: Vec<String>,
}

/// `value` as one JSON line.
fn line(value: &impl Serialize) -> Option<Vec<u8>> {
    let mut line = serde_json::to_vec(value).ok()?;
    line.push(b'\n');
    Some(line)
}

/// Writes `value` as one JSON line.
pub fn send(mut to: impl Write, value: &impl Serialize) -> std::io::Result<()> {
    let line = line(value).ok_or_else(|| std::io::Error::other("cannot write the message"))?;
    to.write_all(&line)?;
    to.flush()
}

/// Reads one JSON line of at most `limit` bytes: a longer one is an error, and no byte past
/// `limit` is read.
pub async fn receive_async<T: for<'de> Deserialize<'de>>(
    from: &mut (impl AsyncBufRead + Unpin),
    limit: u64,
) -> std::io::Result<T> {
    let mut line = Vec::new();
    from.take(limit).read_until(b'\n', &mut line).await?;
    if !line.ends_with(b"\n") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the line ended early or is too long",
        ));
    }
    serde_json::from_slice(&line).map_err(std::io::Error::other)
}
