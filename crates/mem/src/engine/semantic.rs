//! The embedding side of an engine: the configured model (loaded on first use and kept, so a
//! long-running process such as the MCP server loads it once) and the memories' vectors in
//! `.mem/vectors.bin`, brought up to date incrementally.

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::Files;
use super::model::Model;
use crate::Result;
use crate::config::RecallMode;
use crate::embed::Loading;
use crate::embed::vectors::{self, Discarded, Key, VectorStore};
use crate::index::content_hash;
use crate::store::Stamp;

/// Vectors written to disk at least every this many newly embedded memories, so an
/// interrupted `mem index` keeps most of its work.
const CHECKPOINT: usize = 256;

/// The embedding side of an engine: its model and the memories' vectors.
pub struct Vectors {
    /// The configured model, loaded on first use.
    model: Model,
    vectors: Option<Loaded>,
    /// The index version after the last sync that left nothing to do, while the vectors in
    /// memory are the ones it left: the next sync with the same index has nothing to check.
    synced: Option<(u64, u64)>,
}

/// The file whose text an id's vector must come from.
struct Wanted {
    /// Its path, relative to the root.
    path: String,
    /// The hash of its bytes.
    hash: [u8; 16],
}

struct Loaded {
    store: VectorStore,
    /// The file's stamp when it was read or written: another process's write is noticed and
    /// read again.
    stamp: Option<Stamp>,
}

impl Vectors {
    /// The vectors of `model`; none read yet.
    pub(super) fn new(model: Model) -> Vectors {
        Vectors { model, vectors: None, synced: None }
    }
}

/// The state of the embedding model, as `mem health` reports it.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ModelStatus {
    /// No model folder is configured: recall is BM25 only.
    NotConfigured,
    /// The model loaded and runs.
    Ready {
        /// The model folder.
        dir: String,
        /// Vector length.
        dim: usize,
        /// Memories with an up-to-date vector.
        vectors: usize,
        /// Indexed memories.
        memories: usize,
    },
    /// The model is configured but cannot be used.
    Broken {
        /// The model folder.
        dir: String,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// What bringing the vectors up to date did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VectorReport {
    /// Memories embedded now.
    pub embedded: usize,
    /// Changed files whose embedded text did not change (no model call).
    pub reused: usize,
    /// Vectors of memories no longer indexed, dropped.
    pub removed: usize,
    /// Memories left without a vector (more than the caller's limit).
    pub pending: usize,
    /// Why the vector file was started afresh, if it was.
    pub discarded: Option<String>,
}

fn file_stamp(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
}

impl Vectors {
    /// The embedding model.
    pub fn model(&mut self) -> &mut Model {
        &mut self.model
    }

    /// The recall mode to use: the one asked for, else `[embed] mode` when a model is
    /// configured, else BM25.
    pub fn recall_mode(&self, files: &Files, asked: Option<RecallMode>) -> RecallMode {
        match (asked, self.model.source()) {
            (Some(mode), _) => mode,
            (None, Some(_)) => files.config.embed.mode,
            (None, None) => RecallMode::Bm25,
        }
    }

    /// Starts loading the configured model on another thread, when a recall in `mode` (else
    /// the configured one) is to use it and it is not loaded yet: a process that will embed
    /// soon loads it while it reads and refreshes the index. [`Model::embedder`] waits for it.
    pub fn start_loading_model(&mut self, files: &Files, mode: Option<RecallMode>) {
        if self.wants_model(files, mode) {
            self.model.start_loading();
        }
    }

    /// Takes `loading` as this engine's model when it is the configured one, recall uses it
    /// and none is loaded yet (see [`Vectors::start_loading_model`]); otherwise it is waited for
    /// and dropped.
    pub fn give_model(&mut self, files: &Files, loading: Loading) {
        if self.wants_model(files, None) {
            self.model.give(loading);
        }
    }

    /// Whether a recall in `mode` (else the configured one) needs the model and it is neither
    /// loaded nor loading.
    fn wants_model(&self, files: &Files, mode: Option<RecallMode>) -> bool {
        self.model.is_idle() && self.recall_mode(files, mode) != RecallMode::Bm25
    }

    /// The model's state, loading it if it is configured.
    pub fn status(&mut self, files: &Files) -> ModelStatus {
        let Some(source) = self.model.source() else {
            return ModelStatus::NotConfigured;
        };
        let dir = source.dir.display().to_string();
        let dim = match self.model.embedder() {
            Ok(embedder) => embedder.dim(),
            Err(e) => return ModelStatus::Broken { dir, message: e.to_string() },
        };
        let memories = files.index.len();
        let wanted = match wanted(files) {
            Ok(wanted) => wanted,
            Err(e) => return ModelStatus::Broken { dir, message: e.to_string() },
        };
        let vectors = match self.vector_store(files) {
            Ok(store) => store
                .ids()
                .iter()
                .filter(|id| {
                    wanted
                        .get(id.as_str())
                        .is_some_and(|w| store.key(id).map(|k| k.file) == Some(w.hash))
                })
                .count(),
            Err(_) => 0,
        };
        ModelStatus::Ready { dir, dim, vectors, memories }
    }

    /// The stored vector of memory `id` when it was computed by this model from exactly
    /// `text` (the text the model embeds: [`crate::embed::memory_text`]); `None` otherwise.
    /// Lets a caller that needs the vector of a text the index embedded already (a team push)
    /// skip the model.
    pub fn stored(&mut self, files: &Files, id: &str, text: &str) -> Result<Option<Vec<f32>>> {
        let store = self.vector_store(files)?;
        let same = store.key(id).is_some_and(|k| k.text == content_hash(text.as_bytes()));
        Ok(if same { store.get(id) } else { None })
    }

    /// The vectors, read from `.mem/vectors.bin` on first use or when another process has
    /// rewritten it. Needs the model (its checksum says whether the vectors are its own).
    fn vector_store(&mut self, files: &Files) -> Result<&VectorStore> {
        self.load_vectors(files)?;
        Ok(&self.vectors.as_ref().expect("loaded").store)
    }

    /// Reads the vector file if needed; the reason when it had to be started afresh.
    fn load_vectors(&mut self, files: &Files) -> Result<Option<Discarded>> {
        let path = vectors::path(&files.state_dir);
        let stamp = file_stamp(&path);
        if let Some(loaded) = &self.vectors
            && loaded.stamp == stamp
        {
            return Ok(None);
        }
        let (checksum, dim) = {
            let embedder = self.model.embedder()?;
            (embedder.checksum(), embedder.dim())
        };
        let (store, discarded) = VectorStore::load(&path, checksum, dim)?;
        self.vectors = Some(Loaded { store, stamp });
        self.synced = None;
        Ok(discarded)
    }

    fn save_vectors(&mut self, files: &Files) -> Result<()> {
        files.lock_root()?;
        let saved = self.save_vectors_locked(files);
        files.unlock_root()?;
        saved
    }

    fn save_vectors_locked(&mut self, files: &Files) -> Result<()> {
        let path = vectors::path(&files.state_dir);
        let loaded = self.vectors.as_mut().expect("loaded before saving");
        loaded.store.save(&path)?;
        loaded.stamp = file_stamp(&path);
        Ok(())
    }

    /// Brings the vectors up to date with the index: embeds new and changed memories (at most
    /// `limit` of them; with more, none is embedded and they are counted as pending) and drops
    /// the vectors of memories no longer indexed. Call after a refresh.
    pub fn sync(
        &mut self,
        files: &Files,
        limit: Option<usize>,
        progress: &dyn crate::progress::Progress,
    ) -> Result<VectorReport> {
        let discarded = self.load_vectors(files)?.map(|why| match why {
            Discarded::OtherModel => "the vectors were computed by another model".to_string(),
            Discarded::Damaged(why) => format!("the vector file was unreadable ({why})"),
        });
        let mut report = VectorReport { discarded, ..VectorReport::default() };
        if self.synced == Some(files.index.version()) {
            return Ok(report);
        }
        let wanted = wanted(files)?;
        let store = &mut self.vectors.as_mut().expect("loaded").store;
        report.removed = store.retain(|id| wanted.contains_key(id));
        // Memories whose file changed: those with a vector may only need it re-keyed (same
        // text), those without one need the model.
        let (rekey, missing): (Vec<(&String, &Wanted)>, Vec<_>) = wanted
            .iter()
            .filter(|(id, w)| store.key(id).map(|k| k.file) != Some(w.hash))
            .partition(|(id, _)| store.key(id).is_some());
        // More missing than this call may embed: they are left to `mem index`, and their texts
        // are not even read (at 10,000 memories without vectors that was half a recall).
        let over = limit.is_some_and(|limit| missing.len() > limit);
        let mut paths: Vec<&str> = rekey.iter().map(|(_, w)| w.path.as_str()).collect();
        if !over {
            paths.extend(missing.iter().map(|(_, w)| w.path.as_str()));
        }
        let texts = files.index.embedding_texts(&paths)?;
        let store = &mut self.vectors.as_mut().expect("loaded").store;
        let mut todo = Vec::new();
        for (id, text) in texts {
            let key = Key { file: wanted[&id].hash, text: content_hash(text.as_bytes()) };
            if store.key(&id).is_some_and(|k| k.text == key.text) {
                store.rekey(&id, key.file);
                report.reused += 1;
            } else {
                todo.push((id, key, text));
            }
        }
        if over || limit.is_some_and(|limit| todo.len() > limit) {
            report.pending = todo.len() + if over { missing.len() } else { 0 };
            todo.clear();
        }
        todo.sort_by(|a, b| a.0.cmp(&b.0));
        let changed = report.removed + report.reused + todo.len() > 0 || report.discarded.is_some();
        progress.set_length(todo.len() as u64);
        let batch = files.config.embed.batch_size;
        // A window of texts at a time (saved after each full one), embedded shortest first
        // (less padding) and stored in id order, as before.
        for window in todo.chunks(CHECKPOINT) {
            let texts: Vec<&str> = window.iter().map(|(_, _, t)| t.as_str()).collect();
            let embedded = self
                .model
                .embedder()?
                .embed_by_length(&texts, batch, &mut |n| progress.inc(n as u64))?;
            let store = &mut self.vectors.as_mut().expect("loaded").store;
            for ((id, key, _), v) in window.iter().zip(&embedded) {
                store.insert(id, *key, v);
            }
            report.embedded += window.len();
            if window.len() == CHECKPOINT {
                self.save_vectors(files)?;
            }
        }
        progress.finish();
        if changed {
            self.save_vectors(files)?;
        }
        self.synced = (report.pending == 0).then(|| files.index.version());
        Ok(report)
    }

    /// The `k` memories nearest to `query_vector`, best first, with cosine at least
    /// `min_cosine`, among the vectors [`Vectors::sync`] left.
    pub(super) fn nearest(
        &self,
        query_vector: &[f32],
        k: usize,
        min_cosine: f32,
    ) -> Vec<(String, f32)> {
        let mut nearest =
            self.loaded_vectors().map_or_else(Vec::new, |s| s.nearest(query_vector, k));
        nearest.retain(|(_, cosine)| *cosine >= min_cosine);
        nearest
    }

    /// The loaded vectors (after [`Vectors::sync`] or a search), if any.
    pub(super) fn loaded_vectors(&self) -> Option<&VectorStore> {
        self.vectors.as_ref().map(|l| &l.store)
    }
}

/// Every indexed id with its file and that file's hash (the first file by path, for an id
/// used twice: its vector is that file's).
fn wanted(files: &Files) -> Result<FxHashMap<String, Wanted>> {
    let mut files: Vec<(&String, &crate::index::Entry)> =
        files.index.manifest()?.files.iter().collect();
    files.sort_by(|a, b| a.0.cmp(b.0));
    let mut wanted = FxHashMap::default();
    for (path, entry) in files {
        wanted
            .entry(entry.id.clone())
            .or_insert_with(|| Wanted { path: path.clone(), hash: entry.hash });
    }
    Ok(wanted)
}
