//! Everything that differs from one coding agent to another, in one file per agent: its names,
//! how a line of its transcript is recognised and folded into session events ([`Fold`]: the
//! one reader per agent that both the digest of `mem capture` and the session log read),
//! how a transcript's file name gives its session, and the shape of its hook answers.
//!
//! Adding an agent (docs/architecture.md, "Adding an agent"): a file here with its [`Spec`],
//! a variant of [`Agent`] with its arm in [`Agent::spec`] and its place in [`Agent::ALL`],
//! then its tests and docs; `mem setup` writes its configuration from `src/setup/`.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde_json::Value;

use crate::format::parse_time;

pub mod claude;
pub mod codex;
pub mod copilot;
mod event;
pub mod gemini;
mod home;
pub mod memory;
pub mod opencode;
pub mod pi;

pub(crate) use self::event::Tools;
pub use self::event::{Kind, TranscriptEvent, USER_SHELL};
pub use self::home::{Home, Homes};
pub use self::memory::{MemorySpec, NativeMemory, NativeRead, Sources};

/// A coding agent whose sessions mem reads and whose hooks run mem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// OpenCode.
    OpenCode,
    /// GitHub Copilot CLI.
    Copilot,
    /// pi.
    Pi,
}

/// What makes one agent: its names and its readers. Each agent's file defines one.
pub struct Spec {
    /// The name the command line, the JSON reports and the session log use.
    pub name: &'static str,
    /// The name for people.
    pub title: &'static str,
    /// Other names read as this agent (names written by older versions of mem).
    pub aliases: &'static [&'static str],
    /// Whether a parsed transcript line is one this agent writes.
    pub recognises: fn(&Value) -> bool,
    /// Adds to `out` the events of one line this agent wrote (times are filled in after).
    pub fold: fn(&mut Fold, &Value, &mut Vec<TranscriptEvent>),
    /// Adds to `out` the events still held at the end of what is read (see [`Fold::held`]).
    pub finish: fn(&mut Fold, &mut Vec<TranscriptEvent>),
    /// How this agent's transcript file names start, if they all start the same way (no other
    /// agent's file name is read as a name of this agent when it starts so).
    pub file_prefix: &'static str,
    /// The session id of a transcript file, if its name is this agent's (read from the file
    /// where the name holds only part of it).
    pub session_of_file: fn(&Path) -> Option<String>,
    /// Whether a transcript (its first line, parsed) is a subagent's rather than a session's.
    pub is_subagent: fn(&Value) -> bool,
    /// Whose a transcript of this agent is, for a project: the project's, a subagent's, or
    /// another project's (a file may be read).
    pub whose: fn(&Path, &Path) -> std::io::Result<Whose>,
    /// Where the agent keeps its own files.
    pub home: Home,
    /// Where the agent reads its user configuration, when not in its home folder.
    pub config: Option<Home>,
    /// The names the agent gives the hook events mem's hooks run on.
    pub events: Events,
    /// The hook events whose context a resumed conversation still holds (the agent rebuilds
    /// it from its transcript); what other events sent is gone and is sent again on resume.
    pub resume_keeps: &'static [&'static str],
    /// The prompt of a hook payload as the user typed it (what the agent adds taken out).
    pub clean_prompt: fn(&str) -> String,
    /// The JSON a hook prints to add `text` to the model's context on the hook `event`.
    pub context_answer: fn(&str, &str) -> Value,
    /// The folders that hold transcripts of sessions started in a project or inside it, given
    /// the agent's home folder and the project.
    pub transcript_folders: fn(&Path, &Path) -> Vec<PathBuf>,
    /// For a transcript folder the user names: the folders it stands for when it is this
    /// agent's folder of the project (with those of its subfolders), else `None`.
    pub widen_folder: fn(&Path, &Path) -> Option<Vec<PathBuf>>,
    /// The transcript of a session, looked up by its id under the agent's home folder, for
    /// the agents whose payloads may name none.
    pub find_transcript: fn(&Path, &str) -> Option<PathBuf>,
    /// The name of the folders that hold only subagents' transcripts, if the agent keeps them
    /// apart so.
    pub subagents_folder: Option<&'static str>,
    /// For an agent that keeps its sessions in a store of its own (a database) rather than in
    /// transcript files: how mem lists and reads them.
    pub stored: Option<Stored>,
    /// Why sessions of this agent in `project` were missed, where the agent's own files say
    /// (a folder not trusted, hooks that run only in the project's top folder), given the
    /// agent's home folder and the uncaptured transcripts.
    pub missed_because: fn(&Missed) -> Option<String>,
    /// The memories the agent keeps of its own, if it keeps any: mem reads them as a
    /// read-only layer ([`MemorySpec`]).
    pub memory: Option<MemorySpec>,
    /// Whether another agent runs the hooks of this agent's settings (a trusted repository's),
    /// passing payloads of its own: each hook payload is then asked whose it is
    /// ([`Agent::of_hook_payload`]).
    pub hooks_run_by_others: bool,
    /// Whether a hook payload that an agent whose hooks others run passed is this agent's.
    pub runs_hooks_of_others: fn(&Value) -> bool,
    /// For an agent that writes its transcript behind its hooks: whether the end of a
    /// transcript (its text) already records the hook call of a payload. A capture waits for
    /// it (`capture::wait_for_hook`), so that it reads the turn that just ended.
    pub records_hook: Option<fn(&Value, &str) -> bool>,
}

/// How mem reads the sessions of an agent that keeps them in a store of its own: each session
/// becomes a transcript of lines that the agent's reader folds, written by mem into its own
/// state (`.mem/transcripts/<agent>/<session id>.jsonl`, see `Engine::capture`).
#[derive(Clone, Copy, Debug)]
pub struct Stored {
    /// The store's file in the agent's home folder.
    pub file: fn(&Path) -> PathBuf,
    /// The sessions in the store whose folder is the project or inside it, given the agent's
    /// home folder and the project: each session's id and whose it is (a subagent's or the
    /// project's); an empty list when there is no store.
    pub sessions: fn(&Path, &Path) -> std::io::Result<StoredSessions>,
    /// The lines of a session's transcript, given the agent's home folder and the session id;
    /// `None` when the store holds no such session. Only what can no longer change is given,
    /// so that the lines given once are given the same ever after (the session log reads on
    /// from where it stopped).
    pub transcript: fn(&Path, &str) -> std::io::Result<Option<Lines>>,
}

/// The lines of a transcript, parsed.
pub type Lines = Vec<Value>;

/// The sessions of a store: each one's id and whose it is.
pub type StoredSessions = Vec<(String, Whose)>;

/// The names an agent gives the hook events mem's hooks run on.
#[derive(Clone, Copy, Debug)]
pub struct Events {
    /// When a session starts (or resumes, or is cleared).
    pub start: &'static str,
    /// On each prompt, before the model sees it.
    pub prompt: &'static str,
    /// When the agent has answered a prompt.
    pub turn_end: &'static str,
    /// When the session ends, if the agent has such a hook and waits for it.
    pub session_end: Option<&'static str>,
}

/// What the hint of [`Spec::missed_because`] is given.
#[derive(Debug)]
pub struct Missed<'a> {
    /// The project.
    pub project: &'a Path,
    /// The agent's home folder.
    pub home: Option<&'a Path>,
    /// The transcripts of this agent's sessions not captured.
    pub transcripts: &'a [&'a Path],
    /// The configuration files that run mem for the project (hooks, servers).
    pub configured: &'a [PathBuf],
    /// Whether some of mem's hooks are there but not trusted by the agent yet.
    pub untrusted: bool,
}

impl Agent {
    /// Every agent, in the order reports list them.
    pub const ALL: [Agent; 6] =
        [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::OpenCode, Agent::Copilot, Agent::Pi];

    /// The agent's [`Spec`].
    pub fn spec(self) -> &'static Spec {
        match self {
            Agent::Claude => &claude::SPEC,
            Agent::Codex => &codex::SPEC,
            Agent::Gemini => &gemini::SPEC,
            Agent::OpenCode => &opencode::SPEC,
            Agent::Copilot => &copilot::SPEC,
            Agent::Pi => &pi::SPEC,
        }
    }

    /// Its name on the command line, in JSON reports and in the session log: `claude`,
    /// `codex`, `gemini`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Its name for people: `Claude Code`, `Codex`, `Gemini CLI`.
    pub fn title(self) -> &'static str {
        self.spec().title
    }

    /// The agent whose own memories make the layer named `layer` (`claude`), if one does.
    pub fn of_layer(layer: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.spec().memory.is_some_and(|m| m.layer == layer))
    }

    /// The agent named `name` (its name or one of its aliases, such as the `claude-code` of
    /// older session logs).
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name || a.spec().aliases.contains(&name))
    }

    /// The agent that wrote a parsed transcript line; `None` for a line of no known agent.
    pub fn of_line(line: &Value) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| (a.spec().recognises)(line))
    }

    /// The agent whose transcript `path` is by its file name, and the session id the name
    /// gives: a name that starts with an agent's [`Spec::file_prefix`] is that agent's or
    /// none, any other is tried with the agents that have none.
    pub fn of_transcript(path: &Path) -> Option<(Agent, String)> {
        let name = path.file_name()?.to_str()?;
        let prefix = |a: &Agent| a.spec().file_prefix;
        let own =
            Agent::ALL.into_iter().find(|a| !prefix(a).is_empty() && name.starts_with(prefix(a)));
        let mut candidates = Agent::ALL.into_iter().filter(|a| match own {
            Some(own) => *a == own,
            None => prefix(a).is_empty(),
        });
        candidates.find_map(|a| Some((a, (a.spec().session_of_file)(path)?)))
    }

    /// The agent whose hook payload `payload` is, for a hook set up for this agent: this one,
    /// or another agent that runs this one's hooks and recognises the payload as its own
    /// ([`Spec::runs_hooks_of_others`]).
    pub fn of_hook_payload(self, payload: &[u8]) -> Agent {
        if !self.spec().hooks_run_by_others {
            return self;
        }
        let Ok(payload) = crate::json::parse_json_lenient(&String::from_utf8_lossy(payload)) else {
            return self;
        };
        Agent::ALL
            .into_iter()
            .find(|a| *a != self && (a.spec().runs_hooks_of_others)(&payload))
            .unwrap_or(self)
    }

    /// The answer of a hook that adds `text` to the context on the hook `event`, as this agent
    /// reads it; `None` when there is nothing to add.
    pub fn context_answer(self, event: &str, text: &str) -> Option<String> {
        (!text.trim().is_empty()).then(|| (self.spec().context_answer)(event, text).to_string())
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Agent {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Longest session id: `session-<id>` names the digest, a memory id of at most
/// [`crate::format::MAX_ID_LEN`] bytes.
pub const MAX_SESSION_ID_LEN: usize = crate::format::MAX_ID_LEN - "session-".len();

/// Whether `id` can be a session id: at most [`MAX_SESSION_ID_LEN`] bytes of `[A-Za-z0-9._-]`,
/// without `..` (it names files).
pub fn is_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_SESSION_ID_LEN
        && !id.contains("..")
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// What the lines of one transcript read so far say about its session, for the lines that
/// follow: the agent, and the metadata last recorded (a meta event is added when it changes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fold {
    /// The agent of the first line recognised.
    pub agent: Option<Agent>,
    /// The session id the transcript records.
    pub session_id: Option<String>,
    /// When the session started, where the transcript says so apart from its lines' times.
    pub started: Option<Timestamp>,
    /// The working directory last recorded.
    pub cwd: Option<String>,
    /// The model last recorded.
    pub model: Option<String>,
    /// The permission (approval and sandbox) mode last recorded.
    pub mode: Option<String>,
    /// A message held back, by its id, while the agent may still write it again (Gemini CLI
    /// appends a changed message again under its id): released when another comes, or at the
    /// end of what is read ([`Fold::finish`]).
    pub held: Option<(String, Value)>,
    /// The ids of the messages released so far: in this read, and those an earlier read logged
    /// (the session log seeds them), so that a later copy of one adds nothing.
    pub released: std::collections::HashSet<String>,
}

/// One transcript line, folded.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// The agent that wrote it.
    pub agent: Agent,
    /// Its time, if it says.
    pub at: Option<Timestamp>,
    /// Its events, each with the line's time unless it has its own.
    pub events: Vec<TranscriptEvent>,
}

/// The entry of [`Fold::released`] that says the transcript records its messages as items (Codex's
/// `response_item` lines) besides its echoes of them (`event_msg`): the log then leaves the
/// echoes out. A transcript without it (a Codex rollout of `event_msg` lines only) is logged
/// from its echoes. Kept with the released ids, so that a later import knows it too.
pub const ITEMS: &str = "\u{0}items";

impl Fold {
    /// Whether the transcript read so far records its messages as items (see [`ITEMS`]): its
    /// echoes are then left out of the log.
    pub fn has_items(&self) -> bool {
        self.released.contains(ITEMS)
    }

    /// A fold that carries on from what an earlier read of the transcript recorded.
    pub fn resumed(
        agent: Option<Agent>,
        cwd: Option<String>,
        model: Option<String>,
        mode: Option<String>,
    ) -> Fold {
        Fold { agent, cwd, model, mode, ..Fold::default() }
    }

    /// Folds one parsed line; `None` for a line of no known agent.
    pub fn line(&mut self, line: &Value) -> Option<Line> {
        let agent = Agent::of_line(line)?;
        self.agent.get_or_insert(agent);
        let at = line.get("timestamp").and_then(Value::as_str).and_then(|t| parse_time(t).ok());
        let mut events = Vec::new();
        (agent.spec().fold)(self, line, &mut events);
        for event in &mut events {
            event.at = event.at.or(at);
        }
        Some(Line { agent, at, events })
    }

    /// The events still held at the end of what is read: the agent's last message, whole.
    pub fn finish(&mut self) -> Vec<TranscriptEvent> {
        let mut events = Vec::new();
        if let Some(agent) = self.agent {
            (agent.spec().finish)(self, &mut events);
        }
        events
    }

    /// Adds a meta event when the cwd, model or mode differs from the last recorded.
    pub(crate) fn meta(
        &mut self,
        cwd: Option<&str>,
        model: Option<&str>,
        mode: Option<String>,
        out: &mut Vec<TranscriptEvent>,
    ) {
        let mut said = Vec::new();
        if let Some(cwd) = cwd.filter(|c| self.cwd.as_deref() != Some(*c)) {
            self.cwd = Some(cwd.to_string());
            said.push(format!("cwd {cwd}"));
        }
        if let Some(model) =
            model.filter(|m| self.model.as_deref() != Some(*m) && !m.starts_with('<'))
        {
            self.model = Some(model.to_string());
            said.push(format!("model {model}"));
        }
        if let Some(mode) = mode.filter(|m| self.mode.as_ref() != Some(m)) {
            said.push(format!("permission mode {mode}"));
            self.mode = Some(mode);
        }
        if !said.is_empty() {
            out.push(TranscriptEvent::new(Kind::Meta, said.join("; ")));
        }
    }
}

/// The text of message content: a string, or the `text` of each block.
pub(crate) fn block_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

/// `path` relative to `cwd` when it is inside it, else as it is.
pub fn relative_to(cwd: Option<&str>, path: &str) -> String {
    let Some(cwd) = cwd else { return path.to_string() };
    let cwd = cwd.trim_end_matches(['/', '\\']);
    path.strip_prefix(cwd)
        .and_then(|rest| rest.strip_prefix(['/', '\\']))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
        .to_string()
}

/// The exit code a tool's output states near its start, if it does.
pub(crate) fn exit_code(text: &str) -> Option<i64> {
    let head: String = text.chars().take(400).collect();
    for marker in ["Exit code: ", "Exit code ", "exited with code "] {
        if let Some(at) = head.find(marker) {
            let digits: String = head[at + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

/// Whose a transcript is (see [`Spec::whose`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose {
    /// A session of the project.
    Project,
    /// A subagent's, not a session of its own.
    Subagent,
    /// A session of another project.
    OtherProject,
}

/// Whether `cwd` is `project` or inside it, as written or once both are resolved.
pub fn inside(cwd: &Path, project: &Path) -> bool {
    if cwd.starts_with(project) {
        return true;
    }
    match (cwd.canonicalize(), project.canonicalize()) {
        (Ok(cwd), Ok(project)) => cwd.starts_with(project),
        _ => false,
    }
}

/// Lines read at most from the top of a transcript to find its working directory.
const HEAD_LINES: usize = 8;

/// What the top of a transcript says about its session.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// The working directory it first records.
    pub cwd: Option<String>,
    /// Whether it is a subagent's transcript (see [`Spec::is_subagent`]).
    pub subagent: bool,
}

/// Reads the first lines of a transcript, until its working directory is known. Anything but
/// a regular file is an error (see [`crate::untrusted`]).
pub fn head(path: &Path) -> std::io::Result<Head> {
    use crate::json::{MAX_LINE_BYTES, parse_json_lenient, read_line_capped};
    let file = match crate::untrusted::open(path, crate::untrusted::Links::Follow) {
        Ok(Some(file)) => file,
        Ok(None) => return Err(std::io::ErrorKind::NotFound.into()),
        Err(crate::untrusted::Unreadable::Io(e)) => return Err(e),
        Err(why) => return Err(std::io::Error::other(why.to_string())),
    };
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    let mut fold = Fold::default();
    let mut head = Head::default();
    let mut lines = 0;
    while lines < HEAD_LINES
        && fold.cwd.is_none()
        && let Some(kept) = read_line_capped(&mut reader, &mut buf, MAX_LINE_BYTES)?
    {
        let text = String::from_utf8_lossy(&buf);
        if kept && text.trim().is_empty() {
            continue;
        }
        lines += 1;
        let Ok(line) = parse_json_lenient(&text) else { continue };
        if let Some(agent) = Agent::of_line(&line) {
            head.subagent |= (agent.spec().is_subagent)(&line);
        }
        fold.line(&line);
    }
    head.cwd = fold.cwd;
    Ok(head)
}

#[cfg(test)]
mod tests;
