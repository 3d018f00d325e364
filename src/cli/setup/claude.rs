//! `mem setup claude`: the hooks in Claude Code's `settings.json` and the `mem` server in its
//! MCP configuration, and the JSON editing that Codex's `hooks.json` shares.

use std::path::Path;

use anyhow::{Result, bail};
use jsonc_parser::common::Ranged;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstObjectProp, CstRootNode};
use jsonc_parser::{CollectOptions, ParseOptions, ast, parse_to_ast};
use mem::agent::Agent;
use serde_json::{Map, Value, json};

use super::{
    Change, NEVER_BLOCKS, PROJECT_ONLY, Scope, Target, is_mem_exe, is_mem_hook, is_project_only,
    read, shell_word,
};

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
    let before = read(&settings)?;
    let after = with_hooks(before.as_deref(), &settings, &own)?;
    let settings = Change { path: settings, before, after };
    let before = read(&mcp)?;
    let after = with_server(before.as_deref(), &mcp, server)?;
    let mcp = Change { path: mcp, before, after };
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
        let before = read(&user)?;
        let after = with_hooks_of(before.as_deref(), &user, &wanted, is_project_only)?;
        changes.push(Change { path: user, before, after });
    }
    Ok(changes)
}

/// A configuration file that must hold a JSON object, as a tree that keeps every byte of it
/// (comments, layout, numbers too large for a float, repeated keys): mem edits its own entries
/// and nothing else. `None` for a missing or blank file.
fn parse(text: Option<&str>, path: &Path) -> Result<Option<(CstRootNode, CstObject)>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else { return Ok(None) };
    let root = CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| {
        anyhow::anyhow!(
            "{} is not valid JSON ({e}); fix it, then run mem setup again",
            path.display()
        )
    })?;
    let Some(object) = root.object_value() else {
        bail!("{} holds JSON but not an object; mem setup leaves it alone", path.display())
    };
    Ok(Some((root, object)))
}

/// The tree's text, or `None` when the object is left with nothing (nothing of the user's was
/// in the file).
fn text_of(root: &CstRootNode, object: &CstObject) -> Option<String> {
    (!object.properties().is_empty()).then(|| root.to_string())
}

/// A JSON value as the tree takes it.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => {
            CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

/// The group of one hook, as setup writes it.
fn group(hook: &Hook) -> Value {
    let mut one = json!({ "type": "command", "command": hook.command, "timeout": hook.timeout });
    if let Some(name) = hook.name {
        one["name"] = json!(name);
    }
    json!({ "hooks": [one] })
}

/// A settings file with `mem`'s own hooks (those [`is_mem_hook`] recognises) replaced by
/// `hooks`; every other byte is kept. A group left empty by taking mem's hooks out goes, an
/// event left without groups too. Nothing changes when the file already has exactly `hooks`.
pub fn with_hooks(text: Option<&str>, path: &Path, hooks: &[Hook]) -> Result<Option<String>> {
    with_hooks_of(text, path, hooks, |_| true)
}

/// Like [`with_hooks`], replacing only those of mem's hooks whose command `replaced` accepts.
pub fn with_hooks_of(
    text: Option<&str>,
    path: &Path,
    hooks: &[Hook],
    replaced: fn(&str) -> bool,
) -> Result<Option<String>> {
    let Some((root, object)) = parse(text, path)? else {
        if hooks.is_empty() {
            return Ok(None);
        }
        let mut table = Map::new();
        for hook in hooks {
            let groups = table.entry(hook.event).or_insert_with(|| Value::Array(Vec::new()));
            groups.as_array_mut().expect("made as a list").push(group(hook));
        }
        let file = json!({ "hooks": table });
        return Ok(Some(serde_json::to_string_pretty(&file)? + "\n"));
    };
    let table = match object.get("hooks") {
        None => None,
        Some(prop) => match prop.object_value() {
            Some(table) => Some(table),
            None => {
                bail!("`hooks` in {} is not an object; mem setup leaves it alone", path.display())
            }
        },
    };
    let entries = table.as_ref().map(hook_entries).unwrap_or_default();
    let ours: Vec<&HookEntry> = entries.iter().filter(|e| e.ours && replaced(&e.command)).collect();
    // What is there of mem's: (event, command, timeout) of groups holding one mem hook alone.
    let mut found: Vec<(String, String, Option<u64>)> = ours
        .iter()
        .filter(|e| e.alone)
        .map(|e| (e.event.decoded_name().unwrap_or_default(), e.command.clone(), e.timeout))
        .collect();
    let mixed = ours.iter().any(|e| !e.alone);
    let mut wanted: Vec<(String, String, Option<u64>)> =
        hooks.iter().map(|h| (h.event.to_string(), h.command.clone(), Some(h.timeout))).collect();
    found.sort();
    wanted.sort();
    if !mixed && found == wanted {
        return Ok(text.map(str::to_string));
    }
    for entry in &ours {
        entry.hook.clone().remove();
        // A group that only held mem's hooks goes with them, and an event left without groups.
        if entry.list.elements().is_empty() && entry.group.parent().is_some() {
            entry.group.clone().remove();
        }
        if entry.groups.elements().is_empty() && entry.event.parent().is_some() {
            entry.event.clone().remove();
        }
    }
    if !hooks.is_empty() {
        let table = object.object_value_or_set("hooks");
        for hook in hooks {
            table.array_value_or_set(hook.event).append(input(&group(hook)));
        }
    } else if let Some(prop) = object.get("hooks")
        && prop.object_value().is_some_and(|t| t.properties().is_empty())
        && !ours.is_empty()
    {
        prop.remove();
    }
    Ok(text_of(&root, &object))
}

/// One hook command of a settings file, with the nodes that hold it.
struct HookEntry {
    /// The event's property (`"Stop": [...]`).
    event: CstObjectProp,
    /// The event's list of groups.
    groups: CstArray,
    /// The group (`{ "hooks": [...] }`).
    group: CstNode,
    /// The group's list of hooks.
    list: CstArray,
    /// The hook itself.
    hook: CstNode,
    /// Its command line.
    command: String,
    /// Its timeout, if it has one.
    timeout: Option<u64>,
    /// Whether `mem setup` wrote it (see [`is_mem_hook`]).
    ours: bool,
    /// Whether it is the only hook of its group.
    alone: bool,
    /// The place of its group in the event's list and its own in the group's, from 0.
    place: (usize, usize),
}

/// Every hook of a settings file's `hooks` object, in order.
fn hook_entries(table: &CstObject) -> Vec<HookEntry> {
    let mut entries = Vec::new();
    for event in table.properties() {
        let Some(groups) = event.array_value() else { continue };
        for (group_at, group) in groups.elements().into_iter().enumerate() {
            let Some(list) =
                group.as_object().and_then(|g| g.get("hooks")).and_then(|h| h.array_value())
            else {
                continue;
            };
            let hooks = list.elements();
            let alone = hooks.len() == 1;
            for (at, hook) in hooks.into_iter().enumerate() {
                let value = hook.to_serde_value().unwrap_or(Value::Null);
                let command = value["command"].as_str().unwrap_or_default().to_string();
                entries.push(HookEntry {
                    event: event.clone(),
                    groups: groups.clone(),
                    group: group.clone(),
                    list: list.clone(),
                    hook,
                    ours: is_mem_hook(&command),
                    timeout: value["timeout"].as_u64(),
                    command,
                    alone,
                    place: (group_at, at),
                });
            }
        }
    }
    entries
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
    let Ok(Some((_, object))) = parse(Some(text), Path::new("")) else { return Vec::new() };
    let table = object.get("hooks").and_then(|prop| prop.object_value());
    let entries = table.as_ref().map(hook_entries).unwrap_or_default();
    entries
        .into_iter()
        .filter(|e| e.ours)
        .map(|e| MemHook {
            event: e.event.decoded_name().unwrap_or_default(),
            group: e.place.0,
            index: e.place.1,
            command: e.command,
        })
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
/// out (`None`). A server named `mem` that mem setup did not write is the user's: adding stops
/// with an error that names the file and the entry, removing leaves it. The edit is a splice of
/// the file's text at the entry's place (found by a parser that keeps positions), so every
/// other byte stays as it is: numbers too large for a float, repeated keys, comments, a file
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
    let parsed =
        parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default()).map_err(|e| {
            anyhow::anyhow!(
                "{} is not valid JSON ({e}); fix it, then run mem setup again",
                path.display()
            )
        })?;
    let Some(ast::Value::Object(root)) = parsed.value else {
        bail!("{} holds JSON but not an object; mem setup leaves it alone", path.display())
    };
    // Where a key is repeated, JSON readers keep the last one.
    let last = |object: &'_ ast::Object<'_>, name: &str| {
        object.properties.iter().rposition(|p| p.name.as_str() == name)
    };
    let servers_at = last(&root, "mcpServers");
    let servers = match servers_at.map(|i| &root.properties[i].value) {
        None => None,
        Some(ast::Value::Object(servers)) => Some(servers),
        Some(_) => {
            bail!("`mcpServers` in {} is not an object; mem setup leaves it alone", path.display())
        }
    };
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
            remove_prop(text, &root, at)
        }
        (Some(servers), Some(i), None) => remove_prop(text, servers, i),
        (_, _, None) => return Ok(Some(text.to_string())),
    };
    // Nothing is left when the servers, all mem's, were all the file held.
    let emptied =
        removing && servers.is_some_and(|s| s.properties.len() == 1) && root.properties.len() == 1;
    Ok((!emptied).then_some(edited))
}

/// `text` with the bytes `start..end` replaced by `with`.
fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..start]);
    out.push_str(with);
    out.push_str(&text[end..]);
    out
}

/// Whether the text of `range` spans several lines.
fn multiline(text: &str, range: jsonc_parser::common::Range) -> bool {
    text[range.start..range.end].contains('\n')
}

/// The indentation of the line `at` is on, when only blanks come before it there.
fn indent_at(text: &str, at: usize) -> String {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line..at];
    if before.chars().all(|c| c == ' ' || c == '\t') { before.to_string() } else { String::new() }
}

/// `value` as JSON text: on one line, or spread over lines below `indent`.
fn render_value(value: &Value, spread: bool, indent: &str) -> String {
    if !spread {
        return serde_json::to_string(value).expect("JSON serialises");
    }
    let pretty = serde_json::to_string_pretty(value).expect("JSON serialises");
    pretty.replace('\n', &format!("\n{indent}"))
}

/// `text` with the property `name: value` added at the end of `object`, in its layout.
fn insert_prop(text: &str, object: &ast::Object<'_>, name: &str, value: &Value) -> String {
    let key = serde_json::to_string(name).expect("a string serialises");
    let spread = multiline(text, object.range);
    match object.properties.last() {
        Some(last) if spread => {
            let indent = indent_at(text, last.range.start);
            let value = render_value(value, true, &indent);
            splice(text, last.range.end, last.range.end, &format!(",\n{indent}{key}: {value}"))
        }
        Some(last) => {
            let value = render_value(value, false, "");
            splice(text, last.range.end, last.range.end, &format!(",{key}:{value}"))
        }
        None => {
            let indent = indent_at(text, object.range.start);
            let inner = format!("{indent}  ");
            let value = render_value(value, true, &inner);
            let body = format!("{{\n{inner}{key}: {value}\n{indent}}}");
            splice(text, object.range.start, object.range.end, &body)
        }
    }
}

/// `text` without the property number `i` of `object` (and the comma that separated it).
fn remove_prop(text: &str, object: &ast::Object<'_>, i: usize) -> String {
    let props = &object.properties;
    let (start, end) = match (i.checked_sub(1).map(|p| &props[p]), props.get(i + 1)) {
        (_, Some(next)) => (props[i].range.start, next.range.start),
        (Some(previous), None) => (previous.range.end, props[i].range.end),
        (None, None) => (object.range.start + 1, object.range.end - 1),
    };
    splice(text, start, end, "")
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
