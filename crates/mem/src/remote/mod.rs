//! The user layer on a git remote of the user's own (`[layers] user_remote`; docs/teams.md,
//! "The personal layer on its own remote"): the layer's folder is a clone of that repository,
//! made on first need ([`sync`] clones it), and [`sync`] commits its memory files, pulls (with
//! mem's merge driver registered in the clone, so two edits of one memory merge without a
//! marker) and pushes, with the user's own git, ssh and credentials, never prompting
//! ([`crate::git::Runner::own`]).
//!
//! What is committed is the root's shared files only ([`shared`]): memories, `mem.toml`, the
//! usage files, `.gitignore` and `.gitattributes`; never `.mem/` (the session log and its
//! ledger, transcript copies, the usage log, the index). A folder that is not a clone of the
//! remote is refused, never overwritten; so are a folder inside a git work tree and a remote
//! that is a project's. Each sync's outcome is kept in `.mem/remote.json` ([`State`]): a failed
//! fetch or push (offline) is said by `mem health`, and the next sync catches up.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use crate::git::Runner;
use crate::store::{self, Overwrite};
use crate::turns::{MAX_RUNS, Mode, Turns};
use crate::{Error, Result};

mod steps;
#[cfg(test)]
mod tests;

/// The file in the user layer's `.mem/` that keeps the last sync's outcome.
pub const STATE_FILE: &str = "remote.json";

/// The turns of the user layer's syncs ([`crate::turns`]): `.mem/remote.lock`, held by the sync
/// that runs, and `.mem/remote.again`, the word a sync asked for meanwhile leaves.
const TURNS: &str = "remote";

/// The most bytes of the state file read.
const MAX_STATE_BYTES: u64 = 64 << 10;

/// The user layer and the remote it is a clone of.
#[derive(Clone, Debug)]
pub struct Remote {
    /// The remote, as the user configuration names it (`[layers] user_remote`).
    pub url: String,
    /// The user layer's folder: a clone of `url` (made by [`sync`] when missing).
    pub dir: PathBuf,
    /// The ssh the user set in the environment (the front end reads it).
    pub ssh: Ssh,
    /// The command git runs as mem's merge driver (registered in the clone).
    pub driver: String,
}

/// The ssh the user chose in the environment: what git would run.
#[derive(Clone, Debug, Default)]
pub struct Ssh {
    /// `GIT_SSH_COMMAND`: a command line (wins over `core.sshCommand`).
    pub command: Option<String>,
    /// `GIT_SSH`: a program, without arguments (used when neither names a command).
    pub program: Option<String>,
}

/// What a sync did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    /// The remote.
    pub url: String,
    /// The user layer's folder.
    pub dir: PathBuf,
    /// The folder was cloned now.
    pub cloned: bool,
    /// The folder was made a memory root now (a clone of an empty repository).
    pub made_root: bool,
    /// Usage events written to this machine's usage file of the layer.
    pub usage_events: usize,
    /// Files committed (the layer's changes, and the earlier edits a merge kept).
    pub committed: usize,
    /// The branch of the remote merged in, when it brought anything.
    pub merged: Option<String>,
    /// The branch of the remote pushed to, when there was anything to push.
    pub pushed: Option<String>,
    /// How many syncs ran (more than one when others were asked for meanwhile).
    pub runs: usize,
}

/// The step of a sync that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Committing the layer's files (or making its root).
    Commit,
    /// Fetching from the remote.
    Fetch,
    /// Merging the remote's branch.
    Merge,
    /// Pushing to the remote.
    Push,
}

impl Step {
    /// The step's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Commit => "commit",
            Step::Fetch => "fetch",
            Step::Merge => "merge",
            Step::Push => "push",
        }
    }

    /// Whether its failure is the remote out of reach (offline, refused, timed out): the next
    /// sync catches up by itself. A commit or a merge that failed needs the user.
    pub fn reaches_the_remote(self) -> bool {
        matches!(self, Step::Fetch | Step::Push)
    }
}

/// A failed sync, as [`State`] keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failed {
    /// When.
    pub at: Timestamp,
    /// The step that failed.
    pub step: Step,
    /// What git said (its first line), or why mem stopped.
    pub message: String,
}

/// The outcome of the user layer's syncs, kept in `.mem/remote.json`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The remote synced with.
    pub url: String,
    /// The last sync that completed.
    pub last_sync: Option<Timestamp>,
    /// The last sync's failure, when the last sync failed.
    pub failure: Option<Failed>,
}

/// The user layer's folder as a clone of its remote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Folder {
    /// Not there, or an empty folder: [`sync`] clones the remote into it.
    Missing,
    /// A git repository at the folder itself whose `origin` is the remote.
    Clone,
}

/// Whether `dir` is a clone of `url` ([`Folder`]); a folder that is anything else is refused
/// ([`Error::Remote`], naming what it is and the fix): mem never overwrites it. Also refused: a
/// folder inside a git work tree, whose files would be that repository's too.
pub fn folder(url: &str, dir: &Path) -> Result<Folder> {
    if let Some(top) = inside_work_tree(dir) {
        return Err(Error::Remote(format!(
            "the user layer {} is inside the git work tree of {}: its memories would be files of \
             that repository, and could reach its remote; set `[layers] user` to a folder \
             outside every repository",
            dir.display(),
            top.display()
        )));
    }
    let meta = match std::fs::symlink_metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Folder::Missing),
        Err(e) => return Err(Error::io(dir, e)),
        Ok(meta) => meta,
    };
    if !meta.is_dir() {
        return Err(Error::Remote(format!(
            "the user layer {} is not a folder (a file, or a link): mem never replaces it; move \
             it away and `mem sync` clones {url} there",
            dir.display()
        )));
    }
    let empty = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.next().is_none();
    if empty {
        return Ok(Folder::Missing);
    }
    let git = Runner::own(dir, "ssh");
    let top = steps::text(&git, &["rev-parse", "--show-toplevel"]).ok();
    let here = dir.canonicalize().map_err(|e| Error::io(dir, e))?;
    let is_top = top.is_some_and(|t| Path::new(&t).canonicalize().is_ok_and(|t| t == here));
    if !is_top {
        return Err(Error::Remote(format!(
            "the user layer {} is not a clone of {url}: it is no git repository of its own, and \
             mem never overwrites a folder; move it away (`mem sync` then clones {url} there), \
             or, to share what it holds, make it one: `git -C {0} init`, `git -C {0} remote add \
             origin {url}`, then `mem sync`",
            dir.display()
        )));
    }
    match steps::text(&git, &["config", "--get", "remote.origin.url"]) {
        Ok(origin) if same_remote(&origin, url) => Ok(Folder::Clone),
        Ok(origin) => Err(Error::Remote(format!(
            "the user layer {} is a clone of {origin}, not of {url} ([layers] user_remote): mem \
             never mixes two repositories; if it is the same repository at a new address, `git \
             -C {} remote set-url origin {url}`; else move the folder away",
            dir.display(),
            dir.display()
        ))),
        Err(_) => Err(Error::Remote(format!(
            "the user layer {} is a git repository without an `origin`: `git -C {} remote add \
             origin {url}` makes it the clone of {url}, then `mem sync`",
            dir.display(),
            dir.display()
        ))),
    }
}

/// The top of the git work tree that holds `dir` (a folder above it with a `.git`), if any.
pub fn inside_work_tree(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .skip(1)
        .find(|p| std::fs::symlink_metadata(p.join(".git")).is_ok())
        .map(Into::into)
}

/// Refuses a remote that is one of the projects': `url` is a remote (`remote.*.url` or
/// `pushurl`) of the git repository holding a folder of `projects` (the working folder, the
/// project root), other than the user layer's own clone at `dir`.
pub fn refuse_project_remote(url: &str, dir: &Path, projects: &[PathBuf]) -> Result<()> {
    let own = dir.canonicalize().ok();
    for project in projects {
        let git = Runner::new(project);
        let Ok(top) = steps::text(&git, &["rev-parse", "--show-toplevel"]) else { continue };
        let top = PathBuf::from(top);
        if top.canonicalize().ok().is_some_and(|t| Some(&t) == own.as_ref()) {
            continue;
        }
        let args = ["config", "--get-regexp", r"^remote\..*\.(url|pushurl)$"];
        let Ok(found) = steps::text(&git, &args) else { continue };
        for line in found.lines() {
            let Some((key, value)) = line.split_once(' ') else { continue };
            if same_remote(value, url) {
                return Err(Error::Remote(format!(
                    "[layers] user_remote {url} is a remote of the project {} ({key}): the user \
                     layer never pushes into a project's remote, where what is personal would \
                     reach everyone who clones it; give the user layer a repository of its own",
                    top.display()
                )));
            }
        }
    }
    Ok(())
}

/// Whether two git remote addresses name the same repository: the same host and path for
/// network addresses (`https://host/path`, `ssh://user@host:port/path`, `user@host:path`,
/// whatever the scheme, user, port, a trailing `/` or `.git`), the same folder for local ones.
pub fn same_remote(a: &str, b: &str) -> bool {
    normal(a) == normal(b)
}

/// The address `url` in the form [`same_remote`] compares.
fn normal(url: &str) -> String {
    let url = url.trim();
    let path = |p: &str| {
        let p = p.trim_matches('/');
        p.strip_suffix(".git").unwrap_or(p).trim_end_matches('/').to_string()
    };
    let host = |authority: &str| {
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let host = match host.strip_prefix('[') {
            Some(v6) => v6.split(']').next().unwrap_or(v6),
            None => host.split(':').next().unwrap_or(host),
        };
        host.to_ascii_lowercase()
    };
    if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return local(rest);
        }
        let (authority, p) = rest.split_once('/').unwrap_or((rest, ""));
        return format!("{}/{}", host(authority), path(p));
    }
    // `[user@]host:path`, as scp writes it: no `/` before the first `:`.
    if let Some((before, p)) = url.split_once(':')
        && !before.is_empty()
        && !before.contains('/')
    {
        return format!("{}/{}", host(before), path(p));
    }
    local(url)
}

/// A local repository's folder, canonical where it exists.
fn local(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    let p = Path::new(if trimmed.is_empty() { path } else { trimmed });
    let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    format!("file:{}", p.display())
}

/// Whether the file at `path` (relative to the layer's root, `/`-separated) is one the user
/// layer commits: a memory (`*.md`), `mem.toml`, a usage file (`usage/*.tsv`), `.gitignore`,
/// `.gitattributes`; never anything under `.mem/` (or `.git/`), nor another file that happens
/// to be there (the per-user root's `roots.toml`, say).
pub fn shared(path: &str) -> bool {
    if path.split('/').any(|c| c == store::STATE_DIR || c == ".git" || c.is_empty()) {
        return false;
    }
    let usage = path
        .strip_prefix("usage/")
        .is_some_and(|name| !name.contains('/') && name.ends_with(".tsv"));
    path.ends_with(".md") || usage || matches!(path, "mem.toml" | ".gitignore" | ".gitattributes")
}

/// The last sync's outcome kept in the user layer `dir` (`None` when none is kept, or it
/// cannot be read).
pub fn state(dir: &Path) -> Option<State> {
    let path = dir.join(store::STATE_DIR).join(STATE_FILE);
    let links = crate::untrusted::Links::InFolder;
    let text = crate::untrusted::read_text(&path, MAX_STATE_BYTES, links).ok()??;
    serde_json::from_str(&text).ok()
}

/// Keeps `state` in the user layer `dir`.
fn keep_state(dir: &Path, state: &State) -> Result<()> {
    let path = store::state_dir(dir)?.join(STATE_FILE);
    let text = serde_json::to_string_pretty(state).map_err(|e| Error::Remote(e.to_string()))?;
    store::write_atomic(&path, text.as_bytes(), Overwrite::Yes)
}

/// Syncs the user layer with its remote: refuses a remote that is one of `projects`' (see
/// [`refuse_project_remote`]) and a folder that is not a clone of it ([`folder`]); clones it
/// when missing; then, holding the layer's lock (as `mode` says: `None` when a background sync
/// left word for the one that holds it), registers mem's merge driver in the clone, makes the
/// folder a root if it is none yet, writes this machine's usage events to its usage file,
/// commits the shared files ([`shared`]), fetches, merges the remote's branch, commits the
/// earlier edits the driver kept, and pushes (again after a fetch and a merge when another
/// machine pushed meanwhile). The outcome is kept in `.mem/remote.json` ([`state`]); a failure
/// is the error, naming the step.
pub fn sync(
    remote: &Remote,
    projects: &[PathBuf],
    mode: Mode,
    now: Timestamp,
) -> Result<Option<SyncReport>> {
    refuse_project_remote(&remote.url, &remote.dir, projects)?;
    let mut report =
        SyncReport { url: remote.url.clone(), dir: remote.dir.clone(), ..SyncReport::default() };
    if folder(&remote.url, &remote.dir)? == Folder::Missing {
        steps::clone(remote)?;
        report.cloned = true;
    }
    let Some(turn) = Turns::new(&remote.dir, TURNS)?.take(mode)? else { return Ok(None) };
    loop {
        turn.begin();
        report.runs += 1;
        let done = steps::run(remote, now, &mut report);
        let mut state = state(&remote.dir).unwrap_or_default();
        state.url = remote.url.clone();
        match &done {
            Ok(()) => {
                state.last_sync = Some(now);
                state.failure = None;
            }
            Err((step, message)) => {
                state.failure = Some(Failed { at: now, step: *step, message: message.clone() });
            }
        }
        keep_state(&remote.dir, &state)?;
        if let Err((step, message)) = done {
            let next = if step.reaches_the_remote() {
                "; what is here is committed, and the next `mem sync` (or capture into the \
                 layer) catches up"
            } else {
                ""
            };
            return Err(Error::Remote(format!(
                "the user layer {} could not sync with {} ({} failed): {message}{next}",
                remote.dir.display(),
                remote.url,
                step.as_str()
            )));
        }
        if report.runs >= MAX_RUNS || !turn.again() {
            return Ok(Some(report));
        }
    }
}

/// Whether a sync of the user layer in `dir` is running: then it is left word to sync once more
/// (as [`Mode::Background`] does) and `true` says a write needs no sync process of its own;
/// `false` when none runs (or the lock cannot be opened): start one.
pub fn leave_word_if_running(dir: &Path) -> bool {
    Turns::new(dir, TURNS).is_ok_and(|turns| turns.leave_word_if_running())
}
