//! `mem setup copilot`: GitHub Copilot CLI's hooks in a file of mem's own among its hook files
//! (`.github/hooks/mem.json` in the project, `hooks/mem.json` in Copilot's folder for the
//! user) and the `mem` server in its MCP configuration (`.github/mcp.json` in the project,
//! `mcp-config.json` in Copilot's folder). The hooks take Claude Code's shape and event names,
//! which Copilot reads too and answers with the same payloads it passes to a repository's
//! `.claude/settings.json` hooks: a repository set up for both runs each of mem's hooks twice
//! on one payload, and the second call does nothing (`hook::first_call`).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use mem::agent::Agent;

use super::check::{Found, hook_programs, server_program};
use super::hooks::hooks_and_server;
use super::{Change, Entry, Scope, Target};

/// GitHub Copilot CLI's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[HOOKS, MCP],
    changes,
    hooks_file: |scope, target, home| match scope {
        Scope::Project => Some(target.project.join(HOOKS)),
        Scope::User => Some(home?.join(USER_HOOKS)),
    },
    full_set: super::hooks::full_set,
    // Copilot runs a repository's hooks in its subfolders too.
    project_only_hooks: |_, _| None,
    notes: |scope, _| match scope {
        Scope::Project => vec![
            "GitHub Copilot CLI runs a repository's hooks and starts its MCP servers only in a \
             folder the user trusts (it asks on first start)",
        ],
        Scope::User => vec![],
    },
    commands,
    defers_to_hooks: |_, _, _| false,
};

/// mem's hook file in a project.
const HOOKS: &str = ".github/hooks/mem.json";

/// The project's MCP configuration that Copilot reads.
const MCP: &str = ".github/mcp.json";

/// mem's hook file in Copilot's folder.
const USER_HOOKS: &str = "hooks/mem.json";

/// The user's MCP configuration, in Copilot's folder.
const USER_MCP: &str = "mcp-config.json";

/// The changes for GitHub Copilot CLI at `target`; `home` is its folder (`~/.copilot`).
fn changes(target: &Target, home: Option<&Path>) -> Result<Vec<Change>> {
    let (hooks_file, mcp) = match target.scope {
        Scope::Project => (target.project.join(HOOKS), target.project.join(MCP)),
        Scope::User => {
            let home = home.context("cannot tell GitHub Copilot CLI's folder")?;
            (home.join(USER_HOOKS), home.join(USER_MCP))
        }
    };
    hooks_and_server(target, Agent::Copilot, hooks_file, mcp)
}

/// The commands that run mem in Copilot's files for `project`.
fn commands(project: &Path, _: &Path, home: Option<&Path>) -> Vec<Found> {
    let files: Vec<(PathBuf, PathBuf, bool)> =
        std::iter::once((project.join(HOOKS), project.join(MCP), false))
            .chain(home.map(|h| (h.join(USER_HOOKS), h.join(USER_MCP), true)))
            .collect();
    let mut found = Vec::new();
    for (hooks, mcp, user) in &files {
        found.extend(hook_programs(hooks, *user));
        found.extend(server_program(mcp, *user));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::hooks::hooks;
    use super::*;
    use crate::shared::gate::Started;

    #[test]
    fn hooks_use_the_event_names_whose_payloads_copilot_passes_alike() {
        let hooks = hooks(Path::new("/opt/mem"), Agent::Copilot, false, Started::Own).unwrap();
        let seen: Vec<(&str, u64)> = hooks.iter().map(|h| (h.event, h.timeout)).collect();
        assert_eq!(
            seen,
            [("SessionStart", 10), ("UserPromptSubmit", 10), ("Stop", 30), ("SessionEnd", 30)]
        );
        assert!(hooks.iter().all(|h| h.command.contains("--hook copilot")));
    }
}
