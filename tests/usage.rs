use std::process::{Command, Stdio};

use crate::util::{Dir, bin, ids, memory};

/// `mem` at a given time.
fn at(dir: &Dir, now: &str, args: &[&str]) -> crate::util::Out {
    let mut full = vec!["--now", now];
    full.extend_from_slice(args);
    dir.mem(&full)
}

fn prune_ids(dir: &Dir, now: &str) -> Vec<String> {
    ids(&at(dir, now, &["prune", "--dry-run", "--json"]).json())
}

fn scenario() -> Dir {
    let dir = Dir::new();
    let t0 = "2026-01-01T00:00:00Z";
    dir.observe_since(t0);
    dir.write(
        "kept.md",
        memory("kept", "semantic", 5, t0, "# Deploy with Argo CD\nArgo CD syncs the cluster.\n"),
    );
    dir.write(
        "idle.md",
        memory("idle", "semantic", 5, t0, "# Grafana dashboards\nDashboards live in grafana.\n"),
    );
    dir.write(
        "trivia.md",
        memory("trivia", "episodic", 2, t0, "# Lunch\nThe team had pizza on Friday.\n"),
    );
    dir.write(
        "critical.md",
        memory("critical", "procedural", 9, t0, "# Restore backups\nRun the restore drill.\n"),
    );
    dir
}

#[test]
fn memories_used_stay_untouched_ones_fade() {
    let dir = scenario();
    // Nothing is a candidate while everything is young.
    assert!(prune_ids(&dir, "2026-01-20T00:00:00Z").is_empty());
    at(&dir, "2026-01-10T00:00:00Z", &["used", "kept"]).ok();
    at(&dir, "2026-03-01T00:00:00Z", &["used", "kept"]).ok();
    assert!(!dir.read("kept.md").contains("access:"), "usage goes to usage/, not the file");
    assert!(dir.usage_text().contains("\tkept\n"), "{}", dir.usage_text());

    // An episode of importance 2 starts at 29.6 days of strength: untouched, it fades below
    // 0.05 after about 89 days; a fact of importance 5 (365 days) after about 3 years.
    let june = "2026-06-01T00:00:00Z";
    assert_eq!(prune_ids(&dir, june), ["trivia"]);
    let shown = at(&dir, june, &["show", "kept", "--json"]).json();
    assert_eq!(shown["access_count"], 2);
    assert!(shown["retention"].as_f64().unwrap() > 0.3, "{shown}");
    let later = "2029-03-01T00:00:00Z";
    assert_eq!(prune_ids(&dir, later), ["trivia", "idle"], "least important first");
    let text = at(&dir, later, &["show", "idle"]);
    assert!(text.ok().contains("retention   R = 0.0"), "{}", text.stdout);
    // Importance 9 is never suggested for decay, even years later.
    assert!(!prune_ids(&dir, "2030-01-01T00:00:00Z").contains(&"critical".to_string()));
}

#[test]
fn forgotten_facts_leave_recall_but_not_the_past() {
    let dir = scenario();
    let out = at(&dir, "2026-04-01T00:00:00Z", &["forget", "idle", "--reason", "moved to Datadog"]);
    assert!(out.ok().contains("invalid from 2026-04-01T00:00:00Z"), "{}", out.stdout);
    assert!(dir.read("idle.md").contains(
        "invalid_at: 2026-04-01T00:00:00Z\ninvalid_reason: moved to Datadog\n\
         updated: 2026-04-01T00:00:00Z\n---\n"
    ));
    let later = |extra: &[&str]| {
        let mut args = vec!["recall", "grafana dashboards", "--json", "--no-record"];
        args.extend_from_slice(extra);
        ids(&at(&dir, "2026-05-01T00:00:00Z", &args).json_found())
    };
    assert!(later(&[]).is_empty(), "left out by default");
    assert_eq!(later(&["--as-of", "2026-03-01"]), ["idle"], "valid then");
    assert!(later(&["--as-of", "2025-12-01"]).is_empty(), "not created yet");
    let all =
        at(&dir, "2026-05-01T00:00:00Z", &["recall", "grafana", "--json", "--include-invalid"])
            .json();
    assert_eq!(all[0]["invalid_at"], "2026-04-01T00:00:00Z");
    let table = at(&dir, "2026-05-01T00:00:00Z", &["recall", "grafana", "--include-invalid"]);
    assert!(table.ok().contains("[invalid since 2026-04-01]"), "{}", table.stdout);
    let again = at(&dir, "2026-05-01T00:00:00Z", &["forget", "idle"]);
    assert_eq!(again.code, 2);
    assert!(
        again.stderr.contains("already invalid since 2026-04-01T00:00:00Z"),
        "{}",
        again.stderr
    );

    at(&dir, "2026-04-02T00:00:00Z", &["supersede", "kept", "--by", "critical"]).ok();
    assert!(dir.read("kept.md").contains("superseded_by: critical\n"));
    let plan = at(&dir, "2026-04-03T00:00:00Z", &["prune", "--dry-run", "--json"]).json();
    let reasons: Vec<String> = plan
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["reasons"][0]["kind"].as_str().unwrap().to_string())
        .collect();
    let mut first = ids(&plan)[..2].to_vec();
    first.sort();
    assert_eq!(first, ["idle", "kept"], "invalid first: {plan}");
    assert_eq!(reasons[..2], ["invalid", "invalid"]);
    assert_eq!(at(&dir, "2026-04-03T00:00:00Z", &["supersede", "trivia", "--by", "nope"]).code, 2);
}

#[test]
fn prune_archives_and_restore_returns_the_file_identical() {
    let dir = scenario();
    // A hand-written file with comments and odd spacing must come back byte for byte.
    let original = "---\n# written by hand\nid: trivia\ntype:   episodic\nimportance: 2\ncreated: 2026-01-01T00:00:00Z\n---\n# Lunch\nThe team had pizza on Friday.\n";
    dir.write("notes/trivia.md", original);
    std::fs::remove_file(dir.path().join("trivia.md")).unwrap();
    let june = "2026-06-01T00:00:00Z";
    let out = at(&dir, june, &["prune"]);
    assert!(out.ok().contains("archived\ttrivia\tarchive/notes/trivia.md"), "{}", out.stdout);
    assert!(!dir.path().join("notes/trivia.md").exists());
    let archived = dir.read("archive/notes/trivia.md");
    assert!(archived.starts_with(&original[..original.find("---\n#").unwrap()]), "{archived}");
    assert!(
        archived.contains("archived_at: 2026-06-01T00:00:00Z\narchived_reason: "),
        "{archived}"
    );
    let out = at(&dir, june, &["recall", "pizza", "--json"]);
    assert_eq!((out.code, out.stdout.trim()), (1, "[]"), "archived memories are not recalled");
    assert!(out.stderr.contains("nothing matches \"pizza\""), "{}", out.stderr);

    at(&dir, june, &["restore", "trivia"]).ok();
    assert_eq!(dir.read("notes/trivia.md"), original);
    assert!(!dir.path().join("archive/notes/trivia.md").exists());
    assert_eq!(ids(&at(&dir, june, &["recall", "pizza", "--json"]).json()), ["trivia"]);
    assert_eq!(at(&dir, june, &["restore", "trivia"]).code, 2, "nothing left to restore");
}

#[test]
fn after_sync_a_rebuilt_state_ranks_and_prunes_the_same() {
    let dir = Dir::example();
    let now = "2026-11-30T12:00:00Z";
    for query in ["why does the login test fail", "deploy checklist", "redis sessions"] {
        at(&dir, now, &["recall", query]).ok();
    }
    let some = ids(&at(&dir, now, &["list", "--json", "-n", "3"]).json());
    let mut used = vec!["used"];
    used.extend(some.iter().map(String::as_str));
    at(
        &dir,
        now,
        &["used", "--no-sync"]
            .iter()
            .chain(some.iter().map(|s| s.as_str()).collect::<Vec<_>>().iter())
            .copied()
            .collect::<Vec<_>>(),
    )
    .ok();
    let synced = at(&dir, now, &["sync", "--json"]).json();
    assert!(synced["files"].as_u64().unwrap() >= 3, "{synced}");
    let later = "2027-06-01T00:00:00Z";
    let query = ["recall", "why does the login test fail", "--json", "--no-record"];
    let before = at(&dir, later, &query).json();
    let plan_before = prune_ids(&dir, later);
    std::fs::remove_dir_all(dir.path().join(".mem")).unwrap();
    assert_eq!(at(&dir, later, &query).json(), before);
    assert_eq!(prune_ids(&dir, later), plan_before);
    assert!(!plan_before.is_empty());
}

/// Issue 37, item 24: `mem init` on the wall clock wrote `since` after events recorded with an
/// earlier `--now`; the usage log's first event counted as the start before a rebuild, the
/// file's later `since` after it, so prune proposed one memory before and none after.
#[test]
fn observation_starts_at_the_earlier_of_since_and_the_first_event() {
    let dir = Dir::new();
    let t0 = "2026-01-01T00:00:00Z";
    dir.write("kept.md", memory("kept", "semantic", 5, t0, "# Argo CD\nArgo CD syncs.\n"));
    dir.write("trivia.md", memory("trivia", "episodic", 2, t0, "# Lunch\nPizza on Friday.\n"));
    at(&dir, "2026-01-10T00:00:00Z", &["used", "kept", "--no-sync"]).ok();
    at(&dir, "2026-11-30T12:00:00Z", &["init", "."]).ok();
    at(&dir, "2026-11-30T12:00:00Z", &["sync"]).ok();
    let later = "2026-12-15T00:00:00Z";
    let before = prune_ids(&dir, later);
    assert_eq!(before, ["trivia"], "observed since the first use, in January");
    std::fs::remove_dir_all(dir.path().join(".mem")).unwrap();
    assert_eq!(prune_ids(&dir, later), before, "the same once `.mem/` is rebuilt");
}

#[test]
fn concurrent_recalls_lose_no_events() {
    let dir = Dir::new();
    dir.write(
        "only.md",
        memory("only", "semantic", 5, "2026-01-01T00:00:00Z", "the single answer\n"),
    );
    let root = dir.path().to_str().unwrap().to_string();
    let children: Vec<_> = (0..12)
        .map(|_| {
            let mut cmd = Command::new(bin());
            crate::util::clean_env(&mut cmd);
            cmd.args(["--dir", &root, "recall", "answer"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let shown = dir.mem(&["show", "only", "--json"]).json();
    assert_eq!(shown["retrieved"], 12);
}

#[test]
fn an_interrupted_sync_leaves_whole_files_and_the_next_one_finishes() {
    use mem::usage::shared;
    let dir = Dir::new();
    let n = 300;
    let mut all = Vec::new();
    for i in 0..n {
        let id = format!("m{i:03}");
        let text = memory(&id, "semantic", 5, "2026-01-01T00:00:00Z", &format!("note {i}\n"))
            .replacen(
                "---\nnote",
                "access: { count: 3, last: 2026-02-01T00:00:00Z }\n---\nnote",
                1,
            );
        dir.write(&format!("{id}.md"), text);
        all.push(id);
    }
    let originals: Vec<String> = all.iter().map(|id| dir.read(&format!("{id}.md"))).collect();
    let mut args = vec!["used", "--no-sync"];
    args.extend(all.iter().map(String::as_str));
    dir.mem(&args).ok();

    // Killed while it appends the events and moves the access: lines.
    let mut cmd = Command::new(bin());
    crate::util::clean_env(&mut cmd);
    let mut child = cmd
        .args(["--dir", dir.path().to_str().unwrap(), "sync"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(150));
    let _ = child.kill();
    child.wait().unwrap();
    for (id, original) in all.iter().zip(&originals) {
        let text = dir.read(&format!("{id}.md"));
        let moved = original.replace("access: { count: 3, last: 2026-02-01T00:00:00Z }\n", "");
        assert!(text == *original || text == moved, "{id} is neither old nor new:\n{text}");
    }
    let usage = shared::load(dir.path()).unwrap();
    assert!(usage.problems.is_empty(), "{:?}", usage.problems);

    // The next sync finishes: every event written once, every access: line moved, counted once.
    let report = dir.mem(&["sync", "--json"]).json();
    let usage = shared::load(dir.path()).unwrap();
    assert!(usage.problems.is_empty(), "{:?}", usage.problems);
    for id in &all {
        assert!(!dir.read(&format!("{id}.md")).contains("access:"), "{id}: {report}");
        assert_eq!(usage.bases[id].count, 3, "{id}");
        assert_eq!(usage.events[id].len(), 1, "{id}: one use, written once");
    }
    assert_eq!(dir.mem(&["show", "m007", "--json"]).json()["access_count"], 4);
    let again = dir.mem(&["sync", "--json"]).json();
    assert_eq!((again["files"].as_u64(), again["events"].as_u64()), (Some(0), Some(0)), "{again}");

    // A power cut in the middle of an append leaves half a line: it is not read, and the next
    // sync writes the lines again, whole, so the file ends as an uninterrupted sync leaves it.
    dir.mem(&["used", "--no-sync", "m000", "m001"]).ok();
    let file = std::fs::read_dir(dir.path().join(shared::DIR)).unwrap().next().unwrap().unwrap();
    let before = std::fs::read_to_string(file.path()).unwrap();
    dir.mem(&["sync"]).ok();
    let whole = std::fs::read_to_string(file.path()).unwrap();
    let cut = whole.len() - 5;
    assert!(cut > before.len());
    assert!(!whole[..cut].ends_with('\n'));
    std::fs::write(file.path(), &whole[..cut]).unwrap();
    let usage = shared::load(dir.path()).unwrap();
    assert!(usage.problems.is_empty(), "{:?}", usage.problems);
    assert_eq!(usage.events["m000"].len() + usage.events["m001"].len(), 3, "the torn line unread");
    let report = dir.mem(&["sync", "--json"]).json();
    assert_eq!(report["events"], 1, "{report}");
    assert_eq!(std::fs::read_to_string(file.path()).unwrap(), whole);
    assert_eq!(dir.mem(&["show", "m001", "--json"]).json()["access_count"], 5);
}

#[test]
fn usage_database_problems_are_loud() {
    let dir = scenario();
    let unknown = dir.mem(&["used", "kept", "nope"]);
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("no memory with id \"nope\""), "{}", unknown.stderr);
    assert_eq!(dir.mem(&["show", "kept", "--json"]).json()["access_count"], 0, "nothing recorded");

    // Locked: another process holds the write lock longer than the configured wait.
    dir.write("mem.toml", "[usage]\nbusy_timeout_ms = 200\n");
    dir.mem(&["used", "kept"]).ok();
    let conn = rusqlite::Connection::open(dir.path().join(".mem/usage.db")).unwrap();
    conn.execute_batch(
        "BEGIN IMMEDIATE; INSERT INTO events (memory_id, kind, at) VALUES ('x', 'used', 0);",
    )
    .unwrap();
    let locked = dir.mem(&["used", "kept"]);
    assert_eq!(locked.code, 2);
    assert!(locked.stderr.contains("is locked by another process"), "{}", locked.stderr);
    let recall = dir.mem(&["recall", "argo"]);
    assert_eq!(recall.code, 0, "recall still answers");
    assert!(recall.stderr.contains("usage not recorded"), "{}", recall.stderr);
    conn.execute_batch("ROLLBACK;").unwrap();
    drop(conn);

    // Damaged: a clear error with the fix, and the file left for the user.
    std::fs::remove_file(dir.path().join(".mem/usage.db-wal")).ok();
    std::fs::remove_file(dir.path().join(".mem/usage.db-shm")).ok();
    std::fs::write(dir.path().join(".mem/usage.db"), vec![0x42u8; 8192]).unwrap();
    let broken = dir.mem(&["used", "kept"]);
    assert_eq!(broken.code, 2);
    assert!(
        broken.stderr.contains("is damaged") && broken.stderr.contains("move it aside"),
        "{}",
        broken.stderr
    );
    assert!(dir.path().join(".mem/usage.db").exists(), "never deleted silently");
}

#[test]
fn a_dry_run_and_show_write_no_usage() {
    let dir = scenario();
    let machine = |dir: &Dir| -> i64 {
        let db = rusqlite::Connection::open(dir.path().join(".mem/usage.db")).unwrap();
        db.query_row("SELECT count(*) FROM meta", [], |r| r.get(0)).unwrap()
    };
    at(&dir, "2026-01-05T00:00:00Z", &["prune", "--dry-run"]).ok();
    assert!(!dir.path().join(".mem/usage.db").exists(), "nothing recorded, nothing created");
    at(&dir, "2026-01-05T00:00:00Z", &["used", "--no-sync", "kept"]).ok();
    at(&dir, "2026-01-06T00:00:00Z", &["prune", "--dry-run"]).ok();
    at(&dir, "2026-01-06T00:00:00Z", &["show", "kept"]).ok();
    assert_eq!(machine(&dir), 0, "no machine name chosen by a look");
    let before = dir.usage_text();
    assert_eq!(
        at(&dir, "2026-01-06T00:00:00Z", &["sync"]).ok(),
        format!(
            "wrote 1 usage event to {}\n",
            std::fs::read_dir(dir.path().join("usage"))
                .unwrap()
                .flatten()
                .map(|e| format!("usage/{}", e.file_name().to_string_lossy()))
                .find(|name| name != "usage/test.tsv")
                .unwrap()
        )
    );
    assert_eq!(machine(&dir), 1);
    assert!(dir.usage_text().len() > before.len());
    assert_eq!(at(&dir, "2026-01-07T00:00:00Z", &["sync"]).ok(), "no new usage to write\n");
}
