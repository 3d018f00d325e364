//! Gemini CLI: transcripts `~/.gemini/tmp/<project short name>/chats/session-<date>-<first 8 of
//! the id>.jsonl` (the short names in `~/.gemini/projects.json`): a first line
//! `{sessionId, projectHash, startTime, …}`, then messages `{id, timestamp, type: user|gemini,
//! content, toolCalls?}` and `{"$set": {…}}` updates. A message that changes is appended again
//! under the same id: the last copy wins. Hooks print `hookSpecificOutput.additionalContext`,
//! which Gemini wraps in `<hook_context>` and puts into the prompt it records.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::memory::{self, MemorySpec, NativeRead, Sources};
use super::{Events, Fold, Home, Kind, Spec, Tools, TranscriptEvent, block_text, is_session_id};
use crate::format::parse_time;
use crate::untrusted::{self, Links};

/// Gemini CLI.
pub const SPEC: Spec = Spec {
    name: "gemini",
    title: "Gemini CLI",
    aliases: &[],
    recognises,
    fold,
    finish,
    file_prefix: "session-",
    session_of_file,
    is_subagent: |_| false,
    whose: |path, project| {
        // A chats folder names the folder its sessions were started in.
        let started = path.parent().and_then(project_of);
        Ok(match started {
            Some(started) if !super::inside(&started, project) => super::Whose::OtherProject,
            _ => super::Whose::Project,
        })
    },
    home: Home { var: "GEMINI_CLI_HOME", under_var: Some(".gemini"), default: ".gemini" },
    config: None,
    // Gemini CLI does not wait for `SessionEnd` hooks: the turn's end is the capture point too.
    events: Events {
        start: "SessionStart",
        prompt: "BeforeAgent",
        turn_end: "AfterAgent",
        session_end: Some("SessionEnd"),
    },
    // Gemini CLI 0.61.0 rebuilds a resumed history without the user messages that begin with
    // `<hook_context>`: the SessionStart context (its own message, or put before the first
    // prompt in `-p` mode) is gone; a BeforeAgent context, put after the prompt, stays.
    // (Compression cannot be seen: its PreCompress hook fires before every turn, compressed or
    // not.)
    resume_keeps: &["BeforeAgent"],
    clean_prompt: without_hook_context,
    context_answer: |_, text| serde_json::json!({ "hookSpecificOutput": { "additionalContext": text } }),
    transcript_folders: folders,
    widen_folder: |_, _| None,
    find_transcript: |_, _| None,
    stored: None,
    subagents_folder: None,
    missed_because: |_| None,
    memory: Some(MemorySpec {
        layer: "gemini",
        label: "gemini memory",
        personal: &["global"],
        read: read_memories,
    }),
    hooks_run_by_others: false,
    runs_hooks_of_others: |_| false,
    records_hook: None,
};

/// Whether a line is a Gemini CLI chat record: its first line (`sessionId` and
/// `projectHash`), a `$set` or `$rewindTo` record, or a message (`id`, a `type`, no `message`).
fn recognises(line: &Value) -> bool {
    let text = |key: &str| line.get(key).is_some_and(Value::is_string);
    (text("sessionId") && text("projectHash"))
        || line.get("$set").is_some_and(Value::is_object)
        || text("$rewindTo")
        || (text("id")
            && line.get("message").is_none()
            && matches!(
                line.get("type").and_then(Value::as_str),
                Some("user" | "gemini" | "info" | "error" | "warning")
            ))
}

/// `session-<date>-<first 8 characters of the id>.jsonl`; the whole id is read from the file's
/// first line, which must start with those 8.
fn session_of_file(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let short = name.strip_suffix(".jsonl")?.rsplit('-').next()?;
    if short.len() != 8 || !short.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut first = String::new();
    let file = untrusted::open(path, Links::Follow).ok()??;
    std::io::BufReader::new(std::io::Read::take(file, 64 * 1024)).read_line(&mut first).ok()?;
    let line: Value = serde_json::from_str(first.trim()).ok()?;
    let id = line["sessionId"].as_str()?;
    (id.starts_with(short) && is_session_id(id)).then(|| id.to_string())
}

/// The prompt as the user typed it: the `<hook_context>` blocks Gemini adds in front of it (the
/// context hooks gave) taken out.
pub fn without_hook_context(text: &str) -> String {
    const OPEN: &str = "<hook_context>";
    const CLOSE: &str = "</hook_context>";
    let mut rest = text.trim_start();
    while let Some(after) = rest.strip_prefix(OPEN) {
        match after.find(CLOSE) {
            Some(end) => rest = after[end + CLOSE.len()..].trim_start(),
            None => break,
        }
    }
    rest.to_string()
}

/// The events of one record: the session's id and start from the first line; each message
/// once, in its last copy (a message is held until a record with another id comes, or the
/// transcript ends: [`finish`]); the cwd from the workspace Gemini states in its first
/// message; a rewind as a meta event. A `$set` of the messages states the history again (a
/// resume repeats every message so far): it adds none.
fn fold(f: &mut Fold, line: &Value, out: &mut Vec<TranscriptEvent>) {
    if let Some(id) = line["sessionId"].as_str() {
        if f.session_id.is_none() {
            f.session_id = Some(id.to_string());
        }
        if let Some(at) = line["startTime"].as_str().and_then(|t| parse_time(t).ok()) {
            f.started = Some(f.started.map_or(at, |s| s.min(at)));
        }
        return;
    }
    if let Some(to) = line["$rewindTo"].as_str() {
        release(f, out);
        out.push(TranscriptEvent::new(
            Kind::Meta,
            format!("the conversation was rewound to message {to}"),
        ));
        return;
    }
    if let Some(messages) = line["$set"]["messages"].as_array() {
        // The history set again (at the start, on a resume, after a compression): messages
        // recorded before, not new ones; only the session context says something (the cwd).
        release(f, out);
        for message in messages.iter().filter(|m| m["type"] == "user") {
            if let Some(workspace) = workspace(&message["content"]) {
                let start = out.len();
                f.meta(Some(&workspace), None, None, out);
                let at = message["timestamp"].as_str().and_then(|t| parse_time(t).ok());
                out[start..].iter_mut().for_each(|e| e.at = at);
            }
        }
        return;
    }
    if line.get("$set").is_none() {
        hold(f, line, out);
    }
}

/// Holds `message`, releasing the message held before unless it is an earlier copy of it.
fn hold(f: &mut Fold, message: &Value, out: &mut Vec<TranscriptEvent>) {
    let Some(id) = message["id"].as_str() else { return };
    if f.held.as_ref().is_some_and(|(held, _)| held != id) {
        release(f, out);
    }
    f.held = Some((id.to_string(), message.clone()));
}

/// At the end of what is read: the message held is released.
fn finish(f: &mut Fold, out: &mut Vec<TranscriptEvent>) {
    release(f, out);
}

/// The events of the message held, unless an earlier copy was already released in this read.
fn release(f: &mut Fold, out: &mut Vec<TranscriptEvent>) {
    let Some((id, message)) = f.held.take() else { return };
    if !f.released.insert(id) {
        return;
    }
    let start = out.len();
    match message["type"].as_str() {
        Some("user") => user(f, &message["content"], out),
        Some("gemini") => gemini(f, &message, out),
        _ => {}
    }
    let at = message["timestamp"].as_str().and_then(|t| parse_time(t).ok());
    for event in &mut out[start..] {
        event.at = event.at.or(at);
    }
}

/// The text of a user message, without the hook context.
fn user_text(content: &Value) -> String {
    match content {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .map(without_hook_context)
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        other => without_hook_context(&block_text(other)),
    }
}

/// The first workspace folder of the session context Gemini CLI puts in a user message: the
/// folder the session was started in.
fn workspace(content: &Value) -> Option<String> {
    let text = user_text(content);
    let context = text.trim_start().strip_prefix("<session_context>")?;
    let line = context.lines().skip_while(|l| !l.contains("Workspace Directories:")).nth(1)?;
    line.trim().strip_prefix("- ").map(String::from)
}

/// A user message: the prompt without the hook context, or the session context Gemini adds
/// (its workspace is the session's cwd); tool results come with their calls instead.
fn user(f: &mut Fold, content: &Value, out: &mut Vec<TranscriptEvent>) {
    if let Some(workspace) = workspace(content) {
        f.meta(Some(&workspace), None, None, out);
        return;
    }
    let text = user_text(content);
    if !text.trim_start().starts_with("<session_context>") && !text.trim().is_empty() {
        out.push(TranscriptEvent::new(Kind::Prompt, text));
    }
}

/// Gemini CLI's tools that run a command or write a file.
const TOOLS: Tools = Tools {
    shell: &["run_shell_command"],
    command: "command",
    writers: &["write_file", "replace", "edit"],
    path: "file_path",
};

/// A message of the model: the model, its text, and each tool call with its result.
fn gemini(f: &mut Fold, message: &Value, out: &mut Vec<TranscriptEvent>) {
    f.meta(None, message["model"].as_str(), None, out);
    let said = block_text(&message["content"]);
    if !said.trim().is_empty() {
        out.push(TranscriptEvent::new(Kind::Assistant, said));
    }
    for call in message["toolCalls"].as_array().into_iter().flatten() {
        let name = call["name"].as_str().unwrap_or("tool");
        let id = call["id"].as_str();
        let at = call["timestamp"].as_str().and_then(|t| parse_time(t).ok());
        out.push(TranscriptEvent::call_of(&TOOLS, name, id, &call["args"]));
        let Some(results) = call["result"].as_array() else { continue };
        let said: Vec<String> = results.iter().filter_map(result_text).collect();
        let status = match call["status"].as_str() {
            Some("success") => Some(0),
            Some("error" | "cancelled") => Some(1),
            _ => None,
        };
        out.push(TranscriptEvent { at, ..TranscriptEvent::result(id, said.join("\n"), status) });
    }
}

/// What one part of a tool's result says: its `functionResponse`'s output or error.
fn result_text(part: &Value) -> Option<String> {
    let response = &part["functionResponse"]["response"];
    let text = response["output"].as_str().or(response["error"].as_str());
    let text =
        text.map(String::from).or_else(|| (!response.is_null()).then(|| response.to_string()))?;
    let inner = text.trim();
    let inner = inner
        .strip_prefix("<untrusted_context>")
        .and_then(|t| t.strip_suffix("</untrusted_context>"))
        .unwrap_or(inner);
    Some(inner.trim().to_string())
}

/// The largest `projects.json` read (Gemini CLI's map of project folders to short names).
const MAX_PROJECTS_BYTES: u64 = 16 << 20;

/// The folders where Gemini CLI keeps the chats of sessions started in `project` or in any
/// folder inside it: `<gemini home>/tmp/<short name>/chats` for each such folder that
/// `<gemini home>/projects.json` names.
pub fn folders(gemini_home: &Path, project: &Path) -> Vec<PathBuf> {
    let file = gemini_home.join("projects.json");
    let Ok(Some(text)) = untrusted::read_text(&file, MAX_PROJECTS_BYTES, Links::Follow) else {
        return Vec::new();
    };
    let Ok(map) = serde_json::from_str::<Value>(&text) else { return Vec::new() };
    let mut found: Vec<PathBuf> = map["projects"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(path, _)| super::inside(Path::new(path), project))
        .filter_map(|(_, short)| short.as_str())
        .filter(|short| !short.is_empty() && !short.contains(['/', '\\']) && *short != "..")
        .map(|short| gemini_home.join("tmp").join(short).join("chats"))
        .filter(|dir| dir.is_dir())
        .collect();
    found.sort();
    found
}

/// The folder a chats folder's sessions were started in: `<short name>/.project_root`.
pub fn project_of(chats: &Path) -> Option<PathBuf> {
    let file = chats.parent()?.join(".project_root");
    let text = untrusted::read_text(&file, 64 * 1024, Links::Follow).ok()??;
    let path = text.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// The heading under which older Gemini CLI versions' `save_memory` tool appended facts to the
/// global `GEMINI.md`; 0.61.0 has no such tool and lets the model edit the file.
pub const ADDED_MEMORIES: &str = "## Gemini Added Memories";

/// Gemini CLI's memories: the list items of the global `<home>/GEMINI.md` (only those under
/// [`ADDED_MEMORIES`] when it has that heading; kind `global`), and the private memory folder of
/// the project, `<home>/tmp/<short name>/memory/` (its `MEMORY.md` index and the notes beside
/// it; the short name from `projects.json`). A project's own `GEMINI.md` is a file of the
/// clone, not read here.
fn read_memories(sources: &Sources) -> NativeRead {
    let mut out = NativeRead::default();
    memory::read_lines(&sources.home.join("GEMINI.md"), "gemini", Some(ADDED_MEMORIES), &mut out);
    for m in &mut out.memories {
        m.kind = Some("global".into());
    }
    if let Some(project) = sources.project {
        for chats in folders(sources.home, project) {
            let Some(short) = chats.parent() else { continue };
            if project_of(&chats).is_some_and(|p| p == project) {
                memory::read_folder(&short.join("memory"), "gemini", &mut out);
            }
        }
    }
    out
}
