//! Watching a root for changes, for a long-lived process (`mem mcp`): the operating system
//! reports what changed (inotify, FSEvents, ReadDirectoryChangesW, through `notify`), so a
//! request that finds nothing reported touches no file at all. Events under `.mem/` are the
//! index's own and are ignored.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use notify::{RecursiveMode, Watcher};

use crate::store::STATE_DIR;

/// A running watch of one root.
pub(super) struct Watch {
    _watcher: notify::RecommendedWatcher,
    seen: Arc<Mutex<Seen>>,
    /// When the root was last checked by folders (wall clock, ns), for the full-check bound.
    pub(super) checked_ns: i64,
}

/// What the watcher reported since it was last asked.
#[derive(Debug, Default)]
pub(super) struct Seen {
    /// Paths reported changed (files or folders), absolute.
    pub(super) paths: Vec<PathBuf>,
    /// Events were lost or the watcher failed: only a check of the folders can tell.
    pub(super) rescan: bool,
}

impl Seen {
    /// Whether nothing was reported.
    pub(super) fn is_empty(&self) -> bool {
        self.paths.is_empty() && !self.rescan
    }
}

impl Watch {
    /// Starts watching `root` and everything below it; the reason when the system refuses
    /// (no inotify watches left, say).
    pub(super) fn start(root: &Path, checked_ns: i64) -> Result<Watch, String> {
        // The files may have changed while nothing watched: the first request checks them.
        let seen = Arc::new(Mutex::new(Seen { paths: Vec::new(), rescan: true }));
        let sink = Arc::clone(&seen);
        let state = root.join(STATE_DIR);
        let handler = move |event: notify::Result<notify::Event>| {
            let mut seen = sink.lock().unwrap_or_else(PoisonError::into_inner);
            match event {
                Ok(event) => {
                    seen.rescan |= event.need_rescan();
                    seen.paths.extend(event.paths.into_iter().filter(|p| !p.starts_with(&state)));
                }
                Err(_) => seen.rescan = true,
            }
        };
        let mut watcher = notify::recommended_watcher(handler).map_err(|e| e.to_string())?;
        watcher.watch(root, RecursiveMode::Recursive).map_err(|e| e.to_string())?;
        Ok(Watch { _watcher: watcher, seen, checked_ns })
    }

    /// What was reported since the last call, and forgets it.
    pub(super) fn take(&self) -> Seen {
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
