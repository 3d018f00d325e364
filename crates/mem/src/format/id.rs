//! A memory's identity and kind: [`MemoryId`], [`MemoryType`], and the [`Access`] summary of
//! its usage.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde::Serialize;

use super::MAX_ID_LEN;

/// A memory's identifier: a ULID for new memories, any `[A-Za-z0-9._-]+` otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct MemoryId(String);

impl MemoryId {
    /// Validates `id`: non-empty, at most [`MAX_ID_LEN`] bytes of `[A-Za-z0-9._-]`, no `..`.
    pub fn new(id: &str) -> crate::Result<Self> {
        let reason = if id.is_empty() {
            Some("it is empty")
        } else if id.contains('/') || id.contains('\\') {
            Some("it contains a path separator")
        } else if id.contains("..") {
            Some("it contains `..`")
        } else if !id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            Some("only letters, digits, `.`, `_` and `-` are allowed")
        } else if id.bytes().all(|b| b == b'.') {
            Some("it is only dots")
        } else if id.len() > MAX_ID_LEN {
            Some("it is longer than 128 characters")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(crate::Error::InvalidId { id: id.to_string(), reason }),
            None => Ok(MemoryId(id.to_string())),
        }
    }

    /// A fresh ULID whose time part is `now`.
    pub fn generate(now: Timestamp) -> Self {
        let at = std::time::SystemTime::try_from(now).unwrap_or(std::time::UNIX_EPOCH);
        MemoryId(ulid::Ulid::from_datetime(at).to_string())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MemoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What kind of memory a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Something that happened: an observation, a session event.
    Episodic,
    /// A fact or a decision.
    Semantic,
    /// How to do something.
    Procedural,
}

impl MemoryType {
    /// Every type, in the order they are listed to users.
    pub const ALL: [MemoryType; 3] =
        [MemoryType::Episodic, MemoryType::Semantic, MemoryType::Procedural];

    /// The lowercase name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::Episodic => "episodic",
            MemoryType::Semantic => "semantic",
            MemoryType::Procedural => "procedural",
        }
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for MemoryType {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemoryType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown type {s:?}: expected episodic, semantic or procedural"))
    }
}

/// Usage summary written back into the front-matter by `mem sync`
/// (`access: { count, last, retrieved, strength }`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    /// How many times the memory was used (`mem used`).
    pub count: u64,
    /// Its last reinforcement.
    pub last: Option<Timestamp>,
    /// How many times recall returned it.
    pub retrieved: u64,
    /// Its strength in days (see `docs/decay.md`), when `mem` has computed one.
    pub strength: Option<f64>,
}

/// A memory id as 64 bits (the first 8 bytes of its BLAKE3 hash): what the index's fast field
/// and the vector file key memories by.
pub fn id_key(id: &str) -> u64 {
    let hash = blake3::hash(id.as_bytes());
    u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
}
