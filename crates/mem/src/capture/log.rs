//! The capture log, `.mem/capture.log`: one JSON line per capture attempt. Capture writes it,
//! `mem health` reads it; this file owns its name and its line format.

use std::io::Write as _;
use std::path::Path;
use std::sync::LazyLock;

use jiff::Timestamp;
use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::format::clip;
use crate::{Error, Result};

use crate::json::parse_json_lenient;

/// The capture log, under `.mem/`: one JSON line per capture attempt.
pub const LOG_FILE: &str = "capture.log";

/// Whether a capture worked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The capture worked (a memory written, updated, unchanged, or nothing to capture yet).
    Ok,
    /// The capture failed; `error` says why.
    Error,
}

/// One line of `.mem/capture.log`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEntry {
    /// When, RFC 3339, to the second.
    pub at: String,
    /// `ok` or `error`.
    pub status: Status,
    /// The session id, when the payload gave one.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The hook event, when the payload gave one.
    #[serde(default)]
    pub hook_event: Option<String>,
    /// The memory file written, relative to the root.
    #[serde(default)]
    pub path: Option<String>,
    /// The transcript path, as the payload gave it.
    #[serde(default)]
    pub transcript: Option<String>,
    /// Secrets redacted.
    #[serde(default)]
    pub redacted: usize,
    /// Transcript lines skipped.
    #[serde(default)]
    pub skipped_lines: usize,
    /// Why it failed.
    #[serde(default)]
    pub error: Option<String>,
    /// What an `ok` capture that wrote nothing found (the transcript did not exist yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl LogEntry {
    /// An entry at `now` that knows nothing yet.
    pub fn new(now: Timestamp) -> LogEntry {
        LogEntry {
            at: crate::format::whole_second(now).to_string(),
            status: Status::Ok,
            session_id: None,
            hook_event: None,
            path: None,
            transcript: None,
            redacted: 0,
            skipped_lines: 0,
            error: None,
            note: None,
        }
    }

    /// A failure before the payload could be handed to [`Engine::capture`] (stdin unreadable,
    /// root not openable): what the payload's bytes still tell, and `error`.
    pub fn failure(payload: &[u8], error: &str, now: Timestamp) -> LogEntry {
        let mut entry = LogEntry::new(now);
        entry.fill_from_raw(payload);
        entry.status = Status::Error;
        entry.error = Some(error.to_string());
        entry
    }

    /// Fills the payload fields from bytes that may not parse: the payload if it parses, else
    /// whatever `"key": "value"` pairs can be found in them.
    pub(crate) fn fill_from_raw(&mut self, payload: &[u8]) {
        static FIELD: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#""(session_id|hook_event_name|transcript_path)"\s*:\s*"((?:[^"\\]|\\.)*)""#,
            )
            .expect("a valid pattern")
        });
        let text = String::from_utf8_lossy(&payload[..payload.len().min(1 << 20)]);
        if let Ok(Value::Object(map)) = parse_json_lenient(&text) {
            let field = |k: &str| map.get(k).and_then(Value::as_str).map(String::from);
            self.session_id = field("session_id");
            self.hook_event = field("hook_event_name");
            self.transcript = field("transcript_path");
            return;
        }
        for caps in FIELD.captures_iter(&text) {
            let value = Some(clip(&caps[2], 300));
            match &caps[1] {
                "session_id" => self.session_id = self.session_id.take().or(value),
                "hook_event_name" => self.hook_event = self.hook_event.take().or(value),
                _ => self.transcript = self.transcript.take().or(value),
            }
        }
    }
}

/// Appends `entry` as one JSON line to `<root>/.mem/capture.log`, creating `.mem/` if needed
/// (never through a link: [`crate::store::state_dir`]).
pub fn append_log(root: &Path, entry: &LogEntry) -> Result<()> {
    let dir = crate::store::state_dir(root)?;
    let path = dir.join(LOG_FILE);
    let mut line = serde_json::to_string(entry).expect("a log entry always serialises");
    line.push('\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    // One write of the whole line: concurrent appends do not interleave.
    file.write_all(line.as_bytes()).map_err(|e| Error::io(&path, e))?;
    Ok(())
}

/// The entries of the capture log at `path`, one per non-blank line, `None` for a line that is
/// not an entry; `None` altogether when there is no log.
pub fn read_log(path: &Path) -> std::io::Result<Option<Vec<Option<LogEntry>>>> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let entries = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| serde_json::from_str::<LogEntry>(line).ok())
        .collect();
    Ok(Some(entries))
}
