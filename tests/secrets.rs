//! Issue #52, item 2: a secret given to `mem add`, MCP `remember`, an agent's own memory or an
//! OpenCode session is in no file mem writes and in no context it sends; the user's own
//! patterns are redacted the same way.

use std::path::Path;

use serde_json::json;

use crate::mcp::Server;
use crate::util::Dir;

/// A GitHub token of the form the built-in rules know.
const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ987654";

/// Every file under `dir`, with its text (lossy), for a search of what was written.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                out.push((
                    path.display().to_string(),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    out
}

/// The files under `dir` that hold `secret`.
fn holding(dir: &Path, secret: &str) -> Vec<String> {
    files(dir).into_iter().filter(|(_, text)| text.contains(secret)).map(|(p, _)| p).collect()
}

/// A project with a memory root, in `repo/` of `dir`.
fn project(dir: &Dir) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
    dir.write("repo/.memory/mem.toml", "");
    dir.path().join("repo")
}

/// A session start payload of `agent`'s hook in `repo`.
fn start(repo: &Path, session: &str) -> String {
    json!({ "hook_event_name": "SessionStart", "session_id": session, "cwd": repo,
            "source": "startup" })
    .to_string()
}

#[test]
fn a_token_given_to_add_or_remember_is_kept_and_sent_redacted() {
    let dir = Dir::new();
    let repo = project(&dir);
    let text = format!("Deploy with GITHUB_TOKEN={TOKEN} from the release branch");
    let out = dir.mem_in("repo", &["add", "--importance", "9", &text], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut server = Server::start_in(&dir, "repo");
    server.initialize();
    let remembered = server.ok(
        "remember",
        json!({ "text": format!("The CI reads the key aws_secret_access_key={TOKEN}x from vault") }),
    );
    assert!(remembered["id"].is_string(), "{remembered}");
    server.finish();
    assert_eq!(holding(&repo, TOKEN), Vec::<String>::new());
    let memories: String = files(&repo.join(".memory"))
        .into_iter()
        .filter(|(p, _)| p.ends_with(".md"))
        .map(|(_, t)| t)
        .collect();
    assert!(memories.contains("[REDACTED:"), "{memories}");
    assert!(memories.contains("from the release branch"), "{memories}");
    let context = dir.mem_in("repo", &["context", "--hook", "claude"], start(&repo, "s1"));
    assert!(context.stdout.contains("from the release branch"), "{}", context.stdout);
    assert!(!context.stdout.contains(TOKEN), "{}", context.stdout);
}

#[test]
fn a_token_in_an_agents_own_memory_reaches_no_other_agent() {
    let dir = Dir::new();
    let repo = project(&dir);
    let folder = crate::native::claude_memory_folder(dir.home(), &repo);
    std::fs::create_dir_all(&folder).unwrap();
    let note = format!(
        "---\nname: deploy\ndescription: how we deploy\ntype: project\n---\nDeploy with \
         GITHUB_TOKEN={TOKEN} from the release branch.\n"
    );
    std::fs::write(folder.join("deploy.md"), note).unwrap();
    std::fs::write(folder.join("MEMORY.md"), "- [Deploy](deploy.md) — how we deploy\n").unwrap();
    let prompt = json!({ "hook_event_name": "UserPromptSubmit", "session_id": "c1", "cwd": repo,
                         "prompt": "how do we deploy from the release branch" });
    let context = dir.mem_in("repo", &["context", "--hook", "codex"], prompt.to_string());
    assert!(context.stdout.contains("release branch"), "{} {}", context.stdout, context.stderr);
    assert!(!context.stdout.contains(TOKEN), "{}", context.stdout);
    assert_eq!(holding(&repo, TOKEN), Vec::<String>::new());
}

#[test]
fn an_opencode_session_is_kept_redacted_and_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = Dir::new();
    let repo = project(&dir);
    let data = dir.home().join(".local/share/opencode");
    std::fs::create_dir_all(&data).unwrap();
    let conn = rusqlite::Connection::open(data.join("opencode.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text,
           directory text NOT NULL, version text NOT NULL, time_created integer NOT NULL);
         CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
         CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL,
           time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);",
    )
    .unwrap();
    let at = 1_796_323_137_000_i64;
    conn.execute(
        "INSERT INTO session VALUES ('ses_t', 'p', NULL, ?1, '1.18.33', ?2)",
        rusqlite::params![repo.to_str().unwrap(), at],
    )
    .unwrap();
    let messages = [
        ("msg_1", json!({ "role": "user", "time": { "created": at } })),
        (
            "msg_2",
            json!({ "role": "assistant", "time": { "created": at + 1000, "completed": at + 2000 } }),
        ),
    ];
    for (id, data) in messages {
        conn.execute(
            "INSERT INTO message VALUES (?1, 'ses_t', ?2, ?2, ?3)",
            rusqlite::params![id, at, data.to_string()],
        )
        .unwrap();
    }
    let command = format!("curl -H 'Authorization: token {TOKEN}' https://api.example.invalid");
    let parts = [
        (
            "prt_1",
            "msg_1",
            json!({ "type": "text", "text": format!("use the token {TOKEN} to call the API") }),
        ),
        (
            "prt_2",
            "msg_2",
            json!({ "type": "tool", "tool": "bash", "callID": "t1", "state": {
            "status": "completed", "input": { "command": command }, "output": "ok",
            "metadata": { "exit": 0 } } }),
        ),
        ("prt_3", "msg_2", json!({ "type": "text", "text": "Done." })),
    ];
    for (id, message, data) in parts {
        conn.execute(
            "INSERT INTO part VALUES (?1, ?2, 'ses_t', ?3, ?3, ?4)",
            rusqlite::params![id, message, at, data.to_string()],
        )
        .unwrap();
    }
    drop(conn);
    let payload = json!({ "hook_event_name": "session.idle", "session_id": "ses_t", "cwd": repo });
    let out = dir.mem_in("repo", &["capture", "--hook", "opencode"], payload.to_string());
    assert_eq!(out.code, 0, "{}", out.stderr);
    let copy = repo.join(".memory/.mem/transcripts/opencode/ses_t.jsonl");
    let text = std::fs::read_to_string(&copy).unwrap();
    assert!(text.contains("[REDACTED:") && text.contains("to call the API"), "{text}");
    assert_eq!(std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
    let folder = copy.parent().unwrap();
    assert_eq!(std::fs::metadata(folder).unwrap().permissions().mode() & 0o777, 0o700);
    assert_eq!(holding(&repo, TOKEN), Vec::<String>::new());
}

#[test]
fn the_users_own_patterns_are_redacted_like_the_built_in_ones() {
    let dir = Dir::new();
    let repo = project(&dir);
    dir.write_user_config("[redact]\npatterns = ['ACME-\\d{6}', 'customer (?P<secret>Globex)']\n");
    let text = "Ticket ACME-123456 came from customer Globex about the export";
    let out = dir.mem_in("repo", &["add", text], "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let memories: Vec<String> = holding(&repo.join(".memory"), "[REDACTED:user]")
        .into_iter()
        .filter(|p| p.ends_with(".md"))
        .collect();
    assert_eq!(memories.len(), 1, "{memories:?}");
    assert_eq!(holding(&repo, "ACME-123456"), Vec::<String>::new());
    assert_eq!(holding(&repo, "Globex"), Vec::<String>::new());
    // A pattern that is not an expression is named, and stops the command.
    dir.write_user_config("[redact]\npatterns = ['ACME-(']\n");
    let out = dir.mem_in("repo", &["add", "anything else"], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("[redact] pattern \"ACME-(\""), "{}", out.stderr);
}

/// A secret written into a memory file by hand (or by an older mem) is reported by `mem health`
/// with the command that replaces it; `mem redact` does, and health is clean again.
#[test]
fn health_reports_secrets_in_memory_files_and_redact_replaces_them() {
    let dir = Dir::new();
    let repo = project(&dir);
    let body = format!("The deploy key is GITHUB_TOKEN={TOKEN} for the release job.\n");
    dir.write(
        "repo/.memory/deploy.md",
        crate::util::memory("deploy", "semantic", 6, "2026-11-01T10:00:00Z", &body),
    );
    let health = dir.mem_in("repo", &["health"], "");
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("✗ secrets"), "{}", health.stdout);
    assert!(health.stdout.contains("`mem redact` replaces them"), "{}", health.stdout);
    assert!(health.stdout.contains("deploy.md (1)"), "{}", health.stdout);
    let dry = dir.mem_in("repo", &["redact", "--dry-run"], "");
    assert!(dry.stdout.contains("would redact\t1 secret\tdeploy.md"), "{}", dry.stdout);
    assert!(dir.read("repo/.memory/deploy.md").contains(TOKEN), "a dry run writes nothing");
    let done = dir.mem_in("repo", &["redact"], "");
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(done.stdout.contains("redacted\t1 secret\tdeploy.md"), "{}", done.stdout);
    let text = dir.read("repo/.memory/deploy.md");
    assert!(!text.contains(TOKEN) && text.contains("for the release job"), "{text}");
    assert!(text.starts_with("---\nid: deploy\n"), "the front-matter is kept: {text}");
    assert_eq!(holding(&repo, TOKEN), Vec::<String>::new(), "the index too");
    let health = dir.mem_in("repo", &["health"], "");
    assert!(!health.stdout.contains("secrets"), "{}", health.stdout);
    assert_eq!(health.code, 0, "{}", health.stdout);
}
