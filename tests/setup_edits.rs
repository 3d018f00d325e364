//! `mem setup` edits only what it wrote (regressions of the second probe): a user's own server
//! named `mem`, hook commands written around mem, links out of the repository, and the user's
//! `~/.claude.json` kept byte for byte outside mem's entry; Gemini CLI's one settings file.

use std::path::Path;
use std::process::Command;

use crate::util::{Out, bin, run};

/// A repository with an empty HOME of its own.
struct Repo {
    dir: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let repo = Repo { dir: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() };
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        repo
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    fn mem(&self, args: &[&str]) -> Out {
        let home = self.home.path();
        run(Command::new(bin())
            .args(args)
            .current_dir(self.path())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("CODEX_HOME", home.join(".codex"))
            .env_remove("GEMINI_CLI_HOME"))
    }
}

/// Defect 10: setup replaced a user's own MCP server named `mem` (`npx @acme/mem-mcp` with an
/// env token, `uvx mem0-mcp`, mem with its own `--dir`), and `--remove` deleted it or the whole
/// file. Setup stops, naming the file and the entry; `--remove` leaves it.
#[test]
fn a_server_named_mem_that_setup_did_not_write_is_never_touched() {
    let foreign = [
        r#"{"command":"npx","args":["@acme/mem-mcp"],"env":{"ACME_TOKEN":"t0k"}}"#,
        r#"{"command":"uvx","args":["mem0-mcp"]}"#,
        r#"{"command":"/usr/local/bin/mem","args":["--dir","/srv/notes","mcp"]}"#,
    ];
    for server in foreign {
        let repo = Repo::new();
        let text = format!("{{\n  \"mcpServers\": {{\n    \"mem\": {server}\n  }}\n}}\n");
        repo.write(".mcp.json", &text);
        let out = repo.mem(&["setup", "claude", "--scope", "project"]);
        assert_eq!(out.code, 2, "{server}: {out:?}");
        assert!(
            out.stderr.contains(".mcp.json already has an MCP server named `mem`"),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains(&server[..20]), "names the entry: {}", out.stderr);
        assert_eq!(repo.read(".mcp.json"), text);
        assert!(!repo.path().join(".claude/settings.json").exists(), "nothing written");
        repo.mem(&["setup", "claude", "--scope", "project", "--remove"]).ok();
        assert_eq!(repo.read(".mcp.json"), text, "{server}");
    }
    let repo = Repo::new();
    let toml = "[mcp_servers.mem]\ncommand = \"npx\"\nargs = [\"@acme/mem-mcp\"]\n";
    repo.write(".codex/config.toml", toml);
    let out = repo.mem(&["setup", "codex"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("config.toml already has an MCP server named `mem`"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.read(".codex/config.toml"), toml);
    repo.mem(&["setup", "codex", "--remove"]).ok();
    assert_eq!(repo.read(".codex/config.toml"), toml);
}

/// Defect 10: setup dropped hook commands the user wrote around mem (the resume hook that
/// docs/agents.md tells users to add, a capture chained with a notification).
#[test]
fn hook_commands_the_user_wrote_around_mem_stay() {
    let repo = Repo::new();
    let settings = r#"{
  "hooks": {
    "SessionStart": [
      { "hooks": [ { "type": "command", "command": "mem session resume --hook claude --budget 3000" } ] }
    ],
    "Stop": [
      { "hooks": [ { "type": "command", "command": "mem capture --hook claude && notify-send done" } ] }
    ]
  }
}
"#;
    repo.write(".claude/settings.json", settings);
    repo.mem(&["setup", "claude", "--scope", "project"]).ok();
    let set_up = repo.read(".claude/settings.json");
    for mine in [
        "mem session resume --hook claude --budget 3000",
        "mem capture --hook claude && notify-send done",
    ] {
        assert!(set_up.contains(mine), "{set_up}");
    }
    assert!(set_up.contains("context --hook claude --budget 2000"), "{set_up}");
    // The user's lines are untouched bytes; mem's are added after them.
    assert!(set_up.starts_with("{\n  \"hooks\": {\n    \"SessionStart\": [\n      { \"hooks\": [ { \"type\": \"command\", \"command\": \"mem session resume"), "{set_up}");
    repo.mem(&["setup", "claude", "--scope", "project"]).ok();
    assert_eq!(repo.read(".claude/settings.json"), set_up, "twice: nothing changes");
    repo.mem(&["setup", "claude", "--scope", "project", "--remove"]).ok();
    let removed: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    assert_eq!(removed, serde_json::from_str::<serde_json::Value>(settings).unwrap());
}

/// Defect 11: setup edited files outside the repository through links (`.mcp.json ->
/// ../victim-cfg/settings.json`, `.codex -> ../victim-cfg`); the diff named only the paths in
/// the repository. It refuses, naming the real path.
#[test]
fn setup_never_writes_through_a_link_out_of_the_repository() {
    let victim = tempfile::tempdir().unwrap();
    let cfg = victim.path().join("settings.json");
    std::fs::write(&cfg, "{\"theirs\": true}\n").unwrap();
    let repo = Repo::new();
    std::os::unix::fs::symlink(&cfg, repo.path().join(".mcp.json")).unwrap();
    let out = repo.mem(&["setup", "claude", "--scope", "project"]);
    assert_eq!(out.code, 2, "{out:?}");
    let real = std::fs::canonicalize(&cfg).unwrap();
    assert!(out.stderr.contains(&format!("to {}", real.display())), "{}", out.stderr);
    let repo = Repo::new();
    std::os::unix::fs::symlink(victim.path(), repo.path().join(".codex")).unwrap();
    let out = repo.mem(&["setup", "codex"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("leads out of the repository"), "{}", out.stderr);
    let repo = Repo::new();
    std::os::unix::fs::symlink(victim.path(), repo.path().join(".memory")).unwrap();
    let out = repo.mem(&["setup", "claude", "--scope", "project"]);
    assert_eq!(out.code, 2, "{out:?}");
    let names: Vec<_> =
        std::fs::read_dir(victim.path()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(names, ["settings.json"], "nothing written beside it");
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), "{\"theirs\": true}\n");
}

/// Defect 16 (the `~/.claude.json` items): big integers were rewritten
/// (12345678901234567890123 → 12345678901234568000000), a repeated key dropped, and a compact
/// 54 MB file took 142 s with a 450,000-line diff. Only mem's entry changes: every other byte
/// is kept, and the diff shows the bytes that change.
#[test]
fn the_users_claude_json_is_kept_byte_for_byte_outside_mems_entry() {
    let repo = Repo::new();
    let mut projects = String::new();
    for i in 0..20_000 {
        projects.push_str(&format!(
            r#""/home/ana/p{i}":{{"history":[{{"display":"fix bug {i}"}}],"lastCost":0.5,"big":12345678901234567890123}},"#
        ));
    }
    projects.pop();
    let text = format!(
        r#"{{"numStartups":12,"projects":{{{projects}}},"dup":1,"dup":2,"huge":12345678901234567890123}}"#
    );
    let path = repo.home.path().join(".claude.json");
    std::fs::write(&path, &text).unwrap();
    let out = repo.mem(&["setup", "claude", "--scope", "user"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.lines().count() < 80, "a short diff: {} lines", out.stdout.lines().count());
    let after = std::fs::read_to_string(&path).unwrap();
    let exe = std::fs::canonicalize(bin()).unwrap();
    let entry = format!(
        r#","mcpServers":{{"mem":{{"command":"{}","args":["mcp","--user-scope"]}}}}}}"#,
        exe.display()
    );
    assert_eq!(after, format!("{}{entry}", &text[..text.len() - 1]));
    // And out again: the file as it was, byte for byte.
    repo.mem(&["setup", "claude", "--scope", "user", "--remove"]).ok();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

/// #24, defect 6: an older setup wrote the absolute path of the machine's mem (and Codex's
/// `cwd` of the checkout, and a project `notify` Codex ignores). Running setup again replaces
/// those entries by the bare `mem` ones, one copy each, instead of adding a second set.
#[test]
fn entries_an_older_setup_wrote_are_replaced_not_doubled() {
    let repo = Repo::new();
    let old = "/opt/old-machine/bin/mem";
    let hook = |command: &str| {
        format!(r#"[{{"hooks":[{{"type":"command","command":"{old} {command}","timeout":10}}]}}]"#)
    };
    repo.write(
        ".claude/settings.json",
        &format!(
            r#"{{"hooks":{{"SessionStart":{},"UserPromptSubmit":{},"Stop":{},"SessionEnd":{}}}}}"#,
            hook("context --hook claude"),
            hook("context --hook claude --budget 2000"),
            hook("capture --hook claude"),
            hook("capture --hook claude")
        ),
    );
    repo.write(
        ".mcp.json",
        &format!(r#"{{"mcpServers":{{"mem":{{"command":"{old}","args":["mcp"]}}}}}}"#),
    );
    repo.write(
        ".codex/config.toml",
        &format!(
            "notify = [\"{old}\", \"capture\", \"--hook\", \"codex\"]\n\n[mcp_servers.mem]\n\
             command = \"{old}\"\nargs = [\"mcp\"]\ncwd = \"/home/ana/shop\"\n"
        ),
    );
    repo.mem(&["setup", "claude", "--scope", "project"]).ok();
    repo.mem(&["setup", "codex"]).ok();
    for file in [".claude/settings.json", ".mcp.json", ".codex/config.toml"] {
        let text = repo.read(file);
        assert!(!text.contains(old) && !text.contains("/home/ana/shop"), "{file}: {text}");
    }
    let settings: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    for event in ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"] {
        let groups = settings["hooks"][event].as_array().unwrap();
        assert_eq!(groups.len(), 1, "{event}: {settings}");
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert!(command.starts_with("mem "), "{command}");
    }
    let config = repo.read(".codex/config.toml");
    assert!(!config.contains("notify"), "Codex ignores a project's notify: {config}");
    assert!(config.contains("command = \"mem\""), "{config}");
}

/// Gemini CLI keeps hooks, servers and everything else in one `settings.json`: setup adds its
/// hooks (Gemini's events, milliseconds, names) and its trusted server beside the user's own,
/// a second run changes nothing, and `--remove` gives the user's file back as it was.
#[test]
fn gemini_settings_keep_the_users_own_entries() {
    let repo = Repo::new();
    let users = "{\n  // the user's own\n  \"ui\": { \"theme\": \"GitHub\" },\n  \"hooks\": {\n    \"AfterAgent\": [\n      { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] }\n    ]\n  },\n  \"mcpServers\": { \"db\": { \"command\": \"pg-mcp\" } }\n}\n";
    repo.write(".gemini/settings.json", users);
    let out = repo.mem(&["setup", "gemini"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let text = repo.read(".gemini/settings.json");
    assert!(text.contains("// the user's own") && text.contains("notify-send done"), "{text}");
    let value: serde_json::Value =
        serde_json::from_str(&text.replace("// the user's own", "")).unwrap();
    assert_eq!(value["mcpServers"]["db"]["command"], "pg-mcp");
    assert_eq!(
        value["mcpServers"]["mem"],
        serde_json::json!({ "command": "mem", "args": ["mcp"], "trust": true })
    );
    let after = &value["hooks"]["AfterAgent"];
    assert_eq!(after[1]["hooks"][0]["command"], "mem capture --hook gemini || true", "{after}");
    assert_eq!(after[1]["hooks"][0]["timeout"], 30000);
    assert_eq!(value["hooks"]["BeforeAgent"][0]["hooks"][0]["name"], "mem context");
    // The user's own file gets the hooks for sessions started in a subfolder.
    let user = std::fs::read_to_string(repo.home.path().join(".gemini/settings.json")).unwrap();
    assert!(user.contains("--hook gemini --project-only"), "{user}");
    let again = repo.mem(&["setup", "gemini"]);
    assert!(again.stdout.contains("Gemini CLI is already set up"), "{}", again.stdout);
    let removed = repo.mem(&["setup", "gemini", "--remove"]);
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert_eq!(repo.read(".gemini/settings.json"), users);
    assert!(!repo.home.path().join(".gemini/settings.json").exists());
}

/// Item 1 of the third probe: setup's hook commands end with `|| true`, so that no agent reads
/// a missing or old `mem` as "block the prompt". Entries an older setup wrote (without it) are
/// still mem's: setup upgrades them in place of adding a second set, and `--remove` takes them
/// out.
#[test]
fn hooks_of_an_older_setup_are_upgraded_and_removed() {
    let repo = Repo::new();
    let old = r#"{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"mem context --hook claude","timeout":10}]}],"Stop":[{"hooks":[{"type":"command","command":"mem capture --hook claude","timeout":30}]},{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#;
    repo.write(".claude/settings.json", old);
    let out = repo.mem(&["setup", "claude"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let value: serde_json::Value =
        serde_json::from_str(&repo.read(".claude/settings.json")).unwrap();
    let commands: Vec<String> = ["SessionStart", "UserPromptSubmit", "Stop"]
        .iter()
        .flat_map(|e| value["hooks"][e].as_array().cloned().unwrap_or_default())
        .map(|g| g["hooks"][0]["command"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        commands,
        [
            "mem context --hook claude || true",
            "mem context --hook claude --budget 2000 || true",
            "notify-send done",
            "mem capture --hook claude || true",
        ],
        "{value}"
    );
    let removed = repo.mem(&["setup", "claude", "--remove"]);
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    let left = repo.read(".claude/settings.json");
    assert!(!left.contains("--hook"), "{left}");
    assert!(left.contains("notify-send done"), "{left}");
    // And an old shape alone is removed too.
    repo.write(".claude/settings.json", old);
    let removed = repo.mem(&["setup", "claude", "--remove"]);
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert!(!repo.read(".claude/settings.json").contains("--hook"));
}

/// Item 1 of the third probe: a hook command this `mem` does not know (a newer setup's
/// argument, a typo) is reported on stderr and exits 0: clap's exit status 2 blocks a Claude Code
/// prompt and a Gemini CLI turn.
#[test]
fn a_hook_with_arguments_mem_does_not_know_exits_0() {
    let repo = Repo::new();
    for args in [
        &["context", "--hook", "gemini", "--budget", "2000", "--brand-new"][..],
        &["capture", "--hook", "claude", "--too-new"],
        &["context", "--hook", "cursor"],
        &["context", "--hook=gemini", "--bogus"],
    ] {
        let out = repo.mem(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("error:"), "{args:?}: {}", out.stderr);
    }
    // Without --hook, the same mistake is an error (exit 2).
    assert_eq!(repo.mem(&["context", "--bogus"]).code, 2);
}

/// Item 3 of the third probe: run as `mem.real`, setup at user scope writes that path, and
/// `--remove` then recognised nothing ("no mem entries") while setup again failed ("a server
/// named mem that mem setup did not write"). Mem's entries are those of an executable named
/// `mem` or of the running executable.
#[test]
fn a_mem_not_named_mem_can_undo_its_setup() {
    let repo = Repo::new();
    let tools = tempfile::tempdir().unwrap();
    let real = tools.path().join("mem.real");
    std::fs::copy(bin(), &real).unwrap();
    let run_real = |args: &[&str]| {
        let home = repo.home.path();
        run(Command::new(&real)
            .args(args)
            .current_dir(repo.path())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("CODEX_HOME", home.join(".codex"))
            .env_remove("GEMINI_CLI_HOME"))
    };
    for agent in ["codex", "claude", "gemini"] {
        let out = run_real(&["setup", agent, "--scope", "user"]);
        assert_eq!(out.code, 0, "{agent}: {}", out.stderr);
        let again = run_real(&["setup", agent, "--scope", "user"]);
        assert_eq!(again.code, 0, "{agent}: {}", again.stderr);
        assert!(again.stdout.contains("already set up"), "{agent}: {}", again.stdout);
        let removed = run_real(&["setup", agent, "--scope", "user", "--remove"]);
        assert_eq!(removed.code, 0, "{agent}: {}", removed.stderr);
        assert!(removed.stdout.contains("removed mem from"), "{agent}: {}", removed.stdout);
    }
    let home = repo.home.path();
    for file in [
        ".codex/config.toml",
        ".codex/hooks.json",
        ".claude/settings.json",
        ".claude.json",
        ".gemini/settings.json",
    ] {
        let text = std::fs::read_to_string(home.join(file)).unwrap_or_default();
        assert!(!text.contains("mem.real"), "{file}: {text}");
    }
}

/// The number in a file's `counter` key (the writer's version), 0 when none can be read.
fn counter(path: &Path) -> u64 {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["counter"].as_u64())
        .unwrap_or(0)
}

/// Item 12 of the third probe: setup read the user's settings, edited them and renamed its copy
/// over the file, losing what the agent (Claude Code rewrites `~/.claude.json` while it runs)
/// saved meanwhile: 75 of 200 acknowledged writes. A writer saves `~/.claude.json` by rename,
/// each version numbered, while setup and `--remove` run again and again: before each save, the
/// writer checks that its previous version is still there or in what setup wrote (a version
/// setup replaced with an older one is looked at again once that setup has ended). A setup may
/// stop when the file changes under it four times in a row; it never loses a version.
#[test]
fn a_version_the_agent_saves_while_setup_edits_is_never_lost() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    const WRITES: u64 = 300;
    let repo = Repo::new();
    let path = repo.home.path().join(".claude.json");
    std::fs::write(&path, "{\"counter\": 0}\n").unwrap();
    let ended = Arc::new((Mutex::new(0u64), Condvar::new()));
    let finished = Arc::new(AtomicBool::new(false));
    let writer = {
        let (path, ended, finished) = (path.clone(), ended.clone(), finished.clone());
        std::thread::spawn(move || {
            let mut lost = Vec::new();
            for i in 1..=WRITES {
                if counter(&path) < i - 1 {
                    // Seen while a setup runs: looked at again once it has ended.
                    let (runs, cond) = &*ended;
                    let seen = *runs.lock().unwrap();
                    let guard = cond.wait_while(runs.lock().unwrap(), |r| *r == seen).unwrap();
                    drop(guard);
                    if counter(&path) < i - 1 {
                        lost.push(i - 1);
                    }
                }
                let tmp = path.with_extension("writer");
                std::fs::write(&tmp, format!("{{\"counter\": {i}, \"numStartups\": 3}}\n"))
                    .unwrap();
                std::fs::rename(&tmp, &path).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            finished.store(true, Ordering::SeqCst);
            lost
        })
    };
    let mut runs = 0;
    while !finished.load(Ordering::SeqCst) {
        let mut args = vec!["setup", "claude", "--scope", "user"];
        if runs % 2 == 1 {
            args.push("--remove");
        }
        let out = repo.mem(&args);
        // A file that keeps changing stops setup after three edits made again (issue #51),
        // with the file as the writer saved it.
        let stopped = out.stderr.contains("changed while mem setup edited it");
        assert!(out.code == 0 || stopped, "{args:?}: {}", out.stderr);
        runs += 1;
        let (count, cond) = &*ended;
        *count.lock().unwrap() += 1;
        cond.notify_all();
    }
    let lost = writer.join().unwrap();
    assert!(lost.is_empty(), "{} of {WRITES} saves lost in {runs} runs: {lost:?}", lost.len());
    assert_eq!(counter(&path), WRITES);
}

/// Item 13 of the third probe: a hook event that is not a list was replaced by setup's (and
/// dropped for good by `--remove`); with `hooks` or `mcpServers` twice in a file, setup edited
/// the first while the agents read the last. Both are refused, naming the file and the key, and
/// nothing is written.
#[test]
fn what_the_agent_would_not_read_as_setup_edits_it_is_refused() {
    let stop = r#"{"hooks":[{"type":"command","command":"notify-send done"}]}"#;
    let cases = [
        (".claude/settings.json", format!(r#"{{"hooks":{{"Stop":{stop}}}}}"#), "`Stop`"),
        (
            ".claude/settings.json",
            format!(r#"{{"hooks":{{"Stop":[{stop}]}},"model":"opus","hooks":{{}}}}"#),
            "`hooks` appears 2 times",
        ),
        (
            ".claude/settings.json",
            format!(r#"{{"hooks":{{"Stop":[{stop}],"Stop":[]}}}}"#),
            "`Stop` in `hooks` appears 2 times",
        ),
        (
            ".mcp.json",
            r#"{"mcpServers":{"db":{"command":"pg-mcp"}},"mcpServers":{}}"#.to_string(),
            "`mcpServers` appears 2 times",
        ),
    ];
    for (file, text, named) in cases {
        let repo = Repo::new();
        repo.write(file, &text);
        let out = repo.mem(&["setup", "claude"]);
        assert_eq!(out.code, 2, "{text}: {out:?}");
        assert!(out.stderr.contains(named), "{text}: {}", out.stderr);
        assert!(out.stderr.contains(file), "names the file: {}", out.stderr);
        assert_eq!(repo.read(file), text);
        for other in [".claude/settings.json", ".mcp.json", ".memory"] {
            assert!(other == file || !repo.path().join(other).exists(), "{other} written");
        }
    }
    let repo = Repo::new();
    let text =
        r#"{"mcpServers":{"mem":{"command":"mem","args":["mcp"],"trust":true}},"mcpServers":{}}"#;
    repo.write(".gemini/settings.json", text);
    let out = repo.mem(&["setup", "gemini", "--remove"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("`mcpServers` appears 2 times"), "{}", out.stderr);
    assert_eq!(repo.read(".gemini/settings.json"), text);
}

/// Item 14 of the third probe: setup then `--remove` laid a file written on one line out over
/// many. Every file comes back byte for byte.
#[test]
fn setup_then_remove_gives_back_each_file_byte_for_byte() {
    let repo = Repo::new();
    let files = [
        (
            ".claude/settings.json",
            r#"{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#,
        ),
        (".mcp.json", r#"{"mcpServers":{"db":{"command":"pg-mcp"}}}"#),
        (".gemini/settings.json", "{\"ui\":{\"theme\":\"GitHub\"}}\n"),
        (
            ".codex/hooks.json",
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"notify-send done"}]}]}}"#,
        ),
    ];
    for (file, text) in files {
        repo.write(file, text);
    }
    let user = repo.home.path().join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, r#"{"model":"opus"}"#).unwrap();
    for agent in ["claude", "gemini", "codex"] {
        let out = repo.mem(&["setup", agent]);
        assert_eq!(out.code, 0, "{agent}: {}", out.stderr);
    }
    let set_up = repo.read(".claude/settings.json");
    assert_eq!(set_up.lines().count(), 1, "one line stays one line: {set_up}");
    assert!(set_up.contains("--hook claude"), "{set_up}");
    for agent in ["claude", "gemini", "codex"] {
        let out = repo.mem(&["setup", agent, "--remove"]);
        assert_eq!(out.code, 0, "{agent}: {}", out.stderr);
    }
    for (file, text) in files {
        assert_eq!(repo.read(file), text, "{file}");
    }
    assert_eq!(std::fs::read_to_string(&user).unwrap(), r#"{"model":"opus"}"#);
}

/// Item 14 of the third probe: with `~/.claude/settings.json` a dotfiles link to a folder that
/// does not exist, setup wrote the project's files, then failed on the third without saying it
/// had written the others or that the path is a dangling link. Every target is checked before
/// any is written; a link to a missing file in a folder that exists is written through.
#[test]
fn a_dangling_link_is_named_before_anything_is_written() {
    let repo = Repo::new();
    let dotfiles = repo.home.path().join("dotfiles");
    let user = repo.home.path().join(".claude/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("claude/settings.json"), &user).unwrap();
    let out = repo.mem(&["setup", "claude"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("dangling symbolic link"), "{}", out.stderr);
    assert!(out.stderr.contains(&user.display().to_string()), "{}", out.stderr);
    assert!(out.stderr.contains("nothing was written"), "{}", out.stderr);
    for file in [".claude/settings.json", ".mcp.json", ".memory"] {
        assert!(!repo.path().join(file).exists(), "{file} written");
    }
    std::fs::create_dir_all(dotfiles.join("claude")).unwrap();
    let out = repo.mem(&["setup", "claude"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::symlink_metadata(&user).unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(dotfiles.join("claude/settings.json")).unwrap();
    assert!(text.contains("--project-only"), "{text}");
}

/// Item 14 of the third probe: a setup killed between write and rename left `.mem-tmp-*` files
/// (a full copy of the settings) beside the agents' files and in `.memory/.mem/`, forever. The
/// next run removes mem's own that are a few minutes old, and nothing else.
#[test]
fn a_killed_setups_temporary_files_are_removed_by_the_next() {
    let repo = Repo::new();
    assert_eq!(repo.mem(&["setup", "claude"]).code, 0);
    let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
    let now: jiff::Timestamp = crate::util::NOW.parse().unwrap();
    let now = std::time::UNIX_EPOCH + std::time::Duration::from_secs(now.as_second() as u64);
    let claude = repo.home.path().join(".claude");
    let planted = [
        (claude.join(".mem-tmp-Ab3dE6"), long_ago, false),
        (claude.join(".mem-tmp-Zy9xW8"), now, true),
        (claude.join(".mem-tmp-notes.txt"), long_ago, true),
        (repo.path().join(".memory/.mem/.mem-tmp-Qq1Ww2"), long_ago, false),
        (repo.path().join(".mem-tmp-Rr3Tt4"), long_ago, false),
    ];
    for (path, time, _) in &planted {
        std::fs::write(path, "{\"hooks\":{}}").unwrap();
        std::fs::File::options().write(true).open(path).unwrap().set_modified(*time).unwrap();
    }
    let out = repo.mem(&["setup", "claude"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("removed 3 temporary file(s)"), "{}", out.stderr);
    for (path, _, kept) in &planted {
        assert_eq!(path.exists(), *kept, "{}", path.display());
    }
}

/// OpenCode at user scope: the server and mem's plugin go into OpenCode's configuration folder
/// (`$XDG_CONFIG_HOME/opencode`), naming this mem by its path; `mem health` finds both; a plugin
/// of that name the user wrote stops setup and stays; `--remove` leaves the user's file as it
/// was.
#[test]
fn opencode_gets_its_server_and_plugin_in_its_configuration_folder() {
    let repo = Repo::new();
    let folder = repo.home.path().join(".config/opencode");
    std::fs::create_dir_all(folder.join("plugins")).unwrap();
    let users = "{\n  // mine\n  \"share\": \"disabled\"\n}\n";
    std::fs::write(folder.join("opencode.json"), users).unwrap();
    std::fs::write(folder.join("plugins/mem.js"), "// my own plugin\n").unwrap();
    let out = repo.mem(&["setup", "opencode", "--scope", "user"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("plugins/mem.js exists and mem setup did not write it"), "{out:?}");
    assert_eq!(std::fs::read_to_string(folder.join("opencode.json")).unwrap(), users);
    std::fs::remove_file(folder.join("plugins/mem.js")).unwrap();
    let out = repo.mem(&["setup", "opencode", "--scope", "user"]);
    assert_eq!(out.code, 0, "{out:?}");
    let exe = std::fs::canonicalize(bin()).unwrap();
    let config = std::fs::read_to_string(folder.join("opencode.json")).unwrap();
    let quoted = serde_json::to_string(exe.to_str().unwrap()).unwrap();
    assert!(config.contains("// mine") && config.contains(&quoted), "{config}");
    assert!(config.contains("\"mcp\"") && config.contains("\"local\""), "{config}");
    let plugin = std::fs::read_to_string(folder.join("plugins/mem.js")).unwrap();
    assert!(plugin.contains(&format!("const MEM = {quoted};")), "{plugin}");
    let health = repo.mem(&["health", "--json"]);
    let found: serde_json::Value = serde_json::from_str(&health.stdout).unwrap();
    let files: Vec<&str> = found["agent_commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["runs"].is_string())
        .map(|c| c["file"].as_str().unwrap())
        .collect();
    assert!(files.iter().any(|f| f.ends_with("opencode/opencode.json")), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with("opencode/plugins/mem.js")), "{files:?}");
    assert_eq!(
        repo.mem(&["setup", "opencode", "--scope", "user"]).stdout.lines().next(),
        Some("OpenCode is already set up; nothing to change")
    );
    // OpenCode would run mem's plugin from both folders: one scope at a time.
    let out = repo.mem(&["setup", "opencode"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("already set up at user scope"), "{out:?}");
    assert!(!repo.path().join(".opencode/plugins/mem.js").exists());
    assert_eq!(repo.mem(&["setup", "opencode", "--scope", "user", "--remove"]).code, 0);
    assert_eq!(std::fs::read_to_string(folder.join("opencode.json")).unwrap(), users);
    assert!(!folder.join("plugins/mem.js").exists());
}
