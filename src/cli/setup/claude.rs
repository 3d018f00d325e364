//! `mem setup claude`: the hooks in Claude Code's `settings.json` and the `mem` server in its
//! MCP configuration (the hooks' JSON editing, which Codex's `hooks.json` and Gemini CLI's
//! `settings.json` share, is in `json.rs`).

use std::path::Path;

use anyhow::{Result, bail};
use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use serde_json::{Map, Value, json};

use super::json::{
    self, indent_at, insert_prop, last, multiline, parse_object, prop_ranges, remove_item,
    render_value, splice, unique,
};
use super::{
    Change, NEVER_BLOCKS, PROJECT_ONLY, Scope, Target, is_mem_exe, is_project_only, shell_word,
};
use mem::agent::Agent;

pub use super::json::with_hooks_of;

/// A hook `mem setup` writes.
pub struct Hook {
    /// The event (`SessionStart`, `UserPromptSubmit`, `Stop`, `SessionEnd`).
    pub event: &'static str,
    /// The command line.
    pub command: String,
    /// Seconds before the agent gives up on it (milliseconds for Gemini CLI).
    pub timeout: u64,
    /// Its name, for the agents that show one (Gemini CLI).
    pub name: Option<&'static str>,
}

/// The hooks for `agent` with the `mem` at `exe`, named by Claude Code's events: context at session
/// start, the prompt's memories on each prompt, a capture when the agent stops (and, where
/// the agent has it, when the session ends); with `checkpoints`, a checkpoint on each prompt.
/// With `project_only`, mem's arguments end with `--project-only` (see [`is_project_only`]);
/// every command ends with [`NEVER_BLOCKS`].
pub fn hooks(
    exe: &Path,
    agent: Agent,
    session_end: bool,
    checkpoints: bool,
    project_only: bool,
) -> Result<Vec<Hook>> {
    let mem = shell_word(exe)?;
    let mut hooks = vec![
        Hook {
            event: "SessionStart",
            command: format!("{mem} context --hook {agent}"),
            timeout: 10,
            name: None,
        },
        Hook {
            event: "UserPromptSubmit",
            command: format!("{mem} context --hook {agent} --budget 2000"),
            timeout: 10,
            name: None,
        },
        Hook {
            event: "Stop",
            command: format!("{mem} capture --hook {agent}"),
            timeout: 30,
            name: None,
        },
    ];
    if checkpoints {
        hooks.push(Hook {
            event: "UserPromptSubmit",
            command: format!("{mem} checkpoint --hook {agent}"),
            timeout: 30,
            name: None,
        });
    }
    if session_end {
        hooks.push(Hook {
            event: "SessionEnd",
            command: format!("{mem} capture --hook {agent}"),
            timeout: 30,
            name: None,
        });
    }
    for hook in &mut hooks {
        if project_only {
            hook.command = format!("{} {PROJECT_ONLY}", hook.command);
        }
        hook.command.push_str(NEVER_BLOCKS);
    }
    Ok(hooks)
}

/// The changes for Claude Code at `target`.
pub fn changes(target: &Target) -> Result<Vec<Change>> {
    let (settings, mcp) = match target.scope {
        Scope::Project => {
            (target.project.join(".claude/settings.json"), target.project.join(".mcp.json"))
        }
        Scope::User => {
            (target.home.join(".claude/settings.json"), target.home.join(".claude.json"))
        }
    };
    let own = if target.remove {
        Vec::new()
    } else {
        hooks(target.mem(), Agent::Claude, true, target.checkpoints, false)?
    };
    let server = (!target.remove)
        .then(|| json!({ "command": target.mem().to_string_lossy(), "args": ["mcp"] }));
    let path = settings.clone();
    let settings = Change::new(settings, move |text| with_hooks(text, &path, &own))?;
    let path = mcp.clone();
    let mcp = Change::new(mcp, move |text| with_server(text, &path, server.clone()))?;
    let mut changes = vec![settings, mcp];
    if target.edits_user_hooks() {
        // Claude Code reads a project's settings in the folder it is started in only: started in
        // a subfolder, it runs the user's hooks alone. These act in projects with a memory root
        // only, and once with the project's own where both run.
        let user = target.home.join(".claude/settings.json");
        let wanted = if target.remove {
            Vec::new()
        } else {
            hooks(&target.exe, Agent::Claude, true, target.checkpoints, true)?
        };
        let path = user.clone();
        changes.push(Change::new(user, move |text| {
            with_hooks_of(text, &path, &wanted, is_project_only)
        })?);
    }
    Ok(changes)
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

/// Whether an MCP server entry is the one `mem setup` writes: a `mem` executable run with
/// exactly `mcp`, and nothing else but the keys Claude Code itself adds (`type: stdio`, an
/// empty `env`) and Gemini CLI's `trust: true`.
fn is_mem_server(server: &Value) -> bool {
    let Some(entry) = server.as_object() else { return false };
    let known =
        entry.keys().all(|k| ["command", "args", "type", "env", "trust"].contains(&k.as_str()));
    known
        && entry.get("command").and_then(Value::as_str).is_some_and(is_mem_exe)
        && entry.get("args") == Some(&json!(["mcp"]))
        && entry.get("type").is_none_or(|t| t == "stdio")
        && entry.get("env").is_none_or(|e| e.as_object().is_some_and(Map::is_empty))
        && entry.get("trust").is_none_or(|t| t == true)
}

/// An MCP configuration with the `mem` server under `mcpServers` set to `server`, or taken
/// out (`None`); a repeated `mcpServers` or `mem` is refused, as the agent reads the last. A
/// server named `mem` that mem setup did not write is the user's: adding stops
/// with an error that names the file and the entry, removing leaves it. The edit is a splice of
/// the file's text at the entry's place (found by a parser that keeps positions), so every
/// other byte stays as it is: numbers too large for a float, other repeated keys, comments, a file
/// written on one line, and a large file costs one parse.
pub fn with_server(
    text: Option<&str>,
    path: &Path,
    server: Option<Value>,
) -> Result<Option<String>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(server.map(|server| {
            let file = json!({ "mcpServers": { "mem": server } });
            serde_json::to_string_pretty(&file).expect("JSON serialises") + "\n"
        }));
    };
    let root = parse_object(text, path)?;
    // Where a key is repeated, the agent reads the last one: refused rather than guessed.
    unique(&root, "mcpServers", path, "")?;
    let servers_at = last(&root, "mcpServers");
    let servers = match servers_at.map(|i| &root.properties[i].value) {
        None => None,
        Some(ast::Value::Object(servers)) => Some(servers),
        Some(_) => {
            bail!("`mcpServers` in {} is not an object; mem setup leaves it alone", path.display())
        }
    };
    if let Some(servers) = servers {
        unique(servers, "mem", path, " in `mcpServers`")?;
    }
    let mem_at = servers.and_then(|s| last(s, "mem"));
    let current = servers.zip(mem_at).map(|(s, i)| {
        let range = s.properties[i].value.range();
        serde_json::from_str::<Value>(&text[range.start..range.end]).unwrap_or(Value::Null)
    });
    if let Some(current) = &current
        && !is_mem_server(current)
    {
        if server.is_none() {
            return Ok(Some(text.to_string()));
        }
        bail!(
            "{} already has an MCP server named `mem` that mem setup did not write ({}); mem \
             setup stops rather than replace it: rename that entry (the agent's tools would be \
             `mcp__<name>__…`) or remove it, then run mem setup again",
            path.display(),
            serde_json::to_string(current).unwrap_or_default()
        );
    }
    let removing = server.is_none() && mem_at.is_some();
    let edited = match (servers, mem_at, server) {
        (Some(_), Some(_), Some(server)) if current.as_ref() == Some(&server) => {
            return Ok(Some(text.to_string()));
        }
        (Some(servers), Some(i), Some(server)) => {
            let range = servers.properties[i].value.range();
            let indent = indent_at(text, servers.properties[i].range.start);
            let value = render_value(&server, multiline(text, servers.range), &indent);
            splice(text, range.start, range.end, &value)
        }
        (Some(servers), None, Some(server)) => insert_prop(text, servers, "mem", &server),
        (None, _, Some(server)) => {
            insert_prop(text, &root, "mcpServers", &json!({ "mem": server }))
        }
        (Some(servers), Some(_), None) if servers.properties.len() == 1 => {
            let at = servers_at.expect("found with the servers");
            remove_item(text, &prop_ranges(&root), root.range, at)
        }
        (Some(servers), Some(i), None) => {
            remove_item(text, &prop_ranges(servers), servers.range, i)
        }
        (_, _, None) => return Ok(Some(text.to_string())),
    };
    // Nothing is left when the servers, all mem's, were all the file held.
    let emptied =
        removing && servers.is_some_and(|s| s.properties.len() == 1) && root.properties.len() == 1;
    Ok((!emptied).then_some(edited))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let hooks = hooks(Path::new("/opt/mem"), Agent::Claude, true, true, false).unwrap();
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
