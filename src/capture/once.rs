//! Hook calls that act once: an agent may run the same hook twice for one moment (mem set up
//! in two of its files, a project's file and the user's), and the second call must not send
//! the memories again, capture twice or take a second checkpoint. A call is known by what
//! runs it and the payload the agent sent (session, event, prompt or turn id, all in it).

use std::io::Write as _;
use std::path::Path;

use jiff::{SignedDuration, Timestamp};

use crate::{Error, Result, store};

/// Folder of `.mem/` that holds the claims.
pub const CLAIMS_DIR: &str = "hook-calls";

/// How long a claim holds: an identical call within this time does nothing. An agent runs its
/// hooks for one event within seconds; an identical payload later is a new moment.
pub const CLAIM_WINDOW: SignedDuration = SignedDuration::from_secs(120);

/// Claims older than this are swept away when a new one is made.
const CLAIM_KEPT: SignedDuration = SignedDuration::from_secs(3600);

/// The sweep runs at most this often (a busy hour leaves hundreds of claims to read).
const SWEEP_EVERY: SignedDuration = SignedDuration::from_secs(600);

/// The file, among the claims, that holds when they were last swept.
const SWEPT: &str = ".swept";

/// Claims the hook call of `command` with `payload` for the root at `root`, at `now`: `true`
/// when this is the first such call within [`CLAIM_WINDOW`] (the caller acts), `false` when an
/// identical call came first (the caller does nothing). Two calls at the same moment cannot
/// both win: the claim is a file created only if it does not exist.
pub fn claim(root: &Path, command: &str, payload: &[u8], now: Timestamp) -> Result<bool> {
    let dir = store::state_dir(root)?.join(CLAIMS_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut hasher = blake3::Hasher::new();
    hasher.update(command.as_bytes());
    hasher.update(&[0]);
    hasher.update(payload.trim_ascii());
    let name = hasher.finalize().to_hex()[..32].to_string();
    let path = dir.join(&name);
    let create = || std::fs::OpenOptions::new().write(true).create_new(true).open(&path);
    let file = match create() {
        Ok(file) => Some(file),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => None,
        Err(e) => return Err(Error::io(&path, e)),
    };
    let Some(mut file) = file else {
        if within(made_at(&path), now) {
            return Ok(false);
        }
        // An old claim: this is a new moment with the same payload.
        store::write_atomic(&path, now.to_string().as_bytes(), store::Overwrite::Yes)?;
        return Ok(true);
    };
    file.write_all(now.to_string().as_bytes()).map_err(|e| Error::io(&path, e))?;
    sweep(&dir, now);
    Ok(true)
}

/// When the claim at `path` was made: the time written in it, else (being written, or left
/// empty by a call that was killed) the file's modification time, in the same clock as `now`
/// only approximately, which is enough for a window of minutes.
fn made_at(path: &Path) -> Option<Timestamp> {
    let written = std::fs::read_to_string(path).ok().and_then(|t| t.trim().parse().ok());
    written.or_else(|| {
        let modified = std::fs::metadata(path).ok()?.modified().ok()?;
        Timestamp::try_from(modified).ok()
    })
}

/// Whether a claim made at `made` (`None`: cannot tell) still holds at `now`.
fn within(made: Option<Timestamp>, now: Timestamp) -> bool {
    made.is_some_and(|made| now.duration_since(made) < CLAIM_WINDOW)
}

/// Removes the claims older than [`CLAIM_KEPT`], unless a sweep ran in the last
/// [`SWEEP_EVERY`] (best effort).
fn sweep(dir: &Path, now: Timestamp) {
    let swept = dir.join(SWEPT);
    if made_at(&swept).is_some_and(|at| now.duration_since(at) < SWEEP_EVERY) {
        return;
    }
    let _ = store::write_atomic(&swept, now.to_string().as_bytes(), store::Overwrite::Yes);
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if entry.file_name() == SWEPT {
            continue;
        }
        if made_at(&entry.path()).is_some_and(|made| now.duration_since(made) > CLAIM_KEPT) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_identical_call_acts_once_within_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let t0: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let payload = br#"{"session_id":"s","hook_event_name":"Stop","prompt_id":"p1"}"#;
        assert!(claim(root, "capture", payload, t0).unwrap());
        assert!(!claim(root, "capture", payload, t0 + SignedDuration::from_secs(5)).unwrap());
        // Another command, another payload: their own claims.
        assert!(claim(root, "context", payload, t0).unwrap());
        let next = br#"{"session_id":"s","hook_event_name":"Stop","prompt_id":"p2"}"#;
        assert!(claim(root, "capture", next, t0).unwrap());
        // The same payload after the window is a new moment, claimed again once.
        let later = t0 + CLAIM_WINDOW + SignedDuration::from_secs(1);
        assert!(claim(root, "capture", payload, later).unwrap());
        assert!(!claim(root, "capture", payload, later).unwrap());
        // Old claims are swept when a new one is made.
        let much_later = t0 + SignedDuration::from_hours(2);
        assert!(claim(root, "capture", b"{}", much_later).unwrap());
        let left = std::fs::read_dir(root.join(".mem").join(CLAIMS_DIR)).unwrap();
        assert_eq!(left.flatten().filter(|e| e.file_name() != SWEPT).count(), 1);
    }
}
