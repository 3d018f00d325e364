//! The search index under `.mem/`: a tantivy index of every memory plus a manifest of what was
//! indexed, brought up to date incrementally before each query.
//!
//! **Invariant:** everything here is derived from the memory files. Deleting `.mem/` loses
//! nothing; the next refresh rebuilds it.

mod columns;
mod coverage;
mod cues;
mod episodes;
mod hybrid;
mod manifest;
mod records;
mod refresh;
mod schema;
mod search;
mod standing;
mod stats;
pub mod synonyms;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{IndexReader, ReloadPolicy, Searcher, TantivyDocument};

use crate::{Error, Result};

pub use self::hybrid::VectorSide;
pub use self::manifest::{Entry, Manifest, content_hash};
pub use self::records::{Record, Tally};
pub use self::refresh::{BadFile, Reading, RefreshReport, Scope};
pub use self::schema::{Fields, SCHEMA_VERSION, Stamp, VALID_FOREVER, id_key};
pub use self::search::{Hit, Search, Semantic, Validity, expansions};

/// Folder of the tantivy index inside the state folder.
const INDEX_DIR: &str = "index";
/// Written by a refresh that re-hashed files only because they were too recent to trust and
/// found them as indexed: the index state and the verification time (see
/// [`MemoryIndex::verified_ns`]) that lets the next refresh trust them without a commit.
const VERIFIED_STAMP: &str = "verified";
/// Written just before a refresh reads files: its mtime is the file system's clock then.
const CLOCK_STAMP: &str = "clock";

/// What the index commit records besides the documents.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    schema: u32,
    /// Random id of this index, new at every rebuild, so that a rebuilt index is never taken
    /// for the one a long-running process opened before.
    #[serde(default)]
    instance: u64,
    /// The generation of this commit.
    manifest: u64,
    /// Where its manifest is: base and log length.
    #[serde(default)]
    place: manifest::Place,
    /// When the files were verified, as [`MemoryIndex::verified_ns`].
    #[serde(default)]
    verified: i64,
}

/// The memory index of one root.
pub struct MemoryIndex {
    state_dir: PathBuf,
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    /// What was indexed for each file, read on first use: a recall that finds the folders
    /// unchanged never decodes it (see [`MemoryIndex::manifest`]).
    manifest: std::sync::OnceLock<Manifest>,
    /// When the files were verified, by the file system's clock (ns): every indexed file
    /// whose mtime is settled at this time ([`crate::store::settled`]) was read at a time when
    /// it was settled, so while its size and mtime stay as indexed, so does its content.
    /// From the commit's payload, or the `verified` stamp when it names this commit.
    verified_ns: i64,
    generation: u64,
    instance: u64,
    /// Where the manifest of this commit is.
    place: manifest::Place,
    /// The size of its base file, for the choice between appending and a new base.
    base_bytes: u64,
}

impl MemoryIndex {
    /// Opens the index in `state_dir`, creating it if absent and rebuilding it (empty, to be
    /// filled by [`MemoryIndex::refresh`]) if it is corrupt or of another version. The second
    /// value is a one-line notice when that happened.
    pub fn open(state_dir: &Path) -> Result<(MemoryIndex, Option<String>)> {
        let index_dir = state_dir.join(INDEX_DIR);
        if !index_dir.join("meta.json").exists() {
            return Ok((MemoryIndex::create(state_dir)?, None));
        }
        // tantivy can panic on some damaged files instead of returning an error; a damaged
        // index is derived state, so both cases lead to a rebuild.
        let opened = std::panic::catch_unwind(|| MemoryIndex::try_open(state_dir))
            .unwrap_or_else(|panic| Err(format!("is corrupt ({})", panic_message(&*panic))));
        match opened {
            Ok(index) => Ok((index, None)),
            Err(reason) => {
                let notice = format!(
                    "the index in {} {reason}; rebuilding it from the memory files",
                    index_dir.display()
                );
                Ok((MemoryIndex::create(state_dir)?, Some(notice)))
            }
        }
    }

    /// Deletes the index and starts an empty one.
    pub fn create(state_dir: &Path) -> Result<MemoryIndex> {
        let index_dir = state_dir.join(INDEX_DIR);
        if index_dir.exists() {
            std::fs::remove_dir_all(&index_dir).map_err(|e| Error::io(&index_dir, e))?;
        }
        remove_manifests(state_dir, None)?;
        std::fs::create_dir_all(&index_dir).map_err(|e| Error::io(&index_dir, e))?;
        let (schema, fields) = Fields::schema();
        let index = tantivy::Index::create_in_dir(&index_dir, schema)?;
        register_analyzers(&index);
        let manifest = Manifest::default();
        let base_bytes = manifest.save(state_dir, 0)?;
        let manifest = std::sync::OnceLock::from(manifest);
        let mut writer = writer(&index, 1)?;
        let mut commit = writer.prepare_commit()?;
        let instance = random_u64();
        let place = manifest::Place::default();
        commit.set_payload(&payload(instance, 0, place, 0));
        commit.commit()?;
        drop(writer);
        let reader = open_reader(&index)?;
        Ok(MemoryIndex {
            state_dir: state_dir.to_path_buf(),
            index,
            reader,
            fields,
            manifest,
            verified_ns: 0,
            generation: 0,
            instance,
            place,
            base_bytes,
        })
    }

    fn try_open(state_dir: &Path) -> std::result::Result<MemoryIndex, String> {
        let index_dir = state_dir.join(INDEX_DIR);
        check_managed(&index_dir)?;
        let index =
            tantivy::Index::open_in_dir(&index_dir).map_err(|e| format!("is corrupt ({e})"))?;
        let metas = index.load_metas().map_err(|e| format!("is corrupt ({e})"))?;
        let payload: Payload = metas
            .payload
            .as_deref()
            .and_then(|p| serde_json::from_str(p).ok())
            .ok_or("has no readable commit payload")?;
        if payload.schema != SCHEMA_VERSION {
            return Err(format!(
                "has format version {} and this mem uses {SCHEMA_VERSION}",
                payload.schema
            ));
        }
        let (schema, fields) = Fields::schema();
        if index.schema() != schema {
            return Err("has an unexpected schema".into());
        }
        register_analyzers(&index);
        // The manifest is decoded when first needed; here its files only have to exist (the
        // log as long as the commit says).
        let place = payload.place;
        let base = std::fs::metadata(manifest::path(state_dir, place.base))
            .map_err(|e| format!("has an unreadable manifest ({e})"))?;
        if place.log_len > 0 {
            let log = std::fs::metadata(manifest::log_path(state_dir, place.base))
                .map_err(|e| format!("has an unreadable manifest ({e})"))?;
            if log.len() < place.log_len {
                return Err("has an unreadable manifest (its log is cut short)".into());
            }
        }
        let stamped = read_verified(state_dir, (payload.instance, payload.manifest));
        let verified_ns = payload.verified.max(stamped.unwrap_or(0));
        let reader = open_reader(&index).map_err(|e| format!("is corrupt ({e})"))?;
        check_segments(&reader.searcher()).map_err(|e| format!("is corrupt ({e})"))?;
        Ok(MemoryIndex {
            state_dir: state_dir.to_path_buf(),
            index,
            reader,
            fields,
            manifest: std::sync::OnceLock::new(),
            verified_ns,
            generation: payload.manifest,
            instance: payload.instance,
            place,
            base_bytes: base.len(),
        })
    }

    /// Which state of the index this is: (instance, generation), new at every rebuild and
    /// every commit.
    pub fn version(&self) -> (u64, u64) {
        (self.instance, self.generation)
    }

    /// Whether the index on disk is still the commit this handle reads (no other process has
    /// committed since).
    pub fn is_current(&self) -> bool {
        self.index
            .load_metas()
            .ok()
            .and_then(|m| m.payload)
            .and_then(|p| serde_json::from_str::<Payload>(&p).ok())
            .is_some_and(|p| {
                p.manifest == self.generation
                    && p.instance == self.instance
                    && p.schema == SCHEMA_VERSION
            })
    }

    /// Whether a file indexed with this mtime (ns since the epoch) can be trusted unchanged
    /// while its size and mtime are: it is older than the last verification by more than the
    /// file system's timestamp granularity.
    pub fn trusts(&self, mtime_ns: i64) -> bool {
        crate::store::settled(mtime_ns, self.verified_ns)
    }

    /// Number of indexed memories.
    pub fn len(&self) -> usize {
        self.reader.searcher().num_docs() as usize
    }

    /// Whether the index holds no memory.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The manifest of what is indexed, decoded from its file on first use; one that cannot
    /// be read is an index error (the index is then rebuilt, see
    /// [`crate::engine::Engine::refresh`]).
    pub fn manifest(&self) -> Result<&Manifest> {
        if let Some(manifest) = self.manifest.get() {
            return Ok(manifest);
        }
        let manifest = Manifest::load(&self.state_dir, self.place).map_err(unreadable_manifest)?;
        Ok(self.manifest.get_or_init(|| manifest))
    }

    /// The manifest, moved out of this handle (read from its file if it was not yet): the
    /// caller puts it back, or the next use reads the file again.
    fn take_manifest(&mut self) -> Result<Manifest> {
        self.manifest()?;
        Ok(self.manifest.take().expect("loaded above"))
    }

    /// Bytes used on disk by the index and its manifest.
    pub fn size_on_disk(&self) -> u64 {
        fn du(p: &Path) -> u64 {
            match std::fs::symlink_metadata(p) {
                Ok(m) if m.is_dir() => std::fs::read_dir(p)
                    .map(|rd| rd.flatten().map(|e| du(&e.path())).sum())
                    .unwrap_or(0),
                Ok(m) => m.len(),
                Err(_) => 0,
            }
        }
        du(&self.state_dir.join(INDEX_DIR))
            + du(&manifest::path(&self.state_dir, self.place.base))
            + du(&manifest::log_path(&self.state_dir, self.place.base))
    }

    /// Paths of the files whose memory has `id`, in order (found by the index's id column,
    /// without the manifest).
    pub fn paths_of(&self, id: &str) -> Result<Vec<String>> {
        let searcher = self.reader.searcher();
        let term = tantivy::Term::from_field_text(self.fields.id, id);
        let query = tantivy::query::TermQuery::new(term, IndexRecordOption::Basic);
        let mut paths = Vec::new();
        for address in searcher.search(&query, &tantivy::collector::DocSetCollector)? {
            let doc: TantivyDocument = searcher.doc(address)?;
            paths.push(text_of(&doc, self.fields.path));
        }
        paths.sort();
        Ok(paths)
    }
}

/// The message of a panic caught around tantivy.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    crate::error::panic_message(panic, "the index library panicked")
}

/// The error for a manifest that cannot be read.
fn unreadable_manifest(e: Error) -> Error {
    Error::Index(tantivy::TantivyError::InvalidArgument(format!(
        "the manifest of the index cannot be read ({e})"
    )))
}

/// The file system's clock (ns since the epoch): the mtime of the `clock` stamp, written now.
fn clock_ns(state_dir: &Path) -> Result<i64> {
    let path = state_dir.join(CLOCK_STAMP);
    let file = crate::store::write_cache(&path, b"")
        .and_then(|()| std::fs::metadata(&path).map_err(|e| Error::io(&path, e)))?;
    Ok(crate::store::mtime_ns(&file))
}

/// The verification time the `verified` stamp records for the index state `version`, if it
/// names that state.
fn read_verified(state_dir: &Path, version: (u64, u64)) -> Option<i64> {
    let text = std::fs::read_to_string(state_dir.join(VERIFIED_STAMP)).ok()?;
    let mut words = text.split_ascii_whitespace();
    let instance: u64 = words.next()?.parse().ok()?;
    let generation: u64 = words.next()?.parse().ok()?;
    let verified: i64 = words.next()?.parse().ok()?;
    ((instance, generation) == version).then_some(verified)
}

/// A random number, from the standard library's per-process hash keys.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

fn payload(instance: u64, generation: u64, place: manifest::Place, verified: i64) -> String {
    let payload =
        Payload { schema: SCHEMA_VERSION, instance, manifest: generation, place, verified };
    serde_json::to_string(&payload).expect("payload serialises")
}

fn register_analyzers(index: &tantivy::Index) {
    use crate::tokenizer;
    index.tokenizers().register(tokenizer::ANALYZER, tokenizer::analyzer());
    index.tokenizers().register(tokenizer::TAG_ANALYZER, tokenizer::tag_analyzer());
}

/// An index writer with `threads` indexing threads of 30 MB each and as many merge threads.
/// tantivy starts four merge threads with every writer by default: three needless thread
/// starts for a recall that commits one file, and two cores never run more merges than two.
fn writer(index: &tantivy::Index, threads: usize) -> tantivy::Result<tantivy::IndexWriter> {
    let options = tantivy::indexer::IndexWriterOptions::builder()
        .num_worker_threads(threads)
        .memory_budget_per_thread(30_000_000)
        .num_merge_threads(threads)
        .build();
    index.writer_with_options(options)
}

fn open_reader(index: &tantivy::Index) -> tantivy::Result<IndexReader> {
    index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()
}

/// Checks that every segment has the fast columns the scorer reads.
fn check_segments(searcher: &Searcher) -> tantivy::Result<()> {
    for segment in searcher.segment_readers() {
        columns::Columns::open(segment, 0)?;
    }
    Ok(())
}

/// tantivy's list of the files it manages in an index folder, which it deletes when they are
/// no longer used.
const MANAGED_FILE: &str = ".managed.json";

/// Refuses an index whose list of managed files names anything but a plain file name: tantivy
/// would delete such a path relative to the index folder, or absolute, wherever it is (a
/// `.mem/index/` committed to a cloned repository could name any file).
fn check_managed(index_dir: &Path) -> std::result::Result<(), String> {
    let Ok(bytes) = std::fs::read(index_dir.join(MANAGED_FILE)) else { return Ok(()) };
    let names: Vec<String> =
        serde_json::from_slice(&bytes).map_err(|_| format!("has an unreadable {MANAGED_FILE}"))?;
    let plain = |n: &str| {
        !n.is_empty() && n != "." && n != ".." && !n.contains(['/', '\\']) && !n.contains('\0')
    };
    match names.iter().find(|n| !plain(n)) {
        Some(bad) => Err(format!("lists {bad:?} among its files, outside its folder")),
        None => Ok(()),
    }
}

/// Deletes the manifest files (bases and logs) of every base but `keep`.
fn remove_manifests(state_dir: &Path, keep: Option<u64>) -> Result<()> {
    let entries = match std::fs::read_dir(state_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(state_dir, e)),
    };
    let keep_names = keep.map(|g| [format!("manifest-{g}.bin"), format!("manifest-{g}.log")]);
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("manifest-")
            && (name.ends_with(".bin") || name.ends_with(".log"))
            && !keep_names.as_ref().is_some_and(|k| k.contains(&name))
        {
            std::fs::remove_file(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
        }
    }
    Ok(())
}

fn text_of(doc: &TantivyDocument, field: tantivy::schema::Field) -> String {
    doc.get_first(field).and_then(|v| v.as_str()).unwrap_or_default().to_string()
}

/// Collapses runs of whitespace into single spaces.
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
