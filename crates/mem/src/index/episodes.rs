//! Episodes: episodic memories written close together in time (consecutive ones at most
//! [`EPISODE_GAP_SECS`] apart) form one. Three things relate a recall's candidates through
//! them, at query time from what the index holds (no neighbour's text is indexed, so an edit
//! re-indexes one file):
//! - **contiguity**: recalling an episode cues the moments just before and after it; each of
//!   the best matches passes a share of its relevance to its neighbours, so that an answer
//!   that refers back ("yes, I painted that last year") is found with the question it answers;
//! - **the episode prior**: an episode is scored against the question as one document (BM25's
//!   formula over how many of its members hold each word, see `episode_prior`), and a share
//!   of that score goes to each member, matched or not: evidence spread over a conversation
//!   lifts it as a whole;
//! - **reflections lead**: a reflection is at least as relevant as its best source.
//!
//! Memories far apart in time, and memories that are not episodic, are their own one-member
//! episodes. See docs/ranking.md.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};

use tantivy::query::{BooleanQuery, EnableScoring, Query};
use tantivy::{DocAddress, DocSet, Searcher, TERMINATED};

use super::columns::Columns;
use super::coverage::{QueryWords, SegmentCoverage};
use super::search::Candidate;
use super::{MemoryIndex, Search};
use crate::Result;
use crate::format::MemoryType;

/// Largest gap between two consecutive episodic memories of one episode.
pub const EPISODE_GAP_SECS: i64 = 30 * 60;
/// How many of the best matches pass relevance to their neighbours.
const SEEDS: usize = 10;
/// How far from a candidate its episode is followed; a longer episode is cut there.
const REACH_SECS: i64 = 6 * 60 * 60;
/// How much a reflection's relevance exceeds its best source's when it takes it on, so that it
/// comes first on a tie.
const REPRESENTATIVE_EDGE: f64 = 1e-6;

/// Each segment's ranking columns, opened once for the whole recall.
struct ColumnCache<'a> {
    searcher: &'a Searcher,
    now: i64,
    open: HashMap<u32, Columns>,
}

impl ColumnCache<'_> {
    fn get(&mut self, address: DocAddress) -> tantivy::Result<&Columns> {
        Ok(match self.open.entry(address.segment_ord) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Columns::open(
                self.searcher.segment_reader(address.segment_ord),
                self.now,
            )?),
        })
    }
}

/// What a recall adds to a memory's relevance through its episode.
#[derive(Clone, Copy, Debug, Default)]
struct Added {
    /// The episode prior.
    prior: f64,
    /// Contiguity's gift.
    gift: f64,
    /// Whether it belongs to an episode of more than one memory (the prior of a lone memory is
    /// a share of its own relevance, which changes no order and is not shown).
    member: bool,
}

impl Added {
    /// The prior as `--explain` and `--json` show it: 0 for a lone memory.
    fn shown(&self) -> f64 {
        if self.member { self.prior } else { 0.0 }
    }
}

impl MemoryIndex {
    /// What relates the candidates to each other: contiguity and the episode prior add to
    /// their relevance (bringing in the episodes' unmatched members), relevance is rescaled to
    /// a best of 1, then each reflection takes its best source's relevance if that is higher.
    /// `words` are the question's content words as the coverage weighed them. A question
    /// asking for several things ([`crate::question::Question::asks_for_several`]) keeps only
    /// `list_episode_share` of both: its answers lie in many episodes.
    pub(super) fn relate(
        &self,
        searcher: &Searcher,
        search: &Search,
        words: &QueryWords,
        candidates: &mut Vec<Candidate>,
    ) -> Result<()> {
        let mut columns =
            ColumnCache { searcher, now: search.now.as_second(), open: HashMap::new() };
        let ranking = search.ranking;
        let share = match search.question.asks_for_several() {
            true => ranking.list_episode_share,
            false => 1.0,
        };
        let (episode_weight, contiguity_weight) =
            (share * ranking.episode_weight, share * ranking.contiguity_weight);
        let episodic = search.kinds.is_empty() || search.kinds.contains(&MemoryType::Episodic);
        let on = contiguity_weight > 0.0 || episode_weight > 0.0;
        if on && episodic && !candidates.is_empty() {
            let episodes = self.episodes(searcher, search, candidates, &mut columns)?;
            let mut added =
                self.episode_prior(searcher, words, episode_weight, &episodes, candidates)?;
            for (address, gift) in contiguity(&episodes, candidates, contiguity_weight) {
                added.entry(address).or_default().gift += gift;
            }
            for c in candidates.iter_mut() {
                if let Some(a) = added.remove(&c.address) {
                    c.episode = a.shown();
                    c.relevance += a.prior + a.gift;
                }
            }
            candidates.extend(added.into_iter().map(|(address, a)| Candidate {
                address,
                relevance: a.prior + a.gift,
                bm25: 0.0,
                coverage: 0.0,
                episode: a.shown(),
            }));
            rescale(candidates);
        }
        reflections_lead(candidates, &mut columns)
    }

    /// The episodes around the candidates, each in time order (ties by content hash, the same
    /// in every root); only episodic memories that pass the search's filters are members.
    fn episodes(
        &self,
        searcher: &Searcher,
        search: &Search,
        candidates: &[Candidate],
        columns: &mut ColumnCache,
    ) -> Result<Vec<Vec<DocAddress>>> {
        // The spans of time around the candidates, merged when they touch.
        let mut spans: Vec<(i64, i64)> = Vec::with_capacity(candidates.len());
        for c in candidates {
            let at = columns.get(c.address)?.created(c.address.doc_id);
            spans.push((at.saturating_sub(REACH_SECS), at.saturating_add(REACH_SECS)));
        }
        spans.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
        for (lo, hi) in spans {
            match merged.last_mut() {
                Some(last) if lo <= last.1 + EPISODE_GAP_SECS => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        let within = |at: i64| {
            let i = merged.partition_point(|&(lo, _)| lo <= at);
            i > 0 && at <= merged[i - 1].1
        };
        // The episodic memories under the filters, read segment by segment.
        let mut filters = self.filters(&[MemoryType::Episodic], search.tags);
        filters.extend(self.validity(search.validity));
        let query = BooleanQuery::new(filters);
        let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
        let mut members: Vec<(i64, u64, DocAddress)> = Vec::new();
        for (ord, segment) in searcher.segment_readers().iter().enumerate() {
            let alive = segment.alive_bitset();
            let mut docs = weight.scorer(segment, 1.0)?;
            let mut doc = docs.doc();
            while doc != TERMINATED {
                if alive.is_none_or(|a| a.is_alive(doc)) {
                    let address = DocAddress::new(ord as u32, doc);
                    let col = columns.get(address)?;
                    let at = col.created(doc);
                    if within(at) {
                        members.push((at, col.tiebreak(doc), address));
                    }
                }
                doc = docs.advance();
            }
        }
        members.sort_unstable();
        let mut episodes: Vec<Vec<DocAddress>> = Vec::new();
        let mut last: Option<i64> = None;
        for (at, _, address) in members {
            match (last, episodes.last_mut()) {
                (Some(prev), Some(episode)) if at - prev <= EPISODE_GAP_SECS => {
                    episode.push(address)
                }
                _ => episodes.push(vec![address]),
            }
            last = Some(at);
        }
        Ok(episodes)
    }
}

/// BM25's term-frequency saturation and length normalisation, applied to an episode as one
/// document (see [`MemoryIndex::episode_prior`]).
const K1: f64 = 1.2;
const B: f64 = 0.75;

impl MemoryIndex {
    /// The episode prior of each member of an episode that holds a candidate: `weight` (the
    /// episode weight, less for a question asking for several things) × the episode's
    /// relevance, its score as one document over the best score of one candidate alone. A
    /// document's score is BM25's formula: for each content word of the question, its IDF ×
    /// `n(k1 + 1) / (n + k1(1 − b + b × len / avg len))`, where `n` is how many of its
    /// memories hold the word and `len` how many memories it has. A candidate outside an
    /// episode is its own: its prior is `weight` × its relevance, which leaves the order among
    /// such memories as it was. Contiguity adds its gift to the returned map.
    fn episode_prior(
        &self,
        searcher: &Searcher,
        words: &QueryWords,
        weight: f64,
        episodes: &[Vec<DocAddress>],
        candidates: &[Candidate],
    ) -> Result<HashMap<DocAddress, Added>> {
        let mut out: HashMap<DocAddress, Added> = HashMap::new();
        if weight <= 0.0 {
            return Ok(out);
        }
        let is_candidate: HashSet<DocAddress> = candidates.iter().map(|c| c.address).collect();
        let episodes: Vec<&Vec<DocAddress>> = episodes
            .iter()
            .filter(|e| e.len() > 1 && e.iter().any(|a| is_candidate.contains(a)))
            .collect();
        let in_episode: HashSet<DocAddress> = episodes.iter().copied().flatten().copied().collect();
        for c in candidates.iter().filter(|c| !in_episode.contains(&c.address)) {
            out.insert(c.address, Added { prior: weight * c.relevance, ..Added::default() });
        }
        if episodes.is_empty() {
            return Ok(out);
        }
        // The documents scored: each episode, then each candidate alone.
        let mut units: Vec<&[DocAddress]> = episodes.iter().map(|e| e.as_slice()).collect();
        units.extend(candidates.iter().map(|c| std::slice::from_ref(&c.address)));
        let held = self.words_held(searcher, words, &units)?;
        // The average length of the documents the candidates make: episodes and lone memories.
        let lone = candidates.len()
            - candidates.iter().filter(|c| in_episode.contains(&c.address)).count();
        let avg_len = (in_episode.len() + lone) as f64 / (episodes.len() + lone) as f64;
        let score = |len: usize, held: &[(usize, f32)]| -> f64 {
            let norm = K1 * (1.0 - B + B * len as f64 / avg_len);
            let mut counts: HashMap<usize, (f64, f64)> = HashMap::new();
            for (word, idf) in held {
                counts.entry(*word).or_insert((f64::from(*idf), 0.0)).1 += 1.0;
            }
            counts.values().map(|(idf, n)| idf * n * (K1 + 1.0) / (n + norm)).sum()
        };
        let best_alone = held[episodes.len()..].iter().map(|h| score(1, h)).fold(0.0, f64::max);
        if best_alone <= 0.0 {
            return Ok(out);
        }
        for (episode, held) in episodes.iter().zip(&held) {
            let prior = weight * score(episode.len(), held) / best_alone;
            for address in episode.iter() {
                out.insert(*address, Added { prior, member: true, ..Added::default() });
            }
        }
        Ok(out)
    }

    /// Which content words of the question each unit's memories hold (a word once per memory
    /// holding it), with the word's place and IDF.
    fn words_held(
        &self,
        searcher: &Searcher,
        words: &QueryWords,
        units: &[&[DocAddress]],
    ) -> Result<Vec<Vec<(usize, f32)>>> {
        let fields = [self.fields.title, self.fields.body, self.fields.tags];
        let mut members: Vec<(DocAddress, usize)> = units
            .iter()
            .enumerate()
            .flat_map(|(u, unit)| unit.iter().map(move |a| (*a, u)))
            .collect();
        members.sort_unstable();
        let mut held: Vec<Vec<(usize, f32)>> = vec![Vec::new(); units.len()];
        for segment_members in members.chunk_by(|a, b| a.0.segment_ord == b.0.segment_ord) {
            let segment = searcher.segment_reader(segment_members[0].0.segment_ord);
            let coverage = SegmentCoverage::open(segment, &fields, words)?;
            for (address, unit) in segment_members {
                held[*unit].extend(coverage.held_by(address.doc_id));
            }
        }
        Ok(held)
    }
}

/// What each of the best [`SEEDS`] candidates passes to its episode's members one and two
/// steps away: `share` × its relevance, half that at two steps; the larger gift counts.
fn contiguity(
    episodes: &[Vec<DocAddress>],
    candidates: &[Candidate],
    share: f64,
) -> HashMap<DocAddress, f64> {
    let mut gifts: HashMap<DocAddress, f64> = HashMap::new();
    if share <= 0.0 {
        return gifts;
    }
    let mut seeds: Vec<&Candidate> = candidates.iter().collect();
    seeds.sort_by(|a, b| b.relevance.total_cmp(&a.relevance));
    seeds.truncate(SEEDS);
    let position: HashMap<DocAddress, (usize, usize)> = episodes
        .iter()
        .enumerate()
        .flat_map(|(e, members)| members.iter().enumerate().map(move |(i, a)| (*a, (e, i))))
        .collect();
    for seed in seeds {
        let Some(&(e, i)) = position.get(&seed.address) else { continue };
        let episode = &episodes[e];
        for distance in 1..=2usize {
            let passed = seed.relevance * share / distance as f64;
            for j in [i.checked_sub(distance), Some(i + distance)].into_iter().flatten() {
                if let Some(address) = episode.get(j) {
                    let slot = gifts.entry(*address).or_insert(0.0);
                    *slot = slot.max(passed);
                }
            }
        }
    }
    gifts
}

/// Divides every relevance (and episode prior) by the best relevance, when it is above 0.
fn rescale(candidates: &mut [Candidate]) {
    let max = candidates.iter().map(|c| c.relevance).fold(0.0, f64::max);
    if max > 0.0 {
        for c in candidates.iter_mut() {
            c.relevance /= max;
            c.episode /= max;
        }
    }
}

/// A reflection consolidates its sources: among the candidates, it takes the relevance of its
/// best source when that is higher than its own (and [`REPRESENTATIVE_EDGE`] more), so that
/// sources lifting each other as one episode never push it below them.
fn reflections_lead(candidates: &mut [Candidate], columns: &mut ColumnCache) -> Result<()> {
    let mut keys: Vec<(u64, Option<u64>)> = Vec::with_capacity(candidates.len());
    for c in candidates.iter() {
        let col = columns.get(c.address)?;
        keys.push((col.id_key(c.address.doc_id), col.reflection_key(c.address.doc_id)));
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
    let mut lifted = false;
    for (c, (key, _)) in candidates.iter_mut().zip(&keys) {
        if let Some(&best) = best_source.get(key)
            && best >= c.relevance
        {
            c.relevance = best + REPRESENTATIVE_EDGE;
            lifted = true;
        }
    }
    if lifted {
        rescale(candidates);
    }
    Ok(())
}
