//! Vector and hybrid recall: the BM25 candidates and the nearest memories by embedding cosine,
//! fused into one relevance (see [`crate::score::fuse`]), then ranked by relevance × recency ×
//! importance like a BM25 recall.

use rustc_hash::FxHashMap;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermSetQuery};
use tantivy::{DocAddress, Term};

use super::columns::Columns;
use super::search::Picked;
use super::{Hit, MemoryIndex, Search, Semantic, check_segments, stats};
use crate::Result;
use crate::config::{Fusion, RecallMode};
use crate::score::{self, Components, FusionInput};

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
        let text_query =
            if side.mode == RecallMode::Hybrid { self.text_query(search) } else { None };
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
        let mut scored = Vec::with_capacity(candidates.len());
        let mut candidates: Vec<(DocAddress, Candidate)> = candidates.into_iter().collect();
        candidates.sort_by_key(|(address, _)| *address);
        // The columns are opened once per segment.
        for segment_candidates in candidates.chunk_by(|a, b| a.0.segment_ord == b.0.segment_ord) {
            let segment = searcher.segment_reader(segment_candidates[0].0.segment_ord);
            let columns = Columns::open(segment, now)?;
            for (address, c) in segment_candidates {
                let doc = address.doc_id;
                let key = columns.id_key(doc);
                let c = Candidate {
                    vector_rank: vector_rank.get(&key).copied(),
                    cosine: (side.cosine_of)(key),
                    ..*c
                };
                scored.push((*address, c, columns.signals(doc), columns.tiebreak(doc)));
            }
        }
        if side.mode == RecallMode::Vector {
            scored.retain(|(_, c, ..)| c.vector_rank.is_some());
        }

        let max_bm25 = scored.iter().map(|(_, c, ..)| c.bm25).fold(0.0f32, f32::max);
        let max_cosine = scored.iter().filter_map(|(_, c, ..)| c.cosine).fold(0.0f32, f32::max);
        let input = |c: &Candidate| FusionInput {
            bm25: c.bm25,
            max_bm25,
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
        let mut ranked: Vec<(f64, u64, Picked)> = scored
            .into_iter()
            .map(|(address, c, signals, tiebreak)| {
                let fused = fused_of(&c);
                let components = Components::of(fused / max_fused, &signals, now, search.ranking);
                let picked = Picked {
                    address,
                    components,
                    last_access: signals.last_access,
                    bm25: c.bm25,
                    max_bm25,
                    semantic: Some(Semantic {
                        cosine: c.cosine,
                        bm25_rank: c.bm25_rank,
                        vector_rank: c.vector_rank,
                        fused,
                    }),
                };
                (score::combine(&components, search.ranking), tiebreak, picked)
            })
            .filter(|(s, ..)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
        ranked.truncate(search.limit.max(1));
        let picked = ranked.into_iter().map(|(_, _, p)| p).collect();
        self.hits(&searcher, text_query.as_deref(), picked, search)
    }
}
