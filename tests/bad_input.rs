use crate::util::{Dir, ids, memory};

fn root_with_one_good() -> Dir {
    let dir = Dir::new();
    dir.write(
        "good.md",
        memory(
            "good",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "# Redis eviction\nRedis evicts keys.\n",
        ),
    );
    dir
}

/// Asserts that recall still finds the good memory and stderr names `path:line: reason`.
#[track_caller]
fn reported(dir: &Dir, expected: &str) {
    let out = dir.mem(&["recall", "redis", "--json"]);
    assert_eq!(ids(&out.json()), ["good"], "the good memory is still recalled");
    assert!(out.stderr.contains(expected), "stderr should contain {expected:?}:\n{}", out.stderr);
}

#[test]
fn malformed_yaml_is_reported_with_its_line() {
    let dir = root_with_one_good();
    dir.write(
        "bad.md",
        "---\nid: bad\ntype: semantic\ntags: [redis, unclosed\ncreated: 2026-01-01\n---\nredis\n",
    );
    reported(&dir, "bad.md:");
    let out = dir.mem(&["recall", "redis"]);
    assert!(out.stderr.contains("invalid YAML in front-matter"), "{}", out.stderr);
}

#[test]
fn missing_and_wrong_typed_fields_are_reported() {
    let dir = root_with_one_good();
    dir.write("noid.md", "---\ntype: semantic\ncreated: 2026-01-01\n---\nredis\n");
    dir.write(
        "imp.md",
        "---\nid: imp\ntype: semantic\nimportance: high\ncreated: 2026-01-01\n---\nredis\n",
    );
    dir.write(
        "range.md",
        "---\nid: range\ntype: semantic\nimportance: 11\ncreated: 2026-01-01\n---\nredis\n",
    );
    dir.write("kind.md", "---\nid: kind\ntype: fact\ncreated: 2026-01-01\n---\nredis\n");
    dir.write("time.md", "---\nid: time\ntype: semantic\ncreated: last tuesday\n---\nredis\n");
    dir.write("plain.md", "just some notes about redis\n");
    reported(&dir, "noid.md: missing required field `id`");
    reported(&dir, "imp.md:4: field `importance`: expected an integer 1..10, found text");
    reported(&dir, "range.md:4: field `importance`: must be 1..10, found 11");
    reported(&dir, "kind.md:3: field `type`: unknown type \"fact\"");
    reported(&dir, "time.md:4: field `created`");
    reported(&dir, "plain.md:1: no front-matter");
}

#[test]
fn non_utf8_and_huge_files_are_reported() {
    let dir = root_with_one_good();
    let mut bytes =
        memory("latin", "semantic", 5, "2026-01-01T00:00:00Z", "redis caf").into_bytes();
    bytes.extend_from_slice(b"\xe9\n");
    dir.write("latin.md", bytes);
    let big = memory("big", "semantic", 5, "2026-01-01T00:00:00Z", &"redis ".repeat(200_000));
    dir.write("big.md", big);
    reported(&dir, "latin.md:7: not valid UTF-8");
    reported(&dir, "big.md: file is 1200");
    reported(&dir, "over the 1048576-byte limit");
}

#[cfg(unix)]
#[test]
fn symlink_loops_are_reported_not_followed_forever() {
    let dir = root_with_one_good();
    std::fs::create_dir(dir.path().join("loop")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir.path().join("loop/back")).unwrap();
    reported(&dir, "symlink loop");
}

#[test]
fn ids_with_path_parts_are_rejected() {
    let dir = root_with_one_good();
    dir.write(
        "trav.md",
        "---\nid: ../../etc/passwd\ntype: semantic\ncreated: 2026-01-01\n---\nredis\n",
    );
    dir.write("dots.md", "---\nid: a..b\ntype: semantic\ncreated: 2026-01-01\n---\nredis\n");
    reported(
        &dir,
        "trav.md:2: field `id`: invalid memory id \"../../etc/passwd\": it contains a path separator",
    );
    reported(&dir, "dots.md:2: field `id`: invalid memory id \"a..b\": it contains `..`");
    for bad in ["../good", "a/b", ""] {
        let out = dir.mem(&["show", bad]);
        assert_eq!(out.code, 2, "{bad:?}: {out:?}");
        assert!(out.stderr.contains("invalid memory id"), "{}", out.stderr);
    }
}

#[test]
fn duplicate_ids_are_reported_and_both_kept() {
    let dir = root_with_one_good();
    dir.write(
        "a/twin.md",
        memory("twin", "semantic", 5, "2026-01-01T00:00:00Z", "redis twin one\n"),
    );
    dir.write(
        "b/twin.md",
        memory("twin", "episodic", 5, "2026-01-02T00:00:00Z", "redis twin two\n"),
    );
    let out = dir.mem(&["recall", "twin", "--json"]);
    let paths: Vec<_> = out
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(paths.len(), 2, "both files stay recallable: {paths:?}");
    assert!(
        out.stderr.contains("id \"twin\" is used by 2 files: a/twin.md, b/twin.md"),
        "{}",
        out.stderr
    );
    let show = dir.mem(&["show", "twin"]);
    assert_eq!(show.code, 2);
    assert!(show.stderr.contains("a/twin.md, b/twin.md"), "{}", show.stderr);
    let stats = dir.mem(&["stats", "--json"]).json();
    assert_eq!(stats["duplicate_ids"], 1);
}

#[test]
fn future_timestamps_count_as_now_and_are_reported() {
    let dir = Dir::new();
    dir.write(
        "future.md",
        memory("future", "semantic", 5, "2030-01-01T00:00:00Z", "redis from the future\n"),
    );
    dir.write(
        "today.md",
        memory("today", "semantic", 5, "2026-11-30T12:00:00Z", "redis from the future\n"),
    );
    let out = dir.mem(&["recall", "redis", "--json"]);
    let hits = out.json();
    assert_eq!(hits[0]["components"]["recency"], 1.0);
    assert_eq!(hits[1]["components"]["recency"], 1.0);
    assert_eq!(hits[0]["score"], hits[1]["score"], "a future date gives no extra boost");
    assert!(
        out.stderr.contains("future.md: warning: created 2030-01-01T00:00:00Z is in the future"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_fixed_file_comes_back() {
    let dir = root_with_one_good();
    dir.write("later.md", "---\nid: later\ntype: semantic\ncreated: never\n---\nredis later\n");
    assert_eq!(ids(&dir.mem(&["recall", "redis", "--json"]).json()), ["good"]);
    dir.write("later.md", memory("later", "semantic", 5, "2026-01-01T00:00:00Z", "redis later\n"));
    let out = dir.mem(&["recall", "later", "--json"]);
    assert_eq!(ids(&out.json()), ["later"]);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn a_file_broken_after_indexing_leaves_the_index_and_is_reported() {
    let dir = root_with_one_good();
    dir.write(
        "soon.md",
        memory("soon", "semantic", 5, "2026-01-01T00:00:00Z", "redis soon broken\n"),
    );
    assert_eq!(ids(&dir.mem(&["recall", "soon", "--json"]).json()), ["soon"]);
    dir.write("soon.md", "---\nid: soon\ntype: semantic\n---\nredis soon broken\n");
    let out = dir.mem(&["recall", "soon", "--json"]);
    assert_eq!(ids(&out.json_found()), Vec::<String>::new());
    assert!(out.stderr.contains("soon.md: missing required field `created`"), "{}", out.stderr);
}

#[test]
fn temp_files_from_an_interrupted_write_are_ignored() {
    let dir = root_with_one_good();
    // What a crash between writing the temporary file and renaming it leaves behind.
    dir.write(".mem-tmp-AbC123", "---\nid: half");
    let out = dir.mem(&["recall", "redis", "--json"]);
    assert_eq!(ids(&out.json()), ["good"]);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// Files written to the version 1 contract (`mem::format::FORMAT_VERSION`) keep loading.
#[test]
fn format_v1_fixtures_keep_loading() {
    assert_eq!(mem::format::FORMAT_VERSION, 1, "a new version needs its own fixtures");
    let dir = Dir::new();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/format_v1");
    for rel in ["full.md", "notes/minimal.md"] {
        dir.write(rel, std::fs::read(fixtures.join(rel)).unwrap());
    }
    let listed = dir.mem(&["list", "--json"]);
    assert!(listed.stderr.is_empty(), "{}", listed.stderr);
    let listed = listed.json();
    assert_eq!(ids(&listed), ["01JDXB6Q4Z7M3S5T8V9W0X1Y2Z", "minimal-note"]);
    let full = &listed[0];
    assert_eq!(full["title"], "Login cookie lifetime");
    assert_eq!(full["importance"], 7);
    // Its `access:` line counts uses: recency counts from its last one.
    assert_eq!(full["last_access"], "2026-11-30T10:00:00Z");
    assert_eq!(full["tags"], serde_json::json!(["auth", "login"]));
    let minimal = &listed[1];
    assert_eq!(
        (minimal["type"].as_str(), minimal["importance"].as_u64()),
        (Some("procedural"), Some(5))
    );
    assert_eq!(minimal["title"], "Run `make test` before pushing.");
    let shown = dir.mem(&["show", "01JDXB6Q4Z7M3S5T8V9W0X1Y2Z", "--json"]).json();
    assert_eq!(shown["front_matter"]["derived_from"], serde_json::json!(["id1", "id2"]));
    assert_eq!(shown["access_count"], 3);
}

#[test]
fn bad_usage_and_validity_fields_are_reported() {
    let dir = root_with_one_good();
    dir.write(
        "inv.md",
        "---\nid: inv\ntype: semantic\ncreated: 2026-01-01\ninvalid_at: soon\n---\nredis\n",
    );
    dir.write(
        "sup.md",
        "---\nid: sup\ntype: semantic\ncreated: 2026-01-01\nsuperseded_by: ../x\n---\nredis\n",
    );
    dir.write("str.md", "---\nid: str\ntype: semantic\ncreated: 2026-01-01\naccess: { count: 1, strength: -3 }\n---\nredis\n");
    reported(&dir, "inv.md:5: field `invalid_at`: \"soon\" is not a valid time");
    reported(&dir, "sup.md:5: field `superseded_by`: invalid memory id \"../x\"");
    reported(
        &dir,
        "str.md:5: field `access`: strength must be a positive number of days, found -3",
    );
    dir.write(
        "upd.md",
        "---\nid: upd\ntype: semantic\ncreated: 2026-01-01\nupdated: 5\n---\nredis\n",
    );
    reported(
        &dir,
        "upd.md:5: field `updated`: expected an RFC 3339 time like 2026-11-29T23:46:04Z, found a number",
    );
}

/// Issue #56, item 3: git's conflict markers, in the body or across the front-matter, make a
/// bad file that names `mem resolve`; the text of neither side is recalled.
#[test]
fn conflict_markers_are_reported_and_never_recalled() {
    let dir = root_with_one_good();
    let head = "---\nid: port\ntype: semantic\ncreated: 2026-01-01\n---\n# Redis port\n";
    dir.write(
        "body.md",
        format!(
            "{head}<<<<<<< HEAD\nredis listens on 6380\n=======\nredis listens on 6381\n>>>>>>> b\n"
        ),
    );
    dir.write(
        "front.md",
        "---\nid: front\ntype: semantic\n<<<<<<< HEAD\ncreated: 2026-01-01\n=======\ncreated: 2026-01-02\n>>>>>>> b\n---\nredis\n",
    );
    let why = "git conflict markers: a merge left both sides of a change here; `mem resolve` on \
               this file keeps each side as a memory  [skipped]";
    reported(&dir, &format!("body.md:7: {why}"));
    reported(&dir, &format!("front.md:4: {why}"));
    // Markers that are not a whole conflict, or indented, are text.
    dir.write("quoted.md", format!("{head}    <<<<<<< HEAD\n    =======\n    >>>>>>> b\n"));
    let out = dir.mem(&["recall", "redis", "--json"]);
    assert!(ids(&out.json()).contains(&"port".to_string()), "{}", out.stdout);
}

#[test]
fn one_unsyncable_file_does_not_stop_the_others() {
    let dir = Dir::new();
    dir.write("a.md", memory("a", "semantic", 5, "2026-01-01T00:00:00Z", "alpha\n"));
    dir.write("b.md", memory("b", "semantic", 5, "2026-01-01T00:00:00Z", "beta\n"));
    dir.mem(&["used", "a", "b", "--no-sync"]).ok();
    // Break a.md after its events were recorded.
    dir.write("a.md", "---\nid: a\ntype: semantic\n---\nalpha\n");
    let out = dir.mem(&["sync"]);
    assert!(
        out.stderr.contains("a.md: missing required field `created`  [skipped]"),
        "{}",
        out.stderr
    );
    // Events go to the usage file whatever the state of the memory file.
    let usage = dir.usage_text();
    assert!(usage.contains("\ta\n") && usage.contains("\tb\n"), "{usage}");
    assert!(!dir.read("b.md").contains("access:"), "memory files are not rewritten");
}

#[cfg(unix)]
#[test]
fn edits_keep_permissions_and_follow_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    // A link that stays inside the root (its target in a hidden folder, which is not walked) is
    // written through; one that leaves the root is never written (tests/hardening.rs).
    let target = dir.write(
        ".store/real.md",
        memory("linked", "semantic", 5, "2026-01-01T00:00:00Z", "via a link\n"),
    );
    std::os::unix::fs::symlink(&target, dir.path().join("link.md")).unwrap();
    let private = dir.write(
        "private.md",
        memory("private", "semantic", 5, "2026-01-01T00:00:00Z", "secret note\n"),
    );
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).unwrap();
    dir.mem(&["used", "private", "linked"]).ok();
    assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(
        std::fs::symlink_metadata(dir.path().join("link.md")).unwrap().file_type().is_symlink()
    );
    assert!(dir.usage_text().contains("\tlinked\n"), "{}", dir.usage_text());
}
