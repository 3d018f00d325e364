use crate::util::Dir;

/// A throw-away repository: a README, docs, dependencies with Markdown of their own.
fn repository() -> Dir {
    let dir = Dir::new();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir.write("README.md", "# Shop\n\nNo front-matter here.\n");
    dir.write("docs/guide.md", "# Guide\n");
    dir.write("node_modules/left-pad/README.md", "# left-pad\n");
    dir.write("src/app/main.rs", "fn main() {}\n");
    dir
}

#[test]
fn a_project_root_keeps_memories_in_its_folder_and_never_reads_the_repository() {
    let repo = repository();
    let init = repo.mem_in("src/app", &["init", "--project"], "");
    assert!(init.ok().starts_with("initialised project memory root "), "{}", init.stdout);
    assert!(repo.path().join(".memory/mem.toml").is_file());
    assert_eq!(repo.read(".memory/.gitignore"), ".mem/\n");

    let added =
        repo.mem_in("src/app", &["add", "--json", "Decision: the shop uses Postgres 16"], "");
    let path = added.json()["path"].as_str().unwrap().to_string();
    assert!(repo.path().join(".memory").join(&path).is_file(), "{path}");
    let listed = repo.mem_in("docs", &["list", "--json"], "").json();
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 0, "{health:?}");
    assert!(health.stdout.contains("✓ files     every memory file parses"), "{}", health.stdout);
    let found = repo.mem_in("node_modules", &["recall", "--json", "postgres"], "").json();
    assert_eq!(crate::util::ids(&found).len(), 1, "{found}");
    // The repository's own files are untouched.
    assert_eq!(repo.read("README.md"), "# Shop\n\nNo front-matter here.\n");
    assert!(!repo.path().join(".mem").exists());

    // Twice: nothing overwritten.
    let again = repo.mem_in(".", &["init", "--project"], "");
    assert!(again.ok().contains("is already a memory root"), "{}", again.stdout);
}

#[test]
fn init_at_the_top_of_a_repository_warns_and_points_to_the_project_folder() {
    let repo = repository();
    let out = repo.mem_in(".", &["init"], "");
    out.ok();
    assert!(out.stderr.contains("`mem init --project`"), "{}", out.stderr);
    let out = repo.mem_in(".", &["init", "--project", "elsewhere"], "");
    assert_eq!(out.code, 2, "{out:?}");
}

/// A Claude Code transcript of one short session.
fn claude_transcript(dir: &Dir, session: &str) -> std::path::PathBuf {
    let lines = [
        r#"{"type":"user","sessionId":"s","cwd":"/repo","timestamp":"2026-11-29T10:00:00Z","message":{"role":"user","content":"Move the orders table to Postgres 16"}}"#,
        r#"{"type":"assistant","timestamp":"2026-11-29T10:30:00Z","message":{"role":"assistant","content":[{"type":"text","text":"The orders table now lives in Postgres 16."}]}}"#,
    ];
    dir.write(&format!("transcripts/{session}.jsonl"), lines.join("\n") + "\n")
}

fn payload(event: &str, session: &str, cwd: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","hook_event_name":"{event}","cwd":{}{extra}}}"#,
        serde_json::to_string(cwd.to_str().unwrap()).unwrap()
    )
}

/// The `additionalContext` of a hook's answer, checking the answer's shape.
fn additional_context(stdout: &str, event: &str) -> String {
    let answer: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("hook stdout is not JSON ({e}): {stdout}"));
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], event, "{answer}");
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
}

#[test]
fn claude_hooks_capture_quietly_and_answer_with_additional_context() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo.mem_in(
        ".",
        &["add", "--type", "semantic", "The orders service stores orders in Postgres 16"],
        "",
    )
    .ok();
    let cwd = repo.path().join("src/app");
    let transcript = claude_transcript(&repo, "c1");
    let extra = format!(
        r#","transcript_path":{},"stop_hook_active":false"#,
        serde_json::to_string(transcript.to_str().unwrap()).unwrap()
    );

    // Stop: nothing on stdout, exit 0, the session in the project folder.
    let stop = repo.mem_in(
        "src/app",
        &["capture", "--hook", "claude"],
        payload("Stop", "c1", &cwd, &extra),
    );
    assert_eq!((stop.code, stop.stdout.as_str()), (0, ""), "{stop:?}");
    assert!(repo.path().join(".memory/sessions/session-c1.md").is_file());

    // SessionStart: the key memories and the last sessions.
    let start = repo.mem_in(
        "src/app",
        &["context", "--hook", "claude"],
        payload("SessionStart", "c2", &cwd, r#","source":"startup""#),
    );
    assert_eq!(start.code, 0, "{start:?}");
    let text = additional_context(&start.stdout, "SessionStart");
    assert!(text.contains("## Key memories") && text.contains("Postgres 16"), "{text}");
    assert!(text.contains("## Recent sessions") && text.contains("session-c1"), "{text}");

    // UserPromptSubmit: the prompt's memories only; nothing for an unrelated prompt.
    let prompt = repo.mem_in(
        "src/app",
        &["context", "--hook", "claude"],
        payload(
            "UserPromptSubmit",
            "c2",
            &cwd,
            r#","prompt":"which Postgres version stores the orders?""#,
        ),
    );
    let text = additional_context(&prompt.stdout, "UserPromptSubmit");
    assert!(text.contains("## For the task") && text.contains("Postgres 16"), "{text}");
    assert!(!text.contains("## Key memories"), "{text}");
    let unrelated = repo.mem_in(
        "src/app",
        &["context", "--hook", "claude"],
        payload("UserPromptSubmit", "c2", &cwd, r#","prompt":"best tulip bulbs for a balcony""#),
    );
    assert_eq!((unrelated.code, unrelated.stdout.as_str()), (0, ""), "{unrelated:?}");
}

#[test]
fn codex_capture_finds_the_rollout_by_session_id() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let id = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5";
    let cwd = repo.path().join("src");
    let lines = [
        format!(
            r#"{{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{{"id":"{id}","timestamp":"2025-10-29T00:59:38.308Z","cwd":{},"cli_version":"0.46.0"}}}}"#,
            serde_json::to_string(cwd.to_str().unwrap()).unwrap()
        ),
        r#"{"timestamp":"2025-10-29T00:59:40.000Z","type":"event_msg","payload":{"type":"user_message","message":"create hello.txt","kind":"plain"}}"#.to_string(),
        r#"{"timestamp":"2025-10-29T01:00:03.100Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Created hello.txt."}]}}"#.to_string(),
    ];
    let rollout = repo
        .home()
        .join(format!(".codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-{id}.jsonl"));
    std::fs::create_dir_all(rollout.parent().unwrap()).unwrap();
    std::fs::write(&rollout, lines.join("\n") + "\n").unwrap();

    // A Stop hook whose transcript_path is null.
    let stop = repo.mem_in(
        "src",
        &["capture", "--hook", "codex"],
        payload("Stop", id, &cwd, r#","transcript_path":null,"model":"gpt-5""#),
    );
    assert_eq!((stop.code, stop.stdout.as_str()), (0, ""), "{stop:?}");
    let memory = repo.read(&format!(".memory/sessions/session-{id}.md"));
    assert!(memory.contains("create hello.txt"), "{memory}");

    // Codex's notify: the payload as the last argument, no stdin.
    let notify = format!(
        r#"{{"type":"agent-turn-complete","thread-id":"{id}","turn-id":"1","cwd":{},"input-messages":["create hello.txt"],"last-assistant-message":"Created hello.txt."}}"#,
        serde_json::to_string(cwd.to_str().unwrap()).unwrap()
    );
    let out = repo.mem_in("src", &["capture", "--hook", "codex", &notify], "");
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    let log = repo.read(".memory/.mem/capture.log");
    assert_eq!(log.lines().filter(|l| l.contains(r#""status":"ok""#)).count(), 2, "{log}");
}

#[test]
fn a_failing_hook_exits_0_and_is_logged_for_health() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let cwd = repo.path().join("src");
    let missing = r#","transcript_path":"/nowhere/x.jsonl""#;
    for agent in ["claude", "codex"] {
        let out =
            repo.mem_in("src", &["capture", "--hook", agent], payload("Stop", "f1", &cwd, missing));
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
        assert!(out.stderr.contains("/nowhere/x.jsonl"), "{}", out.stderr);
    }
    let context = repo.mem_in("src", &["context", "--hook", "claude"], "not json at all");
    assert_eq!(context.code, 0, "{context:?}");
    // Outside hook mode, the same failure is exit status 2.
    let plain = repo.mem_in("src", &["capture"], payload("Stop", "f1", &cwd, missing));
    assert_eq!(plain.code, 2, "{plain:?}");
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 1, "{health:?}");
    assert!(health.stdout.contains("✗ capture"), "{}", health.stdout);
}
