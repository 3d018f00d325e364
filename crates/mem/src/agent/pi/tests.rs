//! Unit tests of pi's reader, on lines as pi 0.73.1 writes them: the tree read as the branch
//! the session went on with.

use std::path::Path;

use serde_json::{Value, json};

use super::super::{Agent, Fold, Kind, Whose};
use super::{folder_name, kept_branch};

const ID: &str = "01a24fca-707f-755c-88ea-93bf7daa0167";

fn header(cwd: &str) -> Value {
    json!({"type": "session", "version": 3, "id": ID, "timestamp": "2026-12-07T09:16:36.865Z", "cwd": cwd})
}

fn entry(id: &str, parent: Option<&str>, message: Value) -> Value {
    json!({"type": "message", "id": id, "parentId": parent,
           "timestamp": "2026-12-07T09:16:37.068Z", "message": message})
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1})
}

fn answer(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}],
           "api": "openai-completions", "provider": "standin", "model": "stand-in",
           "stopReason": "stop", "timestamp": 2})
}

/// A session that went back to its first answer and on from there: `u2`/`a2` are the branch
/// left behind, `u3`/`a3` the one kept (written last).
fn branched(cwd: &str) -> Vec<Value> {
    vec![
        header(cwd),
        json!({"type": "model_change", "id": "m0", "parentId": null,
               "timestamp": "2026-12-07T09:16:36.907Z", "provider": "standin", "modelId": "stand-in"}),
        entry("u1", Some("m0"), user("set up the build")),
        entry("a1", Some("u1"), answer("Set up.")),
        entry("u2", Some("a1"), user("use npm for the web client")),
        entry("a2", Some("u2"), answer("Using npm.")),
        json!({"type": "branch_summary", "id": "b3", "parentId": "a1",
               "timestamp": "2026-12-07T09:17:00.000Z", "fromId": "a2", "summary": "Tried npm."}),
        entry("u3", Some("b3"), user("use pnpm for the web client")),
        entry("a3", Some("u3"), answer("Using pnpm.")),
    ]
}

fn events(lines: &[Value]) -> Vec<(Kind, String)> {
    let mut fold = Fold::default();
    lines
        .iter()
        .filter_map(|l| fold.line(l))
        .flat_map(|l| l.events)
        .map(|e| (e.kind, e.text))
        .collect()
}

#[test]
fn pi_s_lines_are_told_apart_from_other_agents() {
    for line in branched("/p") {
        assert_eq!(Agent::of_line(&line), Some(Agent::Pi), "{line}");
    }
    let copilot =
        json!({"type": "user.message", "data": {}, "id": "x", "parentId": null, "timestamp": "t"});
    assert_eq!(Agent::of_line(&copilot), Some(Agent::Copilot));
    let claude = json!({"type": "user", "sessionId": "s", "uuid": "u", "parentUuid": null,
                        "message": {"role": "user", "content": "hi"}, "timestamp": "t"});
    assert_ne!(Agent::of_line(&claude), Some(Agent::Pi));
    // A header without its version, an entry of a kind pi does not write: not pi's.
    assert_eq!(Agent::of_line(&json!({"type": "session", "id": ID, "cwd": "/p"})), None);
    let unknown = json!({"type": "note", "id": "n", "parentId": null, "timestamp": "t"});
    assert_ne!(Agent::of_line(&unknown), Some(Agent::Pi));
}

#[test]
fn the_file_name_and_the_folder_are_pi_s() {
    let spec = Agent::Pi.spec();
    let file = format!("/h/.pi/agent/sessions/--p--/2026-12-07T09-16-36-865Z_{ID}.jsonl");
    assert_eq!((spec.session_of_file)(Path::new(&file)), Some(ID.to_string()));
    assert_eq!((spec.session_of_file)(Path::new("/h/x/../y_a..b.jsonl")), None);
    assert_eq!((spec.session_of_file)(Path::new("/h/nounderscore.jsonl")), None);
    assert_eq!(folder_name(Path::new("/tmp/piB/try/repo")), "--tmp-piB-try-repo--");
    assert_eq!(folder_name(Path::new("C:\\work\\shop")), "--C--work-shop--");
}

#[test]
fn the_branch_kept_is_the_one_that_ends_at_the_last_entry() {
    let kept = kept_branch(branched("/p"));
    let ids: Vec<&str> = kept.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [ID, "m0", "u1", "a1", "b3", "u3", "a3"]);
    let said = events(&kept);
    let prompts: Vec<&str> =
        said.iter().filter(|(k, _)| *k == Kind::Prompt).map(|(_, t)| t.as_str()).collect();
    assert_eq!(prompts, ["set up the build", "use pnpm for the web client"]);
    assert!(!said.iter().any(|(_, t)| t.contains("npm.") && !t.contains("pnpm")), "{said:?}");
    // A damaged file whose parents loop, or name an entry that is not there, ends the walk.
    let looped =
        vec![header("/p"), entry("x", Some("y"), user("one")), entry("y", Some("x"), user("two"))];
    assert_eq!(kept_branch(looped).len(), 3);
    let orphan = vec![header("/p"), entry("x", Some("gone"), user("one"))];
    assert_eq!(kept_branch(orphan).len(), 2);
    assert_eq!(kept_branch(vec![header("/p")]).len(), 1);
}

#[test]
fn a_message_read_again_adds_nothing_and_tools_are_read() {
    let call = json!({"role": "assistant", "model": "stand-in", "content": [
        {"type": "toolCall", "id": "call_2", "name": "bash", "arguments": {"command": "ls"}},
        {"type": "toolCall", "id": "call_3", "name": "write", "arguments": {"path": "a.txt", "content": "x"}}]});
    let result = json!({"role": "toolResult", "toolCallId": "call_2", "toolName": "bash",
                        "content": [{"type": "text", "text": "a.txt\n"}], "isError": false});
    let failed = json!({"role": "toolResult", "toolCallId": "call_3", "toolName": "write",
                        "content": [{"type": "text", "text": "denied"}], "isError": true});
    let shell = json!({"role": "bashExecution", "command": "git status", "output": "clean",
                       "exitCode": 0, "cancelled": false, "truncated": false});
    let extension = json!({"type": "custom_message", "id": "c1", "parentId": "r2",
                           "timestamp": "2026-12-07T09:16:38.000Z", "customType": "x",
                           "content": "not the user's", "display": true});
    let lines = vec![
        header("/p"),
        entry("u1", None, user("list the files")),
        entry("a1", Some("u1"), call),
        entry("r1", Some("a1"), result),
        entry("r2", Some("r1"), failed),
        extension,
        entry("s1", Some("c1"), shell),
    ];
    let mut fold = Fold::default();
    let mut all = Vec::new();
    for line in &lines {
        all.extend(fold.line(line).unwrap().events);
    }
    assert_eq!(fold.session_id.as_deref(), Some(ID));
    assert_eq!(fold.cwd.as_deref(), Some("/p"));
    let call = all.iter().find(|e| e.kind == Kind::ToolCall).unwrap();
    assert_eq!(call.command.as_deref(), Some("ls"));
    let write = all.iter().find(|e| e.tool.as_deref() == Some("write")).unwrap();
    assert_eq!(write.files, ["a.txt"]);
    let statuses: Vec<Option<i64>> =
        all.iter().filter(|e| e.kind == Kind::ToolResult).map(|e| e.status).collect();
    assert_eq!(statuses, [Some(0), Some(1), Some(0)]);
    assert!(!all.iter().any(|e| e.text.contains("not the user's")));
    // The same lines again, in the same fold (the log seeded with what it logged): nothing.
    for line in &lines[1..] {
        assert!(fold.line(line).unwrap().events.is_empty(), "{line}");
    }
}

#[test]
fn the_store_gives_the_project_s_sessions_and_the_kept_branch() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project = project.path().canonicalize().unwrap();
    let stored = Agent::Pi.spec().stored.unwrap();
    assert!((stored.sessions)(home.path(), &project).unwrap().is_empty());
    assert_eq!((stored.transcript)(home.path(), ID).unwrap(), None);
    let write = |cwd: &Path, id: &str, lines: &[Value]| {
        let dir = home.path().join("sessions").join(folder_name(cwd));
        std::fs::create_dir_all(&dir).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(dir.join(format!("2026-12-07T09-16-36-865Z_{id}.jsonl")), text).unwrap();
    };
    let cwd = project.display().to_string();
    write(&project, ID, &branched(&cwd));
    // A folder of pi's whose name starts alike, of another project.
    let sibling =
        project.with_file_name(format!("{}-old", project.file_name().unwrap().to_string_lossy()));
    let mut other = vec![
        json!({"type": "session", "version": 3, "id": "other-1", "timestamp": "t", "cwd": sibling}),
    ];
    other.push(entry("u1", None, user("elsewhere")));
    write(&sibling, "other-1", &other);
    let mut found = (stored.sessions)(home.path(), &project).unwrap();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [(ID.to_string(), Whose::Project), ("other-1".to_string(), Whose::OtherProject)]
    );
    let lines = (stored.transcript)(home.path(), ID).unwrap().unwrap();
    assert_eq!(lines.len(), 7, "{lines:?}");
    assert_eq!(lines.last().unwrap()["id"], "a3");
    // A last line still being written is left for the next read.
    let dir = home.path().join("sessions").join(folder_name(&project));
    let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(
        r#"{"type":"message","id":"u4","parentId":"a3","timestamp":"t","message":{"role":"user","#,
    );
    std::fs::write(&file, text).unwrap();
    assert_eq!((stored.transcript)(home.path(), ID).unwrap().unwrap().len(), 7);
    assert_eq!((stored.transcript)(home.path(), "../x").unwrap(), None);
}
