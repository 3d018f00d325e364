//! Which memories `mem prune` suggests archiving, and why: pure functions of the memories,
//! their usage states, the rules and `now`.

use std::collections::HashMap;
use std::fmt;

use jiff::Timestamp;
use serde::Serialize;

use crate::decay::{Basis, State};
use crate::format::{Memory, MemoryType};
pub use crate::rules::PruneConfig;

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
    /// It states how the code is (semantic or procedural), everything it cites in the
    /// project's repository is gone (`mem verify`), and it was not used since.
    CodeGone {
        /// When the last of its cited code was removed (the commit's date).
        since: Timestamp,
    },
    /// It faded and was never used in this many observed days.
    NeverUsed {
        /// Days it could have been used: since the later of its creation and the start of
        /// usage observation.
        days: f64,
    },
}

impl Reason {
    /// The reason's kind, as `--json` names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Reason::Invalid { .. } => "invalid",
            Reason::Superseded { .. } => "superseded",
            Reason::Duplicate { .. } => "duplicate",
            Reason::Faded { .. } => "faded",
            Reason::CodeGone { .. } => "code_gone",
            Reason::NeverUsed { .. } => "never_used",
        }
    }

    /// How safe this reason makes pruning: lower is safer.
    fn safety(&self) -> u8 {
        match self {
            Reason::Invalid { .. } | Reason::Superseded { .. } => 0,
            Reason::Duplicate { .. } | Reason::CodeGone { .. } => 1,
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
            Reason::NeverUsed { days } => write!(f, "never used in {days:.0} days observed"),
            Reason::CodeGone { since } => write!(
                f,
                "all the code it cites is gone (since {}) and it was not used since",
                since.strftime("%Y-%m-%d")
            ),
        }
    }
}

/// What pruning reads of a memory: what the index keeps of it (see
/// `MemoryIndex::standings`), or what its file gives ([`Standing::of`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Its title; empty when read from the index, which keeps no column of titles (the
    /// engine adds the titles of the candidates it shows).
    pub title: String,
    /// What its file gives its usage state.
    pub basis: Basis,
    /// When it became invalid, if it did.
    pub invalid_at: Option<Timestamp>,
    /// The memory that replaces it, if any.
    pub superseded_by: Option<String>,
    /// [`text_key`] of its body.
    pub text_key: u64,
}

impl Standing {
    /// What the file `path` holding `memory` gives.
    pub fn of(path: &str, memory: &Memory) -> Standing {
        Standing {
            id: memory.id().to_string(),
            path: path.to_string(),
            title: memory.title(),
            basis: Basis::of(memory),
            invalid_at: memory.invalid_at(),
            superseded_by: memory.superseded_by().map(|by| by.to_string()),
            text_key: text_key(memory.body()),
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
    /// Its title (first heading, else the start of the body).
    pub title: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// When it was created.
    pub created: Timestamp,
    /// Days since it was created.
    pub age_days: f64,
    /// Days it has been observed: since the later of its creation and the start of usage
    /// observation for the root.
    pub observed_days: f64,
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
    /// Times recall returned it.
    pub retrieved: u64,
    /// Last reinforcement (a use, or a top-3 retrieval); `None` when it has none.
    pub last_access: Option<Timestamp>,
}

/// The candidates among `memories` (with their `states`, in the same order), safest first:
/// invalid or superseded, then duplicates, then faded (least important first); within a kind,
/// the lowest retention first.
///
/// `code_gone` holds, by id, the memories whose cited code is all gone and that were not used
/// since, with when it went (see [`Reason::CodeGone`]).
///
/// `observed_since` is when usage observation began for the root (`None`: not yet). Fading
/// counts only the time since the later of that and a memory's creation, so a root whose usage
/// was never observed proposes nothing for fading; memories of importance at or above the floor
/// never fade out; invalid, superseded and duplicate are reasons at any importance.
pub fn candidates(
    memories: &[Standing],
    states: &[State],
    rules: &PruneConfig,
    observed_since: Option<Timestamp>,
    code_gone: &HashMap<String, Timestamp>,
    now: Timestamp,
) -> Vec<Candidate> {
    let keepers = duplicates(memories, states);
    let since = observed_since.unwrap_or(now).min(now);
    let mut out: Vec<Candidate> = Vec::new();
    for (i, (memory, state)) in memories.iter().zip(states).enumerate() {
        let mut reasons = Vec::new();
        if let Some(at) = memory.invalid_at.filter(|&at| at <= now) {
            reasons.push(Reason::Invalid { at });
        }
        if let Some(by) = &memory.superseded_by {
            reasons.push(Reason::Superseded { by: by.clone() });
        }
        if let Some(&keeper) = keepers.get(&i) {
            reasons.push(Reason::Duplicate { of: memories[keeper].id.clone() });
        }
        if let Some(&since) = code_gone.get(memory.id.as_str()) {
            reasons.push(Reason::CodeGone { since });
        }
        let (created, importance) = (memory.basis.created, memory.basis.importance);
        let retention = state.prune_retention(observed_since, now);
        let age = crate::score::age_days(now.as_second(), created.as_second());
        let start = created.max(since);
        let observed_days = crate::score::age_days(now.as_second(), start.as_second());
        if importance < rules.importance_floor
            && observed_days >= rules.min_age_days
            && retention < rules.retention_threshold
        {
            reasons.push(Reason::Faded { retention, threshold: rules.retention_threshold });
            if state.used == 0 && observed_days >= rules.unused_days {
                reasons.push(Reason::NeverUsed { days: observed_days });
            }
        }
        if reasons.is_empty() {
            continue;
        }
        reasons.sort_by_key(Reason::safety);
        let reinforced = state.used + state.retrieved > 0;
        out.push(Candidate {
            id: memory.id.clone(),
            path: memory.path.clone(),
            title: memory.title.clone(),
            kind: memory.basis.kind,
            created,
            age_days: age,
            observed_days,
            reasons,
            retention,
            strength: state.strength,
            importance,
            used: state.used,
            retrieved: state.retrieved,
            last_access: reinforced.then_some(state.last),
        });
    }
    out.sort_by(|a, b| {
        a.reasons[0]
            .safety()
            .cmp(&b.reasons[0].safety())
            .then(a.importance.cmp(&b.importance))
            .then(a.retention.total_cmp(&b.retention))
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

/// How many candidates carry each kind of reason (their first, safest one), in safety order.
pub fn summary(candidates: &[Candidate]) -> Vec<(&'static str, usize)> {
    let mut counts: Vec<(u8, &'static str, usize)> = Vec::new();
    for c in candidates {
        let r = &c.reasons[0];
        match counts.iter_mut().find(|(_, kind, _)| *kind == r.kind()) {
            Some(entry) => entry.2 += 1,
            None => counts.push((r.safety(), r.kind(), 1)),
        }
    }
    counts.sort();
    counts.into_iter().map(|(_, kind, n)| (kind, n)).collect()
}

/// A key of `body` that two bodies share when their text is the same, case and spacing aside
/// (0 for an empty body, which is nobody's duplicate).
pub fn text_key(body: &str) -> u64 {
    let normal = body.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    if normal.is_empty() {
        return 0;
    }
    let hash = blake3::hash(normal.as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes")).max(1)
}

/// For each memory whose text (case and spacing aside) another memory also has, the index of
/// the one kept: the most used, then the most important, then the oldest, then the first path.
fn duplicates(memories: &[Standing], states: &[State]) -> HashMap<usize, usize> {
    let mut groups: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, memory) in memories.iter().enumerate() {
        if memory.text_key != 0 {
            groups.entry(memory.text_key).or_default().push(i);
        }
    }
    let mut out = HashMap::new();
    for group in groups.into_values().filter(|g| g.len() > 1) {
        let keeper = *group
            .iter()
            .max_by(|&&a, &&b| {
                let (ma, mb) = (&memories[a], &memories[b]);
                states[a]
                    .used
                    .cmp(&states[b].used)
                    .then(ma.basis.importance.cmp(&mb.basis.importance))
                    .then(mb.basis.created.cmp(&ma.basis.created))
                    .then(mb.path.cmp(&ma.path))
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
    use crate::decay::{DecayConfig, Reinforcement};

    fn memory(
        id: &str,
        kind: &str,
        importance: u8,
        created: &str,
        extra: &str,
    ) -> (String, Memory) {
        let text = format!(
            "---\nid: {id}\ntype: {kind}\nimportance: {importance}\ncreated: {created}\n{extra}---\n# {id}\nText of {id}.\n"
        );
        (format!("{id}.md"), Memory::parse(&text).unwrap())
    }

    fn copy(id: &str, created: &str, body: &str) -> (String, Memory) {
        let text = format!(
            "---\nid: {id}\ntype: semantic\nimportance: 9\ncreated: {created}\n---\n{body}"
        );
        (format!("{id}.md"), Memory::parse(&text).unwrap())
    }

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn plan(memories: &[(String, Memory)], since: Option<&str>, now: &str) -> Vec<Candidate> {
        let states: Vec<State> =
            memories.iter().map(|(_, m)| State::of(m, &DecayConfig::default())).collect();
        let gone = HashMap::new();
        let standings: Vec<Standing> = memories.iter().map(|(p, m)| Standing::of(p, m)).collect();
        candidates(&standings, &states, &PruneConfig::default(), since.map(at), &gone, at(now))
    }

    fn ids(plan: &[Candidate]) -> Vec<&str> {
        plan.iter().map(|c| c.id.as_str()).collect()
    }

    #[test]
    fn two_year_old_memories_without_usage_history_do_not_fade_on_day_one() {
        let memories: Vec<_> = (1..=7)
            .map(|imp| memory(&format!("m{imp}"), "episodic", imp, "2024-11-30", ""))
            .collect();
        assert!(plan(&memories, None, "2026-11-30T00:00:00Z").is_empty());
        let day_one = plan(&memories, Some("2026-11-30T00:00:00Z"), "2026-11-30T12:00:00Z");
        assert!(day_one.is_empty(), "{:?}", ids(&day_one));
        // A year of observation later, the episodes up to importance 5 have faded; 6 has not.
        let later = plan(&memories, Some("2026-11-30T00:00:00Z"), "2027-11-30T00:00:00Z");
        assert_eq!(ids(&later), ["m1", "m2", "m3", "m4", "m5"]);
        assert!(later.iter().all(|c| c.reasons[1].kind() == "never_used"));
    }

    #[test]
    fn a_memory_used_monthly_is_never_proposed() {
        let m = memory("monthly", "episodic", 1, "2024-01-01", "");
        let mut state = State::of(&m.1, &DecayConfig::default());
        let start = at("2024-01-01T00:00:00Z");
        for month in 1..=60 {
            let now = start + jiff::SignedDuration::from_hours(24 * 30 * month);
            let plan = candidates(
                &[Standing::of(&m.0, &m.1)],
                &[state],
                &PruneConfig::default(),
                Some(start),
                &HashMap::new(),
                now,
            );
            assert!(plan.is_empty(), "proposed in month {month}");
            state = state.fold(Reinforcement::Used { at: now });
        }
    }

    #[test]
    fn superseded_invalid_and_duplicates_at_any_importance_safest_first() {
        let memories = vec![
            memory("old-low", "episodic", 2, "2025-01-01", ""),
            memory("fact", "semantic", 4, "2025-01-01", ""),
            memory("critical", "episodic", 8, "2020-01-01", ""),
            memory("gone", "semantic", 10, "2026-01-01", "invalid_at: 2026-02-01T00:00:00Z\n"),
            memory("replaced", "procedural", 9, "2026-01-01", "superseded_by: critical\n"),
            memory("fresh", "episodic", 2, "2026-11-20", ""),
            copy("copy-a", "2026-11-01", "Same  text\n"),
            copy("copy-b", "2026-11-10", "same text\n"),
        ];
        let plan = plan(&memories, Some("2025-06-01T00:00:00Z"), "2026-11-30T00:00:00Z");
        assert_eq!(ids(&plan), ["replaced", "gone", "copy-b", "old-low"]);
        assert_eq!(plan[2].reasons, [Reason::Duplicate { of: "copy-a".into() }]);
        assert!(matches!(plan[3].reasons[0], Reason::Faded { .. }));
        assert_eq!(plan[3].title, "old-low");
        assert_eq!(
            summary(&plan),
            [("invalid", 1), ("superseded", 1), ("duplicate", 1), ("faded", 1)]
        );
        assert_eq!(plan[0].reasons, [Reason::Superseded { by: "critical".into() }]);
    }

    #[test]
    fn use_keeps_a_memory() {
        let used = "access: { count: 2, last: 2026-11-01T00:00:00Z }\n";
        let memories = vec![memory("used", "episodic", 2, "2025-01-01", used)];
        assert!(plan(&memories, Some("2025-01-01T00:00:00Z"), "2026-11-30T00:00:00Z").is_empty());
    }
}
