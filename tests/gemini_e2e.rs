//! Gemini CLI, end to end: the real agent (the pinned version that `scripts/e2e-agents.sh`
//! installs) after `mem setup gemini`, against the model stand-in (Gemini API requests), with
//! the same checks as Claude Code's in `tests/agents_e2e.rs`: the context reaches the model's
//! request, the session is captured into `.memory/` and the session log (tool calls and their
//! results, each message once), health counts it, the mem tools work, a turn is checkpointed,
//! and a session started in a subfolder is captured too.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::agents_e2e::{PNPM, Project, StandIn, TOKEN, agents, assert_one_turn_logged};

fn sessions(project: &Project) -> Vec<(String, String)> {
    project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).collect()
}

#[test]
fn gemini_gets_the_memories_runs_the_hooks_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "gemini", "--checkpoints"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "run_shell_command", "input": { "command": command },
        "text": "The web client uses pnpm.",
    }));
    let out = project.gemini(&model, "which package manager do we use", &[]);
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    // The memory reached the model, in the context Gemini CLI wraps a hook's answer in; the
    // mem tools were offered.
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    assert!(conversation[0].contains("<hook_context># Memory (from mem)"), "{}", conversation[0]);
    assert!(conversation[0].contains(PNPM), "{}", conversation[0]);
    for tool in ["mcp_mem_recall", "mcp_mem_remember", "mcp_mem_session_search"] {
        assert!(conversation[0].contains(&format!("\"name\":\"{tool}\"")), "{tool} offered");
    }
    // Captured: the digest (the prompt as typed, without the hook's context) and the log.
    let sessions = sessions(&project);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let digest = &sessions[0].1;
    assert!(digest.contains("# Session: which package manager do we use"), "{digest}");
    assert!(digest.contains("Gemini CLI session") && !digest.contains("hook_context"), "{digest}");
    assert!(!digest.contains(TOKEN), "{digest}");
    let events = assert_one_turn_logged(&project, "which package manager do we use", "gemini");
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"checkpoint"), "{kinds:?}");
    // Gemini CLI wrote the model's message twice under one id: it is logged once.
    assert_eq!(kinds.iter().filter(|k| **k == "tool_call").count(), 1, "{kinds:?}");
    let checkpoints = project.mem_ok(&["checkpoints"]);
    assert!(checkpoints.contains("before turn 1 of session"), "{checkpoints}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
    // The next session starts with the one before it.
    let model = StandIn::start(json!({ "text": "Noted." }));
    project.gemini(&model, "anything else about the build", &[]);
    assert!(model.conversation()[0].contains("## Recent sessions"), "{:?}", model.conversation());
}

#[test]
fn gemini_calls_the_mem_tools() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "gemini"]);
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "tool": "mcp_mem_remember", "input": { "text": fact, "type": "semantic" },
        "text": "Remembered.",
    }));
    project.gemini(&model, "remember where staging lives", &[]);
    let written = project.memories().into_iter().filter(|(_, text)| text.contains(fact)).count();
    assert_eq!(written, 1, "{:?}", project.memories());
    let model = StandIn::start(json!({
        "tool": "mcp_mem_recall", "input": { "query": "staging database port" },
        "text": "It is on port 6543.",
    }));
    project.gemini(&model, "where is staging", &[]);
    // The recall's answer went back to the model as the tool's response.
    let conversation = model.conversation();
    let last = conversation.last().unwrap();
    assert!(last.contains("functionResponse") && last.contains("db-stage-2"), "{last}");
    assert!(!last.contains("\\\"error\\\""), "{last}");
}

/// Gemini CLI reads a project's settings in the folder it starts in only: a session started in
/// a subfolder runs the hooks a project's setup puts in the user's settings, which act in
/// projects with a memory root only; at the top, where both sets run, each acts once.
#[test]
fn gemini_started_in_a_subfolder_is_captured_and_nothing_runs_twice() {
    let Some(agents) = agents() else { return };
    let mut project = Project::new(agents);
    project.mem_ok(&["setup", "gemini"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    project.within = PathBuf::from("src");
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.gemini(&model, "which package manager do we use", &[]);
    assert!(model.conversation()[0].contains(PNPM), "the memory reached the model");
    assert_eq!(sessions(&project).len(), 1, "{:?}", project.memories());
    let health = project.mem(&["health", "--transcripts"]);
    assert_eq!(health.code, 0, "{}", health.stdout);
    assert!(health.stdout.contains("1/1 local sessions captured"), "{}", health.stdout);
    project.within = PathBuf::new();
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.gemini(&model, "which package manager do we use again", &[]);
    let first = &model.conversation()[0];
    assert_eq!(first.matches("# Memory (from mem)").count(), 1, "{first}");
    assert_eq!(sessions(&project).len(), 2);
    let log = std::fs::read_to_string(project.repo().join(".memory/.mem/capture.log")).unwrap();
    let last: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let id = last["session_id"].as_str().unwrap();
    let turns = log.lines().filter(|l| l.contains(id) && l.contains("\"AfterAgent\"")).count();
    assert_eq!(turns, 1, "{log}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("2/2 local sessions captured"), "{health}");
}

/// `gemini --resume latest`: the session goes on under its id, Gemini CLI writing its whole
/// history into the chat again; the log gets the new turn only, and the resumed conversation,
/// which Gemini CLI rebuilds without the start context, gets it again once, on each resume.
#[test]
fn a_resumed_gemini_session_adds_its_new_turn_once() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "gemini"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let model = StandIn::start(json!({
        "tool": "run_shell_command", "input": { "command": "echo listed" },
        "text": "Listed.",
    }));
    project.gemini(&model, "list the files", &[]);
    let model = StandIn::start(json!({ "text": "Again." }));
    project.gemini(&model, "and the package manager", &["--resume", "latest"]);
    // Gemini CLI drops the start context from a resumed history (a user message that begins
    // with `<hook_context>`): it is sent again, once (item 2 of the third probe).
    let first = &model.conversation()[0];
    assert_eq!(first.matches("# Memory (from mem)").count(), 1, "one block");
    assert!(first.contains(PNPM), "the start context again");
    let model = StandIn::start(json!({ "text": "Once more." }));
    project.gemini(&model, "and the lock file", &["--resume", "latest"]);
    let first = &model.conversation()[0];
    assert_eq!(first.matches("# Memory (from mem)").count(), 1, "resumed again: one block");
    assert!(first.contains(PNPM), "resumed again: the start context again");
    let list: Value =
        serde_json::from_str(&project.mem_ok(&["session", "list", "--json"])).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "one session: {list}");
    assert_eq!(list[0]["turns"], 3, "{list}");
    let events = project.logged_events();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "tool_call").count(), 1, "{kinds:?}");
    assert_eq!(kinds.iter().filter(|k| **k == "assistant").count(), 3, "{kinds:?}");
    assert_eq!(sessions(&project).len(), 1);
}
