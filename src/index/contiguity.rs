//! Temporal contiguity: recalling an episode cues the ones just before and after it. Episodic
//! memories written close together in time (consecutive ones at most [`EPISODE_GAP_SECS`]
//! apart) form one episode; the best matches of a query pass a share of their relevance to
//! their neighbours in it, so that an answer that refers back ("yes, I painted that last
//! year") is found with the question it answers. Memories far apart in time, and memories that
//! are not episodic, are left as they are. See docs/ranking.md.

use std::collections::HashMap;

use tantivy::collector::DocSetCollector;
use tantivy::query::{BooleanQuery, Occur, Query, RangeQuery};
use tantivy::{DocAddress, Searcher, Term};

use super::columns::Columns;
use super::search::Candidate;
use super::{MemoryIndex, Search};
use crate::Result;
use crate::format::MemoryType;

/// Largest gap between two consecutive episodic memories of one episode.
pub const EPISODE_GAP_SECS: i64 = 30 * 60;
/// How many of the best matches pass relevance on.
const SEEDS: usize = 10;

/// How much a reflection's relevance exceeds its best source's when it takes it on, so that it
/// comes first on a tie.
const REPRESENTATIVE_EDGE: f64 = 1e-6;

impl MemoryIndex {
    /// What relates memories to each other in a recall: contiguity within an episode, then a
    /// reflection at least as relevant as its best source among the candidates.
    pub(super) fn relate(
        &self,
        searcher: &Searcher,
        search: &Search,
        candidates: &mut Vec<Candidate>,
    ) -> Result<()> {
        self.spread_to_neighbours(searcher, search, candidates)?;
        reflections_lead(searcher, search, candidates)
    }

    /// Adds to each candidate's relevance the share `[ranking] contiguity_weight` (halved at
    /// the second step) of the relevance of a best match right before or after it in the same
    /// episode, adding the neighbours that did not match; then rescales relevance to `0..=1`.
    fn spread_to_neighbours(
        &self,
        searcher: &Searcher,
        search: &Search,
        candidates: &mut Vec<Candidate>,
    ) -> Result<()> {
        let share = search.ranking.contiguity_weight;
        if share <= 0.0 || candidates.is_empty() {
            return Ok(());
        }
        if !search.kinds.is_empty() && !search.kinds.contains(&MemoryType::Episodic) {
            return Ok(());
        }
        let now = search.now.as_second();
        let mut seeds: Vec<usize> = (0..candidates.len()).collect();
        seeds.sort_by(|&a, &b| candidates[b].relevance.total_cmp(&candidates[a].relevance));
        seeds.truncate(SEEDS);
        // Each segment's columns are opened once, whatever the number of seeds and neighbours.
        let mut columns: HashMap<u32, Columns> = HashMap::new();
        // When each was created, then its content hash: memories written within one second
        // keep one order in every root.
        let mut created_of = |address: DocAddress| -> tantivy::Result<(i64, u64)> {
            let segment = match columns.entry(address.segment_ord) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(Columns::open(searcher.segment_reader(address.segment_ord), now)?)
                }
            };
            Ok((segment.created(address.doc_id), segment.tiebreak(address.doc_id)))
        };
        // The episodic memories under the search's filters; each seed adds its time window.
        let mut filters = self.filters(&[MemoryType::Episodic], search.tags);
        filters.extend(self.validity(search.validity));
        let mut bonus: HashMap<DocAddress, f64> = HashMap::new();
        for &s in &seeds {
            let seed = candidates[s];
            let (at, _) = created_of(seed.address)?;
            // Those that could be two steps away.
            let mut clauses: Vec<(Occur, Box<dyn Query>)> =
                filters.iter().map(|(o, q)| (*o, q.box_clone())).collect();
            let (lo, hi) = (at - 2 * EPISODE_GAP_SECS, at + 2 * EPISODE_GAP_SECS);
            let range: Box<dyn Query> = Box::new(RangeQuery::new(
                std::ops::Bound::Included(Term::from_field_i64(self.fields.created, lo)),
                std::ops::Bound::Included(Term::from_field_i64(self.fields.created, hi)),
            ));
            clauses.push((Occur::Must, range));
            let near = searcher.search(&BooleanQuery::new(clauses), &DocSetCollector)?;
            if near.len() < 2 {
                continue;
            }
            let mut episode: Vec<((i64, u64), DocAddress)> = Vec::with_capacity(near.len());
            for address in near {
                episode.push((created_of(address)?, address));
            }
            episode.sort();
            let Some(i) = episode.iter().position(|(_, a)| *a == seed.address) else {
                continue;
            };
            for step in [-1i64, 1] {
                let mut j = i as i64;
                for distance in 1..=2 {
                    let next = j + step;
                    if next < 0 || next as usize >= episode.len() {
                        break;
                    }
                    let gap = (episode[next as usize].0.0 - episode[j as usize].0.0).abs();
                    if gap > EPISODE_GAP_SECS {
                        break;
                    }
                    j = next;
                    let passed = seed.relevance * share / f64::from(distance);
                    let slot = bonus.entry(episode[j as usize].1).or_insert(0.0);
                    *slot = slot.max(passed);
                }
            }
        }
        if bonus.is_empty() {
            return Ok(());
        }
        for c in candidates.iter_mut() {
            if let Some(b) = bonus.remove(&c.address) {
                c.relevance += b;
            }
        }
        candidates.extend(bonus.into_iter().map(|(address, relevance)| Candidate {
            address,
            relevance,
            bm25: 0.0,
            coverage: 0.0,
        }));
        let max = candidates.iter().map(|c| c.relevance).fold(0.0, f64::max);
        if max > 0.0 {
            for c in candidates.iter_mut() {
                c.relevance /= max;
            }
        }
        Ok(())
    }
}

/// A reflection consolidates its sources: among the candidates, it takes the relevance of its
/// best source when that is higher than its own (and [`REPRESENTATIVE_EDGE`] more), so that
/// the sources lifting each other as one episode never push it below them.
fn reflections_lead(
    searcher: &Searcher,
    search: &Search,
    candidates: &mut [Candidate],
) -> Result<()> {
    let now = search.now.as_second();
    let mut columns: HashMap<u32, Columns> = HashMap::new();
    let mut keys: Vec<(u64, Option<u64>)> = Vec::with_capacity(candidates.len());
    for c in candidates.iter() {
        let segment = match columns.entry(c.address.segment_ord) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(Columns::open(searcher.segment_reader(c.address.segment_ord), now)?)
            }
        };
        keys.push((segment.id_key(c.address.doc_id), segment.reflection_key(c.address.doc_id)));
    }
    let mut best_source: HashMap<u64, f64> = HashMap::new();
    for (c, (_, into)) in candidates.iter().zip(&keys) {
        if let Some(into) = into {
            let best = best_source.entry(*into).or_insert(0.0);
            *best = best.max(c.relevance);
        }
    }
    if best_source.is_empty() {
        return Ok(());
    }
    for (c, (key, _)) in candidates.iter_mut().zip(&keys) {
        if let Some(&best) = best_source.get(key)
            && best >= c.relevance
        {
            c.relevance = best + REPRESENTATIVE_EDGE;
        }
    }
    let max = candidates.iter().map(|c| c.relevance).fold(0.0, f64::max);
    if max > 1.0 {
        for c in candidates.iter_mut() {
            c.relevance /= max;
        }
    }
    Ok(())
}
