//! Issue 37, item 22: the tools' input schemas accepted what the server then refused (an empty
//! or over-64-KiB text, any string as a layer, no ids, an id shaped like a path, a budget above
//! u32). Each limit is in the schema now: for each, a small validator of the keywords the
//! schemas use shows that the schema refuses the call, and the server refuses it too.

use serde_json::{Value, json};

use super::{Server, initialized};
use crate::util::Dir;

/// Whether `value` is valid under `schema` (the keywords the tools' schemas use: `$ref` to
/// `$defs`, `anyOf`, `type`, `enum`, lengths, `pattern`, ranges, `minItems`, `items`,
/// `properties` and `required`).
fn valid(schema: &Value, defs: &Value, value: &Value) -> bool {
    if let Some(name) = schema["$ref"].as_str().and_then(|r| r.strip_prefix("#/$defs/"))
        && !valid(&defs[name], defs, value)
    {
        return false;
    }
    if let Some(any) = schema["anyOf"].as_array()
        && !any.iter().any(|s| valid(s, defs, value))
    {
        return false;
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    let is = |t: &str| match t {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => false,
    };
    if !types.is_empty() && !types.iter().any(|t| is(t)) {
        return false;
    }
    if let Some(values) = schema["enum"].as_array()
        && !values.contains(value)
    {
        return false;
    }
    let at_least = |key: &str, n: f64| schema[key].as_f64().is_none_or(|min| n >= min);
    let at_most = |key: &str, n: f64| schema[key].as_f64().is_none_or(|max| n <= max);
    match value {
        Value::String(s) => {
            let chars = s.chars().count() as f64;
            let matches = schema["pattern"]
                .as_str()
                .is_none_or(|p| regex::Regex::new(p).unwrap().is_match(s));
            at_least("minLength", chars) && at_most("maxLength", chars) && matches
        }
        Value::Number(n) => {
            // Exact for integers: 4294967296 must not pass a maximum of 4294967295.
            let (n, exact) = (n.as_f64().unwrap(), n.as_i64().map(i128::from));
            let within = |key: &str, above: bool| match (schema[key].as_i64(), exact) {
                (Some(limit), Some(n)) => {
                    if above {
                        n >= limit.into()
                    } else {
                        n <= limit.into()
                    }
                }
                _ => schema[key].as_u64().map_or(
                    if above { at_least(key, n) } else { at_most(key, n) },
                    |limit| match exact {
                        Some(n) => {
                            if above {
                                n >= limit.into()
                            } else {
                                n <= limit.into()
                            }
                        }
                        None => {
                            if above {
                                n >= limit as f64
                            } else {
                                n <= limit as f64
                            }
                        }
                    },
                ),
            };
            within("minimum", true) && within("maximum", false)
        }
        Value::Array(items) => {
            at_least("minItems", items.len() as f64)
                && at_most("maxItems", items.len() as f64)
                && items
                    .iter()
                    .all(|item| schema["items"].is_null() || valid(&schema["items"], defs, item))
        }
        Value::Object(fields) => {
            let required = schema["required"].as_array().cloned().unwrap_or_default();
            required.iter().all(|r| fields.contains_key(r.as_str().unwrap()))
                && fields.iter().all(|(k, v)| {
                    schema["properties"][k].is_null() || valid(&schema["properties"][k], defs, v)
                })
        }
        _ => true,
    }
}

/// The input schema of each tool, by name.
fn schemas(server: &mut Server) -> Value {
    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap_or_else(|| panic!("{list}"));
    tools
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["inputSchema"].clone()))
        .collect()
}

#[test]
fn each_limit_is_in_the_schema_and_the_server_keeps_to_it() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let schemas = schemas(&mut server);
    let too_long = "a".repeat(65_537);
    let long_id = "a".repeat(129);
    // (tool, the limit, arguments that break it, what the server's refusal says)
    let limits: [(&str, &str, Value, &str); 16] = [
        ("remember", "text: minLength 1", json!({ "text": "" }), "needs some text"),
        (
            "remember",
            "text: a pattern (not only white space)",
            json!({ "text": " \t\n" }),
            "needs some text",
        ),
        (
            "remember",
            "text: maxLength 65536",
            json!({ "text": too_long }),
            "over the limit of 65536 bytes",
        ),
        (
            "remember",
            "layer: enum project, user",
            json!({ "text": "x", "layer": "team" }),
            "unknown variant `team`",
        ),
        (
            "remember",
            "importance: maximum 10",
            json!({ "text": "x", "importance": 11 }),
            "importance",
        ),
        ("get", "id: pattern (no `..`)", json!({ "id": "a..b" }), "invalid memory id"),
        (
            "get",
            "id: pattern (no separator)",
            json!({ "id": "../../etc/passwd" }),
            "invalid memory id",
        ),
        ("get", "id: maxLength 128", json!({ "id": long_id }), "longer than 128"),
        ("forget", "id: pattern", json!({ "id": "a/b", "reason": "r" }), "invalid memory id"),
        (
            "forget",
            "id: pattern (not a team key: read only)",
            json!({ "id": "team:acme/api/deploy", "reason": "r" }),
            "a read-only layer",
        ),
        ("get", "id: a team key's pattern", json!({ "id": "team:/x" }), "invalid memory id"),
        ("used", "ids: minItems 1", json!({ "ids": [] }), "at least one id"),
        ("used", "ids: items' pattern", json!({ "ids": ["../mem.toml"] }), "invalid memory id"),
        ("recall", "k: minimum 1", json!({ "query": "x", "k": 0 }), "k must be 1 to 100"),
        ("session_resume", "budget: minimum 200", json!({ "budget": 199 }), "at least 200"),
        (
            "session_resume",
            "budget: maximum 4294967295",
            json!({ "budget": 4_294_967_296u64 }),
            "failed to deserialize parameters",
        ),
    ];
    for (tool, limit, arguments, refusal) in limits {
        let schema = &schemas[tool];
        assert!(
            !valid(schema, &schema["$defs"], &arguments),
            "{tool} {limit}: the schema lets {arguments} through: {schema}"
        );
        let message = server.tool_error(tool, arguments.clone());
        assert!(message.contains(refusal), "{tool} {limit}: {message}");
    }
    // What the limits let through is what the server takes.
    let fine: [(&str, Value); 6] = [
        ("remember", json!({ "text": "é".repeat(20), "layer": "project", "importance": 10 })),
        ("get", json!({ "id": "01KABC.v2" })),
        // A team memory's key (docs/teams.md): longer than an id may be.
        ("get", json!({ "id": format!("team:host:22/org/{}/01KABC.v2", "r".repeat(200)) })),
        ("used", json!({ "ids": ["01KABC.v2"] })),
        ("recall", json!({ "query": "x", "k": 100 })),
        ("session_resume", json!({ "budget": 4_294_967_295u64 })),
    ];
    for (tool, arguments) in fine {
        let schema = &schemas[tool];
        assert!(valid(schema, &schema["$defs"], &arguments), "{tool}: {arguments}: {schema}");
    }
    server.ok("remember", json!({ "text": "é".repeat(20), "layer": "project", "importance": 10 }));
    // The budget fits; the log is what is missing.
    let message = server.tool_error("session_resume", json!({ "budget": 4_294_967_295u64 }));
    assert!(message.contains("session"), "{message}");
    server.finish();
}
