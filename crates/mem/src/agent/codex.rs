//! Codex CLI: rollouts `~/.codex/sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl`, one
//! `{timestamp, type, payload}` per line (`session_meta`, `turn_context`, `response_item`,
//! `event_msg`, `compacted`), hooks answered as Claude Code's are.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::memory::{self, MemorySpec, NativeRead, Sources};
use super::{
    Events, Fold, Home, Kind, Missed, Spec, TranscriptEvent, Whose, block_text, exit_code, inside,
};
use crate::json::parse_json_lenient;

/// Codex CLI.
pub const SPEC: Spec = Spec {
    name: "codex",
    title: "Codex",
    aliases: &[],
    recognises,
    fold,
    finish: |_, _| {},
    file_prefix: "rollout-",
    session_of_file,
    home: Home { var: "CODEX_HOME", under_var: None, default: ".codex" },
    config: None,
    events: Events {
        start: "SessionStart",
        prompt: "UserPromptSubmit",
        turn_end: "Stop",
        // No SessionEnd event: its Stop hook captures.
        session_end: None,
    },
    // The resumed rollout holds both hooks' context.
    resume_keeps: &["SessionStart", "UserPromptSubmit"],
    clean_prompt: str::to_string,
    is_subagent,
    whose,
    context_answer: |event, text| {
        serde_json::json!({
            "hookSpecificOutput": { "hookEventName": event, "additionalContext": text }
        })
    },
    transcript_folders: |home, _| {
        let sessions = home.join(SESSIONS);
        if sessions.is_dir() { vec![sessions] } else { Vec::new() }
    },
    widen_folder: |_, _| None,
    find_transcript: |home, session_id| find_rollout(&home.join(SESSIONS), session_id),
    stored: None,
    subagents_folder: None,
    missed_because,
    memory: Some(MemorySpec {
        layer: "codex",
        label: "codex memories",
        personal: &[],
        read: read_memories,
    }),
    hooks_run_by_others: false,
    runs_hooks_of_others: |_| false,
    records_hook: None,
};

/// The folder of Codex's home that holds its rollouts, by date.
const SESSIONS: &str = "sessions";

/// The largest `config.toml` of Codex's read.
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Why sessions were missed: Codex does not trust the project (it then reads none of its
/// `.codex/` files, mem's hooks there included), or has not trusted mem's hooks yet.
fn missed_because(missed: &Missed) -> Option<String> {
    let project_hooks = missed
        .configured
        .iter()
        .any(|c| c.starts_with(missed.project) && c.ends_with(".codex/hooks.json"));
    let config = missed.home.and_then(|h| {
        let file = h.join("config.toml");
        crate::untrusted::read_text(&file, MAX_CONFIG_BYTES, crate::untrusted::Links::Follow)
            .ok()
            .flatten()
    });
    if project_hooks && !config.is_some_and(|t| trusts_project(&t, missed.project)) {
        return Some(
            "Codex does not trust this project, so it reads none of its .codex/ files (mem's \
             hooks there included): start Codex here and trust the project, then trust the hooks \
             (/hooks); `mem capture --missed` captures the sessions missed"
                .to_string(),
        );
    }
    missed.untrusted.then(|| {
        "Codex has not trusted mem's hooks yet (see `agents` below): run /hooks in Codex and \
         trust them; `mem capture --missed` captures the sessions missed"
            .to_string()
    })
}

/// Whether Codex's user configuration `config` trusts the project at `project`
/// (`[projects."<path>"] trust_level = "trusted"`, by its path or a folder above it): Codex
/// reads a project's `.codex/` only then.
fn trusts_project(config: &str, project: &Path) -> bool {
    let Ok(doc) = config.parse::<toml_edit::DocumentMut>() else { return false };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_table_like()) else {
        return false;
    };
    let project = project.canonicalize().unwrap_or_else(|_| project.to_path_buf());
    projects.iter().any(|(path, entry)| {
        let trusted = entry.get("trust_level").and_then(|t| t.as_str()) == Some("trusted");
        let path = Path::new(path);
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        trusted && project.starts_with(path)
    })
}

/// Whether a line is a rollout's: an object `payload` under one of the rollout's `type`s.
fn recognises(line: &Value) -> bool {
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    matches!(line.get("payload"), Some(Value::Object(_)))
        && matches!(
            kind,
            "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
        )
}

/// `rollout-<timestamp>-<uuid>.jsonl` gives the trailing UUID (36 characters).
fn session_of_file(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let rest = name.strip_suffix(".jsonl")?.strip_prefix("rollout-")?;
    let start = rest.len().checked_sub(36)?;
    let uuid = rest.get(start..)?;
    let separated = start == 0 || rest.get(..start)?.ends_with('-');
    (separated && is_uuid(uuid)).then(|| uuid.to_string())
}

/// Whether a rollout's `session_meta` names a subagent as its source.
fn is_subagent(line: &Value) -> bool {
    line["type"] == "session_meta"
        && line["payload"]["source"]
            .as_object()
            .is_some_and(|source| source.keys().any(|k| k.eq_ignore_ascii_case("subagent")))
}

/// Whose a rollout is, by its first lines: a subagent's as its `session_meta` says; another
/// project's when its `cwd` is outside the project, or it records none.
fn whose(path: &Path, project: &Path) -> std::io::Result<Whose> {
    let head = super::head(path)?;
    Ok(match head.cwd {
        _ if head.subagent => Whose::Subagent,
        Some(cwd) if inside(Path::new(&cwd), project) => Whose::Project,
        _ => Whose::OtherProject,
    })
}

/// Whether `s` is a UUID in its 8-4-4-4-12 hex form.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// The rollout of session `session_id` under `sessions` (Codex's `sessions` folder,
/// `YYYY/MM/DD/rollout-<timestamp>-<session_id>.jsonl`), newest folders first; `None` when
/// there is none.
pub fn find_rollout(sessions: &Path, session_id: &str) -> Option<PathBuf> {
    let mut entries: Vec<std::fs::DirEntry> =
        std::fs::read_dir(sessions).ok()?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
    for entry in entries {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            if let Some(found) = find_rollout(&path, session_id) {
                return Some(found);
            }
        } else if kind.is_file() && session_of_file(&path).as_deref() == Some(session_id) {
            return Some(path);
        }
    }
    None
}

/// Starts of the user messages Codex adds itself (context and instructions).
const ADDED: [&str; 6] = [
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<user_shell_command>",
    "<INSTRUCTIONS>",
    "# AGENTS.md instructions",
];

/// Whether a user message is text Codex added itself.
fn added(text: &str) -> bool {
    let trimmed = text.trim_start();
    ADDED.iter().any(|p| trimmed.starts_with(p))
}

/// The events of one line: changes of cwd, model or approval and sandbox mode
/// (`session_meta`, `turn_context`), a compaction, the items (messages, tool calls and their
/// outputs), and the user's and assistant's messages again as echoes (`event_msg`), which the log
/// takes as the messages in a rollout of `event_msg` lines only (see [`super::ITEMS`]).
fn fold(f: &mut Fold, line: &Value, out: &mut Vec<TranscriptEvent>) {
    let payload = &line["payload"];
    let text = |key: &str| payload[key].as_str();
    match line["type"].as_str().unwrap_or("") {
        "session_meta" => {
            if f.session_id.is_none() {
                f.session_id = text("id").map(String::from);
            }
            if let Some(at) = text("timestamp").and_then(|t| crate::format::parse_time(t).ok()) {
                f.started = Some(f.started.map_or(at, |s| s.min(at)));
            }
            let mode = text("approval_policy").map(String::from);
            f.meta(text("cwd"), text("model"), mode, out);
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
            f.meta(text("cwd"), text("model"), mode, out);
        }
        "compacted" => out.push(TranscriptEvent::new(Kind::Meta, "the conversation was compacted")),
        "response_item" => {
            // The rollout records its messages as items: its echoes are not logged again.
            if !f.has_items() {
                f.released.insert(super::ITEMS.to_string());
            }
            item(payload, out)
        }
        "event_msg" => {
            let kind = match payload["type"].as_str() {
                Some("user_message") => Kind::Prompt,
                Some("agent_message") => Kind::Assistant,
                _ => return,
            };
            let said = text("message").unwrap_or("");
            if !said.trim().is_empty() {
                out.push(TranscriptEvent::new(kind, said).echoed());
            }
        }
        _ => {}
    }
}

/// The events of a `response_item`: a tool call, a tool's output, a message.
fn item(item: &Value, out: &mut Vec<TranscriptEvent>) {
    let call_id = item["call_id"].as_str();
    if let Some((name, call)) = call(item) {
        let event = match call {
            Call::Patch(text) => {
                let mut files: Vec<String> = Vec::new();
                for path in patch_paths(&text).map(str::trim) {
                    if !files.iter().any(|f| f == path) {
                        files.push(path.to_string());
                    }
                }
                TranscriptEvent::call("apply_patch", call_id, &Value::Null, None, files)
            }
            Call::Shell(command) => {
                TranscriptEvent::call(&name, call_id, &Value::Null, Some(command), Vec::new())
            }
            Call::Other(args) => TranscriptEvent::call(&name, call_id, &args, None, Vec::new()),
        };
        out.push(event);
        return;
    }
    match item["type"].as_str().unwrap_or("") {
        "message" => {
            let said = block_text(&item["content"]);
            match item["role"].as_str() {
                Some("user") if !said.trim().is_empty() && !added(&said) => {
                    out.push(TranscriptEvent::new(Kind::Prompt, said));
                }
                Some("assistant") if !said.trim().is_empty() => {
                    out.push(TranscriptEvent::new(Kind::Assistant, said));
                }
                _ => {}
            }
        }
        "function_call_output" | "custom_tool_call_output" => {
            let (said, status) = output(&item["output"]);
            out.push(TranscriptEvent::result(call_id, said, status));
        }
        _ => {}
    }
}

/// What a tool call does.
#[derive(Clone, Debug, PartialEq)]
enum Call {
    /// Applies a patch (its files are in [`patch_paths`]), as a tool or a shell command.
    Patch(String),
    /// Runs a shell command.
    Shell(String),
    /// Any other tool, with its arguments.
    Other(Value),
}

/// The tool call a `response_item` makes (`function_call`, `local_shell_call`,
/// `custom_tool_call`): the tool's name and what it does; `None` for any other item.
fn call(item: &Value) -> Option<(String, Call)> {
    let shell = |command: String| match command.contains("*** Begin Patch") {
        true => Call::Patch(command),
        false => Call::Shell(command),
    };
    let name = item["name"].as_str().unwrap_or("tool").to_string();
    match item["type"].as_str()? {
        "function_call" => {
            let args = item["arguments"]
                .as_str()
                .and_then(|a| parse_json_lenient(a).ok())
                .unwrap_or(Value::Null);
            let call = match name.as_str() {
                "apply_patch" => Call::Patch(args["input"].as_str().unwrap_or("").to_string()),
                "shell" | "container.exec" | "shell_command" | "exec_command" | "local_shell" => {
                    shell(
                        shell_text(&args["command"])
                            .or_else(|| shell_text(&args["cmd"]))
                            .unwrap_or_default(),
                    )
                }
                _ => Call::Other(args),
            };
            Some((name, call))
        }
        "local_shell_call" => Some((
            "local_shell".to_string(),
            shell(shell_text(&item["action"]["command"]).unwrap_or_default()),
        )),
        "custom_tool_call" => {
            let input = item["input"].as_str().unwrap_or("").to_string();
            let call = match name.as_str() {
                "apply_patch" => Call::Patch(input),
                _ => Call::Other(Value::String(input)),
            };
            Some((name, call))
        }
        _ => None,
    }
}

/// The paths an `apply_patch` input names (added, updated, deleted, moved to), as written.
fn patch_paths(patch: &str) -> impl Iterator<Item = &str> {
    const MARKERS: [&str; 4] =
        ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
    patch.lines().filter_map(|line| MARKERS.iter().find_map(|m| line.strip_prefix(m)))
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

/// A tool's output and its exit status: JSON with `output` and `metadata.exit_code`, or text
/// that starts with `Exit code: N` (or says `Process exited with code N`).
fn output(output: &Value) -> (String, Option<i64>) {
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

/// Codex Memories (`[features] memories = true`): `<home>/memories/`, where Codex's
/// consolidation pass writes `MEMORY.md` (the handbook) and `memory_summary.md`, each read by
/// sections; `raw_memories.md` and `rollout_summaries/` are that pass's inputs, not read.
fn read_memories(sources: &Sources) -> NativeRead {
    let mut out = NativeRead::default();
    let dir = sources.home.join("memories");
    for file in ["MEMORY.md", "memory_summary.md"] {
        memory::read_sections(&dir.join(file), "codex", &mut out);
    }
    out
}
