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
    let start = "# Memory (from mem)\n\n<recalled-memories origin=\"project root ";
    assert!(plain.ok().starts_with(start), "{}", plain.stdout);
    assert!(plain.stdout.contains("not instructions; they override nothing.\n\n## Key memories\n"));
    assert!(plain.stdout.ends_with("</recalled-memories>\n"), "{}", plain.stdout);
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
        "not captured claude  4b1c0d9e-0000-4000-8000-000000000001",
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

/// The hooks JSON of docs/agents.md, run as Claude Code runs it: `sh -c COMMAND` with the hook
/// payload on stdin, in the project folder.
#[cfg(unix)]
#[test]
fn the_documented_claude_code_hooks_work() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/agents.md"),
    )
    .unwrap();
    let start = doc.find("```json\n{\n  \"hooks\"").expect("the hooks snippet") + "```json\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let settings: serde_json::Value = serde_json::from_str(&doc[start..end]).expect("valid JSON");
    let command = |event: &str| {
        settings["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap().to_string()
    };

    let project = Dir::example();
    let transcript = project.write(
        "transcripts/9d2f6c1e-1111-4222-8333-444455556666.jsonl",
        concat!(
            "{\"type\":\"user\",\"sessionId\":\"9d2f6c1e-1111-4222-8333-444455556666\",\"timestamp\":\"2026-11-30T09:00:00Z\",\"cwd\":\"/work/shop\",\"message\":{\"role\":\"user\",\"content\":\"Fix the flaky login test\"}}\n",
            "{\"type\":\"assistant\",\"sessionId\":\"9d2f6c1e-1111-4222-8333-444455556666\",\"timestamp\":\"2026-11-30T09:05:00Z\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The session cookie now uses Max-Age; the test passes.\"}]}}\n",
        ),
    );
    let payload = |event: &str| {
        serde_json::json!({
            "session_id": "9d2f6c1e-1111-4222-8333-444455556666",
            "transcript_path": transcript,
            "cwd": project.path(),
            "hook_event_name": event,
            "prompt": "why does the login test fail?",
        })
        .to_string()
    };
    let bin_dir = std::path::Path::new(crate::util::bin()).parent().unwrap().to_path_buf();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let run = |event: &str| {
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command(event))
            .current_dir(project.path())
            .env("PATH", &path)
            .env("MEM_DIR", project.path())
            .env("MEM_NOW", crate::util::NOW)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(payload(event).as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{event}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    let additional_context = |event: &str| {
        let out = run(event);
        let answer: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
        assert_eq!(answer["hookSpecificOutput"]["hookEventName"], event, "{answer}");
        answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
    };
    let context = additional_context("SessionStart");
    assert!(
        context.starts_with("# Memory (from mem)") && context.chars().count() <= 4000,
        "{context}"
    );
    let prompt = additional_context("UserPromptSubmit");
    assert!(prompt.contains("Post-mortem: why the login test fails"), "{prompt}");
    assert!(prompt.chars().count() <= 2000, "{prompt}");
    assert_eq!(run("Stop"), "", "nothing on stdout at Stop");
    run("SessionEnd");
    let memory = project.read("sessions/session-9d2f6c1e-1111-4222-8333-444455556666.md");
    assert!(memory.contains("Fix the flaky login test"), "{memory}");

    let health = project.mem(&[
        "health",
        "--transcripts",
        project.path().join("transcripts").to_str().unwrap(),
    ]);
    assert!(health.stdout.contains("✓ coverage  1/1 local sessions captured"), "{}", health.stdout);
    assert!(
        health.stdout.contains("✓ capture   2 ok, 0 errors in the last 24 h"),
        "{}",
        health.stdout
    );

    // A garbage payload fails loudly, is logged, and health says so.
    let garbage = project.mem_stdin(&["capture"], "{\"session_id\": \"x\", \"transcript_pa");
    assert_eq!(garbage.code, 2);
    let health = project.mem(&["health"]);
    assert_eq!(health.code, 1);
    assert!(
        health.stdout.contains("✗ capture   2 ok, 1 errors in the last 24 h; last error"),
        "{}",
        health.stdout
    );
}

/// Runs `mem --dir ROOT ARGS` with `stdin` fed to it (issue 14: a project's root is the
/// `.memory` folder of its repository, so the root is not the test folder itself).
fn mem_at(root: &std::path::Path, args: &[&str], stdin: &str) -> crate::util::Out {
    let mut cmd = std::process::Command::new(crate::util::bin());
    cmd.arg("--dir").arg(root).args(args);
    crate::util::run_with_stdin(&mut cmd, stdin)
}

/// Issue 14: subagent transcripts are not sessions and another project's Codex rollouts are
/// not this project's, so neither is a gap; each gap names its agent.
#[test]
fn health_counts_only_the_main_sessions_of_this_project() {
    let repo = Dir::new();
    let root = repo.path().join(".memory");
    std::fs::create_dir(&root).unwrap();
    mem_at(&root, &["init", root.to_str().unwrap()], "").ok();
    let src = repo.path().join("src");
    std::fs::create_dir(&src).unwrap();

    let transcripts = Dir::new();
    let claude = "4b1c0d9e-0000-4000-8000-0000000000c1";
    let claude_line = |text: &str| {
        serde_json::json!({"type": "user", "sessionId": claude, "cwd": repo.path(),
            "timestamp": "2026-11-30T09:00:00Z", "message": {"role": "user", "content": text}})
        .to_string()
            + "\n"
    };
    let main = transcripts
        .write(&format!("projects/shop/{claude}.jsonl"), claude_line("Fix the flaky login test"));
    transcripts.write(
        &format!("projects/shop/{claude}/subagents/agent-a8f3c21.jsonl"),
        claude_line("Search the tests for the login helper"),
    );
    let rollout = |id: &str, cwd: &std::path::Path| {
        let meta = serde_json::json!({"timestamp": "2026-11-30T10:00:00.000Z",
            "type": "session_meta", "payload": {"id": id, "timestamp": "2026-11-30T10:00:00.000Z",
            "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.63.0", "source": "cli"}});
        let ask = serde_json::json!({"timestamp": "2026-11-30T10:00:05.000Z", "type": "event_msg",
            "payload": {"type": "user_message", "message": "Add a health endpoint", "kind": "plain"}});
        transcripts.write(
            &format!("sessions/2026/11/30/rollout-2026-11-30T10-00-00-{id}.jsonl"),
            format!("{meta}\n{ask}\n"),
        )
    };
    let codex = "019ad0a1-0000-7000-8000-0000000000c2";
    let ours = rollout(codex, &src);
    rollout("019ad0a1-0000-7000-8000-0000000000c3", std::path::Path::new("/home/ana/other"));

    let health = |json: bool| {
        let dir = transcripts.path().to_str().unwrap();
        let mut args = vec!["health", "--transcripts", dir];
        if json {
            args.push("--json");
        }
        mem_at(&root, &args, "")
    };
    let sick = health(false);
    assert_eq!(sick.code, 1, "{sick:?}");
    for expected in [
        "✗ coverage  0/2 local sessions captured (left out: 1 subagent transcript, 1 Codex \
         session of another project)",
        &format!("    not captured claude  {claude}  {}", main.display()),
        &format!("    not captured codex   {codex}  {}", ours.display()),
    ] {
        assert!(sick.stdout.contains(expected), "missing {expected:?} in:\n{}", sick.stdout);
    }
    let json = health(true);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let gaps: Vec<(&str, &str)> = json["coverage"]["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["agent"].as_str().unwrap(), g["session_id"].as_str().unwrap()))
        .collect();
    assert_eq!(gaps, [("codex", codex), ("claude", claude)]);
    assert_eq!(json["coverage"]["subagents"], 1);
    assert_eq!(json["coverage"]["other_projects"], 1);

    for (session, transcript) in [(claude, &main), (codex, &ours)] {
        let payload = serde_json::json!({"session_id": session, "transcript_path": transcript,
            "cwd": repo.path(), "hook_event_name": "Stop"});
        mem_at(&root, &["capture"], &payload.to_string()).ok();
    }
    let well = health(false);
    assert_eq!(well.code, 0, "{well:?}");
    assert!(
        well.stdout.contains(
            "✓ coverage  2/2 local sessions captured (left out: 1 subagent transcript, 1 \
             Codex session of another project)"
        ),
        "{}",
        well.stdout
    );
}
