//! Docs that cannot drift: AGENTS.md and docs/architecture.md name only paths that exist, the
//! index's schema version they state is the code's, and the map of `.mem/` names every file a
//! root's commands write there.

use std::path::{Path, PathBuf};

use crate::util::Dir;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(manifest_dir().join(rel)).unwrap()
}

/// The top folders of the package whose paths the docs name.
const PATH_ROOTS: &[&str] = &[
    "src/",
    "crates/",
    "tests/",
    "scripts/",
    "docs/",
    "benches/",
    "examples/",
    ".ci/",
    "memories.example/",
];

/// The paths of the package that `doc` names (words starting with one of [`PATH_ROOTS`]) and
/// that do not exist under `top`.
fn missing_paths(doc: &str, top: &Path) -> Vec<String> {
    let mut missing: Vec<String> = doc
        .split(|c: char| c.is_whitespace() || "`()[],;*\"'<>|".contains(c))
        // A link's anchor names a heading, not a file.
        .map(|w| w.split('#').next().unwrap_or(w).trim_end_matches(['.', ':']))
        .filter(|w| PATH_ROOTS.iter().any(|root| w.starts_with(root)))
        // A pattern or a placeholder names no one file.
        .filter(|w| !w.contains(['*', '{', '}']) && !w.contains("NNN") && !w.contains("..."))
        .filter(|w| !top.join(w).exists())
        .map(String::from)
        .collect();
    missing.sort();
    missing.dedup();
    missing
}

#[test]
fn the_docs_name_only_paths_that_exist() {
    for doc in ["AGENTS.md", "docs/architecture.md", "README.md"] {
        let missing = missing_paths(&read(doc), &manifest_dir());
        assert!(missing.is_empty(), "{doc} names paths that do not exist: {missing:?}");
    }
}

/// The check itself: a document that names a missing path fails it.
#[test]
fn a_missing_path_is_found() {
    let doc = "See `crates/mem/src/lib.rs`, `crates/mem/src/store.rs` and (tests/nowhere.rs); `crates/mem/src/session/migrations/NNN_*.sql` is a pattern.";
    assert_eq!(
        missing_paths(doc, &manifest_dir()),
        ["crates/mem/src/store.rs", "tests/nowhere.rs"]
    );
}

/// The number in `SCHEMA_VERSION: u32 = N;` of the index schema.
fn schema_version() -> String {
    let code = read("crates/mem/src/index/schema.rs");
    let at = code.find("pub const SCHEMA_VERSION: u32 = ").unwrap();
    let rest = &code[at + "pub const SCHEMA_VERSION: u32 = ".len()..];
    rest[..rest.find(';').unwrap()].to_string()
}

#[test]
fn the_stated_schema_version_is_the_codes() {
    let version = schema_version();
    for doc in ["AGENTS.md", "docs/architecture.md"] {
        let text = read(doc);
        for (at, _) in text.match_indices("`SCHEMA_VERSION` (") {
            let stated = &text[at + "`SCHEMA_VERSION` (".len()..];
            let stated = &stated[..stated.find(')').unwrap()];
            assert_eq!(stated, version, "{doc} says SCHEMA_VERSION is {stated}");
        }
    }
}

/// The names of the `.mem/` map of docs/architecture.md (the first word of each line under
/// `.mem/` in the root's map).
fn mapped_state_files() -> Vec<String> {
    let doc = read("docs/architecture.md");
    let map = &doc[doc.find("  .mem/ ").unwrap()..];
    let map = &map[..map.find("```").unwrap()];
    map.lines().skip(1).filter_map(|l| l.split_whitespace().next()).map(String::from).collect()
}

/// What the map says of a name found in `.mem/`: listed as it is, as `manifest-N.bin` or
/// `manifest-N.log` for a manifest's base or log, or as the `-wal`/`-shm` companion of a listed
/// database.
fn mapped(name: &str, map: &[String]) -> bool {
    let base = name.trim_end_matches("-wal").trim_end_matches("-shm");
    let folder = format!("{name}/");
    map.iter().any(|m| {
        m == name
            || *m == folder
            || m == base
            || (m == "manifest-N.bin" && name.starts_with("manifest-") && name.ends_with(".bin"))
            || (m == "manifest-N.log" && name.starts_with("manifest-") && name.ends_with(".log"))
    })
}

/// Every file the commands write into `.mem/` (an index with its manifests and caches, usage,
/// a capture with its log and session log, a context hook's claim and ledger) is in the map.
#[test]
fn the_state_map_names_every_file_of_mem() {
    let root = Dir::example();
    // A root found from the hooks' working directory, as a project's is.
    root.write("mem.toml", "");
    root.mem(&["index"]).ok();
    root.mem(&["recall", "postgres"]).ok();
    let transcript = root.write(
        "t/s1.jsonl",
        "{\"type\":\"user\",\"sessionId\":\"s1\",\"timestamp\":\"2026-11-30T09:00:00Z\",\"message\":{\"role\":\"user\",\"content\":\"Fix the login test\"}}\n",
    );
    let payload = |event: &str| {
        serde_json::json!({
            "session_id": "s1", "transcript_path": transcript, "cwd": root.path(),
            "hook_event_name": event, "prompt": "postgres",
        })
        .to_string()
    };
    root.mem_in(".", &["capture", "--hook", "claude"], payload("Stop")).ok();
    root.mem_in(".", &["context", "--hook", "claude"], payload("SessionStart")).ok();
    let map = mapped_state_files();
    let mut unmapped = Vec::new();
    for entry in std::fs::read_dir(root.path().join(".mem")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !mapped(&name, &map) {
            unmapped.push(name);
        }
    }
    assert!(unmapped.is_empty(), "docs/architecture.md's .mem/ map lacks {unmapped:?} ({map:?})");
}

#[test]
fn the_git_policy_in_security_md_is_the_runners() {
    // docs/security.md, "Git over a clone", writes out every override and variable.
    let doc = read("docs/security.md");
    let mut missing: Vec<String> = mem::git::OVERRIDES
        .iter()
        .filter(|o| !doc.contains(&format!("`{o}`")))
        .map(|o| o.to_string())
        .collect();
    for (name, value) in mem::git::SET_ENV {
        if !doc.contains(&format!("`{name}={value}`")) {
            missing.push(format!("{name}={value}"));
        }
    }
    assert!(missing.is_empty(), "docs/security.md does not name: {missing:?}");
}
