//! Recall from the team store: the `live` rows a role may see, by full text
//! (`websearch_to_tsquery`, its words joined by OR as local BM25 takes them, ranked by
//! `ts_rank_cd`; in a large store among the rows holding all the words or its rarest ones, by
//! the table's statistics) and, when the question has a vector, by pgvector cosine over the rows of the
//! same model and length only (the HNSW index of that length); the two lists fused as local
//! hybrid recall fuses them (`mem::score::fuse`, the root's `[embed]` fusion settings). The
//! rows are data: they come back as text, to be fenced and labelled with their project and
//! author by whoever shows them. Both searches run in functions of the schema
//! (`mem_search_text`, `mem_search_vector`: migrations/003_search.sql) that use the indexes and
//! keep the rows of the projects granted to the role asking; a query of the table itself would
//! check the row-level security policy on every row first.

use mem::config::Fusion;
use mem::score::{FusionInput, fuse};
use pgvector::Vector;

use crate::read::TeamMemory;
use crate::{Result, Team};

/// A question to the team store.
#[derive(Clone, Debug)]
pub struct TeamQuery {
    /// The words asked.
    pub text: String,
    /// The question's vector and the id of the model that made it.
    pub vector: Option<(String, Vec<f32>)>,
    /// At most this many hits.
    pub limit: usize,
    /// How the two lists are fused.
    pub fusion: Fusion,
    /// `k` of reciprocal rank fusion.
    pub rrf_k: f64,
    /// The cosine's weight in convex fusion.
    pub vector_weight: f64,
}

/// A memory of the team store that matched.
#[derive(Clone, Debug)]
pub struct TeamHit {
    /// The memory.
    pub memory: TeamMemory,
    /// The fused relevance over the best hit's (1 for the best).
    pub relevance: f64,
    /// Full-text rank among the candidates, 1 = best.
    pub text_rank: Option<usize>,
    /// Cosine with the question, for a row of the question's model.
    pub cosine: Option<f32>,
}

impl Team {
    /// The team's memories for `query`, best first.
    pub fn recall(&mut self, query: &TeamQuery) -> Result<Vec<TeamHit>> {
        let pool = (query.limit * 4).max(20);
        let mut hits: Vec<(TeamHit, FusionInput)> = Vec::new();
        let text = self.client.query(
            "SELECT * FROM mem_search_text($1, $2::integer, current_user)",
            &[&query.text, &(pool as i32)],
        )?;
        let max_bm25 = text.first().map_or(0.0, |r| r.get::<_, f32>(SCORE));
        for (i, row) in text.iter().enumerate() {
            let input = FusionInput {
                bm25: row.get(SCORE),
                max_bm25,
                bm25_rank: Some(i + 1),
                cosine: None,
                max_cosine: 0.0,
                vector_rank: None,
            };
            hits.push((hit(row, Some(i + 1)), input));
        }
        if let Some((model, vector)) = &query.vector {
            let near = self.client.query(
                "SELECT * FROM mem_search_vector($1, $2, $3::integer, current_user)",
                &[&Vector::from(vector.clone()), model, &(pool as i32)],
            )?;
            let max_cosine = near.first().map_or(0.0, |r| r.get::<_, f32>(SCORE));
            for (i, row) in near.iter().enumerate() {
                let cosine: f32 = row.get(SCORE);
                let (project, id): (String, String) = (row.get(0), row.get(1));
                let found =
                    hits.iter_mut().find(|(h, _)| h.memory.project == project && h.memory.id == id);
                let (found, input) = match found {
                    Some((h, input)) => (h, input),
                    None => {
                        let input = FusionInput {
                            bm25: 0.0,
                            max_bm25,
                            bm25_rank: None,
                            cosine: None,
                            max_cosine,
                            vector_rank: None,
                        };
                        hits.push((hit(row, None), input));
                        let last = hits.last_mut().unwrap();
                        (&mut last.0, &mut last.1)
                    }
                };
                found.cosine = Some(cosine);
                input.cosine = Some(cosine);
                input.vector_rank = Some(i + 1);
            }
            for (_, input) in &mut hits {
                input.max_cosine = max_cosine;
            }
        }
        for (hit, input) in &mut hits {
            hit.relevance = fuse(input, query.fusion, query.rrf_k, query.vector_weight);
        }
        let best = hits.iter().map(|(h, _)| h.relevance).fold(0.0, f64::max);
        let mut hits: Vec<TeamHit> = hits.into_iter().map(|(h, _)| h).collect();
        for hit in &mut hits {
            hit.relevance = if best > 0.0 { hit.relevance / best } else { 0.0 };
        }
        hits.sort_by(|a, b| {
            b.relevance.total_cmp(&a.relevance).then_with(|| {
                (&a.memory.project, &a.memory.id).cmp(&(&b.memory.project, &b.memory.id))
            })
        });
        hits.truncate(query.limit);
        Ok(hits)
    }
}

/// The column of a search function's row that holds its score, after a memory's columns
/// (`mem_search_text`, `mem_search_vector`: migrations/003_search.sql).
const SCORE: usize = 11;

/// A hit from a row of a search function.
fn hit(row: &postgres::Row, text_rank: Option<usize>) -> TeamHit {
    TeamHit { memory: crate::read::memory(row), relevance: 0.0, text_rank, cosine: None }
}
