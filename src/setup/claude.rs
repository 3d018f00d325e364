//! `mem setup claude`: the hooks in Claude Code's `settings.json` and the `mem` server in its
//! MCP configuration (`.mcp.json` in the project, `~/.claude.json` for the user).

use std::path::{Path, PathBuf};

use anyhow::Result;
use mem::agent::Agent;

use super::check::{Found, hook_programs, server_program};
use super::hooks::{hooks, hooks_and_server, project_only_hooks};
use super::{Change, Entry, Scope, Started, Target};

/// Claude Code's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[SETTINGS, ".mcp.json"],
    changes,
    hooks_file: |scope, target, _| Some(at(scope, target, SETTINGS)),
    full_set: super::hooks::full_set,
    project_only_hooks: |home, _| Some(home.join(SETTINGS)),
    notes: |scope, _| match scope {
        Scope::Project => {
            vec!["Claude Code asks once before it starts a server of .mcp.json: answer yes for mem"]
        }
        Scope::User => vec![],
    },
    commands,
    defers_to_hooks: |_, _, _| false,
};

/// Claude Code's settings, in a project and in the user's home folder.
const SETTINGS: &str = ".claude/settings.json";

/// The file `rel` of the scope: in the project, or in the user's home folder.
fn at(scope: Scope, target: &Target, rel: &str) -> PathBuf {
    match scope {
        Scope::Project => target.project.join(rel),
        Scope::User => target.home.join(rel),
    }
}

/// The changes for Claude Code at `target`.
fn changes(target: &Target, _: Option<&Path>) -> Result<Vec<Change>> {
    let settings = at(target.scope, target, SETTINGS);
    let mcp = match target.scope {
        Scope::Project => target.project.join(".mcp.json"),
        Scope::User => target.home.join(".claude.json"),
    };
    let mut changes = hooks_and_server(target, Agent::Claude, settings, mcp)?;
    if target.edits_user_hooks() {
        // Claude Code reads a project's settings in the folder it is started in only: started in
        // a subfolder, it runs the user's hooks alone.
        let wanted = match target.remove {
            true => Vec::new(),
            false => hooks(&target.exe, Agent::Claude, target.checkpoints, Started::ProjectOnly)?,
        };
        changes.push(project_only_hooks(target.home.join(SETTINGS), wanted)?);
    }
    Ok(changes)
}

/// The commands that run mem in Claude Code's files for `project`.
fn commands(project: &Path, home: &Path, _: Option<&Path>) -> Vec<Found> {
    let mut found = hook_programs(&project.join(SETTINGS), false);
    found.extend(hook_programs(&project.join(".claude/settings.local.json"), false));
    found.extend(server_program(&project.join(".mcp.json"), false));
    found.extend(hook_programs(&home.join(SETTINGS), true));
    found.extend(server_program(&home.join(".claude.json"), true));
    found
}

#[cfg(test)]
mod tests {
    use super::super::hooks::with_hooks;
    use super::super::servers::with_server;
    use super::*;
    use serde_json::{Value, json};

    const USERS: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [
      { "hooks": [ { "type": "command", "command": "notify-send done" } ] }
    ]
  }
}
"#;

    #[test]
    fn hooks_are_merged_idempotent_and_removable() {
        let path = Path::new("settings.json");
        let hooks = hooks(Path::new("/opt/mem"), Agent::Claude, true, Started::Own).unwrap();
        let added = with_hooks(Some(USERS), path, &hooks).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["model"], "opus");
        assert_eq!(value["hooks"]["Stop"][0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(
            value["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/mem capture --hook claude || true"
        );
        assert_eq!(value["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 30);
        let on_prompt: Vec<&str> = value["hooks"]["UserPromptSubmit"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["hooks"][0]["command"].as_str().unwrap())
            .collect();
        assert_eq!(
            on_prompt,
            [
                "/opt/mem context --hook claude --budget 2000 || true",
                "/opt/mem checkpoint --hook claude || true"
            ]
        );
        // Twice: the same text.
        assert_eq!(with_hooks(Some(&added), path, &hooks).unwrap().unwrap(), added);
        // Removed: the user's file as it was (same content).
        let removed = with_hooks(Some(&added), path, &[]).unwrap().unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&removed).unwrap(),
            serde_json::from_str::<Value>(USERS).unwrap()
        );
        // A file that only held mem's hooks goes away; a missing one is not created for nothing.
        let only = with_hooks(None, path, &hooks).unwrap();
        assert_eq!(with_hooks(only.as_deref(), path, &[]).unwrap(), None);
        assert_eq!(with_hooks(None, path, &[]).unwrap(), None);
        assert!(with_hooks(Some("[1]"), path, &hooks).is_err());
        assert!(with_hooks(Some("{ nope"), path, &hooks).is_err());
    }

    #[test]
    fn the_server_is_set_and_only_ours_is_removed() {
        let path = Path::new(".mcp.json");
        let other = r#"{"mcpServers":{"db":{"command":"pg-mcp"}}}"#;
        let server = json!({ "command": "/opt/mem", "args": ["mcp"] });
        let added = with_server(Some(other), path, Some(server)).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["mcpServers"]["db"]["command"], "pg-mcp");
        assert_eq!(value["mcpServers"]["mem"]["args"][0], "mcp");
        let removed = with_server(Some(&added), path, None).unwrap().unwrap();
        assert!(!removed.contains("\"mem\""), "{removed}");
        let foreign = r#"{"mcpServers":{"mem":{"command":"memory-server"}}}"#;
        assert_eq!(with_server(Some(foreign), path, None).unwrap().as_deref(), Some(foreign));
    }
}
