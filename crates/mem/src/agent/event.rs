//! The events an agent's transcript line folds into: raw (as the agent wrote them), before
//! the session log cleans, redacts and cuts them and the digest picks what it lists.

use jiff::Timestamp;
use serde_json::Value;

/// The tool name of a shell command the user ran themselves (Claude Code's `!`), not the
/// assistant.
pub const USER_SHELL: &str = "!";

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A prompt the user typed: it starts a turn.
    Prompt,
    /// A message of the assistant.
    Assistant,
    /// A tool the assistant called.
    ToolCall,
    /// What a tool call returned.
    ToolResult,
    /// The session's cwd, model or permission mode, when it changes.
    Meta,
    /// A workspace checkpoint taken before the turn's prompt.
    Checkpoint,
}

impl Kind {
    /// Every kind.
    const ALL: [Kind; 6] = [
        Kind::Prompt,
        Kind::Assistant,
        Kind::ToolCall,
        Kind::ToolResult,
        Kind::Meta,
        Kind::Checkpoint,
    ];

    /// Its name in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Assistant => "assistant",
            Kind::ToolCall => "tool_call",
            Kind::ToolResult => "tool_result",
            Kind::Meta => "meta",
            Kind::Checkpoint => "checkpoint",
        }
    }

    /// The kind named `name` in the database.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// Which of an agent's tools run a shell command and which write a file, and the arguments
/// that hold the command and the file.
pub(crate) struct Tools {
    /// The tools that run a shell command.
    pub shell: &'static [&'static str],
    /// The argument that holds the command.
    pub command: &'static str,
    /// The tools that write a file.
    pub writers: &'static [&'static str],
    /// The argument that names the file.
    pub path: &'static str,
}

/// One event of a transcript line, as the agent wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct TranscriptEvent {
    /// What it records.
    pub kind: Kind,
    /// When it happened, if the line says.
    pub at: Option<Timestamp>,
    /// The tool called, for calls and results.
    pub tool: Option<String>,
    /// The id that ties a result to its call.
    pub call_id: Option<String>,
    /// The shell command a call runs.
    pub command: Option<String>,
    /// Files a call writes, as the agent wrote them.
    pub files: Vec<String>,
    /// A call's input, when it is neither a command nor files.
    pub input: Value,
    /// A result's exit status: 0 success, non-zero failure.
    pub status: Option<i64>,
    /// The text, raw (a call's is made from its command, files or input by the log).
    pub text: String,
    /// The agent's second record of a message it also records as an item (Codex's
    /// `event_msg`): the digest prefers these for the user's requests, the log leaves them out.
    pub echo: bool,
}

impl TranscriptEvent {
    /// An event of `kind` saying `text`.
    pub fn new(kind: Kind, text: impl Into<String>) -> TranscriptEvent {
        TranscriptEvent {
            kind,
            at: None,
            tool: None,
            call_id: None,
            command: None,
            files: Vec::new(),
            input: Value::Null,
            status: None,
            text: text.into(),
            echo: false,
        }
    }

    /// A call of `tool` (with the id `call_id`) that runs `command`, writes `files`, or takes
    /// `input`.
    pub fn call(
        tool: &str,
        call_id: Option<&str>,
        input: &Value,
        command: Option<String>,
        files: Vec<String>,
    ) -> TranscriptEvent {
        TranscriptEvent {
            tool: Some(tool.to_string()),
            call_id: call_id.map(String::from),
            input: input.clone(),
            command,
            files,
            ..TranscriptEvent::new(Kind::ToolCall, "")
        }
    }

    /// The result of the call `call_id` (or of `tool`), saying `text`, with exit `status`.
    pub fn result(
        call_id: Option<&str>,
        text: impl Into<String>,
        status: Option<i64>,
    ) -> TranscriptEvent {
        TranscriptEvent {
            call_id: call_id.map(String::from),
            status,
            ..TranscriptEvent::new(Kind::ToolResult, text)
        }
    }

    /// The call `id` of the tool `name` with the arguments `args`, read as `tools` says: the
    /// command it runs, or the file it writes, else its arguments as they are.
    pub(crate) fn call_of(
        tools: &Tools,
        name: &str,
        id: Option<&str>,
        args: &Value,
    ) -> TranscriptEvent {
        let arg = |key: &str| args[key].as_str().map(String::from);
        let command = tools.shell.contains(&name).then(|| arg(tools.command)).flatten();
        let writes = tools.writers.contains(&name) && command.is_none();
        let files: Vec<String> = writes.then(|| arg(tools.path)).flatten().into_iter().collect();
        let input = if command.is_none() && files.is_empty() { args } else { &Value::Null };
        TranscriptEvent::call(name, id, input, command, files)
    }

    /// This event as an echo (see [`TranscriptEvent::echo`]).
    pub fn echoed(self) -> TranscriptEvent {
        TranscriptEvent { echo: true, ..self }
    }
}
