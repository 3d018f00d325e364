use std::process::Command;

use crate::util::{Dir, bin, ids, run};

#[test]
fn init_add_recall_from_inside_the_root() {
    let dir = Dir::new();
    let out = run(Command::new(bin()).args(["init", "mymem"]).current_dir(dir.path()));
    assert!(out.ok().contains("initialised memory root mymem"));
    let root = dir.path().join("mymem");
    assert!(root.join("mem.toml").is_file());
    assert_eq!(std::fs::read_to_string(root.join(".gitignore")).unwrap(), ".mem/\n");
    let again = run(Command::new(bin()).args(["init", "mymem"]).current_dir(dir.path()));
    assert!(again.ok().contains("already a memory root"));

    let sub = root.join("notes/deeper");
    std::fs::create_dir_all(&sub).unwrap();
    let added = run(Command::new(bin())
        .args([
            "add",
            "We use pnpm, never npm",
            "--type",
            "semantic",
            "--importance",
            "8",
            "--tag",
            "tooling",
        ])
        .current_dir(&sub));
    let line = added.ok().trim().to_string();
    let (id, path) = line.split_once('\t').unwrap();
    assert_eq!(id.len(), 26, "a ULID: {line}");
    assert_eq!(
        std::path::Path::new(path),
        root.join(format!("{id}.md")),
        "written at the root found above the working directory"
    );

    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.starts_with(&format!("---\nid: {id}\ntype: semantic\nimportance: 8\ncreated: 2026-11-30T12:00:00Z\ntags:\n- tooling\n---\n")), "{text}");
    assert!(text.ends_with("---\nWe use pnpm, never npm\n"), "{text}");

    let recalled = run(Command::new(bin())
        .args(["recall", "which package manager", "--json"])
        .current_dir(&root))
    .json();
    assert_eq!(ids(&recalled), [id]);
}

#[test]
fn mem_dir_and_the_default_root() {
    let dir = Dir::new();
    let data = dir.path().join("xdg");
    let root = dir.path().join("via-env");
    std::fs::create_dir(&root).unwrap();
    let out = run(Command::new(bin())
        .args(["add", "from the environment"])
        .env("MEM_DIR", &root)
        .current_dir(dir.path()));
    out.ok();
    let out = run(Command::new(bin())
        .args(["list", "--json"])
        .env("MEM_DIR", &root)
        .current_dir(dir.path()));
    assert_eq!(out.json().as_array().unwrap().len(), 1);
    let out = run(Command::new(bin()).args(["--dir", root.to_str().unwrap(), "stats", "--json"]));
    assert_eq!(out.json()["memories"], 1);

    let out = run(Command::new(bin())
        .args(["add", "into the default root"])
        .env("XDG_DATA_HOME", &data)
        .current_dir(dir.path()));
    out.ok();
    assert!(out.stderr.contains("created the default memory root"), "{}", out.stderr);
    assert!(data.join("mem/mem.toml").is_file());
    let out = run(Command::new(bin())
        .args(["recall", "default", "--json"])
        .env("XDG_DATA_HOME", &data)
        .current_dir(dir.path()));
    assert_eq!(out.json().as_array().unwrap().len(), 1);
}

#[test]
fn a_missing_dir_is_an_error_with_the_fix() {
    let dir = Dir::new();
    let out =
        run(Command::new(bin()).args(["--dir", "nope", "recall", "x"]).current_dir(dir.path()));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("does not exist; create it with `mem init"), "{}", out.stderr);
}

#[test]
fn add_reads_stdin_and_validates() {
    let dir = Dir::new();
    let out = dir.mem_stdin(
        &["add", "--type", "procedural", "--title", "Release", "--json"],
        "1. tag\n2. push\n",
    );
    let added = out.json();
    let path = added["path"].as_str().unwrap();
    assert!(dir.read(path).ends_with("---\n# Release\n\n1. tag\n2. push\n"));
    let shown = dir.mem(&["show", added["id"].as_str().unwrap(), "--json"]).json();
    assert_eq!(shown["title"], "Release");
    assert_eq!(shown["type"], "procedural");

    assert_eq!(dir.mem_stdin(&["add"], "   \n").code, 2);
    assert_eq!(dir.mem(&["add", "x", "--importance", "11"]).code, 2);
    assert_eq!(dir.mem(&["add", "x", "--type", "fact"]).code, 2);
}

#[test]
fn bad_settings_are_an_error_naming_the_key() {
    let dir = Dir::new();
    dir.write("mem.toml", "[ranking]\nrecency_weight = 2\n");
    let out = dir.mem(&["recall", "x"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("mem.toml: [ranking] recency_weight must be at least 0 and below 1"),
        "{}",
        out.stderr
    );
    // The weights that were not checked (contiguity_weight) or came later.
    for (key, value, range) in [
        ("contiguity_weight", "1.5", "must be between 0 and 1, found 1.5"),
        ("episode_weight", "-0.1", "must be between 0 and 1, found -0.1"),
        ("list_episode_share", "1.5", "must be between 0 and 1, found 1.5"),
        ("digest_weight", "0", "must be above 0 and at most 1, found 0"),
        ("date_weight", "1", "must be at least 0 and below 1, found 1"),
        ("time_weight", "1.2", "must be at least 0 and below 1, found 1.2"),
        ("name_weight", "-1", "must be at least 0 and below 1, found -1"),
    ] {
        dir.write("mem.toml", format!("[ranking]\n{key} = {value}\n"));
        let out = dir.mem(&["recall", "x"]);
        assert_eq!(out.code, 2, "{key}");
        assert!(out.stderr.contains(&format!("[ranking] {key} {range}")), "{}", out.stderr);
    }
}
