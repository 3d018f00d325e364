//! `mem setup claude`: the hooks in Claude Code's `settings.json` and the `mem` server in its
//! MCP configuration, and the JSON editing that Codex's `hooks.json` shares.

use std::path::Path;

use anyhow::{Result, bail};
use serde_json::{Map, Value, json};

use super::{Change, Scope, Target, is_mem_exe, is_mem_hook, read, shell_word};

/// A hook `mem setup` writes.
pub struct Hook {
    /// The event (`SessionStart`, `UserPromptSubmit`, `Stop`, `SessionEnd`).
    pub event: &'static str,
    /// The command line.
    pub command: String,
    /// Seconds before the agent gives up on it.
    pub timeout: u64,
}

/// The hooks for `agent` (`claude` or `codex`) with the `mem` at `exe`: context at session
/// start, the prompt's memories on each prompt, a capture when the agent stops (and, where
/// the agent has it, when the session ends); with `checkpoints`, a checkpoint on each prompt.
pub fn hooks(exe: &Path, agent: &str, session_end: bool, checkpoints: bool) -> Result<Vec<Hook>> {
    let mem = shell_word(exe)?;
    let mut hooks = vec![
        Hook {
            event: "SessionStart",
            command: format!("{mem} context --hook {agent}"),
            timeout: 10,
        },
        Hook {
            event: "UserPromptSubmit",
            command: format!("{mem} context --hook {agent} --budget 2000"),
            timeout: 10,
        },
        Hook { event: "Stop", command: format!("{mem} capture --hook {agent}"), timeout: 30 },
    ];
    if checkpoints {
        hooks.push(Hook {
            event: "UserPromptSubmit",
            command: format!("{mem} checkpoint --hook {agent}"),
            timeout: 30,
        });
    }
    if session_end {
        hooks.push(Hook {
            event: "SessionEnd",
            command: format!("{mem} capture --hook {agent}"),
            timeout: 30,
        });
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
    let hooks = if target.remove {
        Vec::new()
    } else {
        hooks(&target.exe, "claude", true, target.checkpoints)?
    };
    let server = (!target.remove)
        .then(|| json!({ "command": target.exe.to_string_lossy(), "args": ["mcp"] }));
    let before = read(&settings)?;
    let after = with_hooks(before.as_deref(), &settings, &hooks)?;
    let settings = Change { path: settings, before, after };
    let before = read(&mcp)?;
    let after = with_server(before.as_deref(), &mcp, server)?;
    let mcp = Change { path: mcp, before, after };
    Ok(vec![settings, mcp])
}

/// Parses a configuration file that must hold a JSON object (missing or blank: an empty one).
fn object(text: Option<&str>, path: &Path) -> Result<Map<String, Value>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(Map::new());
    };
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => {
            bail!("{} holds JSON but not an object; mem setup leaves it alone", path.display())
        }
        Err(e) => {
            bail!("{} is not valid JSON ({e}); fix it, then run mem setup again", path.display())
        }
    }
}

/// The file's new text: `None` when the object ends up empty (nothing of the user's is in it),
/// the old text itself when nothing changed (no reformatting).
fn render(old: Option<&str>, path: &Path, new: Map<String, Value>) -> Result<Option<String>> {
    if object(old, path)? == new && old.is_some() {
        return Ok(old.map(str::to_string));
    }
    if new.is_empty() {
        return Ok(None);
    }
    Ok(Some(serde_json::to_string_pretty(&Value::Object(new))? + "\n"))
}

/// A settings file with every `mem` hook taken out of its `hooks` object and `hooks` added;
/// the user's other hooks and keys are kept as they are.
pub fn with_hooks(text: Option<&str>, path: &Path, hooks: &[Hook]) -> Result<Option<String>> {
    let mut root = object(text, path)?;
    let mut table = match root.remove("hooks") {
        None => Map::new(),
        Some(Value::Object(table)) => table,
        Some(_) => {
            bail!("`hooks` in {} is not an object; mem setup leaves it alone", path.display())
        }
    };
    for groups in table.values_mut() {
        let Value::Array(groups) = groups else { continue };
        groups.retain_mut(|group| {
            let Some(Value::Array(list)) = group.get_mut("hooks") else { return true };
            let had = list.len();
            list.retain(|h| !h.get("command").and_then(Value::as_str).is_some_and(is_mem_hook));
            // A group that only held mem's hooks goes with them.
            !(list.is_empty() && had > 0)
        });
    }
    table.retain(|_, groups| !groups.as_array().is_some_and(Vec::is_empty));
    for hook in hooks {
        let group = json!({
            "hooks": [{ "type": "command", "command": hook.command, "timeout": hook.timeout }]
        });
        match table.entry(hook.event).or_insert_with(|| Value::Array(Vec::new())) {
            Value::Array(groups) => groups.push(group),
            _ => bail!(
                "`hooks.{}` in {} is not a list; mem setup leaves it alone",
                hook.event,
                path.display()
            ),
        }
    }
    if !table.is_empty() {
        root.insert("hooks".to_string(), Value::Object(table));
    }
    render(text, path, root)
}

/// An MCP configuration with the `mem` server under `mcpServers` set to `server`, or taken
/// out (`None`; a `mem` entry that runs some other program is left alone).
pub fn with_server(
    text: Option<&str>,
    path: &Path,
    server: Option<Value>,
) -> Result<Option<String>> {
    let mut root = object(text, path)?;
    let mut servers = match root.remove("mcpServers") {
        None => Map::new(),
        Some(Value::Object(servers)) => servers,
        Some(_) => {
            bail!("`mcpServers` in {} is not an object; mem setup leaves it alone", path.display())
        }
    };
    match server {
        Some(server) => {
            servers.insert("mem".to_string(), server);
        }
        None => {
            let ours = servers
                .get("mem")
                .and_then(|s| s.get("command"))
                .and_then(Value::as_str)
                .is_some_and(is_mem_exe);
            if ours {
                servers.remove("mem");
            }
        }
    }
    if !servers.is_empty() {
        root.insert("mcpServers".to_string(), Value::Object(servers));
    }
    render(text, path, root)
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
        let hooks = hooks(Path::new("/opt/mem"), "claude", true, true).unwrap();
        let added = with_hooks(Some(USERS), path, &hooks).unwrap().unwrap();
        let value: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(value["model"], "opus");
        assert_eq!(value["hooks"]["Stop"][0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(
            value["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/mem capture --hook claude"
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
            ["/opt/mem context --hook claude --budget 2000", "/opt/mem checkpoint --hook claude"]
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
