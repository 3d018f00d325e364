//! Hook calls that act once: an agent may run the same hook twice for one moment (mem set up
//! in two of its files, a project's file and the user's), and the second call must not send
//! the memories again, capture twice or take a second checkpoint. A call is known by what
//! runs it and the payload the agent sent (session, event, prompt or turn id, all in it), and,
//! when the payload has no field that names the call, by the length of the session's
//! transcript at that time: the same prompt typed again later is a new call.

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

/// The payload fields that name one call of a hook: the prompt's id (Claude Code's
/// `prompt_id`), the turn's (Codex's `turn_id`), the time of the event (Gemini CLI's
/// `timestamp`), each the same in the calls of one moment and new in the next.
pub const CALL_FIELDS: &[&str] = &["prompt_id", "turn_id", "timestamp"];

/// Claims the hook call of `command` with `payload` for the root at `root`, at `now`: `true`
/// when this is the first such call within [`CLAIM_WINDOW`] (the caller acts), `false` when an
/// identical call came first (the caller does nothing). A payload with none of
/// [`CALL_FIELDS`] is told apart by the size of its `transcript_path` too (see
/// [`transcript_len`]). Two calls at the same moment cannot both win: the claim is a file
/// created only if it does not exist.
pub fn claim(root: &Path, command: &str, payload: &[u8], now: Timestamp) -> Result<bool> {
    let dir = store::state_dir(root)?.join(CLAIMS_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut hasher = blake3::Hasher::new();
    hasher.update(command.as_bytes());
    hasher.update(&[0]);
    hasher.update(payload.trim_ascii());
    if let Some(len) = transcript_len(payload) {
        hasher.update(format!("\0transcript {len}").as_bytes());
    }
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

/// The size in bytes of the transcript `payload` names (`transcript_path`), when the payload
/// has none of [`CALL_FIELDS`]: the calls of one moment (the agent's hook files run at once)
/// see the same transcript, while the same prompt typed again later in the session comes after
/// the turns between, which the transcript holds. `None` with a call field, or without a
/// transcript (only its metadata is read).
pub fn transcript_len(payload: &[u8]) -> Option<u64> {
    let value = crate::json::parse_json_lenient(&String::from_utf8_lossy(payload)).ok()?;
    let names_the_call = |key: &&str| match value.get(*key) {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::String(s)) => !s.trim().is_empty(),
        Some(_) => true,
    };
    if CALL_FIELDS.iter().any(names_the_call) {
        return None;
    }
    let path = value.get("transcript_path")?.as_str().filter(|p| !p.is_empty())?;
    std::fs::metadata(path).ok().filter(std::fs::Metadata::is_file).map(|m| m.len())
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

    #[test]
    fn without_a_call_field_the_transcript_tells_the_calls_apart() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let t0: Timestamp = "2026-12-02T10:00:00Z".parse().unwrap();
        let transcript = root.join("t.jsonl");
        std::fs::write(&transcript, "{}\n").unwrap();
        let path = serde_json::to_string(transcript.to_str().unwrap()).unwrap();
        let bare = format!(
            r#"{{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"again","transcript_path":{path}}}"#
        );
        let with_id = bare.replace(r#""prompt":"#, r#""prompt_id":"p1","prompt":"#);
        assert_eq!(transcript_len(bare.as_bytes()), Some(3));
        assert_eq!(transcript_len(with_id.as_bytes()), None);
        assert!(claim(root, "context", bare.as_bytes(), t0).unwrap());
        assert!(claim(root, "context", with_id.as_bytes(), t0).unwrap());
        // The other hook file, at the same moment: the same call.
        assert!(!claim(root, "context", bare.as_bytes(), t0).unwrap());
        // The same prompt after a turn: a new call; with a prompt id, the id decides.
        std::fs::write(&transcript, "{}\n{}\n").unwrap();
        assert!(claim(root, "context", bare.as_bytes(), t0).unwrap());
        assert!(!claim(root, "context", with_id.as_bytes(), t0).unwrap());
        // No transcript: the payload alone.
        let gone = bare.replace("t.jsonl", "gone.jsonl");
        assert_eq!(transcript_len(gone.as_bytes()), None);
    }
}
