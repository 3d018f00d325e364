//! `mem capture`: one episodic memory per agent session, written from the hook payload and the
//! session's transcript (Claude Code or Codex JSONL).
//!
//! The pure parts: lenient JSON ([`parse_json_lenient`], for raw control characters, NUL
//! bytes and mangled backslashes), text cleaning ([`clean_text`], for ANSI escapes), secret
//! redaction ([`redact`]), the payload ([`parse_payload`]), streaming transcript reading with
//! bounded memory ([`read_transcript`]) and the memory's body ([`summarize`]).
//! [`Engine::capture`] ties them to a memory root and appends every attempt, success or
//! failure, to `.mem/capture.log` ([`LogEntry`]). Formats, limits and patterns are described
//! in `docs/capture.md`.

use std::collections::{HashSet, VecDeque};
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use jiff::Timestamp;
use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::engine::Engine;
use crate::format::{Memory, MemoryId, MemoryType, NewMemory, clip, edit_front_matter, with_body};
use crate::format::{parse_time, yaml_text};
use crate::store::{self, Overwrite, STATE_DIR};
use crate::{Error, Result};

/// The capture log, under `.mem/`: one JSON line per capture attempt.
pub const LOG_FILE: &str = "capture.log";
/// Folder, under the root, of the session memories.
pub const SESSIONS_DIR: &str = "sessions";
/// Importance of a session memory.
pub const IMPORTANCE: u8 = 4;
/// Largest hook payload read from stdin.
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024 * 1024;
/// Longest transcript line parsed; a longer line is read past and counted as skipped.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;
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

const PAYLOAD_HELP: &str = "mem capture reads the JSON object a Claude Code or Codex hook \
passes on stdin, with `session_id`, `transcript_path`, `cwd` and `hook_event_name`";

fn fail(message: impl Into<String>) -> Error {
    Error::Capture(message.into())
}

// ---------------------------------------------------------------------------------------------
// Lenient JSON and text cleaning
// ---------------------------------------------------------------------------------------------

/// Parses one JSON text, repairing what agents' hooks and transcripts are known to contain:
/// raw control characters inside strings (escaped), NUL bytes (dropped), backslashes that do
/// not start a valid escape (kept as literal backslashes, as `echo` in `sh` leaves them), lone
/// UTF-16 surrogate escapes (replaced by U+FFFD), a byte-order mark, and stray control
/// characters between tokens. Valid JSON parses unchanged, without the repair pass; the error
/// returned is that of the repaired text (`is_eof` still tells a text cut short).
pub fn parse_json_lenient(text: &str) -> serde_json::Result<Value> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text).or_else(|_| serde_json::from_str(&repair_json(text)))
}

/// The repair pass of [`parse_json_lenient`], as text.
pub fn repair_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        let next = i + c.len_utf8();
        if !in_string {
            match c {
                '"' => {
                    in_string = true;
                    out.push(c);
                }
                ' ' | '\t' | '\n' | '\r' => out.push(c),
                c if c.is_control() => out.push(' '),
                c => out.push(c),
            }
            i = next;
            continue;
        }
        match c {
            '"' => {
                in_string = false;
                out.push(c);
            }
            '\\' => {
                let rest = &text[next..];
                match rest.chars().next() {
                    Some(e @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                        out.push('\\');
                        out.push(e);
                        i = next + 1;
                        continue;
                    }
                    Some('u') => match hex4(&rest[1..]) {
                        Some(unit) if (0xD800..0xDC00).contains(&unit) => {
                            // A high surrogate must be followed by a low one.
                            let after = &rest[5..];
                            let low = after.strip_prefix("\\u").and_then(hex4);
                            if low.is_some_and(|l| (0xDC00..0xE000).contains(&l)) {
                                out.push_str(&text[i..next + 11]);
                                i = next + 11;
                            } else {
                                out.push_str("\\ufffd");
                                i = next + 5;
                            }
                            continue;
                        }
                        Some(unit) if (0xDC00..0xE000).contains(&unit) => {
                            out.push_str("\\ufffd");
                            i = next + 5;
                            continue;
                        }
                        Some(_) => {
                            out.push_str(&text[i..next + 5]);
                            i = next + 5;
                            continue;
                        }
                        None => out.push_str("\\\\"),
                    },
                    _ => out.push_str("\\\\"),
                }
            }
            '\0' => {}
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
        i = next;
    }
    out
}

/// The value of four hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.get(..4)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Text as a person would read it on a terminal: ANSI escape sequences (CSI such as
/// `ESC[31m`, OSC such as `ESC]0;title BEL`, and two-character escapes) removed, and every
/// other control character removed too, except line breaks and tabs.
pub fn clean_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']') => {
                    // OSC: up to BEL or ESC \.
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\n' | '\t' => out.push(c),
            '\r' => out.push('\n'),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

/// Skips the parameters and the final byte of a CSI sequence.
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
    }
}

/// One item as kept while reading: cleaned, whitespace collapsed to single spaces, and cut to
/// [`RAW_ITEM_CHARS`] characters at a space, so that no secret is kept cut in half (the
/// shorter display limits apply after redaction). `None` when nothing is left.
fn item(s: &str) -> Option<String> {
    item_of(s, false)
}

/// [`item`] of a text that was already cut (`cut`) before it was cleaned.
fn item_of(s: &str, cut: bool) -> Option<String> {
    let cleaned = clean_text(s);
    let (cleaned, more) = prefix(&cleaned, RAW_ITEM_CHARS * 4);
    let mut cut = cut || more;
    let mut out = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some((at, _)) = out.char_indices().nth(RAW_ITEM_CHARS) {
        out.truncate(at);
        cut = true;
    }
    if cut && let Some(space) = out.rfind(' ') {
        out.truncate(space);
    }
    (!out.is_empty()).then_some(out)
}

/// The first `max` bytes of `s` at most, cut at a character boundary, and whether it was cut.
fn prefix(s: &str, max: usize) -> (&str, bool) {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], end < s.len())
}

// ---------------------------------------------------------------------------------------------
// Redaction
// ---------------------------------------------------------------------------------------------

/// One redaction rule: the `secret` group (or the whole match) becomes `[REDACTED:kind]`.
struct Rule {
    kind: &'static str,
    regex: Regex,
    /// Whether a match that is a plain word (`Bearer authentication`) is left alone.
    skip_words: bool,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, skip_words| Rule {
        kind,
        regex: Regex::new(pattern).expect("a valid redaction pattern"),
        skip_words,
    };
    vec![
        rule(
            "private-key",
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            false,
        ),
        rule("password", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]+:(?P<secret>[^\s/@]+)@", false),
        rule(
            "authorization",
            r#"(?i)\bauthorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest)\s+)?(?P<secret>[^\s"',;]{8,})"#,
            true,
        ),
        rule("bearer", r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/-]{16,}=*)", true),
        rule("api-key", r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}", false),
        rule(
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
            false,
        ),
        rule("aws-key", r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", false),
        rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", false),
    ]
});

/// Whether `s` reads as a word rather than a secret: all lower case, or capitalised.
fn is_word(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_lowercase())
}

/// Replaces the secrets in `text` (see `docs/capture.md` for the patterns) with
/// `[REDACTED:kind]`, and counts them.
pub fn redact(text: &str) -> (String, usize) {
    let mut count = 0;
    let mut out = text.to_string();
    for rule in RULES.iter() {
        if !rule.regex.is_match(&out) {
            continue;
        }
        let replaced = rule.regex.replace_all(&out, |caps: &Captures| {
            let whole = caps.get(0).expect("group 0 always matches");
            let secret = caps.name("secret").unwrap_or(whole);
            let value = secret.as_str();
            if value.starts_with("[REDACTED") || (rule.skip_words && is_word(value)) {
                return whole.as_str().to_string();
            }
            count += 1;
            let start = secret.start() - whole.start();
            let end = secret.end() - whole.start();
            let w = whole.as_str();
            format!("{}[REDACTED:{}]{}", &w[..start], rule.kind, &w[end..])
        });
        out = replaced.into_owned();
    }
    (out, count)
}

// ---------------------------------------------------------------------------------------------
// Payload
// ---------------------------------------------------------------------------------------------

/// What a hook passes on stdin (the fields `mem capture` uses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Payload {
    /// The session's id: names the memory (`session-<id>`).
    pub session_id: String,
    /// The transcript file, as given.
    pub transcript_path: String,
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
        return Err(fail(format!("the hook payload on stdin is empty; {PAYLOAD_HELP}")));
    }
    let value = parse_json_lenient(&text).map_err(|e| {
        let what = if e.is_eof() { "is cut short (truncated?)" } else { "is not valid JSON" };
        fail(format!("the hook payload {what}: {e}; {PAYLOAD_HELP}"))
    })?;
    let Value::Object(map) = value else {
        return Err(fail(format!("the hook payload is JSON but not an object; {PAYLOAD_HELP}")));
    };
    let field = |key: &str| {
        map.get(key).and_then(Value::as_str).map(str::to_string).filter(|s| !s.trim().is_empty())
    };
    let session_id = field("session_id").ok_or_else(|| {
        fail(format!("the hook payload has no `session_id` text; {PAYLOAD_HELP}"))
    })?;
    check_session_id(&session_id)?;
    let transcript_path = field("transcript_path").ok_or_else(|| {
        fail(format!("the hook payload has no `transcript_path` text; {PAYLOAD_HELP}"))
    })?;
    Ok(Payload {
        session_id,
        transcript_path,
        cwd: field("cwd"),
        hook_event: field("hook_event_name"),
        last_assistant_message: field("last_assistant_message"),
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
        return Err(fail(format!(
            "session_id {session_id:?} cannot name a memory file: only letters, digits, `.`, `_` \
             and `-` are allowed"
        )));
    }
    MemoryId::new(&format!("session-{session_id}"))
        .map_err(|e| fail(format!("session_id {session_id:?} cannot name a memory file: {e}")))
}

/// The session id a transcript file belongs to, from its name: a Claude Code transcript
/// `<session_id>.jsonl` gives its stem; a Codex rollout `rollout-<timestamp>-<uuid>.jsonl`
/// gives the trailing UUID (36 characters). `None` for any other name.
pub fn session_id_of_transcript(path: &Path) -> Option<String> {
    if path.extension()? != "jsonl" {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    if let Some(rest) = stem.strip_prefix("rollout-") {
        let start = rest.len().checked_sub(36)?;
        let uuid = rest.get(start..)?;
        let separated = start == 0 || rest.get(..start)?.ends_with('-');
        return (separated && is_uuid(uuid)).then(|| uuid.to_string());
    }
    check_session_id(stem).ok().map(|_| stem.to_string())
}

/// Whether `s` is a UUID in its 8-4-4-4-12 hex form.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

// ---------------------------------------------------------------------------------------------
// Transcript
// ---------------------------------------------------------------------------------------------

/// Which agent wrote a transcript.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Claude Code: `~/.claude/projects/<project>/<session_id>.jsonl`.
    ClaudeCode,
    /// Codex CLI: `~/.codex/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`.
    Codex,
}

impl Format {
    /// The agent's name, for people.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "Claude Code",
            Format::Codex => "Codex",
        }
    }
}

/// A list that keeps its first `head` and last `tail` items, and counts them all.
#[derive(Clone, Debug, Default)]
struct Kept {
    head: Vec<String>,
    tail: VecDeque<String>,
    total: usize,
    head_cap: usize,
    tail_cap: usize,
}

impl Kept {
    fn new(head_cap: usize, tail_cap: usize) -> Kept {
        Kept { head_cap, tail_cap, ..Default::default() }
    }

    /// Adds an item, unless it repeats the one just added.
    fn push(&mut self, item: String) {
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
    fn parts(&self) -> (&[String], usize, Vec<&String>) {
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
    /// Lines skipped: not JSON even after cleaning, or longer than [`MAX_LINE_BYTES`].
    pub skipped_lines: usize,
    /// Of those, the lines skipped for their length.
    pub oversized_lines: usize,
    /// Tool calls seen.
    pub tool_calls: usize,
    requests: Kept,
    /// Codex user messages from `response_item`s, used when no `event_msg` gives them.
    codex_items: Kept,
    commands: Kept,
    files: Vec<String>,
    files_seen: HashSet<String>,
    files_total: usize,
    /// The last assistant message, raw (cleaned only when used): a prefix of at most
    /// `4 * RAW_ITEM_CHARS` bytes, and whether it was cut.
    outcome: Option<(String, bool)>,
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
            skipped_lines: 0,
            oversized_lines: 0,
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
/// is counted in `skipped_lines`. Memory stays bounded whatever the transcript's size. Only
/// an I/O error fails.
pub fn read_transcript(mut reader: impl BufRead) -> std::io::Result<Transcript> {
    let mut t = Transcript::default();
    let mut buf = Vec::with_capacity(64 * 1024);
    // A line cut short, and how many lines it already spans.
    let mut pending: Option<(String, usize)> = None;
    while let Some(kept) = read_line_capped(&mut reader, &mut buf, MAX_LINE_BYTES)? {
        if !kept {
            t.lines += 1;
            t.skipped_lines += 1 + pending.take().map_or(0, |(_, n)| n);
            t.oversized_lines += 1;
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        if text.trim().is_empty() && pending.is_none() {
            continue;
        }
        t.lines += 1;
        let parsed = parse_json_lenient(&text);
        match (pending.take(), parsed) {
            (None, Ok(value)) => t.feed(&value),
            (None, Err(e)) if e.is_eof() => pending = Some((text.into_owned(), 1)),
            (None, Err(_)) => t.skipped_lines += 1,
            (Some((_, n)), Ok(value)) => {
                t.skipped_lines += n;
                t.feed(&value);
            }
            (Some((before, n)), Err(_)) => {
                let joined = format!("{before}\n{text}");
                match parse_json_lenient(&joined) {
                    Ok(value) => t.feed(&value),
                    Err(e) if e.is_eof() && joined.len() <= MAX_LINE_BYTES => {
                        pending = Some((joined, n + 1))
                    }
                    Err(_) => t.skipped_lines += n + 1,
                }
            }
        }
        if buf.capacity() > 1024 * 1024 {
            // Do not hold on to the memory of one long line.
            buf = Vec::with_capacity(64 * 1024);
        }
    }
    t.skipped_lines += pending.map_or(0, |(_, n)| n);
    Ok(t)
}

/// Reads one line (without caring for its encoding) into `buf`. `Some(true)`: a line of at
/// most `max` bytes; `Some(false)`: a longer line, read past and not kept; `None`: the end.
fn read_line_capped(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Option<bool>> {
    use std::io::Read;
    buf.clear();
    let n = reader.by_ref().take(max as u64 + 1).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') || buf.len() <= max {
        return Ok(Some(true));
    }
    buf.clear();
    reader.skip_until(b'\n')?;
    Ok(Some(false))
}

impl Transcript {
    /// Takes in one parsed line; lines in neither format are ignored.
    pub fn feed(&mut self, line: &Value) {
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        let format = match (line.get("payload"), kind) {
            (
                Some(Value::Object(_)),
                "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted",
            ) => Format::Codex,
            (
                _,
                "user" | "assistant" | "system" | "summary" | "progress" | "file-history-snapshot",
            ) => Format::ClaudeCode,
            _ if line.get("sessionId").is_some() && line.get("message").is_some() => {
                Format::ClaudeCode
            }
            _ => return,
        };
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
                let text = match content {
                    Value::String(s) => s.clone(),
                    Value::Array(blocks) => blocks
                        .iter()
                        .filter(|b| b["type"] == "text")
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
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
        let trimmed = text.trim_start();
        if let Some(name) = between(trimmed, "<command-name>", "</command-name>") {
            let args = between(trimmed, "<command-args>", "</command-args>").unwrap_or("");
            if let Some(request) = item(&format!("{name} {args}")) {
                self.requests.push(request);
            }
            return;
        }
        if let Some(command) = between(trimmed, "<bash-input>", "</bash-input>") {
            self.command(Some(command));
            return;
        }
        const ADDED: [&str; 9] = [
            "This session is being continued from a previous conversation",
            "<local-command-",
            "<bash-stdout>",
            "<bash-stderr>",
            "<system-reminder>",
            "<command-message>",
            "<user-prompt-submit-hook>",
            "Caveat: The messages below were generated by the user while running local commands",
            "[Request interrupted by user",
        ];
        if ADDED.iter().any(|p| trimmed.starts_with(p)) {
            return;
        }
        if let Some(request) = item(text) {
            self.requests.push(request);
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
        let texts = |v: &Value| -> String {
            v["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        };
        match item_value["type"].as_str().unwrap_or("") {
            "message" => match item_value["role"].as_str() {
                Some("user") => {
                    let text = texts(item_value);
                    const ADDED: [&str; 6] = [
                        "<environment_context>",
                        "<user_instructions>",
                        "<permissions instructions>",
                        "<user_shell_command>",
                        "<INSTRUCTIONS>",
                        "# AGENTS.md instructions",
                    ];
                    if !ADDED.iter().any(|p| text.trim_start().starts_with(p))
                        && let Some(request) = item(&text)
                    {
                        self.codex_items.push(request);
                    }
                }
                Some("assistant") => self.set_outcome(&texts(item_value)),
                _ => {}
            },
            "function_call" => {
                self.tool_calls += 1;
                let name = item_value["name"].as_str().unwrap_or("");
                let args = item_value["arguments"]
                    .as_str()
                    .and_then(|a| parse_json_lenient(a).ok())
                    .unwrap_or(Value::Null);
                match name {
                    "apply_patch" => self.patch(args["input"].as_str().unwrap_or("")),
                    "shell" | "container.exec" | "shell_command" | "exec_command"
                    | "local_shell" => {
                        let command = shell_text(&args["command"])
                            .or_else(|| shell_text(&args["cmd"]))
                            .unwrap_or_default();
                        self.codex_command(&command);
                    }
                    _ => {}
                }
            }
            "local_shell_call" => {
                self.tool_calls += 1;
                let command = shell_text(&item_value["action"]["command"]).unwrap_or_default();
                self.codex_command(&command);
            }
            "custom_tool_call" => {
                self.tool_calls += 1;
                if item_value["name"] == "apply_patch" {
                    self.patch(item_value["input"].as_str().unwrap_or(""));
                }
            }
            _ => {}
        }
    }

    /// A Codex shell command; one that applies a patch counts as `apply_patch` and its files.
    fn codex_command(&mut self, command: &str) {
        if command.contains("*** Begin Patch") {
            self.patch(command);
            self.command(Some("apply_patch"));
        } else {
            self.command(Some(command));
        }
    }

    /// The files an `apply_patch` input names.
    fn patch(&mut self, patch: &str) {
        for line in patch.lines() {
            for marker in
                ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "]
            {
                if let Some(path) = line.strip_prefix(marker) {
                    self.file(Some(path));
                }
            }
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
        let path = match &self.cwd {
            Some(cwd) => {
                let cwd = cwd.trim_end_matches(['/', '\\']);
                path.strip_prefix(cwd)
                    .and_then(|rest| rest.strip_prefix(['/', '\\']))
                    .filter(|rest| !rest.is_empty())
                    .map_or(path.clone(), String::from)
            }
            None => path,
        };
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
    fn requests(&self) -> &Kept {
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

/// The text between `start` and `end` in `s`.
fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let from = s.find(start)? + start.len();
    let to = s[from..].find(end)? + from;
    Some(&s[from..to])
}

/// A shell command given as text or as an argument list; `["bash", "-lc", SCRIPT]` gives
/// `SCRIPT`.
fn shell_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(items) => {
            let args: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            let shell = |s: &str| {
                let name = s.rsplit('/').next().unwrap_or(s);
                matches!(name, "sh" | "bash" | "zsh" | "dash" | "fish" | "pwsh" | "powershell")
            };
            match args.as_slice() {
                [sh, flag, script] if shell(sh) && flag.starts_with('-') => {
                    Some(script.to_string())
                }
                _ => Some(
                    args.iter()
                        .map(|a| {
                            if a.contains(char::is_whitespace) {
                                format!("'{a}'")
                            } else {
                                a.to_string()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            }
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Summary
// ---------------------------------------------------------------------------------------------

/// A session memory's title and body, redacted and at most [`MAX_BODY_BYTES`] long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The title (also the body's first heading).
    pub title: String,
    /// The Markdown body, starting with `# title`.
    pub body: String,
    /// Secrets replaced in it.
    pub redacted: usize,
}

/// What goes into a summary besides the transcript.
#[derive(Clone, Debug, Default)]
pub struct SessionInfo<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// The project folder.
    pub cwd: Option<&'a str>,
    /// An outcome given by the hook (`last_assistant_message`), preferred to the transcript's.
    pub outcome: Option<&'a str>,
}

/// Byte budgets of the sections of a body; their sum, with the fixed text, stays under
/// [`MAX_BODY_BYTES`].
const TITLE_CHARS: usize = 80;
const HEADER_BYTES: usize = 480;
const REQUESTS_BYTES: usize = 1300;
const FILES_BYTES: usize = 560;
const COMMANDS_BYTES: usize = 760;
const OUTCOME_BYTES: usize = 700;
const REQUEST_CHARS: usize = 280;
const FILE_CHARS: usize = 140;
const COMMAND_CHARS: usize = 180;

/// Redacts `text`, adding to `count`.
fn redacted(text: &str, count: &mut usize) -> String {
    let (out, n) = redact(text);
    *count += n;
    out
}

/// Cuts `s` to at most `max` bytes, at a character boundary, marking the cut with `…`.
fn clip_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", s[..end].trim_end())
}

/// `s` as Markdown inline code, with a fence longer than any run of backticks in it.
fn inline_code(s: &str) -> String {
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Appends a section of bullets to `out`: items, each cut to `chars` characters, taken
/// alternately from the start and the end of the list while they fit in `budget` bytes, with
/// a line in the gap saying how many of `total` are not shown.
fn bullets(
    out: &mut String,
    heading: &str,
    items: &[String],
    total: usize,
    budget: usize,
    chars: usize,
    code: bool,
) {
    if items.is_empty() {
        return;
    }
    let lines: Vec<String> = items
        .iter()
        .map(|item| {
            let text = clip(item, chars);
            if code { format!("- {}\n", inline_code(&text)) } else { format!("- {text}\n") }
        })
        .collect();
    // The heading and the "and N more" line.
    let mut used = heading.len() + 8 + 32;
    let (mut front, mut back) = (0, lines.len());
    let mut from_front = true;
    while front < back {
        let next = if from_front { front } else { back - 1 };
        if used + lines[next].len() > budget {
            break;
        }
        used += lines[next].len();
        if from_front {
            front += 1;
        } else {
            back -= 1;
        }
        from_front = !from_front;
    }
    let shown = front + lines.len() - back;
    out.push_str(&format!("\n## {heading}\n\n"));
    lines[..front].iter().for_each(|l| out.push_str(l));
    if shown < total {
        out.push_str(&format!("- … and {} more\n", total - shown));
    }
    lines[back..].iter().for_each(|l| out.push_str(l));
}

/// Orders a [`Kept`] list for display: the first items, then the last ones (the gap between
/// is in the "and N more" line).
fn kept_items(kept: &Kept, count: &mut usize) -> Vec<String> {
    let (head, _, tail) = kept.parts();
    head.iter().chain(tail).map(|s| redacted(s, count)).collect()
}

/// The title and body of a session memory: who and where, the user's requests, the files
/// changed, the commands run and the outcome (the last assistant message), every item
/// redacted then cut, the whole under [`MAX_BODY_BYTES`].
pub fn summarize(t: &Transcript, info: &SessionInfo<'_>) -> Summary {
    let mut count = 0;
    let requests = kept_items(t.requests(), &mut count);
    let title = match requests.first() {
        Some(first) => format!("Session: {}", clip(first, TITLE_CHARS)),
        None => format!("Session {}", clip(info.session_id, TITLE_CHARS)),
    };
    let title = clip_bytes(&title, 4 * TITLE_CHARS);

    let mut header = format!(
        "{} session `{}`",
        t.format.map_or("Agent", Format::name),
        clip(info.session_id, TITLE_CHARS)
    );
    if let Some(cwd) = info.cwd {
        header.push_str(&format!(" in {}", inline_code(&clip(&redacted(cwd, &mut count), 160))));
    }
    match (t.first_at, t.last_at) {
        (Some(first), Some(last)) if last > first => {
            header.push_str(&format!(", {} to {}", second(first), second(last)))
        }
        (Some(first), _) => header.push_str(&format!(", {}", second(first))),
        _ => {}
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    header.push_str(&format!(
        ": {}, {}.",
        plural(t.requests().total, "request", "requests"),
        plural(t.tool_calls, "tool call", "tool calls")
    ));

    let mut body = format!("# {title}\n\n{}\n", clip_bytes(&header, HEADER_BYTES));
    let req = t.requests();
    bullets(&mut body, "Requests", &requests, req.total, REQUESTS_BYTES, REQUEST_CHARS, false);
    let files: Vec<String> = t.files.iter().map(|f| redacted(f, &mut count)).collect();
    bullets(&mut body, "Files changed", &files, t.files_total, FILES_BYTES, FILE_CHARS, true);
    let commands = kept_items(&t.commands, &mut count);
    bullets(
        &mut body,
        "Commands run",
        &commands,
        t.commands.total,
        COMMANDS_BYTES,
        COMMAND_CHARS,
        true,
    );
    let outcome = info.outcome.and_then(item).or_else(|| t.outcome());
    if let Some(outcome) = outcome {
        let outcome = redacted(&outcome, &mut count);
        body.push_str(&format!("\n## Outcome\n\n{}\n", clip_bytes(&outcome, OUTCOME_BYTES)));
    }
    let mut footer = match count {
        0 => "\nNo secrets redacted".to_string(),
        n => format!("\n{} redacted", plural(n, "secret", "secrets")),
    };
    if t.skipped_lines > 0 {
        footer.push_str(&format!(
            "; {} of the transcript skipped (not JSON even after cleaning, or too long)",
            plural(t.skipped_lines, "line", "lines")
        ));
    }
    footer.push_str(".\n");
    if body.len() + footer.len() > MAX_BODY_BYTES {
        body = clip_bytes(&body, MAX_BODY_BYTES - footer.len() - 1);
        body.push('\n');
    }
    body.push_str(&footer);
    Summary { title, body, redacted: count }
}

/// `t` to the whole second.
fn second(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second()).unwrap_or(t)
}

/// The tag of a project: its folder's name, lower-cased, with every character other than
/// `[a-z0-9._-]` turned into `-`.
pub fn project_tag(cwd: &str) -> Option<String> {
    let name = cwd.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next()?;
    let mut tag = String::new();
    for c in name.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') { c } else { '-' };
        if !(c == '-' && tag.ends_with('-')) {
            tag.push(c);
        }
    }
    let tag = clip(tag.trim_matches(['-', '.']), 64).trim_end_matches('…').to_string();
    (!tag.is_empty()).then_some(tag)
}

// ---------------------------------------------------------------------------------------------
// The log
// ---------------------------------------------------------------------------------------------

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
    pub session_id: Option<String>,
    /// The hook event, when the payload gave one.
    pub hook_event: Option<String>,
    /// The memory file written, relative to the root.
    pub path: Option<String>,
    /// The transcript path, as the payload gave it.
    pub transcript: Option<String>,
    /// Secrets redacted.
    pub redacted: usize,
    /// Transcript lines skipped.
    pub skipped_lines: usize,
    /// Why it failed.
    pub error: Option<String>,
}

impl LogEntry {
    /// An entry at `now` that knows nothing yet.
    pub fn new(now: Timestamp) -> LogEntry {
        LogEntry {
            at: second(now).to_string(),
            status: Status::Ok,
            session_id: None,
            hook_event: None,
            path: None,
            transcript: None,
            redacted: 0,
            skipped_lines: 0,
            error: None,
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
    fn fill_from_raw(&mut self, payload: &[u8]) {
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

/// Appends `entry` as one JSON line to `<root>/.mem/capture.log`, creating `.mem/` if needed.
pub fn append_log(root: &Path, entry: &LogEntry) -> Result<()> {
    let dir = root.join(STATE_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
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

// ---------------------------------------------------------------------------------------------
// The engine
// ---------------------------------------------------------------------------------------------

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
    pub format: Option<Format>,
    /// User requests found.
    pub requests: usize,
    /// Tool calls found.
    pub tool_calls: usize,
    /// Secrets redacted from the memory.
    pub redacted: usize,
    /// Transcript lines skipped.
    pub skipped_lines: usize,
    /// Of those, lines skipped for being longer than [`MAX_LINE_BYTES`].
    pub oversized_lines: usize,
}

impl Engine {
    /// Captures a session from a hook payload: reads its transcript, writes or updates
    /// `sessions/session-<session_id>.md`, and appends the outcome, success or failure, to
    /// `.mem/capture.log`. An error that could not be logged says so too.
    pub fn capture(&mut self, payload: &[u8], now: Timestamp) -> Result<Captured> {
        let mut entry = LogEntry::new(now);
        let result = self.capture_into(payload, now, &mut entry);
        match &result {
            Ok(captured) => {
                entry.path = captured.path.clone();
                entry.redacted = captured.redacted;
            }
            Err(e) => {
                entry.status = Status::Error;
                entry.error = Some(e.to_string());
            }
        }
        let logged = append_log(self.root(), &entry);
        match (result, logged) {
            (result, Ok(())) => result,
            (Ok(captured), Err(e)) => Err(fail(format!(
                "captured {}, but could not log it: {e}",
                captured.path.as_deref().unwrap_or("nothing")
            ))),
            (Err(first), Err(e)) => Err(fail(format!("{first} (and could not log it: {e})"))),
        }
    }

    fn capture_into(
        &mut self,
        payload: &[u8],
        now: Timestamp,
        entry: &mut LogEntry,
    ) -> Result<Captured> {
        let payload = match parse_payload(payload) {
            Ok(p) => p,
            Err(e) => {
                entry.fill_from_raw(payload);
                return Err(e);
            }
        };
        entry.session_id = Some(payload.session_id.clone());
        entry.hook_event.clone_from(&payload.hook_event);
        entry.transcript = Some(payload.transcript_path.clone());
        let id = check_session_id(&payload.session_id)?;

        let mut path = PathBuf::from(&payload.transcript_path);
        if path.is_relative()
            && let Some(cwd) = &payload.cwd
        {
            path = Path::new(cwd).join(path);
        }
        let cannot_read =
            |e: std::io::Error| fail(format!("cannot read the transcript {}: {e}", path.display()));
        let file = std::fs::File::open(&path).map_err(cannot_read)?;
        if file.metadata().map_err(cannot_read)?.is_dir() {
            return Err(fail(format!(
                "cannot read the transcript {}: it is a folder",
                path.display()
            )));
        }
        let transcript = read_transcript(std::io::BufReader::with_capacity(64 * 1024, file))
            .map_err(cannot_read)?;
        entry.skipped_lines = transcript.skipped_lines;
        if transcript.lines > 0 && transcript.recognised == 0 {
            return Err(fail(format!(
                "the transcript {} has no line in the Claude Code or Codex format ({} of {} \
                 lines skipped: not JSON even after cleaning, or over {} MiB)",
                path.display(),
                transcript.skipped_lines,
                transcript.lines,
                MAX_LINE_BYTES >> 20
            )));
        }
        let mut captured = Captured {
            id: id.to_string(),
            path: None,
            written: Written::Nothing,
            session_id: payload.session_id.clone(),
            hook_event: payload.hook_event.clone(),
            transcript: payload.transcript_path.clone(),
            format: transcript.format,
            requests: transcript.request_count(),
            tool_calls: transcript.tool_calls,
            redacted: 0,
            skipped_lines: transcript.skipped_lines,
            oversized_lines: transcript.oversized_lines,
        };
        if transcript.is_empty() && payload.last_assistant_message.is_none() {
            return Ok(captured);
        }

        let cwd = payload.cwd.clone().or_else(|| transcript.cwd.clone());
        let summary = summarize(
            &transcript,
            &SessionInfo {
                session_id: &payload.session_id,
                cwd: cwd.as_deref(),
                outcome: payload.last_assistant_message.as_deref(),
            },
        );
        let project = cwd.as_deref().map(|c| redact(c).0);
        let mut tags = vec!["session".to_string()];
        tags.extend(cwd.as_deref().and_then(project_tag));
        let new = NewMemory {
            text: summary.body.clone(),
            kind: MemoryType::Episodic,
            importance: IMPORTANCE,
            tags,
            title: None,
            source: Some(format!("session/{}", payload.session_id)),
        };
        let created = transcript.first_at.unwrap_or(now);
        let (rel, written) = self.write_session(&id, new, created, project.as_deref())?;
        captured.path = Some(rel);
        captured.written = written;
        captured.redacted = summary.redacted;
        Ok(captured)
    }

    /// Writes a session memory: a new file, or the existing one with its body and the lines
    /// capture owns (`source`, `project`) replaced. Under the root's lock.
    fn write_session(
        &mut self,
        id: &MemoryId,
        new: NewMemory,
        created: Timestamp,
        project: Option<&str>,
    ) -> Result<(String, Written)> {
        let rel = format!("{SESSIONS_DIR}/{id}.md");
        let path = self.root().join(&rel);
        let parse_error = |source| Error::Parse { path: rel.clone().into(), source };
        let mut owned = vec![("source", new.source.as_deref().map(yaml_text))];
        if let Some(project) = project {
            owned.push(("project", Some(yaml_text(project))));
        }
        self.with_lock(|_| {
            let old = match std::fs::read(&path) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io(&path, e)),
            };
            match old {
                None => {
                    let memory = Memory::create(new, created)?;
                    let mut edits = vec![("id", Some(yaml_text(id.as_str())))];
                    edits.extend(owned.iter().cloned());
                    let text = edit_front_matter(&memory.render(), &edits).map_err(parse_error)?;
                    let folder = path.parent().expect("sessions/ is a folder");
                    std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
                    store::write_atomic(&path, text.as_bytes(), Overwrite::No)?;
                    Ok((rel.clone(), Written::Created))
                }
                Some(bytes) => {
                    let memory = Memory::parse_bytes(&bytes).map_err(parse_error)?;
                    if memory.id() != id {
                        return Err(fail(format!(
                            "{rel} holds the memory {:?}, not {id:?}; move it elsewhere so that \
                             mem capture can write this session",
                            memory.id().as_str()
                        )));
                    }
                    let text = String::from_utf8(bytes).expect("parse_bytes checked UTF-8");
                    let body = format!("{}\n", new.text.trim());
                    let updated = with_body(&text, &body)
                        .and_then(|t| edit_front_matter(&t, &owned))
                        .map_err(parse_error)?;
                    if updated == text {
                        return Ok((rel.clone(), Written::Unchanged));
                    }
                    store::write_atomic(&path, updated.as_bytes(), Overwrite::Yes)?;
                    Ok((rel.clone(), Written::Updated))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests;
