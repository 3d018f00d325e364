//! Unit tests of the agents' readers and names.

use std::path::Path;

use serde_json::Value;

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
    assert_eq!(names, ["claude", "codex", "gemini", "opencode", "copilot", "pi"]);
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

/// A Gemini CLI 0.61.0 chat, as it wrote one (shortened): the first line, the session context
/// in a `$set`, a prompt with the hook context in front, a model message written twice under
/// one id (the second copy with its tool call and result), the tool result as a user message,
/// and the answer.
pub(crate) const GEMINI: &[&str] = &[
    r#"{"sessionId":"2b0be709-00c1-465e-9935-165dc0f2020d","projectHash":"dec1","startTime":"2026-12-02T03:38:29.611Z","lastUpdated":"2026-12-02T03:38:29.611Z","kind":"main"}"#,
    r#"{"$set":{"messages":[{"id":"d049","timestamp":"2026-12-02T03:38:29.612Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /tmp/gx/proj\n- **Directory Structure:**\n</session_context>"}]}],"lastUpdated":"2026-12-02T03:38:29.612Z"}}"#,
    r#"{"id":"1d60","timestamp":"2026-12-02T03:38:29.666Z","type":"user","content":[{"text":"<hook_context>Remember: we use pnpm &lt;b&gt;never&lt;/b&gt; npm</hook_context>\n\nlist the files"},{"text":"<hook_context>Remember: pnpm</hook_context>"}]}"#,
    r#"{"$set":{"lastUpdated":"2026-12-02T03:38:29.667Z"}}"#,
    r#"{"id":"ed29","timestamp":"2026-12-02T03:38:29.790Z","type":"gemini","content":"","model":"gemini-2.5-flash"}"#,
    r#"{"$set":{"lastUpdated":"2026-12-02T03:38:29.790Z"}}"#,
    r#"{"id":"ed29","timestamp":"2026-12-02T03:38:29.790Z","type":"gemini","content":"","model":"gemini-2.5-flash","toolCalls":[{"id":"run_1","name":"run_shell_command","args":{"command":"ls"},"result":[{"functionResponse":{"id":"run_1","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: (empty)\n</untrusted_context>"}}}],"status":"success","timestamp":"2026-12-02T03:38:29.847Z"},{"id":"write_2","name":"write_file","args":{"file_path":"/tmp/gx/proj/src/a.rs","content":"x"},"result":[],"status":"error"}]}"#,
    r#"{"id":"578a","timestamp":"2026-12-02T03:38:29.852Z","type":"user","content":[{"functionResponse":{"id":"run_1","name":"run_shell_command","response":{"output":"Output: (empty)"}}}]}"#,
    r#"{"id":"ae1c","timestamp":"2026-12-02T03:38:29.866Z","type":"gemini","content":"All done.","model":"gemini-2.5-flash"}"#,
    r#"{"$set":{"lastUpdated":"2026-12-02T03:38:29.866Z"}}"#,
];

fn fold_all(lines: &[&str]) -> (Fold, Vec<TranscriptEvent>) {
    let mut fold = Fold::default();
    let mut events = Vec::new();
    for line in lines {
        let value: Value = serde_json::from_str(line).unwrap();
        let folded = fold.line(&value).unwrap_or_else(|| panic!("not recognised: {line}"));
        assert_eq!(folded.agent, Agent::Gemini, "{line}");
        events.extend(folded.events);
    }
    events.extend(fold.finish());
    (fold, events)
}

#[test]
fn a_gemini_chat_folds_each_message_once_in_its_last_copy() {
    let (fold, events) = fold_all(GEMINI);
    assert_eq!(fold.session_id.as_deref(), Some("2b0be709-00c1-465e-9935-165dc0f2020d"));
    assert_eq!(fold.started, Some("2026-12-02T03:38:29.611Z".parse().unwrap()));
    assert_eq!(fold.cwd.as_deref(), Some("/tmp/gx/proj"), "the workspace Gemini states");
    let kinds: Vec<(Kind, &str)> = events.iter().map(|e| (e.kind, e.text.as_str())).collect();
    assert_eq!(
        kinds,
        [
            (Kind::Meta, "cwd /tmp/gx/proj"),
            (Kind::Prompt, "list the files"),
            (Kind::Meta, "model gemini-2.5-flash"),
            (Kind::ToolCall, ""),
            (Kind::ToolResult, "Output: (empty)"),
            (Kind::ToolCall, ""),
            (Kind::ToolResult, ""),
            (Kind::Assistant, "All done."),
        ]
    );
    assert_eq!(events[3].command.as_deref(), Some("ls"));
    assert_eq!((events[4].call_id.as_deref(), events[4].status), (Some("run_1"), Some(0)));
    assert_eq!(events[5].files, ["/tmp/gx/proj/src/a.rs"]);
    assert_eq!(events[6].status, Some(1));
    assert_eq!(events[4].at, Some("2026-12-02T03:38:29.847Z".parse().unwrap()));
    assert_eq!(events[7].at, Some("2026-12-02T03:38:29.866Z".parse().unwrap()));
}

#[test]
fn gemini_lines_are_not_taken_for_claude_codes() {
    for line in GEMINI {
        let value: Value = serde_json::from_str(line).unwrap();
        assert_eq!(Agent::of_line(&value), Some(Agent::Gemini), "{line}");
    }
    let claude = serde_json::json!({"type": "user", "message": {"content": "hi"}});
    assert_eq!(Agent::of_line(&claude), Some(Agent::Claude));
}

#[test]
fn a_gemini_chat_file_gives_the_whole_session_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session-2026-12-02T03-38-2b0be709.jsonl");
    std::fs::write(&path, GEMINI.join("\n")).unwrap();
    let found = Agent::of_transcript(&path);
    assert_eq!(found, Some((Agent::Gemini, "2b0be709-00c1-465e-9935-165dc0f2020d".into())));
    let other = dir.path().join("session-2026-12-02T03-38-ffffffff.jsonl");
    std::fs::write(&other, GEMINI.join("\n")).unwrap();
    assert_eq!(Agent::of_transcript(&other), None, "the name's id must start the file's");
}

#[test]
fn the_hook_context_gemini_adds_is_taken_out_of_the_prompt() {
    let prompt =
        "<hook_context>a &lt;b&gt;</hook_context>\n\n<hook_context>c</hook_context> fix it";
    assert_eq!(gemini::without_hook_context(prompt), "fix it");
    assert_eq!(gemini::without_hook_context("no context"), "no context");
    assert_eq!(gemini::without_hook_context("<hook_context>cut"), "<hook_context>cut");
}

#[test]
fn gemini_folders_are_those_of_the_project_and_its_subfolders() {
    let home = tempfile::tempdir().unwrap();
    let projects = r#"{"projects": {"/w/shop": "shop", "/w/shop/src": "src", "/w/shopping": "shopping", "/w/evil": "../x"}}"#;
    std::fs::write(home.path().join("projects.json"), projects).unwrap();
    for short in ["shop", "src", "shopping"] {
        std::fs::create_dir_all(home.path().join("tmp").join(short).join("chats")).unwrap();
    }
    let found = gemini::folders(home.path(), Path::new("/w/shop"));
    let tmp = home.path().join("tmp");
    assert_eq!(found, [tmp.join("shop/chats"), tmp.join("src/chats")]);
}

/// A resumed Gemini CLI session: the chat file goes on with the whole history set again, then
/// the new turn. The history adds nothing; the new turn is read once.
#[test]
fn a_resumed_gemini_chat_adds_only_the_new_turn() {
    let (_, before) = fold_all(GEMINI);
    let resumed = [
        r#"{"$set":{"sessionId":"2b0be709-00c1-465e-9935-165dc0f2020d"}}"#,
        r#"{"$set":{"messages":[{"id":"d049","type":"user","content":[{"text":"<session_context>\n- **Workspace Directories:**\n  - /tmp/gx/proj\n</session_context>"}]},{"id":"ed29","type":"gemini","content":"","toolCalls":[{"id":"run_1","name":"run_shell_command","args":{"command":"ls"}}]},{"id":"ae1c","type":"gemini","content":"All done."}]}}"#,
        r#"{"id":"1191","timestamp":"2026-12-02T03:52:31.071Z","type":"user","content":[{"text":"and again"}]}"#,
        r#"{"id":"11ad","timestamp":"2026-12-02T03:52:31.135Z","type":"gemini","content":"Again."}"#,
    ];
    let all: Vec<&str> = GEMINI.iter().copied().chain(resumed).collect();
    let (_, after) = fold_all(&all);
    let added: Vec<(Kind, &str)> =
        after[before.len()..].iter().map(|e| (e.kind, e.text.as_str())).collect();
    assert_eq!(added, [(Kind::Prompt, "and again"), (Kind::Assistant, "Again.")]);
    // Read from where an earlier import stopped, the same.
    let (_, tail) = fold_all(&resumed);
    let kinds: Vec<Kind> = tail.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [Kind::Meta, Kind::Prompt, Kind::Assistant], "the cwd, then the turn");
}

/// An OpenCode store as OpenCode 1.18.33 writes it (the tables and columns mem reads), with
/// the rows of a project's session (a prompt with mem's synthetic part, a shell call, an
/// answer, and an answer not finished yet), a subagent's session and another project's.
fn opencode_store(home: &Path, project: &Path) {
    let conn = rusqlite::Connection::open(home.join("opencode.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
           directory text NOT NULL, version text NOT NULL, time_created integer NOT NULL);
         CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
         CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
    )
    .unwrap();
    let dir = project.display().to_string();
    let sessions = [
        ("ses_b", None, dir.clone()),
        ("ses_a", Some("ses_b"), format!("{dir}/src")),
        ("ses_c", None, "/elsewhere".to_string()),
    ];
    for (id, parent, directory) in sessions {
        conn.execute(
            "INSERT INTO session VALUES (?1, 'p', ?2, ?3, '1.18.33', 1796323137000)",
            rusqlite::params![id, parent, directory],
        )
        .unwrap();
    }
    let cwd = serde_json::json!({ "cwd": dir, "root": dir });
    let messages = [
        ("msg_1", serde_json::json!({ "role": "user", "time": { "created": 1796323137698_i64 } })),
        (
            "msg_2",
            serde_json::json!({ "role": "assistant", "path": cwd, "modelID": "claude-sonnet-4-5",
                "time": { "created": 1796323139000_i64, "completed": 1796323140000_i64 } }),
        ),
        (
            "msg_3",
            serde_json::json!({ "role": "assistant", "time": { "created": 1796323141000_i64 } }),
        ),
    ];
    for (id, data) in messages {
        conn.execute(
            "INSERT INTO message VALUES (?1, 'ses_b', 1796323137698, 1796323137698, ?2)",
            rusqlite::params![id, data.to_string()],
        )
        .unwrap();
    }
    let parts = [
        ("prt_1", "msg_1", serde_json::json!({ "type": "text", "text": "run the tests" })),
        (
            "prt_1mem",
            "msg_1",
            serde_json::json!({ "type": "text", "text": "# Memory (from mem)", "synthetic": true }),
        ),
        ("prt_2", "msg_2", serde_json::json!({ "type": "step-start", "snapshot": "39e7" })),
        (
            "prt_3",
            "msg_2",
            serde_json::json!({ "type": "tool", "tool": "bash", "callID": "toolu_1", "state": {
                "status": "completed", "input": { "command": "cargo test", "description": "Test" },
                "output": "ok\n", "metadata": { "exit": 0 } } }),
        ),
        ("prt_4", "msg_2", serde_json::json!({ "type": "text", "text": "All tests pass." })),
        ("prt_5", "msg_3", serde_json::json!({ "type": "text", "text": "Still writing" })),
    ];
    for (id, message, data) in parts {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, 'ses_b', 1796323137698, 1796323137698, ?3)",
            rusqlite::params![id, message, data.to_string()],
        )
        .unwrap();
    }
}

#[test]
fn an_opencode_session_is_read_from_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = (dir.path().join("data"), dir.path().join("repo"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(project.join("src")).unwrap();
    let stored = Agent::OpenCode.spec().stored.unwrap();
    // No store yet: no session, no transcript.
    assert!((stored.sessions)(&home, &project).unwrap().is_empty());
    assert_eq!((stored.transcript)(&home, "ses_b").unwrap(), None);
    opencode_store(&home, &project);
    assert_eq!(
        (stored.sessions)(&home, &project).unwrap(),
        [
            ("ses_a".to_string(), Whose::Subagent),
            ("ses_b".to_string(), Whose::Project),
            ("ses_c".to_string(), Whose::OtherProject)
        ]
    );
    assert_eq!((stored.transcript)(&home, "ses_x").unwrap(), None);
    // The session, the prompt and the finished answer: the answer still being written is not
    // given (it may change).
    let lines = (stored.transcript)(&home, "ses_b").unwrap().unwrap();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let mut fold = Fold::default();
    let mut events = Vec::new();
    for line in &lines {
        let folded = fold.line(line).expect("OpenCode's line");
        assert_eq!(folded.agent, Agent::OpenCode);
        events.extend(folded.events);
    }
    assert_eq!(fold.session_id.as_deref(), Some("ses_b"));
    assert_eq!(fold.cwd.as_deref(), Some(project.to_str().unwrap()));
    let seen: Vec<(Kind, &str)> = events.iter().map(|e| (e.kind, e.text.as_str())).collect();
    assert_eq!(seen[1], (Kind::Prompt, "run the tests"), "mem's own part is left out: {seen:?}");
    let call = events.iter().find(|e| e.kind == Kind::ToolCall).unwrap();
    assert_eq!(call.command.as_deref(), Some("cargo test"));
    let result = events.iter().find(|e| e.kind == Kind::ToolResult).unwrap();
    assert_eq!((result.status, result.text.as_str()), (Some(0), "ok\n"));
    assert!(seen.contains(&(Kind::Assistant, "All tests pass.")), "{seen:?}");
    assert!(!seen.iter().any(|(_, t)| t.contains("Still writing")), "{seen:?}");
    // mem's transcript of it is named by the session.
    let name = Agent::of_transcript(Path::new("/r/.mem/transcripts/opencode/ses_b.jsonl"));
    assert_eq!(name, Some((Agent::OpenCode, "ses_b".to_string())));
}

/// Writes `text` at `path`, making its folders.
fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn claude_auto_memory_is_keyed_by_the_repository_top() {
    let dir = tempfile::tempdir().unwrap();
    let (home, repo) = (dir.path().join("claude"), dir.path().join("work/repo"));
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("src/deep")).unwrap();
    let folder = home.join("projects").join(claude::folder_name(&repo)).join("memory");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/native");
    for (from, to) in [
        ("claude-feedback_deploy_window.md", "feedback_deploy_window.md"),
        ("claude-project_release_freeze.md", "project_release_freeze.md"),
        ("claude-MEMORY.md", "MEMORY.md"),
    ] {
        put(&folder.join(to), &std::fs::read_to_string(data.join(from)).unwrap());
    }
    let spec = Agent::Claude.spec().memory.unwrap();
    // From a subfolder of the repository: the repository's folder.
    let project = repo.join("src/deep");
    let read = (spec.read)(&Sources { home: &home, user: None, project: Some(&project) });
    assert_eq!(read.warnings, Vec::<String>::new());
    let ids: Vec<(&str, Option<&str>)> =
        read.memories.iter().map(|m| (m.id.as_str(), m.kind.as_deref())).collect();
    // `metadata.type` and a top-level `type:` are both read.
    assert_eq!(
        ids,
        [("claude.deploy-window", Some("feedback")), ("claude.release-freeze", Some("project"))]
    );
    assert!(read.memories[0].text.contains("**Why:**"));
    assert_eq!(
        read.memories[0].title.as_deref(),
        Some("Deploys go out only Tuesday to Thursday, 10:00-16:00 UTC")
    );
    // The user's own settings may move it; a project's never are read.
    put(&repo.join(".claude/settings.json"), r#"{"autoMemoryDirectory": "/etc"}"#);
    let moved = dir.path().join("elsewhere");
    put(&moved.join("x.md"), "---\nname: moved\ntype: user\n---\nI am moved.\n");
    put(&home.join("settings.json"), r#"{"autoMemoryDirectory": "~/elsewhere"}"#);
    let read =
        (spec.read)(&Sources { home: &home, user: Some(dir.path()), project: Some(&project) });
    let ids: Vec<&str> = read.memories.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["claude.moved"]);
    // The user memory, CLAUDE.md in the configuration folder: its list items, kind `user`.
    put(&home.join("CLAUDE.md"), "# Me\n\n- I prefer small commits.\n");
    let read = (spec.read)(&Sources { home: &home, user: Some(dir.path()), project: None });
    let kinds: Vec<(&str, Option<&str>)> =
        read.memories.iter().map(|m| (m.text.as_str(), m.kind.as_deref())).collect();
    assert!(kinds.contains(&("I prefer small commits.", Some("user"))), "{kinds:?}");
}

#[test]
fn a_linked_worktree_shares_its_main_work_tree_s_memory() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main");
    let gitdir = main.join(".git/worktrees/wt");
    std::fs::create_dir_all(&gitdir).unwrap();
    std::fs::write(gitdir.join("commondir"), "../..\n").unwrap();
    let wt = dir.path().join("wt");
    put(&wt.join(".git"), &format!("gitdir: {}\n", gitdir.display()));
    let top = claude::repository_top(&wt.join("src")).unwrap();
    assert_eq!(top, main.canonicalize().unwrap());
}

#[test]
fn gemini_and_codex_memories() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/native");
    let home = dir.path().join("gemini");
    put(&home.join("GEMINI.md"), &std::fs::read_to_string(data.join("gemini-GEMINI.md")).unwrap());
    let spec = Agent::Gemini.spec().memory.unwrap();
    let read = (spec.read)(&Sources { home: &home, user: None, project: None });
    let texts: Vec<&str> = read.memories.iter().map(|m| m.text.as_str()).collect();
    // Only the lines under the heading save_memory wrote, when the file has it.
    assert_eq!(
        texts,
        [
            "The user's preferred test runner is nextest.",
            "The user writes commit messages in the imperative mood."
        ]
    );
    let id = &read.memories[0].id;
    assert!(id.starts_with("gemini.") && id.len() == "gemini.".len() + 10, "{id}");
    // A stable id: the same line, spaced otherwise, keeps it.
    assert_eq!(memory::short_hash("a  b"), memory::short_hash("a b"));

    let home = dir.path().join("codex");
    put(
        &home.join("memories/MEMORY.md"),
        &std::fs::read_to_string(data.join("codex-MEMORY.md")).unwrap(),
    );
    let spec = Agent::Codex.spec().memory.unwrap();
    let read = (spec.read)(&Sources { home: &home, user: None, project: None });
    let ids: Vec<&str> = read.memories.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["codex.memory.build", "codex.memory.tests"]);
    assert_eq!(Agent::of_layer("codex"), Some(Agent::Codex));
    assert_eq!(Agent::of_layer("opencode"), None);
}

#[test]
fn bad_memory_files_are_warnings_and_the_rest_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("memory");
    put(&folder.join("good.md"), "---\nname: good\ntype: user\n---\nA good memory.\n");
    put(&folder.join("huge.md"), &"x".repeat(memory::MAX_FILE_BYTES as usize + 1));
    std::fs::write(folder.join("latin1.md"), b"caf\xe9\n").unwrap();
    put(&folder.join("broken.md"), "---\nname: [unclosed\n---\nbody\n");
    put(&folder.join("twin.md"), "---\nname: good\n---\nAnother named good.\n");
    put(&dir.path().join("secret.md"), "outside\n");
    std::os::unix::fs::symlink(dir.path().join("secret.md"), folder.join("link.md")).unwrap();
    put(
        &folder.join("MEMORY.md"),
        "- [Good](good.md) — ok\n- [Gone](gone.md) — missing\n- [Pw](../../etc/passwd) — out\n",
    );
    let mut read = NativeRead::default();
    memory::read_folder(&folder, "claude", &mut read);
    let ids: Vec<&str> = read.memories.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["claude.good"]);
    let warned = read.warnings.join("\n");
    for name in ["huge.md", "latin1.md", "broken.md", "twin.md", "link.md", "gone.md", "passwd"] {
        assert!(warned.contains(name), "{name} not warned: {warned}");
    }
    assert_eq!(read.warnings.len(), 7, "{warned}");
}

/// A payload from a repository's `.claude/settings.json` is Copilot's when Copilot ran it
/// (its session state, or its ISO time and no permission mode); Claude Code's stays Claude
/// Code's, and the hooks of an agent no other runs are never asked.
#[test]
fn copilot_is_told_apart_in_claude_codes_hook_payloads() {
    let of = |agent: Agent, payload: serde_json::Value| {
        agent.of_hook_payload(payload.to_string().as_bytes())
    };
    let state = "/home/a/.copilot/session-state/3b0f/events.jsonl";
    let start = serde_json::json!({"hook_event_name": "SessionStart", "session_id": "3b0f",
        "timestamp": "2026-12-06T21:16:21.099Z", "cwd": "/p", "source": "new"});
    assert_eq!(of(Agent::Claude, start.clone()), Agent::Copilot);
    let stop = serde_json::json!({"hook_event_name": "Stop", "session_id": "3b0f",
        "timestamp": "2026-12-06T21:16:21.472Z", "transcript_path": state});
    assert_eq!(of(Agent::Claude, stop), Agent::Copilot);
    let claude = serde_json::json!({"hook_event_name": "Stop", "session_id": "c1",
        "transcript_path": "/home/a/.claude/projects/-p/c1.jsonl", "permission_mode": "default"});
    assert_eq!(of(Agent::Claude, claude), Agent::Claude);
    let claude_start = serde_json::json!({"hook_event_name": "SessionStart", "session_id": "c1",
        "transcript_path": "/home/a/.claude/projects/-p/c1.jsonl", "source": "startup"});
    assert_eq!(of(Agent::Claude, claude_start), Agent::Claude);
    // mem's OpenCode plugin sends an ISO time too: OpenCode's hooks are nobody else's.
    assert_eq!(of(Agent::OpenCode, start), Agent::OpenCode);
    assert_eq!(Agent::of_transcript(Path::new(state)), Some((Agent::Copilot, "3b0f".into())));
}

/// Copilot's events: the prompt as typed (not what hooks added), the call with its command and
/// result, the answer; hooks' own lines and the usage records add nothing.
#[test]
fn copilot_events_fold_into_a_turn() {
    let lines = [
        r#"{"type":"session.start","data":{"sessionId":"3b0f","startTime":"2026-12-06T21:16:20.378Z","selectedModel":"claude-sonnet-4","context":{"cwd":"/p"}},"id":"a","timestamp":"2026-12-06T21:16:20.590Z","parentId":null}"#,
        r#"{"type":"hook.end","data":{"hookType":"userPromptSubmitted","output":{"additionalContext":"MEM"}},"id":"b","timestamp":"2026-12-06T21:16:21.287Z","parentId":"a"}"#,
        r#"{"type":"user.message","data":{"content":"run it","transformedContent":"run it\n<system_reminder>MEM</system_reminder>"},"id":"c","timestamp":"2026-12-06T21:16:21.296Z","parentId":"b"}"#,
        r#"{"type":"assistant.message","data":{"model":"claude-sonnet-4","content":"","toolRequests":[{"toolCallId":"t1","name":"bash","arguments":{"command":"make test"}}]},"id":"d","timestamp":"2026-12-06T21:16:21.457Z","parentId":"c"}"#,
        r#"{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":false,"shellExecution":{"exitCode":2},"result":{"content":"1 failed"}},"id":"e","timestamp":"2026-12-06T21:16:21.500Z","parentId":"d"}"#,
        r#"{"type":"session.usage_record","data":{"usage":{}},"id":"f","timestamp":"2026-12-06T21:16:21.510Z","parentId":"e"}"#,
        r#"{"type":"assistant.message","data":{"model":"claude-sonnet-4","content":"One test fails.","toolRequests":[]},"id":"g","timestamp":"2026-12-06T21:16:21.600Z","parentId":"f"}"#,
    ];
    let mut fold = Fold::default();
    let mut seen = Vec::new();
    for line in lines {
        let line: serde_json::Value = serde_json::from_str(line).unwrap();
        for event in fold.line(&line).unwrap().events {
            seen.push((event.kind, event.command.unwrap_or(event.text), event.status));
        }
    }
    assert_eq!(fold.session_id.as_deref(), Some("3b0f"));
    assert_eq!(fold.cwd.as_deref(), Some("/p"));
    assert_eq!(
        seen,
        [
            (Kind::Meta, "cwd /p; model claude-sonnet-4".to_string(), None),
            (Kind::Prompt, "run it".to_string(), None),
            (Kind::ToolCall, "make test".to_string(), None),
            (Kind::ToolResult, "1 failed".to_string(), Some(2)),
            (Kind::Assistant, "One test fails.".to_string(), None),
        ]
    );
}
