//! `mem mcp` at the protocol's edges: a client that leaves before the handshake, methods the
//! server does not have, JSON-RPC batches, and what goes to stderr.

use std::process::Command;

use serde_json::{Value, json};
use wait_timeout::ChildExt;

use super::{PATIENCE, Server, initialized};
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
