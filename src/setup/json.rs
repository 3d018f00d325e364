//! The JSON editing of `mem setup`: the hooks of a settings or hooks file (Claude Code's shape,
//! which Codex's `hooks.json` and Gemini CLI's `settings.json` share), found by a parser that
//! keeps positions and changed by splices of the file's text at their places, so every other
//! byte stays (comments, layout, a file written on one line, numbers too large for a float) and
//! `--remove` takes out exactly the bytes setup added. What the agent would not read as setup
//! does (a key twice, an event that is not a list) is refused, naming the file and the key.

use std::path::Path;

use anyhow::{Result, bail};
use jsonc_parser::common::{Range, Ranged};
use jsonc_parser::{CollectOptions, ParseOptions, ast, parse_to_ast};
use serde_json::{Map, Value, json};

use super::command::{Hook, is_mem_hook};

/// A configuration file that must hold a JSON object, parsed with the positions of its parts.
pub fn parse_object<'a>(text: &'a str, path: &Path) -> Result<ast::Object<'a>> {
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
    Ok(root)
}

/// The place of the last property named `name` of `object` (JSON readers keep the last).
pub fn last(object: &ast::Object<'_>, name: &str) -> Option<usize> {
    object.properties.iter().rposition(|p| p.name.as_str() == name)
}

/// Refuses a key that `object` holds more than once where mem setup would edit it: the agents
/// read the last one, and an edit of either would not be what the agent reads.
pub fn unique(object: &ast::Object<'_>, name: &str, path: &Path, within: &str) -> Result<()> {
    let count = object.properties.iter().filter(|p| p.name.as_str() == name).count();
    if count > 1 {
        bail!(
            "`{name}`{within} appears {count} times in {}: the agent reads only the last one; \
             mem setup leaves it alone: merge them into one, then run mem setup again",
            path.display()
        );
    }
    Ok(())
}

/// One hook command of a settings file, with where it is.
pub struct HookEntry {
    /// The event's name (`Stop`).
    pub event: String,
    /// The place of the event in the `hooks` object.
    pub event_at: usize,
    /// The place of its group in the event's list, from 0.
    pub group: usize,
    /// Its place in the group's list of hooks, from 0.
    pub index: usize,
    /// How many hooks its group holds.
    pub in_group: usize,
    /// How many groups its event holds.
    pub groups: usize,
    /// Its command line.
    pub command: String,
    /// Its timeout, if it has one.
    pub timeout: Option<u64>,
    /// Whether `mem setup` wrote it (see [`is_mem_hook`]).
    pub ours: bool,
}

/// The value of the last property `name` of a JSON object value.
fn field<'b, 'a>(value: &'b ast::Value<'a>, name: &str) -> Option<&'b ast::Value<'a>> {
    let ast::Value::Object(object) = value else { return None };
    last(object, name).map(|i| &object.properties[i].value)
}

/// Every hook of a settings file's `hooks` object, in order.
pub fn hook_entries(table: &ast::Object<'_>) -> Vec<HookEntry> {
    let mut entries = Vec::new();
    for (event_at, event) in table.properties.iter().enumerate() {
        let ast::Value::Array(groups) = &event.value else { continue };
        for (group_at, group) in groups.elements.iter().enumerate() {
            let Some(ast::Value::Array(list)) = field(group, "hooks") else { continue };
            for (at, hook) in list.elements.iter().enumerate() {
                let command = match field(hook, "command") {
                    Some(ast::Value::StringLit(s)) => s.value.to_string(),
                    _ => String::new(),
                };
                let timeout = match field(hook, "timeout") {
                    Some(ast::Value::NumberLit(n)) => n.value.parse().ok(),
                    _ => None,
                };
                entries.push(HookEntry {
                    event: event.name.as_str().to_string(),
                    event_at,
                    group: group_at,
                    index: at,
                    in_group: list.elements.len(),
                    groups: groups.elements.len(),
                    ours: is_mem_hook(&command),
                    command,
                    timeout,
                });
            }
        }
    }
    entries
}

/// The `hooks` object of a settings file (the last one), with its place; `None` when there is
/// none or it is not an object.
fn table<'b, 'a>(root: &'b ast::Object<'a>) -> Option<(usize, &'b ast::Object<'a>)> {
    let at = last(root, "hooks")?;
    match &root.properties[at].value {
        ast::Value::Object(table) => Some((at, table)),
        _ => None,
    }
}

/// The hooks of a settings or hooks file: what the agent reads, the last of a repeated key.
pub fn entries(text: &str) -> Vec<HookEntry> {
    let Ok(root) = parse_object(text, Path::new("")) else { return Vec::new() };
    table(&root).map(|(_, t)| hook_entries(t)).unwrap_or_default()
}

/// The group of one hook, as setup writes it.
fn group(hook: &Hook) -> Value {
    let mut one = json!({ "type": "command", "command": hook.command, "timeout": hook.timeout });
    if let Some(name) = hook.name {
        one["name"] = json!(name);
    }
    json!({ "hooks": [one] })
}

/// A settings file with those of `mem`'s own hooks (those [`is_mem_hook`] recognises) whose
/// command `replaced` accepts replaced by `hooks`; every other byte is kept. A group left empty
/// by taking mem's hooks out goes, an event left without groups too, and a `hooks` object left
/// empty when nothing is added. Nothing changes when the file already has exactly `hooks`.
/// `None`: the file is left with nothing (nothing of the user's was in it).
pub fn with_hooks_of(
    text: Option<&str>,
    path: &Path,
    hooks: &[Hook],
    replaced: fn(&str) -> bool,
) -> Result<Option<String>> {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
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
    let ours = |e: &HookEntry| e.ours && replaced(&e.command);
    {
        let root = parse_object(text, path)?;
        unique(&root, "hooks", path, "")?;
        let table = match root.properties.iter().find(|p| p.name.as_str() == "hooks") {
            None => None,
            Some(prop) => match &prop.value {
                ast::Value::Object(table) => Some(table),
                _ => bail!(
                    "`hooks` in {} is not an object; mem setup leaves it alone",
                    path.display()
                ),
            },
        };
        let entries = table.map(hook_entries).unwrap_or_default();
        for (at, event) in table.map(|t| t.properties.iter().enumerate()).into_iter().flatten() {
            let name = event.name.as_str();
            let edited = hooks.iter().any(|h| h.event == name)
                || entries.iter().any(|e| e.event_at == at && ours(e));
            if !edited {
                continue;
            }
            unique(table.expect("iterated"), name, path, " in `hooks`")?;
            let ast::Value::Array(groups) = &event.value else {
                bail!(
                    "the hook event `{name}` in {} is not a list, so the agent runs none of its \
                     hooks; mem setup leaves it alone: make it a list of groups \
                     ([{{\"hooks\": [...]}}]), then run mem setup again",
                    path.display()
                )
            };
            for group in &groups.elements {
                if let ast::Value::Object(group) = group {
                    unique(group, "hooks", path, &format!(" in a group of `{name}`"))?;
                }
            }
        }
        // What is there of mem's: (event, command, timeout) of groups holding one mem hook alone.
        let mine: Vec<&HookEntry> = entries.iter().filter(|e| ours(e)).collect();
        let mut found: Vec<(String, String, Option<u64>)> = mine
            .iter()
            .filter(|e| e.in_group == 1)
            .map(|e| (e.event.clone(), e.command.clone(), e.timeout))
            .collect();
        let mixed = mine.iter().any(|e| e.in_group != 1);
        let mut wanted: Vec<(String, String, Option<u64>)> = hooks
            .iter()
            .map(|h| (h.event.to_string(), h.command.clone(), Some(h.timeout)))
            .collect();
        found.sort();
        wanted.sort();
        if !mixed && found == wanted {
            return Ok(Some(text.to_string()));
        }
    }
    let mut text = text.to_string();
    let mut removed = false;
    // Mem's hooks out, one splice at a time.
    loop {
        let root = parse_object(&text, path)?;
        let Some((hooks_at, table)) = table(&root) else { break };
        let Some(entry) = hook_entries(table).into_iter().find(|e| ours(e)) else { break };
        let event = &table.properties[entry.event_at];
        let ast::Value::Array(groups) = &event.value else { break };
        let group = &groups.elements[entry.group];
        let Some(ast::Value::Array(list)) = field(group, "hooks") else { break };
        text = if entry.in_group > 1 {
            remove_item(&text, &ranges(&list.elements), list.range, entry.index)
        } else if entry.groups > 1 {
            remove_item(&text, &ranges(&groups.elements), groups.range, entry.group)
        } else if table.properties.len() > 1 || !hooks.is_empty() {
            remove_item(&text, &prop_ranges(table), table.range, entry.event_at)
        } else {
            remove_item(&text, &prop_ranges(&root), root.range, hooks_at)
        };
        removed = true;
    }
    // Setup's hooks in, each at the end of its event's list.
    for hook in hooks {
        let root = parse_object(&text, path)?;
        text = match table(&root) {
            None => insert_prop(&text, &root, "hooks", &json!({ hook.event: [group(hook)] })),
            Some((_, table)) => match last(table, hook.event).map(|i| &table.properties[i].value) {
                Some(ast::Value::Array(groups)) => append_item(&text, groups, &group(hook)),
                _ => insert_prop(&text, table, hook.event, &json!([group(hook)])),
            },
        };
    }
    let root = parse_object(&text, path)?;
    if hooks.is_empty()
        && removed
        && let Some((at, table)) = table(&root)
        && table.properties.is_empty()
    {
        text = remove_item(&text, &prop_ranges(&root), root.range, at);
    }
    let root = parse_object(&text, path)?;
    Ok((!root.properties.is_empty()).then_some(text))
}

/// The ranges of a list's elements.
fn ranges(elements: &[ast::Value<'_>]) -> Vec<Range> {
    elements.iter().map(|e| e.range()).collect()
}

/// The ranges of an object's properties.
pub fn prop_ranges(object: &ast::Object<'_>) -> Vec<Range> {
    object.properties.iter().map(|p| p.range).collect()
}

/// `text` with the bytes `start..end` replaced by `with`.
pub fn splice(text: &str, start: usize, end: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..start]);
    out.push_str(with);
    out.push_str(&text[end..]);
    out
}

/// Whether the text of `range` spans several lines.
pub fn multiline(text: &str, range: Range) -> bool {
    text[range.start..range.end].contains('\n')
}

/// The indentation of the line `at` is on, when only blanks come before it there.
pub fn indent_at(text: &str, at: usize) -> String {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line..at];
    if before.chars().all(|c| c == ' ' || c == '\t') { before.to_string() } else { String::new() }
}

/// The blanks that start the line `at` is on.
fn line_indent(text: &str, at: usize) -> String {
    let line = text[..at].rfind('\n').map_or(0, |i| i + 1);
    text[line..].chars().take_while(|c| *c == ' ' || *c == '\t').collect()
}

/// `value` as JSON text: on one line, or spread over lines below `indent`.
pub fn render_value(value: &Value, spread: bool, indent: &str) -> String {
    if !spread {
        return serde_json::to_string(value).expect("JSON serialises");
    }
    let pretty = serde_json::to_string_pretty(value).expect("JSON serialises");
    pretty.replace('\n', &format!("\n{indent}"))
}

/// `text` with `item` (already rendered by `render`, given whether to spread it and its
/// indentation) added after the last of the items at `items` of the container at `container`,
/// in its layout: on one line in a container on one line (a file written on one line stays
/// so), else on a line of its own; an empty container is opened over lines when the file is.
fn append(
    text: &str,
    items: &[Range],
    container: Range,
    render: &dyn Fn(bool, &str) -> String,
) -> String {
    match items.last() {
        Some(last) if multiline(text, container) => {
            let indent = indent_at(text, last.start);
            let item = render(true, &indent);
            splice(text, last.end, last.end, &format!(",\n{indent}{item}"))
        }
        Some(last) => splice(text, last.end, last.end, &format!(",{}", render(false, ""))),
        None if text.trim_end().contains('\n') => {
            let indent = line_indent(text, container.start);
            let inner = format!("{indent}  ");
            let item = render(true, &inner);
            let (open, close) =
                (&text[container.start..=container.start], &text[container.end - 1..container.end]);
            splice(
                text,
                container.start,
                container.end,
                &format!("{open}\n{inner}{item}\n{indent}{close}"),
            )
        }
        None => {
            let item = render(false, "");
            splice(text, container.start + 1, container.end - 1, &item)
        }
    }
}

/// `text` with the property `name: value` added at the end of `object`, in its layout.
pub fn insert_prop(text: &str, object: &ast::Object<'_>, name: &str, value: &Value) -> String {
    let key = serde_json::to_string(name).expect("a string serialises");
    let render = |spread: bool, indent: &str| {
        let colon = if spread { ": " } else { ":" };
        format!("{key}{colon}{}", render_value(value, spread, indent))
    };
    append(text, &prop_ranges(object), object.range, &render)
}

/// `text` with `value` added at the end of the list `array`, in its layout.
fn append_item(text: &str, array: &ast::Array<'_>, value: &Value) -> String {
    let render = |spread: bool, indent: &str| render_value(value, spread, indent);
    append(text, &ranges(&array.elements), array.range, &render)
}

/// `text` without the item number `i` of those at `items` in the container at `container`
/// (and the comma that separated it): the bytes an [`append`] of it added.
pub fn remove_item(text: &str, items: &[Range], container: Range, i: usize) -> String {
    let (start, end) = match (i.checked_sub(1).map(|p| &items[p]), items.get(i + 1)) {
        (_, Some(next)) => (items[i].start, next.start),
        (Some(previous), None) => (previous.end, items[i].end),
        (None, None) => (container.start + 1, container.end - 1),
    };
    splice(text, start, end, "")
}
