//! [`Files`]: an open root's memory files, its settings and its index, with the lock that
//! makes writers take turns.

use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rayon::prelude::*;

use crate::config::Config;
use crate::format::{Memory, MemoryId, MemoryType};
use crate::index::synonyms::Thesaurus;
use crate::index::{MemoryIndex, Record, RefreshReport};
use crate::store;
use crate::{Error, Result};

use super::{Usage, parse_error};
use crate::tokenizer;

/// Age after which a temporary file of [`store::write_atomic`] is taken as left by an
/// interrupted write, in ns.
const LEFTOVER_AGE_NS: i128 = 60_000_000_000;

/// The temporary files of `leftovers` (path, mtime in ns) old enough to have been left by an
/// interrupted write: older than [`LEFTOVER_AGE_NS`] at `now`.
pub(super) fn stale_leftovers(
    leftovers: &[(String, i64)],
    now: Timestamp,
) -> impl Iterator<Item = &str> {
    let cutoff = now.as_nanosecond().saturating_sub(LEFTOVER_AGE_NS);
    leftovers
        .iter()
        .filter(move |(_, mtime_ns)| i128::from(*mtime_ns) < cutoff)
        .map(|(rel, _)| rel.as_str())
}

/// An open root's files, settings and index.
pub struct Files {
    pub(super) root: PathBuf,
    pub(super) state_dir: PathBuf,
    pub(super) config: Config,
    pub(super) index: MemoryIndex,
    pub(super) lock: File,
    pub(super) pending_notice: Option<String>,
    pub(super) thesaurus: Thesaurus,
    pub(super) warnings: Vec<String>,
    /// When each memory was last used, for ranking recency (see [`crate::usage::last_used`]).
    pub(super) last_used: crate::usage::last_used::LastUsed,
    /// The watch of the root's files, in a long-lived process (see [`Files::watch`]).
    pub(super) watch: Option<super::watch::Watch>,
}

impl Files {
    /// Opens the files of the memory root `root` (which must exist): its settings and its
    /// index, creating `.mem/` if needed.
    pub(super) fn open(root: &Path) -> Result<Files> {
        if root.is_file() {
            return Err(Error::RootIsFile(root.to_path_buf()));
        }
        if !root.is_dir() {
            return Err(Error::NoRoot(root.to_path_buf()));
        }
        let config = Config::load(root)?;
        let state_dir = store::state_dir(root)?;
        let lock_path = state_dir.join("lock");
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        let opened = MemoryIndex::open(&state_dir);
        lock.unlock().map_err(|e| Error::io(&lock_path, e))?;
        let (index, pending_notice) = opened?;
        let thesaurus = Thesaurus::new(&config.query.synonyms, &mut tokenizer::analyzer());
        Ok(Files {
            root: root.to_path_buf(),
            state_dir,
            index,
            lock,
            pending_notice,
            thesaurus,
            warnings: config.ignored_keys(),
            config,
            last_used: Default::default(),
            watch: None,
        })
    }

    /// Brings the index up to date with the files (see [`MemoryIndex::refresh`]), holding the
    /// root's lock so that concurrent processes take turns, then the last-use map that ranking
    /// reads with `usage`.
    pub fn refresh(
        &mut self,
        usage: &mut Usage,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = self.refresh_index(now, progress)?;
        report.warnings.extend(usage.refresh_last_used(self)?);
        Ok(report)
    }

    /// Throws the index away and builds it again from the files, then the last-use map.
    pub fn rebuild(
        &mut self,
        usage: &mut Usage,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = self.with_lock(|files| files.refresh_locked(now, progress, true))?;
        report.warnings.extend(usage.refresh_last_used(self)?);
        Ok(report)
    }

    /// Brings the index alone up to date with the files, under the root's lock: after an
    /// edit of the files, which changes no use.
    pub(super) fn refresh_index(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        self.with_lock(|files| files.refresh_locked(now, progress, false))
    }

    /// The memory root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What opening the root found that the user should fix (settings a root may not set),
    /// one line each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The root's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The path of an indexed memory's file, relative to the root; an error names the fix when
    /// the id is malformed, unknown or used twice.
    pub(crate) fn path_of(&self, id: &str) -> Result<String> {
        let id = MemoryId::new(id)?;
        let mut paths = self.index.paths_of(id.as_str())?;
        match paths.len() {
            0 => Err(Error::NotFound(id.to_string())),
            1 => Ok(paths.remove(0)),
            _ => Err(Error::DuplicateId {
                id: id.to_string(),
                paths: paths.into_iter().map(PathBuf::from).collect(),
            }),
        }
    }

    /// The index's counts by type and by month of creation (see [`crate::index::Tally`]).
    pub fn tally(&self) -> Result<crate::index::Tally> {
        self.index.tally()
    }

    /// The `n` most recently created memories' records, newest first.
    pub fn newest(&self, n: usize) -> Result<Vec<Record>> {
        self.index.newest(n)
    }

    /// The index's record of memory `id`, if one file holds it.
    pub fn record(&self, id: &str) -> Result<Option<Record>> {
        let mut found = self.index.records_of(id)?;
        Ok(if found.len() == 1 { found.pop() } else { None })
    }

    /// Runs `f` holding the root's lock (`.mem/lock`).
    pub(crate) fn with_lock<T>(&mut self, f: impl FnOnce(&mut Files) -> Result<T>) -> Result<T> {
        self.lock_root()?;
        let result = f(self);
        self.unlock_root()?;
        result
    }

    /// Takes the root's lock (`.mem/lock`), waiting for another writer to let it go.
    pub(super) fn lock_root(&self) -> Result<()> {
        let lock_path = self.state_dir.join("lock");
        self.lock.lock().map_err(|e| Error::io(&lock_path, e))
    }

    /// Lets the root's lock go.
    pub(super) fn unlock_root(&self) -> Result<()> {
        let lock_path = self.state_dir.join("lock");
        self.lock.unlock().map_err(|e| Error::io(&lock_path, e))
    }

    pub(super) fn refresh_locked(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
        rebuild: bool,
    ) -> Result<RefreshReport> {
        let mut notices: Vec<String> = self.pending_notice.take().into_iter().collect();
        if rebuild {
            self.index = MemoryIndex::create(&self.state_dir)?;
        } else {
            notices.extend(self.reopen_if_stale()?);
        }
        let max_file_bytes = self.config.limits.max_file_bytes;
        let started = super::fresh::wall_ns();
        let mut scan = store::scan(&self.root);
        let mut dirs = std::mem::take(&mut scan.dirs);
        let removed = self.remove_leftovers(&scan.leftovers, now);
        if removed > 0 {
            notices.push(format!(
                "removed {removed} temporary files ({}*) left by interrupted writes",
                store::TEMP_PREFIX
            ));
        }
        let all = crate::index::Scope::All;
        let known =
            if rebuild { Vec::new() } else { super::fresh::Folders::known_bad(&self.state_dir) };
        let reading = crate::index::Reading { max_file_bytes, known_bad: &known };
        let mut report = match self.index.refresh(&self.root, scan, all, reading, now, progress) {
            // The index is derived from the files: one that cannot be updated is rebuilt,
            // and nothing else under `.mem/` is touched.
            Err(Error::Index(e)) if !rebuild => {
                self.index = MemoryIndex::create(&self.state_dir)?;
                notices.push(format!(
                    "the index could not be updated ({e}); rebuilt it from the memory files"
                ));
                let mut scan = store::scan(&self.root);
                dirs = std::mem::take(&mut scan.dirs);
                let reading = crate::index::Reading { max_file_bytes, known_bad: &[] };
                self.index.refresh(&self.root, scan, all, reading, now, progress)?
            }
            result => result?,
        };
        report.notices.splice(0..0, notices);
        let version = self.index.version();
        super::fresh::Folders::after_full(version, started, dirs, &report).save(&self.state_dir)?;
        Ok(report)
    }

    /// Opens the index again when another process has committed since this one opened it;
    /// the notice when it had to be rebuilt.
    pub(super) fn reopen_if_stale(&mut self) -> Result<Option<String>> {
        if self.index.is_current() {
            return Ok(None);
        }
        let (index, notice) = MemoryIndex::open(&self.state_dir)?;
        self.index = index;
        Ok(notice)
    }

    /// Removes the temporary files of interrupted writes that are older than a minute (a
    /// write in progress takes far less); returns how many. Called under the lock.
    fn remove_leftovers(&self, leftovers: &[(String, i64)], now: Timestamp) -> usize {
        stale_leftovers(leftovers, now)
            .filter(|rel| std::fs::remove_file(self.root.join(rel)).is_ok())
            .count()
    }

    /// The memory with `id`, read from its file, with its path relative to the root. Call
    /// [`Files::refresh`] first so the index knows of recent files.
    pub fn get(&self, id: &str) -> Result<(String, Memory)> {
        let rel = self.path_of(id)?;
        let path = self.root.join(&rel);
        let bytes =
            store::read_limited(&path, self.config.limits.max_file_bytes).map_err(|e| match e {
                store::ReadError::Io(e) => Error::io(&path, e),
                store::ReadError::Format(source) => {
                    Error::Parse { path: rel.clone().into(), source }
                }
            })?;
        let memory = Memory::parse_bytes(&bytes)
            .map_err(|source| Error::Parse { path: rel.clone().into(), source })?;
        Ok((rel, memory))
    }

    /// Every indexed memory, read from its file, in path order (files that stopped parsing
    /// since the last refresh are left out; the refresh reports them).
    pub(crate) fn load_all(&self) -> Vec<(String, Memory)> {
        self.load_all_map(|rel, m| Some((rel, m)))
    }

    /// Every indexed memory read as [`Files::load_all`] reads it, turned into what `f` keeps
    /// of it (in parallel, so that only what is kept is ever held for all of them).
    pub(crate) fn load_all_map<T: Send>(
        &self,
        f: impl Fn(String, Memory) -> Option<T> + Sync,
    ) -> Vec<T> {
        let mut rels: Vec<String> = match self.index.manifest() {
            Ok(manifest) => manifest.files.keys().cloned().collect(),
            Err(_) => return Vec::new(),
        };
        rels.sort();
        let max = self.config.limits.max_file_bytes;
        let root = &self.root;
        rels.into_par_iter()
            .filter_map(|rel| {
                let bytes = store::read_limited(&root.join(&rel), max).ok()?;
                let memory = Memory::parse_bytes(&bytes).ok()?;
                f(rel, memory)
            })
            .collect()
    }

    /// Ids used by more than one indexed file, each with its paths.
    pub fn duplicates(&self) -> Vec<(String, Vec<String>)> {
        self.index.manifest().map(|m| m.duplicate_ids()).unwrap_or_default()
    }

    /// The text of the file at `rel` (relative to the root) with `change` applied (front-matter
    /// edits, a new body); a change the file's text does not allow is a parse error naming it.
    pub(crate) fn edited(
        &self,
        rel: &str,
        change: impl FnOnce(&str) -> std::result::Result<String, crate::format::FormatError>,
    ) -> Result<String> {
        let path = self.root.join(rel);
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        change(&text).map_err(parse_error(rel))
    }

    /// Rewrites the file at `rel` in place, atomically, with `change` applied (see
    /// [`Files::edited`]).
    pub(crate) fn rewrite(
        &self,
        rel: &str,
        change: impl FnOnce(&str) -> std::result::Result<String, crate::format::FormatError>,
    ) -> Result<()> {
        let path = store::inside_root(&self.root, rel)?;
        let text = self.edited(rel, change)?;
        store::write_atomic(&path, text.as_bytes(), store::Overwrite::Yes)
    }
}

impl Files {
    /// Indexed memories of the given types and tags, newest first.
    pub fn list(&self, kinds: &[MemoryType], tags: &[String]) -> Result<Vec<Record>> {
        let mut records = self.index.records(kinds, tags)?;
        // The last access ranking uses: the index's, or a later use in the usage files.
        for r in &mut records {
            let used = self.last_used.get(crate::format::id_key(&r.id));
            if let Some(at) = used.and_then(|s| Timestamp::from_second(s).ok()) {
                r.last_access = r.last_access.max(at);
            }
        }
        Ok(records)
    }

    /// Replaces the `[embed]` settings for this engine (the model folder stays the one it
    /// opened with); an error names the setting out of range.
    pub fn set_embed_config(
        &mut self,
        embed: crate::config::EmbedConfig,
    ) -> std::result::Result<(), crate::config::SettingError> {
        let mut config = self.config.clone();
        config.embed = embed;
        config.validate()?;
        self.config = config;
        Ok(())
    }
}

impl Files {
    /// The valid key memories (procedural and semantic), most important first, at most `n`.
    pub(super) fn key_memories(&self, n: usize, now: Timestamp) -> Result<Vec<Record>> {
        let mut key: Vec<Record> = self
            .list(&[MemoryType::Procedural, MemoryType::Semantic], &[])?
            .into_iter()
            .filter(|r| r.invalid_at.is_none_or(|at| at > now))
            .collect();
        key.sort_by(|a, b| {
            b.importance
                .cmp(&a.importance)
                .then(b.last_access.cmp(&a.last_access))
                .then(a.id.cmp(&b.id))
        });
        key.truncate(n);
        Ok(key)
    }

    /// The `n` most recent captured sessions not in `shown`.
    pub(super) fn recent_sessions(
        &self,
        n: usize,
        shown: &[String],
        now: Timestamp,
    ) -> Result<Vec<Record>> {
        let mut sessions: Vec<Record> = self
            .list(&[MemoryType::Episodic], &[])?
            .into_iter()
            .filter(|r| {
                r.source.as_deref().is_some_and(|s| s.starts_with(crate::capture::SESSION_SOURCE))
            })
            .filter(|r| r.invalid_at.is_none_or(|at| at > now) && r.created <= now)
            .filter(|r| !shown.contains(&r.id))
            .collect();
        sessions.sort_by(|a, b| b.created.cmp(&a.created).then(a.id.cmp(&b.id)));
        sessions.truncate(n);
        Ok(sessions)
    }
}
