//! `mem setup gemini`: the hooks and the `mem` MCP server in Gemini CLI's `settings.json`
//! (`.gemini/settings.json` in the project, `settings.json` in Gemini CLI's folder for the
//! user), edited as Claude Code's are: Gemini CLI's hooks take the same shape, with its own event
//! names (from its spec), a timeout in milliseconds and a name.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use mem::agent::Agent;
use serde_json::json;

use super::check::{hook_programs, server_program};
use super::command::Hook;
use super::hooks::{hooks, project_only_hooks, with_hooks};
use super::servers::with_server;
use super::{Change, Entry, Scope, Started, Target};

/// Gemini CLI's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[SETTINGS],
    changes,
    hooks_file: |scope, target, home| match scope {
        Scope::Project => Some(target.project.join(SETTINGS)),
        Scope::User => Some(home?.join("settings.json")),
    },
    full_set: super::hooks::full_set,
    project_only_hooks: |_, home| Some(home?.join("settings.json")),
    notes: |scope, _| match scope {
        Scope::Project => vec![
            "Gemini CLI runs a project's hooks only in a folder the user trusts (it asks on \
             first start) and lists them as it starts",
        ],
        Scope::User => vec![],
    },
    commands: |project, _, home| {
        let files: Vec<(PathBuf, bool)> = std::iter::once((project.join(SETTINGS), false))
            .chain(home.map(|h| (h.join("settings.json"), true)))
            .collect();
        let mut found = Vec::new();
        for (file, user) in &files {
            found.extend(hook_programs(file, *user));
            found.extend(server_program(file, *user));
        }
        found
    },
    defers_to_hooks: |_, _, _| false,
};

/// Gemini CLI's settings in a project.
const SETTINGS: &str = ".gemini/settings.json";

/// The name Gemini CLI shows for each of mem's hooks, by its subcommand.
const NAMES: [(&str, &str); 3] = [
    (" context --hook ", "mem context"),
    (" checkpoint --hook ", "mem checkpoint"),
    (" capture --hook ", "mem capture"),
];

/// The hooks for Gemini CLI (see [`hooks`]), with their timeouts in milliseconds and their
/// names.
fn gemini_hooks(exe: &Path, checkpoints: bool, started: Started) -> Result<Vec<Hook>> {
    let mut hooks = hooks(exe, Agent::Gemini, checkpoints, started)?;
    for hook in &mut hooks {
        hook.timeout *= 1000;
        // By the subcommand: the executable before it may be a quoted path with spaces.
        hook.name = NAMES
            .into_iter()
            .find(|(subcommand, _)| hook.command.contains(subcommand))
            .map(|(_, name)| name);
    }
    Ok(hooks)
}

/// The changes for Gemini CLI at `target`; `home` is its folder (`~/.gemini`).
fn changes(target: &Target, home: Option<&Path>) -> Result<Vec<Change>> {
    let home = home.context("cannot tell Gemini CLI's folder")?;
    let settings = match target.scope {
        Scope::Project => target.project.join(SETTINGS),
        Scope::User => home.join("settings.json"),
    };
    let own = match target.remove {
        true => Vec::new(),
        false => gemini_hooks(target.mem(), target.checkpoints, target.started())?,
    };
    // Without `trust`, Gemini CLI asks before each call, and offers no tool in `-p`.
    let server = (!target.remove).then(|| {
        let (command, args) = (target.mem().to_string_lossy(), target.server_args());
        json!({ "command": command, "args": args, "trust": true })
    });
    let path = settings.clone();
    let edit = move |text: Option<&str>| {
        let hooked = with_hooks(text, &path, &own)?;
        with_server(hooked.as_deref(), &path, server.clone())
    };
    let mut changes = vec![Change::new(settings, edit)?];
    if target.edits_user_hooks() {
        // Gemini CLI reads a project's settings in the folder it is started in only: started
        // in a subfolder, it runs the user's hooks alone.
        let wanted = match target.remove {
            true => Vec::new(),
            false => gemini_hooks(&target.exe, target.checkpoints, Started::ProjectOnly)?,
        };
        changes.push(project_only_hooks(home.join("settings.json"), wanted)?);
    }
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hooks_use_gemini_events_milliseconds_and_names() {
        let hooks = gemini_hooks(Path::new("/opt/mem"), true, Started::Own).unwrap();
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
        let spaced = gemini_hooks(Path::new("/home/a b/mem"), true, Started::Own).unwrap();
        let names: Vec<&str> = spaced.iter().map(|h| h.name.unwrap()).collect();
        let plain: Vec<&str> = hooks.iter().map(|h| h.name.unwrap()).collect();
        assert_eq!(names, plain, "a path with a space names the same hooks");
    }
}
