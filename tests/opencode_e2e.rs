//! OpenCode, end to end: the real agent (the pinned version that `scripts/e2e-agents.sh`
//! installs) after `mem setup opencode`, against the model stand-in (Anthropic Messages, through
//! OpenCode's built-in provider): the context reaches the model's request once, the session is
//! captured from OpenCode's store into `.memory/` and the session log (tool calls and their
//! results), health counts it, a fact stated in one session reaches the next, the mem tools work
//! from OpenCode, and `--remove` gives the user's `opencode.json` back byte for byte.

use serde_json::{Value, json};

use crate::agents_e2e::{PNPM, Project, StandIn, TOKEN, agents, assert_one_turn_logged};
use crate::util::Out;

fn sessions(project: &Project) -> Vec<(String, String)> {
    project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).collect()
}

/// The captures logged of OpenCode's idle sessions.
fn idle_captures(project: &Project) -> usize {
    let log = project.repo().join(".memory/.mem/capture.log");
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| l.contains("\"hook_event\":\"session.idle\"")).count()
}

/// One `opencode run` with mem's plugin, and the capture it starts when the session goes idle:
/// OpenCode does not wait for a plugin's event handler, so `opencode run` may end while the
/// capture still runs. A guard against a capture that never comes, not a timing.
pub(crate) fn opencode(project: &Project, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
    let before = idle_captures(project);
    let out = project.opencode(model, prompt, extra);
    for _ in 0..600 {
        if idle_captures(project) > before {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no capture after the session went idle: {out:?}");
}

/// The user's own OpenCode configuration, with a comment: setup keeps every byte of it.
const USERS: &str = "{\n  // my settings\n  \"share\": \"disabled\",\n}\n";

#[test]
fn opencode_gets_the_memories_runs_the_hooks_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    let config = project.repo().join("opencode.json");
    std::fs::write(&config, USERS).unwrap();
    // Set up and taken out: the user's file as it was, byte for byte, and no plugin left.
    project.mem_ok(&["setup", "opencode"]);
    project.mem_ok(&["setup", "opencode", "--remove"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), USERS);
    assert!(!project.repo().join(".opencode/plugins/mem.js").exists());
    let setup = project.mem_ok(&["setup", "opencode"]);
    assert!(setup.contains("set up mem in OpenCode"), "{setup}");
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "bash", "input": { "command": command, "description": "List" },
        "text": "The web client uses pnpm.",
    }));
    let out = opencode(&project, &model, "which package manager do we use", &[]);
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    // The memory reached the model once (the prompt's block holds it, so the session's does
    // not send it again); the mem tools were offered.
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    for request in &conversation {
        assert_eq!(request.matches(PNPM).count(), 1, "{request}");
    }
    assert!(conversation[0].contains("# Memory (from mem)"), "{}", conversation[0]);
    for tool in ["mem_recall", "mem_remember", "mem_session_search"] {
        assert!(conversation[0].contains(&format!("\"name\":\"{tool}\"")), "{tool} offered");
    }
    // Captured from OpenCode's store: the digest (the prompt as typed, without mem's part) and
    // the log.
    let sessions = sessions(&project);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let digest = &sessions[0].1;
    assert!(digest.contains("# Session: which package manager do we use"), "{digest}");
    assert!(digest.contains("OpenCode session") && !digest.contains(TOKEN), "{digest}");
    assert_one_turn_logged(&project, "which package manager do we use", "opencode");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");

    // A fact stated in one session reaches the next, whole.
    let fact = "the staging server is stage-7.example.net on port 8443";
    let model = StandIn::start(json!({ "text": "Noted." }));
    opencode(&project, &model, &format!("Note for this project: {fact}"), &[]);
    let model = StandIn::start(json!({ "text": "stage-7.example.net:8443" }));
    opencode(&project, &model, "What is the staging server address?", &[]);
    let conversation = model.conversation();
    // The fact as capture took it (its first letter raised); the digest does not say it again.
    let taken = "The staging server is stage-7.example.net on port 8443";
    assert!(conversation[0].contains(taken), "{}", conversation[0]);
    // Continued in a new process: the prompt's memories are in the history OpenCode sends
    // again, so the fact is there once; the session's block is given again (it lives in the
    // system prompt of each process).
    let model = StandIn::start(json!({ "text": "Yes." }));
    opencode(&project, &model, "and is that the only one?", &["--continue"]);
    let conversation = model.conversation();
    assert_eq!(conversation[0].matches(taken).count(), 1, "{}", conversation[0]);
    let request: Value = serde_json::from_str(&conversation[0]).unwrap();
    let system = request["system"].to_string();
    assert!(system.contains("# Memory (from mem)"), "{system}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("3/3 local sessions captured"), "{health}");

    // Taken out after OpenCode ran (it adds a `$schema` of its own to the file): exactly mem's
    // entry goes, as setting up again gives the same bytes back; mem's plugin is gone.
    let before = std::fs::read_to_string(&config).unwrap();
    project.mem_ok(&["setup", "opencode", "--remove"]);
    let removed = std::fs::read_to_string(&config).unwrap();
    assert!(!removed.contains("\"mcp\"") && removed.contains("// my settings"), "{removed}");
    assert!(!project.repo().join(".opencode/plugins/mem.js").exists());
    project.mem_ok(&["setup", "opencode"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

#[test]
fn opencode_calls_the_mem_tools() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "opencode", "--checkpoints"]);
    let fact = "The staging database is db-stage-2 on port 6543";
    project.mem_ok(&["add", "--type", "semantic", fact]);
    let model = StandIn::start(json!({
        "tool": "mem_recall", "input": { "query": "staging database port" },
        "text": "It is db-stage-2 on port 6543.",
    }));
    let out = opencode(&project, &model, "look up the staging database in memory", &[]);
    assert!(out.stdout.contains("It is db-stage-2 on port 6543."), "{out:?}");
    // The tool's answer went back to the model.
    let conversation = model.conversation();
    let answered =
        conversation.iter().any(|r| r.contains("tool_result") && r.contains("db-stage-2"));
    assert!(answered, "{conversation:?}");
    let events = project.logged_events();
    assert!(
        events.iter().any(|e| e["kind"] == "tool_call" && e["tool"] == "mem_recall"),
        "{events:?}"
    );
    // With --checkpoints, the plugin checkpointed the repository before the prompt.
    let checkpoints = project.mem_ok(&["checkpoints"]);
    assert!(checkpoints.contains("before turn 1 of session"), "{checkpoints}");
}

#[test]
fn an_opencode_session_run_without_the_plugin_is_captured_by_missed() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    // The project's root stays; mem's plugin and server go.
    project.mem_ok(&["setup", "opencode"]);
    project.mem_ok(&["setup", "opencode", "--remove"]);
    let model = StandIn::start(json!({ "text": "Done." }));
    project.opencode(&model, "rename the checkout module", &[]);
    assert!(!model.conversation()[0].contains("# Memory (from mem)"));
    let out = project.mem(&["health", "--transcripts"]);
    assert!(out.stdout.contains("0/1 local sessions captured"), "{out:?}");
    assert!(out.stdout.contains("not captured opencode"), "{out:?}");
    let missed = project.mem_ok(&["capture", "--missed"]);
    assert!(missed.contains("created"), "{missed}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
    let sessions = sessions(&project);
    assert!(sessions[0].1.contains("# Session: rename the checkout module"), "{sessions:?}");
}

/// Issue #51, item 2: mem's plugin waited for `mem` without limit (a `mem` stalled 25 s put the
/// prompt 90 s late). A `mem` that hangs (its child holding its output open) now holds a prompt
/// for the plugin's limits only, and the prompt goes on without memory: `opencode run` ends
/// well within the two-minute guard, where it stayed past it before.
#[test]
fn a_mem_that_hangs_holds_an_opencode_prompt_only_for_the_plugin_s_limit() {
    use std::os::unix::fs::PermissionsExt as _;
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "opencode"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let hangs = tempfile::tempdir().unwrap();
    let script = hangs.path().join("mem");
    std::fs::write(
        &script,
        "#!/bin/sh\n# A mem that hangs; its child holds the output open.\nsleep 150\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plugin = project.repo().join(".opencode/plugins/mem.js");
    let text = std::fs::read_to_string(&plugin).unwrap();
    let hanging = format!("const MEM = {};", serde_json::to_string(&script).unwrap());
    let text: Vec<String> = text
        .lines()
        .map(|l| if l.starts_with("const MEM = ") { hanging.clone() } else { l.to_string() })
        .collect();
    std::fs::write(&plugin, text.join("\n") + "\n").unwrap();
    let model = StandIn::start(json!({ "text": "Answered anyway." }));
    // `Project::opencode` fails past two minutes.
    let out = project.opencode(&model, "which package manager do we use", &[]);
    assert!(out.stdout.contains("Answered anyway."), "{out:?}");
    let conversation = model.conversation();
    assert!(!conversation.is_empty(), "the prompt reached the model");
    assert!(conversation[0].contains("which package manager"), "{}", conversation[0]);
    assert!(!conversation[0].contains(PNPM), "no memory from a mem that hangs");
}
