//! The third probe's seams, with the real agents (see `tests/agents_e2e.rs`): whatever `mem`
//! is on the agent's `PATH` (missing, too old for the hook's arguments), the prompt reaches the
//! model and the agent ends well.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;

use crate::agents_e2e::{PNPM, Project, StandIn, agents};

/// The `mem`s a teammate may have: none on `PATH`, or one that rejects the hook's arguments as
/// an older clap-based `mem` does (usage on stderr, exit status 2).
fn broken_mems() -> Vec<(&'static str, tempfile::TempDir)> {
    let missing = tempfile::tempdir().unwrap();
    let old = tempfile::tempdir().unwrap();
    let script = old.path().join("mem");
    std::fs::write(
        &script,
        "#!/bin/sh\necho \"error: unexpected argument '--hook' found\" >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    vec![("no mem on PATH", missing), ("a mem that rejects the arguments", old)]
}

/// Item 1: Gemini CLI took a hook's exit status 127 (`mem: command not found`) or 2 as "deny"
/// and blocked every prompt; Claude Code blocks a prompt on 2.
#[test]
fn a_missing_or_old_mem_never_blocks_a_prompt() {
    let Some(agents) = agents() else { return };
    for (case, folder) in broken_mems() {
        let mut project = Project::new(agents.clone());
        project.mem_ok(&["setup", "gemini", "--checkpoints"]);
        project.mem_ok(&["setup", "claude", "--checkpoints"]);
        project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
        // A teammate's machine: the project's committed files only (the user-level hooks that
        // setup adds for subfolders name this machine's mem by its path).
        for file in [".gemini/settings.json", ".claude/settings.json"] {
            std::fs::remove_file(project.home.path().join(file)).unwrap();
        }
        project.mem_folder = folder.path().to_path_buf();

        let model = StandIn::start(json!({ "text": "Answered anyway." }));
        let out = project.gemini(&model, "which package manager do we use", &[]);
        assert!(out.stdout.contains("Answered anyway."), "gemini, {case}: {out:?}");
        let conversation = model.conversation();
        assert!(!conversation.is_empty(), "gemini, {case}: the prompt reached the model");
        assert!(conversation[0].contains("which package manager"), "gemini, {case}");
        assert!(!conversation[0].contains(PNPM), "gemini, {case}: no mem, no memory");

        let model = StandIn::start(json!({ "text": "Answered anyway." }));
        let out = project.claude(&model, "which package manager do we use", &[]);
        assert!(out.stdout.contains("Answered anyway."), "claude, {case}: {out:?}");
        assert!(!model.conversation().is_empty(), "claude, {case}: the prompt reached the model");
    }
}
