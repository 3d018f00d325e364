//! pi (`@mariozechner/pi-coding-agent`): sessions `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl`
//! (the folder moved by `PI_CODING_AGENT_DIR`; `<cwd>` the working directory without its first
//! `/`, every `/`, `\` and `:` made `-`). A file's first line is the session's header (`{"type":
//! "session", "id", "cwd", ...}`); every other line is an entry of a tree by `id` and `parentId`:
//! going back to an earlier entry and going on from there (pi's `/tree`) adds a branch to the same
//! file. The branch the session goes on with is the one that ends at the last entry written (pi
//! resumes there), and it is what mem reads: the file is read as a store ([`Stored`]), each time
//! into the header and the entries of that branch, root first, so that a branch the user left
//! behind is not captured as what the session did. A message keeps its id from one read to the
//! next, and the session log logs each id once ([`Fold::released`]).
//!
//! Its hooks are an extension mem's setup writes (`.pi/extensions/mem.ts`), which runs mem's
//! commands with a payload named by pi's own events, reads the answer as Claude Code's and puts
//! the memories into the system prompt of each request of the session, never into its messages.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read as _};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    Events, Fold, Home, Kind, Lines, Spec, Stored, StoredSessions, Tools, TranscriptEvent, Whose,
    block_text, exit_code, inside, is_session_id,
};
use crate::format::parse_time;
use crate::json::{JsonLine, read_json_lines};
use crate::untrusted::{self, Links, Unreadable};

/// pi.
pub const SPEC: Spec = Spec {
    name: "pi",
    title: "pi",
    aliases: &[],
    recognises,
    fold,
    finish: |_, _| {},
    file_prefix: "",
    session_of_file,
    home: Home { var: "PI_CODING_AGENT_DIR", under_var: None, default: ".pi/agent" },
    config: None,
    // mem's extension sends these, under pi's names for the moments.
    events: Events {
        start: "session_start",
        prompt: "before_agent_start",
        turn_end: "agent_end",
        session_end: None,
    },
    // The extension keeps what mem sent in the system prompt of the process's requests, which
    // a new process (`--continue`) does not have: a resumed session is given all of it again.
    resume_keeps: &[],
    clean_prompt: str::to_string,
    is_subagent: |_| false,
    whose: |_, _| Ok(Whose::Project),
    context_answer: |event, text| json!({ "hookSpecificOutput": { "hookEventName": event, "additionalContext": text } }),
    transcript_folders: |_, _| Vec::new(),
    widen_folder: |_, _| None,
    find_transcript: |_, _| None,
    stored: Some(Stored { file: |home| home.join(SESSIONS), sessions, transcript }),
    subagents_folder: None,
    missed_because: |_| None,
    memory: None,
    hooks_run_by_others: false,
    runs_hooks_of_others: |_| false,
    records_hook: None,
};

/// The folder of the sessions' folders, in pi's home.
const SESSIONS: &str = "sessions";

/// The `type` of a session file's first line.
const HEADER: &str = "session";

/// The `type`s of the entries of pi's session tree (session-format.md of pi 0.73).
const ENTRIES: &[&str] = &[
    "message",
    "model_change",
    "thinking_level_change",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
];

/// The most of a session file read: past it, the rest is left out (4 GiB, as capture reads of a
/// transcript).
const MAX_FILE_BYTES: u64 = 4 << 30;

/// Whether a line is pi's: its header (`type` `session`, a `version`, an `id` and a `cwd`), or an
/// entry of its tree (a known `type`, an `id`, a `parentId`, string or null, and a `timestamp`).
fn recognises(line: &Value) -> bool {
    let Some(kind) = line.get("type").and_then(Value::as_str) else { return false };
    if kind == HEADER {
        return line["version"].is_u64() && line["id"].is_string() && line["cwd"].is_string();
    }
    ENTRIES.contains(&kind)
        && line["id"].is_string()
        && line.get("parentId").is_some_and(|p| p.is_string() || p.is_null())
        && line["timestamp"].is_string()
}

/// `<time>_<session id>.jsonl` gives the id after the first `_`.
fn session_of_file(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let (_, id) = name.split_once('_')?;
    is_session_id(id).then(|| id.to_string())
}

/// The name pi gives the folder of the sessions started in `cwd`.
pub(super) fn folder_name(cwd: &Path) -> String {
    let text = cwd.to_string_lossy();
    let text = text.strip_prefix(['/', '\\']).unwrap_or(&text);
    format!("--{}--", text.replace(['/', '\\', ':'], "-"))
}

/// The session files of pi's folders that may hold sessions of `project` or a folder inside it:
/// those whose name starts as the project's (the name is lossy: the header tells).
fn candidate_files(home: &Path, project: &Path) -> std::io::Result<Vec<PathBuf>> {
    let dir = home.join(SESSIONS);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = vec![folder_name(project)];
    names.extend(project.canonicalize().ok().map(|p| folder_name(&p)));
    let prefixes: Vec<String> = names.iter().map(|n| n.trim_end_matches('-').to_string()).collect();
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = names.contains(&name)
            || prefixes
                .iter()
                .any(|p| name.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('-')));
        if !ours || !entry.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(entry.path())? {
            let path = file?.path();
            if path.extension().is_some_and(|x| x == "jsonl") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The sessions of pi's folders that ran in `project` or a folder inside it (the cwd of the
/// file's header), and those of folders named alike that ran elsewhere.
fn sessions(home: &Path, project: &Path) -> std::io::Result<StoredSessions> {
    let mut found = Vec::new();
    for path in candidate_files(home, project)? {
        let Some(id) = session_of_file(&path) else { continue };
        // Only a regular file is read (a FIFO would wait): anything else is no session.
        if !matches!(untrusted::check(&path, Links::Follow), Ok(Some(_))) {
            continue;
        }
        let whose = match super::head(&path)?.cwd {
            Some(cwd) if inside(Path::new(&cwd), project) => Whose::Project,
            _ => Whose::OtherProject,
        };
        found.push((id, whose));
    }
    Ok(found)
}

/// The file of session `id` in pi's folders, if there is one.
fn find(home: &Path, id: &str) -> std::io::Result<Option<PathBuf>> {
    if !is_session_id(id) {
        return Ok(None);
    }
    let dir = home.join(SESSIONS);
    let folders = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let suffix = format!("_{id}.jsonl");
    for folder in folders {
        let folder = folder?;
        if !folder.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(folder.path())? {
            let path = file?.path();
            if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(&suffix)) {
                return Ok(Some(path));
            }
        }
    }
    Ok(None)
}

/// The lines of session `id`: its header, then the entries of the branch that ends at the last
/// entry written, root first (see the module's doc); `None` when pi has no such session.
fn transcript(home: &Path, id: &str) -> std::io::Result<Option<Lines>> {
    let Some(path) = find(home, id)? else { return Ok(None) };
    let Some(lines) = read_file(&path)? else { return Ok(None) };
    Ok(Some(kept_branch(lines)))
}

/// The values of a session file, whole lines only (a last line still being written is left for
/// the next read); `None` when it is gone. Anything but a regular file is an error.
fn read_file(path: &Path) -> std::io::Result<Option<Vec<Value>>> {
    let file = match untrusted::open(path, Links::Follow) {
        Ok(Some(file)) => file,
        Ok(None) => return Ok(None),
        Err(Unreadable::Io(e)) => return Err(e),
        Err(why) => return Err(std::io::Error::other(why.to_string())),
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file.take(MAX_FILE_BYTES));
    let mut values = Vec::new();
    read_json_lines(
        &mut reader,
        true,
        |e| e,
        |line| {
            if let JsonLine::Value { value, .. } = line {
                values.push(value);
            }
            Ok(())
        },
    )?;
    Ok(Some(values))
}

/// The header and the entries of the branch that ends at the last entry, root first; lines of
/// no id (a header, a line of no known kind) are kept where they are when they come before the
/// first entry.
pub(super) fn kept_branch(lines: Vec<Value>) -> Lines {
    let id = |line: &Value| line["id"].as_str().map(str::to_string);
    let entries: Vec<&Value> = lines.iter().filter(|l| l["type"] != HEADER).collect();
    let parents: HashMap<String, Option<String>> = entries
        .iter()
        .filter_map(|l| Some((id(l)?, l["parentId"].as_str().map(str::to_string))))
        .collect();
    let mut kept = HashSet::new();
    let mut at = entries.iter().rev().find_map(|l| id(l));
    // Each id once: a parent loop (a damaged file) ends the walk.
    while let Some(entry) = at.filter(|e| parents.contains_key(e) && kept.insert(e.clone())) {
        at = parents[&entry].clone();
    }
    lines
        .into_iter()
        .filter(|l| l["type"] == HEADER || id(l).is_some_and(|i| kept.contains(&i)))
        .collect()
}

/// pi's tools that run a command or write a file.
const TOOLS: Tools =
    Tools { shell: &["bash"], command: "command", writers: &["edit", "write"], path: "path" };

/// The events of one line: the session (id, folder, start), a model change, and a message once
/// (the user's prompt as typed; the assistant's text and tool calls; a tool's result; a command
/// the user ran with `!`). What extensions add (`custom_message`, mem's memories never among
/// them), summaries and settings are not the user's and are left out.
fn fold(f: &mut Fold, line: &Value, out: &mut Vec<TranscriptEvent>) {
    let text = |v: &Value| v.as_str().filter(|t| !t.trim().is_empty()).map(str::to_string);
    match line["type"].as_str().unwrap_or("") {
        HEADER => {
            f.session_id.get_or_insert_with(|| line["id"].as_str().unwrap_or_default().into());
            if let Some(started) = line["timestamp"].as_str().and_then(|t| parse_time(t).ok()) {
                f.started.get_or_insert(started);
            }
            f.meta(line["cwd"].as_str(), None, None, out);
        }
        "model_change" => f.meta(None, line["modelId"].as_str(), None, out),
        "message" => {
            // Read again from the top after the session went on with another branch: what an
            // earlier read gave adds nothing.
            let Some(id) = line["id"].as_str() else { return };
            if !f.released.insert(id.to_string()) {
                return;
            }
            message(f, &line["message"], out, &text);
        }
        _ => {}
    }
}

/// One message of the session.
fn message(
    f: &mut Fold,
    message: &Value,
    out: &mut Vec<TranscriptEvent>,
    text: &dyn Fn(&Value) -> Option<String>,
) {
    match message["role"].as_str().unwrap_or("") {
        "user" => {
            let said = block_text(&message["content"]);
            if !said.trim().is_empty() {
                out.push(TranscriptEvent::new(Kind::Prompt, said));
            }
        }
        "assistant" => {
            f.meta(None, message["model"].as_str(), None, out);
            for block in message["content"].as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("text") => {
                        if let Some(said) = text(&block["text"]) {
                            out.push(TranscriptEvent::new(Kind::Assistant, said));
                        }
                    }
                    Some("toolCall") => {
                        let name = block["name"].as_str().unwrap_or("tool");
                        let id = block["id"].as_str();
                        out.push(TranscriptEvent::call_of(&TOOLS, name, id, &block["arguments"]));
                    }
                    _ => {}
                }
            }
        }
        "toolResult" => {
            let said = block_text(&message["content"]);
            let status = match message["isError"].as_bool() {
                Some(true) => Some(exit_code(&said).unwrap_or(1)),
                _ => Some(exit_code(&said).unwrap_or(0)),
            };
            out.push(TranscriptEvent::result(message["toolCallId"].as_str(), said, status));
        }
        "bashExecution" => {
            let Some(command) = text(&message["command"]) else { return };
            let call = TranscriptEvent::call(
                super::USER_SHELL,
                None,
                &Value::Null,
                Some(command),
                Vec::new(),
            );
            out.push(call);
            let said = message["output"].as_str().unwrap_or_default().to_string();
            out.push(TranscriptEvent {
                tool: Some(super::USER_SHELL.into()),
                ..TranscriptEvent::result(None, said, message["exitCode"].as_i64())
            });
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
