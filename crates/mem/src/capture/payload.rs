//! The hook payload: what the agents' hooks pass to mem's hook commands on stdin.

use serde::Serialize;
use serde_json::Value;

use crate::Result;
use crate::format::MemoryId;

use std::path::PathBuf;

use super::{CaptureFailure, fail};
use crate::agent::{Agent, Homes};
use crate::json::parse_json_lenient;

/// What an agent's hook passes on stdin: the one model of a hook payload, read by every hook
/// command (`context`, `capture`, `checkpoint`, `session resume`). A field that is missing, not
/// text or blank is `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Payload {
    /// `session_id` (Codex's `notify`: `thread-id`): names the digest (`session-<id>`).
    pub session_id: Option<String>,
    /// `transcript_path`, as given; `None` when the payload names none (a Codex hook may send
    /// `null`, and Codex's `notify` sends no path): the transcript is then looked up by
    /// session id in the agents' folders ([`Payload::transcript_file`]).
    pub transcript_path: Option<String>,
    /// `cwd`: the agent's working directory, the project.
    pub cwd: Option<String>,
    /// `hook_event_name` (`Stop`, `SessionStart`, ...; Codex's `notify`: its `type`).
    pub hook_event: Option<String>,
    /// `prompt`: on the agent's prompt event only, as the user typed it (see [`Payload::of`]).
    pub prompt: Option<String>,
    /// `source`, on a session start: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    /// `last_assistant_message`, which some hook events carry; the outcome when present.
    pub last_assistant_message: Option<String>,
}

impl Payload {
    /// The fields of a payload, leniently (see [`parse_json_lenient`]): a payload that does not
    /// parse gives one with no field.
    pub fn read(bytes: &[u8]) -> Payload {
        match parse_json_lenient(&String::from_utf8_lossy(bytes)) {
            Ok(Value::Object(map)) => Payload::of_map(&map),
            _ => Payload::default(),
        }
    }

    /// The payload of `agent`'s hook: its prompt as the user typed it (what the agent adds to
    /// it taken out), and no prompt on any other event than the agent's prompt event.
    pub fn of(agent: Agent, bytes: &[u8]) -> Payload {
        let mut payload = Payload::read(bytes);
        let spec = agent.spec();
        payload.prompt = payload
            .prompt
            .filter(|_| payload.hook_event.as_deref() == Some(spec.events.prompt))
            .map(|p| (spec.clean_prompt)(&p))
            .filter(|p| !p.trim().is_empty());
        payload
    }

    fn of_map(map: &serde_json::Map<String, Value>) -> Payload {
        let field = |key: &str| {
            map.get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
                .filter(|s| !s.trim().is_empty())
        };
        // Codex's `notify` program gets `thread-id` (the session id), `type` and
        // `last-assistant-message` instead.
        Payload {
            session_id: field("session_id").or_else(|| field("thread-id")),
            transcript_path: field("transcript_path"),
            cwd: field("cwd"),
            hook_event: field("hook_event_name").or_else(|| field("type")),
            prompt: field("prompt"),
            source: field("source"),
            last_assistant_message: field("last_assistant_message")
                .or_else(|| field("last-assistant-message")),
        }
    }

    /// The session id, checked (see [`check_session_id`]), with the digest's id.
    pub fn session(&self) -> Result<(&str, MemoryId)> {
        let session_id = self.session_id.as_deref().ok_or_else(|| {
            fail(
                CaptureFailure::Payload,
                format!("the hook payload has no `session_id` text; {}", payload_help()),
            )
        })?;
        Ok((session_id, check_session_id(session_id)?))
    }

    /// The session's transcript: `transcript_path` when it names a file, else the one an
    /// agent keeps of `session_id` in its home folder ([`crate::agent::Spec::find_transcript`];
    /// Codex's payloads may name none).
    pub fn transcript_file(&self, homes: &Homes) -> Option<PathBuf> {
        let given = self.transcript_path.as_deref().map(PathBuf::from).filter(|t| t.is_file());
        given.or_else(|| find_transcript(homes, self.session_id.as_deref()?))
    }
}

/// The transcript of session `session_id` in the agents' home folders, if one keeps it.
pub fn find_transcript(homes: &Homes, session_id: &str) -> Option<PathBuf> {
    Agent::ALL.into_iter().find_map(|a| (a.spec().find_transcript)(homes.of(a)?, session_id))
}

/// Parses a hook payload for `mem capture`, leniently (see [`parse_json_lenient`]): it must be
/// a JSON object with a valid session id, and a `transcript_path` that is text when present.
pub fn parse_payload(bytes: &[u8]) -> Result<Payload> {
    let help = payload_help();
    let text = String::from_utf8_lossy(bytes);
    if text.trim().is_empty() {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload on stdin is empty; {help}"),
        ));
    }
    let value = parse_json_lenient(&text).map_err(|e| {
        let what = if e.is_eof() { "is cut short (truncated?)" } else { "is not valid JSON" };
        fail(CaptureFailure::Payload, format!("the hook payload {what}: {e}; {help}"))
    })?;
    let Value::Object(map) = value else {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload is JSON but not an object; {help}"),
        ));
    };
    let payload = Payload::of_map(&map);
    payload.session()?;
    if let Some(other) = map.get("transcript_path").filter(|v| !v.is_null() && !v.is_string()) {
        return Err(fail(
            CaptureFailure::Payload,
            format!("the hook payload's `transcript_path` is {other}, not text; {help}"),
        ));
    }
    Ok(payload)
}

/// What `mem capture` reads, for its errors: the agents named through their specs.
pub(crate) fn payload_help() -> String {
    let titles: Vec<&str> = Agent::ALL.iter().map(|a| a.title()).collect();
    format!(
        "mem capture reads the JSON object an agent's hook ({}) passes on stdin (a notify \
         program's: as its last argument), with `session_id`, `transcript_path`, `cwd` and \
         `hook_event_name`",
        titles.join(", ")
    )
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
