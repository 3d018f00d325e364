//! Memories checked against the code they cite, with the real agents (see
//! `tests/agents_e2e.rs`): in a project whose history deletes one cited file and renames
//! another after the memories were written, each agent's first model request holds both
//! memories with their "may be outdated" notes right after their headers; after `mem verify
//! --fix`, a new session's request holds the renamed memory with its new path and no note.

use std::process::Command;

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use crate::agents_e2e::{Project, StandIn, agents};

/// A memory citing a file that a later commit deletes.
const COOKIE: &str = "The session cookie is set in backend/app/auth.py";
/// A memory citing a file that a later commit renames.
const RETRY: &str = "The retry logic lives in `worker/retry.ts`";
/// The same after `mem verify --fix`.
const RETRY_FIXED: &str = "The retry logic lives in `worker/backoff/retry.ts`";
/// The note of the renamed file.
const MOVED: &str = "may be outdated: worker/retry.ts moved to worker/backoff/retry.ts";
/// What the agent is asked (the session start brings the memories either way).
const PROMPT: &str = "where is the session cookie set, and where is the retry logic";

/// Git in the project with nothing of the user's (no configuration, no identity); its commits
/// dated `date` when given. Returns its output.
fn git(project: &Project, date: Option<&str>, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", project.home.path())
        .env("LANG", "C.UTF-8")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .current_dir(project.repo());
    if let Some(date) = date {
        cmd.env("GIT_AUTHOR_DATE", date).env("GIT_COMMITTER_DATE", date);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The ids of the two memories and the note the deleted file's memory should carry.
struct History {
    cookie: String,
    retry: String,
    deleted: String,
}

/// Commits `backend/app/auth.py` and `worker/retry.ts`, writes a memory about each with
/// `mem add` (created now, after that commit), then commits the deletion of the first a minute
/// after the memories' creation and the rename of the second two minutes after.
fn history(project: &Project) -> History {
    let repo = project.repo();
    std::fs::create_dir_all(repo.join("backend/app")).unwrap();
    std::fs::write(repo.join("backend/app/auth.py"), "def issue_session(user):\n    return 1\n")
        .unwrap();
    std::fs::create_dir_all(repo.join("worker/backoff")).unwrap();
    std::fs::write(repo.join("worker/retry.ts"), "export function retry(job) {\n  return 1;\n}\n")
        .unwrap();
    git(project, None, &["add", "backend", "worker"]);
    git(project, None, &["commit", "-qm", "auth and retry"]);
    let add = |text: &str| {
        let out = project.mem_ok(&["add", "--type", "semantic", "--importance", "8", text]);
        out.split('\t').next().unwrap().to_string()
    };
    let cookie = add(COOKIE);
    let retry = add(RETRY);
    let listed: Value = serde_json::from_str(&project.mem_ok(&["list", "--json"])).unwrap();
    let created: Timestamp = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["created"].as_str().unwrap().parse::<Timestamp>().unwrap())
        .max()
        .unwrap();
    let deleted_at = created + SignedDuration::from_secs(60);
    let renamed_at = created + SignedDuration::from_secs(120);
    let date = |t: Timestamp| format!("@{} +0000", t.as_second());
    git(project, Some(&date(deleted_at)), &["rm", "-q", "backend/app/auth.py"]);
    git(project, Some(&date(deleted_at)), &["commit", "-qm", "delete auth"]);
    git(project, Some(&date(renamed_at)), &["mv", "worker/retry.ts", "worker/backoff/retry.ts"]);
    git(project, Some(&date(renamed_at)), &["commit", "-qm", "move retry"]);
    let commit = git(project, None, &["rev-parse", "HEAD~1"]);
    let (commit, day) = (&commit.trim()[..7], deleted_at.strftime("%Y-%m-%d"));
    let deleted = format!("may be outdated: backend/app/auth.py was deleted in {commit} on {day}");
    History { cookie, retry, deleted }
}

/// Every line of the strings of a request's JSON body that holds the header of the memory
/// `id` (its line of a mem context block), as the agent sent it.
fn lines_of(body: &str, id: &str) -> Vec<String> {
    let header = format!("`{id}`)");
    let value: Value = serde_json::from_str(body).unwrap();
    let mut stack = vec![&value];
    let mut found = Vec::new();
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                found.extend(s.lines().filter(|l| l.contains(&header)).map(String::from));
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    found
}

/// The checks, for an agent whose session (one prompt, against a stand-in) is `session`.
fn notes_reach_the_model_and_fix_clears_the_rename(
    project: &Project,
    session: impl Fn(&StandIn, &str),
) {
    let history = history(project);
    let verified = project.mem(&["verify"]);
    assert_eq!(verified.code, 1, "something is gone or moved: {verified:?}");

    let model = StandIn::start(json!({ "text": "In backend/app/auth.py." }));
    session(&model, PROMPT);
    let first = &model.conversation()[0];
    let cookie = lines_of(first, &history.cookie);
    assert!(!cookie.is_empty(), "the deleted file's memory reached the model: {first}");
    for line in &cookie {
        let expected = format!(
            "**{COOKIE}** (semantic, importance 8, `{}`) **({})**",
            history.cookie, history.deleted
        );
        assert!(line.contains(&expected), "{expected}\nnot in: {line}");
    }
    let retry = lines_of(first, &history.retry);
    assert!(!retry.is_empty(), "the renamed file's memory reached the model: {first}");
    for line in &retry {
        let expected =
            format!("**{RETRY}** (semantic, importance 8, `{}`) **({MOVED})**", history.retry);
        assert!(line.contains(&expected), "{expected}\nnot in: {line}");
    }

    let fixed = project.mem_ok(&["verify", "--fix"]);
    assert!(fixed.contains(&format!("+{RETRY_FIXED}")), "{fixed}");
    assert!(!fixed.contains("auth.py"), "a deleted file is left to the memory's author: {fixed}");

    let model = StandIn::start(json!({ "text": "In worker/backoff/retry.ts." }));
    session(&model, PROMPT);
    let first = &model.conversation()[0];
    let retry = lines_of(first, &history.retry);
    assert!(!retry.is_empty(), "the fixed memory reached the model: {first}");
    for line in &retry {
        let expected = format!("**{RETRY_FIXED}** (semantic, importance 8, `{}`)", history.retry);
        assert!(line.contains(&expected), "{expected}\nnot in: {line}");
        assert!(!line.contains("may be outdated"), "{line}");
    }
    let cookie = lines_of(first, &history.cookie);
    assert!(!cookie.is_empty(), "{first}");
    assert!(cookie.iter().all(|l| l.contains(&history.deleted)), "still flagged: {cookie:?}");
}

#[test]
fn claude_code_is_told_which_memories_may_be_outdated() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    notes_reach_the_model_and_fix_clears_the_rename(&project, |model, prompt| {
        project.claude(model, prompt, &[]);
    });
}

#[test]
fn codex_is_told_which_memories_may_be_outdated() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "codex"]);
    assert_eq!(project.trust_codex_hooks(), 3);
    notes_reach_the_model_and_fix_clears_the_rename(&project, |model, prompt| {
        project.codex(model, prompt);
    });
}

#[test]
fn gemini_is_told_which_memories_may_be_outdated() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "gemini"]);
    notes_reach_the_model_and_fix_clears_the_rename(&project, |model, prompt| {
        project.gemini(model, prompt, &[]);
    });
}
