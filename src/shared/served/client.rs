//! The hook's side of served hooks: find the servers of the root, ask each in turn, and give up
//! quietly (the caller works in-process) when none answers in time or none has the same key.
//! Every exchange runs under deadlines: a non-blocking connect of its own ([`CONNECT`]), a
//! server that takes the request at once ([`TAKE`]), and one budget for everything a call does
//! against every server, connect, ask and answer ([`PROMPT_BUDGET`], [`REFRESH_BUDGET`]); an
//! answer longer than [`MAX_ANSWER`] is dropped. A stopped server, a full listen backlog, a
//! server that dribbles its answer or sends too much: the hook works in-process.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use mem::engine::ContextOptions;
use mem::store::RootSource;
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::net::UnixStream;

use super::{Answer, Asked, Key, Reply, Request};

/// How long a connect may take (a stopped server whose listen backlog is full refuses at once:
/// the connect does not wait).
const CONNECT: Duration = Duration::from_millis(250);

/// How long a server may take to take a request: a server busy with a long call is not waited
/// for.
const TAKE: Duration = Duration::from_millis(100);

/// The whole time a prompt's or session's context (and `mem health`'s status) may wait on the
/// servers, connects, requests and answers together: past it, the hook works in-process.
pub const PROMPT_BUDGET: Duration = Duration::from_secs(1);

/// The whole time a capture may wait for a server to refresh and embed what it wrote (the
/// agent waits for its capture hook, not the user for a prompt; the hook's own timeout is 30 s).
pub const REFRESH_BUDGET: Duration = Duration::from_secs(20);

/// The most bytes of one reply line: a longer answer is dropped (the hook works in-process).
pub const MAX_ANSWER: u64 = 1 << 20;

/// The context block for `options` at `now` for the hook `asked` from a server of the root
/// `root` (found as `source`) with this process's key, or `None` (no server, another key, busy,
/// gone, failed, too slow, too long) within [`PROMPT_BUDGET`].
pub fn context(
    root: &Path,
    source: RootSource,
    now: Timestamp,
    options: &ContextOptions,
    asked: Asked,
) -> Option<Answer> {
    if !super::enabled() {
        return None;
    }
    let key = Key::of(root, source);
    let request = Request::Context { key, now, options: options.clone(), asked };
    let found = each_server(root, &request, PROMPT_BUDGET, Until::Answer, |reply| match reply {
        Reply::Answer(answer) => Some(answer),
        _ => None,
    });
    found.into_iter().next()
}

/// Has a server of the root `root` (found as `source`) with this process's key bring its
/// layers up to date at `now`, embedding what changed, and waits until it has (at most
/// [`REFRESH_BUDGET`]); whether one did (none: the next hook's refresh does it, served or
/// in-process).
pub fn refresh(root: &Path, source: RootSource, now: Timestamp) -> bool {
    if !super::enabled() {
        return false;
    }
    let request = Request::Refresh { key: Key::of(root, source), now };
    let found = each_server(root, &request, REFRESH_BUDGET, Until::Answer, |reply| {
        matches!(reply, Reply::Refreshed).then_some(())
    });
    !found.is_empty()
}

/// Whether a live server of `root` listens (it may still have another key); the sockets of
/// dead servers found on the way are removed. A hook asks only when one listens, and does not
/// start loading the model then.
pub fn listening(root: &Path) -> bool {
    super::enabled() && !sockets(root).is_empty()
}

/// What the servers of `root` say of this process's key: each one's process id, hooks answered,
/// and the parts of the key that differ (empty: it serves this process's hooks); those that
/// answer within [`PROMPT_BUDGET`].
pub fn status(root: &Path, source: RootSource) -> Vec<(u32, u64, Vec<String>)> {
    let request = Request::Status { key: Key::of(root, source) };
    each_server(root, &request, PROMPT_BUDGET, Until::All, |reply| match reply {
        Reply::Status { pid, answered, differs } => Some((pid, answered, differs)),
        _ => None,
    })
}

/// The sockets of the live servers of `root` and each one's process id: a socket of this
/// user's, in a folder only this user can enter; those whose server is dead are removed.
fn sockets(root: &Path) -> Vec<(PathBuf, i32)> {
    let prefix = super::prefix(root);
    let mut live = Vec::new();
    for folder in super::folders() {
        if super::not_private(&folder).is_some() {
            continue;
        }
        for (path, pid) in super::sockets(&folder, &prefix) {
            if !super::alive(pid) {
                // Its server was killed: nothing will listen there again.
                let _ = std::fs::remove_file(&path);
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if meta.file_type().is_socket() && meta.uid() == super::uid() {
                live.push((path, pid));
            }
        }
    }
    live
}

/// How far [`each_server`] goes.
#[derive(Clone, Copy, PartialEq)]
enum Until {
    /// To the first server whose reply gives a value.
    Answer,
    /// Through every server.
    All,
}

/// The values `take` gives of the replies of the live servers of `root` to `request`, asked in
/// turn until one gives a value (or of all, `Until::All`), all within `budget`: a request
/// longer than a server takes asks none. What was found when the budget runs out is kept.
fn each_server<T>(
    root: &Path,
    request: &Request,
    budget: Duration,
    until: Until,
    mut take: impl FnMut(Reply) -> Option<T>,
) -> Vec<T> {
    let Some(line) = super::line(request).filter(|l| l.len() as u64 <= super::MAX_REQUEST) else {
        return Vec::new();
    };
    let servers = sockets(root);
    if servers.is_empty() {
        return Vec::new();
    }
    // A caller inside a runtime (none today) is not served rather than blocking it.
    if tokio::runtime::Handle::try_current().is_ok() {
        return Vec::new();
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build();
    let Ok(runtime) = runtime else { return Vec::new() };
    let wants_answer = !matches!(request, Request::Status { .. });
    let mut found = Vec::new();
    let asking = async {
        for (path, _) in servers {
            let Some(reply) = exchange(&path, &line, wants_answer).await else { continue };
            if let Some(value) = take(reply) {
                found.push(value);
                if until == Until::Answer {
                    return;
                }
            }
        }
    };
    // Past the budget, what was found so far is kept.
    let _ = runtime.block_on(async { tokio::time::timeout(budget, asking).await });
    found
}

/// One exchange with the server at `path`: the connect (within [`CONNECT`]), the request
/// `line` and the first reply (within [`TAKE`]); when the server takes the request
/// ([`Reply::Accepted`]) and `wants_answer`, the reply that follows (bounded by the caller's
/// budget). Each reply is at most [`MAX_ANSWER`] bytes.
async fn exchange(path: &Path, line: &[u8], wants_answer: bool) -> Option<Reply> {
    let stream = tokio::time::timeout(CONNECT, UnixStream::connect(path)).await.ok()?.ok()?;
    let mut reader = BufReader::new(stream);
    let first = tokio::time::timeout(TAKE, async {
        reader.get_mut().write_all(line).await?;
        reader.get_mut().flush().await?;
        super::receive_async::<Reply>(&mut reader, MAX_ANSWER).await
    });
    let first = first.await.ok()?.ok()?;
    match first {
        Reply::Accepted if wants_answer => {
            super::receive_async::<Reply>(&mut reader, MAX_ANSWER).await.ok()
        }
        Reply::Accepted => None,
        reply => Some(reply),
    }
}
