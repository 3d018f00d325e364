//! Usage: `used` events and the sync that folds the usage log into the files' `access:` line.

use jiff::Timestamp;
use serde::Serialize;

use super::Engine;
use crate::decay::State;
use crate::format::{Memory, edit_front_matter};
use crate::store::{self, Overwrite};
use crate::{Error, Result};

/// What `mem sync` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    /// Memory files rewritten.
    pub files: usize,
    /// Events folded into them.
    pub events: usize,
    /// Interrupted syncs found complete and settled.
    pub recovered: usize,
    /// Ids with events but no memory file (deleted or archived); their events are kept.
    pub unknown_ids: Vec<String>,
    /// Files that could not be synced, each with the reason; their events are kept.
    pub failed: Vec<String>,
}

impl Engine {
    /// Records that the memories `ids` helped (one `used` event each, one transaction) and,
    /// unless `[usage] sync` is off or `sync` is false, writes their usage into their files.
    /// Unknown ids are an error and nothing is recorded.
    /// The events are recorded first; a file that then cannot be synced is reported in the
    /// returned [`SyncReport`] (its events wait in the log for the next sync).
    pub fn used(
        &mut self,
        ids: &[String],
        now: Timestamp,
        sync: bool,
    ) -> Result<(Vec<String>, SyncReport)> {
        let mut paths = Vec::with_capacity(ids.len());
        for id in ids {
            paths.push(self.path_of(id)?);
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.usage()?.record_used(&refs, now)?;
        let mut report = SyncReport::default();
        if sync && self.config.usage.sync {
            report = self.with_lock(|engine| {
                let recovered = engine.recover_pending()?;
                let mut report = engine.sync_ids(ids)?;
                report.recovered = recovered;
                Ok(report)
            })?;
            if report.files > 0 {
                // The index learns of the new `access:` lines now (`mem health` compares).
                self.refresh(now, &crate::progress::Silent)?;
            }
        }
        Ok((paths, report))
    }

    /// Folds every unsynced usage event into its memory's `access:` front-matter, one file at
    /// a time, each written atomically; finishes first what an interrupted sync left.
    pub fn sync(&mut self) -> Result<SyncReport> {
        self.with_lock(|engine| {
            let recovered = engine.recover_pending()?;
            let ids = engine.usage()?.unsynced_ids()?;
            let mut report = engine.sync_ids(&ids)?;
            report.recovered = recovered;
            Ok(report)
        })
    }

    /// Sync settles on: a crash between writing a file and moving its watermark left a pending
    /// row; the file's content tells which side of the write it stopped on.
    fn recover_pending(&mut self) -> Result<usize> {
        let pending = self.usage()?.pending()?;
        let mut recovered = 0;
        for (id, seq, hash) in pending {
            let written = self
                .path_of(&id)
                .ok()
                .and_then(|rel| std::fs::read(self.root.join(rel)).ok())
                .is_some_and(|bytes| crate::index::content_hash(&bytes)[..] == hash[..]);
            let log = self.usage()?;
            if written {
                log.finish_sync(&id, seq)?;
                recovered += 1;
            } else {
                log.discard_pending(&id)?;
            }
        }
        Ok(recovered)
    }

    /// Syncs each id in turn; a file that cannot be read, parsed or written is reported and
    /// the others go on. Errors of the usage log itself stop the sync.
    fn sync_ids(&mut self, ids: &[String]) -> Result<SyncReport> {
        let mut report = SyncReport::default();
        self.usage()?.durable()?;
        for id in ids {
            let rel = match self.path_of(id) {
                Ok(rel) => rel,
                Err(Error::NotFound(_)) => {
                    report.unknown_ids.push(id.clone());
                    continue;
                }
                Err(e) => {
                    report.failed.push(e.to_string());
                    continue;
                }
            };
            match self.sync_one(id, &rel) {
                Ok(Some(events)) => {
                    report.files += 1;
                    report.events += events;
                }
                Ok(None) => {}
                Err(e @ Error::Usage { .. }) => return Err(e),
                Err(e) => report.failed.push(e.to_string()),
            }
        }
        Ok(report)
    }

    /// Folds `id`'s unsynced events into its file at `rel`; the number of events folded, or
    /// `None` when there were none.
    fn sync_one(&mut self, id: &str, rel: &str) -> Result<Option<usize>> {
        {
            let path = store::inside_root(&self.root, rel)?;
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let memory =
                Memory::parse(&text).map_err(|source| Error::Parse { path: rel.into(), source })?;
            let unsynced = self.usage()?.unsynced(id)?;
            if unsynced.events.is_empty() {
                return Ok(None);
            }
            let state = unsynced
                .events
                .iter()
                .fold(State::of(&memory), |state, event| state.fold(memory.importance(), *event));
            let edited = edit_front_matter(&text, &[("access", Some(state.access().to_yaml()))])
                .map_err(|source| Error::Parse { path: rel.into(), source })?;
            let hash = crate::index::content_hash(edited.as_bytes());
            self.usage()?.begin_sync(id, unsynced.last_seq, &hash)?;
            store::write_atomic(&path, edited.as_bytes(), Overwrite::Yes)?;
            self.usage()?.finish_sync(id, unsynced.last_seq)?;
            Ok(Some(unsynced.events.len()))
        }
    }

    /// A memory's usage state now: what its file says, with the events not yet synced folded in.
    pub fn state_of(&mut self, memory: &Memory) -> Result<State> {
        let unsynced = self.usage()?.unsynced(memory.id().as_str())?;
        let initial = State::of(memory);
        Ok(unsynced.events.iter().fold(initial, |s, e| s.fold(memory.importance(), *e)))
    }
}
