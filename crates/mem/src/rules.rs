//! The settings of forgetting: `[decay]` (how fast each type of memory fades) and `[prune]`
//! (when `mem prune` suggests one). A leaf module, so `config`, `decay` and `prune` can all use
//! it; docs/decay.md gives the defaults and why.

use serde::{Deserialize, Serialize};

pub use crate::error::SettingError;
use crate::format::MemoryType;

/// No memory grows stronger than ten years.
pub const MAX_STRENGTH_DAYS: f64 = 3_650.0;

/// `[decay]` of `mem.toml`: the starting strength of each type of memory.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DecayConfig {
    /// Starting strength in days of an episodic memory (something that happened) of
    /// importance 5.
    pub episodic_days: f64,
    /// Starting strength in days of a semantic memory (a fact or decision) of importance 5.
    pub semantic_days: f64,
    /// Starting strength in days of a procedural memory (how to do something), importance 5.
    pub procedural_days: f64,
    /// Each step of importance above (below) 5 multiplies (divides) the starting strength.
    pub importance_growth: f64,
}

impl Default for DecayConfig {
    fn default() -> Self {
        DecayConfig {
            episodic_days: 100.0,
            semantic_days: 365.0,
            procedural_days: 365.0,
            importance_growth: 1.5,
        }
    }
}

impl DecayConfig {
    /// The strength a memory of this type and importance starts with, in days.
    pub fn initial_strength(&self, kind: MemoryType, importance: u8) -> f64 {
        let base = match kind {
            MemoryType::Episodic => self.episodic_days,
            MemoryType::Semantic => self.semantic_days,
            MemoryType::Procedural => self.procedural_days,
        };
        let steps = i32::from(importance.clamp(1, 10)) - 5;
        (base * self.importance_growth.powi(steps)).min(MAX_STRENGTH_DAYS)
    }

    /// Checks the values; an error names the key.
    pub fn validate(&self) -> Result<(), SettingError> {
        for (key, v) in [
            ("episodic_days", self.episodic_days),
            ("semantic_days", self.semantic_days),
            ("procedural_days", self.procedural_days),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                let message = format!("must be a positive number of days, found {v}");
                return Err(SettingError { section: "decay", key, message });
            }
        }
        let g = self.importance_growth;
        if !(1.0..=10.0).contains(&g) {
            let message = format!("must be between 1 and 10, found {g}");
            return Err(SettingError { section: "decay", key: "importance_growth", message });
        }
        Ok(())
    }
}

/// `[prune]` of `mem.toml`: when `mem prune` suggests a memory.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PruneConfig {
    /// Retention below which a memory has faded.
    pub retention_threshold: f64,
    /// Only memories with importance below this are suggested for fading.
    pub importance_floor: u8,
    /// Days a memory must have been observed (since the later of its creation and the start
    /// of usage observation) before fading makes it a candidate.
    pub min_age_days: f64,
    /// A faded memory never used in this many observed days also carries `never_used`.
    pub unused_days: f64,
}

impl Default for PruneConfig {
    fn default() -> Self {
        PruneConfig {
            retention_threshold: 0.05,
            importance_floor: 8,
            min_age_days: 30.0,
            unused_days: 180.0,
        }
    }
}

impl PruneConfig {
    /// Checks the values; an error names the key.
    pub fn validate(&self) -> Result<(), SettingError> {
        let bad = |key, message| Err(SettingError { section: "prune", key, message });
        if !(0.0..=1.0).contains(&self.retention_threshold) {
            let found = self.retention_threshold;
            return bad("retention_threshold", format!("must be between 0 and 1, found {found}"));
        }
        if self.min_age_days < 0.0 || self.unused_days < 0.0 {
            let key = if self.min_age_days < 0.0 { "min_age_days" } else { "unused_days" };
            return bad(key, "cannot be negative".into());
        }
        Ok(())
    }
}
