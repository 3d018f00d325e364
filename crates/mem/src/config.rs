//! Settings of a memory root, read from its `mem.toml` (every key optional).

use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::error::SettingError;
pub use crate::rules::{DecayConfig, PruneConfig};
use crate::{Error, Result};

/// Name of the settings file at the top of a memory root.
pub const CONFIG_FILE: &str = "mem.toml";

/// The largest `mem.toml` (or user configuration file) read: settings, not data.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The commented `mem.toml` that `mem init` writes; it states every default.
pub const DEFAULT_CONFIG: &str = include_str!("default-config.toml");

/// All settings of a memory root.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// How recall ranks memories.
    pub ranking: Ranking,
    /// How queries are expanded.
    pub query: QueryConfig,
    /// The usage log.
    pub usage: UsageConfig,
    /// Starting strengths by type of memory.
    pub decay: DecayConfig,
    /// Prune suggestions.
    pub prune: PruneConfig,
    /// Reflection.
    pub reflect: ReflectConfig,
    /// Admission control on `mem add`.
    pub admission: AdmissionConfig,
    /// The local embedding model.
    pub embed: EmbedConfig,
    /// Size limits.
    pub limits: Limits,
    /// How recall keeps the index fresh.
    pub index: IndexConfig,
    /// Workspace checkpoints.
    pub checkpoint: CheckpointConfig,
    /// The agents' own memories.
    pub agents: AgentsConfig,
    /// The project's root and its git worktrees.
    pub project: ProjectConfig,
    /// The team store's name for this project (docs/teams.md).
    pub team: TeamConfig,
}

/// `[team]`: the name this project's memories go by in a team store; a root may not name a
/// server (`url` is only read to refuse it: the user configuration names the server).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TeamConfig {
    /// The project's name in the team store (default: from the repository's remote).
    pub project: Option<String>,
    /// Refused: a server named by a cloned repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// `[project]`: a project root in a git repository with linked worktrees (docs/teams.md,
/// "Worktrees"). A root may set it: it only chooses between two roots of one repository.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ProjectConfig {
    /// `true`: each linked worktree keeps its own `.memory/`; `false` (the default): they all
    /// use the main worktree's.
    pub per_worktree: bool,
}

/// `[agents]`: whether the agents' own memories are read as read-only layers for this root.
/// The user configuration decides (on by default); a root may only turn it off, never name a
/// folder to read.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AgentsConfig {
    /// `false` turns the native layers off for this root; `true` or unset leaves the user's
    /// setting.
    pub read_own_memories: Option<bool>,
}

/// `[checkpoint]`: what workspace checkpoints leave out.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointConfig {
    /// Files larger than this are left out of checkpoints; a root may only lower the user's
    /// setting (`checkpoint::DEFAULT_MAX_FILE_BYTES` when neither sets it).
    pub max_file_bytes: Option<u64>,
}

/// `[index]`: how recall checks that the index matches the files.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct IndexConfig {
    /// `quick` (folders, returned memories, everything every `full_check_secs`) or `full`.
    pub check: Check,
    /// Seconds after which a quick recall checks every file again.
    pub full_check_secs: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { check: Check::Quick, full_check_secs: 300 }
    }
}

/// How much of the root a recall checks against the index.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// One stat per folder and per returned memory; every file every `full_check_secs`.
    Quick,
    /// One stat per file, every recall.
    Full,
}

/// Ranking weights; see `docs/ranking.md` for the formula.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Ranking {
    /// Weight of recency in the score, `0 ≤ w < 1`.
    pub recency_weight: f64,
    /// Days for recency to halve.
    pub recency_half_life_days: f64,
    /// Weight of importance in the score, `0 ≤ w < 1`.
    pub importance_weight: f64,
    /// BM25 boost for title matches.
    pub title_boost: f32,
    /// BM25 boost for tag matches.
    pub tags_boost: f32,
    /// Weight of query coverage in keyword relevance, `0 ≤ w < 1`.
    pub coverage_weight: f64,
    /// Share of relevance a best match passes to its neighbours in an episode, `0 ≤ w ≤ 1`.
    pub contiguity_weight: f64,
    /// Factor of the relevance of a session digest that `mem capture` wrote, `0 < w ≤ 1`.
    pub digest_weight: f64,
    /// Share of the best episode's score its members get (the episode prior), `0 ≤ w ≤ 1`.
    pub episode_weight: f64,
    /// Share of the episode prior and of contiguity kept for a question that asks for several
    /// things ("what pets…", "how many times…"), `0 ≤ s ≤ 1`.
    pub list_episode_share: f64,
    /// Weight of the date factor (a memory created when the question says), `0 ≤ w < 1`.
    pub date_weight: f64,
    /// Weight of the time factor (a "when" question prefers text with a time), `0 ≤ w < 1`.
    pub time_weight: f64,
    /// Weight of the name factor (the person the question names), `0 ≤ w < 1`.
    pub name_weight: f64,
    /// Weight of the code factor (a memory whose cited code is all gone), `0 ≤ w < 1`.
    pub code_weight: f64,
}

impl Default for Ranking {
    fn default() -> Self {
        Ranking {
            recency_weight: 0.2,
            recency_half_life_days: 365.0,
            importance_weight: 0.3,
            title_boost: 1.0,
            tags_boost: 1.5,
            coverage_weight: 0.5,
            contiguity_weight: 0.5,
            digest_weight: 0.5,
            episode_weight: 0.75,
            list_episode_share: 0.5,
            date_weight: 0.5,
            time_weight: 0.2,
            name_weight: 0.15,
            code_weight: 0.5,
        }
    }
}

/// Query expansion settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct QueryConfig {
    /// Weight of a synonym match relative to a direct match, `0 ≤ w ≤ 1`.
    pub expansion_weight: f32,
    /// Extra synonym groups.
    pub synonyms: Vec<Vec<String>>,
}

impl Default for QueryConfig {
    fn default() -> Self {
        QueryConfig { expansion_weight: 0.3, synonyms: Vec::new() }
    }
}

/// Usage log settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct UsageConfig {
    /// Record `retrieved` events on recall.
    pub record_retrievals: bool,
    /// Write usage into this machine's file in `usage/`.
    pub sync: bool,
    /// Busy timeout of the usage database, in milliseconds.
    pub busy_timeout_ms: u64,
}

impl Default for UsageConfig {
    fn default() -> Self {
        UsageConfig { record_retrievals: true, sync: true, busy_timeout_ms: 5_000 }
    }
}

/// `mem reflect` settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReflectConfig {
    /// Cosine similarity for two memories to belong together.
    pub threshold: f32,
    /// Smallest cluster that becomes a reflection.
    pub min_cluster: usize,
    /// Summariser command: ignored in a root's `mem.toml` (it would run code from the root);
    /// the front end takes it from the user's configuration.
    pub summarizer: String,
    /// Seconds before the summariser is stopped.
    pub summarizer_timeout_secs: u64,
}

impl Default for ReflectConfig {
    fn default() -> Self {
        ReflectConfig {
            threshold: 0.15,
            min_cluster: 3,
            summarizer: String::new(),
            summarizer_timeout_secs: 120,
        }
    }
}

/// Admission control on `mem add`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AdmissionConfig {
    /// Similarity from which a new text is a near-duplicate.
    pub near_duplicate: f32,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig { near_duplicate: 0.8 }
    }
}

/// Limits on what is read.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Larger memory files are reported and skipped.
    pub max_file_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_file_bytes: 1 << 20 }
    }
}

/// `[embed]`: the local embedding model and how recall uses it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct EmbedConfig {
    /// The model folder: ignored in a root's `mem.toml` (it would load a library from the
    /// root); the front end passes the user's in [`crate::embed::ModelOverrides`].
    pub model_dir: String,
    /// Recall mode when a model is configured.
    pub mode: RecallMode,
    /// How hybrid recall fuses the two rankings.
    pub fusion: Fusion,
    /// The `k` of reciprocal rank fusion.
    pub rrf_k: f64,
    /// Weight of the cosine in convex fusion, 0..=1.
    pub vector_weight: f64,
    /// Candidates each side brings to the fusion.
    pub candidates: usize,
    /// Least cosine of a candidate found by the vector side alone.
    pub min_cosine: f32,
    /// Memories per model call at index time.
    pub batch_size: usize,
    /// Most memories recall embeds by itself.
    pub recall_embed_limit: usize,
    /// Embedding cosine that links two observations in reflection.
    pub reflect_threshold: f32,
    /// Embedding cosine at which admission refuses a new memory.
    pub near_duplicate: f32,
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            model_dir: String::new(),
            mode: RecallMode::Hybrid,
            fusion: Fusion::Convex,
            rrf_k: 60.0,
            vector_weight: 0.45,
            candidates: 100,
            min_cosine: 0.3,
            batch_size: 4,
            recall_embed_limit: 32,
            reflect_threshold: 0.5,
            near_duplicate: 0.9,
        }
    }
}

/// Which relevance recall uses.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RecallMode {
    /// Keyword relevance only.
    Bm25,
    /// Embedding cosine only.
    Vector,
    /// BM25 and cosine, fused.
    #[default]
    Hybrid,
}

impl RecallMode {
    /// Every mode, in the order the help lists them.
    pub const ALL: [RecallMode; 3] = [RecallMode::Bm25, RecallMode::Vector, RecallMode::Hybrid];

    /// The mode's name as written in `mem.toml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RecallMode::Bm25 => "bm25",
            RecallMode::Vector => "vector",
            RecallMode::Hybrid => "hybrid",
        }
    }

    /// What the mode does, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            RecallMode::Bm25 => "Keyword relevance only",
            RecallMode::Vector => "Embedding cosine only",
            RecallMode::Hybrid => "BM25 and cosine, fused",
        }
    }
}

impl std::str::FromStr for RecallMode {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<RecallMode, String> {
        RecallMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| format!("unknown recall mode {s:?}: use bm25, vector or hybrid"))
    }
}

/// How hybrid recall combines the BM25 and the cosine ranking.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// `(1 − w) × bm25 / max bm25 + w × cosine / max cosine`.
    #[default]
    Convex,
    /// Reciprocal rank fusion: `Σ 1 / (k + rank)`.
    Rrf,
}

impl Fusion {
    /// Every fusion, in the order the help lists them.
    pub const ALL: [Fusion; 2] = [Fusion::Convex, Fusion::Rrf];

    /// The fusion's name as written in `mem.toml` and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Fusion::Convex => "convex",
            Fusion::Rrf => "rrf",
        }
    }

    /// What the fusion computes, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Fusion::Convex => "(1 − w) × bm25 / max bm25 + w × cosine / max cosine",
            Fusion::Rrf => "Reciprocal rank fusion: Σ 1 / (k + rank)",
        }
    }
}

impl std::str::FromStr for Fusion {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Fusion, String> {
        Fusion::ALL
            .into_iter()
            .find(|f| f.as_str() == s)
            .ok_or_else(|| format!("unknown fusion {s:?}: use convex or rrf"))
    }
}

impl Config {
    /// The keys this file sets that a memory root may not set, because they name code to run
    /// (a library to load, a command): each is ignored, with this warning.
    pub fn ignored_keys(&self) -> Vec<String> {
        let mut ignored = Vec::new();
        if !self.embed.model_dir.trim().is_empty() {
            ignored.push(
                "mem.toml: [embed] model_dir is ignored: a memory root may not name a library \
                 to load; set model_dir in [embed] of the user configuration file \
                 (~/.config/mem/config.toml) or MEM_EMBED_MODEL_DIR"
                    .to_string(),
            );
        }
        if !self.reflect.summarizer.trim().is_empty() {
            ignored.push(
                "mem.toml: [reflect] summarizer is ignored: a memory root may not name a \
                 command to run; set summarizer in [reflect] of the user configuration file \
                 (~/.config/mem/config.toml) or pass --summarizer"
                    .to_string(),
            );
        }
        ignored
    }

    /// Reads `root/mem.toml`, or the defaults when there is none. A cloned repository's file:
    /// only a regular one of at most [`MAX_CONFIG_BYTES`] is read (see [`crate::untrusted`]).
    pub fn load(root: &Path) -> Result<Config> {
        use crate::untrusted::{self, Links};
        let path = root.join(CONFIG_FILE);
        let text = match untrusted::read_text(&path, MAX_CONFIG_BYTES, Links::Follow) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(Config::default()),
            Err(source) => return Err(Error::Unreadable { path, source }),
        };
        let config: Config = toml::from_str(&text)
            .map_err(|e| Error::Config { path: path.clone(), message: e.to_string() })?;
        config.validate().map_err(|source| Error::Setting { path, source })?;
        Ok(config)
    }

    /// Checks the ranges the formula needs.
    pub fn validate(&self) -> std::result::Result<(), SettingError> {
        let r = &self.ranking;
        for (name, w) in [
            ("recency_weight", r.recency_weight),
            ("importance_weight", r.importance_weight),
            ("coverage_weight", r.coverage_weight),
            ("date_weight", r.date_weight),
            ("time_weight", r.time_weight),
            ("name_weight", r.name_weight),
            ("code_weight", r.code_weight),
        ] {
            if !(0.0..1.0).contains(&w) {
                return Err(bad(
                    "ranking",
                    name,
                    format!("must be at least 0 and below 1, found {w}"),
                ));
            }
        }
        for (name, w) in [
            ("contiguity_weight", r.contiguity_weight),
            ("episode_weight", r.episode_weight),
            ("list_episode_share", r.list_episode_share),
        ] {
            if !(0.0..=1.0).contains(&w) {
                return Err(bad("ranking", name, format!("must be between 0 and 1, found {w}")));
            }
        }
        if !(r.digest_weight > 0.0 && r.digest_weight <= 1.0) {
            return Err(bad(
                "ranking",
                "digest_weight",
                format!("must be above 0 and at most 1, found {}", r.digest_weight),
            ));
        }
        if !(r.recency_half_life_days > 0.0 && r.recency_half_life_days.is_finite()) {
            return Err(bad(
                "ranking",
                "recency_half_life_days",
                format!("must be a positive number of days, found {}", r.recency_half_life_days),
            ));
        }
        for (name, b) in [("title_boost", r.title_boost), ("tags_boost", r.tags_boost)] {
            if !(b > 0.0 && b.is_finite()) {
                return Err(bad("ranking", name, format!("must be positive, found {b}")));
            }
        }
        let w = self.query.expansion_weight;
        if !(0.0..=1.0).contains(&w) {
            return Err(bad(
                "query",
                "expansion_weight",
                format!("must be between 0 and 1, found {w}"),
            ));
        }
        self.decay.validate()?;
        self.prune.validate()?;
        if !(self.reflect.threshold > 0.0 && self.reflect.threshold < 1.0) {
            return Err(bad(
                "reflect",
                "threshold",
                format!("must be between 0 and 1, found {}", self.reflect.threshold),
            ));
        }
        if self.reflect.min_cluster < 2 {
            return Err(bad("reflect", "min_cluster", "must be at least 2".into()));
        }
        if !(self.admission.near_duplicate > 0.0 && self.admission.near_duplicate <= 1.0) {
            return Err(bad(
                "admission",
                "near_duplicate",
                format!("must be above 0 and at most 1, found {}", self.admission.near_duplicate),
            ));
        }
        let e = &self.embed;
        if !(e.rrf_k > 0.0 && e.rrf_k.is_finite()) {
            return Err(bad("embed", "rrf_k", format!("must be positive, found {}", e.rrf_k)));
        }
        if !(0.0..=1.0).contains(&e.vector_weight) {
            return Err(bad(
                "embed",
                "vector_weight",
                format!("must be between 0 and 1, found {}", e.vector_weight),
            ));
        }
        if e.candidates == 0 || e.batch_size == 0 {
            return Err(bad(
                "embed",
                if e.candidates == 0 { "candidates" } else { "batch_size" },
                "must be positive".into(),
            ));
        }
        for (name, v) in [
            ("min_cosine", e.min_cosine),
            ("reflect_threshold", e.reflect_threshold),
            ("near_duplicate", e.near_duplicate),
        ] {
            if !(-1.0..=1.0).contains(&v) {
                return Err(bad(
                    "embed",
                    name,
                    format!("is a cosine, between -1 and 1; found {v}"),
                ));
            }
        }
        if self.usage.busy_timeout_ms > i32::MAX as u64 {
            return Err(bad(
                "usage",
                "busy_timeout_ms",
                format!(
                    "must be at most {} (about 24 days), found {}",
                    i32::MAX,
                    self.usage.busy_timeout_ms
                ),
            ));
        }
        if self.checkpoint.max_file_bytes == Some(0) {
            return Err(bad("checkpoint", "max_file_bytes", "must be positive".into()));
        }
        if self.limits.max_file_bytes == 0 {
            return Err(bad("limits", "max_file_bytes", "must be positive".into()));
        }
        if self.team.url.is_some() {
            let why = "a memory root may not name a team server: set url in [team] of the user \
                       configuration file (~/.config/mem/config.toml)";
            return Err(bad("team", "url", why.into()));
        }
        Ok(())
    }
}

/// A setting error: `key` of `[section]`, and what is wrong.
fn bad(section: &'static str, key: &'static str, message: String) -> SettingError {
    SettingError { section, key, message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_file_states_the_defaults() {
        let parsed: Config = toml::from_str(DEFAULT_CONFIG).unwrap();
        assert_eq!(parsed, Config::default());
    }

    #[test]
    fn rejects_typos_and_out_of_range_weights() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(CONFIG_FILE), "[ranking]\nrecency_wieght = 0.2\n").unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("recency_wieght"), "{e}");
        std::fs::write(dir.path().join(CONFIG_FILE), "[ranking]\nrecency_weight = 1.0\n").unwrap();
        let e = Config::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("below 1"), "{e}");
    }
}
