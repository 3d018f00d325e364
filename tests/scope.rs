//! Issue #49, the repository boundary at every scope: after `mem setup AGENT --scope user`,
//! the hooks and the MCP server of the user's own files (run in every folder) and `mem ui`
//! hold back a cloned repository's `.memory/` that nobody here made or allowed, naming `mem
//! allow`, until it is allowed; setup writes their marker (`--user-scope`), rewrites the form
//! an older setup wrote without it, and removes both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use mem::agent::Agent;
use serde_json::{Value, json};
use wait_timeout::ChildExt;

use crate::seams::{PLANTED, at_home, cloned_repository, mem_at, payload};
use crate::util::{NOW, Out, bin, clean_env, run_with_stdin};

/// The agents that have a user scope, by name.
const AGENTS: [&str; 4] = ["claude", "codex", "gemini", "opencode"];

/// A fresh HOME with `mem setup AGENT --scope user` done in it for each of `agents`.
fn user_setup(agents: &[&str]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    for agent in agents {
        let out = mem_at(home.path(), home.path(), &["setup", agent, "--scope", "user"], &[], "");
        assert_eq!(out.code, 0, "{agent}: {out:?}");
        assert!(out.stdout.contains("--user-scope"), "{agent}: the diff shows the marker: {out:?}");
    }
    home
}

/// The command of mem's hook for `event` in a hooks file (Claude Code's shape) whose command
/// holds `part` (`context --hook`, `capture --hook`).
fn hook_command(file: &Path, event: &str, part: &str) -> String {
    let value: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let groups = value["hooks"][event].as_array().unwrap_or_else(|| panic!("{event}: {value}"));
    groups
        .iter()
        .filter_map(|g| g["hooks"][0]["command"].as_str())
        .find(|c| c.contains(part) && !c.contains("checkpoint"))
        .unwrap_or_else(|| panic!("no {part} hook for {event} in {}", file.display()))
        .to_string()
}

/// The commands of `agent`'s user-level context hooks (session start, prompt) and capture
/// hook, as its files in `home` run them (OpenCode's plugin: the arguments it passes).
fn user_hooks(agent: &str, home: &Path) -> [String; 3] {
    let file = match agent {
        "claude" => home.join(".claude/settings.json"),
        "codex" => home.join(".codex/hooks.json"),
        "gemini" => home.join(".gemini/settings.json"),
        _ => {
            let plugin = home.join(".config/opencode/plugins/mem.js");
            let text = std::fs::read_to_string(plugin).unwrap();
            assert!(text.contains(r#""--hook", "opencode", "--user-scope"]"#), "{text}");
            let run = |args: &str| format!("{} {args} --hook opencode --user-scope", bin());
            return [run("context"), run("context --budget 2000"), run("capture")];
        }
    };
    let events = Agent::from_name(agent).unwrap().spec().events;
    let context = hook_command(&file, events.start, "context --hook");
    let prompt = hook_command(&file, events.prompt, "context --hook");
    let capture = hook_command(&file, events.turn_end, "capture --hook");
    [context, prompt, capture]
}

/// Runs a hook command as an agent does (through a shell) in `cwd` with `home` as HOME.
fn shell(cwd: &Path, home: &Path, command: &str, stdin: &str) -> Out {
    let mut cmd = Command::new("sh");
    at_home(cmd.arg("-c").arg(command).current_dir(cwd), home);
    run_with_stdin(&mut cmd, stdin)
}

/// A Claude Code transcript of one prompt, in the repository, and the payload's field naming it.
fn transcript(repo: &crate::util::Dir) -> String {
    let path = repo.write(
        "t.jsonl",
        r#"{"type":"user","sessionId":"s1","message":{"role":"user","content":"Deploy the shop"}}
"#,
    );
    format!(r#","transcript_path":{}"#, serde_json::to_string(path.to_str().unwrap()).unwrap())
}

/// The user-level hooks of every agent with a user scope (session start, prompt, capture)
/// left a cloned repository's `.memory/` nobody here made or allowed alone: its memories did
/// not reach the session (the start says why, naming `mem allow`) and nothing was captured
/// into it. Once allowed, each uses it.
#[test]
fn user_scope_hooks_hold_back_a_clone_nobody_here_allowed() {
    let (repo, _other) = cloned_repository();
    let home = user_setup(&AGENTS);
    let cwd = repo.path().join("src");
    let sessions = repo.path().join(".memory/sessions");
    for agent in AGENTS {
        let [start, prompt, capture] = user_hooks(agent, home.path());
        for command in [&start, &prompt, &capture] {
            assert!(command.contains(" --user-scope"), "{agent}: {command}");
        }
        let events = Agent::from_name(agent).unwrap().spec().events;
        let begun = payload(events.start, &cwd, r#","source":"startup""#)
            .replace("\"s1\"", &format!("\"{agent}-1\""));
        let out = shell(&cwd, home.path(), &start, &begun);
        assert_eq!(out.code, 0, "{agent}: {out:?}");
        assert!(!out.stdout.contains("project policy"), "{agent}: {out:?}");
        assert!(!out.stdout.contains(PLANTED), "{agent}: {out:?}");
        assert!(out.stdout.contains("held back"), "{agent}: said at the start: {out:?}");
        assert!(out.stdout.contains("mem allow"), "{agent}: {out:?}");
        let asked = payload(events.prompt, &cwd, r#","prompt":"what is the project policy?""#);
        let out = shell(&cwd, home.path(), &prompt, &asked);
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{agent}: {out:?}");
        let ended = payload(events.turn_end, &cwd, &transcript(&repo));
        let out = shell(&cwd, home.path(), &capture, &ended);
        assert_eq!(out.code, 0, "{agent}: {out:?}");
        assert!(!sessions.exists(), "{agent}: nothing captured into the clone: {out:?}");
    }
    assert!(!repo.path().join(".memory/.mem/capture.log").exists(), "nothing logged there");
    let allowed = mem_at(&cwd, home.path(), &["allow"], &[], "");
    assert_eq!(allowed.code, 0, "{allowed:?}");
    for agent in AGENTS {
        let [start, prompt, _] = user_hooks(agent, home.path());
        let events = Agent::from_name(agent).unwrap().spec().events;
        let begun = payload(events.start, &cwd, r#","source":"startup""#)
            .replace("\"s1\"", &format!("\"{agent}-2\""));
        let out = shell(&cwd, home.path(), &start, &begun);
        assert!(out.stdout.contains("project policy"), "{agent}: allowed: {out:?}");
        let asked = payload(events.prompt, &cwd, r#","prompt":"what is the project policy?""#)
            .replace("\"s1\"", &format!("\"{agent}-3\""));
        let out = shell(&cwd, home.path(), &prompt, &asked);
        assert!(out.stdout.contains("project policy"), "{agent}: allowed: {out:?}");
    }
    let [_, _, capture] = user_hooks("claude", home.path());
    let ended = payload("Stop", &cwd, &transcript(&repo));
    let out = shell(&cwd, home.path(), &capture, &ended);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(sessions.is_dir(), "captured once allowed: {out:?}");
}

/// A root given with `MEM_DIR` and the per-user root are the user's own: the user-level hooks
/// use them as they are.
#[test]
fn user_scope_hooks_use_the_user_s_own_roots() {
    let home = user_setup(&["claude"]);
    let [start, ..] = user_hooks("claude", home.path());
    let folder = tempfile::tempdir().unwrap();
    let note = ["add", "--type", "semantic", "The staging database is called shop-staging"];
    let out = mem_at(folder.path(), home.path(), &note, &[], "");
    assert_eq!(out.code, 0, "the per-user root: {out:?}");
    let begun = payload("SessionStart", folder.path(), r#","source":"startup""#);
    let out = shell(folder.path(), home.path(), &start, &begun);
    assert!(out.stdout.contains("shop-staging"), "{out:?}");
    // A clone named with MEM_DIR is the user's choice.
    let (repo, _other) = cloned_repository();
    let root = repo.path().join(".memory");
    let command = format!("MEM_DIR={} {start}", root.display());
    let begun = begun.replace("\"s1\"", "\"s2\"");
    let out = shell(folder.path(), home.path(), &command, &begun);
    assert!(out.stdout.contains("project policy"), "{out:?}");
}

/// Starts the `mem` MCP server that `mem setup claude --scope user` registered in `home`'s
/// `~/.claude.json`, in `cwd`, as Claude Code does.
fn user_server(home: &Path, cwd: &Path) -> crate::mcp::Server {
    let file = std::fs::read_to_string(home.join(".claude.json")).unwrap();
    let server: Value = serde_json::from_str(&file).unwrap();
    let server = &server["mcpServers"]["mem"];
    assert_eq!(server["args"], json!(["mcp", "--user-scope"]), "{server}");
    let mut cmd = Command::new(server["command"].as_str().unwrap());
    let args: Vec<&str> =
        server["args"].as_array().unwrap().iter().flat_map(Value::as_str).collect();
    at_home(cmd.args(args).current_dir(cwd), home).env("MEM_NOW", NOW);
    clean_env(&mut cmd);
    let child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut server = crate::mcp::Server::of(child);
    server.initialize();
    server
}

/// The memory files of a root, counted.
fn memory_files(root: &Path) -> usize {
    fn walk(dir: &Path, n: &mut usize) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && entry.file_name() != ".mem" {
                walk(&path, n);
            } else if path.extension().is_some_and(|e| e == "md") {
                *n += 1;
            }
        }
    }
    let mut n = 0;
    walk(root, &mut n);
    n
}

/// The user-level MCP server wrote into a cloned repository's `.memory/` (`remember`) and gave
/// its memories (`recall`). It holds the root back: `remember` refuses naming `mem allow`,
/// `recall` and `recent` give nothing of it and say why; once allowed (during the session),
/// each works.
#[test]
fn the_user_scope_server_holds_back_a_clone_until_allowed() {
    let (repo, _other) = cloned_repository();
    let home = user_setup(&["claude"]);
    let cwd = repo.path().join("src");
    let root = repo.path().join(".memory");
    let before = memory_files(&root);
    let mut server = user_server(home.path(), &cwd);
    let note = json!({ "text": "The shop deploys on Fridays", "type": "semantic" });
    let refused = server.tool_error("remember", note.clone());
    assert!(refused.contains("mem allow"), "{refused}");
    assert!(refused.contains("not made, set up or allowed"), "{refused}");
    assert_eq!(memory_files(&root), before, "nothing written into the clone");
    let recalled = server.ok("recall", json!({ "query": "project policy" }));
    assert_eq!(recalled["hits"], json!([]), "{recalled}");
    assert!(recalled["held_back"].as_str().unwrap().contains("mem allow"), "{recalled}");
    let recent = server.ok("recent", json!({}));
    assert_eq!(recent["memories"], json!([]), "{recent}");
    assert!(server.tool_error("session_resume", json!({})).contains("mem allow"));
    let allowed = mem_at(&cwd, home.path(), &["allow"], &[], "");
    assert_eq!(allowed.code, 0, "{allowed:?}");
    let recalled = server.list("recall", "hits", json!({ "query": "project policy" }));
    assert!(recalled.to_string().contains("project policy"), "allowed: {recalled}");
    let added = server.ok("remember", note);
    assert!(added["id"].is_string(), "{added}");
    assert_eq!(memory_files(&root), before + 1);
    let stderr = server.finish();
    assert!(stderr.contains("held back") || stderr.contains("holds it back"), "{stderr}");
}

/// `mem ui` in a cloned repository served its `.memory/` (a page that shows and changes its
/// memories). It refuses a root nobody here made or allowed, naming `mem allow`; once allowed,
/// it serves it.
#[test]
fn mem_ui_refuses_a_clone_nobody_here_allowed() {
    let (repo, _other) = cloned_repository();
    let home = tempfile::tempdir().unwrap();
    let cwd = repo.path().join("src");
    let ui = || {
        let mut cmd = Command::new(bin());
        at_home(cmd.args(["ui", "--port", "0"]).current_dir(&cwd), home.path());
        clean_env(&mut cmd);
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
    };
    let mut refused = ui();
    let Some(status) = refused.wait_timeout(Duration::from_secs(60)).unwrap() else {
        refused.kill().unwrap();
        refused.wait().unwrap();
        panic!("mem ui served a root nobody here made or allowed");
    };
    let out = refused.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not made, set up or allowed") && stderr.contains("mem allow"));
    let allowed = mem_at(&cwd, home.path(), &["allow"], &[], "");
    assert_eq!(allowed.code, 0, "{allowed:?}");
    let mut served = ui();
    let mut line = String::new();
    let stdout = served.stdout.take().unwrap();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line).unwrap();
    served.kill().unwrap();
    served.wait().unwrap();
    assert!(line.starts_with("http://127.0.0.1:"), "served once allowed: {line:?}");
}

/// The files `mem setup AGENT --scope user` writes in `home`.
fn user_files(agent: &str, home: &Path) -> Vec<PathBuf> {
    let files: &[&str] = match agent {
        "claude" => &[".claude/settings.json", ".claude.json"],
        "codex" => &[".codex/config.toml", ".codex/hooks.json"],
        "gemini" => &[".gemini/settings.json"],
        _ => &[".config/opencode/opencode.json", ".config/opencode/plugins/mem.js"],
    };
    files.iter().map(|f| home.join(f)).collect()
}

/// `text` as an older setup at user scope wrote it: without `--user-scope`.
fn old_form(path: &Path, text: &str) -> String {
    fn strip(value: &mut Value) {
        match value {
            Value::String(s) => *s = s.replace(" --user-scope", ""),
            Value::Array(list) => {
                list.retain(|v| v != "--user-scope");
                list.iter_mut().for_each(strip);
            }
            Value::Object(map) => map.values_mut().for_each(strip),
            _ => {}
        }
    }
    if path.extension().is_some_and(|e| e == "json") {
        let mut value: Value = serde_json::from_str(text).unwrap();
        strip(&mut value);
        return serde_json::to_string_pretty(&value).unwrap() + "\n";
    }
    text.replace(", \"--user-scope\"", "").replace(" --user-scope", "")
}

/// Whether two texts are the same, or the same JSON (an old form written back may order keys
/// otherwise).
fn same_content(a: &str, b: &str) -> bool {
    let json = |t: &str| serde_json::from_str::<Value>(t).ok();
    a == b || json(a).is_some() && json(a) == json(b)
}

/// Setup at user scope writes the marker into every hook and server of the user's files;
/// `mem health` names those an older setup wrote without it (and the command that fixes
/// them), a setup at user scope rewrites them, and `--remove` takes out both forms.
#[test]
fn user_scope_setup_writes_rewrites_and_removes_the_marker() {
    for agent in AGENTS {
        let home = user_setup(&[agent]);
        let files = user_files(agent, home.path());
        let new: Vec<String> = files.iter().map(|f| std::fs::read_to_string(f).unwrap()).collect();
        assert!(new.iter().all(|t| t.contains("--user-scope")), "{agent}: {new:?}");
        let health = || mem_at(home.path(), home.path(), &["health"], &[], "");
        assert!(!health().stdout.contains("lack --user-scope"), "{agent}");
        let age = || {
            for (file, text) in files.iter().zip(&new) {
                std::fs::write(file, old_form(file, text)).unwrap();
                let old = std::fs::read_to_string(file).unwrap();
                assert!(!old.contains("--user-scope"), "{agent}: {old}");
            }
        };
        age();
        let out = health();
        assert_eq!(out.code, 1, "{agent}: {out:?}");
        assert!(out.stdout.contains("lack --user-scope"), "{agent}: {out:?}");
        let fix = format!("run `mem setup {agent} --scope user` again");
        assert!(out.stdout.contains(&fix), "{agent}: {out:?}");
        let setup = ["setup", agent, "--scope", "user"];
        let out = mem_at(home.path(), home.path(), &setup, &[], "");
        assert_eq!(out.code, 0, "{agent}: {out:?}");
        assert!(out.stdout.contains("+") && out.stdout.contains("--user-scope"), "{out:?}");
        for (file, text) in files.iter().zip(&new) {
            let now = std::fs::read_to_string(file).unwrap();
            assert!(same_content(&now, text), "{agent}: rewritten as new: {now}\nnot {text}");
        }
        assert!(!health().stdout.contains("lack --user-scope"), "{agent}");
        let again = mem_at(home.path(), home.path(), &setup, &[], "");
        assert!(again.stdout.contains("already set up"), "{agent}: {again:?}");
        let remove = ["setup", agent, "--scope", "user", "--remove"];
        for form in ["new", "old"] {
            if form == "old" {
                let out = mem_at(home.path(), home.path(), &setup, &[], "");
                assert_eq!(out.code, 0, "{agent}: {out:?}");
                age();
            }
            let out = mem_at(home.path(), home.path(), &remove, &[], "");
            assert_eq!(out.code, 0, "{agent} {form}: {out:?}");
            for file in &files {
                let left = std::fs::read_to_string(file).unwrap_or_default();
                assert!(!left.contains(bin()), "{agent} {form}: {}: {left}", file.display());
            }
        }
    }
}
