//! The hook's side of served hooks: find the servers of the root, ask each in turn, and give up
//! quietly (the caller works in-process) when none answers in time or none has the same key.

use std::io::BufReader;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use mem::engine::ContextOptions;
use mem::store::RootSource;

use super::{Answer, Asked, Key, Reply, Request};

/// How long a server may take to take a request: a server busy with a long call is not waited
/// for.
const TAKE: Duration = Duration::from_millis(100);

/// How long a server may take to answer a request it took (a refresh that embeds the memories
/// changed since the last call included).
const ANSWER: Duration = Duration::from_secs(20);

/// The context block for `options` at `now` for the hook `asked` from a server of the root
/// `root` (found as `source`) with this process's key, or `None` (no server, another key, busy,
/// gone, failed).
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
    each_server(root, |stream| match done(stream, &request)? {
        Reply::Answer(answer) => Some(answer),
        _ => None,
    })
}

/// Has a server of the root `root` (found as `source`) with this process's key bring its
/// layers up to date at `now`, embedding what changed, and waits until it has; whether one
/// did (none: the next hook's refresh does it, served or in-process).
pub fn refresh(root: &Path, source: RootSource, now: Timestamp) -> bool {
    if !super::enabled() {
        return false;
    }
    let request = Request::Refresh { key: Key::of(root, source), now };
    each_server(root, |stream| matches!(done(stream, &request)?, Reply::Refreshed).then_some(()))
        .is_some()
}

/// Whether a live server of `root` listens (it may still have another key); the sockets of
/// dead servers found on the way are removed. A hook asks only when one listens, and does not
/// start loading the model then.
pub fn listening(root: &Path) -> bool {
    if !super::enabled() {
        return false;
    }
    let prefix = super::prefix(root);
    for folder in super::folders() {
        if super::not_private(&folder).is_some() {
            continue;
        }
        for (path, pid) in super::sockets(&folder, &prefix) {
            if super::alive(pid) {
                return true;
            }
            // Its server was killed: nothing will listen there again.
            let _ = std::fs::remove_file(&path);
        }
    }
    false
}

/// What the servers of `root` say of this process's key: each one's process id, hooks answered,
/// and the parts of the key that differ (empty: it serves this process's hooks).
pub fn status(root: &Path, source: RootSource) -> Vec<(u32, u64, Vec<String>)> {
    let request = Request::Status { key: Key::of(root, source) };
    let mut found = Vec::new();
    each_server(root, |stream| {
        if let Some((Reply::Status { pid, answered, differs }, _)) = ask(stream, &request) {
            found.push((pid, answered, differs));
        }
        None::<()>
    });
    found
}

/// `f` on a connection to each live server of `root`, until it returns a value; sockets whose
/// server is dead are removed on the way.
fn each_server<T>(root: &Path, mut f: impl FnMut(UnixStream) -> Option<T>) -> Option<T> {
    let prefix = super::prefix(root);
    for folder in super::folders() {
        if super::not_private(&folder).is_some() {
            continue;
        }
        for (path, pid) in super::sockets(&folder, &prefix) {
            // Only a socket of this user's, in a folder only this user can enter.
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if !meta.file_type().is_socket() || meta.uid() != super::uid() {
                continue;
            }
            match UnixStream::connect(&path) {
                Ok(stream) => {
                    if let Some(found) = f(stream) {
                        return Some(found);
                    }
                }
                Err(_) if !super::alive(pid) => {
                    // Its server was killed: nothing will listen there again.
                    let _ = std::fs::remove_file(&path);
                }
                Err(_) => {}
            }
        }
    }
    None
}

/// The reply that follows [`Reply::Accepted`] to `request` on `stream`, within [`ANSWER`];
/// `None` when the server did not take it.
fn done(stream: UnixStream, request: &Request) -> Option<Reply> {
    let (Reply::Accepted, mut reader) = ask(stream, request)? else { return None };
    reader.get_ref().set_read_timeout(Some(ANSWER)).ok()?;
    super::receive(&mut reader).ok()
}

/// Sends `request` on `stream` and reads the first reply, which must come within [`TAKE`]; the
/// reader goes on with the next.
fn ask(stream: UnixStream, request: &Request) -> Option<(Reply, BufReader<UnixStream>)> {
    stream.set_write_timeout(Some(TAKE)).ok()?;
    stream.set_read_timeout(Some(TAKE)).ok()?;
    super::send(&stream, request).ok()?;
    let mut reader = BufReader::new(stream);
    Some((super::receive(&mut reader).ok()?, reader))
}
