//! OpenCode: sessions kept in a SQLite store, `$XDG_DATA_HOME/opencode/opencode.db` (tables
//! `session`, `message` and `part`, each row's fields but its ids as JSON in `data`; times in
//! epoch milliseconds; ids `ses_`, `msg_`, `prt_` that sort in the order written). mem reads a
//! session into transcript lines of its own: one `opencode.session` line, then one
//! `opencode.message` line per message with its parts. Its hooks are a plugin mem's setup
//! writes (`.opencode/plugins/mem.js`), which runs mem's commands with a payload named by
//! OpenCode's own events and reads the answer as Claude Code's.

use std::collections::HashMap;
use std::path::Path;

use jiff::Timestamp;
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{Value, json};

use super::{
    Events, Fold, Home, Kind, Lines, Spec, Stored, StoredSessions, TranscriptEvent, Whose,
    exit_code, inside, is_session_id,
};

/// OpenCode.
pub const SPEC: Spec = Spec {
    name: "opencode",
    title: "OpenCode",
    aliases: &[],
    recognises: |line| {
        matches!(line["type"].as_str(), Some(SESSION | MESSAGE)) && line["id"].is_string()
    },
    fold,
    finish: |_, _| {},
    file_prefix: "ses_",
    session_of_file: |path| {
        let id = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
        (id.starts_with("ses_") && is_session_id(id)).then(|| id.to_string())
    },
    home: Home { var: "XDG_DATA_HOME", under_var: Some("opencode"), default: DATA },
    config: Some(Home { var: "XDG_CONFIG_HOME", under_var: Some("opencode"), default: CONFIG }),
    // mem's plugin sends these, under OpenCode's names for the moments.
    events: Events {
        start: "session.created",
        prompt: "chat.message",
        turn_end: "session.idle",
        session_end: None,
    },
    // The plugin adds the prompt's memories as a part of the user's message, which OpenCode
    // stores and sends again with the history; the session's, to the system prompt of each
    // request of the process, which a new process (`--continue`) must be given again.
    resume_keeps: &["chat.message"],
    clean_prompt: str::to_string,
    is_subagent: |line| line["type"] == SESSION && line["parent_id"].is_string(),
    whose: |_, _| Ok(Whose::Project),
    context_answer: |event, text| json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }),
    transcript_folders: |_, _| Vec::new(),
    widen_folder: |_, _| None,
    find_transcript: |_, _| None,
    stored: Some(Stored { file: |home| home.join(DB), sessions, transcript }),
    subagents_folder: None,
    missed_because: |_| None,
    memory: None,
    hooks_run_by_others: false,
    runs_hooks_of_others: |_| false,
    records_hook: None,
};

/// OpenCode's data folder in the user's home, when `XDG_DATA_HOME` is unset.
const DATA: &str = ".local/share/opencode";

/// OpenCode's configuration folder in the user's home, when `XDG_CONFIG_HOME` is unset.
const CONFIG: &str = ".config/opencode";

/// The store, in the data folder.
const DB: &str = "opencode.db";

/// The `type` of the first line of a session's transcript.
const SESSION: &str = "opencode.session";

/// The `type` of a message's line.
const MESSAGE: &str = "opencode.message";

/// How long a read waits for OpenCode's writes to the store.
const BUSY_MS: u64 = 2_000;

/// The store of the data folder `home`, opened to read; `None` when there is none.
fn open(home: &Path) -> std::io::Result<Option<Connection>> {
    let file = home.join(DB);
    if !file.is_file() {
        return Ok(None);
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(&file, flags).map_err(std::io::Error::other)?;
    conn.busy_timeout(std::time::Duration::from_millis(BUSY_MS)).map_err(std::io::Error::other)?;
    Ok(Some(conn))
}

/// The sessions of the store whose folder is `project` or inside it (a child session, which
/// OpenCode's `task` tool starts, is a subagent's), and those of other projects.
fn sessions(home: &Path, project: &Path) -> std::io::Result<StoredSessions> {
    let Some(conn) = open(home)? else { return Ok(Vec::new()) };
    let sql = |e: rusqlite::Error| std::io::Error::other(e);
    let mut query =
        conn.prepare("SELECT id, directory, parent_id FROM session ORDER BY id").map_err(sql)?;
    let rows = query
        .query_map([], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })
        .map_err(sql)?;
    let mut found = Vec::new();
    for row in rows {
        let (id, directory, parent) = row.map_err(sql)?;
        let whose = match (inside(Path::new(&directory), project), parent) {
            (false, _) => Whose::OtherProject,
            (true, Some(_)) => Whose::Subagent,
            (true, None) => Whose::Project,
        };
        found.push((id, whose));
    }
    Ok(found)
}

/// The transcript lines of session `id`: the session, then each message with its parts, up to
/// the first answer not finished yet (what follows may still change).
fn transcript(home: &Path, id: &str) -> std::io::Result<Option<Lines>> {
    let Some(conn) = open(home)? else { return Ok(None) };
    let sql = |e: rusqlite::Error| std::io::Error::other(e);
    let session = conn
        .query_row(
            "SELECT directory, parent_id, version, time_created FROM session WHERE id = ?1",
            [id],
            |row| {
                Ok(json!({
                    "type": SESSION,
                    "id": id,
                    "directory": row.get::<_, String>(0)?,
                    "parent_id": row.get::<_, Option<String>>(1)?,
                    "version": row.get::<_, Option<String>>(2)?,
                    "timestamp": time(row.get::<_, i64>(3)?),
                }))
            },
        )
        .optional()
        .map_err(sql)?;
    let Some(session) = session else { return Ok(None) };
    let mut lines = vec![session];
    let mut parts = conn
        .prepare("SELECT message_id, id, data FROM part WHERE session_id = ?1 ORDER BY id")
        .map_err(sql)?;
    // Each message's parts, in the order written (parts are read once, not per message).
    let mut by_message: HashMap<String, Vec<Value>> = HashMap::new();
    let rows = parts
        .query_map([id], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
        })
        .map_err(sql)?;
    for row in rows {
        let (message, part, data) = row.map_err(sql)?;
        let mut data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
        if let Some(object) = data.as_object_mut() {
            object.insert("id".into(), part.into());
            by_message.entry(message).or_default().push(data);
        }
    }
    let mut messages = conn
        .prepare("SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY id")
        .map_err(sql)?;
    let rows = messages
        .query_map([id], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?, row.get::<_, String>(2)?))
        })
        .map_err(sql)?;
    for row in rows {
        let (message, created, data) = row.map_err(sql)?;
        let data: Value = serde_json::from_str(&data).unwrap_or(Value::Null);
        if data["role"] == "assistant" && data["time"]["completed"].is_null() {
            break;
        }
        let parts = by_message.remove(&message).unwrap_or_default();
        lines.push(json!({
            "type": MESSAGE,
            "id": message,
            "timestamp": time(created),
            "message": data,
            "parts": parts,
        }));
    }
    Ok(Some(lines))
}

/// An epoch time in milliseconds as RFC 3339 text.
fn time(ms: i64) -> Option<String> {
    Timestamp::from_millisecond(ms).ok().map(|t| t.to_string())
}

/// Folds one transcript line: the session's folder; a user message's typed text (what a plugin
/// added is `synthetic`, mem's own context among it); an answer's text, its tool calls and their
/// results.
fn fold(f: &mut Fold, line: &Value, out: &mut Vec<TranscriptEvent>) {
    if line["type"] == SESSION {
        f.session_id = line["id"].as_str().map(String::from);
        f.meta(line["directory"].as_str(), None, None, out);
        return;
    }
    let message = &line["message"];
    let parts = line["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
    fn text(part: &Value) -> Option<&str> {
        (part["type"] == "text" && part["synthetic"] != true)
            .then(|| part["text"].as_str())
            .flatten()
            .filter(|t| !t.trim().is_empty())
    }
    if message["role"] == "user" {
        for said in parts.iter().filter_map(text) {
            out.push(TranscriptEvent::new(Kind::Prompt, said));
        }
        return;
    }
    f.meta(message["path"]["cwd"].as_str(), message["modelID"].as_str(), None, out);
    for part in parts {
        if let Some(said) = text(part) {
            out.push(TranscriptEvent::new(Kind::Assistant, said));
        } else if part["type"] == "tool" {
            tool(part, out);
        }
    }
}

/// A tool part: the call, and its result once it has one.
fn tool(part: &Value, out: &mut Vec<TranscriptEvent>) {
    let name = part["tool"].as_str().unwrap_or("tool");
    let call_id = part["callID"].as_str();
    let state = &part["state"];
    let input = &state["input"];
    let command = (name == "bash").then(|| input["command"].as_str()).flatten().map(String::from);
    let files: Vec<String> =
        ["filePath", "path"].iter().filter_map(|k| input[*k].as_str()).map(String::from).collect();
    let written = matches!(name, "write" | "edit" | "patch");
    let (args, files) = match (&command, written) {
        (Some(_), _) => (Value::Null, Vec::new()),
        (None, true) if !files.is_empty() => (Value::Null, files),
        _ => (input.clone(), Vec::new()),
    };
    out.push(TranscriptEvent::call(name, call_id, &args, command, files));
    let (text, status) = match state["status"].as_str() {
        Some("completed") => {
            let text = state["output"].as_str().unwrap_or_default().to_string();
            let exit = state["metadata"]["exit"].as_i64().or_else(|| exit_code(&text));
            (text, Some(exit.unwrap_or(0)))
        }
        Some("error") => (state["error"].as_str().unwrap_or("error").to_string(), Some(1)),
        _ => return,
    };
    out.push(TranscriptEvent::result(call_id, text, status));
}
