//! The `mem` MCP server in an agent's JSON configuration (`mcpServers`, or the key the agent
//! names it by, see [`Servers`]), edited as a splice of
//! the file's text so that every other byte stays.

use std::path::Path;

use anyhow::{Result, bail};
use jsonc_parser::ast;
use jsonc_parser::common::Ranged;
use serde_json::{Map, Value, json};

use super::command::{USER_SCOPE, is_mem_exe};
use super::json::{
    indent_at, insert_prop, last, multiline, parse_object, prop_ranges, remove_item, render_value,
    splice, unique,
};

/// Whether an MCP server entry is the one `mem setup` writes: a `mem` executable run with
/// exactly `mcp` (or `mcp --user-scope`, see [`is_server_args`]), and nothing else but the keys
/// Claude Code itself adds (`type: stdio`, an empty `env`) and Gemini CLI's `trust: true`.
fn is_mem_server(server: &Value) -> bool {
    let Some(entry) = server.as_object() else { return false };
    let known =
        entry.keys().all(|k| ["command", "args", "type", "env", "trust"].contains(&k.as_str()));
    known
        && entry.get("command").and_then(Value::as_str).is_some_and(is_mem_exe)
        && entry.get("args").and_then(Value::as_array).is_some_and(|a| is_server_args(a))
        && entry.get("type").is_none_or(|t| t == "stdio")
        && entry.get("env").is_none_or(|e| e.as_object().is_some_and(Map::is_empty))
        && entry.get("trust").is_none_or(|t| t == true)
}

/// Whether the arguments of a server (after its program) are those setup writes: `mcp` (a
/// project's, or the user's from an older setup) or `mcp --user-scope` (the user's).
pub fn is_server_args(args: &[Value]) -> bool {
    let words: Option<Vec<&str>> = args.iter().map(Value::as_str).collect();
    matches!(words.as_deref(), Some(["mcp"] | ["mcp", USER_SCOPE]))
}

/// Whether the arguments `args` of setup's `mem` server in the user's own file lack
/// `--user-scope`: an older setup wrote it, and it does not hold a cloned repository's root back.
pub fn is_unmarked_server(args: &[Value]) -> bool {
    args.iter().map(Value::as_str).collect::<Option<Vec<_>>>().as_deref() == Some(&["mcp"])
}

/// Where a JSON configuration keeps its MCP servers, and which entry is the one setup writes.
pub struct Servers {
    /// The key of the object of servers (`mcpServers`).
    pub key: &'static str,
    /// Whether an entry is mem's (one setup wrote).
    pub is_mem: fn(&Value) -> bool,
}

/// The `mcpServers` of Claude Code's and Gemini CLI's files.
pub const MCP_SERVERS: Servers = Servers { key: "mcpServers", is_mem: is_mem_server };

/// An MCP configuration with the `mem` server under `mcpServers` set to `server`, or taken
/// out (`None`): [`with_server_in`] of [`MCP_SERVERS`].
pub fn with_server(
    text: Option<&str>,
    path: &Path,
    server: Option<Value>,
) -> Result<Option<String>> {
    with_server_in(text, path, &MCP_SERVERS, server)
}

/// An MCP configuration with the `mem` server under `servers.key` set to `server`, or taken
/// out (`None`); a repeated `mcpServers` or `mem` is refused, as the agent reads the last. A
/// server named `mem` that mem setup did not write is the user's: adding stops
/// with an error that names the file and the entry, removing leaves it. The edit is a splice of
/// the file's text at the entry's place (found by a parser that keeps positions), so every
/// other byte stays as it is: numbers too large for a float, other repeated keys, comments, a file
/// written on one line, and a large file costs one parse.
pub fn with_server_in(
    text: Option<&str>,
    path: &Path,
    servers_of: &Servers,
    server: Option<Value>,
) -> Result<Option<String>> {
    let key = servers_of.key;
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return Ok(server.map(|server| {
            let file = json!({ key: { "mem": server } });
            serde_json::to_string_pretty(&file).expect("JSON serialises") + "\n"
        }));
    };
    let root = parse_object(text, path)?;
    // Where a key is repeated, the agent reads the last one: refused rather than guessed.
    unique(&root, key, path, "")?;
    let servers_at = last(&root, key);
    let servers = match servers_at.map(|i| &root.properties[i].value) {
        None => None,
        Some(ast::Value::Object(servers)) => Some(servers),
        Some(_) => {
            bail!("`{key}` in {} is not an object; mem setup leaves it alone", path.display())
        }
    };
    if let Some(servers) = servers {
        unique(servers, "mem", path, &format!(" in `{key}`"))?;
    }
    let mem_at = servers.and_then(|s| last(s, "mem"));
    let current = servers.zip(mem_at).map(|(s, i)| {
        let range = s.properties[i].value.range();
        serde_json::from_str::<Value>(&text[range.start..range.end]).unwrap_or(Value::Null)
    });
    if let Some(current) = &current
        && !(servers_of.is_mem)(current)
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
        (None, _, Some(server)) => insert_prop(text, &root, key, &json!({ "mem": server })),
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
