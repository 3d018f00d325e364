//! Files mem reads that a clone, an agent or another program controls (issue 37, item 11): a
//! FIFO, a link to `/dev/zero` or out of its folder is reported and skipped, never read. Each
//! `mem` here runs under a memory limit and a timeout, so that a regression fails the test
//! instead of hanging it or exhausting the machine's memory.

#![cfg(unix)]

use std::path::Path;
use std::process::Command;

use crate::util::{Dir, Out, bin, ids, memory, run};

/// `mem <args>` in `cwd` with `envs`, under 4 GiB of address space and a 60 s timeout (exit
/// status 124 when it ran out).
fn bounded(cwd: &Path, envs: &[(&str, &Path)], args: &[&str]) -> Out {
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(r#"ulimit -v 4194304; exec timeout 60 "$0" "$@""#).arg(bin()).args(args);
    cmd.current_dir(cwd);
    for (name, value) in envs {
        cmd.env(name, value);
    }
    let out = run(&mut cmd);
    assert_ne!(out.code, 124, "mem {args:?} hung: {out:?}");
    out
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn link(target: impl AsRef<Path>, path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(target, path).unwrap();
}

fn root_with_one_good() -> Dir {
    let dir = Dir::new();
    dir.write(
        "good.md",
        memory("good", "semantic", 5, "2026-01-01T00:00:00Z", "# Redis eviction\nRedis evicts.\n"),
    );
    dir
}

/// `mem --dir <root> <args>` with the root's user configuration folder, bounded.
fn mem(dir: &Dir, args: &[&str]) -> Out {
    let mut full = vec!["--dir", dir.path().to_str().unwrap()];
    full.extend_from_slice(args);
    bounded(dir.path(), &[("XDG_CONFIG_HOME", dir.home())], &full)
}

/// A committed `usage/x.tsv -> /dev/zero` made every recall read without end; a FIFO there
/// hung it. Both are named and skipped by recall, prune, show, sync and health, and the good
/// memory is still recalled.
#[test]
fn usage_files_that_are_fifos_devices_or_links_out_are_skipped_and_named() {
    let dir = root_with_one_good();
    link("/dev/zero", &dir.path().join("usage/zero.tsv"));
    mkfifo(&dir.path().join("usage/pipe.tsv"));
    dir.write(
        "elsewhere/used.tsv",
        "since\t2026-01-01T00:00:00Z\nused\t1\t2026-02-01T00:00:00Z\tgood\n",
    );
    link("../elsewhere/used.tsv", &dir.path().join("usage/out.tsv"));
    dir.write("usage/own.tsv", "since\t2026-01-01T00:00:00Z\n");
    link("own.tsv", &dir.path().join("usage/beside.tsv"));

    let out = mem(&dir, &["recall", "redis", "--json"]);
    assert_eq!(ids(&out.json()), ["good"], "the good memory is still recalled");
    for expected in [
        "usage file not read (skipped): ",
        "usage/zero.tsv: a symbolic link out of its folder (to /dev/zero)",
        "usage/pipe.tsv: not a regular file but a FIFO (named pipe)",
        "usage/out.tsv: a symbolic link out of its folder (to ../elsewhere/used.tsv)",
    ] {
        assert!(out.stderr.contains(expected), "{expected:?} in:\n{}", out.stderr);
    }
    assert!(!out.stderr.contains("beside.tsv"), "a link inside usage/ is read: {}", out.stderr);
    // The next recall says it again: the file is still there.
    let again = mem(&dir, &["recall", "redis", "--json"]);
    assert!(again.stderr.contains("usage/pipe.tsv: not a regular file"), "{}", again.stderr);

    mem(&dir, &["prune", "--dry-run"]).ok();
    let shown = mem(&dir, &["show", "good", "--json"]).json();
    assert_eq!(shown["access_count"], 0, "the linked file's use is not counted: {shown}");
    mem(&dir, &["used", "good"]).ok();
    let health = mem(&dir, &["health"]);
    assert_eq!(health.code, 1, "{health:?}");
    assert!(health.stdout.contains("3 usage files are not read"), "{}", health.stdout);
    assert!(health.stdout.contains("usage/pipe.tsv: not a regular file"), "{}", health.stdout);
}

/// A mem.toml linked to a device made mem pass over the folder for the per-user root, silently
/// (creating it); a FIFO there hung `--dir`. Both are errors that name the file.
#[test]
fn a_mem_toml_that_is_no_regular_file_is_an_error_that_names_it() {
    let dir = root_with_one_good();
    let data = dir.path().join("data");
    link("/dev/zero", &dir.path().join("mem.toml"));
    let envs = [("XDG_CONFIG_HOME", dir.home()), ("XDG_DATA_HOME", data.as_path())];
    let out = bounded(dir.path(), &envs, &["recall", "redis"]);
    assert_eq!(out.code, 2, "{out:?}");
    let named = format!(
        "{}: not a regular file but a character device",
        dir.path().join("mem.toml").display()
    );
    assert!(out.stderr.contains(&named), "{named:?} in:\n{}", out.stderr);
    assert!(out.stderr.contains("must be a regular file"), "{}", out.stderr);
    assert!(!data.join("mem").exists(), "no per-user root made instead");

    std::fs::remove_file(dir.path().join("mem.toml")).unwrap();
    link("nowhere.toml", &dir.path().join("mem.toml"));
    let out = bounded(dir.path(), &envs, &["recall", "redis"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("a symbolic link to nowhere.toml, which does not exist"),
        "{}",
        out.stderr
    );

    std::fs::remove_file(dir.path().join("mem.toml")).unwrap();
    mkfifo(&dir.path().join("mem.toml"));
    let out = mem(&dir, &["recall", "redis"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("mem.toml: not a regular file but a FIFO"), "{}", out.stderr);
}

/// The user configuration file as a FIFO hung every command; as a link to /dev/zero it
/// exhausted the memory. It is an error that names it.
#[test]
fn a_user_configuration_that_is_no_regular_file_is_an_error_that_names_it() {
    let dir = root_with_one_good();
    let file = dir.home().join("mem/config.toml");
    mkfifo(&file);
    let out = mem(&dir, &["recall", "redis"]);
    assert_eq!(out.code, 2, "{out:?}");
    let named = format!("cannot read {}: not a regular file but a FIFO", file.display());
    assert!(out.stderr.contains(&named), "{named:?} in:\n{}", out.stderr);
    std::fs::remove_file(&file).unwrap();
    link("/dev/zero", &file);
    let out = mem(&dir, &["recall", "redis"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("not a regular file but a character device"), "{}", out.stderr);
    std::fs::remove_file(&file).unwrap();
    assert_eq!(ids(&mem(&dir, &["recall", "redis", "--json"]).json()), ["good"]);
}

/// A repository with a home of its own, for setup and health.
struct Project {
    repo: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let project =
            Project { repo: tempfile::tempdir().unwrap(), home: tempfile::tempdir().unwrap() };
        std::fs::create_dir(project.repo.path().join(".git")).unwrap();
        project
    }

    fn mem(&self, args: &[&str]) -> Out {
        let home = self.home.path();
        let (config, codex) = (home.join(".config"), home.join(".codex"));
        let claude = home.join(".claude");
        let envs = [
            ("HOME", home),
            ("XDG_CONFIG_HOME", config.as_path()),
            ("CODEX_HOME", codex.as_path()),
            ("GEMINI_CLI_HOME", home),
            ("CLAUDE_CONFIG_DIR", claude.as_path()),
        ];
        bounded(self.repo.path(), &envs, args)
    }
}

/// A FIFO in place of an agent's settings file hung `mem setup`, a link to /dev/zero
/// exhausted the memory; `mem health` read them too. Setup refuses, naming the file; health
/// names it and checks the rest.
#[test]
fn settings_files_that_are_fifos_or_devices_are_refused_by_setup_and_named_by_health() {
    let p = Project::new();
    mkfifo(&p.repo.path().join(".claude/settings.json"));
    let out = p.mem(&["setup", "claude"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(".claude/settings.json: not a regular file but a FIFO"),
        "{}",
        out.stderr
    );

    let p = Project::new();
    link("/dev/zero", &p.home.path().join(".claude.json"));
    let out = p.mem(&["setup", "claude", "--scope", "user"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains(".claude.json: not a regular file but a character device"),
        "{}",
        out.stderr
    );

    let p = Project::new();
    p.mem(&["setup", "gemini"]).ok();
    mkfifo(&p.repo.path().join(".claude/settings.json"));
    link("/dev/zero", &p.home.path().join(".claude/settings.json"));
    let out = p.mem(&["health"]);
    for expected in [
        ".claude/settings.json: not a regular file but a FIFO (named pipe); its mem commands are not checked",
        ".claude/settings.json: not a regular file but a character device",
    ] {
        assert!(out.stderr.contains(expected), "{expected:?} in:\n{}", out.stderr);
    }
    assert!(
        out.stdout.contains("commands in the agents' configuration start mem"),
        "{}",
        out.stdout
    );
}

/// A FIFO named like a Gemini chat or a Codex rollout hung `mem health --transcripts`. Each is
/// named and skipped; the real transcripts are still counted.
#[test]
fn transcripts_that_are_fifos_are_named_and_skipped_by_health() {
    let p = Project::new();
    p.mem(&["init", "--project"]).ok();
    let sessions = p.home.path().join(".codex/sessions/2026/11/30");
    let rollout = "rollout-2026-11-30T10-00-00-0190c3a1-2b3c-7d4e-8f90-a1b2c3d4e5f6.jsonl";
    mkfifo(&sessions.join(rollout));
    let gemini = p.home.path().join(".gemini");
    let chats = gemini.join("tmp/shop/chats");
    mkfifo(&chats.join("session-2026-11-30T10-00-abcdef12.jsonl"));
    link("/dev/zero", &chats.join("session-2026-11-30T11-00-bcdef123.jsonl"));
    let projects = serde_json::json!({ "projects": { p.repo.path().to_str().unwrap(): "shop" } });
    std::fs::write(gemini.join("projects.json"), projects.to_string()).unwrap();
    let out = p.mem(&["health", "--transcripts"]);
    assert_ne!(out.code, 2, "{out:?}");
    let named = format!(
        "not read (skipped): {}: not a regular file but a FIFO",
        sessions.join(rollout).display()
    );
    for expected in [
        named.as_str(),
        "session-2026-11-30T10-00-abcdef12.jsonl: not a regular file but a FIFO",
        "session-2026-11-30T11-00-bcdef123.jsonl: not a regular file but a character device",
    ] {
        assert!(out.stdout.contains(expected), "{expected:?} in:\n{}", out.stdout);
    }
    assert!(out.stdout.contains("0/0 local sessions captured"), "{}", out.stdout);
}
