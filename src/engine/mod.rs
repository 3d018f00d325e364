//! The engine: one memory root, its settings and its index, behind the operations every front
//! end (the CLI today) calls. It never prints and never reads the clock: `now` is an argument.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::Serialize;

use rayon::prelude::*;

use crate::config::{Config, PruneConfig, RecallMode};
use crate::decay::State;
use crate::format::{Memory, MemoryId, MemoryType, NewMemory};
use crate::format::{edit_front_matter, with_body, yaml_ids, yaml_text};
use crate::health::{self, CaptureSummary, Coverage, IndexCheck};
use crate::index::synonyms::Thesaurus;
use crate::index::{Hit, MemoryIndex, Record, RefreshReport, Search, Validity, tokenizer};
use crate::prune::{self, Candidate};
use crate::reflect::{self, Digest, Space, SparseVec};
use crate::store::{self, ARCHIVE_DIR, Overwrite, STATE_DIR};
use crate::usage::{self, UsageLog};
use crate::{Error, Result};
use std::collections::HashMap;

mod semantic;

pub use self::semantic::{ModelStatus, VectorReport};

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
    semantic: semantic::Semantic,
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
    /// Return invalidated memories too (marked by their `invalid_at`).
    pub include_invalid: bool,
    /// Return what was valid at this time instead: created by then and not yet invalid.
    pub as_of: Option<Timestamp>,
    /// Record a `retrieved` event for each hit in the usage log.
    pub record: bool,
    /// BM25, vector or hybrid; `None` takes the root's default (see [`Engine::recall_mode`]).
    pub mode: Option<RecallMode>,
}

/// A memory file written by [`Engine::add`].
#[derive(Clone, Debug, Serialize)]
pub struct Added {
    /// Its new id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
}

/// Folder, under the root, where `mem reflect` writes new reflections.
pub const REFLECTIONS_DIR: &str = "reflections";

/// The instructions a summariser command receives before the memories of a cluster.
pub const SUMMARY_PROMPT: &str = "You are consolidating related notes from a software \
project's long-term memory into one memory. Write 3 to 6 sentences of plain Markdown that say \
what the notes have in common: the facts, the causes, the decisions, and what to do. No title, \
no preamble. The notes:\n";

/// Which memories `mem reflect` clusters.
#[derive(Clone, Debug)]
pub struct ReflectOptions {
    /// Types to consider (all when empty); `mem reflect` defaults to episodic.
    pub kinds: Vec<MemoryType>,
    /// Only memories created at or after this time.
    pub since: Option<Timestamp>,
    /// Cosine similarity for two memories to belong together.
    pub threshold: f32,
    /// Smallest new cluster.
    pub min_cluster: usize,
    /// Group by embedding cosine at this threshold instead of TF-IDF at `threshold`; every
    /// memory needs a vector ([`Engine::sync_vectors`] first).
    pub embedding_threshold: Option<f32>,
}

/// A memory named in a proposal.
#[derive(Clone, Debug, Serialize)]
pub struct SourceRef {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Its title.
    pub title: String,
}

/// One reflection `mem reflect` would write or update.
#[derive(Clone, Debug, Serialize)]
pub struct Proposal {
    /// The reflection this updates; `None` for a new one.
    pub updates: Option<SourceRef>,
    /// Title, type, importance, tags and summary.
    pub digest: Digest,
    /// Every source, old and new.
    pub sources: Vec<SourceRef>,
    /// Ids of the sources that get `consolidated_into` now.
    pub new_sources: Vec<String>,
    /// Ids an updated reflection already lists; kept in `derived_from` even when those
    /// memories are no longer recalled (invalidated, archived).
    pub keep: Vec<String>,
}

/// A reflection written by [`Engine::reflect`].
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Whether it existed and was updated.
    pub updated: bool,
    /// How many sources it has.
    pub sources: usize,
}

/// What `mem reflect` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReflectReport {
    /// Reflections written or updated.
    pub written: Vec<Written>,
    /// Clusters skipped, each with the reason (a failing summariser, say).
    pub failed: Vec<String>,
}

/// A command that writes a cluster's summary: the prompt on its stdin, the summary on stdout.
#[derive(Clone, Debug)]
pub struct Summarizer {
    /// Run with `sh -c`.
    pub command: String,
    /// Stopped after this long.
    pub timeout: std::time::Duration,
}

impl Summarizer {
    /// Runs the command on `prompt`; a timeout, a failing exit status or an empty output is an
    /// error that says which.
    pub fn run(&self, prompt: &str) -> Result<String> {
        use std::io::{Read, Write};
        use std::process::{Command, Stdio};
        use wait_timeout::ChildExt;
        let fail = |message: String| Error::Summarizer { command: self.command.clone(), message };
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| fail(format!("could not start: {e}")))?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = prompt.to_string();
        let writer = std::thread::spawn(move || {
            let _closed_early_is_fine = stdin.write_all(input.as_bytes());
        });
        let mut stdout = child.stdout.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let mut out = Vec::new();
            stdout.read_to_end(&mut out).map(|_| out)
        });
        let mut stderr = child.stderr.take().expect("piped");
        let err_reader = std::thread::spawn(move || {
            let mut err = Vec::new();
            let _ = stderr.read_to_end(&mut err);
            err
        });
        let status = match child.wait_timeout(self.timeout).map_err(|e| fail(e.to_string()))? {
            Some(status) => status,
            None => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("timed out after {} s", self.timeout.as_secs_f64())));
            }
        };
        let _ = writer.join();
        let out = reader.join().ok().and_then(|r| r.ok()).unwrap_or_default();
        let err = err_reader.join().unwrap_or_default();
        if !status.success() {
            let err = String::from_utf8_lossy(&err);
            let first = err.lines().next().unwrap_or("").trim();
            return Err(fail(format!(
                "failed ({status}){}",
                if first.is_empty() { String::new() } else { format!(": {first}") }
            )));
        }
        let out = String::from_utf8_lossy(&out).trim().to_string();
        if out.is_empty() {
            return Err(fail("printed nothing".into()));
        }
        Ok(out)
    }
}

/// What admission control found for a new text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Admission {
    /// Nothing like it exists.
    Fresh,
    /// The same text exists already.
    Duplicate {
        /// The existing memory.
        id: String,
        /// Its path.
        path: String,
    },
    /// A very similar text exists.
    Similar {
        /// The existing memory.
        id: String,
        /// Its path.
        path: String,
        /// Cosine similarity, by `measure`.
        similarity: f32,
        /// "embedding" (the model's cosine) or "tf-idf" (word weights).
        measure: &'static str,
    },
}

/// File of `.mem/` where `mem capture` logs every capture, one JSON object a line.
pub const CAPTURE_LOG: &str = "capture.log";

/// The usage log's condition.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UsageCheck {
    /// Whether `.mem/usage.db` exists.
    pub present: bool,
    /// Events it holds.
    pub events: u64,
    /// What is wrong with it, if anything.
    pub error: Option<String>,
}

/// What `mem health` found.
#[derive(Clone, Debug, Serialize)]
pub struct Health {
    /// Set when opening found the index corrupt or outdated (it was rebuilt, empty).
    pub notice: Option<String>,
    /// Index against files.
    pub index: IndexCheck,
    /// The usage log.
    pub usage: UsageCheck,
    /// Captures of the last 24 hours.
    pub capture: CaptureSummary,
    /// Sessions on disk against sessions captured, when a transcripts folder was given.
    pub coverage: Option<Coverage>,
    /// The embedding model and the vectors.
    pub embedding: ModelStatus,
}

impl Health {
    /// Whether everything checked is sound.
    pub fn ok(&self) -> bool {
        self.notice.is_none()
            && self.index.ok()
            && self.usage.error.is_none()
            && self.capture.ok()
            && self.coverage.as_ref().is_none_or(|c| c.gaps.is_empty())
            && !matches!(self.embedding, ModelStatus::Broken { .. })
    }
}

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
            index,
            lock,
            pending_notice,
            thesaurus,
            usage: None,
            semantic: semantic::Semantic::configured(root, &config.embed.model_dir),
            config,
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

    /// The usage log, opened on first use.
    pub fn usage(&mut self) -> Result<&mut UsageLog> {
        if self.usage.is_none() {
            let busy = std::time::Duration::from_millis(self.config.usage.busy_timeout_ms);
            self.usage = Some(UsageLog::open(&self.state_dir.join(usage::FILE), busy)?);
        }
        Ok(self.usage.as_mut().expect("opened above"))
    }

    /// The path of an indexed memory's file, relative to the root; an error names the fix when
    /// the id is malformed, unknown or used twice.
    pub fn path_of(&self, id: &str) -> Result<String> {
        let id = MemoryId::new(id)?;
        let mut paths = self.index.paths_of(id.as_str());
        match paths.len() {
            0 => Err(Error::NotFound(id.to_string())),
            1 => Ok(paths.remove(0)),
            _ => Err(Error::DuplicateId {
                id: id.to_string(),
                paths: paths.into_iter().map(PathBuf::from).collect(),
            }),
        }
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
    /// rebuilt once (with a notice in the report) before giving up. In vector or hybrid mode
    /// the vectors are brought up to date first (at most `[embed] recall_embed_limit`
    /// memories are embedded here); when the model cannot be used, hybrid recall falls back to
    /// BM25 with a warning in the report, and vector recall fails.
    pub fn recall(
        &mut self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        progress: &indicatif::ProgressBar,
    ) -> Result<(Vec<Hit>, RefreshReport)> {
        let mode = self.recall_mode(options.mode);
        // The query is embedded while the index is refreshed: two jobs for two cores.
        let (refreshed, query_vector) = match mode {
            RecallMode::Bm25 => (self.refresh(now, progress), None),
            _ => match self.take_embedder() {
                Ok(mut embedder) => {
                    let (refreshed, vector) = rayon::join(
                        || self.refresh(now, progress),
                        || semantic::embed_one(&mut embedder, query),
                    );
                    self.put_embedder(embedder);
                    (refreshed, Some(vector))
                }
                Err(e) => (self.refresh(now, progress), Some(Err(e))),
            },
        };
        let mut report = refreshed?;
        let vector = match query_vector {
            None => None,
            Some(query_vector) => match query_vector
                .and_then(|query_vector| self.vector_query(query_vector, &mut report))
            {
                // Hybrid recall without a single vector is BM25 recall.
                Ok(found) if found.searched == 0 && mode == RecallMode::Hybrid => None,
                Ok(found) => Some(found),
                Err(e @ Error::Embed(_)) if mode == RecallMode::Hybrid => {
                    report.warnings.push(format!("{e}; recall uses BM25 only"));
                    None
                }
                Err(e) => return Err(e),
            },
        };
        let mode = if vector.is_some() { mode } else { RecallMode::Bm25 };
        let vector = vector.as_ref();
        let hits = match self.search(query, options, now, mode, vector) {
            Err(Error::Index(e)) => {
                let mut rebuilt = self.rebuild(now, progress)?;
                rebuilt.notices.insert(
                    0,
                    format!(
                        "the index could not be searched ({e}); rebuilt it from the memory files"
                    ),
                );
                rebuilt.notices.extend(std::mem::take(&mut report.notices));
                rebuilt.warnings.extend(std::mem::take(&mut report.warnings));
                report = rebuilt;
                self.search(query, options, now, mode, vector)?
            }
            result => result?,
        };
        if options.record && !hits.is_empty() {
            let ids: Vec<&str> = hits.iter().map(|h| h.record.id.as_str()).collect();
            let hash = usage::query_hash(query);
            // Recall still answers when the log cannot be written; the notice says so.
            if let Err(e) = self.usage().and_then(|log| log.record_retrieved(&ids, &hash, now)) {
                report.notices.push(format!("usage not recorded: {e}"));
            }
        }
        Ok((hits, report))
    }

    /// Brings the vectors up to date (within the recall limit) and finds the memories nearest
    /// to the query's embedding.
    fn vector_query(
        &mut self,
        vector: Vec<f32>,
        report: &mut RefreshReport,
    ) -> Result<VectorQuery> {
        let limit = self.config.embed.recall_embed_limit;
        let synced = self.sync_vectors(Some(limit), &indicatif::ProgressBar::hidden())?;
        if let Some(why) = synced.discarded {
            report.notices.push(format!("{why}; the vectors are being computed again"));
        }
        if synced.pending > 0 {
            report.notices.push(format!(
                "{} memories have no vector yet (more than [embed] recall_embed_limit = {limit}); \
                 `mem index` computes them; this recall searches the vectors there are",
                synced.pending
            ));
        }
        let e = &self.config.embed;
        let (k, min) = (e.candidates, e.min_cosine);
        let nearest = self.nearest(&vector, k, min);
        let searched = self.loaded_vectors().map_or(0, |store| store.len());
        Ok(VectorQuery { vector, nearest, searched })
    }

    fn search(
        &self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        mode: RecallMode,
        vector: Option<&VectorQuery>,
    ) -> Result<Vec<Hit>> {
        let (Some(vector), RecallMode::Vector | RecallMode::Hybrid) = (vector, mode) else {
            return self.search_ranked(query, options, now, &self.config.ranking);
        };
        let store = self.loaded_vectors();
        let cosine_of = |key: u64| store.and_then(|s| s.cosine_by_key(&vector.vector, key));
        let e = &self.config.embed;
        let side = crate::index::VectorSide {
            mode,
            nearest: &vector.nearest,
            cosine_of: &cosine_of,
            fusion: e.fusion,
            rrf_k: e.rrf_k,
            vector_weight: e.vector_weight,
            candidates: e.candidates,
        };
        let search = self.search_request(query, options, now, &self.config.ranking);
        catch_index_panic(|| self.index.search_fused(&search, &side))
    }

    fn search_request<'a>(
        &'a self,
        query: &'a str,
        options: &'a RecallOptions,
        now: Timestamp,
        ranking: &'a crate::config::Ranking,
    ) -> Search<'a> {
        Search {
            text: query,
            kinds: &options.kinds,
            tags: &options.tags,
            limit: options.limit,
            now,
            ranking,
            thesaurus: &self.thesaurus,
            expansion_weight: self.config.query.expansion_weight,
            validity: match (options.as_of, options.include_invalid) {
                (Some(at), _) => Validity::AsOf(at),
                (None, true) => Validity::All,
                (None, false) => Validity::ValidAt(now),
            },
        }
    }

    fn search_ranked(
        &self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        ranking: &crate::config::Ranking,
    ) -> Result<Vec<Hit>> {
        let search = self.search_request(query, options, now, ranking);
        catch_index_panic(|| self.index.search(&search))
    }

    /// The synonyms a query is expanded with (empty when expansion is off).
    pub fn expansions(&self, query: &str) -> Vec<String> {
        if self.config.query.expansion_weight <= 0.0 {
            return Vec::new();
        }
        let tokens = tokenizer::tokens(query);
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
            let path = self.root.join(rel);
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

    /// Marks a memory invalid from `now` on (`invalid_at`, and `invalid_reason` when given).
    /// Nothing is deleted; recall leaves it out unless asked.
    pub fn forget(&mut self, id: &str, reason: Option<&str>, now: Timestamp) -> Result<String> {
        let mut edits = vec![("invalid_at", Some(second(now).to_string()))];
        if let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) {
            edits.push(("invalid_reason", Some(yaml_text(reason))));
        }
        self.edit(id, &edits)
    }

    /// Marks `old` as replaced by `new` (which must exist): `invalid_at` now and
    /// `superseded_by: NEW`.
    pub fn supersede(&mut self, old: &str, new: &str, now: Timestamp) -> Result<String> {
        let new_id = MemoryId::new(new)?;
        if MemoryId::new(old)? == new_id {
            return Err(Error::Invalid("a memory cannot supersede itself".into()));
        }
        self.path_of(new_id.as_str())?;
        let edits = [
            ("invalid_at", Some(second(now).to_string())),
            ("superseded_by", Some(yaml_text(new_id.as_str()))),
        ];
        self.edit(old, &edits)
    }

    /// Applies front-matter edits to a memory's file under the lock, refusing to invalidate
    /// one twice.
    fn edit(&mut self, id: &str, edits: &[(&str, Option<String>)]) -> Result<String> {
        self.with_lock(|engine| {
            let (rel, memory) = engine.get(id)?;
            if let Some(at) = memory.invalid_at() {
                return Err(Error::Invalid(format!(
                    "memory {id} is already invalid since {at} ({rel})"
                )));
            }
            let path = engine.root.join(&rel);
            let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let edited = edit_front_matter(&text, edits)
                .map_err(|source| Error::Parse { path: rel.clone().into(), source })?;
            store::write_atomic(&path, edited.as_bytes(), Overwrite::Yes)?;
            Ok(rel)
        })
    }

    /// The memories `mem prune` would archive, safest first, each with its reasons.
    pub fn prune_candidates(
        &mut self,
        rules: &PruneConfig,
        now: Timestamp,
    ) -> Result<Vec<Candidate>> {
        let mut rels: Vec<String> = self.index.manifest().files.keys().cloned().collect();
        rels.sort();
        let max = self.config.limits.max_file_bytes;
        let loaded: Vec<(String, Memory)> = rels
            .par_iter()
            .filter_map(|rel| {
                let bytes = store::read_limited(&self.root.join(rel), max).ok()?;
                Memory::parse_bytes(&bytes).ok().map(|m| (rel.clone(), m))
            })
            .collect();
        let unsynced: std::collections::HashSet<String> =
            self.usage()?.unsynced_ids()?.into_iter().collect();
        let mut states = Vec::with_capacity(loaded.len());
        for (_, memory) in &loaded {
            let state = if unsynced.contains(memory.id().as_str()) {
                self.state_of(memory)?
            } else {
                State::of(memory)
            };
            states.push(state);
        }
        Ok(prune::candidates(&loaded, &states, rules, now))
    }

    /// Every indexed memory, read from its file, in path order (files that stopped parsing
    /// since the last refresh are left out; the refresh reports them).
    fn load_all(&self) -> Vec<(String, Memory)> {
        let mut rels: Vec<String> = self.index.manifest().files.keys().cloned().collect();
        rels.sort();
        let max = self.config.limits.max_file_bytes;
        let root = &self.root;
        rels.par_iter()
            .filter_map(|rel| {
                let bytes = store::read_limited(&root.join(rel), max).ok()?;
                Memory::parse_bytes(&bytes).ok().map(|m| (rel.clone(), m))
            })
            .collect()
    }

    /// What `mem reflect` would write: observations that join an existing reflection (which
    /// is then updated), and new clusters of at least `min_cluster` (each a new reflection).
    pub fn reflect_plan(&self, options: &ReflectOptions, now: Timestamp) -> Result<Vec<Proposal>> {
        let loaded: Vec<(String, Memory)> =
            self.load_all().into_iter().filter(|(_, m)| !m.is_invalid_at(now)).collect();
        let texts: Vec<String> =
            loaded.iter().map(|(_, m)| format!("{}\n{}", m.title(), m.body())).collect();
        let (space, vectors) = Space::fit(&texts);
        let position: HashMap<&str, usize> =
            loaded.iter().enumerate().map(|(i, (_, m))| (m.id().as_str(), i)).collect();

        // Existing reflections and the memories they were made from.
        let reflections: Vec<(usize, Vec<usize>)> = loaded
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| !m.derived_from().is_empty())
            .map(|(i, (_, m))| {
                let sources: Vec<usize> = m
                    .derived_from()
                    .iter()
                    .filter_map(|id| position.get(id.as_str()).copied())
                    .collect();
                (i, sources)
            })
            .collect();

        let candidates: Vec<usize> = loaded
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| {
                (options.kinds.is_empty() || options.kinds.contains(&m.kind()))
                    && m.consolidated_into().is_none()
                    && m.derived_from().is_empty()
                    && options.since.is_none_or(|since| m.created() >= since)
            })
            .map(|(i, _)| i)
            .collect();

        let group = Grouping { reflections: &reflections, candidates: &candidates };
        let (joining, clusters) = match options.embedding_threshold {
            Some(threshold) => {
                let store = self.loaded_vectors();
                let dense = loaded
                    .iter()
                    .map(|(path, m)| {
                        store
                            .and_then(|s| s.get(m.id().as_str()))
                            .map(reflect::DenseVec)
                            .ok_or_else(|| {
                                Error::Invalid(format!("{path} has no vector yet; run `mem index`"))
                            })
                    })
                    .collect::<Result<Vec<_>>>()?;
                group.run(&dense, threshold, options.min_cluster, reflect::dense_neighbours)
            }
            None => {
                group.run(&vectors, options.threshold, options.min_cluster, reflect::neighbours)
            }
        };

        let source_ref = |i: usize| SourceRef {
            id: loaded[i].1.id().to_string(),
            path: loaded[i].0.clone(),
            title: loaded[i].1.title(),
        };
        let digest_of = |members: &[usize]| {
            let sources: Vec<(&Memory, &SparseVec)> =
                members.iter().map(|&i| (&loaded[i].1, &vectors[i])).collect();
            reflect::digest(&space, &sources)
        };
        let mut proposals = Vec::new();
        for (r, new) in joining {
            let (reflection, old) = &reflections[r];
            // A source listed already but never marked (a run stopped half-way) is not added
            // twice; it only gets its mark.
            let mut all = old.clone();
            all.extend(new.iter().filter(|i| !old.contains(i)));
            let keep =
                loaded[*reflection].1.derived_from().iter().map(|id| id.to_string()).collect();
            proposals.push(Proposal {
                updates: Some(source_ref(*reflection)),
                digest: digest_of(&all),
                sources: all.iter().map(|&i| source_ref(i)).collect(),
                new_sources: new.iter().map(|&i| loaded[i].1.id().to_string()).collect(),
                keep,
            });
        }
        for members in clusters {
            proposals.push(Proposal {
                updates: None,
                digest: digest_of(&members),
                sources: members.iter().map(|&i| source_ref(i)).collect(),
                new_sources: members.iter().map(|&i| loaded[i].1.id().to_string()).collect(),
                keep: Vec::new(),
            });
        }
        Ok(proposals)
    }

    /// Writes the proposals: new reflections under `reflections/`, updated ones in place, and
    /// `consolidated_into` on their new sources. With a summariser, its output is the body; a
    /// cluster whose summariser fails is skipped and reported, the others go on.
    pub fn reflect(
        &mut self,
        proposals: &[Proposal],
        summarizer: Option<&Summarizer>,
        now: Timestamp,
    ) -> Result<ReflectReport> {
        self.with_lock(|engine| {
            let mut report = ReflectReport::default();
            for proposal in proposals {
                match engine.write_reflection(proposal, summarizer, now) {
                    Ok(written) => report.written.push(written),
                    Err(
                        e @ (Error::Summarizer { .. } | Error::Parse { .. } | Error::Invalid(_)),
                    ) => {
                        report.failed.push(format!("{}: {e}", proposal.digest.title));
                    }
                    Err(e) => return Err(e),
                }
            }
            Ok(report)
        })
    }

    fn write_reflection(
        &self,
        proposal: &Proposal,
        summarizer: Option<&Summarizer>,
        now: Timestamp,
    ) -> Result<Written> {
        let d = &proposal.digest;
        let summary = match summarizer {
            Some(s) => {
                let mut prompt = String::from(SUMMARY_PROMPT);
                for source in &proposal.sources {
                    let text = std::fs::read_to_string(self.root.join(&source.path))
                        .map_err(|e| Error::io(self.root.join(&source.path), e))?;
                    let body = Memory::parse(&text).map(|m| m.body().to_string()).unwrap_or(text);
                    prompt.push_str(&format!(
                        "\n### {} ({})\n{}\n",
                        source.title,
                        source.id,
                        body.trim()
                    ));
                }
                s.run(&prompt)?
            }
            None => d.sentences.iter().map(|s| format!("- {s}\n")).collect(),
        };
        let mut text = format!("{}\n\n## Sources\n\n", summary.trim_end());
        for source in &proposal.sources {
            text.push_str(&format!("- {}: {}\n", source.id, source.title));
        }
        let mut ids: Vec<MemoryId> = Vec::new();
        for id in proposal.keep.iter().chain(proposal.sources.iter().map(|s| &s.id)) {
            let id = MemoryId::new(id)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let (id, rel, updated) = match &proposal.updates {
            None => {
                let memory = Memory::create(
                    NewMemory {
                        text: text.clone(),
                        kind: d.kind,
                        importance: d.importance,
                        tags: d.tags.clone(),
                        title: Some(d.title.clone()),
                        source: Some("reflect".into()),
                    },
                    now,
                )?;
                let rel = format!("{REFLECTIONS_DIR}/{}.md", memory.id());
                let file =
                    edit_front_matter(&memory.render(), &[("derived_from", Some(yaml_ids(&ids)))])
                        .map_err(parse_error(&rel))?;
                let path = self.root.join(&rel);
                std::fs::create_dir_all(path.parent().expect("has a folder"))
                    .map_err(|e| Error::io(&path, e))?;
                store::write_atomic(&path, file.as_bytes(), Overwrite::No)?;
                (memory.id().to_string(), rel, false)
            }
            Some(existing) => {
                let path = self.root.join(&existing.path);
                let old = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
                let file = with_body(&old, &format!("# {}\n\n{text}", d.title))
                    .and_then(|f| {
                        edit_front_matter(
                            &f,
                            &[
                                ("derived_from", Some(yaml_ids(&ids))),
                                ("importance", Some(d.importance.to_string())),
                            ],
                        )
                    })
                    .map_err(parse_error(&existing.path))?;
                store::write_atomic(&path, file.as_bytes(), Overwrite::Yes)?;
                (existing.id.clone(), existing.path.clone(), true)
            }
        };
        // Sources last: a crash before this leaves them unconsolidated, and the next run
        // finds them close to this reflection and joins them to it instead of starting over.
        let reflection_id = MemoryId::new(&id)?;
        for source in proposal.sources.iter().filter(|s| proposal.new_sources.contains(&s.id)) {
            let path = self.root.join(&source.path);
            let old = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            let file = edit_front_matter(
                &old,
                &[("consolidated_into", Some(yaml_text(reflection_id.as_str())))],
            )
            .map_err(parse_error(&source.path))?;
            store::write_atomic(&path, file.as_bytes(), Overwrite::Yes)?;
        }
        Ok(Written { id, path: rel, updated, sources: proposal.sources.len() })
    }

    /// Admission control for a new text: an exact duplicate of an existing memory (same words,
    /// case and spacing aside), a near-duplicate, or fresh. Near-duplicate means an embedding
    /// cosine of at least `[embed] near_duplicate` with any memory when a model is configured
    /// and usable, else a TF-IDF cosine of at least `[admission] near_duplicate` against the
    /// ten closest memories by BM25. A model that cannot be used is reported by
    /// [`Engine::embedding_warning`].
    pub fn admit(&mut self, new: &NewMemory, now: Timestamp) -> Result<Admission> {
        let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        let text = normal(&new.text);
        // Relevance alone: an old, unimportant exact duplicate must not fall out of the ten.
        let options = RecallOptions { limit: 10, ..Default::default() };
        let relevance_only = crate::config::Ranking {
            recency_weight: 0.0,
            importance_weight: 0.0,
            ..self.config.ranking.clone()
        };
        let hits = self.search_ranked(&new.text, &options, now, &relevance_only)?;
        let mut bodies = Vec::with_capacity(hits.len());
        for hit in &hits {
            let Ok((path, memory)) = self.get(&hit.record.id) else { continue };
            let body = memory.body();
            let without_title =
                body.trim_start().strip_prefix('#').map(|b| b.split_once('\n').map_or("", |x| x.1));
            if normal(body) == text || without_title.is_some_and(|b| normal(b) == text) {
                return Ok(Admission::Duplicate { id: hit.record.id.clone(), path });
            }
            bodies.push((hit.record.id.clone(), path, body.to_string()));
        }
        if self.model_source().is_some() && self.config.embed.near_duplicate < 1.0 {
            let threshold = self.config.embed.near_duplicate;
            let limit = self.config.embed.recall_embed_limit;
            let hidden = indicatif::ProgressBar::hidden();
            let nearest = self.sync_vectors(Some(limit), &hidden).and_then(|synced| {
                let vector = self.embed_query(&new.text)?;
                Ok((self.nearest(&vector, 1, threshold), synced.pending))
            });
            match nearest {
                Ok((nearest, pending)) => match nearest.into_iter().next() {
                    Some((id, similarity)) => {
                        let path = self.path_of(&id)?;
                        return Ok(Admission::Similar {
                            id,
                            path,
                            similarity,
                            measure: "embedding",
                        });
                    }
                    // Every memory has a vector and none is close: fresh. With memories left
                    // without a vector (more than the recall limit), TF-IDF checks those too.
                    None if pending == 0 => return Ok(Admission::Fresh),
                    None => {}
                },
                // The model's failure is kept for `embedding_warning`; TF-IDF decides.
                Err(Error::Embed(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let threshold = self.config.admission.near_duplicate;
        if bodies.is_empty() || threshold >= 1.0 {
            return Ok(Admission::Fresh);
        }
        let mut texts = vec![new.text.clone()];
        texts.extend(bodies.iter().map(|(_, _, b)| b.clone()));
        let (_, vectors) = Space::fit(&texts);
        let best = bodies
            .into_iter()
            .zip(&vectors[1..])
            .map(|((id, path, _), v)| (id, path, vectors[0].dot(v)))
            .max_by(|a, b| a.2.total_cmp(&b.2));
        Ok(match best {
            Some((id, path, similarity)) if similarity >= threshold => {
                Admission::Similar { id, path, similarity, measure: "tf-idf" }
            }
            _ => Admission::Fresh,
        })
    }

    /// Moves `candidates` to `archive/` (same relative path), adding `archived_at` and
    /// `archived_reason`; nothing is deleted. Returns the archived paths.
    pub fn archive(&mut self, candidates: &[Candidate], now: Timestamp) -> Result<Vec<String>> {
        self.with_lock(|engine| {
            let mut archived = Vec::with_capacity(candidates.len());
            for c in candidates {
                let from = engine.root.join(&c.path);
                let to = engine.root.join(ARCHIVE_DIR).join(&c.path);
                let text = std::fs::read_to_string(&from).map_err(|e| Error::io(&from, e))?;
                let reasons: Vec<String> = c.reasons.iter().map(|r| r.to_string()).collect();
                let edits = [
                    ("archived_at", Some(second(now).to_string())),
                    ("archived_reason", Some(yaml_text(&reasons.join("; ")))),
                ];
                let edited = edit_front_matter(&text, &edits)
                    .map_err(|source| Error::Parse { path: c.path.clone().into(), source })?;
                move_file(&from, &to, edited.as_bytes())?;
                archived.push(format!("{ARCHIVE_DIR}/{}", c.path));
            }
            Ok(archived)
        })
    }

    /// Brings an archived memory back to where it was, as it was before `mem prune`.
    pub fn restore(&mut self, id: &str) -> Result<String> {
        let id = MemoryId::new(id)?;
        self.with_lock(|engine| {
            let archive = engine.root.join(ARCHIVE_DIR);
            let mut found: Vec<PathBuf> = Vec::new();
            for file in store::scan(&archive).files {
                let path = archive.join(&file.rel);
                let text = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                if Memory::parse_bytes(&text).is_ok_and(|m| m.id() == &id) {
                    found.push(PathBuf::from(file.rel));
                }
            }
            let rel = match found.len() {
                0 => {
                    return Err(Error::Invalid(format!(
                        "no archived memory with id {:?} under {ARCHIVE_DIR}/",
                        id.as_str()
                    )));
                }
                1 => found.remove(0),
                _ => {
                    let paths = found.into_iter().map(|p| Path::new(ARCHIVE_DIR).join(p)).collect();
                    return Err(Error::DuplicateId { id: id.to_string(), paths });
                }
            };
            let from = archive.join(&rel);
            let to = engine.root.join(&rel);
            let text = std::fs::read_to_string(&from).map_err(|e| Error::io(&from, e))?;
            let edited =
                edit_front_matter(&text, &[("archived_at", None), ("archived_reason", None)])
                    .map_err(|source| Error::Parse { path: from.clone(), source })?;
            move_file(&from, &to, edited.as_bytes())?;
            Ok(rel.to_string_lossy().replace('\\', "/"))
        })
    }

    /// Indexed memories of the given types and tags, newest first.
    pub fn list(&self, kinds: &[MemoryType], tags: &[String]) -> Result<Vec<Record>> {
        self.index.records(kinds, tags)
    }

    /// Ids used by more than one indexed file, each with its paths.
    pub fn duplicates(&self) -> Vec<(String, Vec<String>)> {
        self.index.manifest().duplicate_ids()
    }

    /// Checks the root without changing it: index against files (by content), parse errors,
    /// the usage log, the capture log of the last 24 hours, and, given a folder of agent
    /// transcripts, which sessions were never captured. Call it on an engine that has not
    /// refreshed, or there is nothing left to find.
    pub fn health(&mut self, now: Timestamp, transcripts: Option<&Path>) -> Result<Health> {
        let scan = store::scan(&self.root);
        let index = health::check_index(
            &self.root,
            self.index.manifest(),
            &scan,
            self.config.limits.max_file_bytes,
        );
        let usage_path = self.state_dir.join(usage::FILE);
        let usage = if usage_path.exists() {
            match self.usage().and_then(|log| log.check().and_then(|()| log.event_count())) {
                Ok(events) => UsageCheck { present: true, events, error: None },
                Err(e) => UsageCheck { present: true, events: 0, error: Some(e.to_string()) },
            }
        } else {
            UsageCheck::default()
        };
        let log = self.state_dir.join(CAPTURE_LOG);
        let capture = health::capture_summary(&log, now, 24).map_err(|e| Error::io(&log, e))?;
        let coverage = match transcripts {
            None => None,
            Some(dir) => {
                let found = health::transcripts(dir).map_err(|e| Error::io(dir, e))?;
                let captured: Vec<String> = self
                    .index
                    .records(&[], &[])?
                    .into_iter()
                    .filter_map(|r| {
                        r.source.and_then(|s| s.strip_prefix("session/").map(String::from))
                    })
                    .collect();
                Some(health::coverage(found, &captured))
            }
        };
        let embedding = self.model_status();
        Ok(Health {
            notice: self.pending_notice.clone(),
            index,
            usage,
            capture,
            coverage,
            embedding,
        })
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

/// Maps a format error about the file at `path` to the library's error.
/// The vector side of one recall.
struct VectorQuery {
    /// The query's embedding.
    vector: Vec<f32>,
    /// Its nearest memories, best first, as (id, cosine).
    nearest: Vec<(String, f32)>,
    /// How many vectors were searched.
    searched: usize,
}

/// Which observations join existing reflections, and which form new clusters, by one
/// similarity measure.
struct Grouping<'a> {
    /// Each reflection (index into the loaded memories) with its sources.
    reflections: &'a [(usize, Vec<usize>)],
    /// Observations not consolidated yet.
    candidates: &'a [usize],
}

impl Grouping<'_> {
    /// Observations close to a reflection's centre join it (keyed by the reflection's
    /// position in `reflections`); the others are clustered.
    fn run<V: reflect::Similarity + Clone>(
        &self,
        vectors: &[V],
        threshold: f32,
        min_cluster: usize,
        neighbours: impl Fn(&[V], f32) -> Vec<Vec<(usize, f32)>>,
    ) -> (BTreeMap<usize, Vec<usize>>, Vec<Vec<usize>>) {
        let centres: Vec<V> = self
            .reflections
            .iter()
            .map(|(_, sources)| V::mean(sources.iter().map(|&s| &vectors[s])))
            .collect();
        let mut joining: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut free = Vec::new();
        for &c in self.candidates {
            let best = centres
                .iter()
                .enumerate()
                .map(|(r, centre)| (r, vectors[c].similarity(centre)))
                .filter(|&(_, sim)| sim >= threshold)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            match best {
                Some((r, _)) => joining.entry(r).or_default().push(c),
                None => free.push(c),
            }
        }
        let free_vectors: Vec<V> = free.iter().map(|&i| vectors[i].clone()).collect();
        let graph = neighbours(&free_vectors, threshold);
        let clusters = reflect::cluster(&free_vectors, &graph, threshold, min_cluster)
            .into_iter()
            .map(|cluster| cluster.iter().map(|&k| free[k]).collect())
            .collect();
        (joining, clusters)
    }
}

/// Runs an index search; a damaged segment can make tantivy panic, which is an index error,
/// cured by a rebuild.
fn catch_index_panic(search: impl FnOnce() -> Result<Vec<Hit>>) -> Result<Vec<Hit>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(search)).unwrap_or_else(|panic| {
        Err(Error::Index(tantivy::TantivyError::InternalError(crate::index::panic_message(
            &*panic,
        ))))
    })
}

fn parse_error(path: &str) -> impl Fn(crate::format::FormatError) -> Error + '_ {
    move |source| Error::Parse { path: path.into(), source }
}

/// `now` to the whole second, as written into files.
fn second(now: Timestamp) -> Timestamp {
    Timestamp::from_second(now.as_second()).unwrap_or(now)
}

/// Writes `contents` at `to` (which must not exist) and then removes `from`: at every moment
/// at least one complete copy exists.
fn move_file(from: &Path, to: &Path, contents: &[u8]) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    store::write_atomic(to, contents, Overwrite::No)?;
    std::fs::remove_file(from).map_err(|e| Error::io(from, e))?;
    if let Some(parent) = from.parent() {
        std::fs::File::open(parent).and_then(|d| d.sync_all()).map_err(|e| Error::io(parent, e))?;
    }
    Ok(())
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
