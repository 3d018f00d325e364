//! Hooks answered by the session's `mem mcp` (src/served.rs, src/shared/served.rs): the same answer as in-process,
//! at the caller's time; only for the same key; and nothing lost when the server is killed.
//! Each test gives its commands a private `XDG_RUNTIME_DIR`, so that no socket of another test
//! (or of the developer's own sessions) is ever found.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::mcp::Server;
use crate::util::{Dir, Out, bin, clean_env, memory, run, run_with_stdin};

/// How long to wait for a server to start listening (a guard, not a timing).
const PATIENCE: Duration = Duration::from_secs(120);

/// A root and the private runtime folder its servers listen in.
pub(crate) struct Served {
    pub(crate) dir: Dir,
    pub(crate) runtime: tempfile::TempDir,
}

impl Served {
    /// `dir` with the test model configured.
    pub(crate) fn new(dir: Dir) -> Served {
        dir.use_model("");
        Served { dir, runtime: tempfile::tempdir().unwrap() }
    }

    /// `mem --dir ROOT <args>` with served hooks on (`MEM_NO_SERVER=0`) unless `off`.
    pub(crate) fn command(&self, args: &[&str], off: bool) -> Command {
        let mut cmd = Command::new(bin());
        cmd.arg("--dir").arg(self.dir.path()).args(args).current_dir(self.dir.path());
        cmd.env("XDG_CONFIG_HOME", self.dir.home())
            .env("HOME", self.dir.home())
            .env("XDG_RUNTIME_DIR", self.runtime.path())
            .env("MEM_NO_SERVER", if off { "1" } else { "0" });
        cmd
    }

    /// `mem mcp` of the root, past the handshake, listening for hooks (`now` is its own time,
    /// which must not be the one it answers with).
    pub(crate) fn server(&self, now: &str) -> Server {
        let mut cmd = self.command(&["--now", now, "mcp"], false);
        clean_env(&mut cmd);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut server = Server::of(cmd.spawn().unwrap());
        server.initialize();
        let mut waited = Duration::ZERO;
        while self.servers().iter().all(|s| !s["differs"].as_array().unwrap().is_empty()) {
            assert!(waited < PATIENCE, "the server never listened");
            std::thread::sleep(Duration::from_millis(50));
            waited += Duration::from_millis(50);
        }
        server
    }

    /// What `mem health --json` says of the servers of the root.
    pub(crate) fn servers(&self) -> Vec<serde_json::Value> {
        let out = run(&mut self.command(&["health", "--json"], false));
        let health: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        health["served_hooks"]["servers"].as_array().unwrap().clone()
    }

    /// How many hooks the live servers of the root answered.
    pub(crate) fn answered(&self) -> u64 {
        self.servers().iter().map(|s| s["answered"].as_u64().unwrap()).sum()
    }

    /// The per-prompt hook for `prompt` in session `session`, served unless `off`.
    pub(crate) fn hook(&self, prompt: &str, session: &str, off: bool) -> Out {
        let payload = json!({
            "session_id": session,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            "cwd": self.dir.path(),
        });
        let mut cmd = self.command(&["context", "--hook", "claude"], off);
        run_with_stdin(&mut cmd, payload.to_string())
    }

    /// The sockets in the runtime folder.
    pub(crate) fn sockets(&self) -> Vec<PathBuf> {
        let folder = self.runtime.path().join("mem");
        let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
        entries.map(|e| e.unwrap().path()).filter(|p| p.extension().unwrap() == "sock").collect()
    }
}

/// A root of `n` generated memories on a few dozen topics, each in a few words of its own.
fn generated(n: usize) -> Dir {
    let dir = Dir::new();
    let topics = [
        "login",
        "staging",
        "database",
        "migration",
        "cache",
        "deploy",
        "billing",
        "search",
        "queue",
        "upload",
        "token",
        "payment",
        "report",
        "email",
        "schema",
        "index",
    ];
    let verbs = ["fails", "times out", "was renamed", "needs a retry", "is slow", "leaks"];
    let mut state: u64 = 7;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    for i in 0..n {
        let (a, b, v) = (next(topics.len()), next(topics.len()), next(verbs.len()));
        let body = format!(
            "# The {} {} when the {} runs\n\nSeen in case {i}: the {} path {} after the {} \
             step; the fix was to split the {} work.\n",
            topics[a], verbs[v], topics[b], topics[a], verbs[v], topics[b], topics[a]
        );
        let kind = ["episodic", "semantic", "procedural"][i % 3];
        let created = format!("2026-{:02}-{:02}T10:00:00Z", 1 + i % 11, 1 + i % 28);
        dir.write(
            &format!("gen-{i:04}.md"),
            memory(&format!("gen-{i:04}"), kind, 1 + (i % 9) as u8, &created, &body),
        );
    }
    dir
}

/// Prompts whose answers differ from root to root.
pub(crate) const PROMPTS: [&str; 5] = [
    "why does the login test fail on staging",
    "how do we deploy the billing service",
    "the database migration is slow",
    "which cache do we use for search",
    "what broke the upload queue last time",
];

/// The served answers equal the in-process ones, prompt by prompt, and the server answered them.
fn same_answers(served: &Served) {
    let _server = served.server("2027-06-01T00:00:00Z");
    for (i, prompt) in PROMPTS.iter().enumerate() {
        let by_server = served.hook(prompt, &format!("served-{i}"), false);
        let in_process = served.hook(prompt, &format!("plain-{i}"), true);
        assert_eq!(by_server.stderr, "", "{prompt}");
        assert_eq!(in_process.stderr, "", "{prompt}");
        assert_eq!(by_server.stdout, in_process.stdout, "{prompt}");
    }
    // A server busy past its wait (its own refresh between calls, on a loaded machine) leaves
    // a hook to work in-process, with the same answer: most are served.
    let answered = served.answered();
    assert!(answered >= PROMPTS.len() as u64 - 2, "{answered} of {} served", PROMPTS.len());
}

#[test]
fn a_served_hook_answers_as_the_hook_in_process_on_the_example() {
    let served = Served::new(Dir::example());
    same_answers(&served);
}

#[test]
fn a_served_hook_answers_as_the_hook_in_process_on_a_generated_root() {
    let served = Served::new(generated(300));
    same_answers(&served);
}

#[test]
fn a_hook_with_another_home_or_with_served_hooks_off_is_answered_in_process() {
    let served = Served::new(Dir::example());
    let _server = served.server("2026-11-30T12:00:00Z");
    let prompt = PROMPTS[0];
    let expected = served.hook(prompt, "plain", true).stdout;
    assert!(!expected.is_empty());
    // Another HOME: another user layer and other agents' homes could answer otherwise.
    let other_home = tempfile::tempdir().unwrap();
    let payload = json!({ "session_id": "other", "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt, "cwd": served.dir.path() });
    let mut cmd = served.command(&["context", "--hook", "claude"], false);
    cmd.env("HOME", other_home.path());
    let out = run_with_stdin(&mut cmd, payload.to_string());
    assert_eq!(out.stdout, expected);
    let mut cmd = served.command(&["health"], false);
    cmd.env("HOME", other_home.path());
    let health = run(&mut cmd);
    assert!(
        health.stdout.contains("run with another setting than this shell"),
        "{}",
        health.stdout
    );
    assert!(health.stdout.contains("HOME"), "{}", health.stdout);
    // Served hooks turned off.
    assert_eq!(served.hook(prompt, "off", true).stdout, expected);
    assert_eq!(served.answered(), 0);
    let health = run(&mut served.command(&["health"], true));
    assert!(
        health.stdout.contains("answered in-process (MEM_NO_SERVER is set)"),
        "{}",
        health.stdout
    );
    // The same setting: served.
    assert_eq!(served.hook(prompt, "served", false).stdout, expected);
    assert_eq!(served.answered(), 1);
    let health = run(&mut served.command(&["health"], false));
    assert!(health.stdout.contains("answered by the session's mem mcp"), "{}", health.stdout);
}

/// The stderr of a `mem mcp` of the root (served hooks off when `off`) that was initialized,
/// listed its tools and was closed.
fn server_log(served: &Served, off: bool) -> String {
    let mut cmd = served.command(&["mcp"], off);
    clean_env(&mut cmd);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut server = Server::of(cmd.spawn().unwrap());
    server.initialize();
    server.request("tools/list", json!({}));
    server.finish()
}

#[test]
fn a_server_with_served_hooks_off_or_a_folder_others_can_enter_does_not_listen() {
    let served = Served::new(Dir::example());
    let log = server_log(&served, true);
    assert!(!log.contains("hooks"), "{log}");
    assert!(served.sockets().is_empty());
    // A folder other users can enter is not used; the hooks are answered in-process.
    let folder = served.runtime.path().join("mem");
    std::fs::create_dir(&folder).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = server_log(&served, false);
    assert!(log.contains("hooks are not served by this session"), "{log}");
    assert!(log.contains("can be entered by other users"), "{log}");
    assert!(served.sockets().is_empty());
    assert!(!served.hook(PROMPTS[0], "s", false).stdout.is_empty());
}

/// The memory files of `dir` and their contents, sorted.
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut found: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    found.sort();
    found
}

/// kill -9 of the server while `during` runs (started just before): nothing the files hold is
/// lost, the socket left behind is removed by the next hook, which answers as in-process.
fn killed_during(served: &Served, during: &mut Command, what: &str) {
    let mut server = served.server("2026-11-30T12:00:00Z");
    let before = files(served.dir.path());
    clean_env(during);
    let child = during.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Let it start, so that the kill comes while it runs (which moment does not matter: every
    // moment must lose nothing).
    std::thread::sleep(Duration::from_millis(200));
    server.kill();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    let after = files(served.dir.path());
    for (path, text) in &before {
        let kept = after.iter().find(|(p, _)| p == path);
        assert_eq!(
            kept.map(|(_, t)| t),
            Some(text),
            "{what}: {} was lost or changed",
            path.display()
        );
    }
    // The killed server's socket stays when the command asked it before the kill; on a loaded
    // machine the command may start after the kill, find the socket stale and remove it.
    assert!(served.sockets().len() <= 1, "{what}: one socket at most");
    let answer = served.hook(PROMPTS[0], &format!("after-{what}"), false);
    assert_eq!(answer.stderr, "", "{what}");
    assert_eq!(answer.stdout, served.hook(PROMPTS[0], &format!("plain-{what}"), true).stdout);
    assert!(served.sockets().is_empty(), "{what}: the stale socket is removed");
}

#[test]
fn a_server_killed_during_a_hook_a_capture_or_an_index_loses_nothing() {
    let served = Served::new(generated(40));
    // During a hook whose refresh embeds many new memories.
    for i in 0..200 {
        let body = format!("# Note {i} on the payment queue\n\nThe payment queue {i} retries.\n");
        served.dir.write(
            &format!("new-{i:03}.md"),
            memory(&format!("new-{i:03}"), "semantic", 5, "2026-11-01T10:00:00Z", &body),
        );
    }
    let payload = json!({ "session_id": "killed", "hook_event_name": "UserPromptSubmit",
                          "prompt": PROMPTS[0], "cwd": served.dir.path() });
    let stdin = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(stdin.path(), payload.to_string()).unwrap();
    let mut hook = served.command(&["context", "--hook", "claude"], false);
    hook.stdin(std::fs::File::open(stdin.path()).unwrap());
    killed_during(&served, &mut hook, "hook");
    // During a capture of a session.
    let transcript = served.dir.path().join("t.jsonl");
    let line = json!({ "type": "user", "sessionId": "captured", "cwd": served.dir.path(),
                       "timestamp": "2026-11-30T11:00:00Z",
                       "message": { "role": "user", "content": "fix the payment queue retries" } });
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let stop = json!({ "session_id": "captured", "hook_event_name": "Stop",
                       "transcript_path": transcript, "cwd": served.dir.path() });
    std::fs::write(stdin.path(), stop.to_string()).unwrap();
    let mut capture = served.command(&["capture", "--hook", "claude"], false);
    capture.stdin(std::fs::File::open(stdin.path()).unwrap());
    killed_during(&served, &mut capture, "capture");
    // During `mem index --rebuild`.
    let mut index = served.command(&["index", "--rebuild"], false);
    killed_during(&served, index.stdin(Stdio::null()), "index");
    let list = run(&mut served.command(&["list", "--json"], true));
    assert_eq!(list.code, 0, "{}", list.stderr);
}

/// A capture hook with a server of the same key returns once the server has embedded what it
/// wrote (the agent waits for its Stop hook; the user does not yet): the next prompt's hook
/// finds the session's digest embedded already instead of embedding it first.
#[test]
fn a_capture_returns_once_the_server_has_embedded_its_digest() {
    use mem::embed::{Embedder, ModelSource, ORT_LIB_FILE, vectors};

    let served = Served::new(generated(40));
    // Every memory has its vector: the session's digest is all there is to embed.
    let index = run(&mut served.command(&["index"], true));
    assert_eq!(index.code, 0, "{}", index.stderr);
    let _server = served.server("2026-11-30T12:00:00Z");
    // The server's first embedding waits for its model while it holds the layers, on a loaded
    // machine longer than a capture waits for them (then the next hook embeds the digest, which
    // is not what this test is about): a prompt's hook served first has it loaded.
    let mut waited = Duration::ZERO;
    while served.answered() == 0 {
        assert!(waited < PATIENCE, "the server never answered a prompt's hook");
        served.hook("why do the upload retries fail", "warm-up", false);
        waited += Duration::from_millis(50);
    }
    let model = crate::util::model_dir();
    let embedder = Embedder::load(&ModelSource {
        dir: model.to_path_buf(),
        runtime: model.join(ORT_LIB_FILE),
    })
    .unwrap();
    let stored = vectors::path(&served.dir.path().join(".mem"));
    let digest_embedded = |session: &str| {
        let digest = mem::capture::check_session_id(session).unwrap();
        let (store, _) =
            vectors::VectorStore::load(&stored, embedder.checksum(), embedder.dim()).unwrap();
        store.get(digest.as_str()).is_some()
    };
    for (i, session) in ["first-session", "second-session"].iter().enumerate() {
        let transcript = served.dir.path().join(format!("{session}.jsonl"));
        let line = json!({ "type": "user", "sessionId": session, "cwd": served.dir.path(),
                           "timestamp": "2026-11-30T11:00:00Z",
                           "message": { "role": "user",
                                        "content": format!("why do the upload retries fail {i}") } });
        std::fs::write(&transcript, format!("{line}\n")).unwrap();
        let stop = json!({ "session_id": session, "hook_event_name": "Stop",
                           "transcript_path": transcript, "cwd": served.dir.path() });
        let out = run_with_stdin(
            &mut served.command(&["capture", "--hook", "claude"], false),
            stop.to_string(),
        );
        assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{session}");
        assert!(digest_embedded(session), "{session}: the capture returned before the embedding");
    }
}

/// `mem <args>` in `repo/` of `dir` (the root found from there, the agents' memories joined),
/// served hooks on unless `off`, the servers listening in `runtime`.
fn in_repo(dir: &Dir, runtime: &Path, args: &[&str], off: bool) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(dir.path().join("repo"));
    cmd.env("XDG_CONFIG_HOME", dir.home())
        .env("HOME", dir.home())
        .env("XDG_RUNTIME_DIR", runtime)
        .env("MEM_NO_SERVER", if off { "1" } else { "0" });
    cmd
}

#[test]
fn a_served_hook_leaves_out_the_asking_agent_s_own_memories_as_in_process() {
    let dir = Dir::new();
    crate::native::project_with_claude_memory(&dir);
    let runtime = tempfile::tempdir().unwrap();
    let mut cmd = in_repo(&dir, runtime.path(), &["mcp"], false);
    clean_env(&mut cmd);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut server = Server::of(cmd.spawn().unwrap());
    server.initialize();
    let answered = || {
        let out = run(&mut in_repo(&dir, runtime.path(), &["health", "--json"], false));
        let health: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let servers = health["served_hooks"]["servers"].as_array().unwrap().clone();
        let live = servers.iter().find(|s| s["differs"].as_array().unwrap().is_empty());
        live.map(|s| s["answered"].as_u64().unwrap())
    };
    let mut waited = Duration::ZERO;
    while answered().is_none() {
        assert!(waited < PATIENCE, "the server never listened");
        std::thread::sleep(Duration::from_millis(50));
        waited += Duration::from_millis(50);
    }
    let repo = dir.path().join("repo");
    let hook = |agent: &str, session: &str, off: bool| {
        let payload = json!({ "session_id": session, "cwd": repo,
                              "hook_event_name": "UserPromptSubmit",
                              "prompt": "can we deploy on friday" });
        let mut cmd = in_repo(&dir, runtime.path(), &["context", "--hook", agent], off);
        run_with_stdin(&mut cmd, payload.to_string()).stdout
    };
    for agent in ["claude", "codex"] {
        let served = hook(agent, &format!("served-{agent}"), false);
        let in_process = hook(agent, &format!("plain-{agent}"), true);
        assert_eq!(served, in_process, "{agent}");
        // Claude Code holds its auto memory already; Codex gets it.
        assert_eq!(served.contains("claude.deploy-window"), agent == "codex", "{agent}: {served}");
    }
    assert!(answered().unwrap() >= 1);
    // The server still has Claude Code's layer for its own tools.
    let result = server.request(
        "tools/call",
        json!({ "name": "get", "arguments": { "id": "claude.deploy-window" } }),
    );
    assert_eq!(result["result"]["isError"], json!(false), "{result}");
}

/// The variables Codex 0.171.0 passes to an MCP server of its own accord (docs/agents.md).
const CODEX_PASSES: [&str; 10] =
    ["HOME", "LOGNAME", "PATH", "SHELL", "USER", "LANG", "LC_ALL", "TERM", "TMPDIR", "TZ"];

/// Issue #52, item 4: Codex starts `mem mcp` with the variables it passes of its own accord
/// and those `env_vars` names, and runs the hooks with its whole environment. With
/// `CODEX_HOME` set, the server's key differed from every hook's and it answered none. A server
/// started so from what `mem setup codex` writes serves a hook that has `CODEX_HOME` set.
#[test]
fn a_server_started_as_codex_starts_it_serves_hooks_with_codex_home_set() {
    // No model: the server is up at once (the key's parts are what this checks).
    let dir = Dir::example();
    let tmp = tempfile::tempdir().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    // What setup tells Codex to forward.
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let mut setup = Command::new(bin());
    setup.args(["setup", "codex"]).current_dir(repo.path()).env("HOME", dir.home());
    clean_env(&mut setup);
    let out = run(&mut setup);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let config = std::fs::read_to_string(repo.path().join(".codex/config.toml")).unwrap();
    let config: toml::Table = toml::from_str(&config).unwrap();
    let forwarded: Vec<String> = config["mcp_servers"]["mem"]["env_vars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // The agent's environment, as the hooks get it.
    let mut agent: Vec<(String, String)> = vec![
        ("HOME".into(), dir.home().display().to_string()),
        ("XDG_CONFIG_HOME".into(), dir.home().display().to_string()),
        ("CODEX_HOME".into(), codex_home.path().display().to_string()),
        ("TMPDIR".into(), tmp.path().display().to_string()),
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
    ];
    agent.sort();
    let passed = |name: &str| CODEX_PASSES.contains(&name) || forwarded.iter().any(|f| f == name);
    let mut server = Command::new(bin());
    server.args(["--dir", dir.path().to_str().unwrap(), "--now", "2026-11-30T12:00:00Z"]);
    server.arg("mcp").current_dir(dir.path()).env_clear();
    for (name, value) in agent.iter().filter(|(name, _)| passed(name)) {
        server.env(name, value);
    }
    server.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut server = Server::of(server.spawn().unwrap());
    server.initialize();
    let hook = |off: bool| {
        // Each call a session of its own: the second is not told what the first sent.
        let session = if off { "in-process" } else { "served" };
        let payload = json!({ "session_id": session, "hook_event_name": "UserPromptSubmit",
                              "prompt": PROMPTS[0], "cwd": dir.path() });
        let mut cmd = Command::new(bin());
        cmd.args(["--dir", dir.path().to_str().unwrap(), "context", "--hook", "codex"]);
        cmd.current_dir(dir.path()).env_clear().envs(agent.iter().cloned());
        cmd.env("MEM_NOW", crate::util::NOW).env("MEM_NO_SERVER", if off { "1" } else { "0" });
        run_with_stdin(&mut cmd, payload.to_string())
    };
    let expected = hook(true).stdout;
    assert!(!expected.is_empty());
    // A guard against a server that never listens, not a timing.
    let mut waited = Duration::ZERO;
    let status = || {
        let mut cmd = Command::new(bin());
        cmd.args(["--dir", dir.path().to_str().unwrap(), "health", "--json"]);
        cmd.current_dir(dir.path()).env_clear().envs(agent.iter().cloned());
        cmd.env("MEM_NO_SERVER", "0");
        let health: serde_json::Value = serde_json::from_str(&run(&mut cmd).stdout).unwrap();
        health["served_hooks"]["servers"].as_array().cloned().unwrap_or_default()
    };
    while status().is_empty() {
        if waited >= PATIENCE {
            panic!("the server never listened: {}", server.finish());
        }
        std::thread::sleep(Duration::from_millis(50));
        waited += Duration::from_millis(50);
    }
    let servers = status();
    assert_eq!(servers[0]["differs"], json!([]), "{servers:?} (forwarded: {forwarded:?})");
    assert_eq!(hook(false).stdout, expected);
    assert_eq!(status()[0]["answered"], 1, "{:?}", status());
    server.kill();
}
