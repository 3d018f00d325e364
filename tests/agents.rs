use crate::util::Dir;

#[test]
fn context_fits_the_budget_and_puts_the_task_first() {
    let dir = Dir::example();
    let full =
        dir.mem(&["context", "--task", "why does the login test fail", "--budget", "100000"]);
    let text = full.ok();
    let task = text.find("## For the task: why does the login test fail").expect("task section");
    let key = text.find("## Key memories").expect("key section");
    assert!(task < key, "{text}");
    assert!(text.contains("Post-mortem: why the login test fails"), "{text}");
    assert!(!text.contains("left out"), "{text}");
    for budget in ["300", "1000", "2500"] {
        let out =
            dir.mem(&["context", "--task", "why does the login test fail", "--budget", budget]);
        let text = out.ok();
        assert!(
            text.chars().count() <= budget.parse().unwrap(),
            "{budget}: {}",
            text.chars().count()
        );
        assert!(
            text.contains(&format!("more memories left out to fit {budget} characters")),
            "{text}"
        );
        for line in text.lines().filter(|l| l.starts_with("- **")) {
            assert!(full.stdout.contains(line), "only whole entries: {line}");
        }
    }
    let plain = dir.mem(&["context"]);
    assert!(plain.ok().starts_with("# Memory (from mem)\n\n## Key memories\n"), "{}", plain.stdout);
    assert!(!plain.stdout.contains("episodic"), "key memories are procedural and semantic");
}

#[test]
fn health_is_green_on_a_clean_root_and_finds_each_problem() {
    let dir = Dir::example();
    dir.mem(&["index"]).ok();
    dir.mem(&["recall", "deploy"]).ok();
    let clean = dir.mem(&["health"]);
    assert_eq!(clean.code, 0, "{clean:?}");
    assert!(
        clean.stdout.starts_with("✓ index     60 files, 60 indexed, all current\n"),
        "{}",
        clean.stdout
    );
    assert!(
        clean.stdout.contains("✓ usage     usage.db consistent (20 events)"),
        "{}",
        clean.stdout
    );

    // Behind the index's back: a new file, an edit, a deletion, a broken file.
    dir.write(
        "added.md",
        crate::util::memory("added", "semantic", 5, "2026-01-01T00:00:00Z", "added later\n"),
    );
    let edited = "decisions/01HPEH9GP0MF3G7AHRJZYF9HNP.md";
    dir.write(edited, dir.read(edited) + "\nOne more line.\n");
    std::fs::remove_file(dir.path().join("preferences/01J2906H1G2RDWKKJXVGN5461Y.md")).unwrap();
    dir.write("broken.md", "---\nid: broken\n");
    // A failed capture in the last 24 hours, and a transcript nobody captured.
    dir.write(".mem/capture.log", "{\"at\":\"2026-11-30T11:00:00Z\",\"status\":\"error\",\"session_id\":null,\"error\":\"payload is not JSON\"}\n");
    let transcripts = Dir::new();
    transcripts.write("proj/4b1c0d9e-0000-4000-8000-000000000001.jsonl", "{}\n");

    let sick = dir.mem(&["health", "--transcripts", transcripts.path().to_str().unwrap()]);
    assert_eq!(sick.code, 1, "{sick:?}");
    let out = &sick.stdout;
    for expected in [
        "✗ index     1 missing, 1 stale, 1 orphaned",
        "    missing   added.md",
        &format!("    stale     {edited}"),
        "    orphaned  preferences/01J2906H1G2RDWKKJXVGN5461Y.md",
        "✗ files     1 files fail to parse",
        "broken.md:1: front-matter opened on line 1 is never closed",
        "✗ capture   0 ok, 1 errors in the last 24 h; last error 2026-11-30T11:00:00Z: payload is not JSON",
        "✗ coverage  0/1 local sessions captured",
        "not captured 4b1c0d9e-0000-4000-8000-000000000001",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
    let json = dir.mem(&["health", "--json"]);
    assert_eq!(json.code, 1);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(json["ok"], false);
    assert_eq!(json["index"]["missing"], serde_json::json!(["added.md"]));

    // `mem index` repairs what it can; the broken file and the failed capture stay reported.
    dir.mem(&["index"]);
    let after = dir.mem(&["health"]);
    assert!(after.stdout.contains("✓ index"), "{}", after.stdout);
    assert_eq!(after.code, 1);
}

#[test]
fn health_reports_a_damaged_usage_log() {
    let dir = Dir::new();
    dir.write("a.md", crate::util::memory("a", "semantic", 5, "2026-01-01T00:00:00Z", "alpha\n"));
    dir.mem(&["recall", "alpha"]).ok();
    std::fs::remove_file(dir.path().join(".mem/usage.db-wal")).ok();
    std::fs::remove_file(dir.path().join(".mem/usage.db-shm")).ok();
    std::fs::write(dir.path().join(".mem/usage.db"), vec![7u8; 4096]).unwrap();
    let out = dir.mem(&["health"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("✗ usage     usage database"), "{}", out.stdout);
    assert!(out.stdout.contains("is damaged"), "{}", out.stdout);
}
