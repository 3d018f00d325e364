//! The session log through the binary: `mem capture` feeds `.mem/sessions.db` incrementally,
//! `mem session list/show/search/resume` read it, a kill -9 during a capture leaves it
//! consistent, and the checkpoint hook records a checkpoint per turn.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Dir, clean_env};

fn user(text: &str, at: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"s","cwd":"/home/ana/shop","timestamp":"{at}","message":{{"role":"user","content":{}}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

fn bash(id: &str, command: &str, at: &str) -> String {
    format!(
        r#"{{"type":"assistant","timestamp":"{at}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Bash","input":{{"command":{}}}}}]}}}}"#,
        serde_json::to_string(command).unwrap()
    )
}

fn result(id: &str, output: &str, error: bool, at: &str) -> String {
    format!(
        r#"{{"type":"user","timestamp":"{at}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{},"is_error":{error}}}]}}}}"#,
        serde_json::to_string(output).unwrap()
    )
}

fn assistant(text: &str, at: &str) -> String {
    format!(
        r#"{{"type":"assistant","timestamp":"{at}","message":{{"role":"assistant","content":[{{"type":"text","text":{}}}]}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

fn edit(id: &str, path: &str, at: &str) -> String {
    format!(
        r#"{{"type":"assistant","timestamp":"{at}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Edit","input":{{"file_path":"{path}","old_string":"a","new_string":"b"}}}}]}}}}"#
    )
}

/// A prompt, a command that fails, and its result.
fn first_turn() -> String {
    [
        user("Fix the failing login test", "2026-11-29T10:00:00Z"),
        bash("t1", "cargo test login", "2026-11-29T10:00:05Z"),
        result(
            "t1",
            "Exit code 101\ntest login FAILED: cookie expired",
            true,
            "2026-11-29T10:00:06Z",
        ),
    ]
    .join("\n")
        + "\n"
}

/// A memory root and a transcript file beside it.
struct Setup {
    root: Dir,
    files: Dir,
}

impl Setup {
    fn new() -> Setup {
        let setup = Setup { root: Dir::new(), files: Dir::new() };
        setup.root.mem(&["init", "."]).ok();
        setup
    }

    fn transcript(&self) -> PathBuf {
        self.files.path().join("s.jsonl")
    }

    fn append(&self, text: &str) {
        let mut file =
            std::fs::OpenOptions::new().create(true).append(true).open(self.transcript()).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    fn payload(&self, session: &str) -> String {
        format!(
            r#"{{"session_id":"{session}","transcript_path":{},"cwd":"/home/ana/shop","hook_event_name":"Stop"}}"#,
            serde_json::to_string(self.transcript().to_str().unwrap()).unwrap()
        )
    }

    fn capture(&self, session: &str) -> serde_json::Value {
        self.root.mem_stdin(&["capture", "--json"], self.payload(session)).json()
    }

    fn events(&self, session: &str) -> Vec<serde_json::Value> {
        let out = self.root.mem(&["session", "show", session, "--json"]).json();
        out.as_array().unwrap().clone()
    }
}

/// The events without their sequence numbers, for comparing two logs.
fn comparable(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .map(|e| {
            let mut e = e.clone();
            e.as_object_mut().unwrap().remove("seq");
            e
        })
        .collect()
}

#[test]
fn capture_appends_only_what_is_new_and_a_cut_last_line_waits() {
    let s = Setup::new();
    s.append(&first_turn());
    assert_eq!(s.capture("s")["logged_events"], 4, "meta, prompt, call, result");
    assert_eq!(s.capture("s")["logged_events"], 0, "the same transcript again: nothing new");
    assert_eq!(s.events("s").len(), 4);

    // The agent goes on; the last line is being written when the hook runs.
    let answer = assistant("Fixed: the cookie had expired.", "2026-11-29T10:02:00Z");
    s.append(&format!("{}\n", edit("t2", "/home/ana/shop/src/auth.rs", "2026-11-29T10:01:00Z")));
    s.append(&answer[..answer.len() / 2]);
    assert_eq!(s.capture("s")["logged_events"], 1, "the edit; not the cut line");
    s.append(&format!("{}\n", &answer[answer.len() / 2..]));
    assert_eq!(s.capture("s")["logged_events"], 1, "the answer, once whole");
    let events = s.events("s");
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["meta", "prompt", "tool_call", "tool_result", "tool_call", "assistant"]);
    assert_eq!(events[3]["status"], 101);
    assert_eq!(events[4]["files"][0], "src/auth.rs");

    let list = s.root.mem(&["session", "list"]).ok().to_string();
    assert!(
        list.starts_with(
            "s\tclaude\t2026-11-29T10:00:00Z\t1 turns\t/home/ana/shop\tFix the failing login test\n"
        ),
        "{list}"
    );
    // The digest in the long-term layer points to the log.
    let digest = s.root.read("sessions/session-s.md");
    assert!(digest.contains("Full log: `mem session show s`."), "{digest}");
    let health = s.root.mem(&["health"]).stdout;
    assert!(
        health.contains("sessions.db consistent (1 sessions, 6 events from 1 transcripts)"),
        "{health}"
    );
}

#[test]
fn search_show_and_resume_read_the_log() {
    let s = Setup::new();
    s.append(&first_turn());
    s.append(&format!(
        "{}\n{}\n{}\n",
        edit("t2", "/home/ana/shop/src/auth.rs", "2026-11-29T10:01:00Z"),
        assistant("The session cookie had expired; renewed on login now.", "2026-11-29T10:02:00Z"),
        user("now run the whole suite", "2026-11-29T10:03:00Z"),
    ));
    s.capture("s");

    let found = s.root.mem(&["session", "search", "cookie", "expired"]).ok().to_string();
    let lines: Vec<&str> = found.lines().collect();
    assert_eq!(lines.len(), 2, "{found}");
    assert!(lines.iter().all(|l| l.starts_with("s\tturn 1\t")), "{found}");
    assert!(found.contains("[cookie] had [expired]"), "{found}");
    let json = s.root.mem(&["session", "search", "suite", "--json"]).json();
    assert_eq!((json[0]["turn"].as_i64(), json[0]["kind"].as_str()), (Some(2), Some("prompt")));
    let none = s.root.mem(&["session", "search", "zebra"]);
    assert_eq!((none.code, none.stdout.as_str()), (0, ""));
    assert!(none.stderr.contains("no event matches"));

    let shown = s.root.mem(&["session", "show", "s", "--turn", "1"]).ok().to_string();
    assert!(shown.contains("tool_result\t[exit 101] Exit code 101"), "{shown}");
    assert!(!shown.contains("whole suite"), "up to turn 1: {shown}");

    let resume = s.root.mem(&["session", "resume", "s"]).ok().to_string();
    for part in [
        "# Resume session s\n",
        "## Goal\n\nFix the failing login test\n",
        "- turn 2: now run the whole suite\n",
        "- `src/auth.rs`\n",
        "- turn 1: `cargo test login` → failed (exit 101)\n",
        "## Open problems\n",
        "turn 2 has no answer in the log",
        "## Last answer (turn 1)\n\nThe session cookie had expired; renewed on login now.\n",
    ] {
        assert!(resume.contains(part), "{part:?} not in\n{resume}");
    }
    let short = s.root.mem(&["session", "resume", "s", "--budget", "300"]).ok().to_string();
    assert!(short.trim_end().chars().count() <= 300, "{short}");
    let at_1 = s.root.mem(&["session", "resume", "s", "--turn", "1"]).ok().to_string();
    assert!(!at_1.contains("whole suite") && !at_1.contains("Open problems\n\n- turn"), "{at_1}");

    // As a SessionStart hook: the previous session of the folder, as additional context.
    let payload = r#"{"session_id":"new","cwd":"/home/ana/shop","hook_event_name":"SessionStart","source":"startup"}"#;
    let out = s.root.mem_stdin(&["session", "resume", "--hook", "claude"], payload);
    let answer: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(context.starts_with("# Resume session s\n"), "{context}");
    // Elsewhere, nothing to resume: no output, no failure.
    let elsewhere = r#"{"session_id":"new","cwd":"/srv/other","hook_event_name":"SessionStart"}"#;
    let out = s.root.mem_stdin(&["session", "resume", "--hook", "claude"], elsewhere);
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);

    let unknown = s.root.mem(&["session", "show", "nope"]);
    assert_ne!(unknown.code, 0);
    assert!(unknown.stderr.contains("`mem session list` shows them"), "{}", unknown.stderr);
}

#[test]
fn without_a_log_the_commands_say_how_to_get_one() {
    let root = Dir::new();
    root.mem(&["init", "."]).ok();
    let out = root.mem(&["session", "list"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("no session log yet"), "{}", out.stderr);
    assert!(
        out.stderr.contains("`mem setup AGENT` installs them, AGENT one of claude, codex"),
        "{}",
        out.stderr
    );
    assert!(root.mem(&["health"]).stdout.contains("no session log yet"));
}

/// A transcript of `turns` turns, each a prompt, a command, its result and an answer.
fn long_transcript(turns: usize) -> String {
    let mut text = String::new();
    for turn in 0..turns {
        let at = format!("2026-11-29T{:02}:{:02}:00Z", 10 + turn / 60 % 10, turn % 60);
        text.push_str(&user(&format!("step {turn}: make the parser accept case {turn}"), &at));
        text.push('\n');
        text.push_str(&bash(&format!("c{turn}"), &format!("cargo test case_{turn}"), &at));
        text.push('\n');
        let output = format!("running 1 test\ntest case_{turn} ... ok\n{}", "padding ".repeat(40));
        text.push_str(&result(&format!("c{turn}"), &output, false, &at));
        text.push('\n');
        text.push_str(&assistant(&format!("Case {turn} parses now."), &at));
        text.push('\n');
    }
    text
}

#[test]
#[allow(clippy::disallowed_methods)] // The kills are spaced by how long a capture takes here.
fn a_kill_during_capture_leaves_the_log_whole_and_the_next_capture_appends_the_rest() {
    let s = Setup::new();
    let transcript = long_transcript(3000);
    // What one uninterrupted capture logs, in another root.
    let reference = Setup::new();
    reference.append(&transcript);
    reference.capture("s");
    let expected = comparable(&reference.events("s"));
    assert_eq!(expected.len(), 3000 * 4 + 1);

    // The first half is captured; then the agent writes the rest, and captures of it are
    // killed ever later, until one finishes.
    let half = transcript.len() / 2;
    let cut = transcript[..half].rfind('\n').unwrap() + 1;
    s.append(&transcript[..cut]);
    let started = std::time::Instant::now();
    s.capture("s");
    let step = started.elapsed() / 8;
    let before = s.events("s").len();
    s.append(&transcript[cut..]);
    let mut kills = 0;
    for n in 1..=40 {
        let mut child = s.root.spawn(&["capture"]);
        child.stdin.take().unwrap().write_all(s.payload("s").as_bytes()).unwrap();
        std::thread::sleep(step * n);
        let _ = Command::new("kill").args(["-9", &child.id().to_string()]).status();
        let killed = child.wait().unwrap().code().is_none();
        let now = s.events("s").len();
        // One transaction per import: the log has all of the new part or none of it.
        assert!(
            now == before || now == expected.len(),
            "{now} events after a kill at {:?}",
            step * n
        );
        kills += usize::from(killed && now == before);
        if now == expected.len() {
            break;
        }
    }
    assert!(kills > 0, "no capture was killed before it finished");
    eprintln!("{kills} captures killed before their import committed, {step:?} apart");
    let health = s.root.mem(&["health"]).stdout;
    assert!(health.contains("sessions.db consistent"), "{health}");
    s.capture("s");
    assert_eq!(comparable(&s.events("s")), expected, "every event once, in order");
}

/// A throw-away git repository.
fn repo() -> Dir {
    let dir = Dir::new();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "ana@example.com"]);
    git(&["config", "user.name", "Ana"]);
    dir.write("src/lib.rs", "pub fn one() {}\n");
    git(&["add", "-A"]);
    git(&["commit", "-qm", "start"]);
    dir
}

fn hook_payload(repo: &Path, transcript: &Path, prompt: &str) -> String {
    serde_json::json!({
        "session_id": "s",
        "transcript_path": transcript,
        "cwd": repo,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
    .to_string()
}

#[test]
fn the_checkpoint_hook_records_a_checkpoint_per_turn() {
    let repo = repo();
    let root = repo.path().join(".memory");
    let mem = |args: &[&str], stdin: &str| {
        let mut cmd = Command::new(crate::util::bin());
        clean_env(&mut cmd).args(args).current_dir(repo.path()).env("HOME", repo.home());
        crate::util::run_with_stdin(&mut cmd, stdin)
    };
    mem(&["init", "--project"], "").ok();
    let transcript = repo.path().join(".memory-test-transcript.jsonl");
    std::fs::write(repo.path().join(".git/info/exclude"), ".memory-test-transcript.jsonl\n")
        .unwrap();

    // Turn 1: the hook runs before the prompt is in the transcript.
    let out = mem(
        &["checkpoint", "--hook", "claude"],
        &hook_payload(repo.path(), &transcript, "add two"),
    );
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
    // The agent works: the transcript has the prompt, a file changes.
    std::fs::write(&transcript, format!("{}\n", user("add two", "2026-11-29T10:00:00Z"))).unwrap();
    repo.write("src/lib.rs", "pub fn one() {}\npub fn two() {}\n");
    // Turn 2: the transcript already ends with this prompt when the hook runs.
    let mut lines = std::fs::read_to_string(&transcript).unwrap();
    lines.push_str(&format!("{}\n", user("add three", "2026-11-29T10:05:00Z")));
    std::fs::write(&transcript, lines).unwrap();
    mem(&["checkpoint", "--hook", "claude"], &hook_payload(repo.path(), &transcript, "add three"))
        .ok();
    // Turn 3 changed nothing yet when turn 4 starts: the same checkpoint serves both.
    let mut lines = std::fs::read_to_string(&transcript).unwrap();
    lines.push_str(&format!("{}\n", user("add four", "2026-11-29T10:09:00Z")));
    std::fs::write(&transcript, lines).unwrap();
    mem(&["checkpoint", "--hook", "claude"], &hook_payload(repo.path(), &transcript, "add five"))
        .ok();

    let list = mem(&["checkpoints", "--json"], "").json();
    let labels: Vec<&str> =
        list.as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["before turn 2 of session s", "before turn 1 of session s"]);
    let turns: Vec<&serde_json::Value> =
        list.as_array().unwrap().iter().map(|c| &c["turns"]).collect();
    assert_eq!(
        turns,
        [
            &serde_json::json!([{ "session": "s", "turn": 2 }, { "session": "s", "turn": 4 }]),
            &serde_json::json!([{ "session": "s", "turn": 1 }])
        ]
    );
    let text = mem(&["checkpoints"], "").ok().to_string();
    assert!(
        text.contains("before turn 2 of session s  (before session s turn 2, session s turn 4)"),
        "{text}"
    );
    let out = mem(&["--dir", root.to_str().unwrap(), "session", "show", "s", "--json"], "").json();
    let checkpoints: Vec<(i64, &str)> = out
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "checkpoint")
        .map(|e| (e["turn"].as_i64().unwrap(), e["checkpoint"].as_str().unwrap()))
        .collect();
    assert_eq!(checkpoints, [(1, "1"), (2, "2"), (4, "2")]);
    // Rewinding to the checkpoint of turn 2 undoes what turn 2 did (nothing yet), that of
    // turn 1 what turns 1 and 2 did.
    mem(&["rewind", "1"], "").ok();
    assert_eq!(repo.read("src/lib.rs"), "pub fn one() {}\n");
    let resume =
        mem(&["--dir", root.to_str().unwrap(), "session", "resume", "s"], "").ok().to_string();
    assert!(resume.contains("- turn 2 (before it: checkpoint 2): add three\n"), "{resume}");

    // Outside a repository the hook does nothing, and says nothing.
    let elsewhere = Dir::new();
    let payload = hook_payload(elsewhere.path(), &transcript, "x");
    let out = mem(&["checkpoint", "--hook", "claude"], &payload);
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (0, "", ""));
}

#[test]
fn a_damaged_log_is_reported_and_never_replaced() {
    let s = Setup::new();
    s.append(&format!("{}\n", user("Fix the failing login test", "2026-11-29T10:00:00Z")));
    let garbage = b"this is not a SQLite database, but it is the user's file".repeat(100);
    let db = s.root.path().join(".mem/sessions.db");
    std::fs::write(&db, &garbage).unwrap();

    let out = s.root.mem(&["session", "list"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("is damaged") && out.stderr.contains("move it aside"),
        "{}",
        out.stderr
    );
    let out = s.root.mem_stdin(&["capture"], s.payload("s"));
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("wrote sessions/session-s.md, but"), "{}", out.stderr);
    assert!(s.root.path().join("sessions/session-s.md").is_file(), "the digest is written");
    let health = s.root.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("✗ sessions"), "{}", health.stdout);
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "never deleted or rewritten");

    // Moved aside, as the message says: the next capture starts a new log with everything.
    std::fs::rename(&db, s.root.path().join(".mem/sessions.db.broken")).unwrap();
    assert_eq!(s.capture("s")["logged_events"], 2);
}

#[test]
fn captures_at_the_same_time_log_each_event_once() {
    let s = Setup::new();
    s.append(&long_transcript(600));
    // The Stop and SessionEnd hooks, and the checkpoint hook, can read one transcript at once.
    let children: Vec<_> = (0..4)
        .map(|_| {
            let mut child = s.root.spawn(&["capture", "--json"]);
            child.stdin.take().unwrap().write_all(s.payload("s").as_bytes()).unwrap();
            child
        })
        .collect();
    let mut logged = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        logged += json["logged_events"].as_u64().unwrap();
    }
    assert_eq!(logged, 600 * 4 + 1, "the events were appended by one capture, once");
    assert_eq!(s.events("s").len(), 600 * 4 + 1);
}

/// A Gemini CLI chat record (`id`, `type`, `content`) at `at`, as one line.
fn gemini_message(id: &str, kind: &str, content: &str, at: &str) -> String {
    let mut message = serde_json::json!({ "id": id, "timestamp": at, "type": kind });
    message["content"] = match kind {
        "user" => serde_json::json!([{ "text": content }]),
        _ => serde_json::json!(content),
    };
    if kind == "gemini" {
        message["model"] = serde_json::json!("gemini-2.5-pro");
    }
    format!("{message}\n")
}

#[test]
fn a_gemini_message_written_again_after_a_capture_is_logged_once() {
    let s = Setup::new();
    s.append(&format!(
        "{}\n",
        serde_json::json!({
            "sessionId": "s", "projectHash": "abc", "startTime": "2026-11-29T10:00:00Z"
        })
    ));
    s.append(&gemini_message("u1", "user", "Fix the failing login test", "2026-11-29T10:00:00Z"));
    s.append(&gemini_message(
        "g1",
        "gemini",
        "Fixed: the cookie had expired.",
        "2026-11-29T10:01:00Z",
    ));
    assert_eq!(s.capture("s")["logged_events"], 3, "prompt, model, answer");
    // Gemini CLI writes its last message again under its id (its token counts, say), then the
    // user's first one: both are logged already.
    s.append(&gemini_message(
        "g1",
        "gemini",
        "Fixed: the cookie had expired.",
        "2026-11-29T10:01:05Z",
    ));
    s.append(&gemini_message("u1", "user", "Fix the failing login test", "2026-11-29T10:00:00Z"));
    assert_eq!(s.capture("s")["logged_events"], 0, "no message of the log again");
    // The next turn is new.
    s.append(&gemini_message("u2", "user", "Now the signup test", "2026-11-29T10:05:00Z"));
    s.append(&gemini_message("g2", "gemini", "Fixed too.", "2026-11-29T10:06:00Z"));
    s.append(&gemini_message("g2", "gemini", "Fixed too, and tested.", "2026-11-29T10:06:01Z"));
    assert_eq!(s.capture("s")["logged_events"], 2, "the prompt, the last copy of the answer");
    let said: Vec<String> = s
        .events("s")
        .iter()
        .filter(|e| matches!(e["kind"].as_str(), Some("prompt" | "assistant")))
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        said,
        [
            "Fix the failing login test",
            "Fixed: the cookie had expired.",
            "Now the signup test",
            "Fixed too, and tested."
        ]
    );
    let list = s.root.mem(&["session", "list"]).ok().to_string();
    assert!(list.starts_with("s\tgemini\t"), "{list}");
    assert!(list.contains("\t2 turns\t"), "{list}");
}
