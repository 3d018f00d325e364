//! What `mem health` checks of a setup: every command by which the agents' configuration runs
//! mem (hooks, MCP servers, Codex's `notify`) for a project, and whether the agent can start it.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::claude::mem_hooks;
use super::is_mem_exe;

/// One command of an agent's configuration that runs mem.
#[derive(Debug, Serialize)]
pub struct Configured {
    /// The file that holds it.
    pub file: String,
    /// How it names mem (`mem`, or a path).
    pub program: String,
    /// The executable it starts, when it resolves to one.
    pub runs: Option<String>,
    /// For a Codex hook: whether the user has trusted it (Codex runs a hook only then).
    pub trusted: Option<bool>,
}

impl Configured {
    /// Whether the agent runs it.
    pub fn runs(&self) -> bool {
        self.runs.is_some() && self.trusted != Some(false)
    }
}

/// The commands that run mem in the agents' files that apply to the project at `project`:
/// its own (`.claude/settings.json`, `.mcp.json`, `.codex/`, `.gemini/settings.json`) and the
/// user's (`home`'s `.claude/settings.json` and `.claude.json`, `codex_home`'s `config.toml`
/// and `hooks.json`, `gemini_home`'s `settings.json`).
/// A file that is missing or does not parse holds none.
pub fn configured(
    project: &Path,
    home: &Path,
    codex_home: Option<&Path>,
    gemini_home: Option<&Path>,
) -> Vec<Configured> {
    let mut files: Vec<(PathBuf, Kind)> = vec![
        (project.join(".claude/settings.json"), Kind::Hooks),
        (project.join(".claude/settings.local.json"), Kind::Hooks),
        (project.join(".mcp.json"), Kind::ClaudeServers),
        (project.join(".codex/hooks.json"), Kind::CodexHooks),
        (project.join(".codex/config.toml"), Kind::CodexConfig),
        (home.join(".claude/settings.json"), Kind::Hooks),
        (home.join(".claude.json"), Kind::ClaudeServers),
        (project.join(".gemini/settings.json"), Kind::HooksAndServers),
    ];
    if let Some(gemini) = gemini_home {
        files.push((gemini.join("settings.json"), Kind::HooksAndServers));
    }
    if let Some(codex) = codex_home {
        files.push((codex.join("hooks.json"), Kind::CodexHooks));
        files.push((codex.join("config.toml"), Kind::CodexConfig));
    }
    // Each file read once; a file that is missing holds none, and one that cannot be read is
    // named on stderr and holds none (a FIFO or a device is never opened: `read_settings`).
    let texts: Vec<(PathBuf, Kind, String)> = files
        .into_iter()
        .filter_map(|(file, kind)| match super::read_settings(&file) {
            Ok(text) => Some((file, kind, text?)),
            Err(why) => {
                eprintln!(
                    "mem: warning: cannot read {}: {why}; its mem commands are not checked",
                    file.display()
                );
                None
            }
        })
        .collect();
    let trusted = codex_home
        .and_then(|codex| texts.iter().find(|(file, ..)| *file == codex.join("config.toml")))
        .map(|(_, _, text)| trusted_keys(text))
        .unwrap_or_default();
    // What each program starts, looked up once.
    let mut resolved: Vec<(String, Option<String>)> = Vec::new();
    let mut found: Vec<Configured> = Vec::new();
    for (file, kind, text) in &texts {
        let names = match kind {
            Kind::CodexHooks => hook_file_names(file),
            _ => Vec::new(),
        };
        // (program, trusted)
        let programs: Vec<(String, Option<bool>)> = match kind {
            Kind::Hooks | Kind::CodexHooks => mem_hooks(text)
                .iter()
                .filter_map(|hook| {
                    let (program, _) = program_of(&hook.command)?;
                    let trust = matches!(kind, Kind::CodexHooks).then(|| {
                        hook_keys(&names, &hook.event, hook.group, hook.index)
                            .iter()
                            .any(|key| trusted.contains(key))
                    });
                    Some((program.to_string(), trust))
                })
                .collect(),
            Kind::ClaudeServers => claude_server(text).into_iter().map(|p| (p, None)).collect(),
            Kind::HooksAndServers => mem_hooks(text)
                .iter()
                .filter_map(|hook| Some(program_of(&hook.command)?.0.to_string()))
                .chain(claude_server(text))
                .map(|p| (p, None))
                .collect(),
            Kind::CodexConfig => codex_programs(text).into_iter().map(|p| (p, None)).collect(),
        };
        let file = file.display().to_string();
        for (program, trusted) in programs {
            let same = found.iter_mut().find(|c| c.file == file && c.program == program);
            match same {
                // One line per file and program: untrusted when any of its hooks is.
                Some(c) => c.trusted = c.trusted.zip(trusted).map(|(a, b)| a && b).or(c.trusted),
                None => {
                    let runs = match resolved.iter().find(|(p, _)| *p == program) {
                        Some((_, runs)) => runs.clone(),
                        None => {
                            let runs = resolve(&program).map(|p| p.display().to_string());
                            resolved.push((program.clone(), runs.clone()));
                            runs
                        }
                    };
                    found.push(Configured { file: file.clone(), program, runs, trusted });
                }
            }
        }
    }
    found
}

/// Whether Codex runs mem's hooks for the project at `project`: its `.codex/hooks.json` or
/// `codex_home`'s holds mem hooks that start a mem and are each trusted in `codex_home`'s
/// `config.toml`. Reads Codex's files only (Codex's `notify` asks on every turn).
pub fn codex_hooks_trusted(project: &Path, codex_home: &Path) -> bool {
    let Ok(Some(config)) = super::read_settings(&codex_home.join("config.toml")) else {
        return false;
    };
    let trusted = trusted_keys(&config);
    [project.join(".codex/hooks.json"), codex_home.join("hooks.json")].iter().any(|file| {
        let Ok(Some(text)) = super::read_settings(file) else { return false };
        let names = hook_file_names(file);
        let hooks = mem_hooks(&text);
        !hooks.is_empty()
            && hooks.iter().all(|hook| {
                let runs = program_of(&hook.command).and_then(|(p, _)| resolve(p)).is_some();
                let keys = hook_keys(&names, &hook.event, hook.group, hook.index);
                runs && keys.iter().any(|key| trusted.contains(key))
            })
    })
}

/// A hooks file's path as written and as resolved, as Codex's trust keys may name it.
fn hook_file_names(file: &Path) -> Vec<PathBuf> {
    std::iter::once(file.to_path_buf()).chain(file.canonicalize().ok()).collect()
}

/// The keys under which Codex records the trust of the hook number `index` of group number
/// `group` of `event` in the hooks file named `names` (as written, as resolved):
/// `<file>:<event in snake case>:<group>:<index>`.
fn hook_keys(names: &[PathBuf], event: &str, group: usize, index: usize) -> Vec<String> {
    let mut snake = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        snake.push(c.to_ascii_lowercase());
    }
    names.iter().map(|p| format!("{}:{snake}:{group}:{index}", p.display())).collect()
}

/// The hooks a Codex `config.toml` records as trusted: the keys of `[hooks.state]` that have a
/// `trusted_hash` and are not disabled.
fn trusted_keys(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else { return Vec::new() };
    let Some(state) = doc.get("hooks").and_then(|h| h.get("state")).and_then(|s| s.as_table_like())
    else {
        return Vec::new();
    };
    state
        .iter()
        .filter(|(_, entry)| {
            entry.get("trusted_hash").is_some()
                && entry.get("enabled").and_then(|e| e.as_bool()) != Some(false)
        })
        .map(|(key, _)| key.to_string())
        .collect()
}

/// What a configuration file is, for finding mem in it.
#[derive(Clone, Copy)]
enum Kind {
    /// A Claude Code settings file with a `hooks` object.
    Hooks,
    /// A Codex hooks file (the same shape; Codex runs a hook once the user trusts it).
    CodexHooks,
    /// Claude Code's MCP configuration (`mcpServers`).
    ClaudeServers,
    /// Codex's `config.toml` (`mcp_servers`, `notify`).
    CodexConfig,
    /// Gemini CLI's settings: hooks as Claude Code's, and `mcpServers`.
    HooksAndServers,
}

/// The program of the `mem` server of a Claude Code MCP configuration, when mem's.
fn claude_server(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    let command = value["mcpServers"]["mem"]["command"].as_str()?;
    is_mem_exe(command).then(|| command.to_string())
}

/// The programs of mem's `notify` and `mem` server in a Codex `config.toml`.
fn codex_programs(text: &str) -> Vec<String> {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else { return Vec::new() };
    let notify = doc.get("notify").and_then(|n| n.as_array()).and_then(|a| a.get(0)?.as_str());
    let server = doc
        .get("mcp_servers")
        .and_then(|s| s.get("mem"))
        .and_then(|s| s.get("command"))
        .and_then(|c| c.as_str());
    notify.into_iter().chain(server).filter(|p| is_mem_exe(p)).map(str::to_string).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_split_from_their_arguments() {
        assert_eq!(program_of("mem context --hook claude"), Some(("mem", "context --hook claude")));
        assert_eq!(program_of("'/a b/mem' mcp"), Some(("/a b/mem", " mcp")));
        assert_eq!(program_of("mem"), Some(("mem", "")));
        assert_eq!(program_of("'unclosed"), None);
    }

    #[test]
    fn every_file_that_runs_mem_is_listed_with_what_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let (project, home) = (dir.path().join("repo"), dir.path().join("home"));
        std::fs::create_dir_all(project.join(".codex")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        let hooks = r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/nowhere/mem capture --hook claude"},{"type":"command","command":"notify-send done"}]}]}}"#;
        std::fs::write(home.join(".claude/settings.json"), hooks).unwrap();
        std::fs::write(project.join(".mcp.json"), r#"{"mcpServers":{"mem":{"command":"mem"}}}"#)
            .unwrap();
        std::fs::write(
            project.join(".codex/config.toml"),
            "notify = [\"/bin/sh\"]\n[mcp_servers.mem]\ncommand = \"/nowhere/mem\"\n",
        )
        .unwrap();
        let found = configured(&project, &home, None, None);
        let listed: Vec<(&str, bool)> =
            found.iter().map(|c| (c.file.rsplit('/').next().unwrap(), c.runs.is_some())).collect();
        // /nowhere/mem resolves to nothing; whether `mem` does depends on this machine's PATH.
        assert_eq!(listed.len(), 3, "{found:?}");
        assert_eq!(listed[0].0, ".mcp.json");
        assert_eq!(listed[1], ("config.toml", false));
        assert_eq!(listed[2], ("settings.json", false));
    }
}
