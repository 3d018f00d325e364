//! Vector and hybrid recall: the BM25 candidates and the nearest memories by embedding cosine,
//! fused into one relevance (see [`crate::score::fuse`]), then ranked by relevance × recency ×
//! importance like a BM25 recall.

use rustc_hash::FxHashMap;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermSetQuery};
use tantivy::{DocAddress, Searcher, Term};

use super::columns::Columns;
use super::coverage::{QueryWords, SegmentCoverage};
use super::search;
use super::search::content_words;
use super::{Hit, MemoryIndex, Search, Semantic, check_segments, stats};
use crate::Result;
use crate::config::{Fusion, RecallMode};
use crate::score::{self, FusionInput, Signals};

/// The vector side of a recall.
pub struct VectorSide<'a> {
    /// `Vector` (cosine only) or `Hybrid` (BM25 and cosine fused).
    pub mode: RecallMode,
    /// The nearest memories to the query, best first, as (id, cosine).
    pub nearest: &'a [(String, f32)],
    /// The cosine of the query with any memory, by [`crate::format::id_key`] of its id; `None` when
    /// it has no vector.
    pub cosine_of: &'a (dyn Fn(u64) -> Option<f32> + Sync),
    /// How the rankings are fused.
    pub fusion: Fusion,
    /// `k` of reciprocal rank fusion.
    pub rrf_k: f64,
    /// Weight of the cosine in convex fusion.
    pub vector_weight: f64,
    /// How many BM25 candidates join the fusion.
    pub candidates: usize,
}

/// One candidate of the fusion.
#[derive(Clone, Copy, Default)]
struct Candidate {
    bm25: f32,
    /// BM25 × the coverage factor (see [`score::keyword`]).
    keyword: f64,
    coverage: f64,
    bm25_rank: Option<usize>,
    vector_rank: Option<usize>,
    cosine: Option<f32>,
}

/// A candidate with what its segment's columns hold: address, scores, signals and tiebreak.
type Scored = (DocAddress, Candidate, Signals, u64);

/// The filter clauses of a search.
type Clauses = [(Occur, Box<dyn Query>)];

/// The candidates that survive the fusion, ready for the ranking.
struct Fused {
    /// Each candidate with its fused relevance over the best.
    ranked: Vec<search::Candidate>,
    /// The fusion's details of each candidate, by address.
    semantic: FxHashMap<DocAddress, Semantic>,
    /// The best BM25 score among the candidates.
    max_bm25: f32,
    /// The best fused relevance among the candidates.
    max_fused: f64,
}

impl MemoryIndex {
    /// Ranks the union of the BM25 candidates (hybrid mode) and the vector candidates that
    /// pass the search's filters, with the fused relevance in place of BM25's.
    pub fn search_fused(&self, search: &Search, side: &VectorSide) -> Result<Vec<Hit>> {
        let searcher = self.reader.searcher();
        check_segments(&searcher)?;
        let live = stats::LiveStats::new(&searcher);
        let mut filters = self.filters(search.kinds, search.tags);
        filters.extend(self.validity(search.validity));
        let weighted_tokens = search.question.tokens();
        let text_query = if side.mode == RecallMode::Hybrid {
            self.text_query(search, weighted_tokens)
        } else {
            None
        };

        let text = text_query.as_deref();
        let candidates = self.gather_candidates(&searcher, &live, search, side, &filters, text)?;
        if candidates.is_empty() {
            return Ok(Vec::new());
        }

        let words = QueryWords::new(&content_words(weighted_tokens), self.fields.body, &live)?;
        let mut scored = self.read_candidates(&searcher, search, side, &words, candidates)?;
        rank_by_keyword(&mut scored);
        let Some(Fused { mut ranked, semantic, max_bm25, max_fused }) = fuse(scored, side) else {
            return Ok(Vec::new());
        };
        self.relate(&searcher, search, &words, &mut ranked)?;
        let picked = self.rank(&searcher, search, ranked, max_bm25, max_fused, |address| {
            Some(semantic_of(&semantic, address))
        })?;
        self.hits(&searcher, text, picked, search)
    }

    /// Gathers the BM25 candidates (if any text query) and the vector ones that pass the filters.
    fn gather_candidates(
        &self,
        searcher: &Searcher,
        live: &stats::LiveStats,
        search: &Search,
        side: &VectorSide,
        filters: &Clauses,
        text_query: Option<&dyn Query>,
    ) -> Result<FxHashMap<DocAddress, Candidate>> {
        let mut candidates = match text_query {
            Some(text) => {
                let limit = side.candidates.max(search.limit);
                bm25_candidates(searcher, live, filters, text, limit)?
            }
            None => FxHashMap::default(),
        };
        if !side.nearest.is_empty() {
            // The vector candidates that pass the filters, with their BM25 score when the text
            // matches them too.
            let query = self.vector_query(side.nearest, text_query);
            let found = top_filtered(searcher, live, filters, query, side.nearest.len())?;
            for (bm25, address) in found {
                candidates.entry(address).or_default().bm25 = bm25;
            }
        }
        Ok(candidates)
    }

    /// The query matching the `nearest` memories by id, scored by `text` when it is given.
    fn vector_query(&self, nearest: &[(String, f32)], text: Option<&dyn Query>) -> Box<dyn Query> {
        let ids = nearest.iter().map(|(id, _)| Term::from_field_text(self.fields.id, id));
        let by_id: Box<dyn Query> =
            Box::new(ConstScoreQuery::new(Box::new(TermSetQuery::new(ids)), 0.0));
        match text {
            Some(text) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, by_id),
                (Occur::Should, text.box_clone()),
            ])),
            None => by_id,
        }
    }

    /// Reads each candidate's id, coverage, signals and tiebreak from its segment's columns.
    fn read_candidates(
        &self,
        searcher: &Searcher,
        search: &Search,
        side: &VectorSide,
        words: &QueryWords,
        candidates: FxHashMap<DocAddress, Candidate>,
    ) -> Result<Vec<Scored>> {
        let vector_rank: FxHashMap<u64, usize> = side
            .nearest
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (crate::format::id_key(id), i + 1))
            .collect();
        let now = search.now.as_second();
        let fields = [self.fields.title, self.fields.body, self.fields.tags];
        let mut scored = Vec::with_capacity(candidates.len());
        let mut candidates: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
        candidates.sort_by_key(|(address, _)| *address);
        // The columns are opened once per segment.
        for segment_candidates in candidates.chunk_by(|a, b| a.0.segment_ord == b.0.segment_ord) {
            let segment = searcher.segment_reader(segment_candidates[0].0.segment_ord);
            let columns = Columns::open(segment, now)?;
            let coverage = SegmentCoverage::open(segment, &fields, words)?;
            for (address, c) in segment_candidates {
                let doc = address.doc_id;
                let key = columns.id_key(doc);
                let cov = coverage.of(doc);
                let c = Candidate {
                    vector_rank: vector_rank.get(&key).copied(),
                    cosine: (side.cosine_of)(key),
                    keyword: score::keyword(c.bm25, cov, search.ranking),
                    coverage: cov,
                    ..*c
                };
                scored.push((
                    *address,
                    c,
                    columns.signals(doc, search.last_used),
                    columns.tiebreak(doc),
                ));
            }
        }
        if side.mode == RecallMode::Vector {
            scored.retain(|(_, c, ..)| c.vector_rank.is_some());
        }
        Ok(scored)
    }
}

/// The top `limit` documents matching `main` and every filter, best score first.
fn top_filtered(
    searcher: &Searcher,
    live: &stats::LiveStats,
    filters: &Clauses,
    main: Box<dyn Query>,
    limit: usize,
) -> Result<Vec<(f32, DocAddress)>> {
    let mut all: Vec<(Occur, Box<dyn Query>)> =
        filters.iter().map(|(o, q)| (*o, q.box_clone())).collect();
    all.push((Occur::Must, main));
    let query: Box<dyn Query> = Box::new(BooleanQuery::new(all));
    let top = TopDocs::with_limit(limit).order_by_score();
    Ok(searcher.search_with_statistics_provider(&*query, &top, live)?)
}

/// The BM25 candidates of `text` that pass the filters, with their score and rank.
fn bm25_candidates(
    searcher: &Searcher,
    live: &stats::LiveStats,
    filters: &Clauses,
    text: &dyn Query,
    limit: usize,
) -> Result<FxHashMap<DocAddress, Candidate>> {
    let mut candidates: FxHashMap<DocAddress, Candidate> = FxHashMap::default();
    let found = top_filtered(searcher, live, filters, text.box_clone(), limit)?;
    for (rank, (bm25, address)) in found.into_iter().enumerate() {
        let c = candidates.entry(address).or_default();
        c.bm25 = bm25;
        c.bm25_rank = Some(rank + 1);
    }
    Ok(candidates)
}

/// Ranks the BM25 side again by keyword relevance (BM25 × coverage factor).
fn rank_by_keyword(scored: &mut [Scored]) {
    let mut by_keyword: Vec<usize> =
        (0..scored.len()).filter(|&i| scored[i].1.bm25_rank.is_some()).collect();
    by_keyword.sort_by(|&a, &b| scored[b].1.keyword.total_cmp(&scored[a].1.keyword));
    for (rank, &i) in by_keyword.iter().enumerate() {
        scored[i].1.bm25_rank = Some(rank + 1);
    }
}

/// Fuses each candidate's two sides into one relevance; `None` when no candidate is relevant.
fn fuse(scored: Vec<Scored>, side: &VectorSide) -> Option<Fused> {
    let max_bm25 = scored.iter().map(|(_, c, ..)| c.bm25).fold(0.0f32, f32::max);
    let max_keyword = scored.iter().map(|(_, c, ..)| c.keyword).fold(0.0f64, f64::max);
    let max_cosine = scored.iter().filter_map(|(_, c, ..)| c.cosine).fold(0.0f32, f32::max);
    let input = |c: &Candidate| FusionInput {
        bm25: c.keyword as f32,
        max_bm25: max_keyword as f32,
        bm25_rank: c.bm25_rank,
        cosine: c.cosine,
        max_cosine,
        vector_rank: c.vector_rank,
    };
    let fused_of = |c: &Candidate| match side.mode {
        RecallMode::Vector => f64::from(c.cosine.unwrap_or(0.0).max(0.0)),
        _ => score::fuse(&input(c), side.fusion, side.rrf_k, side.vector_weight),
    };
    let max_fused = scored.iter().map(|(_, c, ..)| fused_of(c)).fold(0.0f64, f64::max);
    if max_fused <= 0.0 {
        return None;
    }
    let mut semantic: FxHashMap<DocAddress, Semantic> = FxHashMap::default();
    let mut ranked: Vec<search::Candidate> = Vec::with_capacity(scored.len());
    for (address, c, ..) in scored {
        let fused = fused_of(&c);
        if fused <= 0.0 {
            continue;
        }
        let s = Semantic {
            cosine: c.cosine,
            bm25_rank: c.bm25_rank,
            vector_rank: c.vector_rank,
            fused,
        };
        semantic.insert(address, s);
        ranked.push(search::Candidate {
            address,
            relevance: fused / max_fused,
            bm25: c.bm25,
            coverage: c.coverage,
            episode: 0.0,
        });
    }
    Some(Fused { ranked, semantic, max_bm25, max_fused })
}

/// The fusion's details of `address`: none for a neighbour that contiguity brought in.
fn semantic_of(semantic: &FxHashMap<DocAddress, Semantic>, address: DocAddress) -> Semantic {
    semantic.get(&address).copied().unwrap_or(Semantic {
        cosine: None,
        bm25_rank: None,
        vector_rank: None,
        fused: 0.0,
    })
}
