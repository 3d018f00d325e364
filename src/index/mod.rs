//! The search index under `.mem/`: a tantivy index of every memory plus a manifest of what was
//! indexed, brought up to date incrementally before each query.
//!
//! **Invariant:** everything here is derived from the memory files. Deleting `.mem/` loses
//! nothing; the next refresh rebuilds it.

mod hybrid;
mod manifest;
mod schema;
mod stats;
pub mod synonyms;
pub mod tokenizer;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::{
    AllQuery, BooleanQuery, BoostQuery, Occur, Query, RangeQuery, TermQuery, TermSetQuery,
};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{
    DocAddress, IndexReader, ReloadPolicy, Searcher, SegmentReader, TantivyDocument, Term,
};

pub use self::hybrid::VectorSide;
pub use self::manifest::{Entry, Manifest, content_hash};
pub use self::schema::{Fields, SCHEMA_VERSION, VALID_FOREVER, id_key};
use self::synonyms::Thesaurus;
use crate::config::Ranking;
use crate::format::{Memory, MemoryType};
use crate::score::{self, Components};
use crate::store::{FileStat, ReadError, Scan, ScanIssue, read_limited};
use crate::{Error, Result};

/// Folder of the tantivy index inside the state folder.
const INDEX_DIR: &str = "index";
/// A file whose mtime is this close to the manifest's is re-hashed: it may have changed again
/// within the file system's timestamp granularity after it was indexed.
const RACY_WINDOW_NS: i64 = 2_000_000_000;
/// A file touched after a refresh that had to re-hash files only because they were too recent
/// to trust; its mtime lets the next refresh trust them.
const VERIFIED_STAMP: &str = "verified";
/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 160;

/// What the index commit records besides the documents.
#[derive(Debug, Serialize, Deserialize)]
struct Payload {
    schema: u32,
    /// Random id of this index, new at every rebuild, so that a rebuilt index is never taken
    /// for the one a long-running process opened before.
    #[serde(default)]
    instance: u64,
    manifest: u64,
}

/// The memory index of one root.
pub struct MemoryIndex {
    state_dir: PathBuf,
    index: tantivy::Index,
    reader: IndexReader,
    fields: Fields,
    manifest: Manifest,
    /// When the files were last verified against the manifest, by the file system's clock:
    /// the later mtime of the manifest and of the `verified` stamp.
    verified_ns: i64,
    generation: u64,
    instance: u64,
}

/// What a refresh found and did.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Memories indexed for the first time.
    pub added: usize,
    /// Memories re-indexed because their content changed.
    pub updated: usize,
    /// Memories removed from the index (file deleted, or now unreadable).
    pub removed: usize,
    /// Files left as they were.
    pub unchanged: usize,
    /// Files whose mtime changed but content did not.
    pub touched: usize,
    /// Files that could not be read or parsed, each as `path:line: reason`.
    pub bad: Vec<Error>,
    /// Folders or files the walk could not use.
    pub scan_issues: Vec<ScanIssue>,
    /// Ids used by more than one file.
    pub duplicates: Vec<(String, Vec<String>)>,
    /// Newly indexed memories whose `created` is after `now` (their age counts as zero).
    pub future: Vec<(String, Timestamp)>,
    /// One-line notices (an index rebuilt because it was corrupt or outdated).
    pub notices: Vec<String>,
    /// One-line warnings about something the user should fix (an unusable embedding model).
    pub warnings: Vec<String>,
}

impl RefreshReport {
    /// Whether the index was written.
    pub fn changed(&self) -> bool {
        self.added + self.updated + self.removed + self.touched > 0
    }
}

/// A memory as the index knows it.
#[derive(Clone, Debug, Serialize)]
pub struct Record {
    /// The memory's id.
    pub id: String,
    /// Path relative to the root.
    pub path: String,
    /// Title (first heading, else first line).
    pub title: String,
    /// Type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Importance 1..=10.
    pub importance: u8,
    /// Creation time.
    pub created: Timestamp,
    /// Last access, else creation time.
    pub last_access: Timestamp,
    /// Tags.
    pub tags: Vec<String>,
    /// Origin, if recorded.
    pub source: Option<String>,
    /// When it became invalid, if it did.
    pub invalid_at: Option<Timestamp>,
    /// The memory that replaces it, if any.
    pub superseded_by: Option<String>,
}

/// One recalled memory with every part of its score.
#[derive(Clone, Debug, Serialize)]
pub struct Hit {
    /// 1-based rank.
    pub rank: usize,
    /// The memory.
    #[serde(flatten)]
    pub record: Record,
    /// Final score, `relevance × recency factor × importance factor`, in 0..=1.
    pub score: f64,
    /// The normalised components the score combines.
    pub components: Components,
    /// Raw BM25 score of this memory.
    pub bm25: f32,
    /// Highest BM25 score among all matches (relevance = bm25 / max).
    pub max_bm25: f32,
    /// The cosine side of a vector or hybrid recall, and how the two were fused.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub semantic: Option<Semantic>,
    /// Age in days used for recency (since last access, else creation).
    pub age_days: f64,
    /// A short extract of the body around the matched words.
    pub snippet: String,
}

/// How a memory fared on the vector side of a recall.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Semantic {
    /// Cosine between the query's and the memory's embedding (absent: the memory has no
    /// vector yet).
    pub cosine: Option<f32>,
    /// Rank among the BM25 candidates (1 = best), if it was one.
    pub bm25_rank: Option<usize>,
    /// Rank among the vector candidates (1 = best), if it was one.
    pub vector_rank: Option<usize>,
    /// The fused relevance before it is divided by the best one (`relevance = fused / max`).
    pub fused: f64,
}

/// One memory chosen for the result list, before its stored fields are read.
struct Picked {
    address: DocAddress,
    relevance: f64,
    bm25: f32,
    max_bm25: f32,
    semantic: Option<Semantic>,
}

/// A recall request.
#[derive(Clone, Debug)]
pub struct Search<'a> {
    /// The user's words.
    pub text: &'a str,
    /// Keep only these types (all when empty).
    pub kinds: &'a [MemoryType],
    /// Keep only memories carrying every one of these tags.
    pub tags: &'a [String],
    /// How many hits at most.
    pub limit: usize,
    /// The time recency is measured from.
    pub now: Timestamp,
    /// Weights.
    pub ranking: &'a Ranking,
    /// Synonyms added to the query's words.
    pub thesaurus: &'a Thesaurus,
    /// Weight of a synonym match relative to a direct match (0 disables expansion).
    pub expansion_weight: f32,
    /// Which memories are valid enough to return (see [`Validity`]).
    pub validity: Validity,
}

/// Which memories a query may return, by their `invalid_at` and `created`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Validity {
    /// Those not invalidated at this time (the default: `now`).
    ValidAt(Timestamp),
    /// Those that existed and were valid at this time (`--as-of`).
    AsOf(Timestamp),
    /// All, invalid ones included (`--include-invalid`).
    All,
}

/// The outcome of reading and parsing one file during a refresh.
enum Outcome {
    Parsed { doc: TantivyDocument, entry: Entry, created: Timestamp },
    Same(Entry),
    Bad(Error),
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
        manifest.save(state_dir, 0)?;
        let mut writer: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000)?;
        let mut commit = writer.prepare_commit()?;
        let instance = random_u64();
        commit.set_payload(&payload(instance, 0));
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
        })
    }

    fn try_open(state_dir: &Path) -> std::result::Result<MemoryIndex, String> {
        let index_dir = state_dir.join(INDEX_DIR);
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
        let (manifest, manifest_ns) = Manifest::load(state_dir, payload.manifest)
            .map_err(|e| format!("has an unreadable manifest ({e})"))?;
        let verified_ns = file_mtime_ns(&state_dir.join(VERIFIED_STAMP)).max(manifest_ns);
        let reader = open_reader(&index).map_err(|e| format!("is corrupt ({e})"))?;
        check_segments(&reader.searcher()).map_err(|e| format!("is corrupt ({e})"))?;
        Ok(MemoryIndex {
            state_dir: state_dir.to_path_buf(),
            index,
            reader,
            fields,
            manifest,
            verified_ns,
            generation: payload.manifest,
            instance: payload.instance,
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

    /// Number of indexed memories.
    pub fn len(&self) -> usize {
        self.manifest.files.len()
    }

    /// Whether the index holds no memory.
    pub fn is_empty(&self) -> bool {
        self.manifest.files.is_empty()
    }

    /// The manifest of what is indexed.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
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
        du(&self.state_dir.join(INDEX_DIR)) + du(&manifest::path(&self.state_dir, self.generation))
    }

    /// Brings the index up to date with `scan`: reads only new files and files whose size or
    /// mtime changed (or that changed too recently to trust their mtime), parses them in
    /// parallel, and commits once. Bad files are reported and left out.
    pub fn refresh(
        &mut self,
        root: &Path,
        scan: Scan,
        max_file_bytes: u64,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = RefreshReport { scan_issues: scan.issues, ..Default::default() };
        let mut candidates: Vec<(&FileStat, Option<&Entry>)> = Vec::new();
        let mut known = 0;
        for file in &scan.files {
            let previous = self.manifest.files.get(&file.rel);
            known += usize::from(previous.is_some());
            match previous {
                Some(e)
                    if e.size == file.size
                        && e.mtime_ns == file.mtime_ns
                        && e.mtime_ns + RACY_WINDOW_NS < self.verified_ns =>
                {
                    report.unchanged += 1
                }
                _ => candidates.push((file, previous)),
            }
        }
        // Every indexed file was seen unless fewer known files were found than are indexed.
        let removed: Vec<String> = if known == self.manifest.files.len() {
            Vec::new()
        } else {
            let seen: rustc_hash::FxHashSet<&str> =
                scan.files.iter().map(|f| f.rel.as_str()).collect();
            self.manifest.files.keys().filter(|rel| !seen.contains(&rel[..])).cloned().collect()
        };

        progress.set_length(candidates.len() as u64);
        let fields = self.fields;
        let outcomes: Vec<(&str, bool, Outcome)> = candidates
            .par_iter()
            .map(|(file, previous)| {
                let outcome = read_one(root, file, *previous, max_file_bytes, &fields);
                progress.inc(1);
                (file.rel.as_str(), previous.is_some(), outcome)
            })
            .collect();
        progress.finish();

        let mut rechecked = 0;
        let mut changes: Vec<(&str, Option<Entry>)> = Vec::new();
        let mut deletes: Vec<&str> = removed.iter().map(String::as_str).collect();
        let mut adds: Vec<TantivyDocument> = Vec::new();
        for (rel, was_indexed, outcome) in outcomes {
            match outcome {
                Outcome::Same(entry) => {
                    if self.manifest.files.get(rel) == Some(&entry) {
                        report.unchanged += 1;
                        rechecked += 1;
                    } else {
                        report.touched += 1;
                        changes.push((rel, Some(entry)));
                    }
                }
                Outcome::Parsed { doc, entry, created } => {
                    if created > now {
                        report.future.push((rel.to_string(), created));
                    }
                    if was_indexed {
                        report.updated += 1;
                        deletes.push(rel);
                    } else {
                        report.added += 1;
                    }
                    changes.push((rel, Some(entry)));
                    adds.push(doc);
                }
                Outcome::Bad(error) => {
                    if was_indexed {
                        report.removed += 1;
                        deletes.push(rel);
                        changes.push((rel, None));
                    }
                    report.bad.push(error);
                }
            }
        }
        report.removed += removed.len();
        report.bad.sort_by_key(|e| e.to_string());
        report.future.sort();

        if report.changed() {
            let mut next = self.manifest.clone();
            for rel in &removed {
                next.files.remove(rel);
            }
            for (rel, entry) in changes {
                match entry {
                    Some(entry) => next.files.insert(rel.to_string(), entry),
                    None => next.files.remove(rel),
                };
            }
            self.commit(next, &deletes, adds)?;
            // Only a change can introduce a duplicate; `mem stats` and `mem index` ask anyway.
            report.duplicates = self.manifest.duplicate_ids();
        } else if rechecked > 0 {
            // Their content was just verified: record when, so the next refresh trusts them
            // once they are older than the window. Losing this stamp only costs re-hashing.
            let stamp = self.state_dir.join(VERIFIED_STAMP);
            std::fs::write(&stamp, b"").map_err(|e| Error::io(&stamp, e))?;
            self.verified_ns = file_mtime_ns(&stamp).max(self.verified_ns);
        }
        Ok(report)
    }

    fn commit(
        &mut self,
        next: Manifest,
        deletes: &[&str],
        adds: Vec<TantivyDocument>,
    ) -> Result<()> {
        let threads = if adds.len() >= 2_000 { 2 } else { 1 };
        let mut writer: tantivy::IndexWriter =
            self.index.writer_with_num_threads(threads, threads * 30_000_000)?;
        for rel in deletes {
            writer.delete_term(Term::from_field_text(self.fields.path, rel));
        }
        for doc in adds {
            writer.add_document(doc)?;
        }
        let generation = self.generation + 1;
        next.save(&self.state_dir, generation)?;
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&payload(self.instance, generation));
        commit.commit()?;
        writer.wait_merging_threads()?;
        remove_manifests(&self.state_dir, Some(generation))?;
        self.verified_ns = file_mtime_ns(&manifest::path(&self.state_dir, generation));
        self.manifest = next;
        self.generation = generation;
        self.reader.reload()?;
        Ok(())
    }

    /// Paths of the files whose memory has `id`.
    pub fn paths_of(&self, id: &str) -> Vec<String> {
        let mut paths: Vec<String> = self
            .manifest
            .files
            .iter()
            .filter(|(_, e)| e.id == id)
            .map(|(p, _)| p.clone())
            .collect();
        paths.sort();
        paths
    }

    /// The text query: each analysed word of the query, and (at `expansion_weight`) each of
    /// their synonyms, searched in title, body and tags.
    fn text_query(&self, search: &Search) -> Option<Box<dyn Query>> {
        let query_tokens = tokenizer::tokens(search.text);
        if query_tokens.is_empty() {
            return None;
        }
        let expansions = if search.expansion_weight > 0.0 {
            search.thesaurus.expand(&query_tokens)
        } else {
            BTreeSet::new()
        };
        let words: BTreeSet<&String> = query_tokens.iter().collect();
        let weighted = words
            .into_iter()
            .map(|w| (w, 1.0))
            .chain(expansions.iter().map(|w| (w, search.expansion_weight)));
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (word, weight) in weighted {
            for (field, boost) in [
                (self.fields.title, search.ranking.title_boost),
                (self.fields.body, 1.0),
                (self.fields.tags, search.ranking.tags_boost),
            ] {
                let term = TermQuery::new(
                    Term::from_field_text(field, word),
                    IndexRecordOption::WithFreqs,
                );
                let boosted = BoostQuery::new(Box::new(term), boost * weight);
                clauses.push((Occur::Should, Box::new(boosted)));
            }
        }
        Some(Box::new(BooleanQuery::new(clauses)))
    }

    /// Clauses that keep only memories valid as asked.
    fn validity(&self, validity: Validity) -> Vec<(Occur, Box<dyn Query>)> {
        use std::ops::Bound;
        let valid_after = |at: Timestamp| -> Box<dyn Query> {
            let lower = Term::from_field_i64(self.fields.invalid_at, at.as_second());
            Box::new(RangeQuery::new(Bound::Excluded(lower), Bound::Unbounded))
        };
        match validity {
            Validity::All => Vec::new(),
            Validity::ValidAt(at) => vec![(Occur::Must, valid_after(at))],
            Validity::AsOf(at) => {
                let upper = Term::from_field_i64(self.fields.created, at.as_second());
                let created: Box<dyn Query> =
                    Box::new(RangeQuery::new(Bound::Unbounded, Bound::Included(upper)));
                vec![(Occur::Must, valid_after(at)), (Occur::Must, created)]
            }
        }
    }

    /// Clauses that keep only the requested types and tags.
    fn filters(&self, kinds: &[MemoryType], tags: &[String]) -> Vec<(Occur, Box<dyn Query>)> {
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if !kinds.is_empty() {
            let any_kind: Vec<(Occur, Box<dyn Query>)> = kinds
                .iter()
                .map(|k| {
                    let term = Term::from_field_text(self.fields.kind, k.as_str());
                    (Occur::Should, Box::new(TermQuery::new(term, IndexRecordOption::Basic)) as _)
                })
                .collect();
            clauses.push((Occur::Must, Box::new(BooleanQuery::new(any_kind))));
        }
        for tag in tags {
            let term = Term::from_field_text(self.fields.tag, &tag.trim().to_lowercase());
            clauses.push((Occur::Must, Box::new(TermQuery::new(term, IndexRecordOption::Basic))));
        }
        clauses
    }

    /// Ranks every memory matching `search.text` by relevance × recency × importance and
    /// returns the best `search.limit`. No match gives an empty list.
    pub fn search(&self, search: &Search) -> Result<Vec<Hit>> {
        let Some(text_query) = self.text_query(search) else {
            return Ok(Vec::new());
        };
        let mut clauses = self.filters(search.kinds, search.tags);
        clauses.extend(self.validity(search.validity));
        let query: Box<dyn Query> = if clauses.is_empty() {
            text_query.box_clone()
        } else {
            clauses.push((Occur::Must, text_query.box_clone()));
            Box::new(BooleanQuery::new(clauses))
        };
        let searcher = self.reader.searcher();
        check_segments(&searcher)?;
        let now = search.now.as_second();
        let ranking = search.ranking.clone();
        let ranked =
            TopDocs::with_limit(search.limit.max(1)).tweak_score(move |segment: &SegmentReader| {
                let ff = segment.fast_fields();
                let importance = ff
                    .u64("importance")
                    .expect("checked by check_segments")
                    .first_or_default_col(u64::from(crate::format::DEFAULT_IMPORTANCE));
                let last = ff.i64("last_access").expect("checked").first_or_default_col(now);
                let tiebreak = ff.u64("tiebreak").expect("checked").first_or_default_col(0);
                let ranking = ranking.clone();
                move |doc: tantivy::DocId, bm25: tantivy::Score| {
                    let c = Components {
                        relevance: f64::from(bm25),
                        recency: score::recency(score::age_days(now, last.get_val(doc)), &ranking),
                        importance: score::importance(importance.get_val(doc) as u8),
                    };
                    (score::combine(&c, &ranking), tiebreak.get_val(doc), bm25)
                }
            });
        let best = TopDocs::with_limit(1).order_by_score();
        let live = stats::LiveStats::new(&searcher);
        let (ranked, best) =
            searcher.search_with_statistics_provider(&query, &(ranked, best), &live)?;
        let max_bm25 = best.first().map(|(s, _)| *s).unwrap_or(0.0);
        if ranked.is_empty() || max_bm25 <= 0.0 {
            return Ok(Vec::new());
        }
        let picked = ranked
            .into_iter()
            .map(|((_, _, bm25), address)| Picked {
                address,
                relevance: f64::from(bm25) / f64::from(max_bm25),
                bm25,
                max_bm25,
                semantic: None,
            })
            .collect();
        self.hits(&searcher, Some(&*query), picked, search)
    }

    /// Loads the stored fields and snippets of `picked` (in rank order) and scores them.
    fn hits(
        &self,
        searcher: &Searcher,
        text_query: Option<&dyn Query>,
        picked: Vec<Picked>,
        search: &Search,
    ) -> Result<Vec<Hit>> {
        let now = search.now.as_second();
        let snippets = match text_query {
            Some(query) => {
                let mut generator = SnippetGenerator::create(searcher, query, self.fields.body)?;
                generator.set_max_num_chars(SNIPPET_CHARS);
                Some(generator)
            }
            None => None,
        };
        // Stored fields and snippets (which re-analyse each body) for the top k, in parallel.
        let mut hits = picked
            .into_par_iter()
            .map(|p| {
                let doc: TantivyDocument = searcher.doc(p.address)?;
                let record = self.record(&doc)?;
                let body = text_of(&doc, self.fields.body);
                let snippet = snippets.as_ref().map(|s| s.snippet(&body)).filter(|s| !s.is_empty());
                let snippet = match snippet {
                    Some(snippet) => squash(snippet.fragment()),
                    None => crate::format::clip(&squash(&body), SNIPPET_CHARS),
                };
                let age_days = score::age_days(now, record.last_access.as_second());
                let components = Components {
                    relevance: p.relevance,
                    recency: score::recency(age_days, search.ranking),
                    importance: score::importance(record.importance),
                };
                Ok(Hit {
                    rank: 0,
                    score: score::combine(&components, search.ranking),
                    record,
                    components,
                    bm25: p.bm25,
                    max_bm25: p.max_bm25,
                    semantic: p.semantic,
                    age_days,
                    snippet,
                })
            })
            .collect::<Result<Vec<Hit>>>()?;
        for (rank, hit) in hits.iter_mut().enumerate() {
            hit.rank = rank + 1;
        }
        Ok(hits)
    }

    /// The text to embed (see [`crate::embed::memory_text`]) of the memory in each file of
    /// `paths` (relative to the root), as (id, text).
    pub fn embedding_texts(&self, paths: &[&str]) -> Result<Vec<(String, String)>> {
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let terms = paths.iter().map(|path| Term::from_field_text(self.fields.path, path));
        let mut addresses: Vec<DocAddress> =
            searcher.search(&TermSetQuery::new(terms), &DocSetCollector)?.into_iter().collect();
        addresses.sort();
        let mut texts = Vec::with_capacity(paths.len());
        for address in addresses {
            let doc: TantivyDocument = searcher.doc(address)?;
            let tags: Vec<String> =
                doc.get_all(self.fields.tag).filter_map(|v| v.as_str().map(String::from)).collect();
            let text = crate::embed::memory_text(
                &text_of(&doc, self.fields.title),
                &tags,
                &text_of(&doc, self.fields.body),
            );
            texts.push((text_of(&doc, self.fields.id), text));
        }
        Ok(texts)
    }

    /// Every indexed memory of the given types and tags, newest first.
    pub fn records(&self, kinds: &[MemoryType], tags: &[String]) -> Result<Vec<Record>> {
        let searcher = self.reader.searcher();
        let clauses = self.filters(kinds, tags);
        let query: Box<dyn Query> = if clauses.is_empty() {
            Box::new(AllQuery)
        } else {
            Box::new(BooleanQuery::new(clauses))
        };
        let addresses = searcher.search(&*query, &DocSetCollector)?;
        let mut records = addresses
            .into_iter()
            .map(|a: DocAddress| self.record(&searcher.doc(a)?))
            .collect::<Result<Vec<_>>>()?;
        records.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.path.cmp(&b.path)));
        Ok(records)
    }

    fn record(&self, doc: &TantivyDocument) -> Result<Record> {
        let f = &self.fields;
        let corrupt = |what: &str| {
            Error::Index(tantivy::TantivyError::InvalidArgument(format!(
                "stored document has no valid `{what}`"
            )))
        };
        let kind = text_of(doc, f.kind).parse().map_err(|_| corrupt("type"))?;
        let seconds = |field| {
            doc.get_first(field)
                .and_then(|v| v.as_i64())
                .and_then(|s| Timestamp::from_second(s).ok())
        };
        Ok(Record {
            id: text_of(doc, f.id),
            path: text_of(doc, f.path),
            title: text_of(doc, f.title),
            kind,
            importance: doc.get_first(f.importance).and_then(|v| v.as_u64()).unwrap_or(5) as u8,
            created: seconds(f.created).ok_or_else(|| corrupt("created"))?,
            last_access: seconds(f.last_access).ok_or_else(|| corrupt("last_access"))?,
            tags: doc.get_all(f.tag).filter_map(|v| v.as_str().map(String::from)).collect(),
            source: doc.get_first(f.source).and_then(|v| v.as_str()).map(String::from),
            invalid_at: doc
                .get_first(f.invalid_at)
                .and_then(|v| v.as_i64())
                .filter(|&s| s != VALID_FOREVER)
                .and_then(|s| Timestamp::from_second(s).ok()),
            superseded_by: doc
                .get_first(f.superseded_by)
                .and_then(|v| v.as_str())
                .map(String::from),
        })
    }
}

/// Reads, hashes and parses one candidate file.
fn read_one(
    root: &Path,
    file: &FileStat,
    previous: Option<&Entry>,
    max_file_bytes: u64,
    fields: &Fields,
) -> Outcome {
    let path = root.join(&file.rel);
    let bytes = match read_limited(&path, max_file_bytes) {
        Ok(bytes) => bytes,
        Err(ReadError::Io(e)) => return Outcome::Bad(Error::io(&file.rel, e)),
        Err(ReadError::Format(source)) => {
            return Outcome::Bad(Error::Parse { path: file.rel.clone().into(), source });
        }
    };
    let hash = content_hash(&bytes);
    if let Some(previous) = previous.filter(|p| p.hash == hash) {
        let entry = Entry { size: file.size, mtime_ns: file.mtime_ns, ..previous.clone() };
        return Outcome::Same(entry);
    }
    match Memory::parse_bytes(&bytes) {
        Ok(memory) => {
            let entry = Entry {
                size: file.size,
                mtime_ns: file.mtime_ns,
                hash,
                id: memory.id().to_string(),
            };
            Outcome::Parsed {
                doc: fields.document(&file.rel, &memory),
                entry,
                created: memory.created(),
            }
        }
        Err(source) => Outcome::Bad(Error::Parse { path: file.rel.clone().into(), source }),
    }
}

/// The message of a panic caught around tantivy.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    crate::error::panic_message(panic, "the index library panicked")
}

/// A file's mtime in ns since the epoch, 0 if it cannot be read.
fn file_mtime_ns(path: &Path) -> i64 {
    std::fs::metadata(path).map(|m| crate::store::mtime_ns(&m)).unwrap_or(0)
}

/// A random number, from the standard library's per-process hash keys.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

fn payload(instance: u64, generation: u64) -> String {
    serde_json::to_string(&Payload { schema: SCHEMA_VERSION, instance, manifest: generation })
        .expect("payload serialises")
}

fn register_analyzers(index: &tantivy::Index) {
    index.tokenizers().register(tokenizer::ANALYZER, tokenizer::analyzer());
    index.tokenizers().register(tokenizer::TAG_ANALYZER, tokenizer::tag_analyzer());
}

fn open_reader(index: &tantivy::Index) -> tantivy::Result<IndexReader> {
    index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()
}

/// Checks that every segment has the fast columns the scorer reads.
fn check_segments(searcher: &Searcher) -> tantivy::Result<()> {
    for segment in searcher.segment_readers() {
        let ff = segment.fast_fields();
        ff.u64("importance")?;
        ff.i64("last_access")?;
        ff.u64("tiebreak")?;
        ff.u64("id_key")?;
    }
    Ok(())
}

/// Deletes manifest files other than `keep`.
fn remove_manifests(state_dir: &Path, keep: Option<u64>) -> Result<()> {
    let entries = match std::fs::read_dir(state_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(state_dir, e)),
    };
    let keep_name = keep.map(|g| format!("manifest-{g}.bin"));
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("manifest-")
            && name.ends_with(".bin")
            && Some(&name) != keep_name.as_ref()
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
