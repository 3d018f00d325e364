//! A command line of an agent's configuration as mem reads and writes it: a path as a shell
//! word, a command's program word and what it starts, and whether a command is one of the hooks
//! `mem setup` writes (this version's or an older one's) rather than the user's. The other
//! files of setup, `mem health` and the machine's messages share it.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use mem::agent::Agent;

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
    let Some((program, rest)) = program_of(unguarded(command)) else { return false };
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
    resolve(program).and_then(|p| p.canonicalize().ok()).as_ref() == Some(this)
}

/// The program word of a command line and the rest: the first word, or a first word in single
/// quotes (as setup writes a path that needs them).
pub fn program_of(command: &str) -> Option<(&str, &str)> {
    let command = command.trim();
    match command.strip_prefix('\'') {
        Some(quoted) => quoted.split_once('\''),
        None => Some(command.split_once(char::is_whitespace).unwrap_or((command, ""))),
    }
}

/// The executable a program word starts: a bare name is looked up on `PATH`, a path must be
/// an executable file.
pub fn resolve(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        which::which(Path::new(program)).ok()
    } else {
        which::which(program).ok()
    }
}
