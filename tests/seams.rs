//! Regressions of the third probe that need no agent: hooks that go on whatever the user's
//! files hold, setup's guards and its output.

use std::path::Path;
use std::process::Command;

use crate::util::{Dir, Out, bin, run_with_stdin};

/// A throw-away repository with a project root and one memory.
fn project() -> Dir {
    let dir = Dir::new();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir.mem_in(".", &["init", "--project"], "").ok();
    dir.mem_in(
        ".",
        &["add", "--type", "semantic", "The orders service stores orders in Postgres 16"],
        "",
    )
    .ok();
    dir
}

fn payload(event: &str, cwd: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"session_id":"s1","hook_event_name":"{event}","cwd":{}{extra}}}"#,
        serde_json::to_string(cwd.to_str().unwrap()).unwrap()
    )
}

/// Item 17: `[layers] usr = …` (a typo) in the user configuration file stopped the context and
/// checkpoint hooks of every project. Hooks warn and go on without the file; commands run by
/// hand still refuse it.
#[test]
fn a_typo_in_the_user_configuration_does_not_stop_the_hooks() {
    let repo = project();
    repo.write_user_config("[layers]\nusr = \"~/notes\"\n");
    let start = repo.mem_in(
        ".",
        &["context", "--hook", "claude"],
        payload("SessionStart", repo.path(), r#","source":"startup""#),
    );
    assert_eq!(start.code, 0, "{start:?}");
    assert!(start.stdout.contains("Postgres 16"), "{start:?}");
    assert!(start.stderr.contains("going on without the user configuration"), "{start:?}");
    assert!(start.stderr.contains("usr"), "{start:?}");
    let prompt = repo.mem_in(
        ".",
        &["context", "--hook", "gemini"],
        payload("BeforeAgent", repo.path(), r#","prompt":"where are orders stored?""#)
            .replace("\"s1\"", "\"s2\""),
    );
    assert!(prompt.stdout.contains("Postgres 16"), "{prompt:?}");
    assert_eq!(prompt.stderr.matches("going on without").count(), 1, "warned once: {prompt:?}");
    // By hand, the file is still an error that names it.
    let by_hand = repo.mem_in(".", &["recall", "orders"], "");
    assert_eq!(by_hand.code, 2, "{by_hand:?}");
    assert!(by_hand.stderr.contains("config.toml is not valid"), "{by_hand:?}");
}

/// `mem <args>` in `cwd` with `home` as HOME (and its config folders), `env` added, `stdin` fed.
fn mem_at(cwd: &Path, home: &Path, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Out {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .current_dir(cwd)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("CODEX_HOME", home.join(".codex"))
        .env_remove("GEMINI_CLI_HOME");
    for (k, v) in env {
        cmd.env(k, v);
    }
    run_with_stdin(&mut cmd, stdin)
}

/// Item 7: at project scope outside any git repository (in `~`, the project's file is the
/// user's own and `~/.memory` would catch every repository under home) setup refuses.
#[test]
fn a_project_setup_outside_a_repository_is_refused() {
    let home = tempfile::tempdir().unwrap();
    for agent in ["claude", "codex", "gemini"] {
        let out = mem_at(home.path(), home.path(), &["setup", agent], &[], "");
        assert_eq!(out.code, 2, "{agent}: {out:?}");
        assert!(out.stderr.contains("not in a git repository"), "{out:?}");
        assert!(out.stderr.contains("git init") && out.stderr.contains("--scope user"), "{out:?}");
    }
    let left: Vec<_> = std::fs::read_dir(home.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
}

/// Item 7: `MEM_DIR` in the shell sent a project's captures to that root, and made the
/// user-level `--project-only` hooks capture every unrelated repository into it. Those hooks
/// now act only on a project root found from the payload's working directory; setup warns.
#[test]
fn mem_dir_never_draws_project_only_hooks_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = Dir::new();
    elsewhere.mem(&["init"]).ok();
    let repo = project();
    let dir = elsewhere.path().to_str().unwrap();
    let out = mem_at(repo.path(), home.path(), &["setup", "claude"], &[("MEM_DIR", dir)], "");
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("MEM_DIR is set"), "{out:?}");
    // An unrelated repository, and the project: the --project-only hooks with MEM_DIR set.
    let unrelated = tempfile::tempdir().unwrap();
    std::fs::create_dir(unrelated.path().join(".git")).unwrap();
    let transcript = repo.write(
        "t.jsonl",
        r#"{"type":"user","sessionId":"s1","message":{"role":"user","content":"Move orders to Postgres 17"}}
"#,
    );
    for cwd in [unrelated.path(), repo.path()] {
        let extra = format!(
            r#","transcript_path":{}"#,
            serde_json::to_string(transcript.to_str().unwrap()).unwrap()
        );
        let out = mem_at(
            cwd,
            home.path(),
            &["capture", "--hook", "claude", "--project-only"],
            &[("MEM_DIR", dir)],
            &payload("Stop", cwd, &extra),
        );
        assert_eq!(out.code, 0, "{out:?}");
    }
    let sessions = |root: &Path| std::fs::read_dir(root.join("sessions")).map_or(0, |d| d.count());
    assert_eq!(sessions(elsewhere.path()), 0, "nothing captured into MEM_DIR's root");
    assert_eq!(sessions(&repo.path().join(".memory")), 1, "the project's own session");
    assert!(!unrelated.path().join(".memory").exists());
}

/// Item 7: a relative `GEMINI_CLI_HOME` (Gemini CLI takes it relative to each folder it starts
/// in) put the user-level hooks inside the repository.
#[test]
fn a_relative_gemini_home_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let repo = project();
    let out =
        mem_at(repo.path(), home.path(), &["setup", "gemini"], &[("GEMINI_CLI_HOME", "gh")], "");
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("GEMINI_CLI_HOME is relative (gh)"), "{out:?}");
    assert!(!repo.path().join("gh").exists() && !repo.path().join(".gemini").exists());
}

/// Item 8: setup's output said nothing of restarting a running agent, its diff had no context
/// lines, and its last line (`+ the project memory root …`) read as part of the diff.
#[test]
fn setup_output_has_context_lines_and_says_to_restart() {
    let home = tempfile::tempdir().unwrap();
    let dir = Dir::new();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let settings = "{\n  \"model\": \"opus\",\n  \"theme\": \"dark\",\n  \"verbose\": true,\n  \"env\": {}\n}\n";
    dir.write(".claude/settings.json", settings);
    let out = mem_at(dir.path(), home.path(), &["setup", "claude"], &[], "");
    assert_eq!(out.code, 0, "{out:?}");
    let diff: Vec<&str> = out.stdout.lines().collect();
    // Unchanged lines around the change, marked with a space as `diff -u` does.
    assert!(diff.contains(&r#"   "verbose": true,"#), "{}", out.stdout);
    assert!(!out.stdout.lines().any(|l| l.starts_with("+ the project")), "{}", out.stdout);
    assert!(out.stdout.contains("\nand a new project memory root: "), "{}", out.stdout);
    assert_eq!(
        diff.last(),
        Some(
            &"Restart Claude Code (and any open session of it) to load the hooks and the mem server."
        ),
        "{}",
        out.stdout
    );
    let removed = mem_at(dir.path(), home.path(), &["setup", "claude", "--remove"], &[], "");
    assert!(removed.stdout.contains("to stop running the hooks"), "{removed:?}");
}
