//! Forgetting: Ebbinghaus retention `R = exp(−t / S)` (MemoryBank, arXiv 2305.10250), with a
//! strength `S` that starts from importance and grows with use. Pure functions of the events
//! and `now`; see `docs/decay.md` for the constants and why.

use jiff::Timestamp;
use serde::Serialize;

use crate::format::Access;
use crate::score::Days;

const DAY: i64 = 86_400;
/// Strength of a new memory of importance 1, in days.
pub const BASE_STRENGTH_DAYS: f64 = 7.0;
/// Each step of importance multiplies the starting strength by this.
pub const IMPORTANCE_GROWTH: f64 = 1.5;
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
/// No memory grows stronger than ten years.
pub const MAX_STRENGTH_DAYS: f64 = 3_650.0;

/// The strength a memory of `importance` starts with, in days.
pub fn initial_strength(importance: u8) -> Days {
    BASE_STRENGTH_DAYS * IMPORTANCE_GROWTH.powi(i32::from(importance.clamp(1, 10)) - 1)
}

/// Retention `exp(−t / S)` after `t` days at strength `S` days (1 for `t ≤ 0`).
pub fn retention(age: Days, strength: Days) -> f64 {
    crate::score::retention(age, strength)
}

/// A usage event, as folded into a memory's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
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

impl Event {
    /// When the event happened.
    pub fn at(&self) -> Timestamp {
        match self {
            Event::Used { at } | Event::Retrieved { at, .. } => *at,
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
}

impl State {
    /// The state stored in a memory's front-matter, or the initial one.
    pub fn from_memory(importance: u8, created: Timestamp, access: Option<Access>) -> State {
        let initial = initial_strength(importance);
        match access {
            None => State {
                used: 0,
                retrieved: 0,
                last: created,
                strength: initial,
                consolidated: false,
            },
            Some(a) => State {
                used: a.count,
                retrieved: a.retrieved,
                last: a.last.unwrap_or(created),
                // A hand-written `access` without strength: what its `used` count would give.
                strength: a.strength.unwrap_or_else(|| {
                    (initial * USED_GROWTH.powi(a.count.min(64) as i32)).min(MAX_STRENGTH_DAYS)
                }),
                consolidated: false,
            },
        }
    }

    /// The state a memory's file describes; a source consolidated into a reflection decays
    /// faster ([`CONSOLIDATED_FACTOR`]).
    pub fn of(memory: &crate::format::Memory) -> State {
        let mut state = State::from_memory(memory.importance(), memory.created(), memory.access());
        state.consolidated = memory.consolidated_into().is_some();
        state
    }

    /// The state after `event` (events must be folded in time order).
    pub fn fold(self, importance: u8, event: Event) -> State {
        let mut s = self;
        let at = event.at();
        let spaced = at.as_second() - s.last.as_second() >= SPACING_SECONDS;
        match event {
            Event::Used { .. } => {
                s.used += 1;
                if spaced {
                    s.strength = (s.strength * USED_GROWTH).min(MAX_STRENGTH_DAYS);
                }
                s.last = s.last.max(at);
            }
            Event::Retrieved { rank, .. } => {
                s.retrieved += 1;
                let rank = rank.max(1);
                if spaced {
                    let cap = initial_strength(importance)
                        * USED_GROWTH.powi(s.used.min(64) as i32)
                        * RETRIEVAL_CAP;
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

    #[test]
    fn importance_sets_the_starting_strength() {
        assert_eq!(initial_strength(1), 7.0);
        assert!((initial_strength(5) - 35.4375).abs() < 1e-9);
        assert!(initial_strength(10) > 250.0);
    }

    #[test]
    fn used_doubles_when_spaced_and_resets_the_clock() {
        let s = State::from_memory(5, t(0), None);
        let once = s.fold(5, Event::Used { at: t(10) });
        assert_eq!((once.used, once.last), (1, t(10)));
        assert!((once.strength - 2.0 * s.strength).abs() < 1e-9);
        let massed = once.fold(5, Event::Used { at: t(10) });
        assert_eq!(massed.strength, once.strength, "the same day adds no strength");
        assert_eq!(massed.used, 2);
    }

    #[test]
    fn ranking_twentieth_every_day_is_not_immortality() {
        let mut s = State::from_memory(3, t(0), None);
        for day in 1..=3_000 {
            s = s.fold(3, Event::Retrieved { at: t(day), rank: 20 });
        }
        assert_eq!(s.last, t(0), "a low rank never resets the clock");
        assert!(s.strength <= initial_strength(3) * RETRIEVAL_CAP + 1e-9);
        assert!(s.retention(t(3_000)) < 1e-6);
    }

    #[test]
    fn top_retrievals_reset_the_clock_but_grow_less_than_use() {
        let s = State::from_memory(5, t(0), None);
        let seen = s.fold(5, Event::Retrieved { at: t(5), rank: 1 });
        assert_eq!(seen.last, t(5));
        let used = s.fold(5, Event::Used { at: t(5) });
        assert!(seen.strength < used.strength);
    }

    proptest! {
        /// Any event never weakens a memory nor moves its clock back.
        #[test]
        fn events_never_weaken(imp in 1u8..=10, gaps in proptest::collection::vec((0i64..400, any::<bool>(), 1u32..=20), 0..40)) {
            let mut s = State::from_memory(imp, t(0), None);
            let mut day = 0;
            for (gap, used, rank) in gaps {
                day += gap;
                let e = if used { Event::Used { at: t(day) } } else { Event::Retrieved { at: t(day), rank } };
                let next = s.fold(imp, e);
                prop_assert!(next.strength >= s.strength);
                prop_assert!(next.last >= s.last);
                s = next;
            }
        }

        /// Retention never rises as time passes without events.
        #[test]
        fn retention_only_falls(imp in 1u8..=10, a in 0i64..5_000, b in 0i64..5_000) {
            let s = State::from_memory(imp, t(0), None);
            let (early, late) = if a <= b { (a, b) } else { (b, a) };
            prop_assert!(s.retention(t(late)) <= s.retention(t(early)));
        }
    }
}
