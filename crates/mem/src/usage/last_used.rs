//! When each memory was last *used*: a `used` event, or the count of an `access:` line moved
//! into the usage files. Ranking recency counts from it (else from `created`); a retrieval never
//! counts, so that recording recalls does not change later rankings. Derived from the usage
//! files and the usage log, and kept in `.mem/last-used.bin` with the stamp of the usage files
//! it was computed from: a recall reads that small file and stats the usage files, and computes
//! it again only when they changed or a `used` event removed it.

use std::path::Path;

use jiff::Timestamp;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::store::Stamp;
use crate::{Error, Result};

/// File name under `.mem/`.
pub const FILE: &str = "last-used.bin";

/// The [`Stamp`] of each usage file, by file name, sorted by name.
pub type Stamps = Vec<(String, Stamp)>;

/// The stamps of the root's usage files as they are now (empty when there are none).
pub fn stamps(root: &Path) -> Stamps {
    let Ok(entries) = std::fs::read_dir(root.join(super::shared::DIR)) else {
        return Vec::new();
    };
    let mut stamps: Stamps = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), Stamp::of(&meta)))
        })
        .collect();
    stamps.sort();
    stamps
}

/// The last use of each memory that has one, by [`crate::format::id_key`] of its id, in
/// seconds since the epoch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LastUsed {
    /// The usage files it was computed from.
    stamp: Stamps,
    last: FxHashMap<u64, i64>,
    /// The last confirmation of a memory's citations (`mem verify --confirm`), by id key.
    confirmed: FxHashMap<u64, i64>,
}

impl LastUsed {
    /// The map of `uses` (memory id, time of a use), computed from usage files of `stamp`.
    pub fn new(stamp: Stamps, uses: impl IntoIterator<Item = (String, Timestamp)>) -> LastUsed {
        let mut last: FxHashMap<u64, i64> = FxHashMap::default();
        for (id, at) in uses {
            let at = at.as_second();
            let entry = last.entry(crate::format::id_key(&id)).or_insert(at);
            *entry = (*entry).max(at);
        }
        LastUsed { stamp, last, confirmed: FxHashMap::default() }
    }

    /// The same, with the last confirmation of each memory's citations, as (id, time).
    pub fn with_confirmed<'a>(
        mut self,
        confirmed: impl IntoIterator<Item = (&'a str, Timestamp)>,
    ) -> LastUsed {
        for (id, at) in confirmed {
            let at = at.as_second();
            let entry = self.confirmed.entry(crate::format::id_key(id)).or_insert(at);
            *entry = (*entry).max(at);
        }
        self
    }

    /// When the citations of the memory whose id has this key were last confirmed.
    pub fn confirmed(&self, key: u64) -> Option<i64> {
        self.confirmed.get(&key).copied()
    }

    /// The last use of the memory whose id has this key.
    pub fn get(&self, key: u64) -> Option<i64> {
        self.last.get(&key).copied()
    }

    /// Whether it was computed from usage files of `stamp`.
    pub fn is_for(&self, stamp: &Stamps) -> bool {
        self.stamp == *stamp
    }

    /// The cached map in `state_dir`, if there is one that reads.
    pub fn load(state_dir: &Path) -> Option<LastUsed> {
        let bytes = std::fs::read(state_dir.join(FILE)).ok()?;
        postcard::from_bytes(&bytes).ok()
    }

    /// Writes it to `state_dir` (atomically; a cache keyed by its stamp, so without fsync).
    pub fn save(&self, state_dir: &Path) -> Result<()> {
        let bytes = postcard::to_allocvec(self)
            .map_err(|e| Error::io(state_dir.join(FILE), std::io::Error::other(e)))?;
        crate::store::write_cache(&state_dir.join(FILE), &bytes)
    }
}

/// Forgets the cached map of `state_dir` (a `used` event makes it out of date).
pub fn invalidate(state_dir: &Path) -> Result<()> {
    match std::fs::remove_file(state_dir.join(FILE)) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(state_dir.join(FILE), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_use_counts_and_the_cache_round_trips() {
        let t = |s: i64| Timestamp::from_second(1_700_000_000 + s).unwrap();
        let stamps = || vec![("a.tsv".to_string(), Stamp { size: 10, mtime_ns: 5 })];
        let map = LastUsed::new(
            stamps(),
            [("x".to_string(), t(5)), ("x".to_string(), t(9)), ("y".to_string(), t(1))],
        );
        assert_eq!(map.get(crate::format::id_key("x")), Some(t(9).as_second()));
        assert_eq!(map.get(crate::format::id_key("z")), None);
        let dir = tempfile::tempdir().unwrap();
        map.save(dir.path()).unwrap();
        let loaded = LastUsed::load(dir.path()).unwrap();
        assert_eq!(loaded, map);
        assert!(loaded.is_for(&stamps()) && !loaded.is_for(&Vec::new()));
        invalidate(dir.path()).unwrap();
        invalidate(dir.path()).unwrap();
        assert_eq!(LastUsed::load(dir.path()), None);
    }
}
