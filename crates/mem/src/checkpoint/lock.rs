//! A run's hold on a worktree's checkpoints: an exclusive lock on a file in its git folder,
//! given to every git process the run starts as that process's stderr. A lock belongs to the
//! open file, which each git process shares, so it is held while the run or any of its git
//! processes lives: a run killed alone (its git left running, still writing the tree) keeps
//! it until that git ends, and the next run waits for it, then names what holds it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::{Error, Result};

/// The lock file, in the git folder of the worktree (a linked worktree has its own).
const LOCK_FILE: &str = "mem-checkpoint.lock";

/// The pause between two tries at the lock.
const PAUSE: Duration = Duration::from_millis(50);

/// How many pauses a run waits for the lock (30 s in all): a killed run's git ends as soon
/// as it has written what it was given, another run's checkpoint or rewind within seconds.
const TRIES: u32 = 600;

/// The most of git's stderr kept for an error message: its end.
const ERRORS_KEPT: u64 = 16 * 1024;

/// The lock of one run, held until it is dropped and every git process it started ended.
pub(super) struct RunLock {
    file: File,
    path: PathBuf,
}

impl RunLock {
    /// Takes the lock of the worktree whose git folder is `git_dir`, waiting for another run
    /// (or the git processes a killed run left) up to [`TRIES`] pauses; then an error naming
    /// the processes that hold it.
    pub(super) fn take(git_dir: &Path, top: &Path) -> Result<RunLock> {
        let path = git_dir.join(LOCK_FILE);
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        // A link or a hard link planted in the git folder would send git's messages into
        // another file: only a regular file of its own, at that very path.
        let opened = file.metadata().map_err(|e| Error::io(&path, e))?;
        let here = std::fs::symlink_metadata(&path).map_err(|e| Error::io(&path, e))?;
        if !opened.is_file() || !same_file(&opened, &here) || links(&opened) > 1 {
            return Err(Error::Checkpoint(format!(
                "{} is not a plain file (a link, or linked elsewhere): remove it and run mem again",
                path.display()
            )));
        }
        for _ in 0..TRIES {
            match file.try_lock() {
                Ok(()) => return Ok(RunLock { file, path }),
                Err(std::fs::TryLockError::WouldBlock) => std::thread::sleep(PAUSE),
                Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
        let waited = (PAUSE * TRIES).as_secs();
        let found = holders(&path);
        let holding = match found.len() {
            0 => "a process holds".to_string(),
            1 => format!("{} holds", found[0]),
            _ => format!("{} hold", found.join(", ")),
        };
        Err(Error::Checkpoint(format!(
            "mem waited {waited} s for another checkpoint or rewind in {} to end: {holding} its \
             lock {} (another mem run, or a git process of a run that was killed); wait for it \
             to end (or end it), then run mem again",
            top.display(),
            path.display(),
        )))
    }

    /// The stderr of the next git process: this file (the same open file, so that the process
    /// holds the lock), emptied first.
    pub(super) fn stderr(&self) -> Result<Stdio> {
        let io = |e| Error::io(&self.path, e);
        self.file.set_len(0).map_err(io)?;
        (&self.file).seek(SeekFrom::Start(0)).map_err(io)?;
        Ok(Stdio::from(self.file.try_clone().map_err(io)?))
    }

    /// What the last git process wrote to its stderr (its end, when it wrote a lot).
    pub(super) fn errors(&self) -> String {
        let len = self.file.metadata().map_or(0, |m| m.len());
        let mut bytes = Vec::new();
        let mut file = &self.file;
        if file.seek(SeekFrom::Start(len.saturating_sub(ERRORS_KEPT))).is_ok() {
            let _ = file.take(ERRORS_KEPT).read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    !b.file_type().is_symlink()
}

#[cfg(unix)]
fn links(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

#[cfg(not(unix))]
fn links(_: &std::fs::Metadata) -> u64 {
    1
}

/// The processes other than this one that have `path` open, each as `process N (its command
/// line, or its name while it execs)`, where `/proc` tells (none elsewhere).
fn holders(path: &Path) -> Vec<String> {
    let Ok(target) = std::fs::canonicalize(path) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let own = std::process::id();
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // Another user's processes cannot be read, and cannot hold our file either.
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else { continue };
        if pid == own
            || !fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == target))
        {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let mut command = String::from_utf8_lossy(&cmdline).replace(['\0', '\n', '\r', '\t'], " ");
        if command.trim().is_empty() {
            // A process in the middle of exec has no arguments yet, but its name is set first.
            let comm = std::fs::read(entry.path().join("comm")).unwrap_or_default();
            command = String::from_utf8_lossy(&comm).replace(['\0', '\n', '\r', '\t'], " ");
        }
        let command: String =
            crate::format::without_controls(command.trim()).chars().take(200).collect();
        found.push(format!("process {pid} ({command})"));
    }
    found.sort();
    found
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The lock stays held while a process started with the lock file as its stderr lives,
    /// after the run dropped its own handle (a run killed alone), and the holders name it.
    #[test]
    fn a_child_holds_the_lock_after_its_run_and_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::take(dir.path(), dir.path()).unwrap();
        let mut child = std::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(lock.stderr().unwrap())
            .spawn()
            .unwrap();
        drop(lock);
        let path = dir.path().join(LOCK_FILE);
        let other = File::options().write(true).open(&path).unwrap();
        assert!(matches!(other.try_lock(), Err(std::fs::TryLockError::WouldBlock)));
        let found = holders(&path);
        assert_eq!(found, [format!("process {} (cat)", child.id())]);
        drop(child.stdin.take());
        child.wait().unwrap();
        other.try_lock().unwrap();
    }
}
