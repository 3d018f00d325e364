//! GitHub Copilot CLI: sessions `~/.copilot/session-state/<session id>/events.jsonl` (the
//! folder moved by `COPILOT_HOME`), one event per line (`{"type": "user.message", "data":
//! {...}, "id", "parentId", "timestamp"}`), hooks answered with a top-level
//! `additionalContext`.
//!
//! Copilot also runs the hooks of a trusted repository's `.claude/settings.json`: their
//! payloads are Claude-shaped (`hook_event_name`, `session_id`, `cwd`), told apart by an ISO
//! `timestamp`, no `permission_mode`, and a `transcript_path` (on `Stop` only) under Copilot's
//! session state ([`Spec::runs_hooks_of_others`]). mem's own setup writes Copilot's hooks with
//! the same event names, so that Copilot passes the same payloads to both.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    Events, Fold, Home, Kind, Missed, Spec, Tools, TranscriptEvent, Whose, inside, is_session_id,
};
use crate::format::parse_time;

/// GitHub Copilot CLI.
pub const SPEC: Spec = Spec {
    name: "copilot",
    title: "GitHub Copilot CLI",
    aliases: &[],
    recognises,
    fold,
    finish: |_, _| {},
    file_prefix: EVENTS,
    session_of_file,
    home: Home { var: "COPILOT_HOME", under_var: None, default: ".copilot" },
    config: None,
    events: Events {
        start: "SessionStart",
        prompt: "UserPromptSubmit",
        turn_end: "Stop",
        session_end: Some("SessionEnd"),
    },
    // A resumed session's messages hold the prompts' context (`transformedContent`), and the
    // start's context is sent as a message of its own.
    resume_keeps: &[],
    clean_prompt: str::to_string,
    is_subagent: |_| false,
    whose,
    // Copilot reads a top-level `additionalContext` and drops the nested form.
    context_answer: |_, text| json!({ "additionalContext": text }),
    transcript_folders: |home, _| {
        let state = home.join(STATE);
        if state.is_dir() { vec![state] } else { Vec::new() }
    },
    widen_folder: |_, _| None,
    find_transcript,
    stored: None,
    subagents_folder: None,
    missed_because,
    memory: None,
    hooks_run_by_others: false,
    runs_hooks_of_others: is_own_payload,
    records_hook: Some(records_hook),
};

/// The folder of the sessions' folders, in Copilot's home.
const STATE: &str = "session-state";

/// The name of a session's event file.
const EVENTS: &str = "events.jsonl";

/// Whether a hook payload that another agent's settings passed (Copilot runs a trusted
/// repository's `.claude/settings.json` hooks) is Copilot's: its transcript is one of
/// Copilot's sessions, or, where it names none, it has the ISO `timestamp` Copilot adds and
/// none of the permission mode that other agent sends.
fn is_own_payload(payload: &Value) -> bool {
    match payload.get("transcript_path") {
        Some(Value::String(path)) => {
            let path = Path::new(path);
            let in_state = path
                .parent()
                .and_then(Path::parent)
                .and_then(Path::file_name)
                .is_some_and(|n| n == STATE);
            in_state && path.file_name().is_some_and(|n| n == EVENTS)
        }
        Some(_) => false,
        None => {
            payload.get("timestamp").is_some_and(Value::is_string)
                && payload.get("permission_mode").is_none()
        }
    }
}

/// Whether a line is one of Copilot's events: a dotted `type`, a `data` object, an `id` and a
/// `parentId` (null on the first).
fn recognises(line: &Value) -> bool {
    line.get("type").and_then(Value::as_str).is_some_and(|t| t.contains('.'))
        && line.get("data").is_some_and(Value::is_object)
        && line.get("id").is_some_and(Value::is_string)
        && line.get("parentId").is_some()
}

/// `session-state/<session id>/events.jsonl` gives the folder's name.
fn session_of_file(path: &Path) -> Option<String> {
    if path.file_name()? != EVENTS {
        return None;
    }
    let id = path.parent()?.file_name()?.to_str()?;
    is_session_id(id).then(|| id.to_string())
}

/// The event file of session `session_id` when Copilot keeps the session's folder (`SessionEnd`
/// and `SessionStart` payloads name none); the file may not be written yet (see
/// [`records_hook`]).
fn find_transcript(home: &Path, session_id: &str) -> Option<PathBuf> {
    if !is_session_id(session_id) {
        return None;
    }
    let folder = home.join(STATE).join(session_id);
    folder.is_dir().then(|| folder.join(EVENTS))
}

/// Whether the end of an event file (`tail`) records the hook call of `payload`: Copilot
/// writes its events behind its hooks (about 0.1 s after a `Stop` hook started, in runs of
/// 1.0.102; the file of a new session may not exist yet when its first hooks run), and
/// records each call as a `hook.start` line whose input carries the payload's time in
/// milliseconds.
fn records_hook(payload: &Value, tail: &str) -> bool {
    let Some(at) = payload["timestamp"].as_str().and_then(|t| parse_time(t).ok()) else {
        return true;
    };
    let time = format!("\"timestamp\":{}", at.as_millisecond());
    tail.lines().any(|line| line.contains("\"hook.start\"") && line.contains(&time))
}

/// A session of the project when the folder its first event records is the project or inside
/// it.
fn whose(path: &Path, project: &Path) -> std::io::Result<Whose> {
    Ok(match super::head(path)?.cwd {
        Some(cwd) if inside(Path::new(&cwd), project) => Whose::Project,
        _ => Whose::OtherProject,
    })
}

/// Copilot runs a repository's hooks only in a folder the user trusts.
fn missed_because(missed: &Missed) -> Option<String> {
    missed.untrusted.then(|| {
        "GitHub Copilot CLI runs a repository's hooks only in a folder the user trusted (it asks \
         on first start; `copilot --trust-folder` trusts it for one prompt)"
            .to_string()
    })
}

/// The events of one line: the session's start (id, folder, model), the user's prompt as
/// typed (`content`; what hooks added is in `transformedContent`), the assistant's text and
/// tool requests, and each tool's result.
fn fold(f: &mut Fold, line: &Value, out: &mut Vec<TranscriptEvent>) {
    let data = &line["data"];
    let text = |key: &str| data[key].as_str().filter(|t| !t.trim().is_empty());
    match line["type"].as_str().unwrap_or("") {
        "session.start" | "session.resume" => {
            if let Some(id) = text("sessionId") {
                f.session_id.get_or_insert_with(|| id.to_string());
            }
            if let Some(started) = text("startTime").and_then(|t| parse_time(t).ok()) {
                f.started.get_or_insert(started);
            }
            let model = text("selectedModel");
            f.meta(data["context"]["cwd"].as_str(), model, None, out);
        }
        "session.model_change" => f.meta(None, text("newModel"), None, out),
        "user.message" => {
            if let Some(prompt) = text("content") {
                out.push(TranscriptEvent::new(Kind::Prompt, prompt));
            }
        }
        "assistant.message" => assistant(f, data, out),
        "tool.execution_complete" => {
            let status = data["shellExecution"]["exitCode"]
                .as_i64()
                .or_else(|| data["success"].as_bool().map(|ok| i64::from(!ok)));
            let result = &data["result"];
            let said = result["content"]
                .as_str()
                .or(data["error"]["message"].as_str())
                .map(String::from)
                .unwrap_or_else(
                    || if result.is_null() { String::new() } else { result.to_string() },
                );
            out.push(TranscriptEvent::result(data["toolCallId"].as_str(), said, status));
        }
        _ => {}
    }
}

/// Copilot's tools that run a command or write a file.
const TOOLS: Tools = Tools {
    shell: &["bash", "powershell"],
    command: "command",
    writers: &["create", "edit"],
    path: "path",
};

/// A message of the assistant: its model, its text, and each tool it asks for.
fn assistant(f: &mut Fold, data: &Value, out: &mut Vec<TranscriptEvent>) {
    f.meta(None, data["model"].as_str(), None, out);
    if let Some(said) = data["content"].as_str().filter(|t| !t.trim().is_empty()) {
        out.push(TranscriptEvent::new(Kind::Assistant, said));
    }
    for request in data["toolRequests"].as_array().into_iter().flatten() {
        let name = request["name"].as_str().unwrap_or("tool");
        let id = request["toolCallId"].as_str();
        out.push(TranscriptEvent::call_of(&TOOLS, name, id, &request["arguments"]));
    }
}
