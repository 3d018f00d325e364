//! `mem setup codex`: the `mem` server and the `notify` program in Codex's `config.toml`
//! (edited with `toml_edit`, so the user's comments and layout stay) and the hooks in its
//! `hooks.json` (the shape Claude Code's settings use).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use mem::agent::Agent;
use toml_edit::{DocumentMut, Item, Table, value};

use super::claude::{hooks, with_hooks};
use super::{Change, Scope, Target, is_mem_exe};

/// The environment variables Codex is told to pass to `mem mcp` (it passes only a short
/// allow-list by default): the root, the model and the user configuration's folder.
pub const FORWARDED: [&str; 5] =
    ["MEM_DIR", "MEM_EMBED_MODEL_DIR", "ORT_DYLIB_PATH", "XDG_CONFIG_HOME", "XDG_DATA_HOME"];

/// The changes for Codex at `target`; `codex_home` is `$CODEX_HOME` or `~/.codex`.
pub fn changes(target: &Target, codex_home: &Option<PathBuf>) -> Result<Vec<Change>> {
    let folder = match target.scope {
        Scope::Project => target.project.join(".codex"),
        Scope::User => codex_home.clone().context("cannot tell Codex's home folder")?,
    };
    let config = folder.join("config.toml");
    let (path, of) = (config.clone(), target.clone());
    let config = Change::new(config, move |text| with_config(text, &path, &of))?;
    // Codex has no SessionEnd event: its Stop hook captures.
    let hooks = if target.remove {
        Vec::new()
    } else {
        hooks(target.mem(), Agent::Codex, false, target.checkpoints, false)?
    };
    let hooks_file = folder.join("hooks.json");
    let path = hooks_file.clone();
    let hooks_file = Change::new(hooks_file, move |text| with_hooks(text, &path, &hooks))?;
    Ok(vec![config, hooks_file])
}

/// The arguments of the `notify` program setup writes.
const NOTIFY: [&str; 3] = ["capture", "--hook", "codex"];

/// Whether the `notify` of a parsed `config.toml` is mem's: a mem executable with exactly
/// setup's arguments; anything else is the user's.
fn notify_is_mem_s(doc: &DocumentMut) -> bool {
    doc.get("notify").and_then(Item::as_array).is_some_and(|a| {
        let words: Vec<&str> = a.iter().filter_map(|v| v.as_str()).collect();
        words.len() == a.len() && words.len() == 4 && is_mem_exe(words[0]) && words[1..] == NOTIFY
    })
}

/// Whether a Codex `config.toml` runs mem's capture as its `notify` program.
pub fn has_mem_notify(text: &str) -> bool {
    text.parse::<DocumentMut>().is_ok_and(|doc| notify_is_mem_s(&doc))
}

/// `config.toml` with `[mcp_servers.mem]` set and, in the user's own file when the user has no
/// `notify` program, `mem capture` as one (it captures even before the user trusts the hooks);
/// both taken out when removing (a `mem` server or `notify` that runs some other program is left alone).
/// Comments and the rest of the file are kept.
fn with_config(text: Option<&str>, path: &Path, target: &Target) -> Result<Option<String>> {
    let old = text.unwrap_or("");
    let mut doc: DocumentMut = old.parse().with_context(|| {
        format!("{} is not valid TOML; fix it, then run mem setup again", path.display())
    })?;
    let exe = target.mem().to_string_lossy();
    let ours_notify = notify_is_mem_s(&doc);
    // Codex reads `notify` from the user's file only (a project's is ignored, with a warning
    // on every run): one that an older setup wrote into a project's file goes.
    let notify_here = target.scope == Scope::User;
    if target.remove || !notify_here {
        if ours_notify {
            doc.remove("notify");
        }
    } else if doc.get("notify").is_none() || ours_notify {
        let wanted = toml_edit::Array::from_iter(std::iter::once(exe.as_ref()).chain(NOTIFY));
        let same =
            doc.get("notify").is_some_and(|n| n.to_string().trim() == wanted.to_string().trim());
        if !same {
            // A top-level key goes before the first table.
            doc.insert("notify", value(wanted));
        }
    }
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut table = Table::new();
        table.set_implicit(true);
        Item::Table(table)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        bail!("`mcp_servers` in {} is not a table; mem setup leaves it alone", path.display());
    };
    // Ours: a mem executable run with exactly `mcp`.
    let ours = servers.get("mem").map(|s| {
        let command = s.get("command").and_then(Item::as_str).is_some_and(is_mem_exe);
        let args = s
            .get("args")
            .and_then(Item::as_array)
            .map(|a| a.iter().map(|v| v.as_str().map(String::from)).collect::<Vec<_>>());
        command && args == Some(vec![Some("mcp".to_string())])
    });
    if ours == Some(false) && !target.remove {
        let entry = servers.get("mem").map(|s| s.to_string()).unwrap_or_default();
        bail!(
            "{} already has an MCP server named `mem` that mem setup did not write ({}); mem \
             setup stops rather than replace it: rename that entry or remove it, then run mem \
             setup again",
            path.display(),
            entry.trim()
        );
    }
    if target.remove {
        if ours == Some(true) {
            servers.remove("mem");
        }
    } else {
        let mut server = Table::new();
        server["command"] = value(exe.as_ref());
        server["args"] = value(toml_edit::Array::from_iter(["mcp"]));
        server["env_vars"] = value(toml_edit::Array::from_iter(FORWARDED));
        // Loading the embedding model can take a few seconds on a busy machine.
        server["startup_timeout_sec"] = value(30.0);
        let unchanged = servers.get("mem").and_then(Item::as_table).is_some_and(|t| {
            t.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
                == server.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()
        });
        if !unchanged {
            servers.insert("mem", Item::Table(server));
        }
    }
    if servers.is_empty() {
        doc.remove("mcp_servers");
    }
    let new = doc.to_string();
    if new.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(new))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(remove: bool) -> Target {
        Target {
            scope: Scope::User,
            project: PathBuf::from("/repo"),
            home: PathBuf::from("/home/ana"),
            exe: PathBuf::from("/opt/mem"),
            remove,
            checkpoints: false,
            others: Vec::new(),
        }
    }

    const USERS: &str = "# my settings\nmodel = \"gpt-5\"\n\n[mcp_servers.db]\ncommand = \"pg-mcp\" # the database\n";

    #[test]
    fn the_server_is_merged_idempotent_and_removable() {
        let path = Path::new("config.toml");
        let added = with_config(Some(USERS), path, &target(false)).unwrap().unwrap();
        let doc: DocumentMut = added.parse().unwrap();
        assert_eq!(doc["mcp_servers"]["mem"]["command"].as_str(), Some("/opt/mem"));
        assert_eq!(doc["mcp_servers"]["db"]["command"].as_str(), Some("pg-mcp"));
        assert!(added.contains("command = \"pg-mcp\" # the database\n"), "{added}");
        assert!(
            added.starts_with(
                "# my settings\nmodel = \"gpt-5\"\nnotify = [\"/opt/mem\", \"capture\""
            ),
            "{added}"
        );
        assert!(added.contains("env_vars = [\"MEM_DIR\""), "{added}");
        assert_eq!(with_config(Some(&added), path, &target(false)).unwrap().unwrap(), added);
        let removed = with_config(Some(&added), path, &target(true)).unwrap().unwrap();
        assert_eq!(removed, USERS);
        assert_eq!(with_config(None, path, &target(true)).unwrap(), None);
        let only = with_config(None, path, &target(false)).unwrap();
        assert_eq!(with_config(only.as_deref(), path, &target(true)).unwrap(), None);
        assert!(with_config(Some("= nope"), path, &target(false)).is_err());
        // A user's own notify program stays, and is not taken out.
        let theirs = "notify = [\"notify-send\"]\n";
        let added = with_config(Some(theirs), path, &target(false)).unwrap().unwrap();
        assert!(added.starts_with(theirs), "{added}");
        assert_eq!(with_config(Some(&added), path, &target(true)).unwrap().unwrap(), theirs);
    }
}
