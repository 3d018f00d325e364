//! GitHub Copilot CLI, end to end: the real agent (the pinned version that
//! `scripts/e2e-agents.sh` installs) with its own-model settings against the model stand-in
//! (Anthropic Messages), the folder trusted for each session: in a repository set up for Claude
//! Code only (Copilot runs its hooks too), and after `mem setup copilot` beside Claude Code's.

use serde_json::{Value, json};

use crate::agents_e2e::{
    PNPM, Project, StandIn, TOKEN, agents, assert_one_turn_logged, memory_blocks,
};

/// The capture log's entries, parsed.
fn capture_log(project: &Project) -> Vec<Value> {
    let log = std::fs::read_to_string(project.repo().join(".memory/.mem/capture.log"))
        .unwrap_or_default();
    log.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The session digests of the project.
fn digests(project: &Project) -> Vec<String> {
    let sessions = project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/"));
    sessions.map(|(_, text)| text).collect()
}

/// Before: every Copilot session there logged capture errors, `mem health` failed, sessions
/// were "unknown, 0 turns", and the start memories never reached the model (Copilot drops the
/// nested answer) though recorded as sent.
#[test]
fn copilot_in_a_repository_set_up_for_claude_code_only_gets_memories_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "bash", "input": { "command": command, "description": "list" },
        "text": "The web client uses pnpm.",
    }));
    let out = project.copilot(&model, "which package manager do we use", &[]);
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    assert!(conversation[0].contains(PNPM), "{}", conversation[0]);
    assert_eq!(memory_blocks(&conversation[0]).len(), 1, "{}", conversation[0]);
    let log = capture_log(&project);
    assert!(!log.is_empty() && log.iter().all(|e| e["status"] == "ok"), "{log:?}");
    assert_one_turn_logged(&project, "which package manager do we use", "copilot");
    let digests = digests(&project);
    assert_eq!(digests.len(), 1, "{digests:?}");
    assert!(digests[0].contains("# Session: which package manager do we use"), "{digests:?}");
    assert!(!digests[0].contains("Memory (from mem)"), "{digests:?}");
    let health = project.mem(&["health", "--transcripts"]);
    assert_eq!(health.code, 0, "{}{}", health.stdout, health.stderr);
    assert!(health.stdout.contains("1/1 local sessions captured"), "{}", health.stdout);
}

/// Set up for both agents, Copilot runs mem's hooks from both files on one payload: each event
/// acts once; the memories reach the model once per session, and a fact stated in one session
/// is in the next one's first request.
#[test]
fn copilot_set_up_beside_claude_code_acts_once_and_carries_a_fact_to_the_next_session() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude"]);
    project.mem_ok(&["setup", "copilot"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let model = StandIn::start(json!({ "text": "Noted." }));
    let rule = "From now on always run the web tests with pnpm test --run before a commit";
    project.copilot(&model, rule, &[]);
    let first = &model.conversation()[0];
    assert_eq!(memory_blocks(first).len(), 1, "{first}");
    assert_eq!(first.matches(PNPM).count(), 1, "{first}");
    let log = capture_log(&project);
    let events: Vec<&str> = log.iter().filter_map(|e| e["hook_event"].as_str()).collect();
    assert_eq!(events, ["Stop", "SessionEnd"], "one capture per event: {log:?}");
    let model = StandIn::start(json!({ "text": "With pnpm test --run." }));
    project.copilot(&model, "how do I run the web tests", &[]);
    let first = &model.conversation()[0];
    let fact = "Always run the web tests with pnpm test --run before a commit";
    assert_eq!(first.matches(fact).count(), 1, "the stated fact, once: {first}");
    assert_eq!(memory_blocks(first).len(), 1, "{first}");
    assert_eq!(digests(&project).len(), 2);
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("2/2 local sessions captured"), "{health}");
}

/// The mem server of `.github/mcp.json` answers Copilot's tool calls; `--remove` takes back
/// every file setup wrote.
#[test]
fn copilot_calls_the_mem_tools_and_remove_takes_back_every_file() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "copilot"]);
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "tool": "mem-remember", "input": { "text": fact, "type": "semantic" },
        "text": "Remembered.",
    }));
    project.copilot(&model, "remember where staging lives", &[]);
    let written = project.memories().into_iter().filter(|(_, text)| text.contains(fact)).count();
    assert_eq!(written, 1, "{:?}", project.memories());
    let model = StandIn::start(json!({
        "tool": "mem-recall", "input": { "query": "staging database port" },
        "text": "It is on port 6543.",
    }));
    project.copilot(&model, "where is staging", &[]);
    let last = model.conversation().pop().unwrap();
    assert!(last.contains("tool_result") && last.contains("db-stage-2"), "{last}");
    project.mem_ok(&["setup", "copilot", "--remove"]);
    for file in [".github/hooks/mem.json", ".github/mcp.json"] {
        assert!(!project.repo().join(file).exists(), "{file}");
    }
}

/// `copilot --continue` rebuilds the conversation from the prompts as typed, without what the
/// hooks added: the start context goes again, once, and the resumed turn is logged once.
#[test]
fn a_continued_copilot_session_gets_its_start_context_again_once() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "copilot"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.copilot(&model, "which package manager for the web client", &[]);
    let model = StandIn::start(json!({ "text": "pnpm-lock.yaml." }));
    project.copilot(&model, "and the lock file", &["--continue"]);
    let first = &model.conversation()[0];
    assert!(first.contains("which package manager for the web client"), "resumed: {first}");
    assert_eq!(first.matches(PNPM).count(), 1, "{first}");
    assert_eq!(memory_blocks(first).len(), 1, "{first}");
    let list: Value =
        serde_json::from_str(&project.mem_ok(&["session", "list", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "one session: {list}");
    assert_eq!(list[0]["turns"], 2, "{list}");
}
