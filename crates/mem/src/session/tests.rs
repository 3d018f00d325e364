use std::io::Write;
use std::time::Duration;

use super::*;
use crate::agent::Agent;
use crate::capture::tests::{CLAUDE, CODEX};

fn log_in(dir: &Path) -> SessionLog {
    SessionLog::open(&dir.join(FILE), Duration::from_secs(1)).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

fn kinds(events: &[LoggedEvent]) -> Vec<(i64, &'static str)> {
    events.iter().map(|e| (e.turn, e.kind.as_str())).collect()
}

#[test]
fn a_claude_transcript_becomes_events_with_turns() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("s1.jsonl");
    write(&transcript, &(CLAUDE.join("\n") + "\n"));
    let mut log = log_in(dir.path());
    let imported = log.import(&transcript, "s1", Some("session-s1")).unwrap();
    assert_eq!((imported.lines, imported.skipped, imported.pending_bytes), (9, 0, 0));
    let events = log.events("s1", None).unwrap();
    assert_eq!(
        kinds(&events),
        [
            (0, "meta"),      // the summary line
            (0, "meta"),      // cwd
            (1, "prompt"),    // Fix the failing login test
            (1, "assistant"), // Looking.
            (1, "tool_call"),
            (1, "tool_call"),
            (1, "tool_call"),
            (1, "tool_result"),
            (2, "prompt"), // /review auth
            (2, "assistant"),
        ]
    );
    assert_eq!(events[2].text, "Fix the failing login test");
    assert_eq!(events[4].command.as_deref(), Some("cargo test login"));
    assert_eq!(events[5].files, ["src/auth.rs"], "relative to the session's cwd");
    assert_eq!((events[7].call_id.as_deref(), events[7].status), (Some("t1"), Some(0)));
    assert_eq!(events[8].text, "/review auth");
    let session = log.session("s1").unwrap();
    assert_eq!((session.agent, session.turns, session.events), (Some(Agent::Claude), 2, 10));
    assert_eq!(session.project.as_deref(), Some("/home/ana/shop"));
    assert_eq!(session.first_prompt.as_deref(), Some("Fix the failing login test"));
    assert_eq!(session.memory.as_deref(), Some("session-s1"));
    assert_eq!(session.started_at, Some("2026-11-29T10:00:00Z".parse().unwrap()));
    // Again: nothing new, nothing appended.
    assert_eq!(log.import(&transcript, "s1", None).unwrap().events, 0);
    assert_eq!(log.events("s1", None).unwrap().len(), 10);
}

#[test]
fn importing_piece_by_piece_gives_what_one_import_gives() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole.jsonl");
    let text = CLAUDE.join("\n") + "\n";
    write(&whole, &text);
    let mut log = log_in(dir.path());
    log.import(&whole, "a", None).unwrap();

    // The same transcript as it is written: imported after every 97 bytes, mid-line included.
    let growing = dir.path().join("growing.jsonl");
    write(&growing, "");
    let mut appended = 0;
    for end in (0..=text.len()).step_by(97).chain([text.len()]) {
        let mut file = std::fs::OpenOptions::new().append(true).open(&growing).unwrap();
        file.write_all(&text.as_bytes()[appended..end]).unwrap();
        appended = end;
        let imported = log.import(&growing, "b", None).unwrap();
        let partial = !text[..end].ends_with('\n') && end > 0;
        assert_eq!(imported.pending_bytes > 0, partial, "at byte {end}");
    }
    let strip = |events: Vec<LoggedEvent>| -> Vec<_> {
        events.into_iter().map(|e| (e.turn, e.kind, e.command, e.files, e.status, e.text)).collect()
    };
    assert_eq!(strip(log.events("a", None).unwrap()), strip(log.events("b", None).unwrap()));
    assert_eq!(log.session("b").unwrap().turns, 2);
}

#[test]
fn a_last_line_without_its_line_break_waits() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    // The last line is whole JSON but has no line break yet: it may still be written.
    write(&transcript, &format!("{}\n{}", CLAUDE[1], CLAUDE[8]));
    let mut log = log_in(dir.path());
    let first = log.import(&transcript, "s1", None).unwrap();
    assert_eq!((first.lines, first.pending_bytes), (1, CLAUDE[8].len() as u64));
    assert_eq!(log.events("s1", None).unwrap().len(), 2, "meta and the prompt");
    std::fs::OpenOptions::new().append(true).open(&transcript).unwrap().write_all(b"\n").unwrap();
    let second = log.import(&transcript, "s1", None).unwrap();
    assert_eq!((second.lines, second.events, second.pending_bytes), (1, 1, 0));
}

#[test]
fn a_line_cut_by_a_raw_line_break_is_joined_and_a_bad_one_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let split = CLAUDE[1].replace("failing login", "failing\nlogin");
    write(&transcript, &format!("{split}\nnot json at all\n{}\n", CLAUDE[8]));
    let mut log = log_in(dir.path());
    let imported = log.import(&transcript, "s1", None).unwrap();
    assert_eq!((imported.lines, imported.skipped), (3, 1));
    let events = log.events("s1", None).unwrap();
    assert_eq!(events[1].text, "Fix the failing\nlogin test");
    assert_eq!(log.health().unwrap().skipped_lines, 1);
}

#[test]
fn a_codex_rollout_becomes_events() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("rollout.jsonl");
    let mut lines: Vec<&str> = CODEX.to_vec();
    let failed = r#"{"timestamp":"2025-10-29T01:00:02.500Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_4","output":"Exit code: 128\nWall time: 0.1 seconds\nOutput:\nfatal: not a git repository"}}"#;
    lines.insert(10, failed);
    write(&transcript, &(lines.join("\n") + "\n"));
    let mut log = log_in(dir.path());
    log.import(&transcript, "019a", None).unwrap();
    let events = log.events("019a", None).unwrap();
    let prompts: Vec<&str> =
        events.iter().filter(|e| e.kind == Kind::Prompt).map(|e| e.text.as_str()).collect();
    assert_eq!(prompts, ["create hello.txt and list the files"], "context is not a prompt");
    let commands: Vec<(&str, Option<i64>)> = events
        .iter()
        .filter(|e| e.kind == Kind::ToolCall)
        .map(|e| {
            let result =
                events.iter().find(|r| r.kind == Kind::ToolResult && r.call_id == e.call_id);
            (
                e.command.as_deref().unwrap_or(e.tool.as_deref().unwrap()),
                result.and_then(|r| r.status),
            )
        })
        .collect();
    assert_eq!(
        commands,
        [("ls -la", None), ("apply_patch", None), ("apply_patch", None), ("git status", Some(128))]
    );
    let files: Vec<&String> = events.iter().flat_map(|e| &e.files).collect();
    assert_eq!(files, ["hello.txt", "src/main.rs"]);
    let session = log.session("019a").unwrap();
    assert_eq!(
        (session.agent, session.model.as_deref()),
        (Some(Agent::Codex), Some("gpt-5-codex"))
    );
    let meta: Vec<&str> =
        events.iter().filter(|e| e.kind == Kind::Meta).map(|e| e.text.as_str()).collect();
    assert_eq!(meta, ["cwd /tmp/demo", "model gpt-5-codex"]);
}

#[test]
fn secrets_never_reach_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let key = format!("sk-{}", "a1".repeat(20));
    let line =
        CLAUDE[1].replace("Fix the failing login test", &format!("use the key {key} please"));
    write(&transcript, &format!("{line}\n"));
    let mut log = log_in(dir.path());
    assert_eq!(log.import(&transcript, "s1", None).unwrap().redacted, 1);
    let events = log.events("s1", None).unwrap();
    assert!(events.iter().all(|e| !e.text.contains(&key)));
    assert!(log.search("key please", None, 5).unwrap()[0].snippet.contains("[REDACTED:"));
}

/// Defect 15 of the second probe: a quoted assignment inside an MCP tool's JSON input kept
/// its value in the log (`DB_PASSWORD=[REDACTED:password]"QuotedPw123\"`).
#[test]
fn secrets_in_a_tool_calls_json_input_never_reach_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let call = serde_json::json!({
        "type": "assistant", "sessionId": "s1", "timestamp": "2026-11-30T10:00:00Z",
        "message": {"role": "assistant", "content": [{
            "type": "tool_use", "id": "t1", "name": "mcp__db__query",
            "input": {"sql": "select 1", "env": "DB_PASSWORD=\"QuotedPw123\" PGPASSWORD=PgPw9"},
        }]},
    });
    write(&transcript, &format!("{}\n{call}\n", CLAUDE[1]));
    let mut log = log_in(dir.path());
    assert_eq!(log.import(&transcript, "s1", None).unwrap().redacted, 2);
    let events = log.events("s1", None).unwrap();
    let call = events.iter().find(|e| e.kind == Kind::ToolCall).expect("the call is logged");
    assert!(call.text.contains("DB_PASSWORD=\\\"[REDACTED:password]\\\""), "{}", call.text);
    assert!(!call.text.contains("QuotedPw123") && !call.text.contains("PgPw9"), "{}", call.text);
    assert!(log.search("QuotedPw123", None, 5).unwrap().is_empty());
}

#[test]
fn search_finds_events_with_snippets() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = log_in(dir.path());
    let claude = dir.path().join("c.jsonl");
    write(&claude, &(CLAUDE.join("\n") + "\n"));
    log.import(&claude, "s1", None).unwrap();
    let codex = dir.path().join("x.jsonl");
    write(&codex, &(CODEX.join("\n") + "\n"));
    log.import(&codex, "x1", None).unwrap();

    let hits = log.search("cookie expired", None, 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].session.as_str(), hits[0].turn, hits[0].kind), ("s1", 2, Kind::Assistant));
    assert!(hits[0].snippet.contains("[cookie] had [expired]"), "{}", hits[0].snippet);
    // Stems match; every word must be there, else any.
    assert_eq!(log.search("creating files", None, 10).unwrap()[0].session, "x1");
    let any = log.search("cookie hello", None, 10).unwrap();
    assert!(any.iter().any(|h| h.session == "s1") && any.iter().any(|h| h.session == "x1"));
    // Limited to a project; punctuation is not query syntax.
    assert!(log.search("cookie", Some("/tmp/demo"), 10).unwrap().is_empty());
    assert_eq!(log.search("cookie\" OR (", Some("/home/ana"), 10).unwrap().len(), 1);
    assert!(log.search("  ", None, 10).unwrap().is_empty());
}

#[test]
fn checkpoints_are_recorded_per_turn_and_sessions_listed_by_recency() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = log_in(dir.path());
    let claude = dir.path().join("c.jsonl");
    write(&claude, &(CLAUDE.join("\n") + "\n"));
    log.import(&claude, "s1", None).unwrap();
    let at: Timestamp = "2026-11-30T09:00:00Z".parse().unwrap();
    log.record_checkpoint("s1", 3, "7", Path::new("/repo"), at).unwrap();
    log.record_checkpoint("new", 1, "8", Path::new("/repo"), at).unwrap();
    let events = log.events("s1", None).unwrap();
    let last = events.last().unwrap();
    assert_eq!(
        (last.kind, last.turn, last.checkpoint.as_deref()),
        (Kind::Checkpoint, 3, Some("7"))
    );
    assert_eq!(log.events("s1", Some(1)).unwrap().len(), 8, "up to turn 1");
    let ids: Vec<String> = log.list(None, 10).unwrap().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, ["new", "s1"]);
    assert_eq!(log.list(Some("/home/ana"), 10).unwrap().len(), 1);
    assert_eq!(log.list(Some("/home/an"), 10).unwrap().len(), 0, "a folder, not a prefix");
    assert_eq!(log.session("ne").unwrap().id, "new", "a unique start of an id");
    assert!(log.session("zz").unwrap_err().to_string().contains("mem session list"));
    let health = log.health().unwrap();
    assert_eq!((health.sessions, health.transcripts, health.problem), (2, 1, None));
}

#[test]
fn resume_says_goal_files_commands_problems_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = log_in(dir.path());
    let transcript = dir.path().join("c.jsonl");
    let failing = CLAUDE[4].replace(
        r#""content":"ok""#,
        r#""content":"Exit code 101\nerror: 1 test failed","is_error":true"#,
    );
    let mut lines: Vec<&str> = CLAUDE[..8].to_vec();
    lines[4] = &failing;
    write(&transcript, &(lines.join("\n") + "\n"));
    log.import(&transcript, "s1", Some("session-s1")).unwrap();
    log.record_checkpoint("s1", 2, "4", Path::new("/repo"), Timestamp::UNIX_EPOCH).unwrap();
    let session = log.session("s1").unwrap();
    let events = log.events("s1", None).unwrap();
    let text = resume::render(&session, &events, 4000);
    for part in [
        "# Resume session s1\n",
        "Claude Code session in `/home/ana/shop`",
        "Full log: `mem session show s1`; digest: memory `session-s1`",
        "## Goal\n\nFix the failing login test\n",
        "- turn 2 (before it: checkpoint 4): /review auth\n",
        "## Files touched\n\n- `src/auth.rs`\n",
        "- turn 1: `cargo test login` → failed (exit 101)\n",
        "- `cargo test login` failed (exit 101) at turn 1, not run successfully since\n",
        "- turn 2 has no answer in the log (interrupted?)\n",
        "## Last answer (turn 1)\n\nLooking.\n",
    ] {
        assert!(text.contains(part), "{part:?} not in\n{text}");
    }
    for budget in [200, 400, 800] {
        let short = resume::render(&session, &events, budget);
        assert!(short.chars().count() <= budget, "{budget}: {short}");
        assert!(short.starts_with("# Resume session s1"));
    }
    // Up to turn 1: the conversation as it was then.
    let then = resume::render(&session, &log.events("s1", Some(1)).unwrap(), 4000);
    assert!(!then.contains("/review") && !then.contains("no answer"), "{then}");
}

#[test]
fn the_agents_last_plan_is_the_active_goal() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = log_in(dir.path());
    let claude = dir.path().join("c.jsonl");
    let todo = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-29T10:00:07Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"t9","name":"TodoWrite","input":{"todos":[{"content":"Find the failing test","status":"completed","activeForm":"Finding"},{"content":"Fix the cookie expiry","status":"in_progress","activeForm":"Fixing"},{"content":"Run the suite","status":"pending","activeForm":"Running"}]}}]}}"#;
    write(&claude, &format!("{}\n{todo}\n", CLAUDE[1]));
    log.import(&claude, "s1", None).unwrap();
    let codex = dir.path().join("x.jsonl");
    let plan = r#"{"timestamp":"2025-10-29T01:00:00.000Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[{\"step\":\"Write hello.txt\",\"status\":\"completed\"},{\"step\":\"List the files\",\"status\":\"in_progress\"}]}","call_id":"p1"}}"#;
    write(&codex, &format!("{}\n{}\n{plan}\n", CODEX[0], CODEX[2]));
    log.import(&codex, "x1", None).unwrap();

    let render =
        |id: &str| resume::render(&log.session(id).unwrap(), &log.events(id, None).unwrap(), 4000);
    let text = render("s1");
    assert!(
        text.contains(
            "## Plan (turn 1)\n\n- [x] Find the failing test\n- [>] Fix the cookie expiry\n- [ ] Run the suite\n"
        ),
        "{text}"
    );
    let text = render("x1");
    assert!(
        text.contains("## Plan (turn 1)\n\n- [x] Write hello.txt\n- [>] List the files\n"),
        "{text}"
    );
}

#[test]
fn a_word_in_too_many_events_is_ranked_among_its_most_recent_matches() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = log_in(dir.path());
    let prompt = |text: &str| CLAUDE[1].replace("Fix the failing login test", text);
    let dense = prompt("alpha alpha alpha alpha");
    let thin = prompt("alpha and many other words that make it a weaker match for the query");
    let best_of = |log: &SessionLog| log.search("alpha", None, 1).unwrap()[0].seq;
    // Few matches: the densest, oldest one ranks first.
    let few = dir.path().join("few.jsonl");
    write(&few, &format!("{dense}\n{}", format!("{thin}\n").repeat(100)));
    log.import(&few, "few", None).unwrap();
    let first =
        log.events("few", None).unwrap().iter().find(|e| e.kind == Kind::Prompt).unwrap().seq;
    assert_eq!(best_of(&log), first);
    // More than RANKED_MATCHES: only the most recent ones are ranked.
    let many = dir.path().join("many.jsonl");
    write(&many, &format!("{thin}\n").repeat(RANKED_MATCHES));
    log.import(&many, "many", None).unwrap();
    assert_ne!(best_of(&log), first);
    assert_eq!(log.search("alpha", None, 1).unwrap()[0].session, "many");
}

#[test]
fn a_line_cut_short_by_a_killed_writer_does_not_take_the_next_one_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let cut = &CLAUDE[1][..CLAUDE[1].len() / 2];
    write(&transcript, &format!("{cut}\n{}\n", CLAUDE[8]));
    let mut log = log_in(dir.path());
    let imported = log.import(&transcript, "s1", None).unwrap();
    assert_eq!((imported.skipped, imported.events), (1, 1), "the answer is logged");
    assert_eq!(log.events("s1", None).unwrap()[0].kind, Kind::Assistant);
}

/// Defect 14 of the second probe: a word repeated 8,000 times made one search take minutes.
/// Words are searched once each, at most `MAX_SEARCH_TERMS` of them, each cut.
#[test]
fn a_search_looks_for_each_word_once_and_at_most_sixteen() {
    assert_eq!(search_terms(&"login ".repeat(8000)), ["login"]);
    assert_eq!(search_terms("Login LOGIN login fails"), ["Login", "fails"]);
    let many: String = (0..100).map(|i| format!("w{i} ")).collect();
    let terms = search_terms(&many);
    assert_eq!(terms.len(), MAX_SEARCH_TERMS);
    assert_eq!(terms[15], "w15");
    assert_eq!(search_terms(&"x".repeat(10_000))[0].chars().count(), MAX_TERM_CHARS);
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    write(&transcript, &format!("{}\n", CLAUDE[1]));
    let mut log = log_in(dir.path());
    log.import(&transcript, "s1", None).unwrap();
    let query = format!("{} {}", "failing ".repeat(8000), "login ".repeat(8000));
    assert_eq!(log.search(&query, None, 5).unwrap().len(), 1);
}

/// Defect 16 of the second probe (one item): a transcript path reused by another session was
/// read from the offset the first session had reached (its first turns missing, turns
/// misnumbered). Another session's import of that path starts at the beginning.
#[test]
fn a_transcript_path_reused_by_another_session_is_read_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    write(&transcript, &(CLAUDE[..4].join("\n") + "\n"));
    let mut log = log_in(dir.path());
    log.import(&transcript, "s1", None).unwrap();
    write(&transcript, &(CLAUDE.join("\n") + "\n"));
    log.import(&transcript, "s2", None).unwrap();
    let events = log.events("s2", None).unwrap();
    assert_eq!(events.iter().filter(|e| e.kind == Kind::Prompt).count(), 2);
    assert_eq!(events.iter().find(|e| e.kind == Kind::Prompt).unwrap().turn, 1);
    assert_eq!(log.session("s2").unwrap().turns, 2);
}

/// Older logs name Claude Code `claude-code`: such a row is read as Claude Code, and an import
/// that carries the session on leaves its agent as it was written.
#[test]
fn an_older_agent_name_is_read_as_an_alias_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("s1.jsonl");
    write(&transcript, &(CLAUDE[..3].join("\n") + "\n"));
    let mut log = log_in(dir.path());
    log.import(&transcript, "s1", None).unwrap();
    log.conn.execute("UPDATE sessions SET agent = 'claude-code' WHERE id = 's1'", []).unwrap();
    write(&transcript, &(CLAUDE.join("\n") + "\n"));
    log.import(&transcript, "s1", None).unwrap();
    let session = log.session("s1").unwrap();
    assert_eq!((session.agent, session.turns), (Some(Agent::Claude), 2));
    let stored: String =
        log.conn.query_row("SELECT agent FROM sessions WHERE id = 's1'", [], |r| r.get(0)).unwrap();
    assert_eq!(stored, "claude-code", "the row is not rewritten");
    let text = resume::render(&session, &log.events("s1", None).unwrap(), 4000);
    assert!(text.contains("Claude Code session"), "{text}");
}
