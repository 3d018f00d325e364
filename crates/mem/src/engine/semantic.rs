//! The embedding side of an engine: the configured model (loaded on first use and kept, so a
//! long-running process such as the MCP server loads it once) and the memories' vectors in
//! `.mem/vectors.bin`, brought up to date incrementally.

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::Engine;
use crate::config::RecallMode;
use crate::embed::vectors::{self, Discarded, Key, VectorStore};
use crate::embed::{EmbedError, Embedder, Loading, ModelSource};
use crate::index::content_hash;
use crate::store::Stamp;
use crate::{Error, Result};

/// Vectors written to disk at least every this many newly embedded memories, so an
/// interrupted `mem index` keeps most of its work.
const CHECKPOINT: usize = 256;

/// The model and vectors of an engine.
pub(super) struct Semantic {
    source: Option<ModelSource>,
    model: Slot,
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

enum Slot {
    Unloaded,
    /// Being loaded on a thread of its own ([`Engine::start_loading_model`]).
    Loading(Loading),
    Ready(Box<Embedder>),
    Failed(String),
}

struct Loaded {
    store: VectorStore,
    /// The file's stamp when it was read or written: another process's write is noticed and
    /// read again.
    stamp: Option<Stamp>,
}

impl Semantic {
    /// The model configured for `root` (not loaded yet).
    pub(super) fn configured(overrides: &crate::embed::ModelOverrides) -> Semantic {
        Semantic {
            source: ModelSource::configured(overrides),
            model: Slot::Unloaded,
            vectors: None,
            synced: None,
        }
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

/// The embedding of one text.
pub(super) fn embed_one(embedder: &mut Embedder, text: &str) -> Result<Vec<f32>> {
    let mut vectors = embedder.embed(&[text], 1)?;
    Ok(vectors.pop().unwrap_or_default())
}

fn file_stamp(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
}

impl Engine {
    /// The configured embedding model, if any.
    pub fn model_source(&self) -> Option<&ModelSource> {
        self.semantic.source.as_ref()
    }

    /// The recall mode to use: the one asked for, else `[embed] mode` when a model is
    /// configured, else BM25.
    pub fn recall_mode(&self, asked: Option<RecallMode>) -> RecallMode {
        match (asked, &self.semantic.source) {
            (Some(mode), _) => mode,
            (None, Some(_)) => self.config.embed.mode,
            (None, None) => RecallMode::Bm25,
        }
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

    /// The loaded model, loading it on first use. A model that failed to load is not tried
    /// again by this engine; the same error comes back.
    pub fn embedder(&mut self) -> Result<&mut Embedder> {
        let Some(source) = &self.semantic.source else {
            return Err(Error::NoModel);
        };
        match std::mem::replace(&mut self.semantic.model, Slot::Unloaded) {
            Slot::Unloaded => {
                self.semantic.model = match Embedder::load(source) {
                    Ok(embedder) => Slot::Ready(Box::new(embedder)),
                    Err(e) => Slot::Failed(e.to_string()),
                }
            }
            Slot::Loading(loading) => {
                self.semantic.model = match loading.wait() {
                    Ok(embedder) => Slot::Ready(Box::new(embedder)),
                    Err(e) => Slot::Failed(e.to_string()),
                }
            }
            done => self.semantic.model = done,
        }
        match &mut self.semantic.model {
            Slot::Ready(embedder) => Ok(embedder),
            Slot::Failed(message) => Err(Error::Embed(EmbedError::Unusable(message.clone()))),
            Slot::Unloaded | Slot::Loading(_) => unreachable!("loaded above"),
        }
    }

    /// Starts loading the configured model on another thread, when a recall in `mode` (else
    /// the configured one) is to use it and it is not loaded yet: a process that will embed
    /// soon loads it while it reads and refreshes the index. [`Engine::embedder`] waits for it.
    pub fn start_loading_model(&mut self, mode: Option<RecallMode>) {
        if self.wants_model(mode)
            && let Some(source) = self.semantic.source.clone()
            && let Some(loading) = Loading::start(source)
        {
            self.semantic.model = Slot::Loading(loading);
        }
    }

    /// Takes `loading` as this engine's model when it is the configured one, recall uses it
    /// and none is loaded yet (see [`Engine::start_loading_model`]); otherwise it is waited for
    /// and dropped.
    pub fn give_model(&mut self, loading: Loading) {
        if self.wants_model(None) && self.semantic.source.as_ref() == Some(loading.source()) {
            self.semantic.model = Slot::Loading(loading);
        }
    }

    /// Leaves the model to the end of the process instead of freeing it: for a short-lived
    /// process about to exit (a hook), which saves the milliseconds ONNX Runtime's session and
    /// the tokenizer take to free what the system reclaims at exit anyway.
    pub fn leave_model_to_exit(&mut self) {
        match std::mem::replace(&mut self.semantic.model, Slot::Unloaded) {
            Slot::Ready(embedder) => std::mem::forget(embedder),
            Slot::Loading(loading) => {
                if let Ok(embedder) = loading.wait() {
                    std::mem::forget(embedder);
                }
            }
            other => self.semantic.model = other,
        }
    }

    /// Whether a recall in `mode` (else the configured one) needs the model and it is neither
    /// loaded nor loading.
    fn wants_model(&self, mode: Option<RecallMode>) -> bool {
        matches!(self.semantic.model, Slot::Unloaded) && self.recall_mode(mode) != RecallMode::Bm25
    }

    /// Why the configured model could not be used, once this engine has tried to load it.
    pub fn embedding_warning(&self) -> Option<String> {
        match &self.semantic.model {
            Slot::Failed(message) => Some(format!("embedding model: {message}")),
            _ => None,
        }
    }

    /// The model's state, loading it if it is configured.
    pub fn model_status(&mut self) -> ModelStatus {
        let Some(source) = &self.semantic.source else {
            return ModelStatus::NotConfigured;
        };
        let dir = source.dir.display().to_string();
        let dim = match self.embedder() {
            Ok(embedder) => embedder.dim(),
            Err(e) => return ModelStatus::Broken { dir, message: e.to_string() },
        };
        let memories = self.index.len();
        let wanted = match self.wanted() {
            Ok(wanted) => wanted,
            Err(e) => return ModelStatus::Broken { dir, message: e.to_string() },
        };
        let vectors = match self.vector_store() {
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

    /// Every indexed id with its file and that file's hash (the first file by path, for an id
    /// used twice: its vector is that file's).
    fn wanted(&self) -> Result<FxHashMap<String, Wanted>> {
        let mut files: Vec<(&String, &crate::index::Entry)> =
            self.index.manifest()?.files.iter().collect();
        files.sort_by(|a, b| a.0.cmp(b.0));
        let mut wanted = FxHashMap::default();
        for (path, entry) in files {
            wanted
                .entry(entry.id.clone())
                .or_insert_with(|| Wanted { path: path.clone(), hash: entry.hash });
        }
        Ok(wanted)
    }

    /// The vectors, read from `.mem/vectors.bin` on first use or when another process has
    /// rewritten it. Needs the model (its checksum says whether the vectors are its own).
    fn vector_store(&mut self) -> Result<&VectorStore> {
        self.load_vectors()?;
        Ok(&self.semantic.vectors.as_ref().expect("loaded").store)
    }

    /// Reads the vector file if needed; the reason when it had to be started afresh.
    fn load_vectors(&mut self) -> Result<Option<Discarded>> {
        let path = vectors::path(&self.state_dir);
        let stamp = file_stamp(&path);
        if let Some(loaded) = &self.semantic.vectors
            && loaded.stamp == stamp
        {
            return Ok(None);
        }
        let (checksum, dim) = {
            let embedder = self.embedder()?;
            (embedder.checksum(), embedder.dim())
        };
        let (store, discarded) = VectorStore::load(&path, checksum, dim)?;
        self.semantic.vectors = Some(Loaded { store, stamp });
        self.semantic.synced = None;
        Ok(discarded)
    }

    fn save_vectors(&mut self) -> Result<()> {
        let path = vectors::path(&self.state_dir);
        let loaded = self.semantic.vectors.as_mut().expect("loaded before saving");
        loaded.store.save(&path)?;
        loaded.stamp = file_stamp(&path);
        Ok(())
    }

    /// Brings the vectors up to date with the index: embeds new and changed memories (at most
    /// `limit` of them; with more, none is embedded and they are counted as pending) and drops
    /// the vectors of memories no longer indexed. Call after a refresh.
    pub fn sync_vectors(
        &mut self,
        limit: Option<usize>,
        progress: &dyn crate::progress::Progress,
    ) -> Result<VectorReport> {
        let discarded = self.load_vectors()?.map(|why| match why {
            Discarded::OtherModel => "the vectors were computed by another model".to_string(),
            Discarded::Damaged(why) => format!("the vector file was unreadable ({why})"),
        });
        let mut report = VectorReport { discarded, ..VectorReport::default() };
        if self.semantic.synced == Some(self.index.version()) {
            return Ok(report);
        }
        let wanted = self.wanted()?;
        let store = &mut self.semantic.vectors.as_mut().expect("loaded").store;
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
        let texts = self.index.embedding_texts(&paths)?;
        let store = &mut self.semantic.vectors.as_mut().expect("loaded").store;
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
        let batch = self.config.embed.batch_size;
        // A window of texts at a time (saved after each full one), embedded shortest first
        // (less padding) and stored in id order, as before.
        for window in todo.chunks(CHECKPOINT) {
            let texts: Vec<&str> = window.iter().map(|(_, _, t)| t.as_str()).collect();
            let embedded =
                self.embedder()?.embed_by_length(&texts, batch, &mut |n| progress.inc(n as u64))?;
            let store = &mut self.semantic.vectors.as_mut().expect("loaded").store;
            for ((id, key, _), v) in window.iter().zip(&embedded) {
                store.insert(id, *key, v);
            }
            report.embedded += window.len();
            if window.len() == CHECKPOINT {
                self.with_lock(|engine| engine.save_vectors())?;
            }
        }
        progress.finish();
        if changed {
            self.with_lock(|engine| engine.save_vectors())?;
        }
        self.semantic.synced = (report.pending == 0).then(|| self.index.version());
        Ok(report)
    }

    /// The query's embedding.
    pub(super) fn embed_query(&mut self, query: &str) -> Result<Vec<f32>> {
        embed_one(self.embedder()?, query)
    }

    /// Takes the model out of the engine (loading it first), so that it can run beside a
    /// refresh; [`Engine::put_embedder`] gives it back.
    pub(super) fn take_embedder(&mut self) -> Result<Box<Embedder>> {
        self.embedder()?;
        match std::mem::replace(&mut self.semantic.model, Slot::Unloaded) {
            Slot::Ready(embedder) => Ok(embedder),
            _ => unreachable!("embedder() succeeded"),
        }
    }

    /// Gives back the model [`Engine::take_embedder`] took.
    pub(super) fn put_embedder(&mut self, embedder: Box<Embedder>) {
        self.semantic.model = Slot::Ready(embedder);
    }

    /// Moves this engine's loaded model into `to` when both are configured with the same
    /// model and `to` has not loaded it: two roots searched together load it once. Whether
    /// it moved.
    pub(super) fn lend_model(&mut self, to: &mut Engine) -> bool {
        if self.semantic.source != to.semantic.source
            || !matches!(to.semantic.model, Slot::Unloaded)
        {
            return false;
        }
        match std::mem::replace(&mut self.semantic.model, Slot::Unloaded) {
            loaded @ (Slot::Ready(_) | Slot::Loading(_)) => {
                to.semantic.model = loaded;
                true
            }
            other => {
                self.semantic.model = other;
                false
            }
        }
    }

    /// The `k` memories nearest to `query_vector`, best first, with cosine at least
    /// `min_cosine`, among the vectors [`Engine::sync_vectors`] left.
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

    /// The loaded vectors (after [`Engine::sync_vectors`] or a search), if any.
    pub(super) fn loaded_vectors(&self) -> Option<&VectorStore> {
        self.semantic.vectors.as_ref().map(|l| &l.store)
    }
}
