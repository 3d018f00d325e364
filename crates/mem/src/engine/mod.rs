//! The engine: one memory root, its settings and its index, behind the operations every front
//! end (the command line, the MCP server, the served hooks, the page) calls. It never prints
//! and never reads the clock: `now` is an argument.

use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rayon::prelude::*;

use crate::config::Config;
use crate::embed::ModelOverrides;
use crate::format::{Memory, MemoryId, MemoryType};
use crate::index::synonyms::Thesaurus;
use crate::index::{MemoryIndex, Record, RefreshReport};
use crate::store;
use crate::tokenizer;
use crate::usage::{self, UsageLog};
use crate::{Error, Result};

mod admit;
mod capture;
mod cites;
mod context;
mod edit;
mod facts;
mod fresh;
mod health;
mod held;
mod layers;
mod model;
mod native;
mod recall;
mod reflect;
mod resolve;
mod secrets;
mod semantic;
mod sync;
mod watch;

pub use self::admit::{Added, Admission, OnSimilar, Remembered, Similar};
pub use self::cites::{Verified, states_how_things_are};
pub use self::context::{ContextOptions, SessionContext};
pub use self::edit::{Archived, Forgotten};
pub use self::health::{CodeCheck, Health, InterruptedMove, Stats, UsageCheck};
pub use self::layers::{LayeredRecall, Layers, merge};
pub use self::model::Model;
pub use self::native::{
    Adopted, NATIVE_DIR, index_native, native_file, native_folder, native_type,
};
pub use self::recall::{DEFAULT_MIN_STRENGTH, Recall, RecallOptions};
pub use self::reflect::{
    Proposal, REFLECTIONS_DIR, ReflectOptions, ReflectReport, SUMMARY_PROMPT, SourceRef, Summarize,
    Written,
};
pub use self::resolve::Resolved;
pub use self::secrets::SecretFile;
pub use self::semantic::{ModelStatus, VectorReport};
pub use self::sync::SyncReport;

/// Age after which a temporary file of [`store::write_atomic`] is taken as left by an
/// interrupted write, in ns.
const LEFTOVER_AGE_NS: i128 = 60_000_000_000;

/// The temporary files of `leftovers` (path, mtime in ns) old enough to have been left by an
/// interrupted write: older than [`LEFTOVER_AGE_NS`] at `now`.
fn stale_leftovers(leftovers: &[(String, i64)], now: Timestamp) -> impl Iterator<Item = &str> {
    let cutoff = now.as_nanosecond().saturating_sub(LEFTOVER_AGE_NS);
    leftovers
        .iter()
        .filter(move |(_, mtime_ns)| i128::from(*mtime_ns) < cutoff)
        .map(|(rel, _)| rel.as_str())
}

/// An open memory root.
pub struct Engine {
    root: PathBuf,
    state_dir: PathBuf,
    config: Config,
    index: MemoryIndex,
    lock: File,
    pending_notice: Option<String>,
    thesaurus: Thesaurus,
    usage: Option<UsageLog>,
    sessions: Option<crate::session::SessionLog>,
    semantic: semantic::Semantic,
    model: model::Model,
    warnings: Vec<String>,
    /// When each memory was last used, for ranking recency (see [`crate::usage::last_used`]).
    last_used: crate::usage::last_used::LastUsed,
    /// The watch of the root's files, in a long-lived process (see [`Engine::watch`]).
    watch: Option<watch::Watch>,
    /// Whether its memories are checked against its repository's code (see [`crate::cites`]).
    code_checks: bool,
}

impl Engine {
    /// Opens the memory root `root` (which must exist), creating `.mem/` if needed, with the
    /// model its `mem.toml` names.
    pub fn open(root: &Path) -> Result<Engine> {
        Engine::open_with(root, &ModelOverrides::default())
    }

    /// Opens the memory root `root` like [`Engine::open`], with the front end's overrides of
    /// the model folder and the ONNX Runtime library.
    pub fn open_with(root: &Path, overrides: &ModelOverrides) -> Result<Engine> {
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
        Ok(Engine {
            root: root.to_path_buf(),
            state_dir,
            index,
            lock,
            pending_notice,
            thesaurus,
            usage: None,
            sessions: None,
            semantic: semantic::Semantic::new(),
            model: model::Model::configured(overrides),
            warnings: config.ignored_keys(),
            config,
            last_used: Default::default(),
            watch: None,
            code_checks: true,
        })
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

    /// The usage log, opened on first use.
    pub(crate) fn usage(&mut self) -> Result<&mut UsageLog> {
        if self.usage.is_none() {
            let busy = std::time::Duration::from_millis(self.config.usage.busy_timeout_ms);
            self.usage = Some(UsageLog::open(&self.state_dir.join(usage::FILE), busy)?);
        }
        Ok(self.usage.as_mut().expect("opened above"))
    }

    /// The session log, opened (created if needed) on first use.
    pub(crate) fn session_log(&mut self) -> Result<&mut crate::session::SessionLog> {
        if self.sessions.is_none() {
            let busy = std::time::Duration::from_millis(self.config.usage.busy_timeout_ms);
            let path = self.state_dir.join(crate::session::FILE);
            self.sessions = Some(crate::session::SessionLog::open(&path, busy)?);
        }
        Ok(self.sessions.as_mut().expect("opened above"))
    }

    /// The session log when the root has one (`None` before the first capture): for readers,
    /// which must not create it.
    pub fn existing_session_log(&mut self) -> Result<Option<&mut crate::session::SessionLog>> {
        if self.sessions.is_none() && !self.state_dir.join(crate::session::FILE).exists() {
            return Ok(None);
        }
        self.session_log().map(Some)
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

    /// Brings the index up to date with the files (see [`MemoryIndex::refresh`]), holding the
    /// root's lock so that concurrent processes take turns.
    pub fn refresh(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = self.with_lock(|engine| engine.refresh_locked(now, progress, false))?;
        report.warnings.extend(self.refresh_last_used()?);
        Ok(report)
    }

    /// Throws the index away and builds it again from the files.
    pub fn rebuild(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = self.with_lock(|engine| engine.refresh_locked(now, progress, true))?;
        report.warnings.extend(self.refresh_last_used()?);
        Ok(report)
    }

    /// Runs `f` holding the root's lock (`.mem/lock`).
    pub(crate) fn with_lock<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        let lock_path = self.state_dir.join("lock");
        self.lock.lock().map_err(|e| Error::io(&lock_path, e))?;
        let result = f(self);
        self.lock.unlock().map_err(|e| Error::io(&lock_path, e))?;
        result
    }

    fn refresh_locked(
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
        let started = fresh::wall_ns();
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
        let known = if rebuild { Vec::new() } else { fresh::Folders::known_bad(&self.state_dir) };
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
        fresh::Folders::after_full(version, started, dirs, &report).save(&self.state_dir)?;
        Ok(report)
    }

    /// Opens the index again when another process has committed since this one opened it;
    /// the notice when it had to be rebuilt.
    fn reopen_if_stale(&mut self) -> Result<Option<String>> {
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
    /// [`Engine::refresh`] first so the index knows of recent files.
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

    /// Every indexed memory read as [`Engine::load_all`] reads it, turned into what `f` keeps
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

    /// Ids used by more than one indexed file, each with its paths.
    pub fn duplicates(&self) -> Vec<(String, Vec<String>)> {
        self.index.manifest().map(|m| m.duplicate_ids()).unwrap_or_default()
    }
}

impl Engine {
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
    /// [`Engine::edited`]).
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

fn parse_error(path: &str) -> impl Fn(crate::format::FormatError) -> Error + '_ {
    move |source| Error::Parse { path: path.into(), source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::NewMemory;

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
        let hidden = crate::progress::Silent;
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

    #[test]
    fn recall_says_what_it_did() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::config::CONFIG_FILE),
            "[query]\nsynonyms = [[\"zork\", \"grue\"]]\n",
        )
        .unwrap();
        let mut engine = Engine::open(dir.path()).unwrap();
        engine.add(note("the grue waits on port 5432"), now()).unwrap();
        engine.add(note("lunch was pasta"), now()).unwrap();
        let options = RecallOptions { limit: 5, ..Default::default() };
        let recall = engine.recall("zork port", &options, now(), &crate::progress::Silent).unwrap();
        assert_eq!(recall.hits.len(), 1);
        assert_eq!(recall.mode, crate::config::RecallMode::Bm25);
        assert_eq!(recall.fallback, None);
        assert_eq!(recall.expansions, ["grue"]);
        // One memory matches: its keyword relevance (BM25 × the coverage factor) is the best.
        let hit = &recall.hits[0];
        let best =
            crate::score::keyword(hit.bm25, hit.components.coverage, &engine.config().ranking);
        assert_eq!(recall.relevance, Some(crate::score::Relevance::Bm25 { best }));
        let explained = recall.explain(engine.config());
        assert!(
            explained
                .contains(&format!("relevance = bm25 × (1 − 0.5 + 0.5 × coverage) / {best:.3}")),
            "{explained}"
        );
        assert!(explained.contains("synonyms searched at weight 0.3: grue"), "{explained}");

        let none = engine.recall("zebra", &options, now(), &crate::progress::Silent).unwrap();
        assert!(none.hits.is_empty() && none.relevance.is_none());
        assert_eq!(none.explain(engine.config()), "");
    }
}
