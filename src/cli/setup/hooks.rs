//! mem's hook commands in the agents' files: the commands `mem setup` writes (one set for any
//! agent, named by the agent's events), and how a command is told to be mem's (this version's
//! or an older one's) rather than the user's.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use mem::agent::Agent;
use serde_json::json;

use super::super::hook::Started;
use super::json::{self, with_hooks_of};
use super::servers::with_server;
use super::{Change, Target, check};

/// A hook `mem setup` writes.
pub struct Hook {
    /// The agent's name of the event (`SessionStart`, `UserPromptSubmit`, `Stop`).
    pub event: &'static str,
    /// The command line.
    pub command: String,
    /// Seconds before the agent gives up on it (milliseconds for Gemini CLI).
    pub timeout: u64,
    /// Its name, for the agents that show one (Gemini CLI).
    pub name: Option<&'static str>,
}

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

/// A path as a shell word: quoted when it holds anything a shell would split or expand.
pub fn shell_word(path: &Path) -> Result<String> {
    let Some(text) = path.to_str() else {
        bail!("{} is not valid UTF-8, which a hook command cannot hold", path.display());
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return Ok(text.to_string());
    }
    Ok(format!("'{}'", text.replace('\'', r"'\''")))
}

/// The argument lists of the hook commands `mem setup` writes (any agent, any version of it),
/// after the agent's name has been put in place of `AGENT`.
const HOOK_ARGS: &[&[&str]] = &[
    &["context", "--hook", "AGENT"],
    &["context", "--hook", "AGENT", "--budget", "2000"],
    &["capture", "--hook", "AGENT"],
    &["checkpoint", "--hook", "AGENT"],
];

/// The last word of mem's arguments in the hooks a project's setup puts in the user's own file.
pub const PROJECT_ONLY: &str = "--project-only";

/// The last word of mem's arguments in the hooks and MCP server a setup at user scope writes
/// (the marker of a user-level registration: see [`Started::UserScope`]). An older setup wrote
/// them without it; they are still mem's, and a setup rewrites them.
pub const USER_SCOPE: &str = "--user-scope";

/// The flag that ends mem's arguments in what a registration `started` so runs: none in a
/// project's own files.
pub fn flag(started: Started) -> Option<&'static str> {
    match started {
        Started::Own => None,
        Started::ProjectOnly => Some(PROJECT_ONLY),
        Started::UserScope => Some(USER_SCOPE),
    }
}

/// What ends every hook command setup writes: whatever `mem` is or is not (missing from the
/// agent's `PATH`, too old for the arguments, broken), the hook exits 0, and no agent reads its
/// failure as "block this prompt" (Gemini CLI denies the prompt on any exit status but 0 and 1,
/// Claude Code on 2). Commands an older setup wrote end without it, and are still mem's.
pub const NEVER_BLOCKS: &str = " || true";

/// A hook command's mem part: the command without [`NEVER_BLOCKS`].
fn unguarded(command: &str) -> &str {
    let command = command.trim_end();
    command.strip_suffix(NEVER_BLOCKS).unwrap_or(command)
}

/// Whether a hook command is one that a project's setup puts in the user's own file (it acts
/// only in projects with a memory root).
pub fn is_project_only(command: &str) -> bool {
    is_mem_hook(command) && unguarded(command).split_whitespace().last() == Some(PROJECT_ONLY)
}

/// Whether a hook command of mem's carries no flag of a user-level registration: in the
/// user's own file, one an older setup at user scope wrote, which does not hold a cloned
/// repository's root back (`mem health` says so; a setup at user scope rewrites it).
pub fn is_unmarked(command: &str) -> bool {
    let last = unguarded(command).split_whitespace().last();
    is_mem_hook(command) && last != Some(PROJECT_ONLY) && last != Some(USER_SCOPE)
}

/// Whether a hook command is one `mem setup` writes (this version or an older one): mem's
/// executable (see [`is_mem_exe`]; bare, or by a path, quoted or not) with exactly one of
/// setup's argument lists, or one of them and [`PROJECT_ONLY`] or [`USER_SCOPE`], then
/// [`NEVER_BLOCKS`] or nothing. A command that runs mem with other arguments, or does more
/// (`&& notify-send done`), is the user's.
pub fn is_mem_hook(command: &str) -> bool {
    let Some((program, rest)) = check::program_of(unguarded(command)) else { return false };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let words = words
        .strip_suffix(&[PROJECT_ONLY])
        .or_else(|| words.strip_suffix(&[USER_SCOPE]))
        .unwrap_or(&words);
    is_mem_exe(program)
        && Agent::ALL.iter().map(|a| a.name()).any(|agent| {
            HOOK_ARGS.iter().any(|args| {
                args.len() == words.len()
                    && args
                        .iter()
                        .zip(words)
                        .all(|(a, w)| if *a == "AGENT" { *w == agent } else { a == w })
            })
        })
}

/// Whether a program word is mem's: an executable named `mem`, or one that resolves (a path,
/// or a bare name on `PATH`) to the running executable, whatever its name (`mem.real`). Never
/// any program run with `mcp`: a server of the user's own named `mem` stays the user's.
pub fn is_mem_exe(program: &str) -> bool {
    Path::new(program).file_name().is_some_and(|n| n == "mem") || is_this_exe(program)
}

/// Whether a program word starts the running executable.
fn is_this_exe(program: &str) -> bool {
    static THIS: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let this = THIS.get_or_init(|| std::env::current_exe().and_then(|p| p.canonicalize()).ok());
    let Some(this) = this else { return false };
    check::resolve(program).and_then(|p| p.canonicalize().ok()).as_ref() == Some(this)
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
