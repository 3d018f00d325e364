//! GitHub Copilot CLI without the real agent (tests/copilot_e2e.rs runs it): its payloads
//! through Claude Code's settings, its `events.jsonl` captured (also when written behind the
//! hook), both setups acting once, and `mem setup copilot` and `--remove`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::{Dir, memory};

/// A session id of Copilot's form.
const SESSION: &str = "3b0f6a0e-5a1c-4f7e-9d7e-2f1f8c0d4b11";

/// A project with a memory root and one memory, in a folder of its own.
fn project(dir: &Dir) -> PathBuf {
    std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
    dir.write("repo/.memory/mem.toml", "");
    let body = "The deploy script is ops/deploy.sh and it needs STAGE set.\n";
    dir.write(
        "repo/.memory/deploy.md",
        memory("deploy", "semantic", 6, "2026-11-01T10:00:00Z", body),
    );
    dir.path().join("repo")
}

/// The event file of [`SESSION`] in the test's home folder (Copilot's default home).
fn events_file(dir: &Dir) -> PathBuf {
    dir.home().join(".copilot/session-state").join(SESSION).join("events.jsonl")
}

/// One line of Copilot's event file.
fn event(kind: &str, data: Value, id: u32, at: &str) -> String {
    let parent = if id == 0 { Value::Null } else { json!(format!("e{}", id - 1)) };
    json!({ "type": kind, "data": data, "id": format!("e{id}"), "timestamp": at, "parentId": parent })
        .to_string()
        + "\n"
}

/// A session's events as Copilot 1.0.102 writes them (shapes from its runs here): the start,
/// a prompt whose `transformedContent` carries a hook's context, a shell call and its result,
/// the answer; then, when `stop_at` is given, the `hook.start` of the Stop hook called then.
fn events(repo: &Path, stop_at: Option<i64>) -> String {
    let mut text = event(
        "session.start",
        json!({ "sessionId": SESSION, "copilotVersion": "1.0.102", "startTime": "2026-11-30T11:59:00.000Z",
                "selectedModel": "claude-sonnet-4", "context": { "cwd": repo } }),
        0,
        "2026-11-30T11:59:00.100Z",
    );
    text += &event(
        "user.message",
        json!({ "content": "run the deploy dry run",
                "transformedContent": "run the deploy dry run\n\n<system_reminder>\n# Memory (from mem)\n</system_reminder>" }),
        1,
        "2026-11-30T11:59:01.000Z",
    );
    text += &event(
        "assistant.message",
        json!({ "model": "claude-sonnet-4", "content": "",
                "toolRequests": [{ "toolCallId": "toolu_1", "name": "bash",
                                   "arguments": { "command": "ops/deploy.sh --dry-run" } }] }),
        2,
        "2026-11-30T11:59:02.000Z",
    );
    text += &event(
        "tool.execution_complete",
        json!({ "toolCallId": "toolu_1", "success": true, "shellExecution": { "exitCode": 0 },
                "result": { "content": "dry run ok" } }),
        3,
        "2026-11-30T11:59:03.000Z",
    );
    text += &event(
        "assistant.message",
        json!({ "model": "claude-sonnet-4", "content": "The dry run passed.", "toolRequests": [] }),
        4,
        "2026-11-30T11:59:04.000Z",
    );
    if let Some(ms) = stop_at {
        text += &event(
            "hook.start",
            json!({ "hookType": "agentStop", "input": { "sessionId": SESSION, "timestamp": ms } }),
            5,
            "2026-11-30T11:59:05.000Z",
        );
    }
    text
}

/// A payload Copilot passes to a hook of a repository's `.claude/settings.json` (or to mem's
/// own Copilot hooks, which use the same event names).
fn payload(repo: &Path, event: &str, extra: Value) -> String {
    let mut payload = json!({ "hook_event_name": event, "session_id": SESSION,
                              "timestamp": "2026-11-30T11:59:05.000Z", "cwd": repo });
    payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    payload.to_string()
}

/// The payload's time in milliseconds, as the `hook.start` line records it.
const STOP_MS: i64 = 1_796_039_945_000;

#[test]
fn a_copilot_payload_through_claudes_settings_is_answered_at_the_top_level() {
    let dir = Dir::new();
    let repo = project(&dir);
    let start = payload(&repo, "SessionStart", json!({ "source": "new" }));
    let out = dir.mem_in("repo", &["context", "--hook", "claude"], &start);
    let answer: Value = serde_json::from_str(&out.stdout).expect(&out.stderr);
    let text = answer["additionalContext"].as_str().expect(&out.stdout);
    assert!(text.contains("ops/deploy.sh"), "{text}");
    assert!(answer.get("hookSpecificOutput").is_none(), "{answer}");
    // The ledger counts it as sent to Copilot's session: a resent start adds nothing.
    let again =
        payload(&repo, "UserPromptSubmit", json!({ "prompt": "where is the deploy script" }));
    let out = dir.mem_in("repo", &["context", "--hook", "claude"], &again);
    assert!(!out.stdout.contains("ops/deploy.sh"), "{}", out.stdout);
    // Claude Code's own payload keeps Claude Code's nested answer.
    let claude = json!({ "hook_event_name": "SessionStart", "session_id": "c-1", "cwd": repo,
                         "transcript_path": dir.home().join(".claude/projects/x/c-1.jsonl"),
                         "permission_mode": "default", "source": "startup" });
    let out = dir.mem_in("repo", &["context", "--hook", "claude"], claude.to_string());
    let answer: Value = serde_json::from_str(&out.stdout).expect(&out.stderr);
    assert!(answer["hookSpecificOutput"]["additionalContext"].is_string(), "{answer}");
}

#[test]
fn a_copilot_session_is_captured_from_its_events_and_counted() {
    let dir = Dir::new();
    let repo = project(&dir);
    let file = events_file(&dir);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, events(&repo, Some(STOP_MS))).unwrap();
    let stop =
        payload(&repo, "Stop", json!({ "transcript_path": file, "stop_reason": "end_turn" }));
    let out = dir.mem_in("repo", &["capture", "--hook", "claude"], &stop);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let log = dir.read("repo/.memory/.mem/capture.log");
    assert!(log.contains("\"status\":\"ok\""), "{log}");
    assert!(!log.contains("error\":\""), "{log}");
    let digest = dir.read(&format!("repo/.memory/sessions/session-{SESSION}.md"));
    assert!(digest.contains("run the deploy dry run"), "{digest}");
    assert!(digest.contains("ops/deploy.sh --dry-run"), "{digest}");
    assert!(digest.contains("The dry run passed."), "{digest}");
    assert!(!digest.contains("Memory (from mem)"), "what a hook added is not the user's: {digest}");
    let list = dir.mem_in("repo", &["session", "list", "--json"], "");
    let sessions: Value = serde_json::from_str(&list.stdout).expect(&list.stderr);
    let session = &sessions.as_array().unwrap()[0];
    assert_eq!(
        (&session["agent"], &session["turns"]),
        (&json!("copilot"), &json!(1)),
        "{sessions}"
    );
    // The session end names no transcript: found by the session's folder.
    let end = payload(&repo, "SessionEnd", json!({ "reason": "complete" }));
    let out = dir.mem_in("repo", &["capture", "--hook", "claude"], &end);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!dir.read("repo/.memory/.mem/capture.log").contains("error\":\""));
    let health = dir.mem_in("repo", &["health", "--transcripts", "--json"], "");
    let health: Value = serde_json::from_str(&health.stdout).expect(&health.stderr);
    let coverage = health.to_string();
    assert!(coverage.contains("\"found\":1") && coverage.contains("\"captured\":1"), "{coverage}");
}

#[test]
fn a_capture_waits_for_the_events_copilot_writes_behind_its_hook() {
    let dir = Dir::new();
    let repo = project(&dir);
    let file = events_file(&dir);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    // Copilot has written the session's start only when its Stop hook starts; the rest comes
    // a moment later, as it does about 0.1 s after the hook in real runs.
    let whole = events(&repo, Some(STOP_MS));
    let first = whole.lines().next().unwrap().to_string() + "\n";
    std::fs::write(&file, &first).unwrap();
    let writer = {
        let file = file.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(400));
            let tmp = file.with_extension("tmp");
            std::fs::write(&tmp, whole).unwrap();
            std::fs::rename(tmp, file).unwrap();
        })
    };
    let stop = payload(&repo, "Stop", json!({ "transcript_path": file }));
    let out = dir.mem_in("repo", &["capture", "--hook", "claude"], &stop);
    writer.join().unwrap();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let digest = dir.read(&format!("repo/.memory/sessions/session-{SESSION}.md"));
    assert!(digest.contains("The dry run passed."), "the turn that just ended: {digest}");
}

#[test]
fn a_repository_set_up_for_both_acts_once_per_copilot_event() {
    let dir = Dir::new();
    let repo = project(&dir);
    for agent in ["claude", "copilot"] {
        let out = dir.mem_in("repo", &["setup", agent], "");
        assert_eq!(out.code, 0, "{agent}: {}", out.stderr);
    }
    let start = payload(&repo, "SessionStart", json!({ "source": "new" }));
    // Copilot runs the hooks of both files, in turn, with one payload.
    let own = dir.mem_in("repo", &["context", "--hook", "copilot"], &start);
    let claude = dir.mem_in("repo", &["context", "--hook", "claude"], &start);
    assert!(own.stdout.contains("ops/deploy.sh"), "{} {}", own.stdout, own.stderr);
    assert_eq!(claude.stdout, "", "{}", claude.stderr);
}

#[test]
fn setup_copilot_writes_its_own_files_and_remove_gives_them_back() {
    let dir = Dir::new();
    project(&dir);
    let mcp = r#"{"mcpServers":{"db":{"command":"pg-mcp"}}}"#;
    dir.write("repo/.github/mcp.json", mcp);
    dir.write("repo/.github/hooks/lint.json", "{\"hooks\":{}}\n");
    let out = dir.mem_in("repo", &["setup", "copilot"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let hooks: Value = serde_json::from_str(&dir.read("repo/.github/hooks/mem.json")).unwrap();
    let events: Vec<&str> =
        hooks["hooks"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(events, ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"], "{hooks}");
    let start = &hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"];
    assert_eq!(start, "mem context --hook copilot || true", "{hooks}");
    let servers: Value = serde_json::from_str(&dir.read("repo/.github/mcp.json")).unwrap();
    assert_eq!(servers["mcpServers"]["mem"]["args"], json!(["mcp"]), "{servers}");
    assert_eq!(servers["mcpServers"]["db"]["command"], "pg-mcp");
    let again = dir.mem_in("repo", &["setup", "copilot"], "");
    assert_eq!(again.code, 0, "{}", again.stderr);
    let removed = dir.mem_in("repo", &["setup", "copilot", "--remove"], "");
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert_eq!(dir.read("repo/.github/mcp.json"), mcp);
    assert_eq!(dir.read("repo/.github/hooks/lint.json"), "{\"hooks\":{}}\n");
    assert!(!dir.path().join("repo/.github/hooks/mem.json").exists());
    // User scope: Copilot's folder, every command marked.
    let out = dir.mem_in("repo", &["setup", "copilot", "--scope", "user"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let user = std::fs::read_to_string(dir.home().join(".copilot/hooks/mem.json")).unwrap();
    assert!(user.contains("--hook copilot --user-scope"), "{user}");
    let user_mcp = std::fs::read_to_string(dir.home().join(".copilot/mcp-config.json")).unwrap();
    assert!(user_mcp.contains("--user-scope"), "{user_mcp}");
    let removed = dir.mem_in("repo", &["setup", "copilot", "--scope", "user", "--remove"], "");
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert!(!dir.home().join(".copilot/hooks/mem.json").exists());
    assert!(!dir.home().join(".copilot/mcp-config.json").exists());
}
