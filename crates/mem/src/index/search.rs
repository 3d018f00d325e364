//! BM25 search: the text query, the filters (type, tag, validity), ranking and the hits.

use std::collections::BTreeSet;

use jiff::Timestamp;
use rayon::prelude::*;
use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::snippet::SnippetGenerator;
use tantivy::{DocAddress, Searcher, SegmentReader, TantivyDocument, Term};

use super::columns::Columns;
use super::coverage::{QueryWords, SegmentCoverage};
use super::synonyms::Thesaurus;
use super::{MemoryIndex, Record, check_segments, squash, stats, text_of};
use crate::Result;
use crate::config::Ranking;
use crate::format::MemoryType;
use crate::question::Question;
use crate::score::{self, Components, Role};

/// Longest snippet, in characters.
const SNIPPET_CHARS: usize = 160;

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
    /// Highest BM25 score among all matches.
    pub max_bm25: f32,
    /// The raw relevance of the best match, which relevance is divided by: keyword relevance
    /// (BM25 × coverage factor), or the fused value of a hybrid recall.
    #[serde(skip)]
    pub best_raw: f64,
    /// The layer the memory lives in, when two roots were searched together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer: Option<crate::store::Layer>,
    /// When several layers were searched together: what its layer's scores were multiplied
    /// by to put them on one scale (its layer's best match strength over the best of all;
    /// `score` includes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layer_scale: Option<f64>,
    /// The cosine side of a vector or hybrid recall, and how the two were fused.
    #[serde(skip_serializing_if = "Option::is_none", flatten)]
    pub semantic: Option<Semantic>,
    /// Age in days used for recency (since last access, else creation).
    pub age_days: f64,
    /// How strongly it matches the query by itself (see [`score::strength`]), `0..=1`.
    pub strength: f64,
    /// A short extract of the body around the matched words.
    pub snippet: String,
    /// The worst verdict of the code it cites in the project's repository (see
    /// [`crate::cites`]); `None` when it cites nothing, or its root is no project root.
    pub code_status: Option<crate::cites::Status>,
    /// What it cites of the project's code, each with its verdict.
    pub cites: Vec<crate::cites::Cite>,
    /// For a semantic or procedural memory whose cited code is gone or moved, the few words
    /// that say so (`may be outdated: …`), as agents are shown them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_note: Option<String>,
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
pub(super) struct Picked {
    pub(super) address: DocAddress,
    /// The components of its score, computed once by the ranking path that picked it.
    pub(super) components: Components,
    /// Its last access (else creation), seconds since the epoch.
    pub(super) last_access: score::Epoch,
    pub(super) bm25: f32,
    pub(super) max_bm25: f32,
    /// The raw relevance of the best match (keyword relevance, or fused value).
    pub(super) best_raw: f64,
    pub(super) semantic: Option<Semantic>,
}

/// Candidates taken by keyword relevance before contiguity and the final ranking.
const KEYWORD_CANDIDATES: usize = 100;

/// What the BM25 collector keeps of a match: its keyword relevance (the order), its raw BM25
/// and its coverage.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Keyword {
    keyword: f64,
    bm25: f32,
    cov: f64,
}

impl PartialOrd for Keyword {
    fn partial_cmp(&self, other: &Keyword) -> Option<std::cmp::Ordering> {
        Some(self.keyword.total_cmp(&other.keyword))
    }
}

/// A memory on its way to the result list: its normalised relevance so far.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate {
    pub(super) address: DocAddress,
    /// Relevance in `0..=1` (keyword relevance over the best; contiguity may add to it).
    pub(super) relevance: f64,
    pub(super) bm25: f32,
    pub(super) coverage: f64,
    /// The share of relevance the episode prior gave it (see `episodes.rs`).
    pub(super) episode: f64,
}

/// A recall request.
#[derive(Clone, Debug)]
pub struct Search<'a> {
    /// The question, analysed once ([`Question::new`]).
    pub question: &'a Question,
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
    /// When each memory was last used: recency counts from it when it is later than the
    /// index's `last_access` column.
    pub last_used: &'a crate::usage::last_used::LastUsed,
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

impl MemoryIndex {
    /// The text query: each analysed word of the query, and (at `expansion_weight`) each of
    /// their synonyms, searched in title, body and tags.
    pub(super) fn text_query(
        &self,
        search: &Search,
        weighted_tokens: &[(String, f32)],
    ) -> Option<Box<dyn Query>> {
        if weighted_tokens.is_empty() {
            return None;
        }
        let mut words: std::collections::BTreeMap<&String, f32> = Default::default();
        for (word, weight) in weighted_tokens {
            let w = words.entry(word).or_insert(0.0);
            *w = w.max(*weight);
        }
        let expansions = expansions(search.thesaurus, weighted_tokens, search.expansion_weight);
        let weighted =
            words.into_iter().chain(expansions.iter().map(|w| (w, search.expansion_weight)));
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
    pub(super) fn validity(&self, validity: Validity) -> Vec<(Occur, Box<dyn Query>)> {
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
    pub(super) fn filters(
        &self,
        kinds: &[MemoryType],
        tags: &[String],
    ) -> Vec<(Occur, Box<dyn Query>)> {
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

    /// Ranks every memory matching `search.question` by relevance × recency × importance and
    /// returns the best `search.limit`. No match gives an empty list.
    pub fn search(&self, search: &Search) -> Result<Vec<Hit>> {
        let weighted_tokens = search.question.tokens();
        let Some(text_query) = self.text_query(search, weighted_tokens) else {
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
        let live = stats::LiveStats::new(&searcher);
        let words = std::sync::Arc::new(QueryWords::new(
            &content_words(weighted_tokens),
            self.fields.body,
            &live,
        )?);
        let fields = [self.fields.title, self.fields.body, self.fields.tags];
        // The best matches by keyword relevance (BM25 × coverage factor), with their coverage;
        // the ranking columns are read after, for these only.
        let keyword = {
            let ranking = search.ranking.clone();
            let words = words.clone();
            move |segment: &SegmentReader| {
                let coverage = SegmentCoverage::open(segment, &fields, &words)
                    .expect("the postings of an opened segment are readable");
                let ranking = ranking.clone();
                move |doc: tantivy::DocId, bm25: tantivy::Score| {
                    let cov = coverage.of(doc);
                    Keyword { keyword: score::keyword(bm25, cov, &ranking), bm25, cov }
                }
            }
        };
        let wanted = search.limit.max(1).max(KEYWORD_CANDIDATES);
        let top = TopDocs::with_limit(wanted).tweak_score(keyword);
        let best_bm25 = TopDocs::with_limit(1).order_by_score();
        let (found, best_bm25) =
            searcher.search_with_statistics_provider(&query, &(top, best_bm25), &live)?;
        let max_bm25 = best_bm25.first().map(|(s, _)| *s).unwrap_or(0.0);
        let max_keyword = found.first().map(|(k, _)| k.keyword).unwrap_or(0.0);
        if found.is_empty() || max_keyword <= 0.0 {
            return Ok(Vec::new());
        }
        let mut candidates: Vec<Candidate> = found
            .into_iter()
            .map(|(k, address)| Candidate {
                address,
                relevance: k.keyword / max_keyword,
                bm25: k.bm25,
                coverage: k.cov,
                episode: 0.0,
            })
            .collect();
        self.relate(&searcher, search, &words, &mut candidates)?;
        let picked = self.rank(&searcher, search, candidates, max_bm25, max_keyword, |_| None)?;
        self.hits(&searcher, Some(&*query), picked, search)
    }

    /// Loads the stored fields and snippets of `picked` (in rank order) and scores them.
    pub(super) fn hits(
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
                let mut record = self.record(&doc)?;
                // The last access ranking used: the index's, or a later use of the usage files.
                if let Ok(at) = Timestamp::from_second(p.last_access) {
                    record.last_access = record.last_access.max(at);
                }
                let body = text_of(&doc, self.fields.body);
                let snippet = snippets.as_ref().map(|s| s.snippet(&body)).filter(|s| !s.is_empty());
                let snippet = match snippet {
                    Some(snippet) => squash(snippet.fragment()),
                    None => crate::format::clip(&squash(&body), SNIPPET_CHARS),
                };
                let age_days = score::age_days(now, p.last_access);
                Ok(Hit {
                    rank: 0,
                    score: score::combine(&p.components, search.ranking),
                    record,
                    components: p.components,
                    bm25: p.bm25,
                    max_bm25: p.max_bm25,
                    best_raw: p.best_raw,
                    layer: None,
                    layer_scale: None,
                    semantic: p.semantic,
                    age_days,
                    strength: score::strength(
                        p.components.coverage,
                        p.semantic.and_then(|s| s.cosine),
                    ),
                    snippet,
                    code_status: None,
                    cites: Vec::new(),
                    code_note: None,
                })
            })
            .collect::<Result<Vec<Hit>>>()?;
        for (rank, hit) in hits.iter_mut().enumerate() {
            hit.rank = rank + 1;
        }
        Ok(hits)
    }
}

/// The content words of a query's weighted tokens ([`Question::tokens`]), fillers
/// left out, in query order.
fn content_tokens(weighted_tokens: &[(String, f32)]) -> impl Iterator<Item = &String> {
    weighted_tokens.iter().filter(|(_, w)| *w >= 1.0).map(|(t, _)| t)
}

/// The distinct content words of a query's weighted tokens, in query order (what coverage
/// weighs).
pub(super) fn content_words(weighted_tokens: &[(String, f32)]) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for word in content_tokens(weighted_tokens) {
        if !words.contains(word) {
            words.push(word.clone());
        }
    }
    words
}

/// The synonyms a query is searched with: those of its content words, in query order (the
/// thesaurus matches phrases of adjacent words); none when `weight` is 0.
pub fn expansions(
    thesaurus: &Thesaurus,
    weighted_tokens: &[(String, f32)],
    weight: f32,
) -> BTreeSet<String> {
    if weight <= 0.0 {
        return BTreeSet::new();
    }
    let content: Vec<String> = content_tokens(weighted_tokens).cloned().collect();
    thesaurus.expand(&content)
}

impl MemoryIndex {
    /// Scores `candidates` (relevance × recency × importance, from their ranking columns) and
    /// keeps the best `search.limit`, ties broken by the stable path hash.
    pub(super) fn rank(
        &self,
        searcher: &Searcher,
        search: &Search,
        mut candidates: Vec<Candidate>,
        max_bm25: f32,
        best_raw: f64,
        semantic_of: impl Fn(DocAddress) -> Option<Semantic>,
    ) -> Result<Vec<Picked>> {
        let now = search.now.as_second();
        let cues = self.cues(searcher, search.question)?;
        candidates.sort_by_key(|c| c.address);
        let mut ranked: Vec<(f64, u64, Role, Picked)> = Vec::with_capacity(candidates.len());
        for segment_candidates in
            candidates.chunk_by(|a, b| a.address.segment_ord == b.address.segment_ord)
        {
            let segment = searcher.segment_reader(segment_candidates[0].address.segment_ord);
            let columns = Columns::open(segment, now)?;
            let named = cues.named_in(segment)?;
            for c in segment_candidates {
                let doc = c.address.doc_id;
                let signals = columns.signals(doc, search.last_used);
                let fit = score::Fit {
                    relevance: c.relevance,
                    coverage: c.coverage,
                    episode: c.episode,
                    named: named.get(doc as usize).copied().unwrap_or(false),
                };
                let components = Components::of(&fit, &signals, &cues.cues, now, search.ranking);
                let picked = Picked {
                    address: c.address,
                    components,
                    last_access: signals.last_access,
                    bm25: c.bm25,
                    max_bm25,
                    best_raw,
                    semantic: semantic_of(c.address),
                };
                ranked.push((
                    score::combine(&components, search.ranking),
                    columns.tiebreak(doc),
                    signals.role,
                    picked,
                ));
            }
        }
        let mut roles: Vec<(f64, Role, &mut Components)> =
            ranked.iter_mut().map(|(s, _, role, p)| (*s, *role, &mut p.components)).collect();
        score::questions_below_facts(&mut roles, search.ranking);
        let scores: Vec<f64> = roles.into_iter().map(|(s, _, _)| s).collect();
        for (r, s) in ranked.iter_mut().zip(scores) {
            r.0 = s;
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        ranked.truncate(search.limit.max(1));
        Ok(ranked.into_iter().map(|(_, _, _, p)| p).collect())
    }
}
