use crate::util::{Dir, ids, memory};

#[test]
fn example_answers_the_readme_queries() {
    let dir = Dir::example();
    let login = dir.mem(&["recall", "why does the login test fail", "--json"]).json();
    let hits = login.as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 20);
    let top3: Vec<String> =
        hits.iter().take(3).map(|h| h["title"].as_str().unwrap().to_lowercase()).collect();
    assert!(top3.iter().any(|t| t.contains("login")), "{top3:?}");

    let deploy = dir.mem(&["recall", "deploy checklist", "--json"]).json();
    let first = deploy[0]["title"].as_str().unwrap().to_lowercase();
    assert!(first.contains("deploy") && first.contains("checklist"), "{first}");
}

#[test]
fn json_contract() {
    let dir = Dir::example();
    let hits = dir.mem(&["recall", "deploy checklist", "--json"]).json();
    for (i, hit) in hits.as_array().unwrap().iter().enumerate() {
        for key in ["id", "path", "title", "type", "importance", "created", "score", "snippet"] {
            assert!(!hit[key].is_null(), "{key} missing in {hit}");
        }
        assert_eq!(hit["rank"], i + 1);
        let c = &hit["components"];
        for key in ["recency", "importance", "relevance"] {
            let v = c[key].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&v), "{key} = {v}");
        }
        assert!(
            dir.path().join(hit["path"].as_str().unwrap()).is_file(),
            "path is relative to the root"
        );
        assert!(hit["snippet"].as_str().unwrap().chars().count() <= 161);
    }
    let scores: Vec<f64> =
        hits.as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "sorted by score: {scores:?}");
}

#[test]
fn no_match_says_so_and_exits_one() {
    let dir = Dir::example();
    let out = dir.mem(&["recall", "xylophone quaternion"]);
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (1, "", "mem: nothing matches \"xylophone quaternion\"\n")
    );
    let out = dir.mem(&["recall", "xylophone quaternion", "--json"]);
    assert_eq!((out.code, out.stdout.trim()), (1, "[]"));
    let out = dir.mem(&["recall", "the and of", "--json"]);
    assert_eq!(
        (out.code, out.stdout.trim()),
        (1, "[]"),
        "a query of stop words only matches nothing"
    );
}

#[test]
fn table_and_explain() {
    let dir = Dir::example();
    let out = dir.mem(&["recall", "deploy checklist", "-k", "3"]);
    let lines: Vec<&str> = out.ok().lines().collect();
    assert_eq!(lines.len(), 4, "header and three rows: {lines:?}");
    for col in ["#", "score", "type", "imp", "age", "title", "path"] {
        assert!(lines[0].split_whitespace().any(|c| c == col), "{col} in {}", lines[0]);
    }
    let out = dir.mem(&["recall", "deploy checklist", "-k", "3", "--explain"]);
    let text = out.ok();
    for col in ["relevance", "bm25", "recency", "importance"] {
        assert!(text.lines().next().unwrap().contains(col), "{col}");
    }
    assert!(
        text.contains(
            "score = relevance × (1 − 0.2 + 0.2 × recency) × (1 − 0.3 + 0.3 × importance)"
        ),
        "{text}"
    );
    assert!(text.contains("synonyms searched at weight 0.3:"), "{text}");
}

#[test]
fn identifiers_are_found_whole_and_by_parts() {
    let dir = Dir::new();
    dir.write(
        "a.md",
        memory(
            "a",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "The session_id cookie is set by auth.py.\n",
        ),
    );
    dir.write(
        "b.md",
        memory(
            "b",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "StorePort is the storage protocol; CI pushes refs/harness.\n",
        ),
    );
    for (query, expected) in [
        ("session_id", "a"),
        ("session", "a"),
        ("auth.py", "a"),
        ("auth", "a"),
        ("StorePort", "b"),
        ("port", "b"),
        ("refs/harness", "b"),
        ("harness", "b"),
    ] {
        let hits = dir.mem(&["recall", query, "--json"]).json();
        assert_eq!(ids(&hits).first().map(String::as_str), Some(expected), "{query}");
    }
}

#[test]
fn filters_by_type_and_tag() {
    let dir = Dir::new();
    let write = |id: &str, kind: &str, tags: &str| {
        dir.write(&format!("{id}.md"), format!("---\nid: {id}\ntype: {kind}\ncreated: 2026-01-01\ntags: [{tags}]\n---\nredis notes\n"));
    };
    write("e", "episodic", "cache");
    write("s", "semantic", "cache, Ops");
    write("p", "procedural", "ops");
    let q = |args: &[&str]| {
        let mut all = vec!["recall", "redis", "--json"];
        all.extend_from_slice(args);
        let mut got = ids(&dir.mem(&all).json());
        got.sort();
        got
    };
    assert_eq!(q(&["--type", "episodic"]), ["e"]);
    assert_eq!(q(&["--type", "episodic", "--type", "procedural"]), ["e", "p"]);
    assert_eq!(q(&["--tag", "ops"]), ["p", "s"], "tags match case-insensitively");
    assert_eq!(q(&["--tag", "ops", "--tag", "cache"]), ["s"]);
    let listed: Vec<String> = ids(&dir.mem(&["list", "--type", "semantic", "--json"]).json());
    assert_eq!(listed, ["s"]);
}

#[test]
fn recency_refines_but_never_replaces_relevance() {
    let dir = Dir::new();
    let body = "The flaky login test: the session cookie expires.\n";
    dir.write("old.md", memory("old", "semantic", 5, "2023-01-01T00:00:00Z", body));
    dir.write("new.md", memory("new", "semantic", 5, "2026-11-29T00:00:00Z", body));
    dir.write(
        "unrelated.md",
        memory("unrelated", "semantic", 10, "2026-11-30T11:59:00Z", "Lunch menu for Friday.\n"),
    );
    let hits = dir.mem(&["recall", "login test", "--json"]).json();
    assert_eq!(
        ids(&hits),
        ["new", "old"],
        "newer first among equals; the unrelated newest never shows"
    );
    // A use refreshes recency: an `access:` line that counts uses, in the file and after sync
    // moved it to the usage files alike.
    dir.write("old.md", format!("---\nid: old\ntype: semantic\ncreated: 2023-01-01T00:00:00Z\naccess: {{ count: 3, last: 2026-11-30T00:00:00Z }}\n---\n{body}"));
    assert_eq!(ids(&dir.mem(&["recall", "login test", "--json"]).json()), ["old", "new"]);
    dir.mem(&["sync"]).ok();
    assert!(!dir.read("old.md").contains("access:"), "moved to the usage files");
    assert_eq!(ids(&dir.mem(&["recall", "login test", "--json"]).json()), ["old", "new"]);

    // A memory that matches every word, old and unimportant, beats a fresh, critical one that
    // matches a single common word.
    let dir = Dir::new();
    dir.write(
        "focused.md",
        memory(
            "focused",
            "semantic",
            1,
            "2020-01-01T00:00:00Z",
            "# Flaky login test\nThe login test is flaky on CI.\n",
        ),
    );
    dir.write(
        "barely.md",
        memory(
            "barely",
            "semantic",
            10,
            "2026-11-30T11:00:00Z",
            "The deploy test passed; the release went out on time and nobody was paged.\n",
        ),
    );
    for i in 0..5 {
        dir.write(
            &format!("t{i}.md"),
            memory(&format!("t{i}"), "semantic", 5, "2025-01-01T00:00:00Z", "Another test note.\n"),
        );
    }
    let hits = dir.mem(&["recall", "flaky login test", "--json"]).json();
    assert_eq!(ids(&hits)[0], "focused", "{hits}");
}

#[test]
fn importance_breaks_ties() {
    let dir = Dir::new();
    dir.write(
        "low.md",
        memory("low", "semantic", 2, "2026-01-01T00:00:00Z", "rotate the signing keys\n"),
    );
    dir.write(
        "high.md",
        memory("high", "semantic", 9, "2026-01-01T00:00:00Z", "rotate the signing keys\n"),
    );
    assert_eq!(ids(&dir.mem(&["recall", "signing keys", "--json"]).json()), ["high", "low"]);
}

#[test]
fn show_list_and_stats() {
    let dir = Dir::new();
    dir.write("n/a.md", "---\nid: a\ntype: semantic\nimportance: 7\ncreated: 2026-01-01T00:00:00Z\ntags: [x]\nreviewer: ana\n---\n# Alpha\nbody of a\n");
    dir.write("b.md", memory("b", "episodic", 3, "2026-02-01T00:00:00Z", "beta\n"));
    let shown = dir.mem(&["show", "a"]);
    let text = shown.ok();
    assert!(text.contains("path        n/a.md") && text.contains("title       Alpha"), "{text}");
    assert!(text.ends_with("# Alpha\nbody of a\n"), "{text}");
    let json = dir.mem(&["show", "a", "--json"]).json();
    assert_eq!(json["front_matter"]["reviewer"], "ana");
    let missing = dir.mem(&["show", "zzz"]);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("no memory with id \"zzz\""), "{}", missing.stderr);

    assert_eq!(ids(&dir.mem(&["list", "--json"]).json()), ["b", "a"], "newest first");
    let listed = dir.mem(&["list"]);
    assert_eq!(listed.ok().lines().count(), 3);

    let stats = dir.mem(&["stats", "--json"]).json();
    assert_eq!(stats["memories"], 2);
    assert_eq!(stats["by_type"]["episodic"], 1);
    assert_eq!(stats["by_type"]["procedural"], 0);
    assert!(stats["index_bytes"].as_u64().unwrap() > 0);
    dir.write("bad.md", "oops");
    assert_eq!(dir.mem(&["stats", "--json"]).json()["bad_files"], 1);
}

#[test]
fn broken_pipe_is_not_an_error() {
    use std::process::{Command, Stdio};
    let dir = Dir::example();
    let mut child = Command::new(crate::util::bin())
        .args(["--dir", dir.path().to_str().unwrap(), "list"])
        .env("MEM_NOW", crate::util::NOW)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
