//! The engine: one memory root, its settings and its index, behind the operations every front
//! end (the CLI today) calls. It never prints and never reads the clock: `now` is an argument.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use crate::config::Config;
use crate::format::{Memory, MemoryId, MemoryType, NewMemory};
use crate::index::synonyms::{self, Thesaurus};
use crate::index::{Hit, MemoryIndex, Record, RefreshReport, Search, tokenizer};
use crate::store::{self, Overwrite, STATE_DIR};
use crate::{Error, Result};

/// An open memory root.
pub struct Engine {
    root: PathBuf,
    state_dir: PathBuf,
    config: Config,
    index: MemoryIndex,
    lock: File,
    pending_notice: Option<String>,
    thesaurus: Thesaurus,
}

/// What recall is asked for.
#[derive(Clone, Debug, Default)]
pub struct RecallOptions {
    /// Keep only these types (all when empty).
    pub kinds: Vec<MemoryType>,
    /// Keep only memories with all of these tags.
    pub tags: Vec<String>,
    /// How many memories at most.
    pub limit: usize,
}

/// A memory file written by [`Engine::add`].
#[derive(Clone, Debug, Serialize)]
pub struct Added {
    /// Its new id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
}

/// Counts for `mem stats`.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// The memory root.
    pub root: PathBuf,
    /// Indexed memories.
    pub memories: usize,
    /// Indexed memories by type.
    pub by_type: BTreeMap<MemoryType, usize>,
    /// Bytes of `.mem/` used by the index.
    pub index_bytes: u64,
    /// Files that could not be indexed.
    pub bad_files: usize,
    /// Ids used by more than one file.
    pub duplicate_ids: usize,
}

impl Engine {
    /// Opens the memory root `root` (which must exist), creating `.mem/` if needed.
    pub fn open(root: &Path) -> Result<Engine> {
        if !root.is_dir() {
            return Err(Error::NoRoot(root.to_path_buf()));
        }
        let config = Config::load(root)?;
        let state_dir = root.join(STATE_DIR);
        std::fs::create_dir_all(&state_dir).map_err(|e| Error::io(&state_dir, e))?;
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
        Ok(Engine {
            root: root.to_path_buf(),
            state_dir,
            config,
            index,
            lock,
            pending_notice,
            thesaurus,
        })
    }

    /// The memory root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Brings the index up to date with the files (see [`MemoryIndex::refresh`]), holding the
    /// root's lock so that concurrent processes take turns.
    pub fn refresh(
        &mut self,
        now: Timestamp,
        progress: &indicatif::ProgressBar,
    ) -> Result<RefreshReport> {
        self.with_lock(|engine| engine.refresh_locked(now, progress, false))
    }

    /// Throws the index away and builds it again from the files.
    pub fn rebuild(
        &mut self,
        now: Timestamp,
        progress: &indicatif::ProgressBar,
    ) -> Result<RefreshReport> {
        self.with_lock(|engine| engine.refresh_locked(now, progress, true))
    }

    fn with_lock<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        let lock_path = self.state_dir.join("lock");
        self.lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        let result = f(self);
        self.lock.unlock().map_err(|e| Error::io(&lock_path, e))?;
        result
    }

    fn refresh_locked(
        &mut self,
        now: Timestamp,
        progress: &indicatif::ProgressBar,
        rebuild: bool,
    ) -> Result<RefreshReport> {
        let mut notices: Vec<String> = self.pending_notice.take().into_iter().collect();
        if rebuild {
            self.index = MemoryIndex::create(&self.state_dir)?;
        } else if !self.index.is_current() {
            // Another process has committed since this one opened the index.
            let (index, notice) = MemoryIndex::open(&self.state_dir)?;
            self.index = index;
            notices.extend(notice);
        }
        let scan = store::scan(&self.root);
        let mut report = self.index.refresh(
            &self.root,
            scan,
            self.config.limits.max_file_bytes,
            now,
            progress,
        )?;
        report.notices.splice(0..0, notices);
        Ok(report)
    }

    /// Refreshes the index, then ranks the memories matching `query`. A corrupt index is
    /// rebuilt once (with a notice in the report) before giving up.
    pub fn recall(
        &mut self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        progress: &indicatif::ProgressBar,
    ) -> Result<(Vec<Hit>, RefreshReport)> {
        let mut report = self.refresh(now, progress)?;
        match self.search(query, options, now) {
            Err(Error::Index(e)) => {
                let mut rebuilt = self.rebuild(now, progress)?;
                rebuilt.notices.insert(
                    0,
                    format!(
                        "the index could not be searched ({e}); rebuilt it from the memory files"
                    ),
                );
                rebuilt.notices.extend(std::mem::take(&mut report.notices));
                Ok((self.search(query, options, now)?, rebuilt))
            }
            result => Ok((result?, report)),
        }
    }

    fn search(&self, query: &str, options: &RecallOptions, now: Timestamp) -> Result<Vec<Hit>> {
        let search = || {
            self.index.search(&Search {
                text: query,
                kinds: &options.kinds,
                tags: &options.tags,
                limit: options.limit,
                now,
                ranking: &self.config.ranking,
                thesaurus: &self.thesaurus,
                expansion_weight: self.config.query.expansion_weight,
            })
        };
        // A damaged segment can make tantivy panic; that is an index error, cured by a rebuild.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(search)).unwrap_or_else(|panic| {
            Err(Error::Index(tantivy::TantivyError::InternalError(crate::index::panic_message(
                &panic,
            ))))
        })
    }

    /// The synonyms a query is expanded with (empty when expansion is off).
    pub fn expansions(&self, query: &str) -> Vec<String> {
        if self.config.query.expansion_weight <= 0.0 {
            return Vec::new();
        }
        let tokens = synonyms::tokens(&mut tokenizer::analyzer(), query);
        self.thesaurus.expand(&tokens).into_iter().collect()
    }

    /// Writes a new memory file `<id>.md` at the top of the root, atomically; never replaces a
    /// file. The index picks it up on its next refresh.
    pub fn add(&self, new: NewMemory, now: Timestamp) -> Result<Added> {
        let memory = Memory::create(new, now)?;
        let rel = format!("{}.md", memory.id());
        store::write_atomic(&self.root.join(&rel), memory.render().as_bytes(), Overwrite::No)?;
        Ok(Added { id: memory.id().to_string(), path: rel })
    }

    /// The memory with `id`, read from its file, with its path relative to the root. Call
    /// [`Engine::refresh`] first so the index knows of recent files.
    pub fn get(&self, id: &str) -> Result<(String, Memory)> {
        let id = MemoryId::new(id)?;
        let mut paths = self.index.paths_of(id.as_str());
        let rel = match paths.len() {
            0 => return Err(Error::NotFound(id.to_string())),
            1 => paths.remove(0),
            _ => {
                return Err(Error::DuplicateId {
                    id: id.to_string(),
                    paths: paths.into_iter().map(PathBuf::from).collect(),
                });
            }
        };
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

    /// Indexed memories of the given types and tags, newest first.
    pub fn list(&self, kinds: &[MemoryType], tags: &[String]) -> Result<Vec<Record>> {
        self.index.records(kinds, tags)
    }

    /// Ids used by more than one indexed file, each with its paths.
    pub fn duplicates(&self) -> Vec<(String, Vec<String>)> {
        self.index.manifest().duplicate_ids()
    }

    /// Counts of what is indexed; `report` is the refresh that preceded it.
    pub fn stats(&self, report: &RefreshReport) -> Result<Stats> {
        let mut by_type: BTreeMap<MemoryType, usize> =
            MemoryType::ALL.into_iter().map(|t| (t, 0)).collect();
        for record in self.index.records(&[], &[])? {
            *by_type.entry(record.kind).or_default() += 1;
        }
        Ok(Stats {
            root: self.root.clone(),
            memories: self.index.len(),
            by_type,
            index_bytes: self.index.size_on_disk(),
            bad_files: report.bad.len() + report.scan_issues.len(),
            duplicate_ids: self.duplicates().len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    fn note(text: &str) -> NewMemory {
        NewMemory {
            text: text.into(),
            kind: MemoryType::Semantic,
            importance: 5,
            tags: vec![],
            title: None,
            source: None,
        }
    }

    #[test]
    fn an_open_engine_sees_another_process_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let hidden = indicatif::ProgressBar::hidden();
        let mut first = Engine::open(dir.path()).unwrap();
        first.add(note("alpha"), now()).unwrap();
        assert_eq!(first.refresh(now(), &hidden).unwrap().added, 1);

        let mut second = Engine::open(dir.path()).unwrap();
        second.rebuild(now(), &hidden).unwrap();
        second.add(note("beta"), now()).unwrap();
        second.refresh(now(), &hidden).unwrap();

        // The rebuilt index restarts its generations; the first engine must still reload.
        let report = first.refresh(now(), &hidden).unwrap();
        assert_eq!(report.added, 0, "the other process already indexed beta");
        assert_eq!(first.list(&[], &[]).unwrap().len(), 2);
    }
}
