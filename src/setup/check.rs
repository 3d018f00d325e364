//! What `mem health` checks of a setup: every command by which the agents' configuration runs
//! mem (hooks, MCP servers, a notify program) for a project, as each agent's entry finds them
//! in its files, and whether the agent can start it.

use std::path::{Path, PathBuf};

use mem::agent::{Agent, Homes};
use serde::Serialize;
use serde_json::Value;

use super::command::{is_mem_exe, is_unmarked, program_of, resolve};
use super::hooks::mem_hooks;
use super::servers::is_unmarked_server;

/// One command of an agent's configuration that runs mem.
#[derive(Debug, Serialize)]
pub struct Configured {
    /// The file that holds it.
    pub file: String,
    /// How it names mem (`mem`, or a path).
    pub program: String,
    /// The executable it starts, when it resolves to one.
    pub runs: Option<String>,
    /// For an agent that runs a hook only once the user trusts it: whether the user has.
    pub trusted: Option<bool>,
    /// What to do when it is not trusted, as its agent says.
    #[serde(skip)]
    pub fix: Option<&'static str>,
    /// Whether it is in the user's own files without `--user-scope` (an older setup at user
    /// scope wrote it): it uses a cloned repository's root that nobody here made or allowed.
    pub unmarked: bool,
    /// The agent whose file holds it.
    #[serde(skip)]
    pub agent: Agent,
}

impl Configured {
    /// Whether the agent runs it.
    pub fn runs(&self) -> bool {
        self.runs.is_some() && self.trusted != Some(false)
    }
}

/// A command that runs mem, as an agent's entry finds it in one of its files.
pub struct Found {
    /// The file.
    pub file: PathBuf,
    /// Its program word.
    pub program: String,
    /// Whether the agent trusts it, for an agent that runs hooks only once trusted.
    pub trusted: Option<bool>,
    /// What to do when it is not trusted.
    pub fix: Option<&'static str>,
    /// Whether it is a user-level command without `--user-scope` (see [`Configured::unmarked`]).
    pub unmarked: bool,
}

impl Found {
    /// A command that needs no trust.
    pub fn plain(file: &Path, program: String) -> Found {
        Found { file: file.to_path_buf(), program, trusted: None, fix: None, unmarked: false }
    }

    /// This command, said to lack `--user-scope` when `unmarked`.
    pub fn unmarked(self, unmarked: bool) -> Found {
        Found { unmarked, ..self }
    }
}

/// The commands that run mem in the agents' files that apply to the project at `project`: its
/// own and the user's, as each agent's entry lists them ([`super::Entry::commands`]). A file
/// that is missing or does not parse holds none.
pub fn configured(project: &Path, homes: &Homes) -> Vec<Configured> {
    let Some(home) = homes.user() else { return Vec::new() };
    let found = Agent::ALL.into_iter().flat_map(|agent| {
        let found = (super::entry(agent).commands)(project, home, homes.config_of(agent));
        found.into_iter().map(move |found| (agent, found))
    });
    // What each program starts, looked up once.
    let mut resolved: Vec<(String, Option<String>)> = Vec::new();
    let mut listed: Vec<Configured> = Vec::new();
    for (agent, Found { file, program, trusted, fix, unmarked }) in found {
        let file = file.display().to_string();
        let same = listed.iter_mut().find(|c| c.file == file && c.program == program);
        match same {
            // One line per file and program: untrusted when any of its hooks is, unmarked when
            // any of them is.
            Some(c) => {
                c.trusted = c.trusted.zip(trusted).map(|(a, b)| a && b).or(c.trusted);
                c.unmarked |= unmarked;
            }
            None => {
                let runs = match resolved.iter().find(|(p, _)| *p == program) {
                    Some((_, runs)) => runs.clone(),
                    None => {
                        let runs = resolve(&program).map(|p| p.display().to_string());
                        resolved.push((program.clone(), runs.clone()));
                        runs
                    }
                };
                listed.push(Configured { file, program, runs, trusted, fix, unmarked, agent });
            }
        }
    }
    listed
}

/// A configuration file's text: `None` when it is missing, and when it cannot be read (named
/// on stderr: its mem commands are not checked; a FIFO or a device is never opened).
pub fn read_checked(file: &Path) -> Option<String> {
    match super::read_settings(file) {
        Ok(text) => text,
        Err(why) => {
            eprintln!(
                "mem: warning: cannot read {}: {why}; its mem commands are not checked",
                file.display()
            );
            None
        }
    }
}

/// The programs of mem's hooks in a settings or hooks file (the hooks' JSON shape); in the
/// `user`'s own file, each hook of a setup at user scope without `--user-scope` is unmarked
/// (see [`is_unmarked`]).
pub fn hook_programs(file: &Path, user: bool) -> Vec<Found> {
    let Some(text) = read_checked(file) else { return Vec::new() };
    mem_hooks(&text)
        .iter()
        .filter_map(|hook| {
            let found = Found::plain(file, program_of(&hook.command)?.0.to_string());
            Some(found.unmarked(user && is_unmarked(&hook.command)))
        })
        .collect()
}

/// The program of the `mem` server of a JSON MCP configuration (`mcpServers`), when mem's;
/// in the `user`'s own file, unmarked without `--user-scope`.
pub fn server_program(file: &Path, user: bool) -> Option<Found> {
    server_program_in(file, "mcpServers", user)
}

/// The program of the `mem` server under `key` of a JSON (or JSONC) configuration, when mem's:
/// its `command`, a program or a list that starts with one (then its arguments follow it, else
/// they are in `args`); in the `user`'s own file, unmarked when they are `mcp` alone.
pub fn server_program_in(file: &Path, key: &str, user: bool) -> Option<Found> {
    let text = read_checked(file)?;
    use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
    let parsed = parse_to_ast(&text, &CollectOptions::default(), &ParseOptions::default()).ok()?;
    let value: Value = parsed.value?.into();
    let server = &value[key]["mem"];
    let command = &server["command"];
    let (program, args) = match command.as_array() {
        Some(list) => (list.first()?.as_str()?, list[1..].to_vec()),
        None => (command.as_str()?, server["args"].as_array().cloned().unwrap_or_default()),
    };
    let unmarked = user && is_unmarked_server(&args);
    is_mem_exe(program).then(|| Found::plain(file, program.to_string()).unmarked(unmarked))
}
