//! `mem setup codex`: the `mem` server and the `notify` program in Codex's `config.toml`
//! (edited with `toml_edit`, so the user's comments and layout stay) and the hooks in its
//! `hooks.json` (the shape Claude Code's settings use).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use mem::agent::Agent;
use toml_edit::{DocumentMut, Item, Table, value};

use super::check::{Found, read_checked};
use super::command::{USER_SCOPE, is_mem_exe, is_unmarked, program_of, resolve};
use super::hooks::{hooks, mem_hooks, with_hooks};
use super::servers::{is_server_args, is_unmarked_server};
use super::{Change, Entry, Scope, Target};

/// Codex's entry.
pub const ENTRY: Entry = Entry {
    project_files: &[".codex/config.toml", HOOKS],
    changes,
    hooks_file: |scope, target, home| match scope {
        Scope::Project => Some(target.project.join(HOOKS)),
        Scope::User => Some(home?.join("hooks.json")),
    },
    full_set: super::hooks::full_set,
    // Codex reads a project's `.codex/` in its subfolders too.
    project_only_hooks: |_, _| None,
    notes,
    commands,
    defers_to_hooks,
};

/// Codex's hooks file in a project.
const HOOKS: &str = ".codex/hooks.json";

/// What the user still has to do in Codex after a setup at `scope`.
fn notes(scope: Scope, changes: &[Change]) -> Vec<&'static str> {
    // Whether Codex's `notify` runs mem's capture (setup writes it only where the user has
    // no `notify` of their own).
    let mem_notify = changes
        .iter()
        .any(|c| c.path.ends_with("config.toml") && c.after.as_deref().is_some_and(has_mem_notify));
    match scope {
        Scope::User if mem_notify => vec![
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then the notify program (in the same config.toml) captures each turn, \
             but no memory reaches the model; once they are trusted, the hooks capture and \
             notify leaves it to them",
        ],
        Scope::User => vec![
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then nothing is captured and no memory reaches the model (your own \
             notify program stays as it is; `mem capture --missed` captures the sessions missed)",
        ],
        Scope::Project => vec![
            "Codex reads a project's .codex/ folder only when the project is trusted (Codex asks \
             on first start)",
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then nothing of this project's sessions is captured and no memory \
             reaches the model (Codex ignores a project's notify), and `mem health --transcripts` \
             counts those sessions as not captured",
        ],
    }
}

/// The commands that run mem in Codex's files for `project` (`home`: Codex's home folder):
/// hooks, with whether the user trusted each, the `notify` program and the `mem` server.
fn commands(project: &Path, _: &Path, home: Option<&Path>) -> Vec<Found> {
    let config = home.and_then(|h| read_checked(&h.join("config.toml")));
    let trusted = config.as_deref().map(trusted_keys).unwrap_or_default();
    let notify = config.as_deref().is_some_and(has_mem_notify);
    let fix = if notify {
        "Codex has not trusted these hooks yet, so it does not run them: mem's notify program \
         captures each turn meanwhile, but no memory reaches the model; run /hooks in Codex \
         and trust the mem hooks"
    } else {
        "Codex has not trusted these hooks yet, so it does not run them and this project's \
         Codex sessions are not captured: run /hooks in Codex and trust the mem hooks"
    };
    let folders = std::iter::once(project.join(".codex")).chain(home.map(Path::to_path_buf));
    let mut found = Vec::new();
    for folder in folders {
        let file = folder.join("hooks.json");
        if let Some(text) = read_checked(&file) {
            let names = hook_file_names(&file);
            for hook in mem_hooks(&text) {
                let Some((program, _)) = program_of(&hook.command) else { continue };
                let keys = hook_keys(&names, &hook.event, hook.group, hook.index);
                let trust = keys.iter().any(|key| trusted.contains(key));
                let program = program.to_string();
                let user = home.is_some_and(|h| folder == h);
                found.push(Found {
                    file: file.clone(),
                    program,
                    trusted: Some(trust),
                    fix: Some(fix),
                    unmarked: user && is_unmarked(&hook.command),
                });
            }
        }
        let file = folder.join("config.toml");
        let text = match home.is_some_and(|h| folder == h) {
            true => config.clone(),
            false => read_checked(&file),
        };
        let user = home.is_some_and(|h| folder == h);
        for (program, unmarked) in
            text.as_deref().map(|t| codex_programs(t, user)).unwrap_or_default()
        {
            found.push(Found::plain(&file, program).unmarked(unmarked));
        }
    }
    found
}

/// Whether this capture's payload is Codex's `notify` (its `type` is `agent-turn-complete`) in a
/// project whose mem hooks Codex trusts: then its Stop hook captures the same turn, and `notify`
/// leaves it to it (a turn is captured once).
fn defers_to_hooks(payload: &[u8], project: &Path, home: Option<&Path>) -> bool {
    let value = mem::json::parse_json_lenient(&String::from_utf8_lossy(payload)).ok();
    let from_notify = value.as_ref().is_some_and(|v| {
        v.get("hook_event_name").is_none()
            && v.get("type").and_then(serde_json::Value::as_str) == Some("agent-turn-complete")
    });
    from_notify && home.is_some_and(|home| hooks_trusted(project, home))
}

/// The environment variables Codex is told to pass to `mem mcp` (it passes only a short
/// allow-list by default): every one that a served hook's key holds (the root, the model, the
/// user's and the agents' folders, `CODEX_HOME` among them), so that the session's server and
/// its hooks, which get Codex's whole environment, have the same key.
pub fn forwarded() -> Vec<String> {
    crate::shared::served::key_vars()
}

/// The changes for Codex at `target`; `codex_home` is `$CODEX_HOME` or `~/.codex`.
fn changes(target: &Target, codex_home: Option<&Path>) -> Result<Vec<Change>> {
    let folder = match target.scope {
        Scope::Project => target.project.join(".codex"),
        Scope::User => codex_home.context("cannot tell Codex's home folder")?.to_path_buf(),
    };
    let config = folder.join("config.toml");
    let (path, of) = (config.clone(), target.clone());
    let config = Change::new(config, move |text| with_config(text, &path, &of))?;
    // Codex has no SessionEnd event: its Stop hook captures.
    let hooks = if target.remove {
        Vec::new()
    } else {
        hooks(target.mem(), Agent::Codex, target.checkpoints, target.started())?
    };
    let hooks_file = folder.join("hooks.json");
    let path = hooks_file.clone();
    let hooks_file = Change::new(hooks_file, move |text| with_hooks(text, &path, &hooks))?;
    Ok(vec![config, hooks_file])
}

/// The arguments of the `notify` program setup writes (in the user's file, then
/// `--user-scope`; an older setup wrote them alone).
const NOTIFY: [&str; 3] = ["capture", "--hook", "codex"];

/// The words of mem's `notify` in a parsed `config.toml`, without its program, when it is
/// mem's: a mem executable with exactly setup's arguments, with or without `--user-scope`;
/// anything else is the user's.
fn mem_notify_args(doc: &DocumentMut) -> Option<Vec<&str>> {
    let list = doc.get("notify").and_then(Item::as_array)?;
    let words: Vec<&str> = list.iter().filter_map(|v| v.as_str()).collect();
    let (program, args) = words.split_first()?;
    let known = args == NOTIFY || args.strip_suffix(&[USER_SCOPE]) == Some(&NOTIFY[..]);
    (words.len() == list.len() && is_mem_exe(program) && known).then(|| args.to_vec())
}

/// Whether the `notify` of a parsed `config.toml` is mem's (see [`mem_notify_args`]).
fn notify_is_mem_s(doc: &DocumentMut) -> bool {
    mem_notify_args(doc).is_some()
}

/// Whether a Codex `config.toml` runs mem's capture as its `notify` program.
fn has_mem_notify(text: &str) -> bool {
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
        let flag = super::hooks::flag(target.started());
        let words = std::iter::once(exe.as_ref()).chain(NOTIFY).chain(flag);
        let wanted = toml_edit::Array::from_iter(words);
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
    // Ours: a mem executable run with exactly `mcp` (and `--user-scope`, or not).
    let ours = servers.get("mem").map(|s| {
        let command = s.get("command").and_then(Item::as_str).is_some_and(is_mem_exe);
        command && server_args(s).is_some_and(|a| is_server_args(&a))
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
        server["args"] = value(toml_edit::Array::from_iter(target.server_args()));
        server["env_vars"] = value(toml_edit::Array::from_iter(forwarded()));
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

/// Whether Codex runs mem's hooks for the project at `project`: its `.codex/hooks.json` or
/// `codex_home`'s holds mem hooks that start a mem and are each trusted in `codex_home`'s
/// `config.toml`. Reads Codex's files only (Codex's `notify` asks on every turn).
fn hooks_trusted(project: &Path, codex_home: &Path) -> bool {
    let Ok(Some(config)) = super::read_settings(&codex_home.join("config.toml")) else {
        return false;
    };
    let trusted = trusted_keys(&config);
    [project.join(HOOKS), codex_home.join("hooks.json")].iter().any(|file| {
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

/// The arguments of a TOML server entry, as JSON strings (`None` when one is not a string).
fn server_args(server: &Item) -> Option<Vec<serde_json::Value>> {
    let list = server.get("args")?.as_array()?;
    list.iter().map(|v| Some(serde_json::Value::from(v.as_str()?))).collect()
}

/// The programs of mem's `notify` and `mem` server in a Codex `config.toml`, each with whether
/// it lacks `--user-scope` (in the `user`'s own file: an older setup at user scope wrote it).
fn codex_programs(text: &str, user: bool) -> Vec<(String, bool)> {
    let Ok(doc) = text.parse::<toml_edit::DocumentMut>() else { return Vec::new() };
    let notify = doc.get("notify").and_then(|n| n.as_array()).and_then(|a| a.get(0)?.as_str());
    let notify_unmarked = mem_notify_args(&doc).is_some_and(|args| args == NOTIFY);
    let server = doc.get("mcp_servers").and_then(|s| s.get("mem"));
    let program = server.and_then(|s| s.get("command")).and_then(|c| c.as_str());
    let server_unmarked =
        server.and_then(server_args).is_some_and(|args| is_unmarked_server(&args));
    notify
        .map(|p| (p, notify_unmarked))
        .into_iter()
        .chain(program.map(|p| (p, server_unmarked)))
        .filter(|(p, _)| is_mem_exe(p))
        .map(|(p, unmarked)| (p.to_string(), user && unmarked))
        .collect()
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
        // What a served hook's key holds, `CODEX_HOME` included (issue #52, item 4).
        for var in ["CODEX_HOME", "MEM_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HOME"] {
            assert!(added.contains(&format!("\"{var}\"")), "{var}: {added}");
        }
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

    /// Issue #49: at user scope the server and `notify` end with `--user-scope`; the form an
    /// older setup wrote without it is mem's: rewritten, named by health, removed.
    #[test]
    fn the_user_s_server_and_notify_carry_the_marker_and_the_old_form_is_rewritten() {
        let path = Path::new("config.toml");
        let added = with_config(None, path, &target(false)).unwrap().unwrap();
        let doc: DocumentMut = added.parse().unwrap();
        assert_eq!(
            doc["mcp_servers"]["mem"]["args"].to_string().trim(),
            r#"["mcp", "--user-scope"]"#
        );
        assert!(added.starts_with(
            "notify = [\"/opt/mem\", \"capture\", \"--hook\", \"codex\", \"--user-scope\"]\n"
        ));
        assert_eq!(
            codex_programs(&added, true),
            [("/opt/mem".into(), false), ("/opt/mem".into(), false)]
        );
        let old = added.replace(", \"--user-scope\"", "");
        assert_eq!(
            codex_programs(&old, true),
            [("/opt/mem".into(), true), ("/opt/mem".into(), true)]
        );
        assert_eq!(
            codex_programs(&old, false),
            [("/opt/mem".into(), false), ("/opt/mem".into(), false)]
        );
        assert_eq!(with_config(Some(&old), path, &target(false)).unwrap().unwrap(), added);
        assert_eq!(with_config(Some(&old), path, &target(true)).unwrap(), None);
    }
}
