//! The agents' own memories with the real agents (issue #41), against the model stand-in: a
//! Claude Code auto memory written the way Claude Code tells its model to (a Write of the
//! memory file, then of the `MEMORY.md` pointer) reaches the next Codex and Gemini CLI
//! sessions from mem, and the next Claude Code session only from Claude Code's own index; a
//! fact Gemini CLI's model writes into its global `GEMINI.md` reaches Claude Code and Codex.

use std::path::PathBuf;

use serde_json::json;

use crate::agents_e2e::{Project, StandIn, agents, memory_blocks};

/// The fact the stand-in makes Claude Code remember.
const FACT: &str = "Deploys go out only from Tuesday to Thursday, never on a Friday";
/// The fact the stand-in makes Gemini CLI remember.
const GEMINI_FACT: &str = "The user reviews every migration by hand before it runs";

/// Claude Code's auto-memory folder of the project: keyed by the repository's top.
fn claude_memory(project: &Project) -> PathBuf {
    let top = project.repo().canonicalize().unwrap();
    crate::native::claude_memory_folder(project.home.path(), &top)
}

#[test]
fn e2e_an_agent_s_own_memory_reaches_the_other_agents_once() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.set_up_claude_codex_gemini();
    let folder = claude_memory(&project);
    let file = folder.join("project_deploy_window.md");
    let content = format!(
        "---\nname: deploy-window\ndescription: when deploys may go out\nmetadata:\n  type: \
         project\n---\n\n{FACT}.\n\n**Why:** the on-call rota.\n"
    );
    let model = StandIn::start(json!({
        "tool": "Write",
        "input": { "file_path": file.to_str().unwrap(), "content": content },
        "text": "Saved to memory.",
    }));
    let out = project.claude(&model, "remember our deploy window", &["--allowedTools", "Write"]);
    assert!(std::fs::read_to_string(&file).is_ok_and(|t| t.contains(FACT)), "{out:?}");
    let index = folder.join("MEMORY.md");
    let model = StandIn::start(json!({
        "tool": "Write",
        "input": {
            "file_path": index.to_str().unwrap(),
            "content": "- [Deploy window](project_deploy_window.md) — when deploys may go out\n",
        },
        "text": "Indexed.",
    }));
    project.claude(&model, "index the memory", &["--allowedTools", "Write"]);
    assert!(std::fs::read_to_string(&index).is_ok_and(|t| t.contains("project_deploy_window.md")));

    // The next Codex and Gemini CLI sessions get the fact from mem.
    let model = StandIn::start(json!({ "text": "Not on Fridays." }));
    project.codex(&model, "can we deploy on a friday");
    let first = model.conversation().into_iter().next().expect("a Codex request");
    assert_eq!(first.matches(FACT).count(), 1, "{:?}", memory_blocks(&first));
    assert!(first.contains("claude.deploy-window"), "{first}");
    let model = StandIn::start(json!({ "text": "Not on Fridays." }));
    project.gemini(&model, "can we deploy on a friday", &[]);
    let first = model.conversation().into_iter().next().expect("a Gemini CLI request");
    assert_eq!(first.matches(FACT).count(), 1, "{first}");

    // The next Claude Code session: its own index, and nothing of it again from mem.
    let model = StandIn::start(json!({ "text": "Not on Fridays." }));
    project.claude(&model, "can we deploy on a friday", &[]);
    let first = model.conversation().into_iter().next().expect("a Claude Code request");
    assert!(first.contains("project_deploy_window.md"), "its own index: {first}");
    assert!(!first.contains("claude.deploy-window"), "not again from mem: {first}");

    // Gemini CLI's model writes a personal fact into its global GEMINI.md (0.61.0 has no
    // save_memory tool: it edits the file).
    let global = project.home.path().join(".gemini/GEMINI.md");
    let model = StandIn::start(json!({
        "tool": "write_file",
        "input": {
            "file_path": global.to_str().unwrap(),
            "content": format!("# Personal memory\n\n- {GEMINI_FACT}.\n"),
        },
        "text": "Saved.",
    }));
    let out = project.gemini(&model, "remember that I review migrations by hand", &[]);
    let written = std::fs::read_to_string(&global).unwrap_or_default();
    assert!(written.contains(GEMINI_FACT), "{out:?}");
    let model = StandIn::start(json!({ "text": "Yes." }));
    project.claude(&model, "who reviews a migration", &[]);
    let first = model.conversation().into_iter().next().expect("a Claude Code request");
    assert_eq!(first.matches(GEMINI_FACT).count(), 1, "{first}");
    let model = StandIn::start(json!({ "text": "Yes." }));
    project.codex(&model, "who reviews a migration");
    let first = model.conversation().into_iter().next().expect("a Codex request");
    assert_eq!(first.matches(GEMINI_FACT).count(), 1, "{first}");

    // Adopted into the project: in `.memory/`, and the clone gets it.
    let adopted = project.mem_ok(&["adopt", "claude.deploy-window"]);
    assert!(adopted.contains("into the project layer"), "{adopted}");
    let (path, text) = project
        .memories()
        .into_iter()
        .find(|(p, _)| p == "claude.deploy-window.md")
        .expect("the adopted memory in .memory/");
    assert!(
        text.contains(FACT) && text.contains("source: 'claude auto memory: "),
        "{path}: {text}"
    );
    // The next Codex session gets it once, as mem's.
    let model = StandIn::start(json!({ "text": "Not on Fridays." }));
    project.codex(&model, "can we deploy on a friday");
    let first = model.conversation().into_iter().next().expect("a Codex request");
    assert_eq!(first.matches(FACT).count(), 1, "{first}");

    // A teammate's clone, in another HOME (no agent memory there): its first Claude Code
    // session at the repository's top gets the adopted fact, once.
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "adopted"]);
    let agents = crate::agents_e2e::agents().unwrap();
    let mate = Project::new(agents);
    std::fs::remove_dir_all(mate.repo()).unwrap();
    let clone = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(project.repo())
        .arg(mate.repo())
        .status()
        .unwrap();
    assert!(clone.success());
    let model = StandIn::start(json!({ "text": "Not on Fridays." }));
    mate.claude(&model, "can we deploy on a friday", &[]);
    let first = model.conversation().into_iter().next().expect("a Claude Code request");
    assert_eq!(first.matches(FACT).count(), 1, "{:?}", memory_blocks(&first));
}
