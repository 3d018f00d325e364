//! `mem mcp` driven by the official MCP Python SDK (issue #55, item 10), pinned and installed by
//! `scripts/mcp-client.sh`, whose python `MEM_TEST_MCP_PYTHON` names. Without it the tests say
//! so and pass, unless `CI=true`: then they fail, as the end-to-end tests do without the agents.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Dir, NOW, bin, clean_env, memory, run};

/// The SDK's python, or `None` (and a note) when it is not installed outside CI.
fn python() -> Option<String> {
    match std::env::var("MEM_TEST_MCP_PYTHON") {
        Ok(python) if !python.is_empty() => Some(python),
        _ => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(!ci, "CI=true and MEM_TEST_MCP_PYTHON is not set: run scripts/mcp-client.sh");
            eprintln!("note: MEM_TEST_MCP_PYTHON is not set (scripts/mcp-client.sh): skipped");
            None
        }
    }
}

/// What `tests/mcp/client.py` saw, the SDK's client run in `dir`'s `rel`.
fn client_run(dir: &Dir, rel: &str, python: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let mut cmd = Command::new(python);
    clean_env(&mut cmd).env("HOME", dir.home()).env("XDG_CONFIG_HOME", dir.home());
    cmd.current_dir(dir.path().join(rel)).arg(script).arg(bin()).arg(NOW);
    run(&mut cmd).json()
}

/// Issue #55, item 10, through the official client: recall's `layer` lists the five names; a
/// `tools/call` whose params do not parse is -32602 (it was -32601, "no such method"); the
/// session tools of a root without a session log answer without creating one; `get` of an
/// agent's memory gives its layer and a path that leads to the file mem reads (it was relative
/// to the agent's folder, read as if under the project root).
#[test]
fn the_official_client_gets_a_schema_that_lists_layers_invalid_params_and_no_new_log() {
    let Some(python) = python() else { return };
    let dir = Dir::new();
    let folder = crate::native::project_with_claude_memory(&dir);
    let note = memory("release-notes", "semantic", 5, NOW, "Release notes go in CHANGES.md.");
    dir.write("repo/.memory/release-notes.md", note);
    let seen = client_run(&dir, "repo", &python);
    let schema = &seen["recall_layer_schema"];
    assert_eq!(schema["enum"], json!(["project", "user", "claude", "codex", "gemini", null]));
    assert_eq!(seen["bad_params"]["code"], -32602, "{seen}");
    assert!(seen["bad_params"]["message"].as_str().unwrap().contains("tools/call"), "{seen}");
    assert_eq!(seen["session_list"], json!({ "sessions": [] }), "{seen}");
    assert_eq!(seen["session_search"], json!({ "hits": [] }), "{seen}");
    let resumed = seen["session_resume"]["error"].as_str().unwrap();
    assert!(resumed.contains("no session log yet"), "{seen}");
    let log = dir.path().join("repo/.memory/.mem").join(mem::session::FILE);
    assert!(!log.exists(), "a read-only tool created {}", log.display());
    let got = &seen["get claude.deploy-window"];
    assert_eq!(got["layer"], "claude", "{seen}");
    let path = Path::new(got["path"].as_str().unwrap());
    assert!(path.is_absolute(), "{seen}");
    assert!(std::fs::read_to_string(path).unwrap().contains("Tuesday to Thursday"), "{seen}");
    assert!(got["source"].as_str().unwrap().contains("feedback_deploy_window.md"), "{seen}");
    assert!(folder.join("feedback_deploy_window.md").exists());
    // The project's own memory: its path relative to the root, as before, and no layer.
    let own = &seen["get release-notes"];
    assert_eq!(own["path"], "release-notes.md", "{seen}");
    assert!(own.get("layer").is_none(), "{seen}");
}
