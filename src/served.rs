//! The served hooks (a front end): the server's side, in `mem mcp`: a Unix socket (0600, in a private folder)
//! whose connections from this user's processes are answered from the layers the MCP server
//! holds, with the same calls a hook makes in-process (a refresh, then the context block), at
//! the caller's time. The socket is removed when the server ends; one left by a killed server is
//! removed by the next hook or server that finds it dead.

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use jiff::Timestamp;
use mem::agent::Agent;
use mem::engine::{ContextOptions, Layers};
use mem::store::{Layer, RootSource};
use tokio::net::UnixListener;
use tokio::sync::Semaphore;

use crate::shared::Globals;
use crate::shared::served::{self as protocol, Answer, Asked, Key, Reply, Request};

/// How long a hook's request may wait for the layers while a tool call holds them (then it is
/// answered [`Reply::Busy`] and the hook works in-process), in steps of 1 ms.
const LOCK_TRIES: u32 = 50;

/// How long a capture's [`Request::Refresh`] may wait for the layers, in steps of 1 ms (10 s,
/// more on a loaded machine): the capture has written its digest already, so a server busy
/// past it only leaves the embedding to the next hook. 2 s let a capture give up one time in
/// three beside three busy processes on two cores.
const REFRESH_LOCK_TRIES: u32 = 10_000;

/// How long a connection may take to send its whole request, and each write of the reply.
const READ: Duration = Duration::from_secs(2);

/// How many connections are served at once: one more is closed at once (its hook works
/// in-process), so that clients that never finish their request hold little.
const CONNECTIONS: usize = 8;

/// The socket while the server listens; removed when dropped.
struct Listening {
    path: PathBuf,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl protocol::Socket for Listening {
    fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// What the connections share: the layers, how the root was found, the server's key, and a
/// count.
struct Shared {
    layers: Arc<Mutex<Option<Layers>>>,
    globals: Globals,
    source: RootSource,
    key: Key,
    answered: AtomicU64,
    /// The connections being served ([`CONNECTIONS`] at most).
    slots: Arc<Semaphore>,
}

/// Starts answering the hooks of the root `globals` finds, from `layers`, on a socket of its
/// own; `Ok(None)` when served hooks are off ([`protocol::OFF_ENV`]). Must run inside the tokio
/// runtime, which runs the accept loop.
pub fn listen(
    globals: &Globals,
    layers: Arc<Mutex<Option<Layers>>>,
) -> Result<Option<Box<dyn protocol::Socket>>, String> {
    if !protocol::enabled() {
        return Ok(None);
    }
    let (root, source) = globals.locate_root(None).map_err(|e| e.to_string())?;
    let key = Key::of(&root, source);
    let folder = protocol::listen_folder()?;
    sweep(&folder);
    let path = folder.join(format!("{}{}.sock", protocol::prefix(&root), std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)
        .map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    let listening = Listening { path };
    std::fs::set_permissions(&listening.path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot restrict {}: {e}", listening.path.display()))?;
    keep_fresh(Arc::clone(&layers), globals.fixed_now);
    let globals = globals.clone();
    let slots = Arc::new(Semaphore::new(CONNECTIONS));
    let answered = AtomicU64::new(0);
    let shared = Arc::new(Shared { layers, globals, source, key, answered, slots });
    tokio::spawn(accept(listener, shared));
    Ok(Some(Box::new(listening)))
}

/// How often the server looks for changed files between calls.
const FRESH_EVERY: Duration = Duration::from_millis(50);

/// Between calls, brings the layers up to date with what changed on disk (the watch says what)
/// and embeds the memories that changed, as a hook's recall would (within
/// `[embed] recall_embed_limit`): so that the prompt after a capture finds the session's digest
/// embedded already. Never waits for the layers (a call holds them: next time), and stops when
/// the server has gone.
fn keep_fresh(layers: Arc<Mutex<Option<Layers>>>, fixed_now: Option<Timestamp>) {
    std::thread::spawn(move || {
        while Arc::strong_count(&layers) > 1 {
            std::thread::sleep(FRESH_EVERY);
            let Ok(mut slot) = layers.try_lock() else { continue };
            let Some(layers) = slot.as_mut() else { continue };
            let now = crate::shared::now(fixed_now);
            if layers.refresh_for_recall(now, &mem::progress::Silent).is_ok() {
                embed_changed(layers);
            }
        }
    });
}

/// Embeds the memories of the project and user layers that have no vector yet, within
/// `[embed] recall_embed_limit`, as a hook's recall would: what another process indexed (a
/// capture indexes its digest) needs a vector too. With nothing new since the last sync, this
/// reads nothing.
fn embed_changed(layers: &mut Layers) {
    for layer in [Layer::Project, Layer::User] {
        let Some(engine) = layers.engine(layer) else { continue };
        if engine.vectors.recall_mode(&engine.files, None) != mem::config::RecallMode::Bm25 {
            let limit = engine.files.config().embed.recall_embed_limit;
            let _ = engine.vectors.sync(&engine.files, Some(limit), &mem::progress::Silent);
        }
    }
}

/// Removes the sockets in `folder` whose server is dead.
fn sweep(folder: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|name| name.strip_suffix(".sock"))
            .and_then(|stem| stem.rsplit_once('-'))
            .and_then(|(_, pid)| pid.parse().ok());
        if let Some(pid) = pid
            && !protocol::alive(pid)
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Takes connections until the runtime stops; each one from this user, while fewer than
/// [`CONNECTIONS`] are served, has [`READ`] to send its request (at most
/// [`protocol::MAX_REQUEST`] bytes), which is then answered on a blocking thread, so that the MCP
/// server goes on meanwhile. What a connection read is freed when it ends, however it ends.
async fn accept(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionAborted => continue,
            Err(e) => {
                eprintln!("mem: warning: hooks are no longer served: {e}");
                return;
            }
        };
        // The folder is this user's only, and the peer is checked all the same.
        if !stream.peer_cred().is_ok_and(|cred| cred.uid() == protocol::uid()) {
            continue;
        }
        let Ok(slot) = Arc::clone(&shared.slots).try_acquire_owned() else { continue };
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(stream);
            let read = protocol::receive_async::<Request>(&mut reader, protocol::MAX_REQUEST);
            let Ok(Ok(request)) = tokio::time::timeout(READ, read).await else { return };
            let Ok(stream) = reader.into_inner().into_std() else { return };
            if stream.set_nonblocking(false).is_err() {
                return;
            }
            let _ = tokio::task::spawn_blocking(move || {
                serve(&stream, &shared, request);
                drop(slot);
            })
            .await;
        });
    }
}

/// Answers one connection's `request` (a failure to write ends it: the hook works
/// in-process).
fn serve(stream: &UnixStream, shared: &Shared, request: Request) {
    if stream.set_write_timeout(Some(READ)).is_err() {
        return;
    }
    let reply = match request {
        Request::Status { key } => Reply::Status {
            pid: std::process::id(),
            answered: shared.answered.load(Ordering::Relaxed),
            differs: shared.key.differs(&key),
        },
        Request::Context { key, now, options, asked } => {
            let Some(reply) = work(stream, shared, &key, LOCK_TRIES, |layers| {
                let answer = answer(layers, shared, now, &options, &asked)?;
                shared.answered.fetch_add(1, Ordering::Relaxed);
                Ok(Reply::Answer(answer))
            }) else {
                return;
            };
            reply
        }
        Request::Refresh { key, now } => {
            let Some(reply) = work(stream, shared, &key, REFRESH_LOCK_TRIES, |layers| {
                let layers = layers.as_mut().ok_or("the root is not open")?;
                layers.refresh(now, &mem::progress::Silent).map_err(|e| e.to_string())?;
                embed_changed(layers);
                Ok(Reply::Refreshed)
            }) else {
                return;
            };
            reply
        }
    };
    let _ = protocol::send(stream, &reply);
}

/// The reply to a request of `key` that `call` does on the layers: [`Reply::Other`] for another
/// key, [`Reply::Busy`] when the layers stay held for `tries` ms, else [`Reply::Accepted`] is
/// sent at once and `call`'s reply (a failure or a panic is [`Reply::Failed`]) follows; `None`
/// when the connection is gone.
fn work(
    stream: &UnixStream,
    shared: &Shared,
    key: &Key,
    tries: u32,
    call: impl FnOnce(&mut Option<Layers>) -> Result<Reply, String>,
) -> Option<Reply> {
    let differs = shared.key.differs(key);
    if !differs.is_empty() {
        return Some(Reply::Other { differs });
    }
    let Some(mut layers) = lock(&shared.layers, tries) else { return Some(Reply::Busy) };
    protocol::send(stream, &Reply::Accepted).ok()?;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call(&mut layers)));
    Some(match outcome {
        Ok(Ok(reply)) => reply,
        Ok(Err(message)) => Reply::Failed { message },
        Err(panic) => {
            Reply::Failed { message: mem::error::panic_message(&*panic, "unknown panic") }
        }
    })
}

/// The layers, waiting at most `tries` ms for a call that holds them (a panicked call's poison
/// is ignored: every call refreshes from the files).
fn lock(layers: &Mutex<Option<Layers>>, tries: u32) -> Option<MutexGuard<'_, Option<Layers>>> {
    for _ in 0..tries {
        match layers.try_lock() {
            Ok(guard) => return Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => return Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    None
}

/// What a hook would make in-process: the agents' memories read again (as the hook joins
/// them), the asking agent's own left out, the index refreshed, then the block.
fn answer(
    layers: &mut Option<Layers>,
    shared: &Shared,
    now: Timestamp,
    options: &ContextOptions,
    asked: &Asked,
) -> Result<Answer, String> {
    let layers = layers.as_mut().ok_or("the root is not open")?;
    if let Some(root) = layers.missing_root() {
        return Err(format!("the memory root {} is gone", root.display()));
    }
    let agent = Agent::from_name(&asked.agent).ok_or("an agent this version does not know")?;
    let surroundings =
        shared.globals.surroundings(asked.cwd.as_deref()).map_err(|e| format!("{e:#}"))?;
    for warning in mem::open::join_natives(&surroundings, layers, shared.source, now) {
        eprintln!("mem: warning: {warning}");
    }
    // Nor mem's copies of what the agent keeps itself (adopted).
    let mut options = options.clone();
    options.exclude.extend(layers.native_ids(agent));
    let (own, others): (Vec<_>, Vec<_>) =
        layers.take_natives().into_iter().partition(|(a, _)| *a == agent);
    layers.set_natives(others);
    let made = (|| -> mem::Result<Answer> {
        layers.refresh(now, &mem::progress::Silent)?;
        let context = layers.context(&options, now)?;
        let (text, memories, sent) = (context.text, context.memories, context.sent);
        Ok(Answer { text, memories, sent, warnings: warnings(layers) })
    })();
    // The agent's own layer goes back for the MCP server's tools.
    let mut natives = layers.take_natives();
    natives.extend(own);
    layers.set_natives(natives);
    made.map_err(|e| e.to_string())
}

/// The configuration warnings of each open root, project first.
pub fn warnings(layers: &mut Layers) -> Vec<String> {
    let mut all = layers.project().files.warnings().to_vec();
    if let Some(user) = layers.engine(Layer::User) {
        all.extend(user.files.warnings().iter().cloned());
    }
    all
}
