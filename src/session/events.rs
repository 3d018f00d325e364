//! Transcript lines as session events: what one Claude Code or Codex JSONL line adds to the
//! log (prompts, assistant messages, tool calls and results, changes of cwd, model or
//! permission mode). Every text is cleaned of terminal escapes, redacted and cut to
//! [`MAX_EVENT_CHARS`].

use jiff::Timestamp;
use serde_json::Value;

use crate::capture::{
    ClaudeUserText, CodexCall, Format, block_text, claude_user_content, claude_user_text,
    clean_text, codex_added, codex_call, patch_paths, redact, relative_to,
};
use crate::format::parse_time;

/// Longest text kept for one event, in characters; the rest is cut and counted.
pub const MAX_EVENT_CHARS: usize = 8000;

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
        [
            Kind::Prompt,
            Kind::Assistant,
            Kind::ToolCall,
            Kind::ToolResult,
            Kind::Meta,
            Kind::Checkpoint,
        ]
        .into_iter()
        .find(|k| k.as_str() == name)
    }
}

/// One event read from a transcript, before it has a turn and a sequence number.
#[derive(Clone, Debug, PartialEq)]
pub struct NewEvent {
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
    /// Files a call writes.
    pub files: Vec<String>,
    /// A result's exit status: 0 success, non-zero failure.
    pub status: Option<i64>,
    /// The text: cleaned, redacted, cut.
    pub text: String,
}

/// What the lines read so far say about the session, for the lines that follow: the agent,
/// and the metadata last recorded (a meta event is added when it changes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineState {
    /// The transcript's format, once a line was recognised.
    pub format: Option<Format>,
    /// The working directory last recorded.
    pub cwd: Option<String>,
    /// The model last recorded.
    pub model: Option<String>,
    /// The permission (approval and sandbox) mode last recorded.
    pub mode: Option<String>,
    /// Secrets redacted so far, in this import.
    pub redacted: usize,
}

/// Text made fit for the log: terminal escapes removed, secrets redacted (counted in
/// `redacted`), cut to [`MAX_EVENT_CHARS`] with the number of characters left out.
pub fn log_text(text: &str, redacted: &mut usize) -> String {
    let (text, found) = redact(&clean_text(text));
    *redacted += found;
    let text = text.trim();
    match text.char_indices().nth(MAX_EVENT_CHARS) {
        None => text.to_string(),
        Some((at, _)) => {
            let left = text[at..].chars().count();
            format!("{} … [{left} more characters]", &text[..at])
        }
    }
}

impl LineState {
    /// The events of one parsed transcript line (none for a line in neither format).
    pub fn events(&mut self, line: &Value) -> Vec<NewEvent> {
        let Some(format) = Format::of_line(line) else { return Vec::new() };
        let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
        self.format.get_or_insert(format);
        let at = line.get("timestamp").and_then(Value::as_str).and_then(|t| parse_time(t).ok());
        let mut out = Vec::new();
        match format {
            Format::ClaudeCode => self.claude(kind, line, &mut out),
            Format::Codex => self.codex(kind, &line["payload"], &mut out),
        }
        for event in &mut out {
            event.at = event.at.or(at);
        }
        out
    }

    fn event(&mut self, kind: Kind, text: &str) -> NewEvent {
        NewEvent {
            kind,
            at: None,
            tool: None,
            call_id: None,
            command: None,
            files: Vec::new(),
            status: None,
            text: log_text(text, &mut self.redacted),
        }
    }

    /// A meta event when the cwd, model or mode differs from the last recorded.
    fn meta(
        &mut self,
        cwd: Option<&str>,
        model: Option<&str>,
        mode: Option<String>,
        out: &mut Vec<NewEvent>,
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
            let event = self.event(Kind::Meta, &said.join("; "));
            out.push(event);
        }
    }

    fn claude(&mut self, kind: &str, line: &Value, out: &mut Vec<NewEvent>) {
        let text = |key: &str| line.get(key).and_then(Value::as_str);
        let flag = |key: &str| line.get(key).and_then(Value::as_bool).unwrap_or(false);
        let message = &line["message"];
        let model = message["model"].as_str();
        self.meta(text("cwd"), model, text("permissionMode").map(String::from), out);
        let side = flag("isSidechain");
        let content = &message["content"];
        match kind {
            "user" => {
                for block in content.as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        let mut event =
                            self.event(Kind::ToolResult, &block_text(&block["content"]));
                        event.call_id = block["tool_use_id"].as_str().map(String::from);
                        event.status = Some(match block["is_error"].as_bool() {
                            Some(true) => exit_code(&event.text).filter(|c| *c != 0).unwrap_or(1),
                            _ => 0,
                        });
                        out.push(event);
                    }
                }
                let typed = claude_user_content(content);
                if !typed.is_empty() && !side && !flag("isMeta") && !flag("isCompactSummary") {
                    self.claude_prompt(&typed, out);
                }
            }
            "assistant" => {
                for block in content.as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("text") if !side => {
                            let text = block["text"].as_str().unwrap_or("");
                            if !text.trim().is_empty() {
                                let event = self.event(Kind::Assistant, text);
                                out.push(event);
                            }
                        }
                        Some("tool_use") => {
                            let name = block["name"].as_str().unwrap_or("tool");
                            let input = &block["input"];
                            let path = |key: &str| input[key].as_str().map(String::from);
                            let (command, files) = match name {
                                "Bash" => (input["command"].as_str().map(String::from), Vec::new()),
                                "Edit" | "Write" | "MultiEdit" => {
                                    (None, path("file_path").into_iter().collect())
                                }
                                "NotebookEdit" => {
                                    (None, path("notebook_path").into_iter().collect())
                                }
                                _ => (None, Vec::new()),
                            };
                            out.push(self.call(name, block["id"].as_str(), input, command, files));
                        }
                        _ => {}
                    }
                }
            }
            "system" | "summary" => {
                let said = text("content").or(text("summary")).unwrap_or("");
                if !said.trim().is_empty() && !said.starts_with('<') {
                    let event = self.event(Kind::Meta, said);
                    out.push(event);
                }
            }
            _ => {}
        }
    }

    /// A user message of Claude Code: a prompt, a slash command (a prompt), a `!` shell
    /// command and its output (a call and its result), or text Claude Code added (skipped).
    fn claude_prompt(&mut self, text: &str, out: &mut Vec<NewEvent>) {
        let event = match claude_user_text(text) {
            ClaudeUserText::Slash(request) => self.event(Kind::Prompt, &request),
            ClaudeUserText::Shell(command) => {
                self.call("!", None, &Value::Null, Some(command.to_string()), Vec::new())
            }
            ClaudeUserText::ShellOutput(stdout, stderr) => {
                let mut event = self.event(Kind::ToolResult, &format!("{stdout}\n{stderr}"));
                event.tool = Some("!".into());
                event
            }
            ClaudeUserText::Added => return,
            ClaudeUserText::Typed if text.trim().is_empty() => return,
            ClaudeUserText::Typed => self.event(Kind::Prompt, text),
        };
        out.push(event);
    }

    /// A tool call: its text is the command, the files, or the input as JSON.
    fn call(
        &mut self,
        tool: &str,
        id: Option<&str>,
        input: &Value,
        command: Option<String>,
        files: Vec<String>,
    ) -> NewEvent {
        let text = match (&command, files.is_empty()) {
            (Some(command), _) => command.clone(),
            (None, false) => files.join("\n"),
            (None, true) => match plan_text(input) {
                Some(plan) => plan,
                None if input.is_null() => String::new(),
                None => {
                    let (input, found) = crate::capture::redact_json(input);
                    self.redacted += found;
                    input.to_string()
                }
            },
        };
        let mut event = self.event(Kind::ToolCall, &format!("{tool} {text}"));
        event.tool = Some(tool.to_string());
        event.call_id = id.map(String::from);
        event.command = command.map(|c| log_text(&c, &mut self.redacted));
        for file in &files {
            let file = log_text(file, &mut self.redacted);
            event.files.push(relative_to(self.cwd.as_deref(), &file));
        }
        event
    }

    fn codex(&mut self, kind: &str, payload: &Value, out: &mut Vec<NewEvent>) {
        let text = |key: &str| payload[key].as_str();
        match kind {
            "session_meta" => {
                let mode = text("approval_policy").map(String::from);
                self.meta(text("cwd"), text("model"), mode, out);
            }
            "turn_context" => {
                let sandbox = payload["sandbox_policy"]["type"]
                    .as_str()
                    .or(payload["sandbox_policy"]["mode"].as_str())
                    .or(text("sandbox_policy"));
                let mode = match (text("approval_policy"), sandbox) {
                    (Some(a), Some(s)) => Some(format!("{a}, sandbox {s}")),
                    (Some(a), None) => Some(a.to_string()),
                    (None, Some(s)) => Some(format!("sandbox {s}")),
                    (None, None) => None,
                };
                self.meta(text("cwd"), text("model"), mode, out);
            }
            "compacted" => {
                let event = self.event(Kind::Meta, "the conversation was compacted");
                out.push(event);
            }
            "response_item" => self.codex_item(payload, out),
            _ => {}
        }
    }

    fn codex_item(&mut self, item: &Value, out: &mut Vec<NewEvent>) {
        let call_id = item["call_id"].as_str();
        if let Some((name, call)) = codex_call(item) {
            let event = match call {
                CodexCall::Patch { text, .. } => {
                    let mut files: Vec<String> = Vec::new();
                    for path in patch_paths(&text).map(str::trim) {
                        if !files.iter().any(|f| f == path) {
                            files.push(path.to_string());
                        }
                    }
                    self.call("apply_patch", call_id, &Value::Null, None, files)
                }
                CodexCall::Shell(command) => {
                    self.call(&name, call_id, &Value::Null, Some(command), Vec::new())
                }
                CodexCall::Other(args) => self.call(&name, call_id, &args, None, Vec::new()),
            };
            out.push(event);
            return;
        }
        match item["type"].as_str().unwrap_or("") {
            "message" => {
                let text = block_text(&item["content"]);
                match item["role"].as_str() {
                    Some("user") if !text.trim().is_empty() && !codex_added(&text) => {
                        let event = self.event(Kind::Prompt, &text);
                        out.push(event);
                    }
                    Some("assistant") if !text.trim().is_empty() => {
                        let event = self.event(Kind::Assistant, &text);
                        out.push(event);
                    }
                    _ => {}
                }
            }
            "function_call_output" | "custom_tool_call_output" => {
                let (text, status) = codex_output(&item["output"]);
                let mut event = self.event(Kind::ToolResult, &text);
                event.call_id = call_id.map(String::from);
                event.status = status;
                out.push(event);
            }
            _ => {}
        }
    }
}

/// The tools whose input is the agent's plan (Claude Code's todo list, Codex's plan).
pub const PLAN_TOOLS: [&str; 2] = ["TodoWrite", "update_plan"];

/// A plan as Markdown task lines (`- [x]` done, `- [>]` in progress, `- [ ]` to do), from the
/// input of a [`PLAN_TOOLS`] call: `todos` of `{content, status}` or `plan` of `{step, status}`.
fn plan_text(input: &Value) -> Option<String> {
    let items = input["todos"].as_array().or(input["plan"].as_array())?;
    let lines: Vec<String> = items
        .iter()
        .filter_map(|item| {
            let text = item["content"].as_str().or(item["step"].as_str())?;
            let mark = match item["status"].as_str() {
                Some("completed") => "x",
                Some("in_progress") => ">",
                _ => " ",
            };
            Some(format!("- [{mark}] {}", text.trim()))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// A Codex tool output and its exit status: JSON with `output` and `metadata.exit_code`, or
/// text that starts with `Exit code: N` (or says `Process exited with code N`).
fn codex_output(output: &Value) -> (String, Option<i64>) {
    let raw = match output {
        Value::String(s) => s.clone(),
        Value::Object(_) => {
            output["content"].as_str().map_or_else(|| output.to_string(), String::from)
        }
        other => block_text(other),
    };
    if let Ok(value) = serde_json::from_str::<Value>(&raw)
        && let Some(text) = value["output"].as_str()
    {
        return (text.to_string(), value["metadata"]["exit_code"].as_i64());
    }
    let status = exit_code(&raw);
    (raw, status)
}

/// The exit code a tool's output states near its start, if it does.
fn exit_code(text: &str) -> Option<i64> {
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
