//! Turns at work that runs in the background for a root (the user layer's sync, a team push):
//! one process at a time holds a lock file in the root's `.mem/`; a process started while
//! another holds it leaves word (an empty file beside the lock) and returns, and the holder
//! runs once more before it lets go. So work asked for while it runs is never lost, and two
//! never run at once.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use crate::store::{self, Overwrite};
use crate::{Error, Result};

/// How [`Turns::take`] waits for another process that holds the lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Waits for it (up to 150 s), then runs: the command a user typed.
    Wait,
    /// Leaves word for it to run once more, and returns at once: the run a write started.
    Background,
}

/// How many times one process runs in a row for the runs asked meanwhile; word left after the
/// last is taken up by the next process started.
pub const MAX_RUNS: usize = 3;

/// How long [`Mode::Wait`] waits for another holder, in pauses of [`PAUSE`] (150 s).
const WAIT_PAUSES: u32 = 1500;

/// The pause between two tries at the lock.
const PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// A lock file and its word file in a root's `.mem/`: `NAME.lock`, `NAME.again`.
#[derive(Clone, Debug)]
pub struct Turns {
    lock: PathBuf,
    again: PathBuf,
}

/// The lock held: the work runs until [`Turn::again`] says it may stop.
#[derive(Debug)]
pub struct Turn {
    file: File,
    again: PathBuf,
}

impl Turns {
    /// The turns named `name` in the root `dir` (its `.mem/` made when missing).
    pub fn new(dir: &Path, name: &str) -> Result<Turns> {
        let state = store::state_dir(dir)?;
        Ok(Turns {
            lock: state.join(format!("{name}.lock")),
            again: state.join(format!("{name}.again")),
        })
    }

    /// The lock, taken as `mode` says: `None` when [`Mode::Background`] found it held (and
    /// left word for its holder to run once more). A wait past 150 s is an error naming the
    /// lock file.
    pub fn take(&self, mode: Mode) -> Result<Option<Turn>> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.lock)
            .map_err(|e| Error::io(&self.lock, e))?;
        let turn = |file| Turn { file, again: self.again.clone() };
        for _ in 0..WAIT_PAUSES {
            match file.try_lock() {
                Ok(()) => return Ok(Some(turn(file))),
                Err(TryLockError::WouldBlock) if mode == Mode::Background => {
                    store::write_atomic(&self.again, b"", Overwrite::Yes)?;
                    // Its holder may have let it go meanwhile, before it saw the word.
                    return Ok(file.try_lock().is_ok().then(|| turn(file)));
                }
                Err(TryLockError::WouldBlock) => std::thread::sleep(PAUSE),
                Err(TryLockError::Error(e)) => return Err(Error::io(&self.lock, e)),
            }
        }
        Err(Error::io(
            &self.lock,
            std::io::Error::other(
                "another process has held it for 150 s: try again when it is done",
            ),
        ))
    }

    /// Whether another process holds the lock: then it is left word to run once more (as
    /// [`Mode::Background`] does) and `true` says no process of its own is needed; `false` when
    /// none runs (or the lock cannot be opened): start one.
    pub fn leave_word_if_running(&self) -> bool {
        matches!(self.take(Mode::Background), Ok(None))
    }
}

impl Turn {
    /// Before a run: the word left so far is taken (this run does what it asked).
    pub fn begin(&self) {
        let _ = std::fs::remove_file(&self.again);
    }

    /// After a run: `true` when word was left meanwhile (the lock is still held: run again);
    /// `false` when the lock was let go.
    pub fn again(&self) -> bool {
        let asked = || std::fs::symlink_metadata(&self.again).is_ok();
        if asked() {
            return true;
        }
        // Word left between that look and the release finds the lock free, or is seen here.
        let _ = self.file.unlock();
        asked() && self.file.try_lock().is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_runner_leaves_word_and_the_holder_runs_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let turns = Turns::new(dir.path(), "work").unwrap();
        let again = dir.path().join(".mem/work.again");
        assert!(!turns.leave_word_if_running(), "none runs: start one");
        assert!(std::fs::symlink_metadata(&again).is_err(), "no word left when none runs");
        let held = turns.take(Mode::Wait).unwrap().expect("the lock is free");
        held.begin();
        assert!(turns.take(Mode::Background).unwrap().is_none(), "held: word left");
        assert!(std::fs::symlink_metadata(&again).is_ok());
        assert!(held.again(), "word was left: run once more, the lock still held");
        assert!(turns.leave_word_if_running());
        held.begin();
        assert!(!held.again(), "no word: the lock let go");
        assert!(!turns.leave_word_if_running(), "released: the next write starts one");
        drop(held);
    }
}
