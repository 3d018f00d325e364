//! Issue #56, item 5: the worktrees of one repository share its memory. From a linked worktree
//! (`git worktree add`) the project root is the main worktree's `.memory/`; `[project]
//! per_worktree = true` keeps one per worktree; `.git` files that mislead, or a main worktree
//! without a root or owned by someone else, leave the worktree its own root.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Dir, NOW, Out, bin, clean_env, ids, run};

/// A repository with a committed project root (`main`, the main worktree) and a linked
/// worktree of it on the branch `feature`, both used by one user (one home).
struct Repo {
    main: Dir,
    linked: Dir,
    /// The home of the user running git and mem.
    home: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let (main, linked) = (Dir::new(), Dir::new());
        let home = main.home().to_path_buf();
        let repo = Repo { main, linked, home };
        repo.git(repo.main(), &["init", "-q"]);
        repo.main.write("src/lib.rs", "pub fn f() {}\n");
        repo.mem(repo.main(), &["init", "--project"]).ok();
        repo.git(repo.main(), &["add", "-A"]);
        repo.git(repo.main(), &["commit", "-q", "-m", "start"]);
        let linked = repo.linked().to_str().unwrap().to_string();
        repo.git(repo.main(), &["worktree", "add", "-q", "-b", "feature", &linked]);
        assert!(repo.linked().join(".memory/mem.toml").is_file(), "checked out with the branch");
        repo
    }

    fn main(&self) -> &Path {
        self.main.path()
    }

    fn linked(&self) -> &Path {
        self.linked.path()
    }

    /// `git ARGS` in `dir`, hermetic: an empty home, the identity on the command line.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = crate::util::git_at(dir, &self.home, args);
        assert_eq!(out.code, 0, "git {args:?}: {}", out.stderr);
        out.stdout
    }

    /// `mem ARGS` in `dir`, the root found from there as a shell or a hook finds it.
    fn mem(&self, dir: &Path, args: &[&str]) -> Out {
        let mut cmd = Command::new(bin());
        cmd.args(args).current_dir(dir);
        cmd.env("HOME", &self.home).env("XDG_CONFIG_HOME", &self.home);
        clean_env(&mut cmd).env("MEM_NOW", NOW);
        run(&mut cmd)
    }

    /// The ids `mem recall QUERY` finds from `dir` (none: exit code 1, and it says so).
    fn recall(&self, dir: &Path, query: &str) -> Vec<String> {
        let out = self.mem(dir, &["recall", "--json", query]);
        if out.code == 1 && out.stderr.contains("nothing matches") {
            return Vec::new();
        }
        ids(&out.json())
    }

    /// Adds a memory from `dir`; returns its file, as a path from the root it went to.
    fn add(&self, dir: &Path, text: &str) -> String {
        let added = self.mem(dir, &["add", "--json", text]).json();
        added["path"].as_str().unwrap().to_string()
    }

    /// The memory files of the root `root` (relative to it, `.md` at its top).
    fn files(&self, root: &Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        files.sort();
        files
    }
}

#[test]
fn a_memory_written_in_a_linked_worktree_is_recalled_in_the_main_checkout_and_back() {
    let repo = Repo::new();
    let path = repo.add(&repo.linked().join("src"), "Decision: the shop uses Postgres 16");
    assert!(repo.main().join(".memory").join(&path).is_file(), "{path}");
    assert!(repo.files(&repo.linked().join(".memory")).is_empty(), "none in the worktree");
    assert_eq!(repo.recall(&repo.main().join("src"), "postgres").len(), 1);

    repo.add(repo.main(), "Decision: releases ship on Tuesdays");
    assert_eq!(repo.recall(repo.linked(), "releases tuesdays").len(), 1);
    assert_eq!(repo.recall(repo.linked(), "postgres").len(), 1);

    // What the main checkout's `git status` shows: the new memories, untracked, under its
    // `.memory/` (docs/teams.md, "Worktrees"); the linked worktree's checkout is untouched.
    repo.mem(repo.linked(), &["sync"]).ok();
    let status = repo.git(repo.main(), &["status", "--porcelain", "--untracked-files=all"]);
    assert!(status.lines().any(|l| l == format!("?? .memory/{path}")), "{status}");
    assert!(status.lines().any(|l| l.starts_with(" M .memory/usage/")), "{status}");
    let linked = repo.git(repo.linked(), &["status", "--porcelain", "--untracked-files=all"]);
    assert_eq!(linked, "", "{linked}");
}

#[test]
fn per_worktree_keeps_one_root_in_each_worktree() {
    let repo = Repo::new();
    let config = repo.main().join(".memory/mem.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replace("per_worktree = false", "per_worktree = true");
    assert!(text.contains("per_worktree = true"), "mem init writes the setting");
    std::fs::write(&config, text).unwrap();

    let path = repo.add(repo.linked(), "Decision: the shop uses Postgres 16");
    assert!(repo.linked().join(".memory").join(&path).is_file(), "{path}");
    assert_eq!(repo.recall(repo.linked(), "postgres").len(), 1);
    assert_eq!(repo.recall(repo.main(), "postgres"), Vec::<String>::new());
    repo.add(repo.main(), "Decision: releases ship on Tuesdays");
    assert_eq!(repo.recall(repo.linked(), "releases tuesdays"), Vec::<String>::new());
}

/// Bad input: a `.git` file naming somewhere bogus, a main worktree without a root, one owned
/// by someone else. Each leaves the linked worktree its own root, without a word on stderr,
/// and the worktree's memory is recalled there.
#[test]
fn misleading_git_files_or_an_unusable_main_root_leave_the_worktree_its_own() {
    let own = |repo: &Repo, case: &str| {
        let out = repo.mem(repo.linked(), &["add", "--json", "Decision: the shop uses Postgres"]);
        let path = out.json()["path"].as_str().unwrap().to_string();
        assert!(repo.linked().join(".memory").join(&path).is_file(), "{case}: {path}");
        assert_eq!(out.stderr, "", "{case}: {out:?}");
        assert_eq!(repo.recall(repo.linked(), "postgres").len(), 1, "{case}");
    };

    let repo = Repo::new();
    for bogus in ["gitdir: /nonexistent/.git/worktrees/x", "not a git file", ""] {
        std::fs::write(repo.linked().join(".git"), bogus).unwrap();
        let listed = repo.mem(repo.linked(), &["list", "--json"]);
        assert_eq!(listed.stderr, "", "{bogus:?}: {listed:?}");
    }
    // A `.git` file naming another repository's worktree folder, which does not name it back.
    let other = Repo::new();
    let name = other.linked().file_name().unwrap().to_str().unwrap().to_string();
    let foreign = other.main().join(".git/worktrees").join(name);
    std::fs::write(repo.linked().join(".git"), format!("gitdir: {}\n", foreign.display())).unwrap();
    other.add(other.main(), "The zebra cluster runs the nightly batch");
    own(&repo, "another repository's worktree");
    assert_eq!(repo.recall(repo.linked(), "zebra"), Vec::<String>::new());

    // The main worktree has no root: the worktree keeps today's, its own.
    let repo = Repo::new();
    std::fs::remove_dir_all(repo.main().join(".memory")).unwrap();
    own(&repo, "no root in the main worktree");
    assert!(!repo.main().join(".memory").exists(), "nothing made in the main worktree");

    // The main worktree's root belongs to someone else: not used, unless the user allows it.
    if !rustix::process::geteuid().is_root() {
        eprintln!("note: chown to another user needs root; the owner case is not run");
        return;
    }
    // Another user made the main worktree's root (the one who made it has it allowed).
    let mut repo = Repo::new();
    repo.home = repo.linked.home().to_path_buf();
    let nobody = Some(rustix::fs::Uid::from_raw(65534));
    for path in [".memory", ".memory/mem.toml"] {
        rustix::fs::chown(repo.main().join(path), nobody, None).unwrap();
    }
    own(&repo, "the main worktree's root owned by another user");
    let allowed = repo.mem(repo.linked(), &["allow"]);
    let shared = repo.main().join(".memory").canonicalize().unwrap();
    assert!(allowed.ok().contains(&shared.display().to_string()), "{allowed:?}");
    let path = repo.add(repo.linked(), "Decision: releases ship on Tuesdays");
    assert!(shared.join(&path).is_file(), "allowed, the main worktree's root is used: {path}");
}
