//! Workspace checkpoints: snapshots of a git repository's working tree (tracked files and
//! untracked ones that are not ignored) kept as commits under `refs/mem/checkpoints/`, taken
//! and restored without touching the user's HEAD, branch, index or stash. Everything goes
//! through the `git` command in the repository the command runs in; the snapshot is built in
//! a temporary index file, never the user's. See docs/agents.md, "Checkpoints and rewind".

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use jiff::Timestamp;

use crate::{Error, Result};

/// Where checkpoints live among the repository's refs.
pub const REFS: &str = "refs/mem/checkpoints/";

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
}

/// What `checkpoint` did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Taken {
    /// The checkpoint: new, or the latest one when nothing changed since.
    pub id: String,
    /// Whether it is new.
    pub new: bool,
}

/// What a rewind changed (or would change, with `--dry-run`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Rewound {
    /// The checkpoint of the state before the rewind (rewinding to it undoes the rewind).
    pub before: Option<String>,
    /// Files written back as the checkpoint had them.
    pub restored: Vec<String>,
    /// Files removed: not in the checkpoint, and not ignored.
    pub removed: Vec<String>,
    /// Files the checkpoint has that are ignored now and exist: left as they are.
    pub kept_ignored: Vec<String>,
    /// The memory roots of the repository, now or in the checkpoint: left as they are (memory
    /// is not workspace state; see [`MemoryRoots`]).
    pub kept_memory: Vec<String>,
}

/// A git repository's working tree, found from a folder inside it.
pub struct Workspace {
    top: PathBuf,
    git_dir: PathBuf,
}

impl Workspace {
    /// The repository `dir` is in; an error saying so outside one.
    pub fn find(dir: &Path) -> Result<Workspace> {
        let out = git_in(dir, &["rev-parse", "--show-toplevel", "--absolute-git-dir"], &[])
            .map_err(|_| {
                Error::Checkpoint(format!(
                    "{} is not inside a git repository: checkpoints are git objects; run \
                     `git init` first, or run mem where the work is",
                    dir.display()
                ))
            })?;
        let mut lines = out.lines();
        let top = PathBuf::from(lines.next().unwrap_or_default());
        let git_dir = PathBuf::from(lines.next().unwrap_or_default());
        if top.as_os_str().is_empty() {
            return Err(Error::Checkpoint("a bare repository has no working tree".into()));
        }
        Ok(Workspace { top, git_dir })
    }

    /// The top folder of the working tree.
    pub fn top(&self) -> &Path {
        &self.top
    }

    fn git(&self, args: &[&str], env: &[(&str, &str)]) -> Result<String> {
        git_in(&self.top, args, env)
    }

    /// The tree of the working tree as it is now (tracked files and untracked ones that are
    /// not ignored, memory roots left out), built in a temporary index seeded from the
    /// user's, which is not touched; with the memory roots it left out.
    fn snapshot(&self) -> Result<(String, MemoryRoots)> {
        let index = TempIndex::new(&self.git_dir)?;
        let user_index = self.git_dir.join("index");
        if user_index.is_file() {
            std::fs::copy(&user_index, &index.path).map_err(|e| Error::io(&index.path, e))?;
        }
        let env = [("GIT_INDEX_FILE", index.path_str())];
        self.git(&["add", "--all", "--", "."], &env)?;
        let listed = git_raw(&self.top, &["ls-files", "-z", "--cached"], &env, b"")?;
        let roots = MemoryRoots::of(nul_separated(&listed));
        let mut memory: Vec<u8> = Vec::new();
        for file in nul_separated(&listed).filter(|f| roots.holds(f)) {
            memory.extend_from_slice(file);
            memory.push(0);
        }
        if !memory.is_empty() {
            git_raw(
                &self.top,
                &["update-index", "--force-remove", "-z", "--stdin"],
                &env,
                &memory,
            )?;
        }
        Ok((self.git(&["write-tree"], &env)?.trim().to_string(), roots))
    }

    /// The refs of the checkpoints, newest first (the first `count` only, if given): one
    /// `git for-each-ref`, without the diffs that [`Workspace::list`] adds.
    fn refs(&self, count: Option<usize>) -> Result<Vec<Ref>> {
        let format = "%(refname:lstrip=3)%00%(objectname)%00%(creatordate:unix)%00%(contents:subject)%00%(tree)";
        let mut args = vec!["for-each-ref".to_string(), "--sort=-refname".to_string()];
        args.push(format!("--format={format}"));
        args.extend(count.map(|n| format!("--count={n}")));
        args.push(REFS.to_string());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.git(&args, &[])?;
        let mut refs = Vec::new();
        for line in out.lines().filter(|l| !l.is_empty()) {
            let f: Vec<&str> = line.split('\0').collect();
            if let [name, commit, at, label, tree] = f[..] {
                refs.push(Ref {
                    number: name.parse().unwrap_or(0),
                    commit: commit.into(),
                    at: Timestamp::from_second(at.parse().unwrap_or(0))
                        .unwrap_or(Timestamp::UNIX_EPOCH),
                    label: label.into(),
                    tree: tree.into(),
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
                    &["diff-tree", "-r", "--name-only", "--no-renames", &before, &r.tree],
                    &[],
                )?,
                None => self.git(&["ls-tree", "-r", "--name-only", &r.tree], &[])?,
            };
            list.push(Checkpoint {
                id: r.number.to_string(),
                commit: r.commit.clone(),
                at: r.at,
                label: r.label.clone(),
                files_changed: files.lines().filter(|l| !l.is_empty()).count(),
            });
        }
        Ok(list)
    }

    /// Takes a checkpoint labelled `label` at `now`, unless the working tree is as the latest
    /// checkpoint has it.
    pub fn checkpoint(&self, label: &str, now: Timestamp) -> Result<Taken> {
        let (tree, _) = self.snapshot()?;
        self.record(&tree, label, now)
    }

    fn record(&self, tree: &str, label: &str, now: Timestamp) -> Result<Taken> {
        let latest = self.refs(Some(1))?.into_iter().next();
        if let Some(latest) = latest.as_ref().filter(|l| l.tree == tree) {
            return Ok(Taken { id: latest.number.to_string(), new: false });
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
        let mut args = vec!["commit-tree", tree, "-m", label];
        let head = self
            .git(&["rev-parse", "--verify", "-q", "HEAD"], &[])
            .ok()
            .map(|h| h.trim().to_string());
        if let Some(head) = &head {
            args.extend(["-p", head.as_str()]);
        }
        let commit = self.git(&args, &env)?.trim().to_string();
        let next = latest.map_or(0, |l| l.number) + 1;
        self.git(&["update-ref", &ref_name(next), &commit, ""], &[])?;
        Ok(Taken { id: next.to_string(), new: true })
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

    /// Restores the working tree (or only `paths`, relative to the top) to checkpoint `id`,
    /// after taking a checkpoint of the present state so that the rewind can be undone.
    /// With `dry_run`, says what it would change and changes nothing.
    pub fn rewind(
        &self,
        id: &str,
        paths: &[String],
        dry_run: bool,
        now: Timestamp,
    ) -> Result<Rewound> {
        if let Some(what) = self.busy() {
            return Err(Error::Checkpoint(format!(
                "{what} is in progress in {}: finish or abort it first; mem never rewinds in the middle of one",
                self.top.display()
            )));
        }
        let target = self.resolve(id)?;
        let target_tree = target.tree.as_str();
        let (current, mut roots) = self.snapshot()?;
        // Checkpoints taken before memory roots were left out hold them: never restored.
        let target_files =
            git_raw(&self.top, &["ls-tree", "-r", "-z", "--name-only", target_tree], &[], b"")?;
        roots.extend(MemoryRoots::of(nul_separated(&target_files)));
        let mut args = vec![
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--name-status",
            current.as_str(),
            target_tree,
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        let out = self.git(&args, &[])?;
        let mut rewound = Rewound { kept_memory: roots.names(), ..Rewound::default() };
        let mut fields = out.split('\0').filter(|f| !f.is_empty());
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            if roots.holds(path.as_bytes()) {
                continue;
            }
            match status {
                "D" => rewound.removed.push(path.to_string()),
                // Not in the present snapshot yet on disk: ignored now; never touched.
                "A" if std::fs::symlink_metadata(self.top.join(path)).is_ok() => {
                    rewound.kept_ignored.push(path.to_string())
                }
                _ => rewound.restored.push(path.to_string()),
            }
        }
        if dry_run || (rewound.restored.is_empty() && rewound.removed.is_empty()) {
            return Ok(rewound);
        }
        let label = format!("before rewind to {}", target.number);
        rewound.before = Some(self.record(&current, &label, now)?.id);
        if !rewound.restored.is_empty() {
            let index = TempIndex::new(&self.git_dir)?;
            let env = [("GIT_INDEX_FILE", index.path_str())];
            self.git(&["read-tree", target_tree], &env)?;
            let mut input = rewound.restored.join("\0");
            input.push('\0');
            git_stdin(&self.top, &["checkout-index", "-f", "-z", "--stdin"], &env, &input)?;
        }
        for rel in &rewound.removed {
            let path = self.top.join(rel);
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
            // Folders left empty go too, as git would leave none.
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| *d != self.top && d.starts_with(&self.top)) {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
                dir = d.parent();
            }
        }
        Ok(rewound)
    }

    /// Removes checkpoints (refs only; the user's refs are never touched): all but the `keep`
    /// newest, and those taken before `older_than`. Returns the ids removed.
    pub fn prune(&self, keep: Option<usize>, older_than: Option<Timestamp>) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        for (i, r) in self.refs(None)?.into_iter().enumerate() {
            let too_many = keep.is_some_and(|k| i >= k);
            let too_old = older_than.is_some_and(|t| r.at < t);
            if too_many || too_old {
                self.git(&["update-ref", "-d", &ref_name(r.number)], &[])?;
                removed.push(r.number.to_string());
            }
        }
        Ok(removed)
    }
}

/// A checkpoint's ref as `git for-each-ref` gives it.
struct Ref {
    number: u64,
    commit: String,
    at: Timestamp,
    label: String,
    tree: String,
}

/// The ref of checkpoint `n`, zero-padded so that refs sort by number.
fn ref_name(n: u64) -> String {
    format!("{REFS}{n:08}")
}

/// A temporary index file in the repository's git folder, removed when dropped.
struct TempIndex {
    path: PathBuf,
}

impl TempIndex {
    fn new(git_dir: &Path) -> Result<TempIndex> {
        let file = tempfile::Builder::new()
            .prefix("mem-checkpoint-index-")
            .tempfile_in(git_dir)
            .map_err(|e| Error::io(git_dir, e))?;
        let (_, path) = file.keep().map_err(|e| Error::io(git_dir, e.error))?;
        // git wants to create the index itself, or to find a valid one.
        let _ = std::fs::remove_file(&path);
        Ok(TempIndex { path })
    }

    fn path_str(&self) -> &str {
        self.path.to_str().unwrap_or_default()
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.path.with_extension("lock"));
    }
}

/// The memory roots in a list of a repository's files: `.memory/` and every other folder
/// holding a `mem.toml` (its whole content), and, when the repository's top is a root itself,
/// the files it reads as memories (Markdown outside hidden folders), `archive/` and `usage/`.
/// Memory is a layer of its own: checkpoints leave it out and rewind never changes it.
#[derive(Debug, Default)]
pub struct MemoryRoots {
    /// The roots' folders, each ending in `/` (raw bytes: names need not be UTF-8).
    folders: Vec<Vec<u8>>,
    /// The top of the repository is a root.
    top: bool,
}

impl MemoryRoots {
    /// The roots that the files `files` (relative to the top) show.
    fn of<'a>(files: impl Iterator<Item = &'a [u8]>) -> MemoryRoots {
        let project = format!("{}/", crate::store::PROJECT_DIR).into_bytes();
        let mut roots = MemoryRoots::default();
        for file in files {
            let Some(folder) = file.strip_suffix(crate::config::CONFIG_FILE.as_bytes()) else {
                if file.starts_with(&project) && !roots.folders.contains(&project) {
                    roots.folders.push(project.clone());
                }
                continue;
            };
            if folder.is_empty() {
                roots.top = true;
            } else if folder.ends_with(b"/") && !roots.folders.iter().any(|f| f == folder) {
                roots.folders.push(folder.to_vec());
            }
        }
        roots
    }

    /// Adds the roots of `other`.
    fn extend(&mut self, other: MemoryRoots) {
        for folder in other.folders {
            if !self.folders.contains(&folder) {
                self.folders.push(folder);
            }
        }
        self.top |= other.top;
    }

    /// Whether the file `path` (relative to the top) belongs to a memory root.
    fn holds(&self, path: &[u8]) -> bool {
        if self.folders.iter().any(|f| path.starts_with(f)) {
            return true;
        }
        let text = String::from_utf8_lossy(path);
        self.top
            && (crate::store::is_memory_path(Path::new(text.as_ref()))
                || ["archive/", "usage/"].iter().any(|d| text.starts_with(d)))
    }

    /// The roots, as folders ending in `/` (`./` for the top), sorted.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> =
            self.folders.iter().map(|f| String::from_utf8_lossy(f).into_owned()).collect();
        names.sort();
        if self.top {
            names.insert(0, "./".to_string());
        }
        names
    }
}

/// The non-empty NUL-separated fields of git's `-z` output.
fn nul_separated(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == 0).filter(|f| !f.is_empty())
}

fn git_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<String> {
    git_stdin(dir, args, env, "")
}

fn git_stdin(dir: &Path, args: &[&str], env: &[(&str, &str)], input: &str) -> Result<String> {
    let out = git_raw(dir, args, env, input.as_bytes())?;
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// Runs git in `dir` with `input` on its stdin; its stdout as bytes, or its stderr as the error.
fn git_raw(dir: &Path, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut cmd = Command::new("git");
    cmd.arg("-C").arg(dir).args(args).envs(env.iter().copied());
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        Error::Checkpoint(format!("cannot run git ({e}); checkpoints need git on the PATH"))
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(input).map_err(|e| Error::Checkpoint(format!("git {}: {e}", args[0])))?;
    }
    let out =
        child.wait_with_output().map_err(|e| Error::Checkpoint(format!("git {}: {e}", args[0])))?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Checkpoint(format!("git {} failed: {}", args[0], stderr.trim())));
    }
    Ok(out.stdout)
}
