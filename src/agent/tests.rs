//! Unit tests of the agents' readers and names.

use std::path::Path;

use super::*;

#[test]
fn session_ids_of_transcript_names() {
    let id = |p: &str| Agent::of_transcript(Path::new(p)).map(|(_, id)| id);
    assert_eq!(
        id("/h/.claude/projects/-h-p/0b6e1f7a-52b4-4d55-8d52-9a1f2f3c4d5e.jsonl").as_deref(),
        Some("0b6e1f7a-52b4-4d55-8d52-9a1f2f3c4d5e")
    );
    assert_eq!(
        id("/h/.codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl")
            .as_deref(),
        Some("019a2d7a-41c4-78b1-b7cc-a45d62a89cd5")
    );
    assert_eq!(id("rollout-2025-10-29T00-59-38-short.jsonl"), None);
    assert_eq!(id("notes.txt"), None);
    assert_eq!(id("a b.jsonl"), None);
}

#[test]
fn a_codex_rollout_is_found_by_session_id() {
    let dir = tempfile::tempdir().unwrap();
    let id = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    let day = dir.path().join("2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::write(
        day.join("rollout-2026-11-30T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c.jsonl"),
        "",
    )
    .unwrap();
    assert_eq!(codex::find_rollout(dir.path(), id), None);
    let path = day.join(format!("rollout-2026-11-30T11-00-00-{id}.jsonl"));
    std::fs::write(&path, "").unwrap();
    assert_eq!(codex::find_rollout(dir.path(), id), Some(path));
    assert_eq!(codex::find_rollout(&dir.path().join("missing"), id), None);
}

#[test]
fn agents_are_named_once_and_read_by_their_aliases() {
    let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
    assert_eq!(names, ["claude", "codex"]);
    assert_eq!(Agent::from_name("claude-code"), Some(Agent::Claude));
    assert_eq!(Agent::from_name("Claude Code"), None);
    assert_eq!(serde_json::to_value(Agent::Codex).unwrap(), "codex");
    assert_eq!(Agent::Claude.title(), "Claude Code");
}

/// One reader per agent: the digest's requests and the log's prompts come from the same
/// events; Codex's echoes of a message reach the digest only.
#[test]
fn a_line_folds_once_for_both_readers() {
    let mut fold = Fold::default();
    let user = serde_json::json!({"timestamp": "2025-10-29T00:59:38.317Z", "type": "event_msg",
        "payload": {"type": "user_message", "message": "create hello.txt"}});
    let line = fold.line(&user).unwrap();
    assert_eq!(line.agent, Agent::Codex);
    assert_eq!(line.events.len(), 1);
    assert!(line.events[0].echo && line.events[0].kind == Kind::Prompt);
    assert_eq!(line.events[0].at, Some("2025-10-29T00:59:38.317Z".parse().unwrap()));
    let other = serde_json::json!({"type": "note", "text": "x"});
    assert_eq!(fold.line(&other), None);
}
