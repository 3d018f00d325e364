//! Ranking: pure functions of a memory's components, the weights and `now`; no clock is read.
//!
//! ```text
//! score = relevance × (1 − w_rec + w_rec × recency) × (1 − w_imp + w_imp × importance)
//! relevance  = bm25 / max bm25 over the matches            (0 when the memory does not match)
//! recency    = exp(−age / S), S = half_life / ln 2           (age from last access, else created)
//! importance = (importance − 1) / 9                          (1..10 → 0..1)
//! ```
//! Each factor stays in `[1 − w, 1]`, so recency and importance refine relevance but never
//! replace it: a memory that does not match the query scores 0. See `docs/ranking.md`.

use serde::Serialize;

use crate::config::{Fusion, Ranking};

/// Seconds since the Unix epoch.
pub type Epoch = i64;
/// A duration in days.
pub type Days = f64;

const SECONDS_PER_DAY: f64 = 86_400.0;

/// The normalised components of a score, each in `0..=1`. Serialised as relevance, coverage,
/// then each of [`FACTORS`] by its name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Components {
    /// Query match: keyword relevance (BM25 × coverage factor), fused with the cosine in a
    /// hybrid recall, divided by the best among the matches.
    pub relevance: f64,
    /// The share of the query's content words (weighted by IDF) the memory holds.
    pub coverage: f64,
    /// The part of relevance its episode gave it (the episode prior; see docs/ranking.md); 0
    /// for a memory outside an episode.
    pub episode: f64,
    /// Freshness: `exp(−age / S)`.
    pub recency: f64,
    /// Importance mapped from 1..10 to 0..1.
    pub importance: f64,
    /// 1 when the question names no date, or the memory was created within one it names.
    pub date: f64,
    /// 1 unless the question asks "when" and the memory's text carries no time expression.
    pub time: f64,
    /// 1 unless the question names one person and the memory is not theirs (tag or source).
    pub name: f64,
    /// 1 unless the memory states how the code is (semantic or procedural) and everything it
    /// cites in the project's repository is gone (set by the engine, see `crate::cites`).
    pub code: f64,
    /// 1 unless the memory is the digest of a session that did no work (no tool call, no file,
    /// no command) and would rank above a fact or procedure that holds a word of the question:
    /// then what brings it just below the weakest of those (see [`questions_below_facts`]).
    pub work: f64,
}

/// How a memory matched the question before the factors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fit {
    /// Relevance in `0..=1`, contiguity and the episode prior included.
    pub relevance: f64,
    /// The share of the query's content words (weighted by IDF) it holds.
    pub coverage: f64,
    /// The part of relevance its episode gave it.
    pub episode: f64,
    /// Whether it is by or tagged with the one person the question names.
    pub named: bool,
}

/// What a question asks for besides its words, read once per recall (see docs/ranking.md).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cues {
    /// The spans of time it names ("in July", "last week"), resolved against `now`.
    pub windows: Vec<crate::dates::Window>,
    /// Whether it asks when something happened.
    pub when: bool,
    /// Whether it names exactly one person that some memory is by or tagged with.
    pub names_someone: bool,
}

impl Cues {
    /// The cues of `question`, as it was analysed; `names_someone` is the index's to say.
    pub fn of(question: &crate::question::Question, names_someone: bool) -> Cues {
        Cues { windows: question.windows().to_vec(), when: question.asks_when(), names_someone }
    }
}

impl Components {
    /// The components of a memory whose relevance is `relevance`, from its signals, at `now`;
    /// a session digest's relevance counts `[ranking] digest_weight` of it.
    pub fn of(
        fit: &Fit,
        signals: &Signals,
        cues: &Cues,
        now: Epoch,
        ranking: &Ranking,
    ) -> Components {
        let digest = if signals.role.is_digest() { ranking.digest_weight } else { 1.0 };
        let unless = |asked: bool, holds: bool| if !asked || holds { 1.0 } else { 0.0 };
        Components {
            relevance: fit.relevance * digest,
            coverage: fit.coverage,
            episode: fit.episode * digest,
            recency: recency(age_days(now, signals.last_access), ranking),
            importance: importance(signals.importance),
            date: unless(
                !cues.windows.is_empty(),
                cues.windows.iter().any(|w| w.contains(signals.created)),
            ),
            time: unless(cues.when, signals.has_time),
            name: unless(cues.names_someone, fit.named),
            code: 1.0,
            work: 1.0,
        }
    }
}

/// One factor of the score: relevance is multiplied by `1 − w + w × value` for each (see
/// [`factor`]). The one list that [`combine`], [`explain`], `mem recall --explain` and
/// `--json`, and the MCP `recall` tool's description read: a new factor is an entry here, its
/// field in [`Components`] (computed in [`Components::of`]) and its weight in `[ranking]`.
pub struct Factor {
    /// Its name in reports and JSON.
    pub name: &'static str,
    /// Its value for a memory, in `0..=1`.
    pub value: fn(&Components) -> f64,
    /// Its weight in this root's ranking.
    pub weight: fn(&Ranking) -> f64,
    /// How its value is computed, as `--explain` states it with this root's settings.
    pub definition: fn(&Ranking) -> String,
}

/// The factors of the score, in the order the formula multiplies them.
pub const FACTORS: [Factor; 7] = [
    Factor {
        name: "recency",
        value: |c| c.recency,
        weight: |r| r.recency_weight,
        definition: |r| {
            format!(
                "recency = 0.5^(age / {} days) since last access, else created",
                r.recency_half_life_days
            )
        },
    },
    Factor {
        name: "importance",
        value: |c| c.importance,
        weight: |r| r.importance_weight,
        definition: |_| "importance = (imp − 1) / 9".to_string(),
    },
    Factor {
        name: "date",
        value: |c| c.date,
        weight: |r| r.date_weight,
        definition: |_| {
            "date = 1 when the question names no date or the memory was created within one it \
             names (± 3 days for a day, 5 for a week, 10 for a month, 15 for a year), else 0"
                .to_string()
        },
    },
    Factor {
        name: "time",
        value: |c| c.time,
        weight: |r| r.time_weight,
        definition: |_| {
            "time = 1 unless the question asks when and the memory's text holds no time \
             expression, else 0"
                .to_string()
        },
    },
    Factor {
        name: "name",
        value: |c| c.name,
        weight: |r| r.name_weight,
        definition: |_| {
            "name = 1 unless the question names one person and the memory is not theirs (tag \
             or source), else 0"
                .to_string()
        },
    },
    Factor {
        name: "code",
        value: |c| c.code,
        weight: |r| r.code_weight,
        definition: |_| {
            "code = 0 when a semantic or procedural memory of a project root cites code that is \
             all gone from the repository (mem verify), else 1"
                .to_string()
        },
    },
    Factor {
        name: "work",
        value: |c| c.work,
        // A rule, not a preference: always applied in full.
        weight: |_| 1.0,
        definition: |_| {
            "work = 1, except for the digest of a session that did no work (no tool call, no \
             command, no file): it scales the digest to rank just below the weakest fact or \
             procedure that holds a word of the question"
                .to_string()
        },
    },
];

/// The names of the components, as reports and JSON give them: relevance, coverage, then each
/// factor.
pub fn component_names() -> Vec<&'static str> {
    ["relevance", "coverage", "episode"].into_iter().chain(FACTORS.iter().map(|f| f.name)).collect()
}

impl Serialize for Components {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(3 + FACTORS.len()))?;
        map.serialize_entry("relevance", &self.relevance)?;
        map.serialize_entry("coverage", &self.coverage)?;
        map.serialize_entry("episode", &self.episode)?;
        for f in &FACTORS {
            map.serialize_entry(f.name, &(f.value)(self))?;
        }
        map.end()
    }
}

/// What the index keeps of a memory for ranking besides its text (read by one reader,
/// `index/columns.rs`).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct Signals {
    /// Importance 1..=10.
    pub importance: u8,
    /// Last access, else creation, in seconds since the epoch.
    pub last_access: Epoch,
    /// What kind of memory it is, for the rules that depend on it.
    pub role: Role,
    /// Creation, in seconds since the epoch.
    pub created: Epoch,
    /// Whether its title or body carries a time expression ([`crate::dates`]).
    pub has_time: bool,
}

/// What a memory is, for the rules of ranking that depend on it (the index's `role` column).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// An episodic memory that no capture wrote.
    #[default]
    Other,
    /// A semantic or procedural memory: a fact or a way of working.
    Fact,
    /// A session digest that `mem capture` wrote, of a session that did some work.
    Digest,
    /// A session digest of a session that did no work: no tool call, no command, no file (it
    /// only asked and was answered).
    QuestionOnly,
}

impl Role {
    /// Its value in the index's column.
    pub fn code(self) -> u64 {
        match self {
            Role::Other => 0,
            Role::Fact => 1,
            Role::Digest => 2,
            Role::QuestionOnly => 3,
        }
    }

    /// The role of a column value (an unknown one is [`Role::Other`]).
    pub fn of_code(code: u64) -> Role {
        match code {
            1 => Role::Fact,
            2 => Role::Digest,
            3 => Role::QuestionOnly,
            _ => Role::Other,
        }
    }

    /// Whether it is a session digest.
    pub fn is_digest(self) -> bool {
        matches!(self, Role::Digest | Role::QuestionOnly)
    }
}

/// The rule that keeps a session that only asked in its place: a digest of a session that did
/// no work never ranks above a fact or procedure that holds a word of the question, whatever
/// its assistant answered (its words repeat the question; the fact holds the answer). Each such
/// digest scoring at least the weakest of those facts gets the `work` factor that brings it to
/// 0.999 of that score, and its score again. `scored` holds each candidate's score, role and
/// components.
pub fn questions_below_facts(scored: &mut [(f64, Role, &mut Components)], ranking: &Ranking) {
    let floor = scored
        .iter()
        .filter(|(_, role, c)| *role == Role::Fact && c.coverage > 0.0)
        .map(|(score, _, _)| *score)
        .min_by(f64::total_cmp);
    let Some(floor) = floor.filter(|f| *f > 0.0) else { return };
    for (score, role, components) in scored.iter_mut() {
        if *role == Role::QuestionOnly && *score >= floor {
            components.work = floor * 0.999 / *score;
            *score = combine(components, ranking);
        }
    }
}

/// How a recall's relevance was computed, to explain it: the measure and the best value it
/// was divided by.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "measure", rename_all = "snake_case")]
pub enum Relevance {
    /// Keyword relevance (BM25 × coverage factor) divided by the best among the matches.
    Bm25 {
        /// The best keyword relevance.
        best: f64,
    },
    /// Cosine divided by the best cosine among the candidates.
    Vector {
        /// The best cosine.
        best: f64,
    },
    /// BM25 and cosine fused (see [`fuse`]), divided by the best fused value.
    Fused {
        /// How they were fused.
        fusion: Fusion,
        /// `k` of reciprocal rank fusion.
        rrf_k: f64,
        /// Weight of the cosine in convex fusion.
        vector_weight: f64,
        /// Candidates taken from each side.
        candidates: usize,
        /// The best fused value.
        best: f64,
    },
}

/// The formulas behind a recall's scores, with this root's weights, as `mem recall
/// --explain` prints them under the table; `expansions` are the synonyms searched at
/// `expansion_weight`.
pub fn explain(
    relevance: &Relevance,
    ranking: &Ranking,
    expansions: &[String],
    expansion_weight: f32,
) -> String {
    let relevance = match *relevance {
        Relevance::Bm25 { best } => format!(
            "relevance = bm25 × (1 − {w} + {w} × coverage) / {best:.3} (best match)",
            w = ranking.coverage_weight
        ),
        Relevance::Vector { best } => format!("relevance = cosine / {best:.3} (best cosine)"),
        Relevance::Fused { fusion: Fusion::Rrf, rrf_k: k, candidates: c, best, .. } => format!(
            "relevance = fused / {best:.4}; fused = 1/({k} + bm25 rank) + 1/({k} + cosine \
             rank) over the {c} best of each (ranks in --json)"
        ),
        Relevance::Fused { fusion: Fusion::Convex, vector_weight: w, best, .. } => format!(
            "relevance = fused / {best:.3}; fused = {b} × bm25 / max bm25 + {w} × cosine / max \
             cosine",
            b = 1.0 - w
        ),
    };
    let mut text = String::from("\nscore = relevance");
    for f in &FACTORS {
        text.push_str(&format!(" × (1 − {w} + {w} × {})", f.name, w = (f.weight)(ranking)));
    }
    text.push_str(&format!("\n{relevance}"));
    for f in &FACTORS {
        text.push_str(&format!("; {}", (f.definition)(ranking)));
    }
    text.push('\n');
    if ranking.contiguity_weight > 0.0 {
        text.push_str(&format!(
            "contiguity: each of the 10 best matches adds {c} × its relevance to the episodic \
             memories right before and after it ({h} two steps away; consecutive ones at most \
             30 min apart), then relevance is rescaled to a best of 1\n",
            c = ranking.contiguity_weight,
            h = ranking.contiguity_weight / 2.0
        ));
    }
    if ranking.episode_weight > 0.0 {
        text.push_str(&format!(
            "episode prior (the episode column): each member of an episode holding a match adds \
             {w} × the episode's BM25 as one document over the best BM25 of one match alone; a \
             memory outside an episode adds {w} × its own relevance (shown as 0)\n",
            w = ranking.episode_weight
        ));
    }
    if ranking.digest_weight < 1.0 {
        text.push_str(&format!(
            "session digests (written by mem capture): relevance × {}\n",
            ranking.digest_weight
        ));
    }
    if !expansions.is_empty() {
        text.push_str(&format!(
            "synonyms searched at weight {expansion_weight}: {}\n",
            expansions.join(", ")
        ));
    }
    text
}

/// Days from `then` to `now`; a time in the future counts as age zero.
pub fn age_days(now: Epoch, then: Epoch) -> Days {
    (now.saturating_sub(then)).max(0) as f64 / SECONDS_PER_DAY
}

/// Ebbinghaus retention `exp(−t / S)` for age `t` and strength `S` (both in days): a larger
/// strength always decays more slowly.
pub fn retention(age: Days, strength: Days) -> f64 {
    if age <= 0.0 {
        return 1.0;
    }
    (-age / strength).exp()
}

/// Recency of a memory last reinforced `age` days ago: retention with the strength that halves
/// it every `recency_half_life_days`. Never increases with age.
pub fn recency(age: Days, ranking: &Ranking) -> f64 {
    retention(age, ranking.recency_half_life_days / std::f64::consts::LN_2)
}

/// Importance 1..=10 mapped linearly to 0..=1 (values outside are clamped).
pub fn importance(value: u8) -> f64 {
    f64::from(value.clamp(1, 10) - 1) / 9.0
}

/// How strongly a memory matches the query by itself, whatever the other matches: the share of
/// the query's content words it holds (coverage), or its embedding cosine with the query when
/// that is higher. Unlike relevance (divided by the best match, so the top hit always has 1),
/// it tells a weak match from a good one; see docs/ranking.md.
pub fn strength(coverage: f64, cosine: Option<f32>) -> f64 {
    coverage.max(cosine.map_or(0.0, f64::from)).max(0.0)
}

/// Keyword relevance before normalisation: BM25 times the coverage factor
/// `1 − w_cov + w_cov × coverage`, so that a memory holding most of the query is not beaten by
/// one that holds a single rare word of it.
pub fn keyword(bm25: f32, coverage: f64, ranking: &Ranking) -> f64 {
    f64::from(bm25) * factor(ranking.coverage_weight, coverage)
}

/// A component's multiplier: `1 − w + w × value`, in `[1 − w, 1]`.
pub fn factor(weight: f64, value: f64) -> f64 {
    1.0 - weight + weight * value
}

/// The final score: relevance times each of [`FACTORS`].
pub fn combine(c: &Components, ranking: &Ranking) -> f64 {
    FACTORS.iter().fold(c.relevance, |score, f| score * factor((f.weight)(ranking), (f.value)(c)))
}

/// What fusion knows of one candidate: its place on each side of a hybrid recall.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FusionInput {
    /// BM25 score (0 when the text does not match).
    pub bm25: f32,
    /// Best BM25 score among the candidates.
    pub max_bm25: f32,
    /// Rank among the BM25 candidates, 1 = best.
    pub bm25_rank: Option<usize>,
    /// Cosine with the query, if the memory has a vector.
    pub cosine: Option<f32>,
    /// Best cosine among the candidates.
    pub max_cosine: f32,
    /// Rank among the vector candidates, 1 = best.
    pub vector_rank: Option<usize>,
}

/// The fused relevance of a candidate, before normalisation by the best one.
///
/// - `Rrf`: `Σ 1 / (k + rank)` over the lists the candidate is on.
/// - `Convex`: `(1 − w) × bm25 / max bm25 + w × max(cosine, 0) / max cosine`.
pub fn fuse(c: &FusionInput, fusion: Fusion, rrf_k: f64, vector_weight: f64) -> f64 {
    match fusion {
        Fusion::Rrf => [c.bm25_rank, c.vector_rank]
            .into_iter()
            .flatten()
            .map(|rank| 1.0 / (rrf_k + rank as f64))
            .sum(),
        Fusion::Convex => {
            let ratio =
                |x: f32, max: f32| if max > 0.0 { f64::from(x.max(0.0) / max) } else { 0.0 };
            (1.0 - vector_weight) * ratio(c.bm25, c.max_bm25)
                + vector_weight * ratio(c.cosine.unwrap_or(0.0), c.max_cosine)
        }
    }
}

#[cfg(test)]
mod tests;
