//! The crash harness for the writers of the workspace: `mem checkpoint` and `mem rewind` are
//! killed (SIGKILL) at random moments of their run in a throw-away repository, and after each
//! kill:
//!
//! - the user's repository did not move (index, HEAD, branches, stash);
//! - every path of the working tree is either as the agent left it or as the checkpoint has
//!   it (a rewind), or untouched (a checkpoint);
//! - no git process the killed run started is still running after a short grace;
//! - the next run works without repair and completes the work: a rewind run again leaves the
//!   checkpoint's tree, and the undo checkpoint the killed rewind took (if it got that far)
//!   brings back the agent's tree; a checkpoint run again is taken, every checkpoint ref names
//!   a commit, and no temporary index of the killed run is left.
//!
//! And a rewind killed alone (the mem process, not its git) in the middle of its checkout,
//! then a rewind started right away: it waits for the killed run's git and leaves exactly the
//! checkpoint's tree.
//!
//! `cargo test` runs [`CI_KILLS`] kills per command; `MEM_CRASH_SOAK=N` runs N (see
//! docs/reliability.md), `MEM_CRASH_SEED` picks the seed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::checkpoint::{git, ok, tree, write};
use crate::util::{bin, clean_env};

/// Kills per command in a normal test run.
const CI_KILLS: usize = 6;

/// A working tree, as [`tree`] reads it.
type Tree = Vec<(String, Vec<u8>, bool)>;

/// A repository with checkpoint 1 taken, then an agent's changes of every kind: edits,
/// deletions, new files and folders, a file that became a folder, a folder that became a link,
/// a mode change. Returns it with the tree of checkpoint 1 and the agent's tree.
fn prepared() -> (tempfile::TempDir, Tree, Tree) {
    let tmp = crate::checkpoint::repo();
    let dir = tmp.path();
    for i in 0..40 {
        write(dir, &format!("src/m{i}.rs"), &format!("pub fn f{i}() -> u32 {{ {i} }}\n"));
    }
    write(dir, "notes/a.txt", "a\n");
    write(dir, "notes/b.txt", "b\n");
    write(dir, "was-file", "a file at first\n");
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "two"]);
    write(dir, "draft.txt", "untracked at the checkpoint\n");
    ok(dir, &["checkpoint", "-m", "before the agent"]);
    let checkpointed = tree(dir);
    for i in (0..40).step_by(3) {
        write(dir, &format!("src/m{i}.rs"), &format!("pub fn f{i}() -> u32 {{ {i} + 1 }}\n"));
    }
    for i in (1..40).step_by(7) {
        std::fs::remove_file(dir.join(format!("src/m{i}.rs"))).unwrap();
    }
    for i in 0..20 {
        write(dir, &format!("gen/g{i}.rs"), &format!("// generated {i}\n"));
    }
    std::fs::remove_file(dir.join("draft.txt")).unwrap();
    std::fs::remove_file(dir.join("was-file")).unwrap();
    write(dir, "was-file/inside.txt", "a folder now\n");
    std::fs::remove_dir_all(dir.join("notes")).unwrap();
    std::os::unix::fs::symlink("src", dir.join("notes")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let agent = tree(dir);
    (tmp, checkpointed, agent)
}

/// What the user sees of the repository besides the working tree.
fn user_view(dir: &Path) -> Vec<String> {
    vec![
        git(dir, &["ls-files", "--stage"]),
        git(dir, &["stash", "list"]),
        git(dir, &["for-each-ref", "refs/heads", "refs/tags", "refs/stash"]),
        git(dir, &["rev-parse", "HEAD"]),
    ]
}

/// A copy of the prepared repository.
fn fresh(template: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", template.display()))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    dir
}

fn mem_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(dir);
    clean_env(&mut cmd);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

/// The processes whose working directory is `dir` or below it (git children of a killed run).
fn processes_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let dir = std::fs::canonicalize(dir).unwrap();
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).replace('\0', " ")
        })
        .collect()
}

/// Waits (up to a generous guard, not a timing) until no process runs in `dir`.
#[allow(clippy::disallowed_methods)]
fn no_process_left(dir: &Path, context: &str) {
    let started = Instant::now();
    loop {
        let left = processes_in(dir);
        if left.is_empty() {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{context}: still running: {left:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long an uninterrupted run of `args` takes on a copy (the kills are spread over it).
#[allow(clippy::disallowed_methods)]
fn duration(template: &Path, args: &[&str]) -> Duration {
    let dir = fresh(template);
    let started = Instant::now();
    let out = mem_command(dir.path(), args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    started.elapsed()
}

/// The path's entry in `tree`, if any (content and mode).
fn entry<'a>(tree: &'a Tree, path: &str) -> Option<(&'a Vec<u8>, bool)> {
    tree.iter().find(|(p, _, _)| p == path).map(|(_, b, x)| (b, *x))
}

/// Every path is as in `a` or as in `b` (absent counts).
fn each_path_old_or_new(now: &Tree, a: &Tree, b: &Tree, context: &str) {
    let mut paths: Vec<&String> = a.iter().chain(b).chain(now).map(|(p, _, _)| p).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let here = entry(now, path);
        assert!(
            here == entry(a, path) || here == entry(b, path),
            "{context}: {path} is neither the agent's nor the checkpoint's: {here:?}"
        );
    }
}

fn kill_after(mut cmd: Command, delay: Duration) -> bool {
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(delay);
    let killed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    killed
}

fn kills() -> usize {
    std::env::var("MEM_CRASH_SOAK").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_KILLS)
}

/// No temporary index file is left in the repository's git folder.
fn no_temporary_index(dir: &Path, context: &str) {
    let left: Vec<_> = std::fs::read_dir(dir.join(".git"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("mem-checkpoint-index-"))
        .collect();
    assert!(left.is_empty(), "{context}: temporary indexes left: {left:?}");
}

/// The refs of the checkpoints with their labels.
fn checkpoints(dir: &Path) -> Vec<(String, String)> {
    let out =
        git(dir, &["for-each-ref", "--format=%(refname) %(objecttype) %(subject)", "refs/mem/"]);
    out.lines()
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let (name, kind) = (parts.next().unwrap(), parts.next().unwrap());
            assert_eq!(kind, "commit", "{l}");
            (
                name.rsplit('/').next().unwrap().trim_start_matches('0').to_string(),
                parts.next().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn checkpoint_and_rewind_survive_a_kill_at_any_moment() {
    let seed = std::env::var("MEM_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(11);
    let mut rng = fastrand::Rng::with_seed(seed);
    let (template, checkpointed, agent) = prepared();
    let view = user_view(template.path());
    let mut summary = Vec::new();

    let took = duration(template.path(), &["rewind", "1"]);
    let mut landed = 0;
    for _ in 0..kills() {
        let dir = fresh(template.path());
        let dir = dir.path();
        let delay = took.mul_f64(rng.f64() * 1.1);
        landed += usize::from(kill_after(mem_command(dir, &["rewind", "1"]), delay));
        let context = format!("rewind killed after {delay:?}");
        no_process_left(dir, &context);
        each_path_old_or_new(&tree(dir), &agent, &checkpointed, &context);
        assert_eq!(user_view(dir), view, "{context}: the user's repository moved");
        let undo = checkpoints(dir).into_iter().find(|(_, label)| label == "before rewind to 1");
        if tree(dir) != agent {
            assert!(undo.is_some(), "{context}: files changed before the undo checkpoint");
        }
        // A rerun completes it; the undo checkpoint brings the agent's work back.
        ok(dir, &["rewind", "1"]);
        assert_eq!(tree(dir), checkpointed, "{context}: the rerun did not complete it");
        if let Some((id, _)) = undo {
            ok(dir, &["rewind", &id]);
            assert_eq!(tree(dir), agent, "{context}: undo checkpoint {id}");
        }
        no_temporary_index(dir, &context);
    }
    summary.push(format!("rewind: {landed}/{} kills landed (run {took:?})", kills()));

    let took = duration(template.path(), &["checkpoint"]);
    let mut landed = 0;
    for _ in 0..kills() {
        let dir = fresh(template.path());
        let dir = dir.path();
        let delay = took.mul_f64(rng.f64() * 1.1);
        landed += usize::from(kill_after(mem_command(dir, &["checkpoint", "-m", "killed"]), delay));
        let context = format!("checkpoint killed after {delay:?}");
        no_process_left(dir, &context);
        assert_eq!(tree(dir), agent, "{context}: a checkpoint changed the working tree");
        assert_eq!(user_view(dir), view, "{context}: the user's repository moved");
        let before = checkpoints(dir);
        ok(dir, &["checkpoint", "-m", "again"]);
        let after = checkpoints(dir);
        assert!(
            after.len() == before.len() + 1 || before.iter().any(|(_, l)| l == "killed"),
            "{context}: {after:?}"
        );
        ok(dir, &["checkpoints"]);
        ok(dir, &["rewind", "1"]);
        assert_eq!(tree(dir), checkpointed, "{context}");
        no_temporary_index(dir, &context);
    }
    summary.push(format!("checkpoint: {landed}/{} kills landed (run {took:?})", kills()));
    eprintln!("crash harness, workspace (seed {seed}):\n  {}", summary.join("\n  "));
}

/// The configuration files setup edits in a repository, with the user's own entries in each.
const USER_FILES: &[(&str, &str)] = &[
    (
        ".claude/settings.json",
        "{\n  \"permissions\": { \"allow\": [\"Bash(cargo test)\"] },\n  \"hooks\": { \"Stop\": [ { \"hooks\": [ { \"type\": \"command\", \"command\": \"notify-send done\" } ] } ] }\n}\n",
    ),
    (
        ".mcp.json",
        "{\n  \"mcpServers\": {\n    \"db\": {\n      \"command\": \"pg-mcp\"\n    }\n  }\n}\n",
    ),
    (".codex/config.toml", "# mine\n[mcp_servers.db]\ncommand = \"pg-mcp\"\n"),
];

/// The files setup may write, by path, with the paths of the temporary repositories replaced
/// by `<repo>` (a copy lives elsewhere, and names the checkout it was copied from); `None` for
/// a file that does not exist.
fn setup_files(dir: &Path) -> Vec<(String, Option<String>)> {
    let paths = [".claude/settings.json", ".mcp.json", ".codex/config.toml", ".codex/hooks.json"];
    let tmp = std::fs::canonicalize(std::env::temp_dir()).unwrap();
    let repo =
        regex::Regex::new(&format!(r"{}/\.tmp[A-Za-z0-9]+", regex::escape(tmp.to_str().unwrap())))
            .unwrap();
    paths
        .iter()
        .map(|rel| {
            let text = std::fs::read_to_string(dir.join(rel))
                .ok()
                .map(|t| repo.replace_all(&t, "<repo>").into_owned());
            (rel.to_string(), text)
        })
        .collect()
}

/// Each file parses and keeps the user's entries.
fn user_entries_kept(dir: &Path, context: &str) {
    for rel in [".claude/settings.json", ".mcp.json", ".codex/hooks.json"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(rel)) {
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{context}: {rel} does not parse: {e}\n{text}"));
        }
    }
    let settings = std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains("notify-send done") && settings.contains("Bash(cargo test)"),
        "{context}: {settings}"
    );
    let mcp = std::fs::read_to_string(dir.join(".mcp.json")).unwrap();
    assert!(mcp.contains("pg-mcp"), "{context}: {mcp}");
    let codex = std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap();
    codex.parse::<toml::Table>().unwrap_or_else(|e| panic!("{context}: config.toml: {e}"));
    assert!(codex.contains("[mcp_servers.db]"), "{context}: {codex}");
}

fn setup_command(dir: &Path, home: &Path, args: &[&str]) -> Command {
    let mut cmd = mem_command(dir, args);
    cmd.env("HOME", home).env("XDG_CONFIG_HOME", home.join(".config"));
    cmd.env("CODEX_HOME", home.join(".codex"));
    cmd
}

#[test]
fn setup_and_its_removal_survive_a_kill_at_any_moment() {
    let seed = std::env::var("MEM_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(13);
    let mut rng = fastrand::Rng::with_seed(seed);
    let template = crate::checkpoint::repo();
    for (rel, text) in USER_FILES {
        write(template.path(), rel, text);
    }
    let home = tempfile::tempdir().unwrap();
    let setup: &[&[&str]] = &[&["setup", "claude", "--scope", "project"], &["setup", "codex"]];
    let remove: &[&[&str]] =
        &[&["setup", "claude", "--scope", "project", "--remove"], &["setup", "codex", "--remove"]];
    // The states: before, after setup, after its removal (each by an uninterrupted run).
    let run_all = |dir: &Path, steps: &[&[&str]]| {
        for args in steps {
            let out = setup_command(dir, home.path(), args).output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
    };
    let before = setup_files(template.path());
    let set_up = fresh(template.path());
    run_all(set_up.path(), setup);
    let after = setup_files(set_up.path());
    let removed = fresh(set_up.path());
    run_all(removed.path(), remove);
    let after_removal = setup_files(removed.path());
    let mut summary = Vec::new();
    for (name, start, steps, old, new) in [
        ("setup", template.path(), setup, &before, &after),
        ("setup --remove", set_up.path(), remove, &after, &after_removal),
    ] {
        let took = {
            let dir = fresh(start);
            #[allow(clippy::disallowed_methods)]
            let started = Instant::now();
            run_all(dir.path(), steps);
            #[allow(clippy::disallowed_methods)]
            let took = started.elapsed();
            took
        };
        let mut landed = 0;
        for _ in 0..kills() {
            let dir = fresh(start);
            let dir = dir.path();
            // Each command of the steps in turn: the kill lands in one of them.
            let delay = took.mul_f64(rng.f64() * 1.1);
            let context = format!("{name} killed after {delay:?}");
            let mut spent = Duration::ZERO;
            for args in steps {
                let share = took / steps.len() as u32;
                if delay < spent + share {
                    landed += usize::from(kill_after(
                        setup_command(dir, home.path(), args),
                        delay - spent,
                    ));
                    break;
                }
                run_all(dir, &[args]);
                spent += share;
            }
            no_process_left(dir, &context);
            for ((rel, now), ((_, old), (_, new))) in
                setup_files(dir).iter().zip(old.iter().zip(new.iter()))
            {
                assert!(
                    now == old || now == new,
                    "{context}: {rel} is neither old nor new:\n{now:?}"
                );
            }
            user_entries_kept(dir, &context);
            run_all(dir, steps);
            assert_eq!(&setup_files(dir), new, "{context}: the rerun did not complete it");
        }
        summary.push(format!("{name}: {landed}/{} kills landed (run {took:?})", kills()));
    }
    eprintln!("crash harness, setup (seed {seed}):\n  {}", summary.join("\n  "));
}

/// A folder holding a `git` that runs the real one, except that in a run whose environment
/// names a folder in `MEM_TEST_HOLD`, `git checkout-index` reads its index (a copy in that
/// folder), creates `started` there and waits until `go` exists before it writes: a checkout
/// still writing the tree after its run was killed, as a large tree or a filter makes it.
/// Without `MEM_TEST_HOLD` it is the real git.
fn slow_checkout_git() -> tempfile::TempDir {
    let real = which::which("git").unwrap();
    let bin = tempfile::tempdir().unwrap();
    let script = format!(
        r#"#!/bin/sh
case " $* " in
  *" checkout-index "*)
    if [ -n "$MEM_TEST_HOLD" ]; then
      cp "$GIT_INDEX_FILE" "$MEM_TEST_HOLD/index"
      GIT_INDEX_FILE="$MEM_TEST_HOLD/index"
      export GIT_INDEX_FILE
      : > "$MEM_TEST_HOLD/started"
      while [ ! -e "$MEM_TEST_HOLD/go" ]; do sleep 0.01; done
    fi ;;
esac
exec '{}' "$@"
"#,
        real.display()
    );
    write(bin.path(), "git", &script);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.path().join("git"), std::fs::Permissions::from_mode(0o755))
        .unwrap();
    bin
}

/// Whether the process `pid` has the checkpoint lock of the repository `dir` open.
fn has_lock_open(pid: u32, dir: &Path) -> bool {
    let lock = std::fs::canonicalize(dir).unwrap().join(".git/mem-checkpoint.lock");
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == lock))
}

/// Defect 16 of the third probe: `mem rewind` killed alone (SIGKILL to mem, not its group)
/// while `git checkout-index` runs leaves that git writing the tree; a rewind started right
/// after ran beside it and failed with a raw git error, or reported success over a tree that
/// git went on changing (a file of checkpoint 1 in the tree of the other checkpoint). The next
/// run waits for the killed run's git, then leaves exactly the tree it rewinds to, whether to
/// the same checkpoint or to the undo checkpoint of the killed run.
#[test]
fn a_rewind_right_after_a_killed_one_waits_for_its_git() {
    let (template, checkpointed, agent) = prepared();
    let slow = slow_checkout_git();
    let path = format!("{}:{}", slow.path().display(), std::env::var("PATH").unwrap());
    for undo in [true, false] {
        let dir = fresh(template.path());
        let dir = dir.path();
        let hold = tempfile::tempdir().unwrap();
        let mut killed = mem_command(dir, &["rewind", "1"]);
        killed.env("PATH", &path).env("MEM_TEST_HOLD", hold.path());
        let mut killed = killed.spawn().unwrap();
        while !hold.path().join("started").exists() {
            assert!(killed.try_wait().unwrap().is_none(), "the rewind ended before its checkout");
            std::thread::sleep(Duration::from_millis(5));
        }
        // The mem process only: its git goes on.
        killed.kill().unwrap();
        killed.wait().unwrap();
        let (target, expected) = match undo {
            true => {
                let list = checkpoints(dir);
                let id = list.iter().find(|(_, label)| label == "before rewind to 1");
                (id.expect("the undo checkpoint").0.clone(), &agent)
            }
            false => ("1".to_string(), &checkpointed),
        };
        let context = format!("rewind {target} right after a killed rewind 1");
        let mut rerun = mem_command(dir, &["rewind", &target]).spawn().unwrap();
        // The killed run's git goes on once the rerun has ended or waits for it.
        while rerun.try_wait().unwrap().is_none() && !has_lock_open(rerun.id(), dir) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::fs::write(hold.path().join("go"), "").unwrap();
        let out = rerun.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{context}: {stderr}");
        no_process_left(dir, &context);
        assert_eq!(&tree(dir), expected, "{context}: success over another tree");
        assert_eq!(user_view(dir), user_view(template.path()), "{context}");
        no_temporary_index(dir, &context);
    }
}
