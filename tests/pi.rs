//! pi without the real agent (tests/pi_e2e.rs runs it): a session file of pi's, a tree with a
//! branch left behind, captured as the branch kept, then again once the session went on with
//! another; a hostile session file; `mem setup pi` at both scopes, `--dry-run` and `--remove`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::{Dir, memory};

/// A session id of pi's form.
const SESSION: &str = "01a24fca-707f-755c-88ea-93bf7daa0167";

/// A repository with a memory root and one memory.
fn project(dir: &Dir) -> PathBuf {
    std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
    dir.write("repo/.memory/mem.toml", "");
    let body = "The deploy script is ops/deploy.sh and it needs STAGE set.\n";
    dir.write(
        "repo/.memory/deploy.md",
        memory("deploy", "semantic", 6, "2026-11-01T10:00:00Z", body),
    );
    dir.path().join("repo")
}

/// The session file of [`SESSION`] in the test's home folder, in pi's folder for `repo`.
fn session_file(dir: &Dir, repo: &Path) -> PathBuf {
    let folder = repo.display().to_string().trim_start_matches('/').replace(['/', '\\', ':'], "-");
    dir.home()
        .join(".pi/agent/sessions")
        .join(format!("--{folder}--"))
        .join(format!("2026-11-30T11-59-00-000Z_{SESSION}.jsonl"))
}

fn entry(id: &str, parent: &str, message: Value) -> String {
    let parent = if parent.is_empty() { Value::Null } else { json!(parent) };
    json!({ "type": "message", "id": id, "parentId": parent,
            "timestamp": "2026-11-30T11:59:01.000Z", "message": message })
    .to_string()
        + "\n"
}

fn user(text: &str) -> Value {
    json!({ "role": "user", "content": [{ "type": "text", "text": text }], "timestamp": 1 })
}

fn answer(text: &str) -> Value {
    json!({ "role": "assistant", "content": [{ "type": "text", "text": text }],
            "provider": "standin", "model": "stand-in", "stopReason": "stop", "timestamp": 2 })
}

/// A session as pi 0.73.1 writes it (shapes from its runs here): the header, the model, a
/// prompt with a shell call, its result and the answer; then a prompt and an answer that the
/// user went back from (`/tree`) to the first answer.
fn session(repo: &Path) -> String {
    let mut text = json!({ "type": "session", "version": 3, "id": SESSION,
                           "timestamp": "2026-11-30T11:59:00.000Z", "cwd": repo })
    .to_string()
        + "\n";
    text += &(json!({ "type": "model_change", "id": "m0", "parentId": null,
                      "timestamp": "2026-11-30T11:59:00.100Z", "provider": "standin",
                      "modelId": "stand-in" })
    .to_string()
        + "\n");
    text += &entry("u1", "m0", user("run the deploy dry run"));
    let call = json!({ "role": "assistant", "model": "stand-in", "content": [
        { "type": "toolCall", "id": "call_1", "name": "bash",
          "arguments": { "command": "ops/deploy.sh --dry-run" } }] });
    text += &entry("a1", "u1", call);
    let result = json!({ "role": "toolResult", "toolCallId": "call_1", "toolName": "bash",
                         "content": [{ "type": "text", "text": "dry run ok" }], "isError": false });
    text += &entry("r1", "a1", result);
    text += &entry("a2", "r1", answer("The dry run passed."));
    text += &entry("u2", "a2", user("deploy it to staging with npm run deploy"));
    text += &entry("a3", "u2", answer("Noted: npm."));
    text
}

/// The same session gone on from the first answer: the branch the user kept.
fn kept(repo: &Path) -> String {
    session(repo)
        + &entry("u3", "a2", user("deploy it to staging with pnpm run deploy"))
        + &entry("a4", "u3", answer("Noted: pnpm."))
}

/// The payload of mem's extension on pi's `agent_end`, sent at second `at` (a call the same as
/// one before is one call: it acts once).
fn payload(repo: &Path, at: u8) -> String {
    json!({ "hook_event_name": "agent_end", "session_id": SESSION, "cwd": repo,
            "timestamp": format!("2026-11-30T11:59:{at:02}.000Z") })
    .to_string()
}

fn prompts(dir: &Dir) -> Vec<String> {
    let shown = dir.mem_in("repo", &["session", "show", SESSION, "--json"], "");
    let events: Value = serde_json::from_str(&shown.stdout).expect(&shown.stderr);
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "prompt")
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_pi_session_is_captured_as_the_branch_the_user_kept() {
    let dir = Dir::new();
    let repo = project(&dir);
    let file = session_file(&dir, &repo);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, session(&repo)).unwrap();
    let out = dir.mem_in("repo", &["capture", "--hook", "pi"], payload(&repo, 1));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let digest = dir.read(&format!("repo/.memory/sessions/session-{SESSION}.md"));
    assert!(digest.contains("run the deploy dry run"), "{digest}");
    assert!(digest.contains("ops/deploy.sh --dry-run"), "{digest}");
    assert!(digest.contains("npm run deploy"), "{digest}");
    // The user went back to the first answer and on with another prompt: the digest is that
    // branch; the one left behind is no longer what the session did.
    std::fs::write(&file, kept(&repo)).unwrap();
    let out = dir.mem_in("repo", &["capture", "--hook", "pi"], payload(&repo, 2));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let digest = dir.read(&format!("repo/.memory/sessions/session-{SESSION}.md"));
    assert!(digest.contains("pnpm run deploy") && digest.contains("Noted: pnpm."), "{digest}");
    assert!(!digest.contains("with npm run") && !digest.contains("Noted: npm."), "{digest}");
    // The log holds each prompt once, the kept branch's first one not again.
    assert_eq!(
        prompts(&dir),
        [
            "run the deploy dry run",
            "deploy it to staging with npm run deploy",
            "deploy it to staging with pnpm run deploy"
        ]
    );
    let list = dir.mem_in("repo", &["session", "list", "--json"], "");
    let sessions: Value = serde_json::from_str(&list.stdout).expect(&list.stderr);
    assert_eq!(sessions[0]["agent"], "pi", "{sessions}");
    // mem's copy of the branch is its own, readable by its owner only.
    let copy = repo.join(format!(".memory/.mem/transcripts/pi/{SESSION}.jsonl"));
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
    // Counted by health, and nothing missed.
    let health = dir.mem_in("repo", &["health", "--transcripts", "--json"], "");
    let coverage: Value = serde_json::from_str(&health.stdout).expect(&health.stderr);
    let coverage = coverage.to_string();
    assert!(coverage.contains("\"found\":1") && coverage.contains("\"captured\":1"), "{coverage}");
}

#[test]
fn a_pi_session_missed_is_found_and_captured() {
    let dir = Dir::new();
    let repo = project(&dir);
    let file = session_file(&dir, &repo);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, kept(&repo)).unwrap();
    let health = dir.mem_in("repo", &["health", "--transcripts"], "");
    assert!(health.stdout.contains("0/1 local sessions captured"), "{}", health.stdout);
    assert!(health.stdout.contains("not captured pi"), "{}", health.stdout);
    let out = dir.mem_in("repo", &["capture", "--missed"], "");
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let health = dir.mem_in("repo", &["health", "--transcripts"], "");
    assert!(health.stdout.contains("1/1 local sessions captured"), "{}", health.stdout);
}

/// Hostile: a session file that is a FIFO (it would wait for a writer) is read by nobody, and
/// the capture says so; lines of garbage and a parent loop do not stop the rest.
#[test]
fn a_hostile_pi_session_file_is_refused_or_read_bounded() {
    let dir = Dir::new();
    let repo = project(&dir);
    let file = session_file(&dir, &repo);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let status = std::process::Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(status.success());
    let out = dir.mem_in("repo", &["capture", "--hook", "pi"], payload(&repo, 3));
    assert_eq!(out.code, 0, "a hook never fails the agent: {}", out.stderr);
    let log = dir.read("repo/.memory/.mem/capture.log");
    assert!(log.contains("not a regular file") || log.contains("FIFO"), "{log}");
    let health = dir.mem_in("repo", &["health", "--transcripts", "--json"], "");
    let health: Value = serde_json::from_str(&health.stdout).expect(&health.stderr);
    assert!(health.to_string().contains("\"found\":0"), "{health}");
    std::fs::remove_file(&file).unwrap();
    let mut text = session(&repo);
    text.insert_str(text.find('\n').unwrap() + 1, "not json at all\n\u{0}\u{1}{{{\n");
    text += &entry("x1", "x2", user("a loop"));
    text += &entry("x2", "x1", user("the other half"));
    std::fs::write(&file, text).unwrap();
    let out = dir.mem_in("repo", &["capture", "--hook", "pi"], payload(&repo, 4));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let log = dir.read("repo/.memory/.mem/capture.log");
    assert!(log.lines().last().unwrap().contains("\"status\":\"ok\""), "{log}");
    let digest = dir.read(&format!("repo/.memory/sessions/session-{SESSION}.md"));
    // The last entry's branch is the loop: each of its entries read once, the walk ended.
    assert_eq!(digest.matches("- a loop").count(), 1, "{digest}");
    assert_eq!(digest.matches("- the other half").count(), 1, "{digest}");
}

/// The files of a folder, by path relative to it, with their bytes (`.git` and `.memory` left
/// out); the end-to-end tests compare with it too.
pub(crate) fn files(top: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    let mut stack = vec![top.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(top).unwrap().display().to_string();
            if rel == ".git" || rel == ".memory" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                found.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn setup_pi_writes_its_extension_at_both_scopes_and_remove_takes_exactly_it() {
    let dir = Dir::new();
    let repo = project(&dir);
    // The user's own extension and settings beside mem's.
    dir.write("repo/.pi/extensions/mine.ts", "export default function () {}\n");
    dir.write("repo/.pi/settings.json", "{ \"theme\": \"dark\" }\n");
    let before = files(&repo);
    let dry = dir.mem_in("repo", &["setup", "pi", "--dry-run"], "");
    assert!(dry.stdout.contains("dry run: nothing written"), "{}", dry.stdout);
    assert_eq!(files(&repo), before);
    let out = dir.mem_in("repo", &["setup", "pi"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("set up mem in pi"), "{}", out.stdout);
    let text = dir.read("repo/.pi/extensions/mem.ts");
    assert!(text.starts_with("// mem's extension for pi"), "{text}");
    assert!(text.contains("const MEM = \"mem\";") && text.contains("const FLAG = [];"), "{text}");
    let again = dir.mem_in("repo", &["setup", "pi"], "");
    assert!(again.stdout.contains("pi is already set up"), "{}", again.stdout);
    // Not twice: a user-scope setup over the project's is refused.
    let user = dir.mem_in("repo", &["setup", "pi", "--scope", "user"], "");
    assert_eq!(user.code, 2, "{}", user.stdout);
    assert!(user.stderr.contains("already set up at project scope"), "{}", user.stderr);
    let health = dir.mem_in("repo", &["health"], "");
    assert!(health.stdout.contains("1 commands in the agents' configuration"), "{}", health.stdout);
    let out = dir.mem_in("repo", &["setup", "pi", "--remove"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(files(&repo), before, "every file as it was, byte for byte");

    // The user's scope: pi's folder, the absolute mem, --user-scope.
    let out = dir.mem_in("repo", &["setup", "pi", "--scope", "user"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ext = dir.home().join(".pi/agent/extensions/mem.ts");
    let text = std::fs::read_to_string(&ext).unwrap();
    assert!(text.contains("const FLAG = [\"--user-scope\"];"), "{text}");
    assert!(!text.contains("const MEM = \"mem\";"), "the absolute executable: {text}");
    let out = dir.mem_in("repo", &["setup", "pi", "--scope", "user", "--remove"], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!ext.exists());
    // A file of that name that is not mem's is the user's: kept, and setup stops.
    std::fs::write(&ext, "// my own mem.ts\n").unwrap();
    let out = dir.mem_in("repo", &["setup", "pi", "--scope", "user"], "");
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("did not write it"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&ext).unwrap(), "// my own mem.ts\n");
}
