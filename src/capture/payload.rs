//! The hook payload: what the agents' hooks pass to `mem capture`.

use serde::Serialize;
use serde_json::Value;

use crate::Result;
use crate::format::MemoryId;

use super::{CaptureFailure, PAYLOAD_HELP, fail};
use crate::json::parse_json_lenient;

/// What a hook passes on stdin (the fields `mem capture` uses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Payload {
    /// The session's id: names the memory (`session-<id>`).
    pub session_id: String,
    /// The transcript file, as given; `None` when the payload names none (a Codex hook may
    /// send `null`, and Codex's `notify` sends no path): the session's Codex rollout is then
    /// looked up by session id.
    pub transcript_path: Option<String>,
    /// The agent's working directory: the project.
    pub cwd: Option<String>,
    /// `hook_event_name`: `Stop`, `SessionEnd`, `PreCompact`...
    pub hook_event: Option<String>,
    /// `last_assistant_message`, which some hook events carry; the outcome when present.
    pub last_assistant_message: Option<String>,
}

/// Parses a hook payload leniently (see [`parse_json_lenient`]) and checks its session id.
pub fn parse_payload(bytes: &[u8]) -> Result<Payload> {
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload on stdin is empty; {PAYLOAD_HELP}"),
        ));
    }
    let value = parse_json_lenient(&text).map_err(|e| {
        let what = if e.is_eof() { "is cut short (truncated?)" } else { "is not valid JSON" };
        fail(CaptureFailure::Payload, format!("the hook payload {what}: {e}; {PAYLOAD_HELP}"))
    })?;
    let Value::Object(map) = value else {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload is JSON but not an object; {PAYLOAD_HELP}"),
        ));
    };
    let field = |key: &str| {
        map.get(key).and_then(Value::as_str).map(str::to_string).filter(|s| !s.trim().is_empty())
    };
    // Codex's `notify` program gets `thread-id` (the session id), `type` and
    // `last-assistant-message` instead.
    let session_id = field("session_id").or_else(|| field("thread-id")).ok_or_else(|| {
        fail(
            CaptureFailure::Payload,
            format!("the hook payload has no `session_id` text; {PAYLOAD_HELP}"),
        )
    })?;
    check_session_id(&session_id)?;
    if let Some(other) = map.get("transcript_path").filter(|v| !v.is_null() && !v.is_string()) {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload's `transcript_path` is {other}, not text; {PAYLOAD_HELP}"),
        ));
    }
    Ok(Payload {
        session_id,
        transcript_path: field("transcript_path"),
        cwd: field("cwd"),
        hook_event: field("hook_event_name").or_else(|| field("type")),
        last_assistant_message: field("last_assistant_message")
            .or_else(|| field("last-assistant-message")),
    })
}

/// Whether the bytes read so far from stdin hold a whole payload: they end with `}` and parse
/// (or fail to parse for a reason other than ending too early). Lets the caller stop reading
/// a stdin that is never closed.
pub fn payload_complete(bytes: &[u8]) -> bool {
    if bytes.iter().rev().find(|b| !b.is_ascii_whitespace()) != Some(&b'}') {
        return false;
    }
    match parse_json_lenient(&String::from_utf8_lossy(bytes)) {
        Ok(_) => true,
        Err(e) => !e.is_eof(),
    }
}

/// The memory id of a session: `session-<session_id>`. A session id must be
/// `[A-Za-z0-9._-]+` (it names a file) and make a valid memory id.
pub fn check_session_id(session_id: &str) -> Result<MemoryId> {
    let safe = !session_id.is_empty()
        && session_id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !safe {
        return Err(fail(
            CaptureFailure::Payload,
            format!(
                "session_id {session_id:?} cannot name a memory file: only letters, digits, `.`, `_` \
             and `-` are allowed"
            ),
        ));
    }
    MemoryId::new(&format!("{}{session_id}", super::DIGEST_ID_PREFIX)).map_err(|e| {
        fail(
            CaptureFailure::Payload,
            format!("session_id {session_id:?} cannot name a memory file: {e}"),
        )
    })
}
