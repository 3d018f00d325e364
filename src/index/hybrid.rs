//! Vector and hybrid recall: the BM25 candidates and the nearest memories by embedding cosine,
//! fused into one relevance (see [`crate::score::fuse`]), then ranked by relevance × recency ×
//! importance like a BM25 recall.

use rustc_hash::FxHashMap;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermSetQuery};
use tantivy::{DocAddress, Term};

use super::columns::Columns;
use super::coverage::{QueryWords, SegmentCoverage};
use super::search;
use super::search::content_words;
use super::tokenizer;
use super::{Hit, MemoryIndex, Search, Semantic, check_segments, stats};
use crate::Result;
use crate::config::{Fusion, RecallMode};
use crate::score::{self, FusionInput};

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

impl MemoryIndex {
    /// Ranks the union of the BM25 candidates (hybrid mode) and the vector candidates that
    /// pass the search's filters, with the fused relevance in place of BM25's.
    pub fn search_fused(&self, search: &Search, side: &VectorSide) -> Result<Vec<Hit>> {
        let searcher = self.reader.searcher();
        check_segments(&searcher)?;
        let live = stats::LiveStats::new(&searcher);
        let mut filters = self.filters(search.kinds, search.tags);
        filters.extend(self.validity(search.validity));
        let weighted_tokens = tokenizer::query_tokens(search.text);
        let text_query = if side.mode == RecallMode::Hybrid {
            self.text_query(search, &weighted_tokens)
        } else {
            None
        };
        let with = |clauses: &[(Occur, Box<dyn Query>)], main: Box<dyn Query>| -> Box<dyn Query> {
            let mut all: Vec<(Occur, Box<dyn Query>)> =
                clauses.iter().map(|(o, q)| (*o, q.box_clone())).collect();
            all.push((Occur::Must, main));
            Box::new(BooleanQuery::new(all))
        };

        let mut candidates: FxHashMap<DocAddress, Candidate> = FxHashMap::default();
        if let Some(text) = &text_query {
            let query = with(&filters, text.box_clone());
            let top = TopDocs::with_limit(side.candidates.max(search.limit)).order_by_score();
            let found = searcher.search_with_statistics_provider(&*query, &top, &live)?;
            for (rank, (bm25, address)) in found.into_iter().enumerate() {
                let c = candidates.entry(address).or_default();
                c.bm25 = bm25;
                c.bm25_rank = Some(rank + 1);
            }
        }
        if !side.nearest.is_empty() {
            // The vector candidates that pass the filters, with their BM25 score when the text
            // matches them too.
            let ids = side.nearest.iter().map(|(id, _)| Term::from_field_text(self.fields.id, id));
            let by_id: Box<dyn Query> =
                Box::new(ConstScoreQuery::new(Box::new(TermSetQuery::new(ids)), 0.0));
            let main: Box<dyn Query> = match &text_query {
                Some(text) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, by_id),
                    (Occur::Should, text.box_clone()),
                ])),
                None => by_id,
            };
            let query = with(&filters, main);
            let top = TopDocs::with_limit(side.nearest.len()).order_by_score();
            let found = searcher.search_with_statistics_provider(&*query, &top, &live)?;
            for (bm25, address) in found {
                candidates.entry(address).or_default().bm25 = bm25;
            }
        }
        if candidates.is_empty() {
            return Ok(Vec::new());
        }

        // Ids, importance and last access of every candidate, from the fast fields.
        let vector_rank: FxHashMap<u64, usize> = side
            .nearest
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (crate::format::id_key(id), i + 1))
            .collect();
        let now = search.now.as_second();
        let words = QueryWords::new(&content_words(&weighted_tokens), self.fields.body, &live)?;
        let fields = [self.fields.title, self.fields.body, self.fields.tags];
        let mut scored = Vec::with_capacity(candidates.len());
        let mut candidates: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
        candidates.sort_by_key(|(address, _)| *address);
        // The columns are opened once per segment.
        for segment_candidates in candidates.chunk_by(|a, b| a.0.segment_ord == b.0.segment_ord) {
            let segment = searcher.segment_reader(segment_candidates[0].0.segment_ord);
            let columns = Columns::open(segment, now)?;
            let coverage = SegmentCoverage::open(segment, &fields, &words)?;
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

        // The BM25 side ranked by keyword relevance (BM25 × coverage factor).
        let mut by_keyword: Vec<usize> =
            (0..scored.len()).filter(|&i| scored[i].1.bm25_rank.is_some()).collect();
        by_keyword.sort_by(|&a, &b| scored[b].1.keyword.total_cmp(&scored[a].1.keyword));
        for (rank, &i) in by_keyword.iter().enumerate() {
            scored[i].1.bm25_rank = Some(rank + 1);
        }
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
            return Ok(Vec::new());
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
            });
        }
        self.spread_to_neighbours(&searcher, search, &mut ranked)?;
        let picked = self.rank(&searcher, search, ranked, max_bm25, max_fused, |address| {
            // A neighbour that contiguity brought in has no rank on either side.
            Some(semantic.get(&address).copied().unwrap_or(Semantic {
                cosine: None,
                bm25_rank: None,
                vector_rank: None,
                fused: 0.0,
            }))
        })?;
        self.hits(&searcher, text_query.as_deref(), picked, search)
    }
}
