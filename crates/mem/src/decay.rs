//! Forgetting: Ebbinghaus retention `R = exp(−t / S)` (MemoryBank, arXiv 2305.10250), with a
//! strength `S` that starts from the memory's type and importance and grows with use. Pure
//! functions of the events and `now`; see `docs/decay.md` for the constants and why.

use jiff::Timestamp;
use serde::Serialize;

use crate::format::Access;
#[cfg(test)]
use crate::format::MemoryType;
pub use crate::rules::{DecayConfig, MAX_STRENGTH_DAYS};
use crate::score::Days;

const DAY: i64 = 86_400;
/// A memory consolidated into a reflection keeps this share of its strength: the reflection
/// now carries what it said, so the source may fade sooner.
pub const CONSOLIDATED_FACTOR: f64 = 0.5;
/// A `used` event, spaced from the last reinforcement, multiplies strength by this.
pub const USED_GROWTH: f64 = 2.0;
/// A retrieval at rank `r` multiplies strength by `1 + RETRIEVED_GROWTH / r`.
pub const RETRIEVED_GROWTH: f64 = 0.2;
/// Retrievals can at most double the strength that `used` events built.
pub const RETRIEVAL_CAP: f64 = 2.0;
/// Only a retrieval in the top 3 counts as seeing the memory (resets its clock).
pub const SEEN_RANK: u32 = 3;
/// Reinforcements closer together than this add no strength (massed practice).
pub const SPACING_SECONDS: i64 = DAY;

/// Retention `exp(−t / S)` after `t` days at strength `S` days (1 for `t ≤ 0`).
pub fn retention(age: Days, strength: Days) -> f64 {
    crate::score::retention(age, strength)
}

/// A usage event, as folded into a memory's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reinforcement {
    /// Someone said the memory helped.
    Used {
        /// When.
        at: Timestamp,
    },
    /// Recall returned it at this 1-based rank.
    Retrieved {
        /// When.
        at: Timestamp,
        /// Rank in the answer.
        rank: u32,
    },
}

impl Reinforcement {
    /// When the event happened.
    pub fn at(&self) -> Timestamp {
        match self {
            Reinforcement::Used { at } | Reinforcement::Retrieved { at, .. } => *at,
        }
    }
}

/// What a memory's own file gives its usage state: the fields [`State::of`] reads, which the
/// index also keeps (so that every memory's state can be had without reading its file).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Basis {
    /// Its type.
    pub kind: crate::format::MemoryType,
    /// Its importance, 1..=10.
    pub importance: u8,
    /// When it was created.
    pub created: Timestamp,
    /// Its `access:` line, if it has one.
    pub access: Option<Access>,
    /// Whether it was consolidated into a reflection.
    pub consolidated: bool,
}

impl Basis {
    /// The basis `memory`'s file gives.
    pub fn of(memory: &crate::format::Memory) -> Basis {
        Basis {
            kind: memory.kind(),
            importance: memory.importance(),
            created: memory.created(),
            access: memory.access(),
            consolidated: memory.consolidated_into().is_some(),
        }
    }
}

/// A memory's usage state: what `access` in the front-matter holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct State {
    /// `used` events so far.
    pub used: u64,
    /// `retrieved` events so far.
    pub retrieved: u64,
    /// Last reinforcement (a `used`, or a top-3 retrieval); `created` when there was none.
    pub last: Timestamp,
    /// Strength in days, as stored in `access.strength`.
    pub strength: Days,
    /// Consolidated into a reflection: decays with [`CONSOLIDATED_FACTOR`] of its strength.
    pub consolidated: bool,
    /// The strength it started with (its type and importance): retrievals grow it at most
    /// [`RETRIEVAL_CAP`] times what uses built on it.
    pub base: Days,
}

impl State {
    /// The state a usage summary gives (an `access:` line), or the initial one, for a memory
    /// starting at strength `initial`.
    pub fn from_memory(initial: Days, created: Timestamp, access: Option<Access>) -> State {
        match access {
            None => State {
                used: 0,
                retrieved: 0,
                last: created,
                strength: initial,
                consolidated: false,
                base: initial,
            },
            Some(a) => State {
                used: a.count,
                retrieved: a.retrieved,
                last: a.last.unwrap_or(created),
                // A hand-written `access` without strength: what its `used` count would give.
                // A strength written with older, lower starting strengths never weakens it.
                strength: a
                    .strength
                    .unwrap_or_else(|| {
                        (initial * USED_GROWTH.powi(a.count.min(64) as i32)).min(MAX_STRENGTH_DAYS)
                    })
                    .max(initial),
                consolidated: false,
                base: initial,
            },
        }
    }

    /// The state a memory's file describes; a source consolidated into a reflection decays
    /// faster ([`CONSOLIDATED_FACTOR`]).
    pub fn of(memory: &crate::format::Memory, decay: &DecayConfig) -> State {
        State::of_basis(&Basis::of(memory), decay)
    }

    /// The state a memory's [`Basis`] describes, as [`State::of`] gives it from the file.
    pub fn of_basis(basis: &Basis, decay: &DecayConfig) -> State {
        let initial = decay.initial_strength(basis.kind, basis.importance);
        let mut state = State::from_memory(initial, basis.created, basis.access);
        state.consolidated = basis.consolidated;
        state
    }

    /// The state after `event` (events must be folded in time order).
    pub fn fold(self, event: Reinforcement) -> State {
        let mut s = self;
        let at = event.at();
        let spaced = at.as_second() - s.last.as_second() >= SPACING_SECONDS;
        match event {
            Reinforcement::Used { .. } => {
                s.used += 1;
                if spaced {
                    s.strength = (s.strength * USED_GROWTH).min(MAX_STRENGTH_DAYS);
                }
                s.last = s.last.max(at);
            }
            Reinforcement::Retrieved { rank, .. } => {
                s.retrieved += 1;
                let rank = rank.max(1);
                if spaced {
                    let cap = s.base * USED_GROWTH.powi(s.used.min(64) as i32) * RETRIEVAL_CAP;
                    let grown = s.strength * (1.0 + RETRIEVED_GROWTH / f64::from(rank));
                    s.strength = grown.min(cap.max(s.strength)).min(MAX_STRENGTH_DAYS);
                }
                if rank <= SEEN_RANK {
                    s.last = s.last.max(at);
                }
            }
        }
        s
    }

    /// Days since the last reinforcement at `now` (0 when in the future).
    pub fn age_days(&self, now: Timestamp) -> Days {
        crate::score::age_days(now.as_second(), self.last.as_second())
    }

    /// The strength retention decays with: [`CONSOLIDATED_FACTOR`] of it once consolidated.
    pub fn effective_strength(&self) -> Days {
        if self.consolidated { self.strength * CONSOLIDATED_FACTOR } else { self.strength }
    }

    /// Retention at `now`.
    pub fn retention(&self, now: Timestamp) -> f64 {
        retention(self.age_days(now), self.effective_strength())
    }

    /// The retention `mem prune` compares with its threshold at `now`, the one figure the prune
    /// review, its curves, a memory's page and `mem show` give for it: the clock started no
    /// earlier than `since`, when usage observation began for the root (not begun: `now`, so
    /// nothing has faded yet).
    pub fn prune_retention(&self, since: Option<Timestamp>, now: Timestamp) -> f64 {
        self.observed(since.unwrap_or(now).min(now)).retention(now)
    }

    /// The state with its clock started no earlier than `since`, when usage observation began
    /// for the root: time before anyone could record a use is not time without use.
    pub fn observed(self, since: Timestamp) -> State {
        State { last: self.last.max(since), ..self }
    }

    /// The front-matter `access` of this state.
    pub fn access(&self) -> Access {
        Access {
            count: self.used,
            last: Some(self.last),
            retrieved: self.retrieved,
            strength: Some((self.strength * 1000.0).round() / 1000.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn t(days: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + days * DAY).unwrap()
    }

    fn initial_strength(importance: u8) -> Days {
        DecayConfig::default().initial_strength(MemoryType::Episodic, importance)
    }

    #[test]
    fn type_and_importance_set_the_starting_strength() {
        let d = DecayConfig::default();
        assert_eq!(d.initial_strength(MemoryType::Episodic, 5), 100.0);
        assert_eq!(d.initial_strength(MemoryType::Semantic, 5), 365.0);
        assert!((d.initial_strength(MemoryType::Episodic, 4) - 100.0 / 1.5).abs() < 1e-9);
        assert!(
            d.initial_strength(MemoryType::Procedural, 1)
                > d.initial_strength(MemoryType::Episodic, 3)
        );
        assert_eq!(
            d.initial_strength(MemoryType::Semantic, 10),
            MAX_STRENGTH_DAYS.min(365.0 * 1.5f64.powi(5))
        );
    }

    #[test]
    fn observation_starts_the_clock() {
        let s = State::from_memory(initial_strength(2), t(0), None);
        assert!(s.retention(t(400)) < 0.05);
        assert_eq!(s.observed(t(390)).retention(t(400)), s.retention(t(10)));
        assert_eq!(s.observed(t(-5)).last, t(0), "an earlier start changes nothing");
    }

    #[test]
    fn used_doubles_when_spaced_and_resets_the_clock() {
        let s = State::from_memory(initial_strength(5), t(0), None);
        let once = s.fold(Reinforcement::Used { at: t(10) });
        assert_eq!((once.used, once.last), (1, t(10)));
        assert!((once.strength - 2.0 * s.strength).abs() < 1e-9);
        let massed = once.fold(Reinforcement::Used { at: t(10) });
        assert_eq!(massed.strength, once.strength, "the same day adds no strength");
        assert_eq!(massed.used, 2);
    }

    #[test]
    fn ranking_twentieth_every_day_is_not_immortality() {
        let mut s = State::from_memory(initial_strength(3), t(0), None);
        for day in 1..=3_000 {
            s = s.fold(Reinforcement::Retrieved { at: t(day), rank: 20 });
        }
        assert_eq!(s.last, t(0), "a low rank never resets the clock");
        assert!(s.strength <= initial_strength(3) * RETRIEVAL_CAP + 1e-9);
        assert!(s.retention(t(3_000)) < 1e-6);
    }

    #[test]
    fn top_retrievals_reset_the_clock_but_grow_less_than_use() {
        let s = State::from_memory(initial_strength(5), t(0), None);
        let seen = s.fold(Reinforcement::Retrieved { at: t(5), rank: 1 });
        assert_eq!(seen.last, t(5));
        let used = s.fold(Reinforcement::Used { at: t(5) });
        assert!(seen.strength < used.strength);
    }

    proptest! {
        /// Any event never weakens a memory nor moves its clock back.
        #[test]
        fn events_never_weaken(imp in 1u8..=10, gaps in proptest::collection::vec((0i64..400, any::<bool>(), 1u32..=20), 0..40)) {
            let mut s = State::from_memory(initial_strength(imp), t(0), None);
            let mut day = 0;
            for (gap, used, rank) in gaps {
                day += gap;
                let e = if used { Reinforcement::Used { at: t(day) } } else { Reinforcement::Retrieved { at: t(day), rank } };
                let next = s.fold(e);
                prop_assert!(next.strength >= s.strength);
                prop_assert!(next.last >= s.last);
                s = next;
            }
        }

        /// Retention never rises as time passes without events.
        #[test]
        fn retention_only_falls(imp in 1u8..=10, a in 0i64..5_000, b in 0i64..5_000) {
            let s = State::from_memory(initial_strength(imp), t(0), None);
            let (early, late) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(s.retention(t(late)) <= s.retention(t(early)));
        }
    }
}
