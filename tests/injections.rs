//! The injection ledger (#24, defect 8): the context hooks send a memory once per session,
//! again only when it changed or after a compaction or a clear, never again to a resumed
//! session; `mem session show` lists what went into each context.

use crate::util::Dir;

/// A hook payload of `session` for `event` in `cwd`, with more fields in `extra`.
fn payload(event: &str, session: &str, cwd: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"session_id":"{session}","hook_event_name":"{event}","cwd":{}{extra}}}"#,
        serde_json::to_string(cwd.to_str().unwrap()).unwrap()
    )
}

/// The `additionalContext` a context hook answered with (empty when it said nothing).
pub(crate) fn context(repo: &Dir, event: &str, session: &str, extra: &str) -> String {
    context_in(repo, 4000, event, session, extra)
}

/// [`context`] with `--budget budget`.
fn context_in(repo: &Dir, budget: u32, event: &str, session: &str, extra: &str) -> String {
    let out = repo.mem_in(
        ".",
        &["context", "--hook", "claude", "--budget", &budget.to_string()],
        payload(event, session, repo.path(), extra),
    );
    assert_eq!(out.code, 0, "{out:?}");
    if out.stdout.trim().is_empty() {
        return String::new();
    }
    let answer: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap().to_string()
}

const FACT: &str = "The orders service stores orders in Postgres 16";

#[test]
fn each_memory_reaches_a_session_once() {
    let repo = Dir::new();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo.mem_in(".", &["add", "--type", "semantic", "--importance", "8", FACT], "").ok();
    let prompt =
        |id: &str| format!(r#","prompt":"which Postgres stores the orders","prompt_id":"{id}""#);

    let start = context(&repo, "SessionStart", "s1", r#","source":"startup""#);
    assert!(start.contains(FACT), "{start}");
    // The prompt that matches it: already in the context, not sent again.
    assert_eq!(context(&repo, "UserPromptSubmit", "s1", &prompt("p1")), "");
    // Another session gets it.
    assert!(context(&repo, "UserPromptSubmit", "s2", &prompt("p1")).contains(FACT));
    // A resumed session holds it already: no start context again.
    assert_eq!(context(&repo, "SessionStart", "s1", r#","source":"resume""#), "");
    // After a compaction the key memories come back, once.
    let compacted = context(&repo, "SessionStart", "s1", r#","source":"compact""#);
    assert!(compacted.contains(FACT), "{compacted}");
    assert_eq!(context(&repo, "UserPromptSubmit", "s1", &prompt("p2")), "");
    // A changed memory is sent again.
    let file = std::fs::read_dir(repo.path().join(".memory"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(FACT)))
        .unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("Postgres 16", "Postgres 17")).unwrap();
    let changed = context(&repo, "UserPromptSubmit", "s1", &prompt("p3"));
    assert!(changed.contains("Postgres 17"), "{changed}");

    // The ledger, as `mem session show` lists it.
    let shown = repo.mem_in(".", &["session", "show", "s1"], "").ok().to_string();
    let injected: Vec<&str> = shown.lines().filter(|l| l.contains("\tinjected\t")).collect();
    assert_eq!(injected.len(), 4, "{shown}");
    assert!(injected[0].contains("SessionStart: "), "{shown}");
    assert!(injected[0].contains(" chars: "), "{shown}");
    assert!(injected[1].contains("the context started again"), "{shown}");
    assert!(injected[3].contains("UserPromptSubmit: 1 memories"), "{shown}");
    let json = repo.mem_in(".", &["session", "show", "s1", "--json"], "").json();
    let entries: Vec<&serde_json::Value> =
        json.as_array().unwrap().iter().filter(|e| e["kind"] == "injected").collect();
    assert_eq!(entries.len(), 4, "{json}");
    let chars = entries[0]["chars"].as_u64().unwrap();
    assert!(chars > FACT.len() as u64, "{json}");
    assert_eq!(entries[0]["memories"][0]["chars"].as_u64(), Some(chars));
}

/// A project with a memory root that holds [`FACT`], an important one.
pub(crate) fn project() -> Dir {
    let repo = Dir::new();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo.mem_in(".", &["add", "--type", "semantic", "--importance", "8", FACT], "").ok();
    repo
}

const PROMPT: &str = r#","prompt":"which Postgres stores the orders""#;

#[test]
fn an_answer_that_never_reached_the_agent_is_not_counted_as_sent() {
    use std::io::Write as _;
    let repo = project();
    // The agent gave up on the hook (its timeout) and closed its end of stdout before the
    // answer came: the answer cannot be written.
    let mut child = repo.spawn_in(".", &["context", "--hook", "claude"]);
    drop(child.stdout.take());
    let start = payload("SessionStart", "s1", repo.path(), r#","source":"startup""#);
    child.stdin.take().unwrap().write_all(start.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("context hook: the answer could not be written"), "{stderr}");
    let log = repo.read(".memory/.mem/capture.log");
    assert!(log.contains("the answer could not be written"), "{log}");
    // The session's context does not hold the memory: the next prompt brings it.
    let next = context(&repo, "UserPromptSubmit", "s1", &format!(r#"{PROMPT},"prompt_id":"p1""#));
    assert!(next.contains(FACT), "{next}");
    // Once written, it is in the ledger.
    assert_eq!(
        context(&repo, "UserPromptSubmit", "s1", &format!(r#"{PROMPT},"prompt_id":"p2""#)),
        ""
    );
}

#[test]
fn a_damaged_session_log_stops_no_context_and_is_never_replaced() {
    let repo = project();
    let db = repo.path().join(".memory/.mem/sessions.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let garbage = b"this is not a SQLite database, but it is the user's file".repeat(100);
    std::fs::write(&db, &garbage).unwrap();
    let out = repo.mem_in(
        ".",
        &["context", "--hook", "claude"],
        payload("SessionStart", "s1", repo.path(), r#","source":"startup""#),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains(FACT), "{out:?}");
    assert!(out.stderr.contains("the session log cannot be used"), "{}", out.stderr);
    assert!(out.stderr.contains("is damaged"), "{}", out.stderr);
    assert_eq!(std::fs::read(&db).unwrap(), garbage, "never deleted or rewritten");
}

#[test]
fn the_same_prompt_typed_again_is_a_new_call_and_two_hook_files_one() {
    let repo = project();
    // A payload that names no prompt: no prompt or turn id, no session for the ledger.
    let transcript = repo.path().join("transcript.jsonl");
    std::fs::write(&transcript, "{\"type\":\"user\"}\n").unwrap();
    let call = || {
        let extra = format!(
            r#"{PROMPT},"transcript_path":{}"#,
            serde_json::to_string(transcript.to_str().unwrap()).unwrap()
        );
        let payload = format!(
            r#"{{"hook_event_name":"UserPromptSubmit","cwd":{}{extra}}}"#,
            serde_json::to_string(repo.path().to_str().unwrap()).unwrap()
        );
        let out = repo.mem_in(".", &["context", "--hook", "claude"], payload);
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout
    };
    assert!(call().contains(FACT));
    // The agent's other hook file, for the same prompt: one call.
    assert_eq!(call(), "");
    // The turn went on; the same prompt typed again is a new call.
    let mut text = std::fs::read_to_string(&transcript).unwrap();
    text.push_str("{\"type\":\"assistant\"}\n");
    std::fs::write(&transcript, text).unwrap();
    assert!(call().contains(FACT));
}

/// A long memory: its one line in the block is cut (280 characters of body), and its end,
/// `port 8443`, is only in its whole line. `words` sets how long it is.
fn long_fact(words: usize) -> String {
    let middle = "Words about the deploy process go here, step after step. ".repeat(words);
    format!(
        "The staging server is reached through a bastion. {middle}The address is stage-7.example.net on port 8443."
    )
}

/// A project whose memory root holds `text` (semantic, importance 8); its id.
fn project_with(text: &str) -> (Dir, String) {
    let repo = Dir::new();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let added = repo.mem_in(".", &["add", "--type", "semantic", "--importance", "8", text], "");
    let id = added.ok().split('\t').next().unwrap().to_string();
    (repo, id)
}

/// A prompt about the staging server, with its prompt id.
fn staging(id: &str) -> String {
    format!(r#","prompt":"how do I reach the staging server","prompt_id":"{id}""#)
}

/// The line of the block about memory `id`.
fn line_of<'a>(block: &'a str, id: &str) -> &'a str {
    block.lines().find(|l| l.contains(&format!("`{id}`"))).unwrap_or_else(|| panic!("{block}"))
}

/// Issue #39, item 3: a memory sent cut goes on at a later prompt that matches it, once; the
/// cut line says how to get the rest. Issue #52, item 3: what goes then is the rest of its
/// body, never the part the session holds already.
#[test]
fn a_memory_sent_cut_goes_on_once_later_in_the_session() {
    let (repo, id) = project_with(&long_fact(8));
    let first = context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p1"));
    let cut = line_of(&first, &id);
    assert!(!cut.contains("port 8443"), "cut at 280 characters of body: {cut}");
    assert!(cut.ends_with(&format!("`get {id}` for the rest")), "{cut}");
    // The next prompt that matches it gets the rest, on one line.
    let second = context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p2"));
    let rest = line_of(&second, &id);
    assert!(rest.ends_with("stage-7.example.net on port 8443."), "{rest}");
    assert!(!rest.contains("for the rest"), "{rest}");
    let sent =
        cut.split_once("): ").unwrap().1.trim_end_matches(&format!("`get {id}` for the rest"));
    let sent = sent.trim_end().trim_matches('…');
    let went_on = rest.strip_prefix(&format!("- the rest of `{id}`: …")).expect(rest);
    let body = std::fs::read_to_string(repo.path().join(format!(".memory/{id}.md"))).unwrap();
    let body = body.split("\n---\n").nth(1).unwrap().split_whitespace().collect::<Vec<_>>();
    let both = format!("{sent} {went_on}");
    assert!(body.join(" ").ends_with(&both), "the two lines hold the body once:\n{cut}\n{rest}");
    // Then never again, whatever matches it.
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p3")), "");
    assert_eq!(context(&repo, "SessionStart", "s1", r#","source":"startup""#), "");
    // A key memory sent cut at the session's start goes whole with a prompt, then no more.
    let start = context(&repo, "SessionStart", "s2", r#","source":"startup""#);
    assert!(line_of(&start, &id).ends_with("for the rest"), "{start}");
    let prompt = context_in(&repo, 2000, "UserPromptSubmit", "s2", &staging("p1"));
    assert!(line_of(&prompt, &id).ends_with("port 8443."), "{prompt}");
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s2", &staging("p2")), "");
}

/// Issue #39, item 3: a memory whose whole line never fits the budget is sent cut once per
/// session, ending with "`get ID` for the rest", and not again.
#[test]
fn a_memory_too_long_to_go_whole_is_sent_cut_once() {
    let (repo, id) = project_with(&long_fact(40));
    let first = context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p1"));
    let cut = line_of(&first, &id);
    assert!(cut.ends_with(&format!("`get {id}` for the rest")), "{cut}");
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p2")), "");
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p3")), "");
    // A changed memory goes again, cut, once.
    let file = repo.path().join(format!(".memory/{id}.md"));
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("port 8443", "port 9443")).unwrap();
    let changed = context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p4"));
    assert!(line_of(&changed, &id).ends_with("for the rest"), "{changed}");
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p5")), "");
}

/// Issue #39, item 3, as it was found: a fact stated in an earlier session, in its digest's
/// line cut at the session's start, reaches a later prompt that asks for it; issue #52, item
/// 3: as the rest of that line, which says nothing of the cut line again. (The session's
/// statements were never taken as facts here: its digest alone holds this one.)
#[test]
fn a_digest_cut_at_the_start_goes_on_in_the_prompt_that_asks_for_it() {
    let repo = Dir::new();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    repo.mem_in(".", &["init", "--project"], "").ok();
    let steps = "Read the deploy notes and the runbook of the service. ".repeat(4);
    let body = format!(
        "# Session: set up the project notes\n\nClaude Code session `old`: 2 requests, 0 tool \
         calls.\n\n## Requests\n\n- set up the project notes\n- {steps}Note for this project: we \
         use pnpm, never npm, and the staging server address is stage-7.example.net on port \
         8443.\n"
    );
    let file = crate::util::memory("session-old", "episodic", 5, "2026-11-29T10:00:00Z", &body)
        .replace("---\n# Session", "source: session/old\n---\n# Session");
    repo.write(".memory/sessions/session-old.md", file);
    let start = context(&repo, "SessionStart", "s1", r#","source":"startup""#);
    let cut = line_of(&start, "session-old");
    assert!(cut.ends_with("`get session-old` for the rest") && !cut.contains("8443"), "{start}");
    let ask = r#","prompt":"what is the staging server address","prompt_id":"p1""#;
    let prompt = context_in(&repo, 2000, "UserPromptSubmit", "s1", ask);
    let rest = line_of(&prompt, "session-old");
    assert!(rest.ends_with("stage-7.example.net on port 8443."), "{prompt}");
    let (_, sent) = cut.split_once("): then asked: ").unwrap();
    let sent = sent.trim_end_matches("`get session-old` for the rest").trim_end();
    let went_on = rest.strip_prefix("- the rest of `session-old`: …").expect(&prompt);
    assert!(!went_on.contains(sent.trim_end_matches('…')), "{cut}\n{rest}");
    assert_eq!(
        format!("{} {went_on}", sent.trim_end_matches('…')),
        format!(
            "{}Note for this project: we use pnpm, never npm, and the staging server address is stage-7.example.net on port 8443.",
            steps
        ),
        "the two lines give the request once"
    );
    let again = r#","prompt":"what is the staging server address again","prompt_id":"p2""#;
    assert_eq!(context_in(&repo, 2000, "UserPromptSubmit", "s1", again), "");
}

/// Issue #39, item 5: `mem session show` gives each memory sent with its title (none for a
/// memory since deleted) and whether it went whole or cut, and each turn's totals.
#[test]
fn session_show_gives_titles_whole_or_cut_and_each_turns_totals() {
    let (repo, id) = project_with(&long_fact(8));
    let added = repo.mem_in(".", &["add", "--type", "semantic", "--importance", "9", FACT], "");
    let fact = added.ok().split('\t').next().unwrap().to_string();
    context(&repo, "SessionStart", "s1", r#","source":"startup""#);
    context_in(&repo, 2000, "UserPromptSubmit", "s1", &staging("p1"));
    std::fs::remove_file(repo.path().join(format!(".memory/{fact}.md"))).unwrap();

    let shown = repo.mem_in(".", &["session", "show", "s1"], "").ok().to_string();
    let lines: Vec<&str> = shown.lines().collect();
    let member = |prefix: &str| -> Vec<&str> {
        lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("{shown}"))
            .split('\t')
            .collect()
    };
    let json = repo.mem_in(".", &["session", "show", "s1", "--json"], "").json();
    let entries = json.as_array().unwrap();
    let start = &entries[0]["memories"];
    assert_eq!(entries[0]["event"], "SessionStart", "{json}");
    let chars = |i: usize| start[i]["chars"].as_u64().unwrap();
    assert_eq!(
        member(&format!("    {fact}\t")),
        [&format!("    {fact}"), "whole", &format!("{} chars", chars(0))]
    );
    let cut = member(&format!("    {id}\tcut\t"));
    assert_eq!(
        cut[3],
        "The staging server is reached through a bastion. Words about the deploy process go here, step after step. Words about…",
        "{shown}"
    );
    assert!(shown.contains(&format!("    {id}\twhole\t")), "{shown}");
    let total =
        format!("turn 0\t-\tinjected total\t2 memories (1 cut), {} chars\n", chars(0) + chars(1));
    assert!(shown.contains(&total), "{shown}");
    assert!(shown.contains("turn 1\t-\tinjected total\t1 memories (0 cut), "), "{shown}");
    // The totals come after the turn's injections.
    let at = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap();
    assert!(at("turn 0\t-\tinjected total") > at(&format!("    {id}\tcut")), "{shown}");

    assert_eq!(start[0]["memory"], fact.as_str(), "{json}");
    assert_eq!((start[0]["title"].is_null(), start[0]["cut"].as_bool()), (true, Some(false)));
    assert_eq!(start[1]["title"].as_str().map(|t| t.starts_with("The staging server")), Some(true));
    assert_eq!(start[1]["cut"], true, "{json}");
    let totals: Vec<&serde_json::Value> =
        entries.iter().filter(|e| e["kind"] == "injected_total").collect();
    assert_eq!(totals.len(), 2, "{json}");
    assert_eq!((totals[0]["turn"].as_i64(), totals[0]["memories"].as_u64()), (Some(0), Some(2)));
    assert_eq!(
        (totals[0]["cut"].as_u64(), totals[0]["chars"].as_u64()),
        (Some(1), Some(chars(0) + chars(1)))
    );
    assert_eq!((totals[1]["turn"].as_i64(), totals[1]["cut"].as_u64()), (Some(1), Some(0)));
}
