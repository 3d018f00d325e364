//! `mem setup gemini`: the hooks and the `mem` MCP server in Gemini CLI's `settings.json`
//! (`.gemini/settings.json` in the project, `~/.gemini/settings.json` for the user), edited as
//! Claude Code's are: Gemini CLI's hooks take the same shape, with its own event names, a
//! timeout in milliseconds and a name.

use std::path::Path;

use anyhow::Result;
use mem::agent::Agent;
use serde_json::json;

use super::claude::{Hook, hooks, with_hooks, with_hooks_of, with_server};
use super::{Change, Scope, Target, is_project_only};

/// The name Gemini CLI shows for each of mem's hooks, by its subcommand.
const NAMES: [(&str, &str); 3] = [
    (" context --hook ", "mem context"),
    (" checkpoint --hook ", "mem checkpoint"),
    (" capture --hook ", "mem capture"),
];

/// Gemini CLI's name for each of Claude Code's events that mem's hooks use.
const EVENTS: [(&str, &str); 4] = [
    ("SessionStart", "SessionStart"),
    ("UserPromptSubmit", "BeforeAgent"),
    ("Stop", "AfterAgent"),
    ("SessionEnd", "SessionEnd"),
];

/// The hooks for Gemini CLI: context when a session starts and before each prompt, a capture
/// after each turn (`AfterAgent`; Gemini CLI does not wait for `SessionEnd` hooks, so the turn
/// is the capture point) and when the session ends; a checkpoint before each prompt with
/// `checkpoints`.
fn gemini_hooks(exe: &Path, checkpoints: bool, project_only: bool) -> Result<Vec<Hook>> {
    let mut hooks = hooks(exe, Agent::Gemini, true, checkpoints, project_only)?;
    for hook in &mut hooks {
        let (_, event) = EVENTS.iter().find(|(claude, _)| *claude == hook.event).expect("mapped");
        hook.event = *event;
        hook.timeout *= 1000;
        // By the subcommand: the executable before it may be a quoted path with spaces.
        hook.name = NAMES
            .into_iter()
            .find(|(subcommand, _)| hook.command.contains(subcommand))
            .map(|(_, name)| name);
    }
    Ok(hooks)
}

/// The changes for Gemini CLI at `target`; `gemini_home` is its folder (`~/.gemini`).
pub fn changes(target: &Target, gemini_home: &Path) -> Result<Vec<Change>> {
    let settings = match target.scope {
        Scope::Project => target.project.join(".gemini/settings.json"),
        Scope::User => gemini_home.join("settings.json"),
    };
    let own = match target.remove {
        true => Vec::new(),
        false => gemini_hooks(target.mem(), target.checkpoints, false)?,
    };
    // Without `trust`, Gemini CLI asks before each call, and offers no tool in `-p`.
    let server = (!target.remove).then(
        || json!({ "command": target.mem().to_string_lossy(), "args": ["mcp"], "trust": true }),
    );
    let path = settings.clone();
    let edit = move |text: Option<&str>| {
        let hooked = with_hooks(text, &path, &own)?;
        with_server(hooked.as_deref(), &path, server.clone())
    };
    let mut changes = vec![Change::new(settings, edit)?];
    if target.edits_user_hooks() {
        // Gemini CLI reads a project's settings in the folder it is started in only: started
        // in a subfolder, it runs the user's hooks alone. These act in projects with a memory
        // root only, and once with the project's own where both run.
        let user = gemini_home.join("settings.json");
        let wanted = match target.remove {
            true => Vec::new(),
            false => gemini_hooks(&target.exe, target.checkpoints, true)?,
        };
        let path = user.clone();
        changes.push(Change::new(user, move |text| {
            with_hooks_of(text, &path, &wanted, is_project_only)
        })?);
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_use_gemini_events_milliseconds_and_names() {
        let hooks = gemini_hooks(Path::new("/opt/mem"), true, false).unwrap();
        let seen: Vec<(&str, &str, u64)> =
            hooks.iter().map(|h| (h.event, h.name.unwrap(), h.timeout)).collect();
        assert_eq!(
            seen,
            [
                ("SessionStart", "mem context", 10_000),
                ("BeforeAgent", "mem context", 10_000),
                ("AfterAgent", "mem capture", 30_000),
                ("BeforeAgent", "mem checkpoint", 30_000),
                ("SessionEnd", "mem capture", 30_000),
            ]
        );
        assert!(hooks.iter().all(|h| h.command.contains("--hook gemini")));
        let spaced = gemini_hooks(Path::new("/home/a b/mem"), true, false).unwrap();
        let names: Vec<&str> = spaced.iter().map(|h| h.name.unwrap()).collect();
        let plain: Vec<&str> = hooks.iter().map(|h| h.name.unwrap()).collect();
        assert_eq!(names, plain, "a path with a space names the same hooks");
    }
}
