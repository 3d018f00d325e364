//! A memory root shared through git by two machines (issue #15): each clone appends usage to
//! its own file in usage/, so merging never conflicts, and the merged root prunes and ranks
//! like one root that saw every event.

use std::path::Path;
use std::process::Command;

use crate::util::{Dir, ids, memory};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "git {args:?}: {text}");
    text
}

fn at(dir: &Dir, now: &str, args: &[&str]) -> String {
    let mut full = vec!["--now", now];
    full.extend_from_slice(args);
    dir.mem(&full).ok().to_string()
}

/// Three old memories, one with an `access:` line written by an older `mem`.
fn seed(dir: &Dir) {
    let t0 = "2024-01-01T00:00:00Z";
    dir.write(
        "argo.md",
        memory("argo", "episodic", 3, t0, "# Argo sync\nArgo CD synced the cluster.\n"),
    );
    dir.write(
        "lunch.md",
        memory("lunch", "episodic", 2, t0, "# Lunch\nPizza for the cluster team.\n"),
    );
    let old = memory("deploy", "procedural", 5, t0, "# Deploy\nDeploy the cluster with Argo.\n")
        .replace("---\n#", "access: { count: 3, last: 2026-01-10T00:00:00Z }\n---\n#");
    dir.write("deploy.md", old);
}

/// What each machine does: (machine, time, command). Machine 0 is the first clone.
/// A recall ranks with the uses its machine knows of (ranking recency counts from the last
/// use), so each recall here comes after the uses both the clone and the single root know.
const EVENTS: &[(usize, &str, &[&str])] = &[
    (1, "2026-02-03T00:00:00Z", &["recall", "cluster"]),
    (0, "2026-02-05T00:00:00Z", &["used", "argo"]),
    (0, "2026-03-01T00:00:00Z", &["recall", "argo sync"]),
    (1, "2026-04-01T00:00:00Z", &["used", "argo", "deploy"]),
    (0, "2026-05-01T00:00:00Z", &["sync"]),
    (1, "2026-05-01T00:00:00Z", &["sync"]),
];

const NOW: &str = "2026-11-30T00:00:00Z";

#[test]
fn two_clones_merge_usage_without_conflict_and_decay_as_one() {
    let origin = Dir::new();
    git(origin.path(), &["init", "-q"]);
    at(&origin, "2026-01-15T00:00:00Z", &["init", "."]);
    seed(&origin);
    git(origin.path(), &["add", "-A"]);
    git(origin.path(), &["commit", "-qm", "memories"]);
    let clones = [Dir::new(), Dir::new()];
    for c in &clones {
        git(c.path(), &["clone", "-q", origin.path().to_str().unwrap(), "."]);
    }
    // The same root, once, seeing every event.
    let single = Dir::new();
    git(single.path(), &["clone", "-q", origin.path().to_str().unwrap(), "."]);
    for &(machine, now, args) in EVENTS {
        at(&clones[machine], now, args);
        if args != ["sync"] {
            at(&single, now, args);
        }
    }
    at(&single, "2026-05-01T00:00:00Z", &["sync"]);
    assert!(!clones[0].read("deploy.md").contains("access:"), "the access: line moved to usage/");
    for c in &clones {
        git(c.path(), &["add", "-A"]);
        git(c.path(), &["commit", "-qm", "usage"]);
    }
    git(
        clones[1].path(),
        &["pull", "-q", "--no-rebase", clones[0].path().to_str().unwrap(), "HEAD"],
    );
    let merged = &clones[1];
    assert!(git(merged.path(), &["status", "--porcelain"]).trim().is_empty());
    assert_eq!(std::fs::read_dir(merged.path().join("usage")).unwrap().count(), 3);

    let prune = |d: &Dir| at(d, NOW, &["prune", "--dry-run", "--json"]);
    let recall = |d: &Dir| at(d, NOW, &["recall", "--no-record", "--json", "cluster", "argo"]);
    assert_eq!(prune(merged), prune(&single));
    assert_eq!(recall(merged), recall(&single));
    let shown = |d: &Dir, id| at(d, NOW, &["show", "--json", id]);
    assert_eq!(shown(merged, "deploy"), shown(&single, "deploy"));
    let deploy: serde_json::Value = serde_json::from_str(&shown(merged, "deploy")).unwrap();
    assert_eq!(deploy["access_count"], 4, "the old count (3), once, and one use: {deploy}");
    // Lunch was never used in ten months of observation: it faded; the used ones did not.
    let json: serde_json::Value = serde_json::from_str(&prune(merged)).unwrap();
    assert_eq!(ids(&json), ["lunch"]);
    assert_eq!(json[0]["title"], "Lunch");
}
