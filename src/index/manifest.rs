//! The manifest: what the index holds for each file (size, mtime, content hash, id), so a
//! refresh only re-reads files that changed.
//!
//! Each commit of the index names its manifest generation in the commit payload; the manifest
//! file of that generation is written before the commit, so the two never disagree.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::store::{Overwrite, write_atomic};
use crate::{Error, Result};

/// What the index knows about one memory file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Size in bytes when indexed.
    pub size: u64,
    /// Modification time (ns since the epoch) when indexed.
    pub mtime_ns: i64,
    /// BLAKE3 hash of the content (first 16 bytes).
    pub hash: [u8; 16],
    /// The memory's id.
    pub id: String,
    /// The file's inode number when indexed (0 where the system has none): a folder walked
    /// again lists it, so an unchanged file is known there without a stat.
    pub ino: u64,
}

/// Every indexed file, keyed by its path relative to the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Entries by relative path.
    pub files: FxHashMap<String, Entry>,
}

/// Hash of file content as kept in the manifest.
pub fn content_hash(bytes: &[u8]) -> [u8; 16] {
    blake3::hash(bytes).as_bytes()[..16].try_into().expect("16 bytes")
}

/// The manifest file of a generation.
pub fn path(state_dir: &Path, generation: u64) -> PathBuf {
    state_dir.join(format!("manifest-{generation}.bin"))
}

impl Manifest {
    /// Reads the manifest of `generation`, with the file's own mtime (ns since the epoch).
    pub fn load(state_dir: &Path, generation: u64) -> Result<(Manifest, i64)> {
        let p = path(state_dir, generation);
        let bytes = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
        let mtime = std::fs::metadata(&p).map(|m| crate::store::mtime_ns(&m)).unwrap_or(0);
        let manifest = postcard::from_bytes(&bytes).map_err(|e| {
            Error::io(&p, std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
        })?;
        Ok((manifest, mtime))
    }

    /// Writes the manifest of `generation` atomically.
    pub fn save(&self, state_dir: &Path, generation: u64) -> Result<()> {
        let bytes = postcard::to_stdvec(self).expect("a manifest always serialises");
        write_atomic(&path(state_dir, generation), &bytes, Overwrite::Yes)
    }

    /// Ids used by more than one file, each with its files in path order. Counted first, so
    /// that only the ids used twice get a list (a refresh after each change calls this).
    pub fn duplicate_ids(&self) -> Vec<(String, Vec<String>)> {
        let mut count: FxHashMap<&str, u32> = FxHashMap::default();
        count.reserve(self.files.len());
        for entry in self.files.values() {
            *count.entry(entry.id.as_str()).or_default() += 1;
        }
        let mut by_id: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (rel, entry) in &self.files {
            if count.get(entry.id.as_str()).is_some_and(|&n| n > 1) {
                by_id.entry(entry.id.as_str()).or_default().push(rel.clone());
            }
        }
        by_id
            .into_iter()
            .map(|(id, mut paths)| {
                paths.sort();
                (id.to_string(), paths)
            })
            .collect()
    }
}
