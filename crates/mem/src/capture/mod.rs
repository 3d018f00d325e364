//! `mem capture`: one episodic memory per agent session, written from the hook payload and the
//! session's transcript (read by its agent's reader, `crate::agent`).
//!
//! The pure parts: text cleaning ([`clean_text`], for ANSI escapes), secret
//! redaction ([`redact`]), the payload ([`parse_payload`]), streaming transcript reading with
//! bounded memory ([`read_transcript`]) and the memory's body ([`summarize`]).
//! [`Engine::capture`] ties them to a memory root and appends every attempt, success or
//! failure, to `.mem/capture.log` ([`LogEntry`]). Formats, limits and patterns are described
//! in `docs/capture.md`.

use serde::Serialize;

use crate::Error;
pub use crate::error::CaptureFailure;

/// Folder, under the root, of the session memories.
pub const SESSIONS_DIR: &str = "sessions";
/// Importance of a session memory.
pub const IMPORTANCE: u8 = 4;
/// Largest hook payload read from stdin.
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;
/// Most bytes read from one transcript (4 GiB). Transcripts are megabytes, so this only bounds
/// how long a capture can read a file that never ends (one still being written faster than it
/// is read, a huge sparse file); a longer transcript is read this far and marked `truncated`.
pub const MAX_TRANSCRIPT_BYTES: u64 = 4 << 30;
/// Upper bound on the body of a session memory, in bytes.
pub const MAX_BODY_BYTES: usize = 4096;

/// Characters of one item (request, command, path, message) kept while reading; the shorter
/// display limits apply after redaction.
const RAW_ITEM_CHARS: usize = 4096;
const REQUESTS_HEAD: usize = 3;
const REQUESTS_TAIL: usize = 9;
const COMMANDS_HEAD: usize = 4;
const COMMANDS_TAIL: usize = 16;
const FILES_KEPT: usize = 40;
/// Distinct paths remembered for de-duplication; past this, paths are only counted.
const FILES_SEEN: usize = 10_000;

/// Whether `memory` is a session digest that `mem capture` wrote: its id is `session-<session
/// id>` and its source `session/<session id>`.
pub fn is_digest(memory: &crate::format::Memory) -> bool {
    let id = memory.id().as_str();
    id.strip_prefix(DIGEST_ID_PREFIX)
        .is_some_and(|session| memory.source() == Some(&format!("{SESSION_SOURCE}{session}")))
}

/// Prefix of the `source` of a session digest.
pub const SESSION_SOURCE: &str = "session/";

/// Prefix of the id of a session digest (see [`check_session_id`]).
pub const DIGEST_ID_PREFIX: &str = "session-";

/// A capture error of `kind`.
pub(crate) fn fail(kind: CaptureFailure, message: impl Into<String>) -> Error {
    Error::Capture { kind, message: message.into() }
}

pub mod facts;
mod log;
pub mod once;
mod payload;
mod redact;
mod summary;
mod text;
mod transcript;

pub use self::log::{LOG_FILE, LogEntry, Status, append_log, read_log};
pub(crate) use self::payload::payload_help;
pub use self::payload::{
    Payload, check_session_id, find_transcript, parse_payload, payload_complete,
};
pub use self::redact::{redact, redact_json, set_user_patterns};
pub(crate) use self::summary::inline_code;
pub use self::summary::{SessionInfo, Summary, asked, did_work, gist, project_tag, summarize};
pub use self::text::clean_text;
pub(crate) use self::text::item;
pub(crate) use self::transcript::Kept;
pub use self::transcript::{HOOK_WAIT, Transcript, read_transcript, wait_for_hook};

/// What happened to the session's memory file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Written {
    /// A new file.
    Created,
    /// The file existed; its body and `source`/`project` lines were rewritten.
    Updated,
    /// The file existed and already said the same.
    Unchanged,
    /// The transcript holds nothing yet (no request, no message, no tool call): no file.
    Nothing,
}

/// What [`Engine::capture`] did.
#[derive(Clone, Debug, Serialize)]
pub struct Captured {
    /// The memory id, `session-<session_id>`.
    pub id: String,
    /// Its file, relative to the root (`None` when nothing was written).
    pub path: Option<String>,
    /// Created, updated, unchanged, or nothing.
    pub written: Written,
    /// The session id.
    pub session_id: String,
    /// The hook event.
    pub hook_event: Option<String>,
    /// The transcript read.
    pub transcript: String,
    /// Its format, if any line was recognised.
    pub format: Option<crate::agent::Agent>,
    /// User requests found.
    pub requests: usize,
    /// Tool calls found.
    pub tool_calls: usize,
    /// Secrets redacted from the memory.
    pub redacted: usize,
    /// Transcript lines skipped.
    pub skipped_lines: usize,
    /// Of those, lines skipped for being longer than [`MAX_LINE_BYTES`](crate::json::MAX_LINE_BYTES).
    pub oversized_lines: usize,
    /// Whether the transcript was longer than [`MAX_TRANSCRIPT_BYTES`] and read only that far.
    pub truncated: bool,
    /// Events appended to the session log (`.mem/sessions.db`) by this capture.
    pub logged_events: usize,
    /// What became of the durable statements of the user's prompts.
    pub facts: facts::Facts,
}

impl Captured {
    /// A capture of session `session_id` (memory `id`) of `transcript` that wrote nothing and
    /// read nothing (yet).
    pub fn nothing(
        id: &crate::format::MemoryId,
        session_id: &str,
        hook_event: &Option<String>,
        transcript: &std::path::Path,
    ) -> Captured {
        Captured {
            id: id.to_string(),
            path: None,
            written: Written::Nothing,
            session_id: session_id.to_string(),
            hook_event: hook_event.clone(),
            transcript: transcript.display().to_string(),
            format: None,
            requests: 0,
            tool_calls: 0,
            redacted: 0,
            skipped_lines: 0,
            oversized_lines: 0,
            truncated: false,
            logged_events: 0,
            facts: facts::Facts::default(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
