//! mem's hook commands in the agents' files: the commands `mem setup` writes (one set for any
//! agent, named by the agent's events), and how a command is told to be mem's (this version's
//! or an older one's) rather than the user's.

use std::path::{Path, PathBuf};

use anyhow::Result;
use mem::agent::Agent;
use serde_json::json;

use super::command::{Hook, NEVER_BLOCKS, PROJECT_ONLY, USER_SCOPE, is_project_only, shell_word};
use super::json::{self, with_hooks_of};
use super::servers::with_server;
use super::{Change, Target};
use crate::shared::gate::Started;

/// The hooks for `agent` with the `mem` at `exe`, named by the agent's events
/// (`agent::Spec::events`): context at session start, the prompt's memories on each prompt, a
/// capture when a turn ends (and, where the agent has the event, when the session ends); with
/// `checkpoints`, a checkpoint on each prompt. mem's arguments end with the flag of the
/// registration they are for (`started`, see [`flag`]); every command ends with
/// [`NEVER_BLOCKS`]. Timeouts are in seconds.
pub fn hooks(exe: &Path, agent: Agent, checkpoints: bool, started: Started) -> Result<Vec<Hook>> {
    let mem = shell_word(exe)?;
    let events = agent.spec().events;
    let hook = |event, command: String, timeout| Hook { event, command, timeout, name: None };
    let capture = || format!("{mem} capture --hook {agent}");
    let mut hooks = vec![
        hook(events.start, format!("{mem} context --hook {agent}"), 10),
        hook(events.prompt, format!("{mem} context --hook {agent} --budget 2000"), 10),
        hook(events.turn_end, capture(), 30),
    ];
    if checkpoints {
        hooks.push(hook(events.prompt, format!("{mem} checkpoint --hook {agent}"), 30));
    }
    if let Some(end) = events.session_end {
        hooks.push(hook(end, capture(), 30));
    }
    for hook in &mut hooks {
        if let Some(flag) = flag(started) {
            hook.command = format!("{} {flag}", hook.command);
        }
        hook.command.push_str(NEVER_BLOCKS);
    }
    Ok(hooks)
}

/// The changes of an agent whose hooks and MCP server sit in two JSON files: mem's hooks for
/// `agent` in `hooks_file` (see [`with_hooks`]) and the `mem` server under `mcpServers` of
/// `mcp`; with `--remove`, both taken out.
pub fn hooks_and_server(
    target: &Target,
    agent: Agent,
    hooks_file: PathBuf,
    mcp: PathBuf,
) -> Result<Vec<Change>> {
    let own = match target.remove {
        true => Vec::new(),
        false => hooks(target.mem(), agent, target.checkpoints, target.started())?,
    };
    let server = (!target.remove).then(
        || json!({ "command": target.mem().to_string_lossy(), "args": target.server_args() }),
    );
    let path = hooks_file.clone();
    let hooks = Change::new(hooks_file, move |text| with_hooks(text, &path, &own))?;
    let path = mcp.clone();
    let mcp = Change::new(mcp, move |text| with_server(text, &path, server.clone()))?;
    Ok(vec![hooks, mcp])
}

/// A settings file with `mem`'s own hooks (those [`super::is_mem_hook`] recognises) replaced by
/// `hooks`; every other byte is kept (see [`with_hooks_of`]).
pub fn with_hooks(text: Option<&str>, path: &Path, hooks: &[Hook]) -> Result<Option<String>> {
    with_hooks_of(text, path, hooks, |_| true)
}

/// A hook that `mem setup` wrote, where it is in its file.
pub struct MemHook {
    /// The event (`Stop`).
    pub event: String,
    /// The place of its group in the event's list, from 0.
    pub group: usize,
    /// Its place in the group's list of hooks, from 0.
    pub index: usize,
    /// The command line.
    pub command: String,
}

/// The hooks that `mem setup` wrote in a settings or hooks file, in order.
pub fn mem_hooks(text: &str) -> Vec<MemHook> {
    json::entries(text)
        .into_iter()
        .filter(|e| e.ours)
        .map(|e| MemHook { event: e.event, group: e.group, index: e.index, command: e.command })
        .collect()
}

/// The flag that ends mem's arguments in what a registration `started` so runs: none in a
/// project's own files.
pub fn flag(started: Started) -> Option<&'static str> {
    match started {
        Started::Own => None,
        Started::ProjectOnly => Some(PROJECT_ONLY),
        Started::UserScope => Some(USER_SCOPE),
    }
}

/// The change of a project's setup to the user's own file `file`: mem's `--project-only` hooks
/// (`wanted`: none when removing) in place of those there, for the sessions started in the
/// project's subfolders, where the agent runs the user's hooks alone. They act in projects
/// with a memory root only, and once with the project's own where both run.
pub fn project_only_hooks(file: PathBuf, wanted: Vec<Hook>) -> Result<Change> {
    let path = file.clone();
    Change::new(file, move |text| with_hooks_of(text, &path, &wanted, is_project_only))
}

/// Whether a settings or hooks file holds a set of mem's hooks that acts wherever the agent
/// reads it: a project's own hooks in the user's file (for subfolders) are no second set, as
/// they act only where the project's would not run, or once with them.
pub fn full_set(text: &str) -> bool {
    mem_hooks(text).iter().any(|h| !is_project_only(&h.command))
}
