//! Recall: refresh, embed the query, search (BM25, vector or hybrid), record the retrieval.

use jiff::Timestamp;

use super::{Code, Files, Usage, Vectors, model};
use crate::config::RecallMode;
use crate::embed::vectors::VectorStore;
use crate::format::MemoryType;
use crate::index::{Hit, RefreshReport, Search, Validity};
use crate::question::Question;
use crate::score::Relevance;
use crate::usage;
use crate::{Error, Result};

/// What recall is asked for.
#[derive(Clone, Debug, Default)]
pub struct RecallOptions {
    /// Keep only these types (all when empty).
    pub kinds: Vec<MemoryType>,
    /// Keep only memories with all of these tags.
    pub tags: Vec<String>,
    /// How many memories at most.
    pub limit: usize,
    /// Return invalidated memories too (marked by their `invalid_at`).
    pub include_invalid: bool,
    /// Return what was valid at this time instead: created by then and not yet invalid.
    pub as_of: Option<Timestamp>,
    /// Record a `retrieved` event for each hit in the usage log.
    pub record: bool,
    /// BM25, vector or hybrid; `None` takes the root's default (see [`Vectors::recall_mode`]).
    pub mode: Option<RecallMode>,
    /// Leave out hits whose strength (see [`crate::score::strength`]) is below this; 0 keeps
    /// the top k whatever their strength.
    pub min_strength: f64,
}

/// The strength below which `mem context` and the MCP `recall` tool leave a memory out: 30 %
/// of the query's content (by IDF), or an embedding cosine of 0.3 (measured in
/// docs/ranking.md).
pub const DEFAULT_MIN_STRENGTH: f64 = 0.3;

/// What a recall found, and how: the hits with the mode actually used (a hybrid recall without
/// a usable model is a BM25 recall), the synonyms searched, and the measure of relevance.
#[derive(Debug)]
pub struct Recall {
    /// The ranked memories, best first.
    pub hits: Vec<Hit>,
    /// What the refresh before the search found and did, with notices and warnings (a model
    /// that could not be used, usage that could not be recorded).
    pub report: RefreshReport,
    /// The mode the ranking used.
    pub mode: RecallMode,
    /// Why a vector or hybrid recall was asked and BM25 ranked instead (no usable model, no
    /// vector yet); the report's warnings say it to the user too.
    pub fallback: Option<String>,
    /// The synonyms the query was expanded with (empty when expansion is off).
    pub expansions: Vec<String>,
    /// Whether the query asks for several things ([`Question::asks_for_several`]):
    /// the episode prior and contiguity then keep `[ranking] list_episode_share` of their weight.
    pub asks_for_several: bool,
    /// The text embedded for the cosine when it is not the query: the query without the
    /// people it names ([`Question::embedded`]).
    pub embedded: Option<String>,
    /// How relevance was computed; `None` when nothing matched.
    pub relevance: Option<Relevance>,
    /// The question's vector, when the model embedded it (of [`Recall::embedded`] when that
    /// is set, else of the query), for a caller that asks elsewhere with it (the team store).
    pub vector: Option<Vec<f32>>,
}

impl Recall {
    /// The formulas behind the scores with this root's weights (`mem recall --explain`);
    /// empty when nothing matched.
    pub fn explain(&self, config: &crate::config::Config) -> String {
        let Some(relevance) = &self.relevance else {
            return String::new();
        };
        let ranking = &config.ranking;
        let mut text = crate::score::explain(
            relevance,
            ranking,
            &self.expansions,
            config.query.expansion_weight,
        );
        let episodes = ranking.episode_weight > 0.0 || ranking.contiguity_weight > 0.0;
        if self.asks_for_several && episodes && ranking.list_episode_share < 1.0 {
            text.push_str(&format!(
                "the question asks for several things: the episode prior and contiguity at × {} \
                 of their weights (list_episode_share)\n",
                ranking.list_episode_share
            ));
        }
        if let Some(embedded) = &self.embedded {
            text.push_str(&format!(
                "cosine of the question without the people it names: \"{embedded}\"\n"
            ));
        }
        // Each layer's scores on one scale: the factor of each layer below 1.
        let mut scaled: Vec<(crate::store::Layer, f64)> = Vec::new();
        for hit in &self.hits {
            if let (Some(layer), Some(scale)) = (hit.layer, hit.layer_scale)
                && scale < 1.0
                && !scaled.iter().any(|(l, _)| *l == layer)
            {
                scaled.push((layer, scale));
            }
        }
        if !scaled.is_empty() {
            let each: Vec<String> =
                scaled.iter().map(|(l, s)| format!("{} × {s:.3}", l.as_str())).collect();
            text.push_str(&format!(
                "layers put on one scale (each layer's scores × its best match's strength over \
                 the best of all, `layer_scale`): {}\n",
                each.join(", ")
            ));
        }
        text
    }
}

/// The parts of an engine that one recall reads and writes.
pub(super) struct Recalling<'a> {
    /// The files and index searched (and refreshed).
    pub(super) files: &'a mut Files,
    /// The usage log the retrievals are recorded in, and the last-use map it refreshes.
    pub(super) usage: &'a mut Usage,
    /// The model and vectors of vector and hybrid recall.
    pub(super) vectors: &'a mut Vectors,
    /// The code checks applied to the hits.
    pub(super) code: &'a Code,
}

impl Recalling<'_> {
    /// [`super::Engine::recall`] of a question already analysed (built at the same `now`), as
    /// [`super::Layers`] asks both its engines: the question is analysed once, and each run of
    /// the search reads it. The people it names are this root's to resolve: the engine works on
    /// its own copy.
    pub(super) fn question(
        &mut self,
        question: &Question,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Recall> {
        let mut question = question.clone();
        let mut recall = self.once(&mut question, options, now, progress)?;
        let stamps: Vec<(&str, crate::index::Stamp)> =
            recall.hits.iter().map(|h| (h.record.path.as_str(), h.record.stamp)).collect();
        let changed = self.files.changed_files(&stamps);
        let checked = match changed.is_empty() {
            true => None,
            false => Some(self.files.refresh_files(&changed, now)?),
        };
        if let Some(checked) = checked.filter(RefreshReport::changed) {
            let first = recall.report;
            recall = self.once(&mut question, options, now, progress)?;
            let report = &mut recall.report;
            report.notices.splice(0..0, first.notices);
            report.warnings.splice(0..0, first.warnings);
            report.add_counts(&checked);
        }
        self.code.judge_hits(self.files, &mut recall.hits);
        if options.record {
            let notice = record_retrievals(self.usage, question.text(), &recall.hits, now);
            recall.report.notices.extend(notice);
        }
        Ok(recall)
    }

    /// One refresh and search; the people `question` names are resolved against the index
    /// once it is refreshed ([`Question::resolve`]), for the embedding and every search.
    fn once(
        &mut self,
        question: &mut Question,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Recall> {
        let mode = self.vectors.recall_mode(self.files, options.mode);
        // The embedding is of the question without the people it names (the name factor and
        // BM25 weigh who), as the index knows them before its refresh; an index that cannot
        // say embeds the question whole.
        let mut embedded = match mode {
            RecallMode::Bm25 => question.text().to_string(),
            _ => self
                .files
                .index
                .names(question)
                .map_or_else(|_| question.text().to_string(), |names| question.without(&names)),
        };
        // The query is embedded while the index is refreshed: two jobs for two cores.
        let (refreshed, mut query_vector) = match mode {
            RecallMode::Bm25 => (self.files.refresh_for_recall(self.usage, now, progress), None),
            _ => match self.vectors.model().take() {
                Ok(mut embedder) => {
                    let (files, usage) = (&mut *self.files, &mut *self.usage);
                    let (refreshed, vector) = rayon::join(
                        || files.refresh_for_recall(usage, now, progress),
                        || model::embed_one(&mut embedder, &embedded),
                    );
                    self.vectors.model().put(embedder);
                    (refreshed, Some(vector))
                }
                Err(e) => (self.files.refresh_for_recall(self.usage, now, progress), Some(Err(e))),
            },
        };
        let mut report = refreshed?;
        // Who the question names, as the refreshed index knows them: looked up once, for the
        // embedding and every search below (an index that cannot say leaves it to the search,
        // whose error rebuilds it).
        question.resolve(self.files.index.names(question).ok());
        // The refresh may have brought the first memories of a person the question names (a
        // new root, another tool's files): then the question is embedded again without them.
        if matches!(query_vector, Some(Ok(_))) && question.embedded() != embedded {
            let now_known = question.embedded().to_string();
            query_vector = Some(self.vectors.model().embed(&now_known));
            embedded = now_known;
        }
        let mut fallback = None;
        let question_vector = query_vector.as_ref().and_then(|v| v.as_ref().ok()).cloned();
        let vector = match query_vector {
            None => None,
            Some(query_vector) => match query_vector
                .and_then(|query_vector| self.vector_query(query_vector, &mut report))
            {
                // Hybrid recall without a single vector is BM25 recall.
                Ok(found) if found.searched == 0 && mode == RecallMode::Hybrid => {
                    fallback = Some("no memory has a vector yet".to_string());
                    None
                }
                Ok(found) => Some(found),
                Err(e @ Error::Embed(_)) if mode == RecallMode::Hybrid => {
                    report.warnings.push(format!("{e}; recall uses BM25 only"));
                    fallback = Some(e.to_string());
                    None
                }
                Err(e) => return Err(e),
            },
        };
        let mode = if vector.is_some() { mode } else { RecallMode::Bm25 };
        let vector = vector.as_ref();
        let store = self.vectors.loaded_vectors();
        let hits = match self.files.search(question, options, now, mode, vector, store) {
            Err(Error::Index(e)) => {
                let mut rebuilt = self.files.rebuild(self.usage, now, progress)?;
                rebuilt.notices.insert(
                    0,
                    format!(
                        "the index could not be searched ({e}); rebuilt it from the memory files"
                    ),
                );
                rebuilt.notices.extend(std::mem::take(&mut report.notices));
                rebuilt.warnings.extend(std::mem::take(&mut report.warnings));
                report = rebuilt;
                let store = self.vectors.loaded_vectors();
                self.files.search(question, options, now, mode, vector, store)?
            }
            result => result?,
        };
        let mut hits = hits;
        if options.min_strength > 0.0 {
            hits.retain(|h| h.strength >= options.min_strength);
            for (i, hit) in hits.iter_mut().enumerate() {
                hit.rank = i + 1;
            }
        }
        let relevance = hits.first().map(|best| relevance(&self.files.config, mode, best));
        let expansions = self.files.expansions(question);
        let asks_for_several = question.asks_for_several();
        let embedded =
            (mode != RecallMode::Bm25 && embedded != question.text()).then_some(embedded);
        Ok(Recall {
            hits,
            report,
            mode,
            fallback,
            expansions,
            asks_for_several,
            embedded,
            relevance,
            vector: question_vector,
        })
    }

    /// Brings the vectors up to date (within the recall limit) and finds the memories nearest
    /// to the query's embedding.
    fn vector_query(
        &mut self,
        vector: Vec<f32>,
        report: &mut RefreshReport,
    ) -> Result<VectorQuery> {
        let limit = self.files.config.embed.recall_embed_limit;
        let synced = self.vectors.sync(self.files, Some(limit), &crate::progress::Silent)?;
        if let Some(why) = synced.discarded {
            report.notices.push(format!("{why}; the vectors are being computed again"));
        }
        if synced.pending > 0 {
            report.notices.push(format!(
                "{} memories have no vector yet (more than [embed] recall_embed_limit = {limit}); \
                 `mem index` computes them; this recall searches the vectors there are",
                synced.pending
            ));
        }
        let e = &self.files.config.embed;
        let (k, min) = (e.candidates, e.min_cosine);
        let nearest = self.vectors.nearest(&vector, k, min);
        let searched = self.vectors.loaded_vectors().map_or(0, |store| store.len());
        Ok(VectorQuery { vector, nearest, searched })
    }
}

/// Appends a `retrieved` event per hit, at its rank, to the usage log. A log that cannot
/// be written is a notice (returned), not an error: recall still answers.
pub(crate) fn record_retrievals(
    usage: &mut Usage,
    query: &str,
    hits: &[Hit],
    now: Timestamp,
) -> Option<String> {
    if hits.is_empty() {
        return None;
    }
    let ids: Vec<&str> = hits.iter().map(|h| h.record.id.as_str()).collect();
    let hash = usage::query_hash(query);
    let recorded = usage.log().and_then(|log| log.record_retrieved(&ids, &hash, now));
    recorded.err().map(|e| format!("usage not recorded: {e}"))
}

/// The measure of relevance of a recall in `mode`, with the best raw value its hits were
/// divided by.
fn relevance(config: &crate::config::Config, mode: RecallMode, hit: &Hit) -> Relevance {
    let best = hit.best_raw;
    match (mode, hit.semantic) {
        (RecallMode::Vector, Some(_)) => Relevance::Vector { best },
        (_, Some(_)) => {
            let e = &config.embed;
            Relevance::Fused {
                fusion: e.fusion,
                rrf_k: e.rrf_k,
                vector_weight: e.vector_weight,
                candidates: e.candidates,
                best,
            }
        }
        (_, None) => Relevance::Bm25 { best },
    }
}

impl Files {
    fn search(
        &self,
        question: &Question,
        options: &RecallOptions,
        now: Timestamp,
        mode: RecallMode,
        vector: Option<&VectorQuery>,
        store: Option<&VectorStore>,
    ) -> Result<Vec<Hit>> {
        let (Some(vector), RecallMode::Vector | RecallMode::Hybrid) = (vector, mode) else {
            return self.search_ranked(question, options, now, &self.config.ranking);
        };
        let cosine_of = |key: u64| store.and_then(|s| s.cosine_by_key(&vector.vector, key));
        let e = &self.config.embed;
        let side = crate::index::VectorSide {
            mode,
            nearest: &vector.nearest,
            cosine_of: &cosine_of,
            fusion: e.fusion,
            rrf_k: e.rrf_k,
            vector_weight: e.vector_weight,
            candidates: e.candidates,
        };
        let search = self.search_request(question, options, now, &self.config.ranking);
        catch_index_panic(|| self.index.search_fused(&search, &side))
    }

    fn search_request<'a>(
        &'a self,
        question: &'a Question,
        options: &'a RecallOptions,
        now: Timestamp,
        ranking: &'a crate::config::Ranking,
    ) -> Search<'a> {
        Search {
            question,
            kinds: &options.kinds,
            tags: &options.tags,
            limit: options.limit,
            now,
            ranking,
            thesaurus: &self.thesaurus,
            expansion_weight: self.config.query.expansion_weight,
            validity: match (options.as_of, options.include_invalid) {
                (Some(at), _) => Validity::AsOf(at),
                (None, true) => Validity::All,
                (None, false) => Validity::ValidAt(now),
            },
            last_used: &self.last_used,
        }
    }

    pub(super) fn search_ranked(
        &self,
        question: &Question,
        options: &RecallOptions,
        now: Timestamp,
        ranking: &crate::config::Ranking,
    ) -> Result<Vec<Hit>> {
        let search = self.search_request(question, options, now, ranking);
        catch_index_panic(|| self.index.search(&search))
    }

    /// The synonyms a question is expanded with (empty when expansion is off).
    pub(crate) fn expansions(&self, question: &Question) -> Vec<String> {
        let weight = self.config.query.expansion_weight;
        crate::index::expansions(&self.thesaurus, question.tokens(), weight).into_iter().collect()
    }
}

/// The vector side of one recall.
struct VectorQuery {
    /// The query's embedding.
    vector: Vec<f32>,
    /// Its nearest memories, best first, as (id, cosine).
    nearest: Vec<(String, f32)>,
    /// How many vectors were searched.
    searched: usize,
}

/// Runs an index search; a damaged segment can make tantivy panic, which is an index error,
/// cured by a rebuild.
fn catch_index_panic(search: impl FnOnce() -> Result<Vec<Hit>>) -> Result<Vec<Hit>> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(search)).unwrap_or_else(|panic| {
        Err(Error::Index(tantivy::TantivyError::InternalError(crate::index::panic_message(
            &*panic,
        ))))
    })
}
