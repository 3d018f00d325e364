//! `mem mcp` at the protocol's edges: a client that leaves before the handshake, methods the
//! server does not have, JSON-RPC batches, and what goes to stderr.

use std::process::Command;

use serde_json::{Value, json};
use wait_timeout::ChildExt;

use super::{BAD_LINE_PATIENCE, PATIENCE, Server, initialized};
use crate::util::{Dir, NOW, bin, clean_env};

/// The `_meta` of a 2026-07-28 request, which has no handshake.
fn inline_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { "name": "probe", "version": "2" },
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// Every entry of `dir`, for "nothing was written".
fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Issue 37, item 21: a client that closed before the handshake (one that closes stdin at
/// once, or probes with `server/discover` only, as the TypeScript SDK v2 does first) made
/// `mem mcp` exit 2 and create `.mem/`. It exits 0 and writes nothing: not in a given root, not
/// the per-user root it would create.
#[test]
fn a_client_that_leaves_before_the_handshake_leaves_nothing_behind() {
    // stdin closed at once.
    let dir = Dir::new();
    let server = Server::start(&dir);
    let log = server.finish();
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "{log}");

    // A discovery request, answered, then nothing.
    let dir = Dir::new();
    let mut server = Server::start(&dir);
    let discovered = server.request("server/discover", json!({ "_meta": inline_meta() }));
    assert!(discovered["result"]["supportedVersions"].is_array(), "{discovered}");
    let log = server.finish();
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "{log}");

    // No root anywhere above: the per-user root is not created either.
    let dir = Dir::new();
    let data = dir.home().join("data");
    let mut cmd = Command::new(bin());
    cmd.args(["--now", NOW, "mcp"]).current_dir(dir.path());
    cmd.env("HOME", dir.home()).env("XDG_DATA_HOME", &data).env("XDG_CONFIG_HOME", dir.home());
    clean_env(&mut cmd);
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = child.wait_timeout(PATIENCE).unwrap().expect("mem mcp ends with its stdin");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(!data.join("mem").exists(), "{stderr}");
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "{stderr}");
}

/// A root that cannot be served still stops `mem mcp` at start, before any client: a bad
/// `mem.toml` is read (not written) before the handshake.
#[test]
fn a_root_that_cannot_be_opened_stops_the_server_at_start() {
    let dir = Dir::new();
    dir.write("mem.toml", "[ranking\n");
    let out = dir.mem_stdin(&["--now", NOW, "mcp"], "");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("cannot open memory root"), "{}", out.stderr);
    assert_eq!(entries(dir.path()), ["mem.toml"]);
}

/// After the handshake the root is opened (before any call), and a 2026-07-28 client, which
/// has no handshake, gets its first call answered.
#[test]
fn the_root_is_opened_once_a_client_has_initialized() {
    let dir = Dir::new();
    let mut server = Server::start(&dir);
    let id = server.take_id();
    let call = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {
            "name": "remember",
            "arguments": { "text": "Inline requests carry their own protocol version" },
            "_meta": inline_meta()
        }
    });
    server.send(&call);
    let answer = server.answer(&json!(id), "an inline remember", PATIENCE);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    server.finish();
    assert!(dir.path().join(".mem").is_dir());
}

/// Issue 37, item 22: a -32601 error carried only the method's name as its message. It says
/// what is wrong, and the method is in its data.
#[test]
fn a_method_the_server_does_not_have_is_named_and_explained() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    for method in ["prompts/list", "resources/read", "no/such/method"] {
        let answer = server.request(method, json!({}));
        let error = &answer["error"];
        assert_eq!(error["code"], -32601, "{answer}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("Method not found: "), "{message}");
        assert!(message.contains(method) && message.contains("tools/call"), "{message}");
        assert_eq!(error["data"]["method"], method, "{answer}");
    }
    server.finish();
}

/// Issue 37, item 22: arguments that do not match a tool's schema were answered as a tool
/// error but not written to stderr, where docs/mcp.md says every tool error goes.
#[test]
fn arguments_that_do_not_match_the_schema_are_written_to_stderr() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let message = server.tool_error("recall", json!({ "query": "x", "type": "dream" }));
    assert!(message.starts_with("failed to deserialize parameters: "), "{message}");
    let message = server.tool_error("used", json!({ "ids": 7 }));
    assert!(message.contains("expected a sequence"), "{message}");
    let log = server.finish();
    assert!(
        log.contains("mem: tool error: failed to deserialize parameters: unknown variant `dream`"),
        "{log}"
    );
    assert!(
        log.contains("mem: tool error: failed to deserialize parameters: invalid type"),
        "{log}"
    );
}

/// Issue 37, item 22: docs/mcp.md listed four of a hit's components (relevance, coverage,
/// recency, importance) where recall gives eight. The list there is the one the code has (the
/// recall tool's description is made from `score::component_names`).
#[test]
fn docs_list_every_component_of_a_hit() {
    let dir = Dir::new();
    let mut server = initialized(&dir);
    let list = server.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let recall = tools.iter().find(|t| t["name"] == "recall").unwrap();
    let description = recall["description"].as_str().unwrap();
    let from_code = description.split("components (").nth(1).unwrap().split(')').next().unwrap();
    let from_code: Vec<&str> = from_code.split(", ").collect();
    server.finish();
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/mcp.md")).unwrap();
    let listed = doc.split("`components` {").nth(1).expect("docs/mcp.md lists the components");
    let listed: Vec<&str> =
        listed.split('}').next().unwrap().split(", ").map(|c| c.trim().trim_matches('`')).collect();
    assert_eq!(listed, from_code);
}

/// The next line on stdout, as JSON (a batch's answer is an array, not a message).
#[track_caller]
fn next_line(server: &mut Server, what: &str) -> Value {
    let line = server
        .lines
        .recv_timeout(BAD_LINE_PATIENCE)
        .unwrap_or_else(|e| panic!("no answer to {what} ({e}){}", server.log()));
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// Starts a server and completes the handshake at protocol `version`.
fn initialized_at(dir: &Dir, version: &str) -> Server {
    let mut server = Server::start(dir);
    let init = server.request(
        "initialize",
        json!({
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": { "name": "batcher", "version": "1" }
        }),
    );
    assert_eq!(init["result"]["protocolVersion"], version, "{init}");
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    server
}

/// Issue 37, item 22: a JSON-RPC batch was answered -32600 even at protocol 2025-03-26, where
/// a server must accept batches. At that version a batch is answered with one array of the
/// responses to its requests, in its order (a bad element gets its own -32600 there, a
/// notification nothing); a batch of notifications gets no answer, an empty one a -32600.
#[test]
fn a_batch_is_answered_whole_at_protocol_2025_03_26() {
    let dir = Dir::new();
    let mut server = initialized_at(&dir, "2025-03-26");
    let batch = json!([
        { "jsonrpc": "2.0", "id": 10, "method": "ping" },
        { "jsonrpc": "2.0", "method": "notifications/roots/list_changed" },
        { "jsonrpc": "2.0", "id": "kept", "method": "tools/call",
          "params": { "name": "remember", "arguments": { "text": "Batches were 2025-03-26 only" } } },
        1,
        { "jsonrpc": "2.0", "id": 12, "method": "initialize", "params": {} },
        { "jsonrpc": "2.0", "id": 13, "method": "tools/list" }
    ]);
    server.send(&batch);
    let answer = next_line(&mut server, "a batch");
    let answers = answer.as_array().unwrap_or_else(|| panic!("not an array: {answer}"));
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(10), &json!("kept"), &Value::Null, &json!(12), &json!(13)], "{answer}");
    assert_eq!(answers[0]["result"], json!({}), "{answer}");
    assert_eq!(answers[1]["result"]["isError"], false, "{answer}");
    for bad in [&answers[2], &answers[3]] {
        assert_eq!(bad["error"]["code"], -32600, "{answer}");
    }
    assert!(answers[3]["error"]["message"].as_str().unwrap().contains("initialize"), "{answer}");
    assert_eq!(answers[4]["result"]["tools"].as_array().unwrap().len(), 9, "{answer}");

    // Only notifications: nothing comes back; the next line answers the next request.
    server.send(&json!([{ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }]));
    let id = server.take_id();
    server.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }));
    assert_eq!(next_line(&mut server, "a ping")["id"], id);
    // Empty: one error, not an array.
    server.send(&json!([]));
    let empty = next_line(&mut server, "an empty batch");
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    assert!(empty["error"]["message"].as_str().unwrap().contains("empty batch"), "{empty}");
    // The memory of the batch was written, once.
    let hits = server.list("recall", "hits", json!({ "query": "batches" }));
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    server.finish();
}

/// Later versions removed batches: there (and before any handshake) a batch gets one -32600
/// that says why, and none of its messages is done.
#[test]
fn a_batch_is_refused_with_the_reason_at_other_versions() {
    let dir = Dir::new();
    let batch = json!([
        { "jsonrpc": "2.0", "id": 20, "method": "tools/call",
          "params": { "name": "remember", "arguments": { "text": "Never written" } } }
    ]);
    let mut server = Server::start(&dir);
    server.send(&batch);
    let refused = next_line(&mut server, "a batch before the handshake");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("before the handshake") && message.contains("2025-03-26"),
        "{refused}"
    );
    server.finish();
    for version in ["2025-06-18", "2025-11-25"] {
        let mut server = initialized_at(&dir, version);
        server.send(&batch);
        let refused = next_line(&mut server, "a batch");
        assert_eq!(refused["id"], Value::Null, "{refused}");
        assert_eq!(refused["error"]["code"], -32600, "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(version) && message.contains("one message per line"), "{message}");
        assert_eq!(server.list("recent", "memories", json!({})), json!([]));
        server.finish();
    }
}

/// Issue #55, item 10: a batch holding a request and its own cancellation, or one id twice,
/// was never answered (the server waited for a response rmcp would not give). Now the
/// cancelled request is neither run nor answered, the second use of an id gets a -32600 of its
/// own, and a `tools/call` whose params do not parse gets -32602 in a batch as on its own line.
#[test]
fn a_batch_with_its_own_cancellation_or_an_id_twice_is_answered() {
    let dir = Dir::new();
    let mut server = initialized_at(&dir, "2025-03-26");
    let remember = |id: Value, text: &str| {
        json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": { "name": "remember", "arguments": { "text": text } } })
    };
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": { "requestId": 21, "reason": "changed my mind" } });
    server.send(&json!([remember(json!(21), "Cancelled before it ran"), cancel,
                        { "jsonrpc": "2.0", "id": 22, "method": "ping" }]));
    let answer = next_line(&mut server, "a batch with its own cancellation");
    assert_eq!(answer, json!([{ "jsonrpc": "2.0", "id": 22, "result": {} }]));
    server.send(&json!([remember(json!(23), "The first of two with one id"),
                        { "jsonrpc": "2.0", "id": 23, "method": "ping" },
                        { "jsonrpc": "2.0", "id": 24, "method": "tools/call",
                          "params": { "name": 5 } }]));
    let answer = next_line(&mut server, "a batch with an id twice");
    let answers = answer.as_array().unwrap_or_else(|| panic!("not an array: {answer}"));
    let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
    assert_eq!(ids, [&json!(23), &json!(23), &json!(24)], "{answer}");
    assert_eq!(answers[0]["result"]["isError"], false, "{answer}");
    assert_eq!(answers[1]["error"]["code"], -32600, "{answer}");
    assert!(answers[1]["error"]["message"].as_str().unwrap().contains("already"), "{answer}");
    assert_eq!(answers[2]["error"]["code"], -32602, "{answer}");
    // Alone on its line, the same request is -32602 too, and the server goes on.
    server.send(&json!({ "jsonrpc": "2.0", "id": 25, "method": "tools/call",
                         "params": { "arguments": {} } }));
    let alone = next_line(&mut server, "a tools/call without a name");
    assert_eq!(alone["error"]["code"], -32602, "{alone}");
    let hits = server.list("recall", "hits", json!({ "query": "cancelled before it ran" }));
    assert!(hits.as_array().unwrap().iter().all(|h| h["title"] != "Cancelled before it ran"));
    let hits = server.list("recall", "hits", json!({ "query": "first of two with one id" }));
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits}");
    server.finish();
}
