//! Transcripts: streaming, bounded-memory reading of an agent's JSONL session into what its
//! digest lists, from the events of the agent's reader (`crate::agent`).

use std::collections::{HashSet, VecDeque};
use std::io::BufRead;

use jiff::Timestamp;
use serde_json::Value;

use crate::agent::{Agent, Fold, Kind, TranscriptEvent, USER_SHELL, relative_to};
use crate::json::{JsonLine, read_json_lines};

use super::facts::{MAX_FACTS, Stated, split};
use super::text::{clean_text, item, item_of, prefix};
use super::{
    COMMANDS_HEAD, COMMANDS_TAIL, FILES_KEPT, FILES_SEEN, MAX_TRANSCRIPT_BYTES, RAW_ITEM_CHARS,
    REQUESTS_HEAD, REQUESTS_TAIL,
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
    /// The agent of the first recognised line.
    pub format: Option<Agent>,
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
    /// Lines skipped: not JSON even after cleaning, or longer than [`MAX_LINE_BYTES`](crate::json::MAX_LINE_BYTES).
    pub skipped_lines: usize,
    /// Of those, the lines skipped for their length.
    pub oversized_lines: usize,
    /// Whether reading stopped at [`MAX_TRANSCRIPT_BYTES`] with more to read.
    pub truncated: bool,
    /// Tool calls seen.
    pub tool_calls: usize,
    /// The user's prompts.
    pub(crate) requests: Kept,
    /// The agent's echoes of them (Codex's `event_msg`), preferred when there are any.
    pub(crate) echoed: Kept,
    pub(crate) commands: Kept,
    pub(crate) files: Vec<String>,
    pub(crate) files_seen: HashSet<String>,
    pub(crate) files_total: usize,
    /// The last assistant message, raw (cleaned only when used): a prefix of at most
    /// `4 * RAW_ITEM_CHARS` bytes, and whether it was cut.
    pub(crate) outcome: Option<(String, bool)>,
    /// The durable statements of the user's prompts, with when they were made (see
    /// [`super::facts`]), at most [`MAX_FACTS`].
    pub(crate) stated: Vec<(Stated, Option<Timestamp>)>,
    /// The same from the agent's echoes of the prompts, preferred when there are any.
    pub(crate) stated_echoed: Vec<(Stated, Option<Timestamp>)>,
    /// The agent's reader, carried from line to line.
    fold: Fold,
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
            echoed: Kept::new(REQUESTS_HEAD, REQUESTS_TAIL),
            commands: Kept::new(COMMANDS_HEAD, COMMANDS_TAIL),
            files: Vec::new(),
            files_seen: HashSet::new(),
            files_total: 0,
            outcome: None,
            stated: Vec::new(),
            stated_echoed: Vec::new(),
            fold: Fold::default(),
        }
    }
}

/// Reads a transcript line by line: each line is decoded lossily (invalid UTF-8 becomes
/// U+FFFD) and parsed leniently. A line that ends inside a JSON value (a raw line break in a
/// string split it) is joined with the next one, up to [`MAX_LINE_BYTES`](crate::json::MAX_LINE_BYTES) in all. A line that
/// still does not parse, or is longer than [`MAX_LINE_BYTES`](crate::json::MAX_LINE_BYTES) (read past, never held whole),
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
    for event in t.fold.finish() {
        t.event(event, None);
    }
    if reader.limit() == 0 {
        // At the limit: truncated if the transcript goes on.
        t.truncated = !reader.into_inner().fill_buf()?.is_empty();
    }
    Ok(t)
}

impl Transcript {
    /// Takes in one parsed line, through its agent's reader ([`Fold`]); lines of no known
    /// agent are ignored.
    pub fn feed(&mut self, line: &Value) {
        let Some(folded) = self.fold.line(line) else {
            self.session_lines += usize::from(line.get("sessionId").is_some_and(Value::is_string));
            return;
        };
        self.recognised += 1;
        self.format.get_or_insert(folded.agent);
        if self.session_id.is_none() {
            self.session_id = self.fold.session_id.clone();
        }
        if self.cwd.is_none() {
            self.cwd = self.fold.cwd.clone();
        }
        if let Some(at) = folded.at {
            self.first_at.get_or_insert(at);
            self.last_at = Some(at);
        }
        if let Some(started) = self.fold.started {
            self.first_at = Some(self.first_at.map_or(started, |f| f.min(started)));
        }
        for event in folded.events {
            self.event(event, folded.at);
        }
    }

    /// Takes in one event: the user's requests (an agent's echoes of them preferred, see
    /// [`TranscriptEvent::echo`]) and what they state, the last assistant message, the commands run and
    /// files written. `at` is when the event's line was written.
    fn event(&mut self, event: TranscriptEvent, at: Option<Timestamp>) {
        match event.kind {
            Kind::Prompt => {
                let list = if event.echo { &mut self.echoed } else { &mut self.requests };
                let text = clean_text(&event.text);
                let (stated, rest) = split(&text);
                if item(&text).is_some() {
                    // What the prompt states becomes facts of their own: the request keeps the
                    // rest.
                    list.push(item(&rest).unwrap_or_else(|| STATED_ONLY.to_string()));
                }
                let facts = if event.echo { &mut self.stated_echoed } else { &mut self.stated };
                for said in stated {
                    if facts.len() < MAX_FACTS && !facts.iter().any(|(s, _)| *s == said) {
                        facts.push((said, event.at.or(at)));
                    }
                }
            }
            Kind::Assistant => self.set_outcome(&event.text),
            Kind::ToolCall => {
                if event.tool.as_deref() != Some(USER_SHELL) {
                    self.tool_calls += 1;
                }
                self.command(event.command.as_deref());
                for file in &event.files {
                    self.file(Some(file));
                }
            }
            Kind::ToolResult | Kind::Meta | Kind::Checkpoint => {}
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

    /// The user's requests, first and last (see [`Kept`]), and how many were left out: the
    /// agent's echoes of them when it writes any, else its prompts.
    pub(crate) fn requests(&self) -> &Kept {
        if self.echoed.total == 0 { &self.requests } else { &self.echoed }
    }

    /// Whether the transcript holds anything worth a memory.
    pub fn is_empty(&self) -> bool {
        self.requests().total == 0
            && self.outcome.is_none()
            && self.tool_calls == 0
            && self.commands.total == 0
    }

    /// The durable statements of the user's prompts, each once, with when it was first made:
    /// from the agent's echoes of the prompts when it writes any, else from its prompts.
    pub fn stated(&self) -> &[(Stated, Option<Timestamp>)] {
        if self.echoed.total == 0 { &self.stated } else { &self.stated_echoed }
    }

    /// How many requests the user made.
    pub fn request_count(&self) -> usize {
        self.requests().total
    }
}

/// A request that only stated facts, as the transcript lists it (its facts are memories of
/// their own; a digest leaves it out).
pub(crate) const STATED_ONLY: &str = "(stated facts only)";

/// How long a capture waits for a transcript its agent writes behind its hooks (at least: the
/// reads between the pauses add to it).
pub const HOOK_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The pause between two looks at such a transcript.
const HOOK_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// How much of a transcript's end is read to find the hook call.
const HOOK_TAIL_BYTES: u64 = 256 * 1024;

/// Waits, up to [`HOOK_WAIT`], until the transcript at `path` records the hook call of
/// `payload`, for an agent that writes its transcript behind its hooks
/// ([`crate::agent::Spec::records_hook`]; known by the file's name); returns at once for the
/// others. Whether it does (the capture reads what there is either way).
pub fn wait_for_hook(path: &std::path::Path, payload: &[u8]) -> bool {
    let Some((agent, _)) = crate::agent::Agent::of_transcript(path) else { return true };
    let Some(records) = agent.spec().records_hook else { return true };
    let Ok(payload) = crate::json::parse_json_lenient(&String::from_utf8_lossy(payload)) else {
        return true;
    };
    let looks = HOOK_WAIT.as_millis() / HOOK_POLL.as_millis();
    for _ in 0..looks {
        if tail(path).is_some_and(|text| records(&payload, &text)) {
            return true;
        }
        std::thread::sleep(HOOK_POLL);
    }
    tail(path).is_some_and(|text| records(&payload, &text))
}

/// The last [`HOOK_TAIL_BYTES`] of a regular file, as text; `None` when it cannot be read.
fn tail(path: &std::path::Path) -> Option<String> {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let mut file = crate::untrusted::open(path, crate::untrusted::Links::Follow).ok()??;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(HOOK_TAIL_BYTES))).ok()?;
    let mut bytes = Vec::new();
    file.take(HOOK_TAIL_BYTES).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
