//! Facts from what the user says (issue #39, item 1): `mem capture` turns the durable
//! statements of the user's prompts into memories of their own, once per (session, statement);
//! a repeat is a use, a change supersedes.

use serde_json::Value;

use crate::capture::{Setup, assistant, bash, user};
use mem::capture::facts::stated;

/// The labelled user statements: `said`, and whether it states a durable fact.
const SET: &str = include_str!("data/facts/statements.jsonl");

/// User-role lines by who wrote them (issue #52, item 1): `group` is `plain` for a statement the
/// user typed, else `hook_feedback`, `system` (an agent's own text), `pasted` (someone else's
/// text the user handed over) or `command_output`; `said` is the line.
const TYPED: &str = include_str!("data/facts/typed.jsonl");

const STATED: &str = "Note for this project: we use pnpm, never npm, and the staging server is \
                      stage-7.example.net on port 8443.";

/// Captures a session `id` of these transcript lines; the capture's JSON report.
fn capture(s: &Setup, id: &str, lines: &[String]) -> Value {
    let lines: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    let t = s.transcript(&format!("{id}.jsonl"), &lines);
    s.root.mem_stdin(&["capture", "--json"], s.payload(id, &t)).json()
}

/// The memories of the root (`mem list --json`) that are not session digests.
fn facts(s: &Setup) -> Vec<Value> {
    let listed = s.root.mem(&["list", "--json"]).json();
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| !m["id"].as_str().unwrap().starts_with("session-"))
        .cloned()
        .collect()
}

/// `mem show ID --json`.
fn show(s: &Setup, id: &str) -> Value {
    s.root.mem(&["show", id, "--json"]).json()
}

#[test]
fn a_fact_the_user_states_becomes_a_memory_of_its_own_once() {
    let s = Setup::new();
    let lines = [
        user(STATED),
        assistant("Noted."),
        user("What is the staging server address?"),
        assistant("stage-7.example.net, port 8443."),
    ];
    let report = capture(&s, "s1", &lines);
    assert_eq!(report["facts"]["stated"], 1, "{report}");
    let added = report["facts"]["added"].as_array().unwrap().clone();
    assert_eq!(added.len(), 1, "{report}");
    let id = added[0].as_str().unwrap();
    assert!(!id.starts_with("session-"), "an id like mem add's: {id}");
    let fact = show(&s, id);
    assert_eq!(fact["type"], "semantic");
    assert_eq!(fact["source"], "session/s1");
    assert!(
        fact["body"].as_str().unwrap().contains(
            "We use pnpm, never npm, and the staging server is stage-7.example.net on port 8443"
        ),
        "{fact}"
    );
    assert_eq!(fact["access_count"], 1, "stating it is its first use");
    // The digest is still written, beside it.
    assert!(s.root.path().join("sessions/session-s1.md").is_file());
    // Capture reads the whole transcript on every turn: the statement is not taken twice.
    let mut more = lines.to_vec();
    more.push(user("Thanks."));
    let again = capture(&s, "s1", &more);
    assert_eq!(again["facts"]["seen"], 1, "{again}");
    assert_eq!(again["facts"]["added"], serde_json::json!([]), "{again}");
    assert_eq!(again["facts"]["used"], serde_json::json!([]), "{again}");
    assert_eq!(facts(&s).len(), 1);
    assert_eq!(show(&s, id)["access_count"], 1);
    // The text report says it too.
    let t =
        s.transcript("s2.jsonl", &[user("Remember that the API lives under /api/v2.").as_bytes()]);
    let out = s.capture(s.payload("s2", &t));
    let text = out.ok();
    assert!(text.contains("facts\t1 statement stated, 1 added ("), "{text}");
    let health = s.root.mem(&["health"]);
    assert!(health.stdout.contains("; 2 facts taken from what users stated"), "{}", health.stdout);
    assert_eq!(s.root.mem(&["health", "--json"]).json()["stated_facts"], 2);
}

#[test]
fn a_conversation_that_states_no_fact_gives_none() {
    let s = Setup::new();
    let report = capture(
        &s,
        "quiet",
        &[
            user("The login test fails on staging, can you look?"),
            bash("pnpm test -- login"),
            user("Change the expiry to 30 minutes and add a test for it."),
            assistant("Note: we always deploy on Fridays, so I will wait. Done."),
            user("Thanks. Never mind the lint warning."),
        ],
    );
    assert_eq!(report["facts"]["stated"], 0, "{report}");
    assert!(facts(&s).is_empty(), "nothing the assistant says becomes a fact");
}

#[test]
fn a_fact_stated_in_three_sessions_is_one_memory_with_three_uses() {
    let s = Setup::new();
    for session in ["a", "b", "c"] {
        capture(
            &s,
            session,
            &[
                user("Fix the build. From now on, run cargo fmt before every commit."),
                assistant("Done."),
            ],
        );
    }
    let held = facts(&s);
    assert_eq!(held.len(), 1, "{held:?}");
    let fact = show(&s, held[0]["id"].as_str().unwrap());
    assert_eq!(fact["type"], "procedural", "{fact}");
    assert_eq!(fact["access_count"], 3, "{fact}");
    // A fact added by hand and then stated is a use of it, not a second memory.
    let s = Setup::new();
    s.root.mem(&["add", "--type", "semantic", "We use pnpm, never npm"]).ok();
    let before = facts(&s);
    let report = capture(&s, "d", &[user("Remember: we use pnpm, never npm.")]);
    assert_eq!(report["facts"]["used"], serde_json::json!([before[0]["id"]]), "{report}");
    assert_eq!(facts(&s).len(), 1);
    assert_eq!(show(&s, before[0]["id"].as_str().unwrap())["access_count"], 1);
}

#[test]
fn a_changed_fact_is_a_new_memory_that_supersedes_the_old_one() {
    let s = Setup::new();
    s.root.mem(&["add", "--type", "semantic", "--importance", "8", "We use pnpm, never npm"]).ok();
    let old = facts(&s)[0]["id"].as_str().unwrap().to_string();
    let report = capture(&s, "change", &[user("Note: we use npm, never pnpm.")]);
    let new = report["facts"]["added"][0].as_str().unwrap().to_string();
    assert_eq!(report["facts"]["superseded"], serde_json::json!([[old, new]]), "{report}");
    assert_eq!(show(&s, &old)["superseded_by"], new.as_str());
    assert_eq!(show(&s, &old)["access_count"], 0, "a change is never a use of the old fact");
    assert!(show(&s, &new)["body"].as_str().unwrap().contains("We use npm, never pnpm"));
    let recalled = s.root.mem(&["recall", "which package manager do we use", "--json"]).json();
    assert_eq!(crate::util::ids(&recalled)[0], new, "{recalled}");
}

#[test]
fn secrets_in_a_statement_are_redacted_before_it_is_written() {
    let s = Setup::new();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ0123456789";
    let report = capture(
        &s,
        "secret",
        &[user(&format!("Remember that the deploy bot authenticates with {token} on the CI."))],
    );
    let id = report["facts"]["added"][0].as_str().unwrap();
    let body = show(&s, id)["body"].as_str().unwrap().to_string();
    assert!(!body.contains(token) && body.contains("[REDACTED"), "{body}");
    let all = walk(s.root.path());
    assert!(!all.contains(token), "the token is in no file of the root");
}

/// Every file's text under `dir`, `.mem/` included.
fn walk(dir: &std::path::Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.push_str(&walk(&path));
        } else {
            out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap()));
        }
    }
    out
}

/// Issue #39: at least 0.9 of what is extracted is a durable fact, on at least 50 labelled
/// user statements; a conversation that states none gives none.
#[test]
fn precision_on_the_labelled_statements() {
    let (mut right, mut wrong, mut found, mut durable, mut total) = (0, 0, 0, 0, 0);
    let mut misses = Vec::new();
    for line in SET.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let said = v["said"].as_str().unwrap();
        let is_durable = v["durable"].as_bool().unwrap();
        let facts = stated(said);
        total += 1;
        durable += usize::from(is_durable);
        if is_durable {
            right += facts.len();
            found += usize::from(!facts.is_empty());
        } else {
            wrong += facts.len();
            if !facts.is_empty() {
                misses.push(said.to_string());
            }
        }
    }
    let precision = right as f64 / (right + wrong) as f64;
    let recall = found as f64 / durable as f64;
    eprintln!(
        "{total} statements, {durable} durable: precision {precision:.3}, recall \
         {recall:.3}; taken wrongly from {misses:?}"
    );
    assert!(total >= 50);
    assert!(precision >= 0.9, "precision {precision:.3}: {misses:?}");
}

/// A Claude Code transcript line of the session `session` in `cwd`.
fn line(kind: &str, cwd: &std::path::Path, at: &str, content: Value) -> String {
    serde_json::json!({
        "type": kind, "sessionId": "s", "cwd": cwd, "timestamp": at,
        "message": {"role": kind, "content": content},
    })
    .to_string()
}

/// Captures, into the project `repo`, a session `id` of the user's `prompt`, answered `answer`,
/// with a shell `command` run between them when given, on 2026-11-`day`.
fn capture_in(
    repo: &crate::util::Dir,
    (id, day): (&str, &str),
    prompt: &str,
    command: Option<&str>,
    answer: &str,
) {
    let cwd = repo.path();
    let mut lines =
        vec![line("user", cwd, &"2026-11-29T10:00:00Z".replace("29", day), Value::from(prompt))];
    if let Some(command) = command {
        let call = serde_json::json!([{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": command}}]);
        lines.push(line("assistant", cwd, &"2026-11-29T10:01:00Z".replace("29", day), call));
    }
    let said = serde_json::json!([{"type": "text", "text": answer}]);
    lines.push(line("assistant", cwd, &"2026-11-29T10:02:00Z".replace("29", day), said));
    let transcript = cwd.join(format!("{id}.jsonl"));
    std::fs::write(&transcript, lines.join("\n") + "\n").unwrap();
    let payload = serde_json::json!({
        "session_id": id, "transcript_path": transcript, "cwd": cwd, "hook_event_name": "Stop",
    });
    repo.mem_in(".", &["capture"], payload.to_string()).ok();
}

/// Issue #39, item 2: the per-prompt hook sends no digest of a session that only asked the
/// prompt's question again, even with an answer in it; the fact comes first; and a digest line
/// says what its session did, not its ids, paths and times.
#[test]
fn digests_in_the_context_say_what_was_done_and_never_the_question_again() {
    use crate::injections::{context, project};
    let repo = project();
    repo.mem_in(
        ".",
        &[
            "add",
            "--type",
            "semantic",
            "--importance",
            "8",
            "We use pnpm as the package manager, never npm",
        ],
        "",
    )
    .ok();
    for i in 0..3 {
        capture_in(
            &repo,
            (&format!("asked-{i}"), "27"),
            "Check the memory: which package manager do we use?",
            None,
            "You use pnpm.",
        );
    }
    capture_in(
        &repo,
        ("worked", "28"),
        "Fix the failing login test",
        Some("pnpm test -- login"),
        "The login test passes.",
    );
    let prompt = r#","prompt":"which package manager should I use?","prompt_id":"p1""#;
    let block = context(&repo, "UserPromptSubmit", "s1", prompt);
    let first = block.lines().find(|l| l.starts_with("- ")).unwrap_or_else(|| panic!("{block}"));
    assert!(
        first.contains("We use pnpm as the package manager, never npm"),
        "the fact first: {block}"
    );
    assert!(!block.contains("session-asked-"), "no digest of the same question: {block}");
    let start = context(&repo, "SessionStart", "s2", r#","source":"startup""#);
    let worked =
        start.lines().find(|l| l.contains("`session-worked`")).unwrap_or_else(|| panic!("{start}"));
    assert!(
        worked.contains("ran `pnpm test -- login`; outcome: The login test passes."),
        "{worked}"
    );
    let root = repo.path().display().to_string();
    for digest in start.lines().filter(|l| l.contains("`session-")) {
        assert!(
            !digest.contains(&root)
                && !digest.contains("T10:")
                && !digest.contains("Claude Code session"),
            "{digest}"
        );
    }
}

/// Issue #52, item 1: a hook's feedback, an agent's own user-role text, a customer's issue or a
/// log the user pasted became standing rules. Each line is a session of its own, captured as
/// Claude Code's transcript: none of those groups gives a fact, the user's plain statements do.
#[test]
fn only_what_the_user_typed_becomes_a_fact() {
    let s = Setup::new();
    let mut taken: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    let mut wrong = Vec::new();
    for (n, line) in TYPED.lines().enumerate() {
        let row: Value = serde_json::from_str(line).unwrap();
        let (group, said) = (row["group"].as_str().unwrap(), row["said"].as_str().unwrap());
        let report = capture(&s, &format!("t{n}"), &[user(said), assistant("OK.")]);
        let added = report["facts"]["added"].as_array().map_or(0, Vec::len);
        let entry = taken.entry(group.to_string()).or_default();
        entry.0 += 1;
        entry.1 += usize::from(added > 0);
        if (group == "plain") != (added > 0) {
            wrong.push(format!("{group}: {said:?}"));
        }
    }
    let count = |g: &str| taken.get(g).copied().unwrap_or_default();
    eprintln!("lines and facts taken, by group: {taken:?}");
    assert!(TYPED.lines().count() >= 40, "{taken:?}");
    for group in ["hook_feedback", "system", "pasted", "command_output"] {
        assert_eq!(count(group).1, 0, "{group} gave facts: {wrong:#?}");
    }
    assert_eq!(count("plain").0, 20);
    assert!(count("plain").1 >= 18, "{taken:?} {wrong:#?}");
}

/// Issue #52, item 1: a fact records the turn that stated it, and `mem show` says it.
#[test]
fn show_names_the_session_and_turn_that_stated_a_fact() {
    let s = Setup::new();
    let lines = [
        user("Run the tests."),
        assistant("They pass."),
        user("Note for this project: the API lives under /api/v2."),
        assistant("Noted."),
    ];
    let report = capture(&s, "s7", &lines);
    let id = report["facts"]["added"][0].as_str().unwrap().to_string();
    let shown = show(&s, &id);
    assert_eq!(shown["stated"][0]["session"], "s7", "{shown}");
    assert_eq!(shown["stated"][0]["turn"], 2, "{shown}");
    assert_eq!(shown["stated"][0]["outcome"], "added", "{shown}");
    let text = s.root.mem(&["show", &id]);
    assert!(text.stdout.contains("stated      in session s7, turn 2"), "{}", text.stdout);
}
