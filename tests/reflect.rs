use std::path::Path;

use crate::util::{Dir, ids, memory};

const NOW: &str = "2026-11-30T12:00:00Z";

fn fixture() -> Dir {
    let dir = Dir::new();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reflect");
    for entry in std::fs::read_dir(data).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            dir.write(path.file_name().unwrap().to_str().unwrap(), std::fs::read(&path).unwrap());
        }
    }
    dir
}

fn at(dir: &Dir, args: &[&str]) -> crate::util::Out {
    let mut full = vec!["--now", NOW];
    full.extend_from_slice(args);
    dir.mem(&full)
}

/// The clusters of a dry run, each as its sorted source ids.
fn clusters(dir: &Dir) -> Vec<Vec<String>> {
    let plan = at(dir, &["reflect", "--dry-run", "--json"]).json();
    let mut out: Vec<Vec<String>> = plan
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let mut s: Vec<String> = p["sources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["id"].as_str().unwrap().to_string())
                .collect();
            s.sort();
            s
        })
        .collect();
    out.sort();
    out
}

fn topic(name: &str, n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("{name}-{i}")).collect()
}

#[test]
fn dry_run_finds_the_four_topics_and_leaves_the_noise() {
    let dir = fixture();
    assert_eq!(
        clusters(&dir),
        [topic("deploy", 7), topic("flaky", 7), topic("pnpm", 7), topic("redis", 7)]
    );
    let text = at(&dir, &["reflect", "--dry-run"]);
    assert!(text.ok().contains("new reflection\n  title       "), "{}", text.stdout);
    assert!(!dir.path().join("reflections").exists(), "a dry run writes nothing");
}

#[test]
fn reflect_writes_once_then_updates_the_grown_cluster() {
    let dir = fixture();
    let out = at(&dir, &["reflect", "--json"]).json();
    let written = out["written"].as_array().unwrap();
    assert_eq!(written.len(), 4, "{out}");
    let mut derived: Vec<Vec<String>> = Vec::new();
    for w in written {
        let shown = at(&dir, &["show", w["id"].as_str().unwrap(), "--json"]).json();
        let mut from: Vec<String> = shown["derived_from"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        from.sort();
        assert_eq!(shown["type"], "semantic");
        assert!(shown["body"].as_str().unwrap().contains("## Sources"), "{shown}");
        derived.push(from);
    }
    derived.sort();
    assert_eq!(
        derived,
        [topic("deploy", 7), topic("flaky", 7), topic("pnpm", 7), topic("redis", 7)]
    );
    let source = at(&dir, &["show", "redis-3", "--json"]).json();
    let redis_reflection = source["consolidated_into"].as_str().unwrap().to_string();
    assert!(
        at(&dir, &["show", "redis-3"])
            .ok()
            .contains(&format!("consolidated into {redis_reflection}"))
    );
    // The link is an edit of the source (issue #56, item 1): `updated` says when.
    assert!(
        dir.read("redis-3.md").contains(&format!(
            "consolidated_into: {redis_reflection}\nupdated: 2026-11-30T12:00:00Z\n---\n"
        )),
        "{}",
        dir.read("redis-3.md")
    );

    let again = at(&dir, &["reflect", "--json"]).json();
    assert!(again["written"].as_array().unwrap().is_empty(), "idempotent: {again}");

    let extra = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/reflect-extra");
    for name in ["redis-8.md", "redis-9.md"] {
        dir.write(name, std::fs::read(extra.join(name)).unwrap());
    }
    let grown = at(&dir, &["reflect", "--json"]).json();
    let written = grown["written"].as_array().unwrap();
    assert_eq!(written.len(), 1, "{grown}");
    assert_eq!(written[0]["id"], redis_reflection.as_str());
    assert_eq!(written[0]["updated"], true);
    assert_eq!(written[0]["sources"], 9);
    let shown = at(&dir, &["show", &redis_reflection, "--json"]).json();
    assert_eq!(shown["derived_from"].as_array().unwrap().len(), 9);

    // A topic's reflection is among its top recalls.
    let hits =
        ids(&at(&dir, &["recall", "redis session keys evicted", "--json", "--no-record"]).json());
    assert!(hits[..3].contains(&redis_reflection), "{hits:?}");
}

#[cfg(unix)]
#[test]
fn summariser_commands_echo_fail_and_time_out() {
    let dir = fixture();
    let script = dir.write(
        "summarise.sh",
        "#!/bin/sh\nwc -l >/dev/null\necho 'Four notes agree on one thing.'\n",
    );
    let script = script.to_str().unwrap().to_string();
    let out = at(&dir, &["reflect", "--summarizer", &format!("sh {script}"), "--json"]).json();
    let first = out["written"][0]["id"].as_str().unwrap();
    let body = at(&dir, &["show", first, "--json"]).json()["body"].as_str().unwrap().to_string();
    assert!(body.contains("Four notes agree on one thing.\n\n## Sources"), "{body}");

    for (command, expected) in [
        ("exit 3", "failed (exit status: 3)"),
        ("true", "printed nothing"),
        ("sleep 5", "timed out after 1 s"),
    ] {
        let dir = fixture();
        let out = at(&dir, &["reflect", "--summarizer", command, "--summarizer-timeout", "1"]);
        assert_eq!(out.code, 2, "{command}: {out:?}");
        assert!(out.stderr.contains(expected), "{command}: {}", out.stderr);
        assert!(out.stderr.contains("4 of 4 clusters were not written"), "{}", out.stderr);
        assert!(
            !dir.path().join("reflections").exists()
                || std::fs::read_dir(dir.path().join("reflections")).unwrap().count() == 0
        );
        assert!(
            !dir.read("redis-1.md").contains("consolidated_into"),
            "nothing written for a failed cluster"
        );
    }
}

#[test]
fn admission_catches_duplicates_and_near_duplicates() {
    let dir = Dir::new();
    let text = "The staging Redis evicts session keys when maxmemory is reached; use noeviction for sessions.";
    dir.write(
        "orig.md",
        memory("orig", "semantic", 5, "2026-01-01T00:00:00Z", &format!("{text}\n")),
    );
    dir.write(
        "other.md",
        memory(
            "other",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "Deploys go through Argo CD sync waves.\n",
        ),
    );

    let dup = at(
        &dir,
        &[
            "add",
            "  the staging redis evicts SESSION keys when maxmemory is reached; use noeviction for sessions. ",
        ],
    );
    assert!(dup.ok().starts_with("orig\t"), "{}", dup.stdout);
    assert!(dup.stderr.contains("already remembered as orig"), "{}", dup.stderr);
    assert_eq!(
        at(&dir, &["list", "--json"]).json().as_array().unwrap().len(),
        2,
        "not written again"
    );
    assert_eq!(at(&dir, &["show", "orig", "--json"]).json()["access_count"], 1, "counted as used");

    let near = "The staging Redis evicts session keys when maxmemory is reached; use noeviction for all sessions.";
    let refused = at(&dir, &["add", near]);
    assert_eq!(refused.code, 2);
    assert!(
        refused
            .stderr
            .contains("a very similar memory exists: orig (orig.md), tf-idf similarity 0."),
        "{}",
        refused.stderr
    );
    let forced = at(&dir, &["add", near, "--force", "--json"]).json();
    assert!(dir.path().join(forced["path"].as_str().unwrap()).is_file());

    let replaced = at(
        &dir,
        &[
            "add",
            "The staging Redis evicts session keys when maxmemory is reached; sessions now use noeviction.",
            "--supersede",
            "--json",
        ],
    );
    let new_id = replaced.json()["id"].as_str().unwrap().to_string();
    assert!(replaced.stderr.contains("is superseded by"), "{}", replaced.stderr);
    let mut invalid = 0;
    for id in ["orig", forced["id"].as_str().unwrap()] {
        invalid +=
            usize::from(!at(&dir, &["show", id, "--json"]).json()["superseded_by"].is_null());
    }
    assert_eq!(invalid, 1, "exactly the most similar one is superseded by {new_id}");
    let fresh = at(&dir, &["add", "Lunch is at noon on Fridays."]);
    fresh.ok();
}

#[test]
fn a_run_stopped_before_marking_its_sources_is_finished_without_duplicates() {
    let dir = fixture();
    at(&dir, &["reflect"]).ok();
    let reflection = at(&dir, &["show", "redis-1", "--json"]).json()["consolidated_into"]
        .as_str()
        .unwrap()
        .to_string();
    // What a run stopped after writing the reflection but before marking its sources leaves.
    for id in ["redis-1", "redis-2", "redis-3"] {
        let path = format!("{id}.md");
        let text = dir.read(&path);
        let unmarked: String = text
            .lines()
            .filter(|l| !l.starts_with("consolidated_into:"))
            .map(|l| format!("{l}\n"))
            .collect();
        dir.write(&path, unmarked);
    }
    let out = at(&dir, &["reflect", "--json"]).json();
    let written = out["written"].as_array().unwrap();
    assert_eq!(written.len(), 1, "{out}");
    assert_eq!(written[0]["id"], reflection.as_str());
    let from = at(&dir, &["show", &reflection, "--json"]).json()["derived_from"].clone();
    let mut ids: Vec<&str> = from.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    ids.sort();
    assert_eq!(
        ids,
        ["redis-1", "redis-2", "redis-3", "redis-4", "redis-5", "redis-6", "redis-7"],
        "no duplicates"
    );
    assert!(dir.read("redis-1.md").contains(&format!("consolidated_into: {reflection}")));
}
