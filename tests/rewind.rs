//! Rewind and checkpoints modelled on the tree (regressions of the second probe): kind changes,
//! names that are not UTF-8, the checkpoint's own ignore rules, worktrees, the size cap and the
//! home folder, concurrent checkpoints, submodules, control characters, leftovers.

use std::path::Path;
use std::process::Command;

use crate::checkpoint::{git, mem, ok, repo, tree, write};
use crate::util::{Out, bin, run, run_with_stdin};

/// `mem <args>` in `dir` with the user configuration folder `config`.
fn mem_with(dir: &Path, config: &Path, args: &[&str]) -> Out {
    run(Command::new(bin()).args(args).current_dir(dir).env("XDG_CONFIG_HOME", config))
}

/// Defect 6: a file replaced by a folder, a folder by a link to a folder outside the
/// repository, a folder by a file, a folder by a link to a file: rewind removed the new kind,
/// restored nothing ("left x as it is (ignored now)") or failed with "Is a directory". Every
/// path is put back as the kind the checkpoint has.
#[test]
fn rewind_puts_back_a_path_that_changed_kind() {
    let tmp = repo();
    let dir = tmp.path();
    write(dir, "a.txt", "a file\n");
    write(dir, "linked/x.txt", "x\n");
    write(dir, "linked/y.txt", "y\n");
    write(dir, "filed/z.txt", "z\n");
    write(dir, "tofile-link/w.txt", "w\n");
    let before = tree(dir);
    ok(dir, &["checkpoint"]);
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "theirs.txt", "not the repository's\n");
    std::fs::remove_file(dir.join("a.txt")).unwrap();
    write(dir, "a.txt/inner.txt", "a folder now\n");
    std::fs::remove_dir_all(dir.join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.join("linked")).unwrap();
    std::fs::remove_dir_all(dir.join("filed")).unwrap();
    write(dir, "filed", "a file now\n");
    std::fs::remove_dir_all(dir.join("tofile-link")).unwrap();
    std::os::unix::fs::symlink("README.md", dir.join("tofile-link")).unwrap();
    let out = ok(dir, &["rewind", "1"]);
    assert!(!out.contains("ignored now"), "{out}");
    assert_eq!(tree(dir), before, "{out}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("theirs.txt")).unwrap(),
        "not the repository's\n"
    );
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    // And back: the undo checkpoint holds the other kinds.
    ok(dir, &["rewind", "2"]);
    assert!(dir.join("a.txt/inner.txt").is_file() && dir.join("filed").is_file());
    assert!(std::fs::symlink_metadata(dir.join("linked")).unwrap().file_type().is_symlink());
}

/// Defect 6: names that are not UTF-8 made rewind fail half-way (`old�.txt is not in the
/// cache`). They are restored and removed byte for byte.
#[test]
fn rewind_restores_names_that_are_not_utf8_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = repo();
    let dir = tmp.path();
    let old = dir.join(std::ffi::OsStr::from_bytes(b"old\xff.txt"));
    std::fs::write(&old, "old bytes\n").unwrap();
    ok(dir, &["checkpoint"]);
    std::fs::remove_file(&old).unwrap();
    let new = dir.join(std::ffi::OsStr::from_bytes(b"new\xfe.txt"));
    std::fs::write(&new, "created since\n").unwrap();
    let out = ok(dir, &["rewind", "1"]);
    assert!(out.contains("restored old\u{fffd}.txt"), "{out}");
    assert!(out.contains("removed new\u{fffd}.txt"), "{out}");
    assert_eq!(std::fs::read_to_string(&old).unwrap(), "old bytes\n");
    assert!(!new.exists());
}

/// Defect 7: with `.gitignore` emptied by the agent since the checkpoint, rewind deleted the
/// files that `.gitignore` excluded when the checkpoint was taken (`.env`,
/// `big-data/precious.csv`). The checkpoint's own ignore rules keep them.
#[test]
fn rewind_never_removes_a_file_the_checkpoint_ignored() {
    let tmp = repo();
    let dir = tmp.path();
    write(dir, ".gitignore", "target/\n*.log\n.env\nbig-data/\n");
    write(dir, "src/.gitignore", "local.rs\n");
    write(dir, ".env", "TOKEN=1\n");
    write(dir, "big-data/precious.csv", "a,b\n");
    write(dir, "src/local.rs", "// mine\n");
    ok(dir, &["checkpoint"]);
    write(dir, ".gitignore", "");
    std::fs::remove_file(dir.join("src/.gitignore")).unwrap();
    write(dir, "scratch.txt", "created since, never ignored\n");
    let out = ok(dir, &["rewind", "1"]);
    for kept in [".env", "big-data/precious.csv", "src/local.rs"] {
        assert!(dir.join(kept).is_file(), "{kept}: {out}");
        let said = format!("left {kept} as it is (the checkpoint's .gitignore excluded it)");
        assert!(out.contains(&said), "{out}");
    }
    assert!(!dir.join("scratch.txt").exists(), "{out}");
    assert_eq!(std::fs::read_to_string(dir.join(".gitignore")).unwrap().lines().count(), 4);
}

/// Defect 8: worktrees shared `refs/mem/checkpoints`, so `mem rewind 1` in worktree B wrote
/// worktree A's tree and removed B's work. Each worktree has its own checkpoints.
#[test]
fn each_worktree_has_its_own_checkpoints() {
    let tmp = repo();
    let main = tmp.path();
    ok(main, &["checkpoint", "-m", "main's"]);
    let other = tempfile::tempdir().unwrap();
    let b = other.path().join("b");
    git(main, &["worktree", "add", "-q", "-b", "feature", b.to_str().unwrap()]);
    write(&b, "feature-wip.txt", "work in progress\n");
    let refused = mem(&b, &["rewind", "1"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(refused.stderr.contains("no checkpoint \"1\""), "{}", refused.stderr);
    assert!(b.join("feature-wip.txt").is_file());
    assert!(ok(&b, &["checkpoints"]).contains("no checkpoints yet"));
    assert!(ok(&b, &["checkpoint", "-m", "b's"]).contains("checkpoint 1"));
    write(&b, "feature-wip.txt", "more work\n");
    ok(&b, &["rewind", "1"]);
    assert_eq!(std::fs::read_to_string(b.join("feature-wip.txt")).unwrap(), "work in progress\n");
    let refs = git(main, &["for-each-ref", "--format=%(refname)", "refs/mem/"]);
    let name = b.file_name().unwrap().to_str().unwrap();
    assert!(refs.contains(&format!("refs/mem/worktrees/{name}/00000001")), "{refs}");
    let listed = ok(main, &["checkpoints"]);
    assert!(listed.contains("main's") && !listed.contains("b's"), "{listed}");
}

/// Defect 9: files over the size cap (a 300 MB download made each checkpoint take 5.8 s and
/// grow `.git` by its size) are left out before git reads them, recorded as skipped, and never
/// removed by a rewind. A root's `mem.toml` may lower the user's cap.
#[test]
fn files_over_the_size_cap_are_left_out_and_never_removed() {
    let tmp = repo();
    let dir = tmp.path();
    let config = tempfile::tempdir().unwrap();
    write(config.path(), "mem/config.toml", "[checkpoint]\nmax_file_bytes = 1000\n");
    write(dir, "big.bin", &"x".repeat(5000));
    write(dir, "medium.txt", &"m".repeat(500));
    let out = mem_with(dir, config.path(), &["checkpoint", "--json"]);
    let taken: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(taken["skipped_files"], serde_json::json!([{ "path": "big.bin", "bytes": 5000 }]));
    let held = git(dir, &["ls-tree", "-r", "--name-only", "refs/mem/checkpoints/00000001"]);
    assert!(!held.contains("big.bin") && held.contains("medium.txt"), "{held}");
    let hash = git(dir, &["hash-object", "big.bin"]);
    let stored = run(Command::new("git").args(["cat-file", "-e", hash.trim()]).current_dir(dir));
    assert_ne!(stored.code, 0, "no blob was written for the large file");
    // It shrinks, then the agent's work is rewound: the file the checkpoint left out stays.
    write(dir, "big.bin", "small now\n");
    let out = mem_with(dir, config.path(), &["rewind", "1"]);
    assert!(out.stdout.contains("left big.bin as it is (too large"), "{}", out.stdout);
    assert_eq!(std::fs::read_to_string(dir.join("big.bin")).unwrap(), "small now\n");
    // A project root lowers the cap.
    mem(dir, &["init", "--project"]).ok();
    write(dir, ".memory/mem.toml", "[checkpoint]\nmax_file_bytes = 100\n");
    write(dir, "medium.txt", &"n".repeat(500));
    let out = mem_with(dir, config.path(), &["checkpoint"]);
    assert!(out.stdout.contains("left out medium.txt (500 bytes"), "{}", out.stdout);
    assert!(out.stdout.contains("left out .memory/ (a memory root"), "{}", out.stdout);
    let listed = mem_with(dir, config.path(), &["checkpoints", "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&listed.stdout).unwrap();
    assert_eq!(listed[0]["skipped_roots"], serde_json::json!([".memory/"]), "{listed}");
}

/// Defect 9: under a repository at `$HOME` (dotfiles) the checkpoint hook snapshot the whole
/// home on every prompt. It takes none there, and says why.
#[test]
fn the_checkpoint_hook_never_snapshots_a_repository_at_home() {
    let tmp = repo();
    let home = tmp.path();
    write(home, ".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    let payload = serde_json::json!({
        "session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": home, "prompt": "hi",
    });
    let out = run_with_stdin(
        Command::new(bin())
            .args(["checkpoint", "--hook", "claude"])
            .current_dir(home)
            .env("HOME", home),
        payload.to_string(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("is your home folder"), "{}", out.stderr);
    assert_eq!(git(home, &["for-each-ref", "refs/mem/"]), "");
}

/// Issue 37, item 19: the checkpoint hook in a repository with no memory root created the
/// per-user root to record the turn in. It checkpoints, and makes no root.
#[test]
fn the_checkpoint_hook_outside_any_memory_root_makes_none() {
    let tmp = repo();
    let dir = tmp.path();
    write(dir, "a.txt", "a\n");
    let data = tempfile::tempdir().unwrap();
    let payload = serde_json::json!({
        "session_id": "s1", "hook_event_name": "UserPromptSubmit", "cwd": dir, "prompt": "hi",
    });
    let out = run_with_stdin(
        Command::new(bin())
            .args(["checkpoint", "--hook", "claude"])
            .current_dir(dir)
            .env("XDG_DATA_HOME", data.path()),
        payload.to_string(),
    );
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{out:?}");
    assert_ne!(git(dir, &["for-each-ref", "refs/mem/"]), "", "the checkpoint is taken");
    assert!(!data.path().join("mem").exists(), "no per-user root is made");
}

/// Defect 16: 9 of 20 concurrent checkpoints failed (`cannot lock ref … already exists`).
/// Each takes the next free number.
#[test]
fn concurrent_checkpoints_take_the_next_number() {
    let tmp = repo();
    let dir = tmp.path();
    let children: Vec<_> = (0..12)
        .map(|i| {
            write(dir, &format!("f{i}.txt"), &format!("{i}\n"));
            let mut cmd = Command::new(bin());
            cmd.args(["checkpoint", "--json", "-m", &format!("c{i}")]).current_dir(dir);
            crate::util::clean_env(&mut cmd);
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let mut ids = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let taken: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if taken["new"] == true {
            ids.push(taken["id"].as_str().unwrap().to_string());
        }
    }
    let count = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), count, "every new checkpoint has its own number");
}

/// Defect 16: rewind said "restored sub" but left the submodule's HEAD where it was. It says
/// what it does: a submodule is left at its commit.
#[test]
fn rewind_says_it_leaves_a_submodule_at_its_commit() {
    let upstream = repo();
    let tmp = repo();
    let dir = tmp.path();
    let url = upstream.path().to_str().unwrap();
    git(dir, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", url, "sub"]);
    git(dir, &["commit", "-q", "-m", "sub"]);
    ok(dir, &["checkpoint"]);
    write(&dir.join("sub"), "new.txt", "in the submodule\n");
    git(&dir.join("sub"), &["add", "new.txt"]);
    git(&dir.join("sub"), &["commit", "-q", "-m", "moved"]);
    let out = ok(dir, &["rewind", "1"]);
    assert!(out.contains("left submodule sub at its commit"), "{out}");
    assert!(!out.contains("restored sub"), "{out}");
}

/// Defect 16: session ids with ESC, labels and file names were printed raw; list --json passed
/// raw U+009B. Printed text has no control character; JSON escapes them.
#[test]
fn control_characters_are_never_printed_raw() {
    let tmp = repo();
    let dir = tmp.path();
    write(dir, "evil\u{1b}[2J.txt", "x\n");
    ok(dir, &["checkpoint", "-m", "label \u{1b}]0;owned\u{7} \u{9b}31m"]);
    std::fs::remove_file(dir.join("evil\u{1b}[2J.txt")).unwrap();
    for args in [&["checkpoints"][..], &["rewind", "1", "--dry-run"]] {
        let out = ok(dir, args);
        assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{args:?}: {out:?}");
    }
    let json = ok(dir, &["checkpoints", "--json"]);
    assert!(!json.chars().any(|c| c.is_control() && c != '\n'), "{json:?}");
    let payload = serde_json::json!({
        "session_id": "s\u{1b}[31m\nx", "hook_event_name": "UserPromptSubmit", "cwd": dir,
    });
    let out = run_with_stdin(
        Command::new(bin()).args(["checkpoint", "--hook", "claude"]).current_dir(dir),
        payload.to_string(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("turn not recorded"), "{}", out.stderr);
    assert!(!out.stderr.contains('\u{1b}'), "{:?}", out.stderr);
}

/// Defect 16: a killed checkpoint or rewind left `.git/mem-checkpoint-index-*` behind. The
/// next one removes those that are old.
#[test]
fn temporary_indexes_left_by_a_killed_run_are_swept() {
    let tmp = repo();
    let dir = tmp.path();
    let left = dir.join(".git/mem-checkpoint-index-killed");
    std::fs::write(&left, "half an index").unwrap();
    // An hour before it was written, by the file system's clock.
    let file = std::fs::File::options().write(true).open(&left).unwrap();
    let written = file.metadata().unwrap().modified().unwrap();
    file.set_modified(written - std::time::Duration::from_secs(3600)).unwrap();
    let recent = dir.join(".git/mem-checkpoint-index-running");
    std::fs::write(&recent, "another run's").unwrap();
    // Just left by a run whose process is gone (no such process id).
    let dead = dir.join(".git/mem-checkpoint-index-4000000000-abc");
    std::fs::write(&dead, "a killed run's").unwrap();
    let alive = dir.join(format!(".git/mem-checkpoint-index-{}-abc", std::process::id()));
    std::fs::write(&alive, "a running process's").unwrap();
    ok(dir, &["checkpoint"]);
    assert!(!left.exists() && !dead.exists(), "swept");
    assert!(alive.exists(), "its process runs");
    assert!(recent.exists(), "a recent one may belong to a run in progress");
}
