//! Transcripts: streaming, bounded-memory reading of Claude Code and Codex JSONL sessions.

use std::collections::{HashSet, VecDeque};
use std::io::BufRead;

use jiff::Timestamp;
use serde_json::Value;

use crate::format::parse_time;

use super::jsonl::{JsonLine, read_json_lines};
use super::lines::{
    ClaudeUserText, CodexCall, block_text, claude_user_content, claude_user_text, codex_added,
    codex_call, patch_paths, relative_to,
};
use super::{
    COMMANDS_HEAD, COMMANDS_TAIL, FILES_KEPT, FILES_SEEN, Format, MAX_TRANSCRIPT_BYTES,
    RAW_ITEM_CHARS, REQUESTS_HEAD, REQUESTS_TAIL, item, item_of, prefix,
};

/// A list that keeps its first `head` and last `tail` items, and counts them all.
#[derive(Clone, Debug, Default)]
pub(crate) struct Kept {
    pub(crate) head: Vec<String>,
    pub(crate) tail: VecDeque<String>,
    pub(crate) total: usize,
    pub(crate) head_cap: usize,
    pub(crate) tail_cap: usize,
}

impl Kept {
    pub(crate) fn new(head_cap: usize, tail_cap: usize) -> Kept {
        Kept { head_cap, tail_cap, ..Default::default() }
    }

    /// Adds an item, unless it repeats the one just added.
    pub(crate) fn push(&mut self, item: String) {
        if self.tail.back().or(self.head.last()) == Some(&item) {
            return;
        }
        self.total += 1;
        if self.head.len() < self.head_cap {
            self.head.push(item);
        } else {
            if self.tail.len() == self.tail_cap {
                self.tail.pop_front();
            }
            self.tail.push_back(item);
        }
    }

    /// The first items, how many were dropped between, and the last items.
    pub(crate) fn parts(&self) -> (&[String], usize, Vec<&String>) {
        let dropped = self.total - self.head.len() - self.tail.len();
        (&self.head, dropped, self.tail.iter().collect())
    }
}

/// What a transcript says about its session, gathered line by line with bounded memory.
#[derive(Clone, Debug)]
pub struct Transcript {
    /// The format of the first recognised line.
    pub format: Option<Format>,
    /// The session id the transcript records (`sessionId`, or Codex's `session_meta.id`).
    pub session_id: Option<String>,
    /// The working directory it records.
    pub cwd: Option<String>,
    /// The time of its first event.
    pub first_at: Option<Timestamp>,
    /// The time of its last event.
    pub last_at: Option<Timestamp>,
    /// Non-blank lines read.
    pub lines: usize,
    /// Lines in a known format.
    pub recognised: usize,
    /// Lines in no known format that name a session (`sessionId`): the lines about the session
    /// that Claude Code writes before its first message (`mode`, `permission-mode`, …).
    pub session_lines: usize,
    /// Lines skipped: not JSON even after cleaning, or longer than [`MAX_LINE_BYTES`].
    pub skipped_lines: usize,
    /// Of those, the lines skipped for their length.
    pub oversized_lines: usize,
    /// Whether reading stopped at [`MAX_TRANSCRIPT_BYTES`] with more to read.
    pub truncated: bool,
    /// Tool calls seen.
    pub tool_calls: usize,
    pub(crate) requests: Kept,
    /// Codex user messages from `response_item`s, used when no `event_msg` gives them.
    pub(crate) codex_items: Kept,
    pub(crate) commands: Kept,
    pub(crate) files: Vec<String>,
    pub(crate) files_seen: HashSet<String>,
    pub(crate) files_total: usize,
    /// The last assistant message, raw (cleaned only when used): a prefix of at most
    /// `4 * RAW_ITEM_CHARS` bytes, and whether it was cut.
    pub(crate) outcome: Option<(String, bool)>,
}

impl Default for Transcript {
    fn default() -> Transcript {
        Transcript {
            format: None,
            session_id: None,
            cwd: None,
            first_at: None,
            last_at: None,
            lines: 0,
            recognised: 0,
            session_lines: 0,
            skipped_lines: 0,
            oversized_lines: 0,
            truncated: false,
            tool_calls: 0,
            requests: Kept::new(REQUESTS_HEAD, REQUESTS_TAIL),
            codex_items: Kept::new(REQUESTS_HEAD, REQUESTS_TAIL),
            commands: Kept::new(COMMANDS_HEAD, COMMANDS_TAIL),
            files: Vec::new(),
            files_seen: HashSet::new(),
            files_total: 0,
            outcome: None,
        }
    }
}

/// Reads a transcript line by line: each line is decoded lossily (invalid UTF-8 becomes
/// U+FFFD) and parsed leniently. A line that ends inside a JSON value (a raw line break in a
/// string split it) is joined with the next one, up to [`MAX_LINE_BYTES`] in all. A line that
/// still does not parse, or is longer than [`MAX_LINE_BYTES`] (read past, never held whole),
/// is counted in `skipped_lines`. Memory stays bounded whatever the transcript's size, and so
/// does time: reading stops after [`MAX_TRANSCRIPT_BYTES`] (`truncated` when there is more; a
/// line cut there counts as skipped). Only an I/O error fails.
pub fn read_transcript(reader: impl BufRead) -> std::io::Result<Transcript> {
    read_transcript_upto(reader, MAX_TRANSCRIPT_BYTES)
}

/// [`read_transcript`], reading at most `limit` bytes.
pub(crate) fn read_transcript_upto(
    reader: impl BufRead,
    limit: u64,
) -> std::io::Result<Transcript> {
    let mut reader = reader.take(limit);
    let mut t = Transcript::default();
    read_json_lines(
        &mut reader,
        false,
        |e| e,
        |line| {
            match line {
                JsonLine::Value { value, lines } => {
                    t.lines += lines;
                    t.feed(&value);
                }
                JsonLine::Skipped { lines, oversized } => {
                    t.lines += lines;
                    t.skipped_lines += lines;
                    t.oversized_lines += usize::from(oversized);
                }
            }
            Ok(())
        },
    )?;
    if reader.limit() == 0 {
        // At the limit: truncated if the transcript goes on.
        t.truncated = !reader.into_inner().fill_buf()?.is_empty();
    }
    Ok(t)
}

impl Transcript {
    /// Takes in one parsed line; lines in neither format are ignored.
    pub fn feed(&mut self, line: &Value) {
        let Some(format) = Format::of_line(line) else {
            self.session_lines += usize::from(line.get("sessionId").is_some_and(Value::is_string));
            return;
        };
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        self.recognised += 1;
        self.format.get_or_insert(format);
        if let Some(at) = line.get("timestamp").and_then(Value::as_str)
            && let Ok(at) = parse_time(at)
        {
            self.first_at.get_or_insert(at);
            self.last_at = Some(at);
        }
        match format {
            Format::ClaudeCode => self.feed_claude(kind, line),
            Format::Codex => self.feed_codex(kind, &line["payload"]),
        }
    }

    fn feed_claude(&mut self, kind: &str, line: &Value) {
        if self.session_id.is_none() {
            self.session_id = line.get("sessionId").and_then(Value::as_str).map(String::from);
        }
        if self.cwd.is_none() {
            self.cwd = line.get("cwd").and_then(Value::as_str).map(String::from);
        }
        let flag = |key: &str| line.get(key).and_then(Value::as_bool).unwrap_or(false);
        // Subagents' lines and lines Claude Code adds itself are not the user's requests.
        let side = flag("isSidechain");
        let content = &line["message"]["content"];
        match kind {
            "user" if !side && !flag("isMeta") && !flag("isCompactSummary") => {
                let text = claude_user_content(content);
                self.claude_user_text(&text);
            }
            "assistant" => {
                for block in content.as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") if !side => {
                            self.set_outcome(block["text"].as_str().unwrap_or(""));
                        }
                        Some("tool_use") => {
                            self.tool_calls += 1;
                            let input = &block["input"];
                            match block["name"].as_str().unwrap_or("") {
                                "Bash" => self.command(input["command"].as_str()),
                                "Edit" | "Write" | "MultiEdit" => {
                                    self.file(input["file_path"].as_str())
                                }
                                "NotebookEdit" => self.file(input["notebook_path"].as_str()),
                                _ => {}
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// A user message of Claude Code: a request, a slash command, a `!` shell command, or
    /// text Claude Code added (skipped).
    fn claude_user_text(&mut self, text: &str) {
        match claude_user_text(text) {
            ClaudeUserText::Slash(request) => {
                if let Some(request) = item(&request) {
                    self.requests.push(request);
                }
            }
            ClaudeUserText::Shell(command) => self.command(Some(command)),
            ClaudeUserText::ShellOutput(..) | ClaudeUserText::Added => {}
            ClaudeUserText::Typed => {
                if let Some(request) = item(text) {
                    self.requests.push(request);
                }
            }
        }
    }

    fn feed_codex(&mut self, kind: &str, payload: &Value) {
        let text = |v: &Value| v.as_str().map(String::from);
        match kind {
            "session_meta" => {
                self.session_id = self.session_id.take().or_else(|| text(&payload["id"]));
                self.cwd = self.cwd.take().or_else(|| text(&payload["cwd"]));
                if let Some(at) = payload["timestamp"].as_str().and_then(|t| parse_time(t).ok()) {
                    self.first_at = Some(self.first_at.map_or(at, |f| f.min(at)));
                }
            }
            "turn_context" if self.cwd.is_none() => self.cwd = text(&payload["cwd"]),
            "event_msg" => match payload["type"].as_str() {
                Some("user_message") => {
                    if let Some(request) = payload["message"].as_str().and_then(item) {
                        self.requests.push(request);
                    }
                }
                Some("agent_message") => {
                    self.set_outcome(payload["message"].as_str().unwrap_or(""))
                }
                _ => {}
            },
            "response_item" => self.codex_item(payload),
            _ => {}
        }
    }

    fn codex_item(&mut self, item_value: &Value) {
        if let Some((_, call)) = codex_call(item_value) {
            self.tool_calls += 1;
            match call {
                CodexCall::Patch { text, shell } => {
                    for path in patch_paths(&text) {
                        self.file(Some(path));
                    }
                    if shell {
                        self.command(Some("apply_patch"));
                    }
                }
                CodexCall::Shell(command) => self.command(Some(&command)),
                CodexCall::Other(_) => {}
            }
            return;
        }
        if item_value["type"] != "message" {
            return;
        }
        let text = block_text(&item_value["content"]);
        match item_value["role"].as_str() {
            Some("user") => {
                if !codex_added(&text)
                    && let Some(request) = item(&text)
                {
                    self.codex_items.push(request);
                }
            }
            Some("assistant") => self.set_outcome(&text),
            _ => {}
        }
    }

    /// Keeps an assistant message as the outcome so far; cleaning waits for the last one.
    fn set_outcome(&mut self, text: &str) {
        if !text.trim().is_empty() {
            let (kept, cut) = prefix(text, 4 * RAW_ITEM_CHARS);
            self.outcome = Some((kept.to_string(), cut));
        }
    }

    /// The last assistant message, cleaned.
    pub fn outcome(&self) -> Option<String> {
        self.outcome.as_ref().and_then(|(text, cut)| item_of(text, *cut))
    }

    fn command(&mut self, command: Option<&str>) {
        if let Some(command) = command.and_then(item) {
            self.commands.push(command);
        }
    }

    fn file(&mut self, path: Option<&str>) {
        let Some(path) = path.and_then(item) else { return };
        let path = relative_to(self.cwd.as_deref(), &path);
        if self.files_seen.contains(&path) {
            return;
        }
        self.files_total += 1;
        if self.files_seen.len() < FILES_SEEN {
            self.files_seen.insert(path.clone());
        }
        if self.files.len() < FILES_KEPT {
            self.files.push(path);
        }
    }

    /// The user's requests, first and last (see [`Kept`]), and how many were left out.
    pub(crate) fn requests(&self) -> &Kept {
        if self.requests.total == 0 { &self.codex_items } else { &self.requests }
    }

    /// Whether the transcript holds anything worth a memory.
    pub fn is_empty(&self) -> bool {
        self.requests().total == 0
            && self.outcome.is_none()
            && self.tool_calls == 0
            && self.commands.total == 0
    }

    /// How many requests the user made.
    pub fn request_count(&self) -> usize {
        self.requests().total
    }
}
