//! Transcript lines as session events: what one line adds to the log (prompts, assistant
//! messages, tool calls and results, changes of cwd, model or permission mode), as its agent's
//! reader (`crate::agent`) folds it. Every text is cleaned of terminal escapes, redacted and
//! cut to [`MAX_EVENT_CHARS`].

use serde_json::Value;

use crate::agent::{Fold, TranscriptEvent, relative_to};
use crate::capture::{clean_text, redact, redact_json};

/// Longest text kept for one event, in characters; the rest is cut and counted.
pub const MAX_EVENT_CHARS: usize = 8000;

pub use crate::agent::Kind;

/// One event read from a transcript, made fit for the log (its texts cleaned, redacted and
/// cut; its files relative to the cwd; no input, no echo), before it has a turn and a sequence
/// number.
pub type NewEvent = TranscriptEvent;

/// What the lines read so far say about the session, for the lines that follow: the agent's
/// reader, and the secrets redacted so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineState {
    /// The agent's reader, with the metadata last recorded.
    pub fold: Fold,
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
    /// The events of one parsed transcript line, read by its agent's reader (none for a line
    /// of no known agent, and none for an agent's echoes of what it also records as items; a
    /// transcript of echoes only is logged from them, see [`crate::agent::ITEMS`]).
    pub fn events(&mut self, line: &Value) -> Vec<NewEvent> {
        let Some(folded) = self.fold.line(line) else { return Vec::new() };
        let items = self.fold.has_items();
        folded.events.into_iter().filter(|e| !e.echo || !items).map(|e| self.logged(e)).collect()
    }

    /// The events still held at the end of what is read (see `agent::Fold::finish`).
    pub fn finish(&mut self) -> Vec<NewEvent> {
        let held = self.fold.finish();
        let items = self.fold.has_items();
        held.into_iter().filter(|e| !e.echo || !items).map(|e| self.logged(e)).collect()
    }

    /// An event as the log keeps it: every text cleaned, redacted and cut (see [`log_text`]),
    /// a call's text made from its command, its files or its input, files relative to the cwd.
    fn logged(&mut self, event: TranscriptEvent) -> NewEvent {
        let text = match event.kind {
            Kind::ToolCall => {
                let said = match (&event.command, event.files.is_empty()) {
                    (Some(command), _) => command.clone(),
                    (None, false) => event.files.join("\n"),
                    (None, true) => match plan_text(&event.input) {
                        Some(plan) => plan,
                        None if event.input.is_null() => String::new(),
                        None => {
                            let (input, found) = redact_json(&event.input);
                            self.redacted += found;
                            input.to_string()
                        }
                    },
                };
                format!("{} {said}", event.tool.as_deref().unwrap_or("tool"))
            }
            _ => event.text,
        };
        let redacted = &mut self.redacted;
        let files = event
            .files
            .iter()
            .map(|file| relative_to(self.fold.cwd.as_deref(), &log_text(file, redacted)))
            .collect();
        TranscriptEvent {
            command: event.command.map(|c| log_text(&c, &mut *redacted)),
            files,
            text: log_text(&text, redacted),
            input: serde_json::Value::Null,
            ..event
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
