//! pi, end to end: the real agent (the pinned version that `scripts/e2e-agents.sh` installs)
//! after `mem setup pi`, against the model stand-in (OpenAI Chat Completions, through a provider
//! of pi's models.json): the memories reach every request of a session once (in its system
//! prompt, never in a message the session file keeps), the session is captured into `.memory/`
//! and the session log, health counts it, a fact stated in one session reaches the next, a
//! session that went back to an earlier prompt (`/tree`) is captured as the branch kept, the mem
//! tools work from pi, and `--remove` gives back every file byte for byte.

use serde_json::{Value, json};

use crate::agents_e2e::{PNPM, Project, StandIn, TOKEN, agents, assert_one_turn_logged};
use crate::pi::files;

fn sessions(project: &Project) -> Vec<(String, String)> {
    project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).collect()
}

/// The system prompt of a Chat Completions request.
fn system(request: &str) -> String {
    let request: Value = serde_json::from_str(request).unwrap();
    let messages = request["messages"].as_array().unwrap();
    messages.iter().filter(|m| m["role"] == "system").map(|m| m["content"].to_string()).collect()
}

#[test]
fn pi_gets_the_memories_once_per_request_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    // The user's own pi settings: setup and --remove leave them byte for byte.
    std::fs::create_dir_all(project.repo().join(".pi/extensions")).unwrap();
    std::fs::write(project.repo().join(".pi/settings.json"), "{ \"quietStartup\": true }\n")
        .unwrap();
    let before = files(project.repo());
    let setup = project.mem_ok(&["setup", "pi"]);
    assert!(setup.contains("set up mem in pi"), "{setup}");
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "bash", "input": { "command": command }, "text": "The web client uses pnpm.",
    }));
    let out = project.pi(&model, "which package manager do we use", &[]);
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    // The memory reached each request once, in the system prompt (the session's block and the
    // prompt's hold it once between them); the mem tools were offered.
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    for request in &conversation {
        assert_eq!(request.matches(PNPM).count(), 1, "{request}");
        assert!(system(request).contains(PNPM), "in the system prompt: {request}");
        assert!(system(request).contains("# Memory (from mem)"), "{request}");
    }
    for tool in ["mem_recall", "mem_remember"] {
        assert!(conversation[0].contains(&format!("\"name\":\"{tool}\"")), "{tool} offered");
    }
    // Captured from pi's session file: the digest, the log (the token redacted), health.
    let sessions = sessions(&project);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let digest = &sessions[0].1;
    assert!(digest.contains("# Session: which package manager do we use"), "{digest}");
    assert!(!digest.contains(TOKEN) && !digest.contains("Memory (from mem)"), "{digest}");
    assert_one_turn_logged(&project, "which package manager do we use", "pi");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
    // The session file keeps no memory: nothing of mem's is sent again from the history.
    let pi_sessions = project.home.path().join(".pi/agent/sessions");
    let mut kept = String::new();
    for folder in std::fs::read_dir(&pi_sessions).unwrap().flatten() {
        for file in std::fs::read_dir(folder.path()).unwrap().flatten() {
            kept.push_str(&std::fs::read_to_string(file.path()).unwrap());
        }
    }
    assert!(!kept.contains(PNPM), "{kept}");

    // Continued in a new process: its system prompt is new, so mem gives the memory again,
    // once per request still.
    let model = StandIn::start(json!({ "text": "Yes, pnpm." }));
    project.pi(&model, "and for the lockfile too?", &["--continue"]);
    for request in &model.conversation() {
        assert_eq!(request.matches(PNPM).count(), 1, "{request}");
    }
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");

    // Taken out: every file of the repository as it was, byte for byte.
    project.mem_ok(&["setup", "pi", "--remove"]);
    assert_eq!(files(project.repo()), before);
    let model = StandIn::start(json!({ "text": "Hello." }));
    project.pi(&model, "hello", &[]);
    let first = &model.conversation()[0];
    assert!(!first.contains("Memory (from mem)") && !first.contains("mem_recall"), "{first}");
}

#[test]
fn a_fact_stated_in_one_pi_session_reaches_the_next() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "pi"]);
    let fact = "the staging server is stage-7.example.net on port 8443";
    let model = StandIn::start(json!({ "text": "Noted." }));
    project.pi(&model, &format!("Note for this project: {fact}"), &[]);
    let model = StandIn::start(json!({ "text": "stage-7.example.net:8443" }));
    project.pi(&model, "What is the staging server address?", &[]);
    let conversation = model.conversation();
    let taken = "The staging server is stage-7.example.net on port 8443";
    assert_eq!(conversation[0].matches(taken).count(), 1, "{}", conversation[0]);
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("2/2 local sessions captured"), "{health}");
}

/// A test extension of pi's own: `/back` goes back to before the last prompt, as pi's `/tree`
/// does, so that the next prompt starts a branch of the session's tree.
const BACK: &str = r#"export default function (pi) {
  pi.registerCommand("back", {
    description: "Go back to before the last prompt",
    handler: async (_args, ctx) => {
      const users = ctx.sessionManager
        .getBranch()
        .filter((e) => e.type === "message" && e.message.role === "user");
      await ctx.navigateTree(users[users.length - 1].parentId, { summarize: false });
    },
  });
}
"#;

#[test]
fn a_pi_session_that_went_back_is_captured_as_the_branch_kept() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "pi"]);
    let back = project.home.path().join("back.ts");
    std::fs::write(&back, BACK).unwrap();
    let model = StandIn::start(json!({ "text": "Done." }));
    let left = "try the web client's build with webpack";
    let kept = "try the web client's build with vite";
    project.pi(&model, "set up the web client", &[]);
    project.pi(&model, left, &["--continue"]);
    // One process per prompt: pi queues a prompt given while the last one's `agent_end`
    // handlers (mem's capture) still run, and `/back` would then go back from another place.
    let back = back.display().to_string();
    let mut cmd = project.pi_command(&model);
    cmd.args(["--continue", "-e", &back, "-p", "/back", kept]);
    crate::agents_e2e::finish(cmd, "pi");
    let sessions = sessions(&project);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let digest = &sessions[0].1;
    assert!(digest.contains("set up the web client") && digest.contains("vite"), "{digest}");
    assert!(!digest.contains("webpack"), "the branch left behind: {digest}");
    // The log is a record of what happened: each prompt once, the one left behind too.
    let prompts: Vec<String> = project
        .logged_events()
        .iter()
        .filter(|e| e["kind"] == "prompt")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(prompts, ["set up the web client", left, kept]);
}

#[test]
fn pi_calls_the_mem_tools() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "pi"]);
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "tool": "mem_remember", "input": { "text": fact, "type": "semantic" },
        "text": "Remembered.",
    }));
    project.pi(&model, "remember where staging lives", &[]);
    let written = project.memories().into_iter().filter(|(_, text)| text.contains(fact)).count();
    assert_eq!(written, 1, "{:?}", project.memories());
    let model = StandIn::start(json!({
        "tool": "mem_recall", "input": { "query": "staging database port" },
        "text": "It is db-stage-2 on port 6543.",
    }));
    project.pi(&model, "look up the staging database in memory", &[]);
    let conversation = model.conversation();
    let last = conversation.last().unwrap();
    assert!(last.contains("\"role\":\"tool\"") && last.contains("db-stage-2"), "{last}");
}

#[test]
fn a_pi_session_run_without_the_extension_is_captured_by_missed() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "pi"]);
    project.mem_ok(&["setup", "pi", "--remove"]);
    let model = StandIn::start(json!({ "text": "Done." }));
    project.pi(&model, "rename the checkout module", &[]);
    let out = project.mem(&["health", "--transcripts"]);
    assert!(out.stdout.contains("0/1 local sessions captured"), "{out:?}");
    project.mem_ok(&["capture", "--missed"]);
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
    let sessions = sessions(&project);
    assert!(sessions[0].1.contains("# Session: rename the checkout module"), "{sessions:?}");
}
