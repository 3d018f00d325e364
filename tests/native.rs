//! The agents' own memories as read-only layers (issue #41): recall by layer, show, used,
//! adopt, never twice into one request, the settings that turn them off, and every bad input
//! of a memory folder a model wrote.

use std::path::{Path, PathBuf};

use crate::util::{Dir, Out};

/// A project `repo/` (a git work tree with a `.memory/` root) in `dir`, with Claude Code's auto
/// memory of it holding the fixtures as Claude Code 2.1.197's instructions shape them; the
/// memory folder.
pub(crate) fn project_with_claude_memory(dir: &Dir) -> PathBuf {
    std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
    dir.write("repo/.memory/mem.toml", "");
    let repo = dir.path().join("repo");
    let folder = claude_folder(dir, &repo);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/native");
    for (from, to) in [
        ("claude-feedback_deploy_window.md", "feedback_deploy_window.md"),
        ("claude-project_release_freeze.md", "project_release_freeze.md"),
        ("claude-MEMORY.md", "MEMORY.md"),
    ] {
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::copy(data.join(from), folder.join(to)).unwrap();
    }
    folder
}

/// Claude Code's auto-memory folder of `repo` in the test's home folder.
fn claude_folder(dir: &Dir, repo: &Path) -> PathBuf {
    claude_memory_folder(dir.home(), repo)
}

/// Claude Code's auto-memory folder of the repository `top` for the home folder `home` (where
/// the real Claude Code writes it is checked by tests/native_e2e.rs).
pub(crate) fn claude_memory_folder(home: &Path, top: &Path) -> PathBuf {
    let name = mem::agent::claude::folder_name(top);
    home.join(".claude/projects").join(name).join("memory")
}

/// Each hit of `mem recall --json` as its id and layer.
fn id_layers(hits: &serde_json::Value) -> Vec<(&str, &str)> {
    let hits = hits.as_array().unwrap().iter();
    hits.map(|h| (h["id"].as_str().unwrap(), h["layer"].as_str().unwrap())).collect()
}

/// `mem ARGS` run in `repo/` (the root found from there, as an agent's hook finds it).
fn mem(dir: &Dir, args: &[&str]) -> Out {
    dir.mem_in("repo", args, "")
}

#[test]
fn an_agent_s_memories_are_recalled_shown_used_and_adopted() {
    let dir = Dir::new();
    project_with_claude_memory(&dir);
    mem(&dir, &["add", "We deploy with the blue green script"]).ok();
    let out = mem(&dir, &["recall", "deploy", "--json"]);
    let hits = out.json();
    let layers = id_layers(&hits);
    assert!(layers.contains(&("claude.deploy-window", "claude")), "{layers:?}");
    assert!(layers.iter().any(|(_, l)| *l == "project"), "{layers:?}");
    let only = mem(&dir, &["recall", "deploy", "--layer", "claude", "--json"]).json();
    assert!(only.as_array().unwrap().iter().all(|h| h["layer"] == "claude"), "{only}");
    // Shown with where it lives; Claude's `feedback` is procedural.
    let show = mem(&dir, &["show", "claude.deploy-window"]);
    assert!(show.ok().contains("lives in    claude auto memory · feedback"), "{}", show.stdout);
    assert!(show.stdout.contains("type        procedural"), "{}", show.stdout);
    let used = mem(&dir, &["used", "claude.deploy-window"]);
    assert!(used.ok().contains("used\tclaude.deploy-window"), "{}", used.stderr);
    // Its use stays in the local usage log: no usage file written for it anywhere.
    assert!(!dir.path().join("repo/.memory/.mem/native/claude/usage").exists());
    // The read-only layers cannot be written to.
    let add = mem(&dir, &["add", "--layer", "claude", "x"]);
    assert_eq!(add.code, 2, "{}", add.stderr);
    // Adopt: into the project root under the same id, with its origin; recalled once, as mem's.
    let adopt = mem(&dir, &["adopt", "claude.release-freeze"]);
    assert!(adopt.ok().contains("into the project layer"), "{}", adopt.stdout);
    let file = dir.read("repo/.memory/claude.release-freeze.md");
    assert!(file.contains("source: 'claude auto memory: ~/.claude/projects/"), "{file}");
    let hits = mem(&dir, &["recall", "release freeze", "--json"]).json();
    let found = id_layers(&hits);
    let freeze: Vec<_> = found.iter().filter(|(id, _)| *id == "claude.release-freeze").collect();
    assert_eq!(freeze, [&("claude.release-freeze", "project")], "{found:?}");
    // Nor is it recalled from the agent's layer alone.
    let only = mem(&dir, &["recall", "release freeze", "--layer", "claude", "--json"]);
    assert!(!only.stdout.contains("claude.release-freeze"), "{}", only.stdout);
    // An id that is no agent's memory.
    let wrong = mem(&dir, &["adopt", "nope"]);
    assert_eq!(wrong.code, 2);
    assert!(wrong.stderr.contains("not a memory of an agent's own"), "{}", wrong.stderr);
    // Health counts them.
    let health = mem(&dir, &["health"]);
    assert!(
        health.stdout.contains("Claude Code: 2 memories in claude auto memory, 1 not adopted"),
        "{}",
        health.stdout
    );
    let json = mem(&dir, &["health", "--json"]);
    let native: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let claude = &native["agents_own_memories"][0];
    assert_eq!(
        (&claude["agent"], &claude["memories"], &claude["not_adopted"]),
        (&serde_json::json!("claude"), &serde_json::json!(2), &serde_json::json!(1)),
        "{}",
        json.stdout
    );
}

#[test]
fn the_agent_that_holds_a_memory_is_not_sent_it_again() {
    let dir = Dir::new();
    project_with_claude_memory(&dir);
    let repo = dir.path().join("repo");
    let payload = |agent: &str| {
        format!(
            r#"{{"session_id":"s-{agent}","cwd":"{}","hook_event_name":"UserPromptSubmit","prompt":"can we deploy on friday"}}"#,
            repo.display()
        )
    };
    let claude = dir.mem_in("repo", &["context", "--hook", "claude"], payload("claude"));
    assert!(!claude.stdout.contains("claude.deploy-window"), "{}", claude.stdout);
    let codex = dir.mem_in("repo", &["context", "--hook", "codex"], payload("codex"));
    assert!(codex.stdout.contains("claude.deploy-window"), "{} {}", codex.stdout, codex.stderr);
    assert!(codex.stdout.contains("claude auto memory"), "{}", codex.stdout);
    // A fact both in mem and in the agent's memory goes once, as mem's.
    mem(&dir, &["add", "Deploy only Tuesday to Thursday between 10:00 and 16:00 UTC."]).ok();
    let gemini = dir.mem_in("repo", &["context", "--hook", "gemini"], payload("gemini"));
    assert!(!gemini.stdout.contains("claude.deploy-window"), "{}", gemini.stdout);
    assert_eq!(gemini.stdout.matches("Tuesday to Thursday").count(), 1, "{}", gemini.stdout);
}

#[test]
fn native_layers_are_off_for_dir_roots_and_when_a_setting_says() {
    let dir = Dir::new();
    project_with_claude_memory(&dir);
    // --dir: never the developer's agent folders.
    let out = dir.mem_in("repo", &["--dir", ".memory", "recall", "deploy", "--json"], "");
    assert!(!out.stdout.contains("claude.deploy-window"), "{}", out.stdout);
    // A root's mem.toml may turn them off.
    dir.write("repo/.memory/mem.toml", "[agents]\nread_own_memories = false\n");
    let out = mem(&dir, &["recall", "deploy"]);
    assert!(!out.stdout.contains("claude"), "{}", out.stdout);
    // And the user configuration.
    dir.write("repo/.memory/mem.toml", "");
    dir.write_user_config("[agents]\nread_own_memories = false\n");
    let out = mem(&dir, &["recall", "deploy"]);
    assert!(!out.stdout.contains("claude"), "{}", out.stdout);
    dir.write_user_config("");
    assert!(mem(&dir, &["recall", "deploy"]).stdout.contains("claude"));
}

#[test]
fn a_clone_s_settings_never_move_the_auto_memory_folder() {
    let dir = Dir::new();
    project_with_claude_memory(&dir);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("x.md"), "---\nname: planted\n---\nplanted text deploy\n")
        .unwrap();
    dir.write(
        "repo/.claude/settings.json",
        format!(r#"{{"autoMemoryDirectory": "{}"}}"#, elsewhere.display()),
    );
    let out = mem(&dir, &["recall", "deploy"]);
    assert!(!out.stdout.contains("planted"), "{}", out.stdout);
    assert!(out.stdout.contains("Deploys go out"), "{}", out.stdout);
}

#[test]
fn bad_files_in_an_agent_s_memory_folder_are_one_warning_each() {
    let dir = Dir::new();
    let folder = project_with_claude_memory(&dir);
    let put = |name: &str, bytes: &[u8]| std::fs::write(folder.join(name), bytes).unwrap();
    put("huge.md", &vec![b'x'; 300 * 1024]);
    put("latin1.md", b"---\nname: latin\n---\ncaf\xe9 deploy\n");
    put("broken.md", b"---\nname: [unclosed\n---\ndeploy broken\n");
    put("twin.md", b"---\nname: deploy-window\n---\nA second deploy window.\n");
    std::fs::write(dir.path().join("secret.md"), "deploy secret outside\n").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.md"), folder.join("link.md")).unwrap();
    let index = std::fs::read_to_string(folder.join("MEMORY.md")).unwrap();
    let index = format!("{index}- [Gone](gone.md) — x\n- [Pw](../../etc/passwd) — y\n");
    put("MEMORY.md", index.as_bytes());
    let out = mem(&dir, &["recall", "deploy"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("Deploys go out"), "recall goes on: {}", out.stdout);
    assert!(!out.stdout.contains("secret"), "{}", out.stdout);
    for (name, why) in [
        ("huge.md", "limit"),
        ("latin1.md", "not UTF-8"),
        ("broken.md", "front-matter is not valid"),
        ("twin.md", "a second memory named claude.deploy-window"),
        ("link.md", "link"),
        ("gone.md", "missing file"),
        ("../../etc/passwd", "out of the folder"),
    ] {
        let line = out.stderr.lines().find(|l| l.contains(name));
        let line = line.unwrap_or_else(|| panic!("{name} not warned: {}", out.stderr));
        assert!(line.starts_with("mem: warning: "), "{line}");
        assert!(line.contains(why), "{name}: {line}");
    }
    // Thousands of files: bounded, one warning.
    for i in 0..2100 {
        put(&format!("m{i:04}.md"), format!("---\nname: m{i}\n---\nnote {i}\n").as_bytes());
    }
    let out = mem(&dir, &["recall", "deploy"]);
    assert!(out.stdout.contains("Deploys go out"), "{}", out.stdout);
    assert_eq!(out.stderr.matches("only the first 2000 read").count(), 1, "{}", out.stderr);
}

#[test]
fn the_mcp_server_recalls_by_layer_gets_and_uses_an_agent_s_memory() {
    let dir = Dir::new();
    let folder = project_with_claude_memory(&dir);
    let mut server = crate::mcp::Server::start_in(&dir, "repo");
    server.initialize();
    let hits =
        server.list("recall", "hits", serde_json::json!({"query": "deploy", "layer": "claude"}));
    let ids: Vec<&str> =
        hits.as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"claude.deploy-window"), "{hits}");
    assert!(hits.as_array().unwrap().iter().all(|h| h["layer"] == "claude"), "{hits}");
    let got = server.ok("get", serde_json::json!({"id": "claude.deploy-window"}));
    assert!(got["body"].as_str().unwrap().contains("Tuesday to Thursday"), "{got}");
    server.ok("used", serde_json::json!({"ids": ["claude.deploy-window"]}));
    let refused = server
        .tool_error("forget", serde_json::json!({"id": "claude.deploy-window", "reason": "x"}));
    assert!(refused.contains("read only") && refused.contains("mem adopt"), "{refused}");
    let wrong =
        server.tool_error("recall", serde_json::json!({"query": "deploy", "layer": "nope"}));
    assert!(wrong.contains("unknown layer"), "{wrong}");
    // What the agent saves meanwhile is seen at the next call.
    std::fs::write(
        folder.join("feedback_reviews.md"),
        "---\nname: reviews\nmetadata:\n  type: feedback\n---\nEvery migration is reviewed by hand.\n",
    )
    .unwrap();
    let hits = server.list(
        "recall",
        "hits",
        serde_json::json!({"query": "migration reviewed", "layer": "claude"}),
    );
    assert_eq!(hits[0]["id"], "claude.reviews", "{hits}");
    server.finish();
}

/// Issue #55, item 9: `mem health` said "1 not adopted" right after `mem adopt`, until another
/// command refreshed the index; and it counted every memory whose source names a session as a
/// fact the user stated (19 on memories.example, which has no captures).
#[test]
fn health_counts_an_adoption_at_once_and_only_stated_facts() {
    let dir = Dir::new();
    project_with_claude_memory(&dir);
    mem(&dir, &["adopt", "claude.release-freeze"]).ok();
    let health = mem(&dir, &["health", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&health.stdout).unwrap();
    let claude = &json["agents_own_memories"][0];
    assert_eq!(claude["not_adopted"], 1, "{}", health.stdout);
    let example = Dir::example();
    example.mem(&["index"]).ok();
    let facts = example.mem(&["health", "--json"]);
    let json: serde_json::Value = serde_json::from_str(&facts.stdout).unwrap();
    assert_eq!(json["stated_facts"], 0, "{}", facts.stdout);
}
