//! Running `git` for checkpoints: every git process of a run holds the run's lock (see
//! `lock.rs`), output as bytes (file names need not be UTF-8), temporary index files that are
//! swept when a killed run left them, and paths made from git's bytes.

use std::path::{Path, PathBuf};

use super::lock::RunLock;
use crate::{Error, Result};

/// Name prefix of the temporary index files checkpoints build in the git folder; the process
/// id of the run that made one follows, so that the next run knows a killed run's file.
const TEMP_INDEX_PREFIX: &str = "mem-checkpoint-index-";

/// A temporary index file left by a run killed before it could remove it is removed by the
/// next run once it is this old (a run in progress finishes long before).
const STALE_INDEX_SECS: u64 = 600;

/// Runs git in `dir` before a run holds its lock (only `git rev-parse`, which finds the
/// repository and changes nothing); its stdout as text.
pub(super) fn git_unlocked(dir: &Path, args: &[&str]) -> Result<String> {
    let git = crate::git::Runner::new(dir);
    text(finished(args, git.run(args, &[], b"", None), None)?)
}

/// The git processes of one run: each runs in the worktree's top folder holding the run's
/// lock (its stderr is the lock file, see `lock.rs`), so that no git process of the run
/// outlives the lock.
pub(super) struct Runner {
    git: crate::git::Runner,
    lock: RunLock,
}

impl Runner {
    /// Takes the lock of the worktree at `top` whose git folder is `git_dir` (waiting for a
    /// run in progress, or for the git processes of a run that was killed); `object_format`
    /// is the repository's (`sha1`, `sha256`).
    pub(super) fn start(top: &Path, git_dir: &Path, object_format: &str) -> Result<Runner> {
        let git = crate::git::Runner::new(top).with_object_format(object_format);
        Ok(Runner { git, lock: RunLock::take(git_dir, top)? })
    }

    /// Runs git and returns its stdout as text (lossy where not UTF-8).
    pub(super) fn text(&self, args: &[&str], env: &[(&str, &str)]) -> Result<String> {
        text(self.raw(args, env, b"")?)
    }

    /// Runs git with `input` on its stdin; its stdout as bytes, or its stderr as the error.
    /// Every command runs with the work tree's filters off: one that writes an index
    /// (`write-tree` too) compares racily clean entries with the work tree's files, through
    /// the filters.
    pub(super) fn raw(&self, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Result<Vec<u8>> {
        let out = self.git.over_work_tree(args, env, input, Some(self.lock.stderr()?));
        finished(args, out, Some(&self.lock))
    }

    /// The files of the index `env` names that a filter driver applies to by the repository's
    /// attributes (`git check-attr`, which reads them and runs nothing), when the configuration
    /// defines any filter driver; none otherwise.
    pub(super) fn filtered(&self, env: &[(&str, &str)]) -> Result<Vec<Vec<u8>>> {
        if !self.git.defines_filters() {
            return Ok(Vec::new());
        }
        let names = self.raw(&["ls-files", "-z", "--cached"], env, b"")?;
        // With the repository's attributes (`raw` reads them from the empty tree).
        let args = ["check-attr", "-z", "--stdin", "filter"];
        let out = self.git.run(&args, env, &names, Some(self.lock.stderr()?));
        let out = finished(&args, out, Some(&self.lock))?;
        let fields: Vec<&[u8]> = out.split(|b| *b == 0).collect();
        Ok(fields
            .chunks(3)
            .filter(|f| f.len() == 3 && !matches!(f[2], b"unspecified" | b"unset"))
            .map(|f| f[0].to_vec())
            .collect())
    }
}

fn text(out: Vec<u8>) -> Result<String> {
    Ok(String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into()))
}

/// The stdout of a git process that ended well; else its stderr (from `lock`'s file when it
/// went there) as the error.
fn finished(
    args: &[&str],
    out: std::result::Result<crate::git::Finished, crate::git::Failure>,
    lock: Option<&RunLock>,
) -> Result<Vec<u8>> {
    let out = out.map_err(|failure| match failure {
        crate::git::Failure::NoGit => {
            Error::Checkpoint("cannot run git: checkpoints need git on the PATH".into())
        }
        failure => Error::Checkpoint(format!("git {}: {failure}", args[0])),
    })?;
    if !out.status.success() {
        let stderr = match lock {
            Some(lock) => lock.errors(),
            None => String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        return Err(Error::Checkpoint(format!("git {} failed: {}", args[0], stderr.trim())));
    }
    Ok(out.stdout)
}

/// The non-empty NUL-separated fields of git's `-z` output.
pub(super) fn nul_separated(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|b| *b == 0).filter(|f| !f.is_empty())
}

/// Names joined for git's `-z --stdin` input: each followed by a NUL.
pub(super) fn nul_joined<T: AsRef<[u8]>>(names: &[T]) -> Vec<u8> {
    names.iter().flat_map(|n| n.as_ref().iter().chain(&[0])).copied().collect()
}

/// The path a file name of git's output (bytes, `/`-separated) names under `top`.
pub(super) fn path_under(top: &Path, name: &[u8]) -> PathBuf {
    top.join(os_path(name))
}

/// A relative path from git's bytes, byte for byte where the platform allows.
#[cfg(unix)]
pub(super) fn os_path(name: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(name))
}

/// A relative path from git's bytes (lossy where not UTF-8, off Unix).
#[cfg(not(unix))]
pub(super) fn os_path(name: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(name).into_owned())
}

/// A file name of git's output, for people (lossy where not UTF-8).
pub(super) fn shown(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// A temporary index file in the repository's git folder, removed when dropped.
pub(super) struct TempIndex {
    pub(super) path: PathBuf,
}

impl TempIndex {
    /// A new temporary index; first removes those a killed run left behind.
    pub(super) fn new(git_dir: &Path) -> Result<TempIndex> {
        let prefix = format!("{TEMP_INDEX_PREFIX}{}-", std::process::id());
        let file = tempfile::Builder::new()
            .prefix(&prefix)
            .tempfile_in(git_dir)
            .map_err(|e| Error::io(git_dir, e))?;
        let (handle, path) = file.keep().map_err(|e| Error::io(git_dir, e.error))?;
        // Its mtime is "now" by the file system's clock, which stamped the others too.
        if let Ok(now) = handle.metadata().and_then(|m| m.modified()) {
            sweep(git_dir, &path, now);
        }
        // git wants to create the index itself, or to find a valid one.
        let _ = std::fs::remove_file(&path);
        Ok(TempIndex { path })
    }

    /// The environment that makes git use it.
    pub(super) fn env(&self) -> [(&str, &str); 1] {
        [("GIT_INDEX_FILE", self.path.to_str().unwrap_or_default())]
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.path.with_extension("lock"));
    }
}

/// Removes the temporary index files (and their locks) of runs that were killed: those whose
/// process is gone (where `/proc` tells), else those last written [`STALE_INDEX_SECS`] before
/// `now`; `own` aside.
fn sweep(git_dir: &Path, own: &Path, now: std::time::SystemTime) {
    let Ok(entries) = std::fs::read_dir(git_dir) else { return };
    let proc = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(TEMP_INDEX_PREFIX) else { continue };
        if entry.path() == own || own.with_extension("lock") == entry.path() {
            continue;
        }
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        let gone = match pid {
            Some(pid) if proc => !Path::new("/proc").join(pid.to_string()).exists(),
            _ => false,
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age.as_secs() > STALE_INDEX_SECS);
        if gone || old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
