//! Which memories `mem prune` suggests archiving, and why: pure functions of the memories,
//! their usage states, the rules and `now`.

use std::collections::HashMap;
use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use crate::config::PruneConfig;
use crate::decay::State;
use crate::format::Memory;

/// Importance from which a memory is never suggested unless it is invalid.
pub const PROTECTED_IMPORTANCE: u8 = 9;

/// Why a memory is a candidate.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reason {
    /// It was invalidated (`mem forget`).
    Invalid {
        /// Since when.
        at: Timestamp,
    },
    /// Another memory replaces it (`mem supersede`).
    Superseded {
        /// The replacement's id.
        by: String,
    },
    /// Another memory has the same text.
    Duplicate {
        /// The memory that is kept.
        of: String,
    },
    /// Its retention fell below the threshold.
    Faded {
        /// Retention now.
        retention: f64,
        /// The threshold.
        threshold: f64,
    },
    /// It was never used, and is older than the limit.
    NeverUsed {
        /// Days since it was created.
        days: f64,
    },
}

impl Reason {
    /// How safe this reason makes pruning: lower is safer.
    fn safety(&self) -> u8 {
        match self {
            Reason::Invalid { .. } | Reason::Superseded { .. } => 0,
            Reason::Duplicate { .. } => 1,
            Reason::Faded { .. } => 2,
            Reason::NeverUsed { .. } => 3,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Invalid { at } => write!(f, "invalid since {at}"),
            Reason::Superseded { by } => write!(f, "superseded by {by}"),
            Reason::Duplicate { of } => write!(f, "duplicate of {of}"),
            Reason::Faded { retention, threshold } => {
                write!(f, "retention {retention:.3} below {threshold}")
            }
            Reason::NeverUsed { days } => write!(f, "never used in {days:.0} days"),
        }
    }
}

/// A memory `mem prune` would archive.
#[derive(Clone, Debug, Serialize)]
pub struct Candidate {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Why, safest reason first.
    pub reasons: Vec<Reason>,
    /// Retention now, 0..1.
    pub retention: f64,
    /// Strength in days.
    pub strength: f64,
    /// Importance 1..10.
    pub importance: u8,
    /// Times used.
    pub used: u64,
    /// Last reinforcement.
    pub last_access: Timestamp,
}

/// The candidates among `memories` (with their `states`, in the same order), safest first:
/// invalid or superseded, then duplicates, then faded, then never used; within a kind, the
/// lowest retention first.
pub fn candidates(
    memories: &[(String, Memory)],
    states: &[State],
    rules: &PruneConfig,
    now: Timestamp,
) -> Vec<Candidate> {
    let keepers = duplicates(memories, states);
    let mut out: Vec<Candidate> = Vec::new();
    for (i, ((path, memory), state)) in memories.iter().zip(states).enumerate() {
        let mut reasons = Vec::new();
        if let Some(at) = memory.invalid_at().filter(|&at| at <= now) {
            reasons.push(Reason::Invalid { at });
        }
        if let Some(by) = memory.superseded_by() {
            reasons.push(Reason::Superseded { by: by.to_string() });
        }
        let retention = state.retention(now);
        if reasons.is_empty() && memory.importance() >= PROTECTED_IMPORTANCE {
            continue;
        }
        if let Some(&keeper) = keepers.get(&i) {
            reasons.push(Reason::Duplicate { of: memories[keeper].1.id().to_string() });
        }
        let age = crate::score::age_days(now.as_second(), memory.created().as_second());
        let unimportant = memory.importance() < rules.importance_floor
            && memory.importance() < PROTECTED_IMPORTANCE;
        if unimportant && age >= rules.min_age_days && retention < rules.retention_threshold {
            reasons.push(Reason::Faded { retention, threshold: rules.retention_threshold });
        }
        if unimportant && state.used == 0 && age >= rules.unused_days {
            reasons.push(Reason::NeverUsed { days: age });
        }
        if reasons.is_empty() {
            continue;
        }
        reasons.sort_by_key(Reason::safety);
        out.push(Candidate {
            id: memory.id().to_string(),
            path: path.clone(),
            reasons,
            retention,
            strength: state.strength,
            importance: memory.importance(),
            used: state.used,
            last_access: state.last,
        });
    }
    out.sort_by(|a, b| {
        a.reasons[0]
            .safety()
            .cmp(&b.reasons[0].safety())
            .then(a.retention.total_cmp(&b.retention))
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

/// For each memory whose text (case and spacing aside) another memory also has, the index of
/// the one kept: the most used, then the most important, then the oldest, then the first path.
fn duplicates(memories: &[(String, Memory)], states: &[State]) -> HashMap<usize, usize> {
    let mut groups: HashMap<blake3::Hash, Vec<usize>> = HashMap::new();
    for (i, (_, memory)) in memories.iter().enumerate() {
        let normal = memory.body().split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
        if !normal.is_empty() {
            groups.entry(blake3::hash(normal.as_bytes())).or_default().push(i);
        }
    }
    let mut out = HashMap::new();
    for group in groups.into_values().filter(|g| g.len() > 1) {
        let keeper = *group
            .iter()
            .max_by(|&&a, &&b| {
                let (ma, mb) = (&memories[a].1, &memories[b].1);
                states[a]
                    .used
                    .cmp(&states[b].used)
                    .then(ma.importance().cmp(&mb.importance()))
                    .then(mb.created().cmp(&ma.created()))
                    .then(memories[b].0.cmp(&memories[a].0))
            })
            .expect("a group has members");
        for &i in &group {
            if i != keeper {
                out.insert(i, keeper);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(
        id: &str,
        importance: u8,
        created: &str,
        extra: &str,
        body: &str,
    ) -> (String, Memory) {
        let text = format!(
            "---\nid: {id}\ntype: semantic\nimportance: {importance}\ncreated: {created}\n{extra}---\n{body}"
        );
        (format!("{id}.md"), Memory::parse(&text).unwrap())
    }

    fn plan(memories: &[(String, Memory)], now: &str) -> Vec<Candidate> {
        let states: Vec<State> = memories
            .iter()
            .map(|(_, m)| State::from_memory(m.importance(), m.created(), m.access()))
            .collect();
        candidates(memories, &states, &PruneConfig::default(), now.parse().unwrap())
    }

    #[test]
    fn reasons_and_order() {
        let memories = vec![
            memory("old-low", 2, "2025-01-01", "", "an old note\n"),
            memory("old-critical", 10, "2020-01-01", "", "never pruned for age\n"),
            memory("gone", 10, "2026-01-01", "invalid_at: 2026-02-01T00:00:00Z\n", "stale fact\n"),
            memory("fresh", 2, "2026-11-20", "", "a fresh note\n"),
            memory("copy-a", 5, "2026-11-01", "", "Same  text\n"),
            memory("copy-b", 5, "2026-11-10", "", "same text\n"),
        ];
        let plan = plan(&memories, "2026-11-30T00:00:00Z");
        let ids: Vec<&str> = plan.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["gone", "copy-b", "old-low"]);
        assert_eq!(plan[1].reasons, [Reason::Duplicate { of: "copy-a".into() }]);
        assert!(matches!(plan[2].reasons[0], Reason::Faded { .. }));
        assert!(matches!(plan[2].reasons[1], Reason::NeverUsed { .. }));
    }

    #[test]
    fn use_keeps_a_memory() {
        let used = "access: { count: 2, last: 2026-11-01T00:00:00Z }\n";
        let memories = vec![memory("used", 2, "2025-01-01", used, "kept alive\n")];
        assert!(plan(&memories, "2026-11-30T00:00:00Z").is_empty());
    }
}
