//! The real agents, end to end: Claude Code and Codex CLI here, the others in their own files
//! (`tests/gemini_e2e.rs`, ...; the pinned versions that `scripts/e2e-agents.sh` installs) run
//! sessions in a throw-away repository with a fresh HOME, after `mem setup`, against a stand-in
//! for the model service on 127.0.0.1 (`tests/e2e/standin.py`, which logs every request it
//! gets). The assertions are on what the stand-in received, on `.memory/`, the session log,
//! `mem health`, rewind and `--remove`.
//!
//! The agents are found in `MEM_E2E_AGENTS` (their bin folder), else in the cache the script
//! installs to. Without them the tests say so and pass, unless `CI=true`: then a missing agent
//! is a failure (`.ci/run` installs them and sets it).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::util::{Out, bin};

/// The agents' bin folder, or `None` (and a note) when they are not installed outside CI.
pub(crate) fn agents() -> Option<PathBuf> {
    let dir = std::env::var_os("MEM_E2E_AGENTS").map(PathBuf::from).or_else(|| {
        let home = std::env::var_os("HOME")?;
        let versions =
            "claude-2.1.197-codex-0.171.0-gemini-0.61.0-opencode-1.18.33-copilot-1.0.102-pi-0.73.1";
        Some(Path::new(&home).join(format!(".cache/mem-e2e/{versions}/node_modules/.bin")))
    });
    let agents = ["claude", "codex", "gemini", "opencode", "copilot", "pi"];
    let found = dir.filter(|d| agents.iter().all(|a| d.join(a).is_file()));
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!ci, "CI=true and the agents are not installed: run scripts/e2e-agents.sh");
        eprintln!("agents_e2e: the agents are not installed (scripts/e2e-agents.sh); skipped");
    }
    found
}

/// The folder of the `mem` the tests run: the one built for them, or the one that
/// `MEM_E2E_MEM_FOLDER` names (to measure another build, e.g. an older one, with the same
/// sessions; tests of what it lacks then fail).
pub(crate) fn mem_folder() -> PathBuf {
    match std::env::var_os("MEM_E2E_MEM_FOLDER") {
        Some(folder) => PathBuf::from(folder),
        None => Path::new(bin()).parent().unwrap().to_path_buf(),
    }
}

/// The model stand-in, running until dropped.
pub(crate) struct StandIn {
    child: Child,
    dir: tempfile::TempDir,
    port: u16,
}

impl StandIn {
    /// Starts one that answers by `plan` (see `tests/e2e/standin.py`).
    pub(crate) fn start(plan: Value) -> StandIn {
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/standin.py");
        let port_file = dir.path().join("port");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(dir.path().join("requests.jsonl"))
            .arg("--plan")
            .arg(plan.to_string())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        // A guard against a stand-in that never starts, not a timing.
        for _ in 0..500 {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                return StandIn { child, dir, port: port.trim().parse().unwrap() };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("the model stand-in did not start");
    }

    /// Every request it got: `{path, body}`.
    pub(crate) fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.dir.path().join("requests.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The requests of the conversation (those that offer tools), as JSON text.
    pub(crate) fn conversation(&self) -> Vec<String> {
        self.requests()
            .into_iter()
            .filter(|r| r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .map(|r| r["body"].to_string())
            .collect()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A throw-away repository with a fresh HOME, and the agents' bin folder.
pub(crate) struct Project {
    pub(crate) home: tempfile::TempDir,
    repo: tempfile::TempDir,
    agents: PathBuf,
    /// The folder on PATH that holds `mem`.
    pub(crate) mem_folder: PathBuf,
    /// Where commands run, relative to the repository (an absolute folder: that one).
    pub(crate) within: PathBuf,
    /// Whether the session's `mem mcp` answers the hooks (off unless a test turns it on:
    /// nothing listens after the suite), in a runtime folder of this project's HOME.
    pub(crate) served: bool,
}

impl Project {
    pub(crate) fn new(agents: PathBuf) -> Project {
        let project = Project {
            home: tempfile::tempdir().unwrap(),
            repo: tempfile::tempdir().unwrap(),
            agents,
            mem_folder: mem_folder(),
            within: PathBuf::new(),
            served: false,
        };
        let repo = project.repo.path();
        std::fs::write(repo.join("README.md"), "# Shop\n").unwrap();
        std::fs::create_dir_all(repo.join("docs")).unwrap();
        std::fs::write(repo.join("docs/guide.md"), "# Guide\n").unwrap();
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/main.rs"), "fn main() {}\n").unwrap();
        project.git(&["init", "-q", "-b", "main"]);
        project.git(&["add", "-A"]);
        project.git(&["commit", "-q", "-m", "one"]);
        project
    }

    pub(crate) fn repo(&self) -> &Path {
        self.repo.path()
    }

    pub(crate) fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(self.repo())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The environment every program of this project runs with: nothing of the developer's;
    /// `mem` on PATH, as a user has it.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        let home = self.home.path();
        let mem_folder = self.mem_folder.display();
        cmd.env_clear()
            .env("PATH", format!("{mem_folder}:/usr/local/bin:/usr/bin:/bin"))
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("CODEX_HOME", home.join(".codex"))
            .env("LANG", "C.UTF-8")
            .current_dir(self.repo().join(&self.within));
        if self.served {
            let runtime = home.join("run");
            std::fs::create_dir_all(&runtime).unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
            cmd.env("XDG_RUNTIME_DIR", runtime).env("MEM_NO_SERVER", "0");
        } else {
            cmd.env("MEM_NO_SERVER", "1");
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// `mem setup` for Claude Code (project scope), Codex (its hooks trusted) and Gemini CLI.
    pub(crate) fn set_up_claude_codex_gemini(&self) {
        self.mem_ok(&["setup", "claude", "--scope", "project"]);
        self.mem_ok(&["setup", "codex"]);
        self.trust_codex_hooks();
        self.mem_ok(&["setup", "gemini"]);
    }

    /// `mem <args>` in the repository.
    pub(crate) fn mem(&self, args: &[&str]) -> Out {
        let out = self.command(&self.mem_folder.join("mem")).args(args).output().unwrap();
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    #[track_caller]
    pub(crate) fn mem_ok(&self, args: &[&str]) -> String {
        let out = self.mem(args);
        assert_eq!(out.code, 0, "mem {args:?}: {}{}", out.stdout, out.stderr);
        out.stdout
    }

    /// One `claude -p PROMPT` session (more arguments in `extra`) against `model`.
    pub(crate) fn claude(&self, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
        let mut cmd = self.claude_command(model);
        cmd.args(["-p", prompt]).args(extra);
        finish(cmd, "claude")
    }

    /// `claude` against `model`, arguments to add.
    pub(crate) fn claude_command(&self, model: &StandIn) -> Command {
        let mut cmd = self.command(&self.agents.join("claude"));
        cmd.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}", model.port))
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
        cmd
    }

    /// One `gemini -p PROMPT --approval-mode=yolo` session (more arguments in `extra`) against
    /// `model`, with an API key (the user's settings choose that way to sign in: with a base
    /// URL and no choice, Gemini CLI picks one that `-p` refuses) and the folder trusted.
    pub(crate) fn gemini(&self, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
        let settings = self.home.path().join(".gemini/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        let text = std::fs::read_to_string(&settings).unwrap_or_else(|_| "{}".into());
        let mut value: Value = serde_json::from_str(&text).unwrap();
        if value["security"]["auth"]["selectedType"] != "gemini-api-key" {
            value["security"] = json!({ "auth": { "selectedType": "gemini-api-key" } });
            std::fs::write(&settings, serde_json::to_string_pretty(&value).unwrap()).unwrap();
        }
        let mut cmd = self.command(&self.agents.join("gemini"));
        cmd.env("GEMINI_API_KEY", "dummy")
            .env("GOOGLE_GEMINI_BASE_URL", format!("http://127.0.0.1:{}", model.port))
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .args(["-m", "gemini-2.5-flash", "-p", prompt, "--approval-mode=yolo"])
            .args(extra);
        finish(cmd, "gemini")
    }

    /// One `opencode run PROMPT` against `model` (Anthropic Messages, OpenCode's built-in
    /// provider with its base URL moved), offline: no model catalogue fetched, no package
    /// installed into its configuration folders, nothing extracted out of the temporary HOME.
    /// `extra` goes before the prompt (`--continue`). The prompt is given word by word:
    /// OpenCode quotes a message argument that holds a space.
    pub(crate) fn opencode(&self, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
        let home = self.home.path();
        let tmp = home.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let dir = self.repo().join(&self.within);
        let mut cmd = self.command(&self.agents.join("opencode"));
        cmd.env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{}/v1", model.port))
            .env("ANTHROPIC_API_KEY", "dummy")
            .env(
                "OPENCODE_CONFIG_CONTENT",
                r#"{"model":"anthropic/claude-sonnet-4-5","small_model":"anthropic/claude-haiku-4-5"}"#,
            )
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_FFF", "1")
            .env("npm_config_offline", "true")
            .env("TMPDIR", &tmp)
            // OpenCode takes its folder from PWD.
            .env("PWD", &dir)
            .args(["run", "--format", "json", "--title", "e2e"])
            .args(extra)
            .args(prompt.split_whitespace());
        finish(cmd, "opencode")
    }

    /// One `copilot -p PROMPT` session (more arguments in `extra`: `--continue`) against
    /// `model`, with its own-model settings (Anthropic Messages at the stand-in; no sign-in),
    /// offline, every tool allowed and the folder trusted (`COPILOT_ALLOW_ALL=true`: its hooks
    /// and MCP servers load; `--trust-folder` does not go with `--continue`). Copilot unpacks
    /// itself into a cache shared by the tests.
    pub(crate) fn copilot(&self, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
        let cache = self.agents.join("../../xdg-cache");
        let mut cmd = self.command(&self.agents.join("copilot"));
        cmd.env("COPILOT_PROVIDER_BASE_URL", format!("http://127.0.0.1:{}", model.port))
            .env("COPILOT_PROVIDER_TYPE", "anthropic")
            .env("COPILOT_PROVIDER_API_KEY", "dummy")
            .env("COPILOT_MODEL", "claude-sonnet-4")
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_ALLOW_ALL", "true")
            .env("XDG_CACHE_HOME", cache)
            .args(["-p", prompt, "--allow-all-tools", "--no-auto-update"])
            .args(extra);
        finish(cmd, "copilot")
    }

    /// One `pi -p PROMPT` against `model` (more arguments in `extra`: `--continue`), through a
    /// provider of its models.json that speaks OpenAI Chat Completions to the stand-in, offline.
    pub(crate) fn pi(&self, model: &StandIn, prompt: &str, extra: &[&str]) -> Out {
        let mut cmd = self.pi_command(model);
        cmd.args(extra).args(["-p", prompt]);
        finish(cmd, "pi")
    }

    /// `pi` against `model` (see [`Project::pi`]), arguments to add.
    pub(crate) fn pi_command(&self, model: &StandIn) -> Command {
        let folder = self.home.path().join(".pi/agent");
        std::fs::create_dir_all(&folder).unwrap();
        let models = json!({ "providers": { "standin": {
            "baseUrl": format!("http://127.0.0.1:{}/v1", model.port),
            "api": "openai-completions", "apiKey": "dummy", "models": [{ "id": "stand-in" }],
        } } });
        std::fs::write(folder.join("models.json"), models.to_string()).unwrap();
        let mut cmd = self.command(&self.agents.join("pi"));
        cmd.env("PI_OFFLINE", "1").args(["--provider", "standin", "--model", "stand-in"]);
        cmd
    }

    /// One `codex exec PROMPT` session against `model`, in the project trusted (its hooks run
    /// when the user has trusted them: [`Project::trust_codex_hooks`]).
    pub(crate) fn codex(&self, model: &StandIn, prompt: &str) -> Out {
        self.codex_with(model, &[prompt])
    }

    /// `codex exec --trust ARGS` against `model` (see [`Project::codex`]).
    pub(crate) fn codex_with(&self, model: &StandIn, args: &[&str]) -> Out {
        let config = format!(
            "model = \"stand-in\"\nmodel_provider = \"mock\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\n\n[model_providers.mock]\nname = \"mock\"\n\
             base_url = \"http://127.0.0.1:{}/v1\"\nwire_api = \"responses\"\n\
             env_key = \"MOCK_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\n\
             [analytics]\nenabled = false\n",
            model.port
        );
        let codex_home = self.home.path().join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        let path = codex_home.join("config.toml");
        // mem setup at user scope writes into this file too: the provider goes first, once.
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let rest =
            old.split_once("[analytics]\nenabled = false\n").map_or(old.as_str(), |(_, r)| r);
        std::fs::write(&path, format!("{config}{rest}")).unwrap();
        let mut cmd = self.command(&self.agents.join("codex"));
        cmd.env("MOCK_API_KEY", "dummy").args(["exec", "--trust"]).args(args);
        finish(cmd, "codex")
    }

    /// What a user's `/hooks` trust step in Codex records: each hook's current hash, as Codex
    /// itself computes it (its app server's `hooks/list`), under `[hooks.state."<key>"]` of the
    /// user's `config.toml`. Returns how many hooks were trusted.
    pub(crate) fn trust_codex_hooks(&self) -> usize {
        use std::io::{BufRead, BufReader, Write};
        // Codex lists (and runs) a project's hooks once the project is trusted, as `codex exec
        // --trust` records it.
        let path = self.home.path().join(".codex/config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut config = std::fs::read_to_string(&path).unwrap_or_default();
        let top = self.repo().canonicalize().unwrap();
        let project =
            format!("[projects.{:?}]\ntrust_level = \"trusted\"\n", top.display().to_string());
        if !config.contains(&project) {
            config.push_str(&format!("\n{project}"));
            std::fs::write(&path, &config).unwrap();
        }
        let mut cmd = self.command(&self.agents.join("codex"));
        let mut child = cmd
            .arg("app-server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let cwd = self.repo().display().to_string();
        let requests = [
            json!({"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "t", "version": "0"}}}),
            json!({"method": "initialized"}),
            json!({"id": 1, "method": "hooks/list", "params": {"cwds": [cwd]}}),
        ];
        for request in requests {
            writeln!(stdin, "{request}").unwrap();
        }
        let listed = loop {
            let line = lines.next().expect("the app server answers").unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == 1 {
                break answer;
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        let mut hooks = Vec::new();
        collect_hooks(&listed["result"], &mut hooks);
        for (key, hash) in &hooks {
            config.push_str(&format!("\n[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n"));
        }
        std::fs::write(&path, config).unwrap();
        hooks.len()
    }

    /// The memory files of the project root, by path relative to it, with their text.
    pub(crate) fn memories(&self) -> Vec<(String, String)> {
        let root = self.repo().join(".memory");
        let mut out = Vec::new();
        for dir in [root.clone(), root.join("sessions")] {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "md") {
                    let rel = path.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                    out.push((rel, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    /// The events of the session log, as `mem session show --json` gives them, of every
    /// session.
    pub(crate) fn logged_events(&self) -> Vec<Value> {
        let list: Value =
            serde_json::from_str(&self.mem_ok(&["session", "list", "--json"])).unwrap();
        let mut events = Vec::new();
        for session in list.as_array().unwrap() {
            let id = session["id"].as_str().unwrap();
            let shown: Value =
                serde_json::from_str(&self.mem_ok(&["session", "show", id, "--json"])).unwrap();
            events.extend(shown.as_array().unwrap().iter().cloned());
        }
        events
    }
}

/// The `(key, currentHash)` of every hook of mem's in a `hooks/list` answer.
fn collect_hooks(value: &Value, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            let program =
                map.get("command").and_then(Value::as_str).and_then(|c| c.split(' ').next());
            let mem = program.is_some_and(|p| p == "mem" || p.ends_with("/mem"));
            if let (true, Some(Value::String(key)), Some(Value::String(hash))) =
                (mem, map.get("key"), map.get("currentHash"))
            {
                out.push((key.clone(), hash.clone()));
            }
            map.values().for_each(|v| collect_hooks(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_hooks(v, out)),
        _ => {}
    }
}

/// Runs an agent to its end (a guard of two minutes against a hang, not a timing).
pub(crate) fn finish(mut cmd: Command, name: &str) -> Out {
    use wait_timeout::ChildExt;
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let status = child.wait_timeout(Duration::from_secs(120)).unwrap();
    if status.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let out = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(status.is_some(), "{name} still ran after two minutes: {out:?}");
    assert_eq!(out.code, 0, "{name} failed: {out:?}");
    out
}

/// The session log of a one-prompt session with a shell call, checked: a prompt (`prompt`, as
/// typed), the call, its result with exit 0, an answer, the token of the command redacted, and
/// the session recorded as `agent`'s. Its events.
#[track_caller]
pub(crate) fn assert_one_turn_logged(project: &Project, prompt: &str, agent: &str) -> Vec<Value> {
    let events = project.logged_events();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in ["prompt", "tool_call", "tool_result", "assistant"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| **k == "prompt").count(), 1, "{kinds:?}");
    let logged = events.iter().find(|e| e["kind"] == "prompt").unwrap();
    assert_eq!(logged["text"], prompt);
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["status"], 0, "{result}");
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains(TOKEN) && log.contains("[REDACTED:"), "{log}");
    let list: Value =
        serde_json::from_str(&project.mem_ok(&["session", "list", "--json"])).unwrap();
    assert_eq!(list[0]["agent"], agent, "{list}");
    assert_eq!(list[0]["project"], project.repo().to_str().unwrap(), "{list}");
    events
}

pub(crate) const PNPM: &str = "We use pnpm, never npm, for the web client";

/// A fake GitHub token in a command the model runs: redacted before anything is written.
pub(crate) const TOKEN: &str = "ghp_0123456789abcdefghijABCDEFGHIJ012345";

#[test]
fn claude_code_gets_the_memories_runs_the_hooks_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "Bash", "input": { "command": command, "description": "list" },
        "text": "The web client uses pnpm.",
    }));
    let out =
        project.claude(&model, "which package manager do we use", &["--allowedTools", "Bash"]);
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    // The memory reached the model (SessionStart context), and the mem tools were offered.
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    assert!(conversation[0].contains("SessionStart hook additional context: # Memory (from mem)"));
    assert!(conversation[0].contains(PNPM), "{}", conversation[0]);
    for tool in ["mcp__mem__recall", "mcp__mem__remember", "mcp__mem__session_search"] {
        assert!(conversation[0].contains(&format!("\"name\":\"{tool}\"")), "{tool} offered");
    }
    // Captured: the session memory and the session log, the token redacted everywhere.
    let sessions: Vec<_> =
        project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(sessions[0].1.contains("which package manager do we use"), "{}", sessions[0].1);
    let events = project.logged_events();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in ["prompt", "tool_call", "tool_result", "assistant"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let result = events.iter().find(|e| e["kind"] == "tool_result").unwrap();
    assert_eq!(result["status"], 0, "{result}");
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains(TOKEN) && log.contains("[REDACTED:"), "{log}");
    assert!(!sessions[0].1.contains(TOKEN));
    project.mem_ok(&["health"]);
    // The next session starts with the one before it.
    let model = StandIn::start(json!({ "text": "Noted." }));
    project.claude(&model, "anything else about the build", &[]);
    assert!(model.conversation()[0].contains("## Recent sessions"), "{:?}", model.conversation());
}

#[test]
fn claude_code_calls_the_mem_tools() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "tool": "mcp__mem__remember", "input": { "text": fact, "type": "semantic" },
        "text": "Remembered.",
    }));
    project.claude(
        &model,
        "remember where staging lives",
        &["--allowedTools", "mcp__mem__remember"],
    );
    let written = project.memories().into_iter().filter(|(_, text)| text.contains(fact)).count();
    assert_eq!(written, 1, "{:?}", project.memories());
    let model = StandIn::start(json!({
        "tool": "mcp__mem__recall", "input": { "query": "staging database port" },
        "text": "It is on port 6543.",
    }));
    project.claude(&model, "where is staging", &["--allowedTools", "mcp__mem__recall"]);
    // The recall's answer went back to the model as the tool's result.
    let conversation = model.conversation();
    let last = conversation.last().unwrap();
    assert!(last.contains("tool_result") && last.contains("db-stage-2"), "{last}");
}

#[test]
fn claude_code_turns_are_checkpointed_and_rewound() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project", "--checkpoints"]);
    let model = StandIn::start(json!({
        "tool": "Bash",
        "input": { "command": "echo 'rewritten by the agent' > README.md", "description": "edit" },
        "text": "Edited.",
    }));
    project.claude(&model, "rewrite the readme", &["--allowedTools", "Bash"]);
    let readme = project.repo().join("README.md");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "rewritten by the agent\n");
    let listed = project.mem_ok(&["checkpoints"]);
    assert!(listed.contains("before turn 1 of session"), "{listed}");
    let id = listed.split_whitespace().next().unwrap().to_string();
    let out = project.mem_ok(&["rewind", &id]);
    assert!(out.contains("restored README.md"), "{out}");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "# Shop\n");
    assert!(out.contains("left .memory/ as it is"), "the session memory stays: {out}");
    assert_eq!(project.memories().iter().filter(|(p, _)| p.starts_with("sessions/")).count(), 1);
}

#[test]
fn setup_remove_gives_back_the_users_own_configuration() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    let settings = "{\n  \"permissions\": { \"allow\": [\"Bash(cargo test)\"] }\n}\n";
    let mcp = "{\n  \"mcpServers\": { \"db\": { \"command\": \"pg-mcp\" } }\n}\n";
    std::fs::create_dir_all(project.repo().join(".claude")).unwrap();
    std::fs::write(project.repo().join(".claude/settings.json"), settings).unwrap();
    std::fs::write(project.repo().join(".mcp.json"), mcp).unwrap();
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    let model = StandIn::start(json!({ "text": "Hello." }));
    project.claude(&model, "hello", &[]);
    project.mem_ok(&["setup", "claude", "--scope", "project", "--remove"]);
    let read = |rel: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(project.repo().join(rel)).unwrap()).unwrap()
    };
    assert_eq!(read(".claude/settings.json"), serde_json::from_str::<Value>(settings).unwrap());
    assert_eq!(read(".mcp.json"), serde_json::from_str::<Value>(mcp).unwrap());
    // Without mem's entries the agent runs no mem hook and offers no mem tool.
    let model = StandIn::start(json!({ "text": "Hello again." }));
    project.claude(&model, "hello again", &[]);
    let first = &model.conversation()[0];
    assert!(!first.contains("Memory (from mem)") && !first.contains("mcp__mem__"), "{first}");
}

#[test]
fn codex_gets_the_memories_runs_the_hooks_and_is_captured() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "codex"]);
    // Until the user trusts the hooks, Codex does not run them, and health says so.
    let health = project.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("Codex has not trusted these hooks yet"), "{}", health.stdout);
    assert_eq!(project.trust_codex_hooks(), 3);
    let health = project.mem_ok(&["health"]);
    assert!(health.contains("✓ agents"), "{health}");
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let command = format!("echo GITHUB_TOKEN={TOKEN} > /dev/null; echo listed");
    let model = StandIn::start(json!({
        "tool": "exec_command", "input": { "cmd": command }, "text": "The web client uses pnpm.",
    }));
    let out = project.codex(&model, "which package manager do we use");
    assert!(out.stdout.contains("The web client uses pnpm."), "{out:?}");
    let conversation = model.conversation();
    assert!(conversation.len() >= 2, "a tool call and the answer: {conversation:?}");
    // The memory reached the model as a developer message; the mem tools were offered.
    let first: Value = serde_json::from_str(&conversation[0]).unwrap();
    let developer = first["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["role"] == "developer")
        .map(|i| i.to_string())
        .find(|t| t.contains("# Memory (from mem)"))
        .expect("a developer message with the memories");
    assert!(developer.contains(PNPM), "{developer}");
    let mem_tools = first["tools"].as_array().unwrap().iter().find(|t| t["name"] == "mcp__mem");
    let names: Vec<&str> = mem_tools.expect("the mem server's tools")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 9, "{names:?}");
    // Captured, the token redacted.
    let sessions: Vec<_> =
        project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let events = project.logged_events();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    for kind in ["prompt", "tool_call", "tool_result", "assistant"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains(TOKEN) && log.contains("[REDACTED:"), "{log}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
}

/// Codex calls the mem server's tools: `remember` writes a memory into the project's root,
/// `recall` answers with it (Codex offers an MCP server's tools inside one namespace item).
#[test]
fn codex_calls_the_mem_tools() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "codex"]);
    project.trust_codex_hooks();
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "namespace": "mcp__mem", "tool": "remember",
        "input": { "text": fact, "type": "semantic" }, "text": "Remembered.",
    }));
    project.codex(&model, "remember where staging lives");
    let written = project.memories().into_iter().filter(|(_, text)| text.contains(fact)).count();
    assert_eq!(written, 1, "{:?}", project.memories());
    let model = StandIn::start(json!({
        "namespace": "mcp__mem", "tool": "recall", "input": { "query": "staging database port" },
        "text": "It is on port 6543.",
    }));
    project.codex(&model, "where is staging");
    let conversation = model.conversation();
    let last = conversation.last().unwrap();
    assert!(last.contains("function_call_output") && last.contains("db-stage-2"), "{last}");
}

/// A Codex session started in a subfolder runs the project's hooks too (Codex reads `.codex/`
/// in every folder up to the repository's top) and is captured, and health counts it.
#[test]
fn codex_started_in_a_subfolder_is_captured() {
    let Some(agents) = agents() else { return };
    let mut project = Project::new(agents);
    project.mem_ok(&["setup", "codex"]);
    project.trust_codex_hooks();
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    project.within = PathBuf::from("src");
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.codex(&model, "which package manager do we use");
    assert!(model.conversation()[0].contains(PNPM), "the memory reached the model");
    let sessions = project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/"));
    assert_eq!(sessions.count(), 1, "{:?}", project.memories());
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("1/1 local sessions captured"), "{health}");
}

/// #24, defect 4: Codex ignores `notify` in a project's `.codex/config.toml` (and warned on
/// every run), while setup said notify "still captures each turn". A project's setup writes no
/// notify; before the hooks are trusted nothing is captured, and health names the cause.
#[test]
fn codex_before_the_hooks_are_trusted_health_names_the_cause() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    let setup = project.mem_ok(&["setup", "codex"]);
    assert!(!setup.contains("notify ="), "{setup}");
    assert!(setup.contains("until then nothing of this project's sessions is captured"), "{setup}");
    let model = StandIn::start(json!({ "text": "Hello." }));
    let out = project.codex(&model, "hello");
    assert!(!out.stderr.contains("Ignored unsupported project-local config keys"), "{out:?}");
    assert!(!model.conversation()[0].contains("Memory (from mem)"));
    assert!(project.memories().iter().all(|(p, _)| !p.starts_with("sessions/")));
    let health = project.mem(&["health", "--transcripts"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("0/1 local sessions captured"), "{}", health.stdout);
    assert!(
        health.stdout.contains("cause: Codex has not trusted mem's hooks yet"),
        "{}",
        health.stdout
    );
}

/// #24, defect 3: Claude Code reads a project's settings in the folder it starts in only, so a
/// session started in a subfolder ran no mem hook and was never captured, silently. A
/// project's setup also puts hooks in the user's settings that act only in projects with a
/// memory root, once with the project's own where both run; health finds the subfolders'
/// transcript folders.
#[test]
fn claude_started_in_a_subfolder_is_captured_and_nothing_runs_twice() {
    let Some(agents) = agents() else { return };
    let mut project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    project.within = PathBuf::from("src");
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.claude(&model, "which package manager do we use", &[]);
    assert!(model.conversation()[0].contains(PNPM), "the memory reached the model");
    let sessions = |project: &Project| {
        project.memories().into_iter().filter(|(p, _)| p.starts_with("sessions/")).count()
    };
    assert_eq!(sessions(&project), 1, "{:?}", project.memories());
    let health = project.mem(&["health", "--transcripts"]);
    assert_eq!(health.code, 0, "{}", health.stdout);
    assert!(health.stdout.contains("1/1 local sessions captured"), "{}", health.stdout);
    // At the top both sets of hooks run; each acts once.
    project.within = PathBuf::new();
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.claude(&model, "which package manager do we use again", &[]);
    let first = &model.conversation()[0];
    assert_eq!(first.matches("SessionStart hook additional context").count(), 1, "{first}");
    assert_eq!(sessions(&project), 2);
    let log = std::fs::read_to_string(project.repo().join(".memory/.mem/capture.log")).unwrap();
    let last_session: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let id = last_session["session_id"].as_str().unwrap();
    let stops = log.lines().filter(|l| l.contains(id) && l.contains("\"Stop\"")).count();
    assert_eq!(stops, 1, "{log}");
    let health = project.mem_ok(&["health", "--transcripts"]);
    assert!(health.contains("2/2 local sessions captured"), "{health}");
    // Another repository of this user, without a memory root: the user's hooks do nothing.
    let other = tempfile::tempdir().unwrap();
    let git = Command::new("git").args(["init", "-q"]).current_dir(other.path()).status();
    assert!(git.unwrap().success());
    // (`within` an absolute folder: the session runs there.)
    project.within = other.path().to_path_buf();
    project.claude(&model, "hello", &[]);
    // (The folder holds this machine's record of roots, `roots.toml`, since the project's
    // setup; the per-user root is its `mem.toml`.)
    let data = project.home.path().join(".local/share/mem/mem.toml");
    assert!(!data.exists(), "no per-user root made");
    assert!(!other.path().join(".memory").exists());
}

/// #24, defect 6: committed configuration named this checkout and this machine's mem
/// (`cwd = "<checkout>"` in Codex's, an absolute mem everywhere): in another checkout the MCP
/// server wrote into the first, and on a teammate's machine every hook failed unseen. A
/// project's files name bare `mem`; a clone elsewhere, with mem elsewhere on PATH, works.
#[test]
fn a_clone_on_another_machine_works() {
    let Some(agents) = agents() else { return };
    let first = Project::new(agents.clone());
    first.mem_ok(&["setup", "claude", "--scope", "project"]);
    first.mem_ok(&["setup", "codex"]);
    first.git(&["add", "-A"]);
    first.git(&["commit", "-q", "-m", "mem"]);
    let committed = Command::new("git")
        .args(["grep", "-I", "-l", "-e", &first.repo().display().to_string()])
        .args(["-e", &mem_folder().display().to_string()])
        .current_dir(first.repo())
        .output()
        .unwrap();
    assert!(committed.stdout.is_empty(), "{}", String::from_utf8_lossy(&committed.stdout));
    // A teammate: another HOME, the clone at another path, mem in another folder on PATH.
    let mut mate = Project::new(agents);
    std::fs::remove_dir_all(mate.repo()).unwrap();
    let clone = Command::new("git")
        .arg("clone")
        .arg("-q")
        .arg(first.repo())
        .arg(mate.repo())
        .status()
        .unwrap();
    assert!(clone.success());
    let tools = tempfile::tempdir().unwrap();
    std::fs::copy(mem_folder().join("mem"), tools.path().join("mem")).unwrap();
    mate.mem_folder = tools.path().to_path_buf();
    let fact = "The staging database is db-stage-2 on port 6543";
    let model = StandIn::start(json!({
        "tool": "mcp__mem__remember", "input": { "text": fact, "type": "semantic" },
        "text": "Remembered.",
    }));
    mate.claude(&model, "remember where staging lives", &["--allowedTools", "mcp__mem__remember"]);
    let mems = mate.memories();
    assert!(mems.iter().any(|(_, t)| t.contains(fact)), "{mems:?}");
    assert_eq!(mems.iter().filter(|(p, _)| p.starts_with("sessions/")).count(), 1, "{mems:?}");
    assert!(first.memories().iter().all(|(_, t)| !t.contains(fact)), "nothing in the first");
    // Codex's hooks too run the mem on this PATH, in the clone, and its server is offered.
    assert_eq!(mate.trust_codex_hooks(), 3);
    let model = StandIn::start(json!({ "text": "Hello." }));
    mate.codex(&model, "hello");
    let first_request = &model.conversation()[0];
    assert!(first_request.contains("\"mcp__mem\""), "the mem tools are offered");
    assert!(first_request.contains(fact), "the memory reached the model: {first_request}");
    assert_eq!(mate.memories().iter().filter(|(p, _)| p.starts_with("sessions/")).count(), 2);
    assert!(first.memories().is_empty(), "{:?}", first.memories());
    mate.mem_ok(&["health", "--transcripts"]);
    // Without mem on PATH, health says that the agents cannot run it.
    let out = Command::new(mem_folder().join("mem"))
        .arg("health")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", mate.home.path())
        .env("CODEX_HOME", mate.home.path().join(".codex"))
        .current_dir(mate.repo())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("`mem` in") && text.contains("not found on PATH"), "{text}");
}

/// The turns of the scripted session of [`each_memory_reaches_the_model_once_per_session`].
const TURNS: usize = 10;

/// The first request of the conversation that holds `marker` (the first of its turn, when the
/// marker is the turn's prompt), as JSON text.
pub(crate) fn first_request(model: &StandIn, marker: &str) -> Option<String> {
    model.conversation().into_iter().find(|body| body.contains(marker))
}

/// mem's context blocks in a request (JSON text): each from its heading `# Memory (from mem)`
/// to its end (a blank line and more, or the end of its string), in no particular order.
pub(crate) fn memory_blocks(body: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let value: Value = serde_json::from_str(body).unwrap();
    let mut stack = vec![&value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => {
                for (at, _) in s.match_indices("# Memory (from mem)") {
                    let block = &s[at..];
                    let end = block[1..].find("# Memory (from mem)").map_or(block.len(), |e| e + 1);
                    let block = &block[..end];
                    let end = block.find("\n\n\n").unwrap_or(block.len());
                    blocks.push(block[..end].trim_end().to_string());
                }
            }
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    blocks
}

/// For the first request of the turn whose prompt holds `marker`: how many copies of `text`
/// the model saw, and the characters of mem's context blocks ([`memory_blocks`]) in it.
pub(crate) fn first_request_of(model: &StandIn, marker: &str, text: &str) -> (usize, usize) {
    let Some(body) = first_request(model, marker) else { return (0, 0) };
    let chars = memory_blocks(&body).iter().map(|b| b.chars().count()).sum();
    (body.matches(text).count(), chars)
}

/// #24, defect 8: `--continue` and `codex exec resume` sent the key memories again to a
/// conversation that held them, and the per-prompt hook sent a memory again on every prompt
/// that matched it. Over a scripted session of ten turns with each agent, the memory that
/// answers every prompt is in the model's context once, from the first turn on.
#[test]
fn each_memory_reaches_the_model_once_per_session() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    project.mem_ok(&["setup", "codex"]);
    project.trust_codex_hooks();
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    // Each memory's line in a context names its id once.
    let listed: Value = serde_json::from_str(&project.mem_ok(&["list", "--json"])).unwrap();
    let id = format!("`{}`", listed[0]["id"].as_str().unwrap());
    let prompt = |turn: usize| format!("turn {turn}: which package manager do we use");
    let model = StandIn::start(json!({ "text": "pnpm." }));
    for turn in 1..=TURNS {
        let continued: &[&str] = if turn == 1 { &[] } else { &["--continue"] };
        project.claude(&model, &prompt(turn), continued);
    }
    let claude: Vec<(usize, usize)> =
        (1..=TURNS).map(|turn| first_request_of(&model, &format!("turn {turn}:"), &id)).collect();
    let model = StandIn::start(json!({ "text": "pnpm." }));
    for turn in 1..=TURNS {
        let text = prompt(turn);
        let args: Vec<&str> =
            if turn == 1 { vec![text.as_str()] } else { vec!["resume", "--last", text.as_str()] };
        project.codex_with(&model, &args);
    }
    let codex: Vec<(usize, usize)> =
        (1..=TURNS).map(|turn| first_request_of(&model, &format!("turn {turn}:"), &id)).collect();
    // The figures of docs/benchmarks.md: (copies, characters of mem's context) per turn.
    eprintln!("each turn's first request, (copies of the memory, chars of mem's context):");
    eprintln!("  claude {claude:?}\n  codex  {codex:?}");
    let copies = |turns: &[(usize, usize)]| turns.iter().map(|t| t.0).collect::<Vec<_>>();
    assert_eq!(copies(&claude), vec![1; TURNS], "Claude Code");
    assert_eq!(copies(&codex), vec![1; TURNS], "Codex");
}

/// #24, defects 1 and 2: `claude mcp list` (and `mcp get`) runs the SessionEnd hook for a
/// session with no transcript, and a Stop can come before the transcript exists; each was a
/// capture error, and `mem health` failed for a day. Nothing to capture yet is not an error.
#[test]
fn a_claude_command_that_is_not_a_session_leaves_health_clean() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "claude", "--scope", "project"]);
    let mut cmd = project.command(&project.agents.join("claude"));
    cmd.env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .args(["mcp", "list"]);
    let out = finish(cmd, "claude mcp list");
    assert!(out.stdout.contains("mem"), "{out:?}");
    let log = std::fs::read_to_string(project.repo().join(".memory/.mem/capture.log")).unwrap();
    assert!(log.contains("\"hook_event\":\"SessionEnd\""), "the hook ran: {log}");
    assert!(log.contains("does not exist yet") && !log.contains("\"error\":\"cannot"), "{log}");
    let health = project.mem(&["health"]);
    assert_eq!(health.code, 0, "{}", health.stdout);
}

/// #24, defect 5: with mem set up at both scopes, Codex ran every hook twice and the model got
/// the memories two and four times per request. Setup refuses the second set, naming the first;
/// the real Codex then gets each memory once.
#[test]
fn setup_keeps_one_set_of_hooks_per_agent() {
    let Some(agents) = agents() else { return };
    let project = Project::new(agents);
    project.mem_ok(&["setup", "codex"]);
    let twice = project.mem(&["setup", "codex", "--scope", "user"]);
    assert_eq!(twice.code, 2, "{twice:?}");
    assert!(
        twice.stderr.contains("mem's hooks are already set up at project scope"),
        "{}",
        twice.stderr
    );
    assert!(twice.stderr.contains(".codex/hooks.json"), "{}", twice.stderr);
    let user_hooks = project.home.path().join(".codex/hooks.json");
    assert!(!user_hooks.exists(), "nothing written at user scope");
    project.trust_codex_hooks();
    project.mem_ok(&["add", "--type", "semantic", "--importance", "8", PNPM]);
    let model = StandIn::start(json!({ "text": "pnpm." }));
    project.codex(&model, "which package manager do we use");
    let first = &model.conversation()[0];
    assert_eq!(first.matches("# Memory (from mem)").count(), 1, "{first}");
    // Claude Code likewise.
    project.mem_ok(&["setup", "claude", "--scope", "user"]);
    let out = project.mem(&["setup", "claude", "--scope", "project"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("already set up at user scope"), "{}", out.stderr);
}
