//! Workspace checkpoints: snapshots of a git repository's working tree (tracked files and
//! untracked ones that are not ignored) kept as commits under `refs/mem/checkpoints/` (a
//! linked worktree's under `refs/mem/worktrees/<name>/`), taken and restored without touching
//! the user's HEAD, branch, index or stash. Everything goes through the `git` command in the
//! repository the command runs in, one run at a time per worktree, no git process of a run
//! outliving its lock (`lock.rs`); the snapshot is built in a temporary index file, never the
//! user's. Memory roots and files over a size cap are left out and recorded as skipped
//! (`snapshot.rs`); rewind is in `rewind.rs`. See docs/agents.md, "Checkpoints and rewind".

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::{Error, Result};

mod git;
mod lock;
mod rewind;
mod snapshot;

use self::git::{Runner, git_unlocked};
pub use self::snapshot::SkippedFile;
use self::snapshot::Snapshot;

/// Where the main worktree's checkpoints live among the repository's refs.
pub const REFS: &str = "refs/mem/checkpoints/";

/// Where a linked worktree's checkpoints live: `refs/mem/worktrees/<name>/`, its name being
/// its folder under `.git/worktrees/` (refs are shared by all worktrees of a repository).
pub const WORKTREE_REFS: &str = "refs/mem/worktrees/";

/// The size over which a file is left out of a checkpoint unless the user configuration says
/// otherwise.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 5 * 1024 * 1024;

/// How many times a checkpoint tries the next number when another process took it first.
const NUMBER_ATTEMPTS: usize = 64;

/// One checkpoint, as `mem checkpoints` lists it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Checkpoint {
    /// Its number: 1 for the first, one more than the highest for each new one.
    pub id: String,
    /// The commit that holds it.
    pub commit: String,
    /// When it was taken.
    pub at: Timestamp,
    /// The label given with `-m`, else a default.
    pub label: String,
    /// Files that differ from the checkpoint before it (from HEAD's tree for the first).
    pub files_changed: usize,
    /// The memory roots it left out (folders ending in `/`).
    pub skipped_roots: Vec<String>,
    /// The files it left out for their size.
    pub skipped_files: Vec<SkippedFile>,
}

/// What `checkpoint` did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Taken {
    /// The checkpoint: new, or the latest one when nothing changed since.
    pub id: String,
    /// Whether it is new.
    pub new: bool,
    /// The memory roots it left out (folders ending in `/`).
    pub skipped_roots: Vec<String>,
    /// The files it left out for their size.
    pub skipped_files: Vec<SkippedFile>,
}

/// What a rewind changed (or would change, with `--dry-run`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Rewound {
    /// The checkpoint of the state before the rewind (rewinding to it undoes the rewind).
    pub before: Option<String>,
    /// Paths written back as the checkpoint had them (files, links; a path whose kind changed
    /// is put back as the kind it had).
    pub restored: Vec<String>,
    /// Files removed: not in the checkpoint, and not ignored by its rules.
    pub removed: Vec<String>,
    /// Files the checkpoint has that are ignored (or too large) now and exist: left as they
    /// are.
    pub kept_ignored: Vec<String>,
    /// Files the checkpoint does not have because its own ignore rules excluded them (the
    /// rules changed since): left as they are.
    pub kept_ignored_then: Vec<String>,
    /// Files the checkpoint left out for their size: left as they are.
    pub kept_skipped: Vec<String>,
    /// Folders where the checkpoint has a file, still holding files that are not rewound
    /// (ignored ones): left as they are.
    pub kept_folders: Vec<String>,
    /// Submodules whose commit differs: rewind does not move a submodule.
    pub submodules: Vec<String>,
    /// The memory roots of the repository, now or in the checkpoint: left as they are (memory
    /// is not workspace state).
    pub kept_memory: Vec<String>,
}

/// A git repository's working tree, found from a folder inside it.
pub struct Workspace {
    top: PathBuf,
    git_dir: PathBuf,
    /// The refs namespace of this worktree's checkpoints ([`REFS`] or under
    /// [`WORKTREE_REFS`]).
    refs: String,
    /// Files over this size are left out of a snapshot.
    max_file_bytes: u64,
    /// Runs git holding this run's lock: no other run's git works in the worktree meanwhile.
    runner: Runner,
}

impl Workspace {
    /// The repository `dir` is in; an error saying so outside one. The worktree is this run's
    /// until the `Workspace` is dropped and every git process it started has ended (the lock
    /// of `lock.rs`): it first waits for another run, or for the git processes that a run
    /// killed alone left, up to 30 s, then fails naming the processes still at work.
    pub fn find(dir: &Path) -> Result<Workspace> {
        let (top, git_dir, refs, format) = Self::locate(dir)?;
        let runner = Runner::start(&top, &git_dir, &format)?;
        Ok(Workspace { top, git_dir, refs, max_file_bytes: DEFAULT_MAX_FILE_BYTES, runner })
    }

    /// Whether `dir` is in a git repository's working tree; waits for no other run.
    pub fn is_inside(dir: &Path) -> bool {
        Self::locate(dir).is_ok()
    }

    /// The top folder, the git folder, the checkpoints' refs namespace and the object format
    /// of the working tree `dir` is in (one `git rev-parse`, before the run's lock: it changes
    /// nothing).
    fn locate(dir: &Path) -> Result<(PathBuf, PathBuf, String, String)> {
        let args = [
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
            "--show-object-format",
        ];
        let out = git_unlocked(dir, &args).map_err(|_| {
            Error::Checkpoint(format!(
                "{} is not inside a git repository: checkpoints are git objects; run `git \
                 init` first, or run mem where the work is",
                dir.display()
            ))
        })?;
        let mut lines = out.lines();
        let top = PathBuf::from(lines.next().unwrap_or_default());
        let git_dir = PathBuf::from(lines.next().unwrap_or_default());
        let common = PathBuf::from(lines.next().unwrap_or_default());
        let format = lines.next().unwrap_or("sha1").trim().to_string();
        if top.as_os_str().is_empty() || !top.is_absolute() {
            return Err(Error::Checkpoint("a bare repository has no working tree".into()));
        }
        if !holds_git(&top, &git_dir) {
            return Err(Error::Checkpoint(format!(
                "the repository's working tree is {}, which does not hold its git folder {} (a \
                 `core.worktree` setting?): mem takes and restores checkpoints only in the \
                 folder that holds `.git`",
                top.display(),
                git_dir.display()
            )));
        }
        let linked =
            git_dir != common && git_dir.parent().is_some_and(|p| p.ends_with("worktrees"));
        let refs = match git_dir.file_name().filter(|_| linked) {
            Some(name) => format!("{WORKTREE_REFS}{}/", name.to_string_lossy()),
            None => REFS.to_string(),
        };
        Ok((top, git_dir, refs, format))
    }

    /// Leaves files over `bytes` out of the checkpoints it takes.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Workspace {
        self.max_file_bytes = bytes;
        self
    }

    /// The top folder of the working tree.
    pub fn top(&self) -> &Path {
        &self.top
    }

    fn git(&self, args: &[&str], env: &[(&str, &str)]) -> Result<String> {
        self.runner.text(args, env)
    }

    /// The refs of this worktree's checkpoints, newest first (the first `count` only, if
    /// given): one `git for-each-ref`, without the diffs that [`Workspace::list`] adds.
    fn refs(&self, count: Option<usize>) -> Result<Vec<Ref>> {
        // Fields end with NUL, records with RS (labels hold no control character).
        let format = "%(refname)%00%(objectname)%00%(creatordate:unix)%00%(contents:subject)\
                      %00%(tree)%00%(contents:body)%1e";
        let mut args = vec!["for-each-ref".to_string(), "--sort=-refname".to_string()];
        args.push(format!("--format={format}"));
        args.extend(count.map(|n| format!("--count={n}")));
        args.push(self.refs.clone());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.git(&args, &[])?;
        let mut refs = Vec::new();
        for record in out.split('\u{1e}') {
            let f: Vec<&str> = record.trim_start_matches('\n').split('\0').collect();
            if let [name, commit, at, label, tree, body] = f[..] {
                let Some(number) = name.strip_prefix(&self.refs).and_then(|n| n.parse().ok())
                else {
                    continue;
                };
                refs.push(Ref {
                    number,
                    commit: commit.into(),
                    at: Timestamp::from_second(at.parse().unwrap_or(0))
                        .unwrap_or(Timestamp::UNIX_EPOCH),
                    label: label.into(),
                    tree: tree.into(),
                    body: body.into(),
                });
            }
        }
        Ok(refs)
    }

    /// Every checkpoint, newest first.
    pub fn list(&self) -> Result<Vec<Checkpoint>> {
        let refs = self.refs(None)?;
        let mut list = Vec::with_capacity(refs.len());
        for (i, r) in refs.iter().enumerate() {
            let before = match refs.get(i + 1) {
                Some(older) => Some(older.tree.clone()),
                None => self
                    .git(&["rev-parse", "--verify", "-q", &format!("{}^^{{tree}}", r.commit)], &[])
                    .ok()
                    .map(|t| t.trim().to_string()),
            };
            let files = match before {
                Some(before) => self.git(
                    &["diff-tree", "-r", "-z", "--name-only", "--no-renames", &before, &r.tree],
                    &[],
                )?,
                None => self.git(&["ls-tree", "-r", "-z", "--name-only", &r.tree], &[])?,
            };
            let (skipped_roots, skipped_files) = snapshot::skipped_of(&r.body);
            list.push(Checkpoint {
                id: r.number.to_string(),
                commit: r.commit.clone(),
                at: r.at,
                label: r.label.clone(),
                files_changed: files.split('\0').filter(|l| !l.is_empty()).count(),
                skipped_roots,
                skipped_files,
            });
        }
        Ok(list)
    }

    /// Takes a checkpoint labelled `label` at `now`, unless the working tree is as the latest
    /// checkpoint has it.
    pub fn checkpoint(&self, label: &str, now: Timestamp) -> Result<Taken> {
        let snapshot = self.snapshot()?;
        self.record(&snapshot, label, now)
    }

    /// Records `snapshot` as the next checkpoint, unless it is the latest one's tree. Another
    /// process taking a checkpoint at the same time takes another number: the first to create
    /// a number's ref has it, and the other tries the next.
    fn record(&self, snapshot: &Snapshot, label: &str, now: Timestamp) -> Result<Taken> {
        let (skipped_roots, skipped_files) = snapshot.skipped();
        let taken = |id: u64, new| Taken {
            id: id.to_string(),
            new,
            skipped_roots: skipped_roots.clone(),
            skipped_files: skipped_files.clone(),
        };
        let latest = self.refs(Some(1))?.into_iter().next();
        if let Some(latest) = latest.as_ref().filter(|l| l.tree == snapshot.tree) {
            return Ok(taken(latest.number, false));
        }
        let date = format!("{} +0000", now.as_second());
        let env = [
            ("GIT_AUTHOR_DATE", date.as_str()),
            ("GIT_COMMITTER_DATE", date.as_str()),
            ("GIT_AUTHOR_NAME", "mem"),
            ("GIT_AUTHOR_EMAIL", "mem@localhost"),
            ("GIT_COMMITTER_NAME", "mem"),
            ("GIT_COMMITTER_EMAIL", "mem@localhost"),
        ];
        let label = crate::format::without_controls(label).replace(['\n', '\r'], " ");
        let mut message = label.clone();
        let skipped = snapshot.skipped_lines();
        if !skipped.is_empty() {
            message = format!("{label}\n\n{skipped}");
        }
        let mut args = vec!["commit-tree", snapshot.tree.as_str(), "-m", message.as_str()];
        let head = self
            .git(&["rev-parse", "--verify", "-q", "HEAD"], &[])
            .ok()
            .map(|h| h.trim().to_string());
        if let Some(head) = &head {
            args.extend(["-p", head.as_str()]);
        }
        let commit = self.git(&args, &env)?.trim().to_string();
        let mut next = latest.map_or(0, |l| l.number) + 1;
        for _ in 0..NUMBER_ATTEMPTS {
            // The empty old value: the ref must not exist yet.
            match self.git(&["update-ref", &self.ref_name(next), &commit, ""], &[]) {
                Ok(_) => return Ok(taken(next, true)),
                Err(_) => {
                    let highest = self.refs(Some(1))?.into_iter().next().map_or(0, |l| l.number);
                    next = next.max(highest) + 1;
                }
            }
        }
        Err(Error::Checkpoint(format!(
            "could not take a checkpoint number after {NUMBER_ATTEMPTS} tries: other processes \
             keep taking checkpoints in {}",
            self.top.display()
        )))
    }

    /// The checkpoint numbered `id`.
    fn resolve(&self, id: &str) -> Result<Ref> {
        let number: Option<u64> = id.parse().ok();
        let found = self.refs(None)?.into_iter().find(|r| Some(r.number) == number);
        found.ok_or_else(|| {
            Error::Checkpoint(format!("no checkpoint {id:?}: `mem checkpoints` lists them"))
        })
    }

    /// Why the repository must not be rewound now (a merge, rebase, cherry-pick or revert in
    /// progress), if it must not.
    fn busy(&self) -> Option<&'static str> {
        [
            ("MERGE_HEAD", "a merge"),
            ("rebase-merge", "a rebase"),
            ("rebase-apply", "a rebase or `git am`"),
            ("CHERRY_PICK_HEAD", "a cherry-pick"),
            ("REVERT_HEAD", "a revert"),
        ]
        .into_iter()
        .find(|(name, _)| self.git_dir.join(name).exists())
        .map(|(_, what)| what)
    }

    /// Removes checkpoints (refs only; the user's refs are never touched): all but the `keep`
    /// newest, and those taken before `older_than`. Returns the ids removed.
    pub fn prune(&self, keep: Option<usize>, older_than: Option<Timestamp>) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        for (i, r) in self.refs(None)?.into_iter().enumerate() {
            let too_many = keep.is_some_and(|k| i >= k);
            let too_old = older_than.is_some_and(|t| r.at < t);
            if too_many || too_old {
                self.git(&["update-ref", "-d", &self.ref_name(r.number)], &[])?;
                removed.push(r.number.to_string());
            }
        }
        Ok(removed)
    }
}

/// Whether `top/.git` is the git folder `git_dir`: the folder itself, or a `.git` file (a
/// linked worktree's, a submodule's) naming it. A repository's `core.worktree` can name any
/// folder as its working tree; checkpoints would then read and rewind write there.
fn holds_git(top: &Path, git_dir: &Path) -> bool {
    let dot_git = top.join(".git");
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { return false };
    if meta.is_dir() {
        return same(&dot_git, git_dir);
    }
    let text = crate::untrusted::read_text(&dot_git, 4096, crate::untrusted::Links::InFolder);
    let Some(named) = text.ok().flatten() else { return false };
    let Some(named) = named.trim().strip_prefix("gitdir:") else { return false };
    let named = Path::new(named.trim());
    same(&if named.is_absolute() { named.to_path_buf() } else { top.join(named) }, git_dir)
}

/// A checkpoint's ref as `git for-each-ref` gives it.
struct Ref {
    number: u64,
    commit: String,
    at: Timestamp,
    label: String,
    tree: String,
    /// The commit message's body: what the checkpoint left out.
    body: String,
}

impl Workspace {
    /// The ref of this worktree's checkpoint `n`, zero-padded so that refs sort by number.
    fn ref_name(&self, n: u64) -> String {
        format!("{}{n:08}", self.refs)
    }
}
