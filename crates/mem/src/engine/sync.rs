//! Usage: `used` events, the sync that appends the usage log to this machine's file in
//! `usage/` (moving old `access:` lines there too), and the usage state that all the usage
//! files, with the events not yet synced, give a memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use serde::Serialize;

use super::Files;
use crate::Result;
use crate::decay::{Basis, Reinforcement, State};
use crate::format::{Access, Memory, edit_front_matter};
use crate::usage::{UsageLog, shared};

/// What `mem sync` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SyncReport {
    /// This machine's usage file, relative to the root (`usage/<machine>.tsv`); empty while
    /// this machine has written none.
    pub usage_file: String,
    /// Events appended to it.
    pub events: usize,
    /// Memory files whose `access:` line was moved into it (rewritten).
    pub files: usize,
    /// Interrupted syncs of an older `mem` found complete and settled.
    pub recovered: usize,
    /// Files that could not be migrated, each with the reason; their `access:` line is still
    /// read where it is.
    pub failed: Vec<String>,
}

/// Everything known about a root's usage: its usage files and this machine's events not yet
/// written to them.
#[derive(Clone, Debug, Default)]
pub struct UsageView {
    /// When usage observation began for the root (`None`: not yet).
    pub since: Option<Timestamp>,
    bases: HashMap<String, Access>,
    events: HashMap<String, Vec<Reinforcement>>,
    /// The last confirmation of each confirmed memory's citations, by id.
    pub confirmed: HashMap<String, Timestamp>,
    /// Lines of the usage files that could not be read.
    pub problems: Vec<String>,
    /// Usage files that were not read, each `path: reason` (see `usage::shared::load`).
    pub skipped: Vec<String>,
}

impl UsageView {
    /// A memory's usage state: its `access:` line or moved summary, then every event in time
    /// order (the same on every machine that has the same files).
    pub fn state(&self, memory: &Memory, decay: &crate::decay::DecayConfig) -> State {
        self.state_of(memory.id().as_str(), &Basis::of(memory), decay)
    }

    /// [`UsageView::state`] of the memory `id` whose file gives `basis` (as the index keeps it).
    pub fn state_of(&self, id: &str, basis: &Basis, decay: &crate::decay::DecayConfig) -> State {
        let (state, events) = self.history_of(id, basis, decay);
        events.into_iter().fold(state, State::fold)
    }

    /// What [`UsageView::state`] folds: the state its `access:` line or moved summary gives,
    /// and the events after it in time order (for a chart of its retention over time).
    pub fn history(
        &self,
        memory: &Memory,
        decay: &crate::decay::DecayConfig,
    ) -> (State, Vec<Reinforcement>) {
        self.history_of(memory.id().as_str(), &Basis::of(memory), decay)
    }

    /// [`UsageView::history`] of the memory `id` whose file gives `basis`.
    fn history_of(
        &self,
        id: &str,
        basis: &Basis,
        decay: &crate::decay::DecayConfig,
    ) -> (State, Vec<Reinforcement>) {
        let access = match (basis.access, self.bases.get(id)) {
            (Some(a), Some(&b)) => Some(shared::larger(a, b)),
            (a, b) => a.or(b.copied()),
        };
        let state = State::of_basis(&Basis { access, ..*basis }, decay);
        let mut events = self.events.get(id).cloned().unwrap_or_default();
        events.sort_by_key(|e| match *e {
            Reinforcement::Used { at } => (at, 0),
            Reinforcement::Retrieved { at, rank } => (at, rank),
        });
        (state, events)
    }
}

impl UsageView {
    /// How many times each memory was used, by id, as the usage knows it: its moved summary's
    /// count and each `used` event since (a count in a file's own `access:` line is not here).
    pub fn use_counts(&self) -> HashMap<String, u64> {
        let mut counts: HashMap<String, u64> =
            self.bases.iter().map(|(id, a)| (id.clone(), a.count)).collect();
        for (id, events) in &self.events {
            let used = events.iter().filter(|e| matches!(e, Reinforcement::Used { .. })).count();
            *counts.entry(id.clone()).or_default() += used as u64;
        }
        counts.retain(|_, n| *n > 0);
        counts
    }

    /// Every use of a memory the usage knows of, as (id, time): each `used` event, and the
    /// last reinforcement of a moved `access:` line that counts uses. Retrievals are left out.
    pub fn uses(&self) -> Vec<(String, Timestamp)> {
        let mut uses: Vec<(String, Timestamp)> = self
            .bases
            .iter()
            .filter(|(_, a)| a.count > 0)
            .filter_map(|(id, a)| Some((id.clone(), a.last?)))
            .collect();
        for (id, events) in &self.events {
            for event in events {
                if let Reinforcement::Used { at } = event {
                    uses.push((id.clone(), *at));
                }
            }
        }
        uses
    }
}

/// The root's usage: this machine's usage log (`.mem/usage.db`, opened on first use) and the
/// usage files of every machine in `usage/`, which it syncs to.
pub struct Usage {
    log: Option<UsageLog>,
    /// Where the usage log is.
    path: PathBuf,
    /// How long a write waits for another process's.
    busy: Duration,
}

impl Usage {
    /// The usage of the root whose state folder is `state_dir`; nothing is opened yet.
    pub(super) fn new(state_dir: &Path, busy: Duration) -> Usage {
        Usage { log: None, path: state_dir.join(crate::usage::FILE), busy }
    }

    /// The usage log, opened (created if needed) on first use.
    pub(crate) fn log(&mut self) -> Result<&mut UsageLog> {
        if self.log.is_none() {
            self.log = Some(UsageLog::open(&self.path, self.busy)?);
        }
        Ok(self.log.as_mut().expect("opened above"))
    }

    /// Brings the last-use map that ranking recency reads up to date: the cached one when the
    /// usage files have not changed since it was computed, else computed again from them and
    /// the usage log, and cached. Returns a warning per usage file that was not read (not a
    /// regular file, a link out of `usage/`, too large); the map is then not cached, so that
    /// each command says so until the file is fixed.
    pub(super) fn refresh_last_used(&mut self, files: &mut Files) -> Result<Vec<String>> {
        use crate::usage::last_used::{self, LastUsed};
        let stamp = last_used::stamps(&files.root);
        let cached = LastUsed::load(&files.state_dir).filter(|c| c.is_for(&stamp));
        let mut warnings = Vec::new();
        files.last_used = match cached {
            Some(map) => map,
            None => {
                let view = self.view(files)?;
                let map = LastUsed::new(stamp, view.uses())
                    .with_confirmed(view.confirmed.iter().map(|(id, at)| (id.as_str(), *at)));
                if view.skipped.is_empty() {
                    map.save(&files.state_dir)?;
                }
                warnings = view
                    .skipped
                    .into_iter()
                    .map(|file| format!("usage file not read (skipped): {file}"))
                    .collect();
                map
            }
        };
        Ok(warnings)
    }

    /// Records that the memories `ids` helped (one `used` event each, one transaction) and,
    /// unless `[usage] sync` is off or `sync` is false, syncs (see [`Usage::sync`]; only
    /// these ids' `access:` lines are moved). Unknown ids are an error and nothing is recorded.
    pub fn used(
        &mut self,
        files: &mut Files,
        ids: &[String],
        now: Timestamp,
        sync: bool,
    ) -> Result<(Vec<String>, SyncReport)> {
        let mut paths = Vec::with_capacity(ids.len());
        for id in ids {
            paths.push(files.path_of(id)?);
        }
        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.log()?.record_used(&refs, now)?;
        // Their last use changed: the next recall computes the map again.
        crate::usage::last_used::invalidate(&files.state_dir)?;
        let mut report = SyncReport::default();
        if sync && files.config.usage.sync {
            let targets: Vec<(String, Memory)> = files
                .load_all()
                .into_iter()
                .filter(|(_, m)| ids.contains(&m.id().to_string()))
                .collect();
            report = self.sync_locked_in(files, now, targets)?;
            if report.files > 0 {
                files.refresh(self, now, &crate::progress::Silent)?;
            }
        }
        Ok((paths, report))
    }

    /// Appends every event of the usage log not yet written to this machine's usage file
    /// (`usage/<machine>.tsv`, created with the time observation began), then moves each
    /// memory's `access:` line, if it has one, into that file. Never on recall: recall only
    /// records in `.mem/usage.db`.
    pub fn sync(&mut self, files: &mut Files, now: Timestamp) -> Result<SyncReport> {
        let all = files.load_all();
        self.sync_locked_in(files, now, all)
    }

    /// [`Usage::sync_locked`] under the root's lock.
    fn sync_locked_in(
        &mut self,
        files: &mut Files,
        now: Timestamp,
        migrate: Vec<(String, Memory)>,
    ) -> Result<SyncReport> {
        files.lock_root()?;
        let report = self.sync_locked(files, now, migrate);
        files.unlock_root()?;
        report
    }

    /// Starts observing usage for the root now, unless it already has a usage file: `mem init`.
    pub fn start_observing(&mut self, files: &Files, now: Timestamp) -> Result<()> {
        if shared::load(&files.root)?.since.is_some() {
            return Ok(());
        }
        let machine = self.log()?.machine(now)?;
        shared::append(&shared::file_of(&files.root, &machine), now, "")
    }

    fn sync_locked(
        &mut self,
        files: &Files,
        now: Timestamp,
        migrate: Vec<(String, Memory)>,
    ) -> Result<SyncReport> {
        let recovered = self.recover_pending(files)?;
        // The machine's name (its file's) is chosen by the first sync that writes a line.
        let known = self.log()?.machine_name()?;
        let written = match &known {
            Some(machine) => shared::last_seq(&shared::file_of(&files.root, machine))?,
            None => 0,
        };
        let events = self.log()?.events_after(written)?;
        let moved: Vec<(String, Memory)> =
            migrate.into_iter().filter(|(_, m)| m.access().is_some()).collect();
        let mut lines = String::new();
        for (_, memory) in &moved {
            let access = memory.access().expect("filtered above");
            lines.push_str(&shared::base_line(memory.id().as_str(), &access));
        }
        for (seq, id, event) in &events {
            lines.push_str(&shared::event_line(*seq, id, event));
        }
        let file_name = |machine: &str| format!("{}/{machine}.{}", shared::DIR, shared::EXT);
        let mut report = SyncReport {
            usage_file: known.as_deref().map(file_name).unwrap_or_default(),
            recovered,
            ..SyncReport::default()
        };
        if lines.is_empty() {
            return Ok(report);
        }
        let machine = match known {
            Some(machine) => machine,
            None => self.log()?.machine(now)?,
        };
        report.usage_file = file_name(&machine);
        crate::store::inside_root(&files.root, &report.usage_file)?;
        let path = shared::file_of(&files.root, &machine);
        let since = self.log()?.first_event_at()?.unwrap_or(now).min(now);
        shared::append(&path, since, &lines)?;
        report.events = events.len();
        // The summaries are in the usage file now; a crash before a line goes leaves it in
        // both places, which read as one (the larger summary counts).
        for (rel, _) in moved {
            match files.rewrite(&rel, |text| edit_front_matter(text, &[("access", None)])) {
                Ok(()) => report.files += 1,
                Err(e) => report.failed.push(e.to_string()),
            }
        }
        Ok(report)
    }

    /// An older `mem` rewrote `access:` lines; a crash between writing a file and moving its
    /// watermark left a pending row, and the file's content tells which side it stopped on.
    fn recover_pending(&mut self, files: &Files) -> Result<usize> {
        let pending = self.log()?.pending()?;
        let mut recovered = 0;
        for (id, seq, hash) in pending {
            let written = files
                .path_of(&id)
                .ok()
                .and_then(|rel| std::fs::read(files.root.join(rel)).ok())
                .is_some_and(|bytes| crate::index::content_hash(&bytes)[..] == hash[..]);
            let log = self.log()?;
            if written {
                log.finish_sync(&id, seq)?;
                recovered += 1;
            } else {
                log.discard_pending(&id)?;
            }
        }
        Ok(recovered)
    }

    /// The root's usage: every usage file, and this machine's events not yet written to its
    /// own. Read by prune and `mem show`, never by recall; it writes nothing (the machine's
    /// name is chosen by the first sync that writes its file).
    pub fn view(&mut self, files: &Files) -> Result<UsageView> {
        let shared_files = shared::load(&files.root)?;
        let mut view = UsageView {
            since: shared_files.since,
            bases: shared_files.bases,
            events: shared_files.events,
            confirmed: shared_files.confirmed,
            problems: shared_files.problems,
            skipped: shared_files.skipped,
        };
        if self.log.is_none() && !self.path.exists() {
            return Ok(view); // no usage recorded on this machine (and none created for a look)
        }
        let written = match self.log()?.machine_name()? {
            Some(machine) => shared::last_seq(&shared::file_of(&files.root, &machine))?,
            None => 0,
        };
        let log = self.log()?;
        if let Some(first) = log.first_event_at()? {
            view.since = Some(view.since.map_or(first, |s| s.min(first)));
        }
        for (_, id, event) in log.events_after(written)? {
            view.events.entry(id).or_default().push(event);
        }
        Ok(view)
    }

    /// Records that the memory `id` was checked and found right: its citations count from
    /// `now` on. A usage event in this machine's usage file (`confirmed`), written at once, so
    /// that it survives `.mem/` and travels with the root.
    pub fn confirm(&mut self, files: &mut Files, id: &str, now: Timestamp) -> Result<()> {
        files.path_of(id)?;
        let machine = self.log()?.machine(now)?;
        let since = self.log()?.first_event_at()?.unwrap_or(now).min(now);
        let file = crate::usage::shared::file_of(&files.root, &machine);
        crate::usage::shared::append(&file, since, &crate::usage::shared::confirm_line(id, now))?;
        crate::usage::last_used::invalidate(&files.state_dir)?;
        self.refresh_last_used(files)?;
        Ok(())
    }
}
