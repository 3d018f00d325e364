//! Memories checked against the code they cite, through the binary: `mem verify`, `recall
//! --json`, the context hook, the MCP recall tool, the ranking, `--fix`, `--confirm`, health
//! and prune, and the bad inputs (paths out of the repository, a clone's git configuration).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Dir, memory, run};

/// Runs git in `dir` with a fixed identity and the commit dates of `day` (October 2026).
pub(crate) fn git(dir: &Path, day: u32, args: &[&str]) {
    let date = format!("2026-10-{day:02}T12:00:00Z");
    let out = run(Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .current_dir(dir));
    assert_eq!(out.code, 0, "git {args:?}: {}", out.stderr);
}

/// A memory of the project root, written on 2026-10-05 (after the first commit).
pub(crate) fn remember(repo: &Dir, id: &str, kind: &str, body: &str) {
    repo.write(&format!(".memory/{id}.md"), memory(id, kind, 5, "2026-10-05T00:00:00Z", body));
}

/// A repository whose history renames a file, deletes another, removes a function, moves a
/// function to another file and rewrites a third, beside unchanged files; its project root
/// holds a memory about each, and one that cites only things that are not code.
pub(crate) fn history() -> Dir {
    let repo = Dir::new();
    let top = repo.path();
    git(top, 1, &["init", "-q"]);
    repo.write("backend/app/auth.py", "def issue_session(user):\n    return user\n");
    repo.write("backend/app/routes/login.py", "def login():\n    pass\n");
    repo.write("worker/retry.ts", "export function retry(job) {\n  return job.run();\n}\n");
    repo.write("src/billing.py", "def charge(x):\n    return x\n\ndef refund(x):\n    return -x\n");
    repo.write("src/ids.py", "def new_id():\n    return 1\n\ndef other():\n    return 2\n");
    repo.write("src/config.py", "PORT = 80\nHOST = 'a'\n");
    repo.write("src/settings.py", "DATABASE_URL = os.environ[\"DATABASE_URL\"]\n");
    git(top, 1, &["add", "."]);
    git(top, 1, &["commit", "-qm", "first"]);
    repo.mem_in(".", &["init", "--project"], "").ok();
    remember(
        &repo,
        "cookie",
        "semantic",
        "The session cookie is set in backend/app/auth.py by issue_session()",
    );
    remember(&repo, "retry", "semantic", "The retry logic lives in `worker/retry.ts`.");
    remember(&repo, "refund", "procedural", "Refunds go through `refund()` in src/billing.py");
    remember(&repo, "ids", "semantic", "New ids come from `new_id()` in src/ids.py");
    remember(&repo, "config", "semantic", "The port is read in src/config.py at start");
    remember(&repo, "login", "semantic", "Login is handled in routes/login.py by login()");
    remember(
        &repo,
        "tools",
        "semantic",
        "Run `cargo test --all` with `RUST_LOG=debug`; docs at https://example.org/a/b.py; \
         install `serde_json` or `@types/node`; set `DATABASE_URL`; `npm run build`",
    );
    std::fs::create_dir_all(top.join("worker/backoff")).unwrap();
    git(top, 10, &["mv", "worker/retry.ts", "worker/backoff/retry.ts"]);
    git(top, 10, &["commit", "-qm", "rename retry"]);
    git(top, 12, &["rm", "-q", "backend/app/auth.py"]);
    git(top, 12, &["commit", "-qm", "delete auth"]);
    repo.write("src/billing.py", "def charge(x):\n    return x\n");
    git(top, 14, &["commit", "-qam", "drop refund"]);
    repo.write("src/ids.py", "def other():\n    return 2\n");
    repo.write("src/make.py", "def new_id():\n    return 1\n");
    git(top, 15, &["add", "src"]);
    git(top, 15, &["commit", "-qm", "move new_id"]);
    repo.write("src/config.py", "PORT = 8080\nHOST = 'b'\nDEBUG = False\n");
    git(top, 16, &["commit", "-qam", "rewrite config"]);
    repo
}

/// A citation as (path, symbol, status, to).
pub(crate) type Cited = (Value, Value, Value, Value);

/// Each memory's `code_status` and its citations as (path, symbol, status, to), by id.
pub(crate) fn verdicts(items: &Value) -> Vec<(String, Value, Vec<Cited>)> {
    let mut out: Vec<_> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let cites = v["cites"].as_array().unwrap().iter();
            let cites = cites
                .map(|c| {
                    (c["path"].clone(), c["symbol"].clone(), c["status"].clone(), c["to"].clone())
                })
                .collect();
            (v["id"].as_str().unwrap().to_string(), v["code_status"].clone(), cites)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_verdict_through_verify_recall_the_context_hook_and_mcp() {
    let repo = history();
    let out = repo.mem_in("src", &["verify", "--json"], "");
    assert_eq!(out.code, 1, "something is gone or moved: {out:?}");
    let found = verdicts(&out.json_found());
    let expected = vec![
        (
            "config".to_string(),
            json!("changed"),
            vec![(json!("src/config.py"), Value::Null, json!("changed"), Value::Null)],
        ),
        (
            "cookie".to_string(),
            json!("gone"),
            vec![
                (json!("backend/app/auth.py"), Value::Null, json!("gone"), Value::Null),
                (json!("backend/app/auth.py"), json!("issue_session"), json!("gone"), Value::Null),
            ],
        ),
        (
            "ids".to_string(),
            json!("moved"),
            vec![
                (json!("src/ids.py"), Value::Null, json!("changed"), Value::Null),
                (json!("src/ids.py"), json!("new_id"), json!("moved"), json!("src/make.py")),
            ],
        ),
        (
            "login".to_string(),
            json!("current"),
            vec![
                (json!("backend/app/routes/login.py"), Value::Null, json!("current"), Value::Null),
                (
                    json!("backend/app/routes/login.py"),
                    json!("login"),
                    json!("current"),
                    Value::Null,
                ),
            ],
        ),
        (
            "refund".to_string(),
            json!("gone"),
            vec![
                (json!("src/billing.py"), Value::Null, json!("changed"), Value::Null),
                (json!("src/billing.py"), json!("refund"), json!("gone"), Value::Null),
            ],
        ),
        (
            "retry".to_string(),
            json!("moved"),
            vec![(
                json!("worker/retry.ts"),
                Value::Null,
                json!("moved"),
                json!("worker/backoff/retry.ts"),
            )],
        ),
    ];
    assert_eq!(found, expected);
    let listed = out.json_found();
    let cookie = listed.as_array().unwrap().iter().find(|v| v["id"] == "cookie").unwrap();
    assert_eq!(cookie["cites"][0]["date"], "2026-10-12", "{cookie}");
    assert_eq!(cookie["cites"][0]["commit"].as_str().unwrap().len(), 40, "{cookie}");
    assert_eq!(listed[0]["code_status"], "gone", "worst first: {listed}");

    // recall --json: every hit carries its verdict; the memory citing only tools has none.
    let recalled = repo.mem_in("src", &["recall", "--json", "-k", "20", "src"], "").json();
    let tools = repo.mem_in(".", &["recall", "--json", "cargo npm serde_json"], "").json();
    assert_eq!(tools[0]["id"], "tools", "{tools}");
    assert_eq!((&tools[0]["code_status"], &tools[0]["cites"]), (&Value::Null, &json!([])));
    for hit in recalled.as_array().unwrap() {
        let id = hit["id"].as_str().unwrap();
        let (_, status, _) = found.iter().find(|(i, ..)| i == id).unwrap();
        assert_eq!(&hit["code_status"], status, "{hit}");
    }
    let cookie = repo.mem_in(".", &["recall", "--json", "session cookie"], "").json();
    let note = cookie[0]["code_note"].as_str().unwrap();
    assert!(note.starts_with("may be outdated: backend/app/auth.py was deleted in "), "{note}");
    assert!(note.contains(" on 2026-10-12"), "{note}");

    // The context hook: the note goes with the memory, and a current one has none.
    let cwd = repo.path().join("src");
    let payload = json!({
        "session_id": "v1", "hook_event_name": "UserPromptSubmit", "cwd": cwd,
        "prompt": "where is the session cookie set, and how does login work?", "prompt_id": "p1",
    });
    let hook = repo.mem_in("src", &["context", "--hook", "claude"], payload.to_string());
    let answer: Value = serde_json::from_str(hook.ok().trim()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    let line = |text: &str, id: &str| {
        text.lines().find(|l| l.contains(&format!("`{id}`"))).unwrap_or("").to_string()
    };
    let cookie = line(context, "cookie");
    assert!(cookie.contains("(may be outdated: backend/app/auth.py was deleted in "), "{context}");
    let payload = json!({
        "session_id": "v1", "hook_event_name": "UserPromptSubmit", "cwd": cwd,
        "prompt": "how does login work?", "prompt_id": "p2",
    });
    let hook = repo.mem_in("src", &["context", "--hook", "claude"], payload.to_string());
    let answer: Value = serde_json::from_str(hook.ok().trim()).unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    let login = line(context, "login");
    assert!(login.contains("Login is handled") && !login.contains("outdated"), "{context}");

    // The MCP recall tool: the same verdicts and note.
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    let hits = server.ok("recall", json!({ "query": "retry logic", "k": 3 }));
    let retry = &hits["hits"][0];
    assert_eq!((&retry["id"], &retry["code_status"]), (&json!("retry"), &json!("moved")), "{hits}");
    assert_eq!(retry["cites"][0]["to"], "worker/backoff/retry.ts", "{hits}");
    assert!(
        retry["code_note"]
            .as_str()
            .unwrap()
            .contains("worker/retry.ts moved to worker/backoff/retry.ts")
    );
    server.finish();
}

#[test]
fn a_memory_whose_code_is_all_gone_ranks_below_one_that_holds() {
    let repo = history();
    remember(&repo, "cookie2", "semantic", "The session cookie is set in backend/app/session.py");
    repo.write("backend/app/session.py", "def set_cookie():\n    pass\n");
    let hits =
        repo.mem_in(".", &["recall", "--json", "where is the session cookie set"], "").json();
    let order: Vec<&str> =
        hits.as_array().unwrap().iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(&order[..2], ["cookie2", "cookie"], "{hits}");
    assert_eq!(hits[1]["components"]["code"], 0.0, "{hits}");
    assert_eq!(hits[0]["components"]["code"], 1.0, "{hits}");
    let explained = repo.mem_in(".", &["recall", "--explain", "session cookie"], "");
    assert!(explained.ok().contains("backend/app/auth.py was deleted in "), "{}", explained.stdout);
    // A root given with --dir is not checked: no verdict, no demotion.
    let root = repo.path().join(".memory");
    let explicit = |args: &[&str]| {
        let mut cmd = Command::new(crate::util::bin());
        cmd.arg("--dir").arg(&root).args(args).current_dir(repo.path());
        run(crate::util::clean_env(&mut cmd))
    };
    let direct = explicit(&["recall", "--json", "session cookie"]).json();
    assert!(direct.as_array().unwrap().iter().all(|h| h["code_status"].is_null()), "{direct}");
    let refused = explicit(&["verify"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("is not a project root"), "{}", refused.stderr);
}

#[test]
fn fix_rewrites_a_pure_rename_and_nothing_else() {
    let repo = history();
    let dry = repo.mem_in(".", &["verify", "--fix", "--dry-run"], "");
    let diff = dry.ok();
    assert!(diff.contains("-The retry logic lives in `worker/retry.ts`."), "{diff}");
    assert!(diff.contains("+The retry logic lives in `worker/backoff/retry.ts`."), "{diff}");
    // Only the pure rename: a moved symbol or a gone file is left to its author.
    assert!(!diff.contains("new_id") && !diff.contains("auth.py"), "{diff}");
    assert!(repo.read(".memory/retry.md").contains("`worker/retry.ts`"));
    repo.mem_in(".", &["verify", "--fix"], "").ok();
    let text = repo.read(".memory/retry.md");
    assert!(
        text.contains("`worker/backoff/retry.ts`") && !text.contains("`worker/retry.ts`"),
        "{text}"
    );
    let after = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let retry = after.as_array().unwrap().iter().find(|v| v["id"] == "retry").unwrap();
    assert_eq!(retry["code_status"], "current", "{retry}");
    let hits = repo.mem_in(".", &["recall", "--json", "retry logic"], "").json();
    assert!(hits[0].get("code_note").is_none(), "{hits}");
}

#[test]
fn a_confirmation_is_a_usage_event_and_counts_from_then() {
    let repo = history();
    let before = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let config = before.as_array().unwrap().iter().find(|v| v["id"] == "config").unwrap();
    assert_eq!(config["code_status"], "changed");
    repo.mem_in(".", &["verify", "--confirm", "config"], "").ok();
    let usage = std::fs::read_dir(repo.path().join(".memory/usage")).unwrap();
    let text: String = usage.map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap()).collect();
    let line =
        text.lines().find(|l| l.starts_with("confirmed\t")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(line, format!("confirmed\t{}\tconfig", crate::util::NOW));
    // It survives `.mem/` being deleted: it is in the root's usage file.
    std::fs::remove_dir_all(repo.path().join(".memory/.mem")).unwrap();
    let after = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let config = after.as_array().unwrap().iter().find(|v| v["id"] == "config").unwrap();
    assert_eq!(config["code_status"], "current", "{after}");
    let unknown = repo.mem_in(".", &["verify", "--confirm", "nope"], "");
    assert_eq!(unknown.code, 2, "{unknown:?}");
    // The MCP `used` tool confirms too: `refund()` was removed before now, so the memory,
    // checked from now on, cites a file that holds.
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    server.ok("used", json!({ "ids": ["refund"], "confirm": true }));
    server.finish();
    let after = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let refund = after.as_array().unwrap().iter().find(|v| v["id"] == "refund").unwrap();
    assert_eq!(refund["code_status"], "current", "{after}");
}

#[test]
fn health_warns_and_prune_proposes_memories_whose_code_is_gone() {
    let repo = history();
    repo.mem_in(".", &["index"], "").ok();
    let health = repo.mem_in(".", &["health"], "");
    assert!(
        health
            .stdout
            .contains("! code      4 of 6 memories citing code may be outdated (2 gone, 2 moved)"),
        "{}",
        health.stdout
    );
    let health = repo.mem_in(".", &["health", "--json"], "").json_found();
    assert_eq!(health["code"], json!({ "citing": 6, "gone": 2, "moved": 2 }));
    let prune = repo.mem_in(".", &["prune", "--dry-run", "--json"], "").json_found();
    let proposed: Vec<&str> =
        prune.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    // `cookie` cites only what is gone; `refund` also cites a file that is still there.
    assert_eq!(proposed, ["cookie"], "{prune}");
    assert_eq!(prune[0]["reasons"][0]["kind"], "code_gone", "{prune}");
    // Used since: not proposed.
    repo.mem_in(".", &["used", "cookie"], "").ok();
    let prune = repo.mem_in(".", &["prune", "--dry-run", "--json"], "").json_found();
    assert_eq!(prune, json!([]), "{prune}");
}

#[test]
fn paths_out_of_the_repository_are_never_read_and_a_clones_git_config_runs_nothing() {
    let repo = history();
    let outside = Dir::new();
    let fifo = outside.path().join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::os::unix::fs::symlink(&fifo, repo.path().join("src/pipe.py")).unwrap();
    std::os::unix::fs::symlink("../../etc", repo.path().join("src/etc")).unwrap();
    remember(
        &repo,
        "leak",
        "semantic",
        "See src/pipe.py, src/etc/passwd, ../../etc/shadow and /etc/hosts",
    );
    // A configuration a cloned repository could carry: each would run a command.
    let marker = outside.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let config = format!(
        "[core]\n\tfsmonitor = {touch}\n\thooksPath = hooks\n[diff]\n\texternal = {touch}\n\
         [log]\n\tshowSignature = true\n[gpg]\n\tprogram = {touch}\n"
    );
    let mut text = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    text.push_str(&config);
    std::fs::write(repo.path().join(".git/config"), text).unwrap();
    repo.write(".gitattributes", "*.py diff=evil filter=evil\n");
    let mut text = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    text.push_str(&format!(
        "[diff \"evil\"]\n\ttextconv = {touch}\n[filter \"evil\"]\n\tclean = {touch}\n"
    ));
    std::fs::write(repo.path().join(".git/config"), text).unwrap();
    let out = repo.mem_in(".", &["verify", "--json"], "");
    let all = out.json_found();
    let leak = all.as_array().unwrap().iter().find(|v| v["id"] == "leak").unwrap();
    assert_eq!(leak["cites"], json!([]), "{leak}");
    let mut outside: Vec<&str> =
        leak["outside"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
    outside.sort();
    assert_eq!(outside, ["../../etc/shadow", "/etc/hosts", "src/etc/passwd", "src/pipe.py"]);
    assert!(!marker.exists(), "a command of the clone's git configuration ran");
}

#[test]
fn what_cannot_be_checked_is_said_and_recall_goes_on() {
    // No commits yet: the work tree alone.
    let repo = Dir::new();
    git(repo.path(), 1, &["init", "-q"]);
    repo.write("src/app.py", "def run():\n    pass\n");
    repo.mem_in(".", &["init", "--project"], "").ok();
    remember(&repo, "app", "semantic", "The app starts in src/app.py");
    let v = repo.mem_in(".", &["verify", "--json"], "").json_found();
    assert_eq!(v[0]["code_status"], "current", "{v}");
    assert!(v[0]["unchecked"].as_str().unwrap().contains("no commits"), "{v}");
    // git missing: recall still answers, the memory says what was not checked (computed
    // again: the cached verdict would still hold).
    std::fs::remove_file(repo.path().join(".memory/.mem/cites.json")).unwrap();
    let mut cmd = Command::new(crate::util::bin());
    cmd.args(["verify", "--json"]).current_dir(repo.path()).env("PATH", "/nonexistent");
    crate::util::clean_env(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.stdout.contains("git is not on the PATH"), "{out:?}");
    let mut cmd = Command::new(crate::util::bin());
    cmd.args(["recall", "--json", "app starts"])
        .current_dir(repo.path())
        .env("PATH", "/nonexistent");
    crate::util::clean_env(&mut cmd);
    let out = run(&mut cmd);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn the_cached_verdicts_follow_the_work_tree_and_new_commits() {
    let repo = history();
    let status = |id: &str| {
        let all = repo.mem_in(".", &["verify", "--json"], "").json_found();
        let v = all.as_array().unwrap().iter().find(|v| v["id"] == id).cloned();
        v.map_or(Value::Null, |v| v["code_status"].clone())
    };
    assert_eq!(status("login"), "current");
    assert_eq!(status("refund"), "gone");
    // A delete in the work tree counts before its commit, and the commit then names it.
    std::fs::remove_file(repo.path().join("backend/app/routes/login.py")).unwrap();
    assert_eq!(status("login"), "gone");
    git(repo.path(), 20, &["commit", "-qam", "drop login"]);
    let all = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let login = all.as_array().unwrap().iter().find(|v| v["id"] == "login").unwrap();
    assert_eq!(login["cites"][0]["date"], "2026-10-20", "{login}");
    // A symbol gone is looked for again after a commit: defined again, it holds.
    repo.write("src/billing.py", "def charge(x):\n    return x\n\ndef refund(x):\n    return 0\n");
    git(repo.path(), 21, &["commit", "-qam", "refund again"]);
    assert_eq!(status("refund"), "changed");
}

#[test]
fn a_shallow_clone_and_a_linked_worktree_are_checked_as_far_as_they_go() {
    let repo = history();
    let copy_root = |to: &Path| {
        for id in ["cookie", "retry", "login"] {
            let file = format!("{id}.md");
            std::fs::copy(repo.path().join(".memory").join(&file), to.join(".memory").join(&file))
                .unwrap();
        }
    };
    // A linked worktree: its `.git` is a file naming the git folder.
    let linked = Dir::new();
    let wt = linked.path().join("wt");
    git(repo.path(), 22, &["worktree", "add", "-q", "--detach", wt.to_str().unwrap()]);
    assert!(wt.join(".git").is_file());
    std::fs::create_dir(wt.join(".memory")).unwrap();
    // Its own root (a linked worktree shares the main one's by default, docs/teams.md).
    std::fs::write(wt.join(".memory/mem.toml"), "[project]\nper_worktree = true\n").unwrap();
    copy_root(&wt);
    let mut cmd = Command::new(crate::util::bin());
    cmd.args(["verify", "--json"]).current_dir(&wt);
    let out = run(crate::util::clean_env(&mut cmd));
    let found = verdicts(&out.json_found());
    let status: Vec<(&str, &Value)> = found.iter().map(|(id, s, _)| (id.as_str(), s)).collect();
    assert_eq!(
        status,
        [("cookie", &json!("gone")), ("login", &json!("current")), ("retry", &json!("moved"))]
    );
    // A shallow clone: its one commit knows no deletion; what is there is checked, and the
    // verdict says what is not known.
    let shallow = Dir::new();
    let url = format!("file://{}", repo.path().display());
    let to = shallow.path().join("clone");
    git(shallow.path(), 22, &["clone", "-q", "--depth", "1", &url, to.to_str().unwrap()]);
    std::fs::create_dir(to.join(".memory")).unwrap();
    std::fs::write(to.join(".memory/mem.toml"), "").unwrap();
    copy_root(&to);
    let mut cmd = Command::new(crate::util::bin());
    cmd.args(["verify", "--json"]).current_dir(&to);
    let out = run(crate::util::clean_env(&mut cmd)).json_found();
    let login = out.as_array().unwrap().iter().find(|v| v["id"] == "login").unwrap();
    assert_eq!(login["code_status"], "current", "{out}");
    assert!(login["unchecked"].as_str().unwrap().contains("shallow clone"), "{out}");
    let mut cmd = Command::new(crate::util::bin());
    cmd.args(["recall", "--json", "session cookie"]).current_dir(&to);
    assert_eq!(run(crate::util::clean_env(&mut cmd)).code, 0);
}

/// A repository whose first commit (October 1st) holds `files`, with its project root made.
fn committed(files: &[(&str, &str)]) -> Dir {
    let repo = Dir::new();
    git(repo.path(), 1, &["init", "-q"]);
    for (path, text) in files {
        repo.write(path, *text);
    }
    git(repo.path(), 1, &["add", "."]);
    git(repo.path(), 1, &["commit", "-qm", "first"]);
    repo.mem_in(".", &["init", "--project"], "").ok();
    repo
}

/// The only memory's `code_status`, and the name and status of its function's citation.
fn function_verdict(repo: &Dir) -> (Value, Value, Value) {
    let verified = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let (_, status, cites) = verdicts(&verified).remove(0);
    let symbol = cites.into_iter().find(|c| !c.1.is_null());
    let symbol = symbol.unwrap_or_else(|| panic!("no function's citation: {verified}"));
    (status, symbol.1, symbol.2)
}

/// Issue #55, item 1: a leading `_` was stripped from function names, so a memory about a
/// private Python function was checked as the public one of the same name elsewhere, and
/// called moved there.
#[test]
fn a_private_function_is_checked_under_its_own_name() {
    let repo = committed(&[
        ("app/db.py", "def _get_session():\n    return POOL.get()\n"),
        ("tests/test_basic.py", "def get_session():\n    return None\n"),
    ]);
    remember(&repo, "pool", "semantic", "`_get_session()` in app/db.py returns the pooled session");
    let expected = (json!("current"), json!("_get_session"), json!("current"));
    assert_eq!(function_verdict(&repo), expected);
}

/// Issue #55, item 7: the repository's own folder, which a session's digest names, was reported
/// "outside the repository, not checked". It is the repository; a path under it is checked as
/// the path from the top; a path elsewhere is still outside.
#[test]
fn the_repository_s_own_folder_is_not_outside_it() {
    let repo = committed(&[("src/lib.rs", "pub fn ship() {}\n")]);
    let top = repo.path();
    let top = top.display();
    let body = format!("Worked in {top} on {top}/src/lib.rs; the hosts are in /etc/hosts");
    remember(&repo, "session", "episodic", &body);
    let verified = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let session = &verified[0];
    assert_eq!(session["outside"], json!(["/etc/hosts"]), "{verified}");
    assert_eq!(verdicts(&verified)[0].2[0].0, "src/lib.rs", "{verified}");
    assert_eq!(verdicts(&verified)[0].2[0].2, "current", "{verified}");
}

/// Issue #55, item 8: a confirmation answered success, yet recall still said "may be
/// outdated" until `.mem/` was deleted; and a refused confirmation still recorded a use.
#[test]
fn a_confirmation_clears_the_note_at_once_and_a_refused_one_changes_nothing() {
    let repo = history();
    let note = |repo: &Dir| {
        let hits = repo.mem_in(".", &["recall", "--json", "--no-record", "new ids new_id"], "");
        let hits = hits.json();
        let ids = hits.as_array().unwrap().iter().find(|h| h["id"] == "ids").cloned();
        ids.unwrap_or_else(|| panic!("{hits}"))["code_note"].clone()
    };
    assert!(note(&repo).is_string(), "new_id() moved since it was written: a note");
    repo.mem_in(".", &["verify", "--confirm", "ids"], "").ok();
    assert!(note(&repo).is_null(), "confirmed: no note");
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    server.ok("used", json!({ "ids": ["refund"], "confirm": true }));
    let hits = server.list("recall", "hits", json!({ "query": "refunds billing" }));
    let refund = hits.as_array().unwrap().iter().find(|h| h["id"] == "refund").cloned();
    assert!(refund.unwrap_or_else(|| panic!("{hits}")).get("code_note").is_none(), "{hits}");
    server.finish();
    // A confirmation of a user memory (which cites no code) is refused, and no use recorded.
    let user = repo.home().join("me");
    repo.write_user_config(&format!("[layers]\nuser = {:?}\n", user.to_str().unwrap()));
    let added =
        repo.mem_in(".", &["add", "--json", "--layer", "user", "I prefer terse commits"], "");
    let id = added.json()["id"].as_str().unwrap().to_string();
    let mut server = crate::mcp::Server::start_in(&repo, "src");
    server.initialize();
    let refused = server.tool_error("used", json!({ "ids": [id], "confirm": true }));
    assert!(refused.contains("nothing was recorded"), "{refused}");
    server.finish();
    let shown = repo.mem_in(".", &["show", "--json", &id], "").json();
    assert_eq!(shown["access_count"], 0, "{shown}");
}

/// Issue #55, item 2: a removed function read current while its name was still in its file, in
/// a comment or a string.
#[test]
fn a_removed_function_named_in_a_comment_is_gone() {
    let repo = committed(&[(
        "src/auth.py",
        "def refresh_token(user):\n    return user\n\ndef login():\n    pass\n",
    )]);
    let top = repo.path();
    remember(&repo, "tokens", "semantic", "`refresh_token()` in src/auth.py renews the token");
    repo.write(
        "src/auth.py",
        "# refresh_token() was folded into login()\ndef login():\n    log(\"no refresh_token\")\n",
    );
    git(top, 10, &["commit", "-qam", "fold refresh_token"]);
    let expected = (json!("gone"), json!("refresh_token"), json!("gone"));
    assert_eq!(function_verdict(&repo), expected);
}

/// Issue #55, the measurement: a function written in backticks without parentheses
/// (`` `make_context` ``) was never checked (10 of the 10 misses on two real histories); a
/// lowercase word joined as names are now is, while a plain one (`` `retry` ``) still is not.
#[test]
fn a_joined_name_in_backticks_without_parentheses_is_checked() {
    let repo = committed(&[(
        "src/cli.py",
        "def make_context(args):\n    return args\n\ndef retry():\n    pass\n",
    )]);
    let top = repo.path();
    remember(
        &repo,
        "ctx",
        "semantic",
        "`make_context` in src/cli.py builds the context; `retry` too",
    );
    repo.write("src/cli.py", "def build_context(args):\n    return args\n");
    git(top, 10, &["commit", "-qam", "rename make_context"]);
    let expected = (json!("gone"), json!("make_context"), json!("gone"));
    assert_eq!(function_verdict(&repo), expected);
}

/// Issue #55, item 3: a deleted path that is also the tail of other tracked files (a root
/// `README.rst` deleted, `examples/*/README.rst` still there) was never checked.
#[test]
fn a_deleted_path_that_other_files_end_with_is_gone() {
    let repo = committed(&[
        ("README.rst", "Setup: run make\n"),
        ("examples/a/README.rst", "a\n"),
        ("examples/b/README.rst", "b\n"),
    ]);
    let top = repo.path();
    remember(&repo, "setup", "procedural", "The setup steps are in README.rst at the top");
    git(top, 10, &["rm", "-q", "README.rst"]);
    git(top, 10, &["commit", "-qm", "drop the readme"]);
    let verified = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let setup = &verdicts(&verified)[0];
    assert_eq!(setup.1, "gone", "{verified}");
    assert_eq!(
        (&setup.2[0].0, &setup.2[0].2),
        (&json!("README.rst"), &json!("gone")),
        "{verified}"
    );
}

/// The `mem verify --json` entry of the memory `id`.
fn verified(repo: &Dir, id: &str) -> Value {
    let all = repo.mem_in(".", &["verify", "--json"], "").json_found();
    let found = all.as_array().unwrap().iter().find(|v| v["id"] == id).cloned();
    found.unwrap_or_else(|| panic!("no verdict of {id}: {all}"))
}

/// Issue #55, item 5: a path renamed twice named the second rename's commit, not the one that
/// removed the cited path.
#[test]
fn a_path_renamed_twice_names_the_commit_that_renamed_it() {
    let repo = committed(&[("worker/retry.ts", "export function retry() {}\n")]);
    let top = repo.path();
    remember(&repo, "retry", "semantic", "The retry logic lives in `worker/retry.ts`.");
    std::fs::create_dir_all(top.join("worker/backoff")).unwrap();
    git(top, 10, &["mv", "worker/retry.ts", "worker/backoff/retry.ts"]);
    git(top, 10, &["commit", "-qm", "first rename"]);
    std::fs::create_dir_all(top.join("jobs")).unwrap();
    git(top, 12, &["mv", "worker/backoff/retry.ts", "jobs/retry.ts"]);
    git(top, 12, &["commit", "-qm", "second rename"]);
    let retry = verified(&repo, "retry");
    assert_eq!(retry["cites"][0]["to"], "jobs/retry.ts", "{retry}");
    assert_eq!(retry["cites"][0]["date"], "2026-10-10", "{retry}");
}

/// Issue #55, item 5: a function deleted from its file was "moved" into the very memory that
/// cites it (a memory committed with the code holds its definition as a snippet).
#[test]
fn a_memory_is_never_where_a_function_moved_to() {
    let repo = committed(&[("src/auth.py", "def refresh_token(u):\n    return u\n")]);
    let top = repo.path();
    let body = "`refresh_token()` in src/auth.py renews the token:\n\n    def refresh_token(u):\n";
    remember(&repo, "tokens", "semantic", body);
    repo.write("src/auth.py", "def login():\n    pass\n");
    git(top, 10, &["add", "."]);
    git(top, 10, &["commit", "-qm", "drop refresh_token, keep the memories"]);
    let expected = (json!("gone"), json!("refresh_token"), json!("gone"));
    assert_eq!(function_verdict(&repo), expected);
}

/// Issue #55, item 5: a removed function defined in several files was "moved to" whichever
/// `git grep` listed first (a test helper). It moved only to a file that did not define it when
/// the memory was written, a file of its own kind (test or not) first; where every other file
/// defined it already, it is gone from its file.
#[test]
fn a_function_moves_to_a_new_definition_not_to_a_namesake() {
    let repo = committed(&[
        ("src/auth.py", "def refresh_token(u):\n    return u\n\ndef close_session(s):\n    pass\n"),
        ("src/tests/helpers.py", "def refresh_token(u):\n    return None\n"),
        ("src/tests/db.py", "def close_session(s):\n    return None\n"),
    ]);
    let top = repo.path();
    remember(&repo, "tokens", "semantic", "`refresh_token()` in src/auth.py renews the token");
    remember(&repo, "close", "semantic", "`close_session()` in src/auth.py ends a session");
    repo.write("src/auth.py", "def login():\n    pass\n");
    repo.write("src/tokens/refresh.py", "def refresh_token(u):\n    return u\n");
    git(top, 10, &["add", "."]);
    git(top, 10, &["commit", "-qm", "move refresh_token, drop close_session"]);
    let tokens = verified(&repo, "tokens");
    let symbol = tokens["cites"].as_array().unwrap().iter().find(|c| c["symbol"].is_string());
    let symbol = symbol.unwrap_or_else(|| panic!("{tokens}"));
    assert_eq!(
        (&symbol["status"], &symbol["to"]),
        (&json!("moved"), &json!("src/tokens/refresh.py"))
    );
    let close = verified(&repo, "close");
    let symbol = close["cites"].as_array().unwrap().iter().find(|c| c["symbol"].is_string());
    let symbol = symbol.unwrap_or_else(|| panic!("{close}"));
    assert_eq!(symbol["status"], "gone", "{close}");
    assert_eq!(symbol["date"], "2026-10-10", "{close}");
}

/// Issue #55, item 5: after `mem verify --fix` wrote a renamed file's new path into a memory,
/// the file, edited since the memory was written, read current: it is compared with the file
/// it was renamed from, as it was then.
#[test]
fn a_fixed_rename_of_a_file_edited_since_is_changed() {
    let repo = committed(&[("worker/retry.ts", "export function retry() {\n  return 1;\n}\n")]);
    let top = repo.path();
    remember(&repo, "retry", "semantic", "The retry logic lives in `worker/retry.ts`.");
    std::fs::create_dir_all(top.join("worker/backoff")).unwrap();
    git(top, 10, &["mv", "worker/retry.ts", "worker/backoff/retry.ts"]);
    git(top, 10, &["commit", "-qm", "rename"]);
    repo.write("worker/backoff/retry.ts", "export function retry() {\n  return 2;\n}\n");
    git(top, 12, &["commit", "-qam", "edit"]);
    assert_eq!(verified(&repo, "retry")["code_status"], "moved");
    repo.mem_in(".", &["verify", "--fix"], "").ok();
    assert!(repo.read(".memory/retry.md").contains("`worker/backoff/retry.ts`"));
    let fixed = verified(&repo, "retry");
    assert_eq!(fixed["code_status"], "changed", "{fixed}");
    assert_eq!(fixed["cites"][0]["lines"], 2, "{fixed}");
}

/// Issue #55, item 4: a staged `git mv` of a path that history had deleted once before was
/// reported deleted by that old commit, and the cached verdict stayed wrong after the commit.
#[test]
fn a_staged_rename_is_moved_and_its_commit_is_named_once_made() {
    let repo = committed(&[("app/flags.py", "def parse():\n    pass\n")]);
    let top = repo.path();
    git(top, 2, &["rm", "-q", "app/flags.py"]);
    git(top, 2, &["commit", "-qm", "drop flags"]);
    repo.write("app/flags.py", "def parse():\n    return 1\n");
    git(top, 3, &["add", "."]);
    git(top, 3, &["commit", "-qm", "flags again"]);
    remember(&repo, "flags", "semantic", "Flags are parsed in app/flags.py");
    assert_eq!(verified(&repo, "flags")["code_status"], "current");
    git(top, 10, &["mv", "app/flags.py", "app/options.py"]);
    let staged = verified(&repo, "flags");
    assert_eq!(staged["code_status"], "moved", "{staged}");
    assert_eq!(staged["cites"][0]["to"], "app/options.py", "{staged}");
    assert!(staged["cites"][0].get("commit").is_none(), "not committed: {staged}");
    git(top, 11, &["commit", "-qm", "rename flags"]);
    let committed = verified(&repo, "flags");
    assert_eq!(committed["code_status"], "moved", "{committed}");
    assert_eq!(committed["cites"][0]["to"], "app/options.py", "{committed}");
    assert_eq!(committed["cites"][0]["date"], "2026-10-11", "{committed}");
}

/// Issue #55, item 3 (subfolder-relative paths): a path written from a subfolder
/// (`auth/session.py` for `backend/auth/session.py`) is the file it was the tail of when the
/// memory was written. Deleted or renamed since, it is flagged even where another file ends
/// with the same words now; a tail that named two files then is still not guessed.
#[test]
fn a_path_written_from_a_subfolder_is_the_file_it_named_then() {
    let repo = committed(&[
        ("backend/auth/session.py", "def set_cookie():\n    pass\n"),
        ("src/app/config.py", "PORT = 80\nHOST = 'a'\n"),
        ("a/lib/util.py", "def one():\n    pass\n"),
        ("b/lib/util.py", "def two():\n    pass\n"),
    ]);
    let top = repo.path();
    remember(&repo, "cookies", "semantic", "`auth/session.py` handles the cookies");
    remember(&repo, "port", "semantic", "The port is set in config.py:1");
    remember(&repo, "util", "semantic", "Helpers live in lib/util.py");
    git(top, 10, &["rm", "-q", "backend/auth/session.py", "a/lib/util.py"]);
    git(top, 10, &["mv", "src/app/config.py", "src/app/settings.py"]);
    repo.write("plugins/auth/session.py", "def other():\n    pass\n");
    repo.write("docs/config.py", "X = 1\n");
    repo.write("tools/config.py", "Y = 2\n");
    git(top, 10, &["add", "."]);
    git(top, 10, &["commit", "-qm", "reshape"]);
    let cookies = verified(&repo, "cookies");
    assert_eq!(cookies["code_status"], "gone", "{cookies}");
    assert_eq!(cookies["cites"][0]["path"], "backend/auth/session.py", "{cookies}");
    assert_eq!(cookies["cites"][0]["date"], "2026-10-10", "{cookies}");
    let port = verified(&repo, "port");
    assert_eq!(port["code_status"], "moved", "{port}");
    assert_eq!(port["cites"][0]["path"], "src/app/config.py", "{port}");
    assert_eq!(port["cites"][0]["to"], "src/app/settings.py", "{port}");
    let util = verified(&repo, "util");
    assert_eq!(util["code_status"], "current", "two files ended with it then: {util}");
}
