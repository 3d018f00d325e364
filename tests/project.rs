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

    // UserPromptSubmit: the prompt's memories only (of another session: this one's context
    // holds them already); nothing for an unrelated prompt.
    let prompt = repo.mem_in(
        "src/app",
        &["context", "--hook", "claude"],
        payload(
            "UserPromptSubmit",
            "c3",
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
    // A folder where the transcript should be: a failure (a missing one is nothing yet).
    let folder = cwd.to_str().unwrap();
    let not_a_file = format!(r#","transcript_path":{}"#, serde_json::to_string(folder).unwrap());
    let not_a_file = not_a_file.as_str();
    for agent in ["claude", "codex"] {
        let out = repo.mem_in(
            "src",
            &["capture", "--hook", agent],
            payload("Stop", "f1", &cwd, not_a_file),
        );
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
        assert!(out.stderr.contains("it is not a regular file but a folder"), "{}", out.stderr);
    }
    let context = repo.mem_in("src", &["context", "--hook", "claude"], "not json at all");
    assert_eq!(context.code, 0, "{context:?}");
    // Outside hook mode, the same failure is exit status 2.
    let plain = repo.mem_in("src", &["capture"], payload("Stop", "f1", &cwd, not_a_file));
    assert_eq!(plain.code, 2, "{plain:?}");
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 1, "{health:?}");
    assert!(health.stdout.contains("✗ capture"), "{}", health.stdout);
}

/// The commands of `event` in a settings or hooks.json file.
fn hook_commands(settings: &serde_json::Value, event: &str) -> Vec<String> {
    settings["hooks"][event]
        .as_array()
        .map(|groups| {
            groups
                .iter()
                .flat_map(|g| g["hooks"].as_array().unwrap().iter())
                .map(|h| h["command"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Runs a hook command the way both agents do: `sh -c`, in `cwd`, the payload on stdin.
fn run_hook(repo: &Dir, command: &str, cwd: &std::path::Path, payload: &str) -> crate::util::Out {
    let mut cmd = std::process::Command::new("sh");
    // `mem` on PATH, as the project's configuration names it.
    let folder = std::path::Path::new(crate::util::bin()).parent().unwrap().display().to_string();
    let path = format!("{folder}:{}", std::env::var("PATH").unwrap_or_default());
    cmd.arg("-c").arg(command).current_dir(cwd).env("HOME", repo.home()).env("PATH", path);
    crate::util::run_with_stdin(&mut cmd, payload)
}

#[test]
fn setup_wires_both_agents_into_a_repository_and_is_undone_by_remove() {
    let repo = repository();
    let users_settings = r#"{
  "permissions": { "allow": ["Bash(cargo test)"] },
  "hooks": { "Stop": [ { "hooks": [ { "type": "command", "command": "notify-send done" } ] } ] }
}
"#;
    repo.write(".claude/settings.json", users_settings);
    let users_mcp =
        "{\n  \"mcpServers\": {\n    \"db\": {\n      \"command\": \"pg-mcp\"\n    }\n  }\n}\n";
    repo.write(".mcp.json", users_mcp);
    let users_codex = "# mine\n[mcp_servers.db]\ncommand = \"pg-mcp\"\n";
    repo.write(".codex/config.toml", users_codex);

    // A dry run shows the change and writes nothing.
    let dry = repo.mem_in("src", &["setup", "claude", "--scope", "project", "--dry-run"], "");
    assert!(dry.ok().contains("+      \"command\": \""), "{}", dry.stdout);
    assert!(dry.stdout.contains("dry run: nothing written"), "{}", dry.stdout);
    assert_eq!(repo.read(".claude/settings.json"), users_settings);
    assert!(!repo.path().join(".memory").exists());

    let claude = repo.mem_in("src", &["setup", "claude", "--scope", "project"], "");
    assert!(claude.ok().contains("set up mem in Claude Code"), "{}", claude.stdout);
    let codex = repo.mem_in("src", &["setup", "codex"], "");
    assert!(codex.ok().contains("/hooks"), "{}", codex.stdout);
    assert!(repo.path().join(".memory/mem.toml").is_file());
    // Twice: nothing to change.
    let again = repo.mem_in(".", &["setup", "claude", "--scope", "project"], "");
    assert!(again.ok().contains("already set up; nothing to change"), "{}", again.stdout);
    let again = repo.mem_in(".", &["setup", "codex"], "");
    assert!(again.ok().contains("already set up; nothing to change"), "{}", again.stdout);

    let settings: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    assert_eq!(settings["permissions"]["allow"][0], "Bash(cargo test)");
    assert_eq!(hook_commands(&settings, "Stop")[0], "notify-send done");
    let mcp: serde_json::Value = serde_json::from_str(&repo.read(".mcp.json")).unwrap();
    assert_eq!(mcp["mcpServers"]["db"]["command"], "pg-mcp");
    assert_eq!(mcp["mcpServers"]["mem"]["args"][0], "mcp");
    let config = repo.read(".codex/config.toml");
    assert!(config.contains("[mcp_servers.mem]") && config.contains("env_vars = ["), "{config}");
    assert!(config.contains("[mcp_servers.db]\ncommand = \"pg-mcp\"\n"), "{config}");

    // Claude Code's hooks, run as Claude Code runs them.
    repo.mem_in(
        ".",
        &["add", "--type", "semantic", "The orders service stores orders in Postgres 16"],
        "",
    )
    .ok();
    let cwd = repo.path().join("src");
    let transcript = claude_transcript(&repo, "cl-1");
    let with_transcript = format!(
        r#","transcript_path":{}"#,
        serde_json::to_string(transcript.to_str().unwrap()).unwrap()
    );
    let start = &hook_commands(&settings, "SessionStart")[0];
    let out = run_hook(
        &repo,
        start,
        &cwd,
        &payload(
            "SessionStart",
            "cl-1",
            &cwd,
            &format!("{with_transcript},\"source\":\"startup\""),
        ),
    );
    assert!(additional_context(&out.stdout, "SessionStart").contains("Postgres 16"), "{out:?}");
    // (In another session: cl-1's context holds the memory since its start.)
    let prompt = &hook_commands(&settings, "UserPromptSubmit")[0];
    let extra = r#","prompt":"which Postgres version stores the orders?""#;
    let out = run_hook(&repo, prompt, &cwd, &payload("UserPromptSubmit", "cl-0", &cwd, extra));
    assert!(additional_context(&out.stdout, "UserPromptSubmit").contains("Postgres 16"), "{out:?}");
    for event in ["Stop", "SessionEnd"] {
        let commands = hook_commands(&settings, event);
        let ours = commands.iter().find(|c| c.contains("--hook claude")).unwrap();
        let extra = format!(r#"{with_transcript},"stop_hook_active":false,"reason":"exit""#);
        let out = run_hook(&repo, ours, &cwd, &payload(event, "cl-1", &cwd, &extra));
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{event}: {out:?}");
    }
    assert!(repo.path().join(".memory/sessions/session-cl-1.md").is_file());

    // Codex's hooks, with and without a transcript path.
    let hooks: serde_json::Value = serde_json::from_str(&repo.read(".codex/hooks.json")).unwrap();
    assert!(hook_commands(&hooks, "SessionEnd").is_empty(), "Codex has no SessionEnd hook");
    let out = run_hook(
        &repo,
        &hook_commands(&hooks, "SessionStart")[0],
        &cwd,
        &payload(
            "SessionStart",
            "cx-1",
            &cwd,
            r#","transcript_path":null,"source":"startup","model":"gpt-5""#,
        ),
    );
    assert!(
        additional_context(&out.stdout, "SessionStart").contains("## Recent sessions"),
        "{out:?}"
    );
    let stop = &hook_commands(&hooks, "Stop")[0];
    let codex_transcript = claude_transcript(&repo, "cx-2");
    let extra = format!(
        r#","transcript_path":{},"turn_id":"1","stop_hook_active":false,"last_assistant_message":"done""#,
        serde_json::to_string(codex_transcript.to_str().unwrap()).unwrap()
    );
    let out = run_hook(&repo, stop, &cwd, &payload("Stop", "cx-2", &cwd, &extra));
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    // Codex runs the hooks once the user trusts them (`/hooks`), which it records in the
    // user's config.toml; until then health says so.
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 1, "{health:?}");
    assert!(health.stdout.contains("Codex has not trusted these hooks yet"), "{health:?}");
    let file = repo.path().join(".codex/hooks.json");
    let trusted: String = ["session_start", "user_prompt_submit", "stop"]
        .iter()
        .map(|event| {
            format!(
                "[hooks.state.\"{}:{event}:0:0\"]\ntrusted_hash = \"sha256:0\"\n",
                file.display()
            )
        })
        .collect();
    let config = repo.home().join(".codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(config, trusted).unwrap();
    let health = repo.mem_in(".", &["health"], "");
    assert_eq!(health.code, 0, "{health:?}");
    // A null transcript path and no rollout: a logged failure, still exit 0 and no stdout.
    let out =
        run_hook(&repo, stop, &cwd, &payload("Stop", "cx-3", &cwd, r#","transcript_path":null"#));
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{out:?}");
    assert!(
        out.stderr.contains("no transcript of session cx-3 is in the agents' folders"),
        "{}",
        out.stderr
    );

    // The repository's Markdown is untouched and not indexed.
    let listed = repo.mem_in(".", &["list", "--json"], "").json();
    assert!(
        listed.as_array().unwrap().iter().all(|m| !m["path"].as_str().unwrap().contains("README"))
    );
    assert_eq!(repo.read("README.md"), "# Shop\n\nNo front-matter here.\n");

    // Removed: the user's own configuration as it was.
    repo.mem_in(".", &["setup", "claude", "--scope", "project", "--remove"], "").ok();
    repo.mem_in(".", &["setup", "codex", "--remove"], "").ok();
    let restored: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    assert_eq!(restored, serde_json::from_str::<serde_json::Value>(users_settings).unwrap());
    assert_eq!(repo.read(".mcp.json"), users_mcp);
    assert_eq!(repo.read(".codex/config.toml"), users_codex);
    assert!(!repo.path().join(".codex/hooks.json").exists());
}

#[test]
fn the_user_layer_is_searched_beside_the_project_and_labelled() {
    let repo = repository();
    let user_root = repo.home().join("user-memory");
    repo.write_user_config(&format!("[layers]\nuser = {:?}\n", user_root.to_str().unwrap()));
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo.mem_in("src", &["add", "The orders service stores orders in Postgres 16"], "").ok();
    let added = repo.mem_in(
        "src",
        &[
            "add",
            "--layer",
            "user",
            "--json",
            "I want terse commit messages in the imperative mood",
        ],
        "",
    );
    let path = added.json()["path"].as_str().unwrap().to_string();
    assert!(user_root.join(&path).is_file(), "written to the user root: {path}");
    assert!(user_root.join("mem.toml").is_file(), "the user root was created");

    let hits = repo.mem_in("src", &["recall", "--json", "terse commit messages"], "").json();
    assert_eq!(hits[0]["layer"], "user", "{hits}");
    let hits = repo.mem_in("src", &["recall", "--json", "orders Postgres"], "").json();
    assert_eq!(hits[0]["layer"], "project", "{hits}");

    // The same memory text in both layers: the project's comes first.
    repo.mem_in(".", &["add", "Run cargo fmt before every commit"], "").ok();
    repo.mem_in(".", &["add", "--layer", "user", "Run cargo fmt before every commit"], "").ok();
    let hits = repo.mem_in(".", &["recall", "--json", "cargo fmt before a commit"], "").json();
    let layers: Vec<&str> =
        hits.as_array().unwrap().iter().map(|h| h["layer"].as_str().unwrap()).collect();
    assert_eq!(&layers[..2], ["project", "user"], "{hits}");
    let table = repo.mem_in(".", &["recall", "cargo fmt before a commit"], "");
    assert!(table.ok().contains("layer"), "{}", table.stdout);

    // Session start: the user's key memories too, labelled.
    let cwd = repo.path().join("src");
    let start = repo.mem_in(
        "src",
        &["context", "--hook", "claude"],
        payload("SessionStart", "u1", &cwd, ""),
    );
    let text = additional_context(&start.stdout, "SessionStart");
    assert!(text.contains("Postgres 16"), "{text}");
    assert!(text.contains("terse commit messages") && text.contains("user, `"), "{text}");

    // The MCP server, started in the project as an agent starts it, searches both.
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    let hits =
        server.list("recall", "hits", serde_json::json!({ "query": "terse commit messages" }));
    assert_eq!(hits[0]["layer"], "user", "{hits}");
    let written = server.ok(
        "remember",
        serde_json::json!({ "text": "I review diffs in a split view", "layer": "user" }),
    );
    let id = written["id"].as_str().unwrap().to_string();
    assert!(user_root.join(written["path"].as_str().unwrap()).is_file(), "{written}");
    let got = server.ok("get", serde_json::json!({ "id": id }));
    assert_eq!(got["id"], id.as_str());
    let used = server.ok("used", serde_json::json!({ "ids": [id] }));
    assert_eq!(used["used"][0]["id"], id.as_str());
    server.finish();

    // A root given with --dir is searched alone.
    let alone = repo.mem(&["recall", "--json", "terse commit messages"]);
    assert_eq!(alone.code, 1, "{alone:?}");
}

#[test]
fn without_a_user_layer_add_to_it_says_how_to_name_one() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let out = repo.mem_in(".", &["add", "--layer", "user", "terse commits"], "");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("[layers] user"), "{}", out.stderr);
    let hits = repo.mem_in(".", &["add", "Orders live in Postgres"], "");
    hits.ok();
    let json = repo.mem_in(".", &["recall", "--json", "orders"], "").json();
    // Each hit names its layer, even with one root (issue #41).
    assert_eq!(json[0]["layer"], "project", "{json}");
}

/// Defect 12 of the second probe: a `[layers] user` path that is a file, holds a bad
/// `mem.toml`, or cannot be created made recall, add, the hooks and `mem mcp` fail in every
/// project, with a message that did not name the configuration file. The project is served
/// alone, with one warning that names the file and the fix.
#[test]
fn a_broken_user_layer_leaves_the_project_working() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo.mem_in(".", &["add", "Orders live in Postgres 16"], "").ok();
    let afile = repo.home().join("afile");
    std::fs::write(&afile, "not a folder\n").unwrap();
    let bad_toml = repo.home().join("bad-root");
    std::fs::create_dir_all(&bad_toml).unwrap();
    std::fs::write(bad_toml.join("mem.toml"), "[ranking\n").unwrap();
    for (turn, user) in [afile.clone(), bad_toml, afile.join("below")].iter().enumerate() {
        repo.write_user_config(&format!("[layers]\nuser = {:?}\n", user.to_str().unwrap()));
        let config = repo.home().join("mem/config.toml");
        let warning = format!("([layers] user in {})", config.display());
        let hits = repo.mem_in("src", &["recall", "--json", "orders postgres"], "");
        assert_eq!(hits.json()[0]["title"], "Orders live in Postgres 16", "{}", hits.stderr);
        assert!(hits.stderr.contains(&warning), "{}: {}", user.display(), hits.stderr);
        assert_eq!(hits.stderr.matches("warning: the user layer").count(), 1, "{}", hits.stderr);
        repo.mem_in("src", &["add", "Payments use Stripe"], "").ok();
        let out = repo.mem_in("src", &["add", "--layer", "user", "terse commits"], "");
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("cannot be used"), "{}", out.stderr);
        let cwd = repo.path().join("src");
        let start = repo.mem_in(
            "src",
            &["context", "--hook", "claude"],
            payload(
                "UserPromptSubmit",
                &format!("u{turn}"),
                &cwd,
                &format!(r#","prompt":"where do orders live","prompt_id":"p{turn}""#),
            ),
        );
        assert!(start.stdout.contains("Postgres 16"), "{}{}", start.stdout, start.stderr);
        let mut server = crate::mcp::Server::start_in(&repo, "src");
        server.initialize();
        let hits = server.list("recall", "hits", serde_json::json!({ "query": "orders postgres" }));
        assert_eq!(hits[0]["title"], "Orders live in Postgres 16", "{hits}");
        let refused =
            server.tool_error("remember", serde_json::json!({ "text": "x y z", "layer": "user" }));
        assert!(refused.contains("cannot be used"), "{refused}");
        server.finish();
    }
    assert_eq!(std::fs::read_to_string(&afile).unwrap(), "not a folder\n");
}

/// Defect 16 of the second probe (one item): after the root of a running `mem mcp` was
/// renamed, `remember` re-created the old path without a `mem.toml` and reported ok.
#[test]
fn a_server_whose_root_is_gone_answers_an_error_and_writes_nothing() {
    let repo = repository();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    server.ok("remember", serde_json::json!({ "text": "Orders live in Postgres 16" }));
    let root = repo.path().join(".memory");
    let moved = repo.path().join("memory-moved");
    std::fs::rename(&root, &moved).unwrap();
    let refused =
        server.tool_error("remember", serde_json::json!({ "text": "Payments use Stripe" }));
    assert!(refused.contains("is gone (moved or deleted since this server started)"), "{refused}");
    let refused = server.tool_error("recall", serde_json::json!({ "query": "orders" }));
    assert!(refused.contains("is gone"), "{refused}");
    server.finish();
    assert!(!root.exists(), "the old path is not made again");
}
