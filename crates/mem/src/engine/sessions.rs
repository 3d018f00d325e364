//! [`Sessions`]: the root's session log (`.mem/sessions.db`), opened on first use.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::Result;
use crate::session::SessionLog;

/// The root's session log: the sessions captured into it, their events and the ledger of what
/// the context hooks sent.
pub struct Sessions {
    log: Option<SessionLog>,
    /// Where the session log is.
    path: PathBuf,
    /// How long a write waits for another process's.
    busy: Duration,
}

impl Sessions {
    /// The session log of the root whose state folder is `state_dir`; nothing is opened yet.
    pub(super) fn new(state_dir: &Path, busy: Duration) -> Sessions {
        Sessions { log: None, path: state_dir.join(crate::session::FILE), busy }
    }

    /// The session log, opened (created if needed) on first use.
    pub(crate) fn log(&mut self) -> Result<&mut SessionLog> {
        if self.log.is_none() {
            self.log = Some(SessionLog::open(&self.path, self.busy)?);
        }
        Ok(self.log.as_mut().expect("opened above"))
    }

    /// The session log when the root has one (`None` before the first capture): for readers,
    /// which must not create it.
    pub fn existing(&mut self) -> Result<Option<&mut SessionLog>> {
        if self.log.is_none() && !self.path.exists() {
            return Ok(None);
        }
        self.log().map(Some)
    }

    /// Whether the session log exists (a capture made it).
    pub fn exists(&self) -> bool {
        self.log.is_some() || self.path.exists()
    }

    /// Whether the statements of the session the digest `memory` tells of were taken as fact
    /// memories (this root's session log says so; not when it cannot be read).
    pub(super) fn facts_taken(&mut self, memory: &crate::format::Memory) -> bool {
        let source = memory.source().and_then(|s| s.strip_prefix(crate::capture::SESSION_SOURCE));
        let Some(session) = source else { return false };
        self.log().and_then(|log| log.facts_of(session)).is_ok_and(|f| !f.is_empty())
    }
}
