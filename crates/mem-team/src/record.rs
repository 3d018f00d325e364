//! `.mem/team-pushed`: what a root published to each team store, so that its next push withdraws
//! the memories whose files were deleted since (docs/teams.md). Per store (keyed by its
//! `host:port/database`, so another store is never confused with it): the project the root was
//! pushed as, and the ids it pushed. The file is written atomically, after a push committed,
//! and read back as an untrusted file: a record that is not one mem wrote is refused as a
//! whole, and only ids of the project the root is pushed as now are ever withdrawn.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// The record's file in a root's `.mem/`.
pub const FILE: &str = "team-pushed";

/// The version of the record's format this code writes and reads.
const VERSION: u32 = 1;

/// The most bytes of the record read (a million ids fit).
const MAX_BYTES: u64 = 64 << 20;

/// What a root published to each team store.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Record {
    version: u32,
    stores: BTreeMap<String, Pushed>,
}

/// What a root published to one store: as which project, which ids.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
struct Pushed {
    project: String,
    ids: Vec<String>,
}

/// The record's path in the root `root`.
fn path(root: &Path) -> PathBuf {
    root.join(mem::store::STATE_DIR).join(FILE)
}

impl Record {
    /// The record of the root `root`: empty when it has none; an error when the file is not a
    /// record mem wrote (not JSON of this shape, another version, an id that is no memory id,
    /// not a regular file, a link out of `.mem/`, too large).
    pub fn read(root: &Path) -> Result<Record> {
        let path = path(root);
        let bad = |reason: String| Error::Record { path: path.clone(), reason };
        let links = mem::untrusted::Links::InFolder;
        let text = match mem::untrusted::read_text(&path, MAX_BYTES, links) {
            Ok(Some(text)) => text,
            Ok(None) => return Ok(Record { version: VERSION, stores: BTreeMap::new() }),
            Err(e) => return Err(bad(e.to_string())),
        };
        let record: Record = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
        if record.version != VERSION {
            return Err(bad(format!("version {}, this mem knows {VERSION}", record.version)));
        }
        for id in record.stores.values().flat_map(|p| &p.ids) {
            mem::MemoryId::new(id).map_err(|e| bad(format!("{id:?} is no memory id: {e}")))?;
        }
        Ok(record)
    }

    /// The memories this root pushed to the store `target` as `project` that are no longer
    /// among `present` (the ids of its memories and its archive's, published or not): the
    /// ones whose files were deleted, as (project, id). None when the root was pushed there as
    /// another project: only the project pushed now is ever touched.
    pub fn deleted(
        &self,
        target: &str,
        project: &str,
        present: &HashSet<&str>,
    ) -> Vec<(String, String)> {
        let Some(pushed) = self.stores.get(target).filter(|p| p.project == project) else {
            return Vec::new();
        };
        let gone = pushed.ids.iter().filter(|id| !present.contains(id.as_str()));
        gone.map(|id| (project.to_string(), id.clone())).collect()
    }

    /// Records that the root was pushed to `target` as `project` with `ids` (what the store
    /// holds of it now), in place of what it recorded for that store.
    pub fn set(&mut self, target: &str, project: &str, mut ids: Vec<String>) {
        ids.sort_unstable();
        ids.dedup();
        self.version = VERSION;
        self.stores.insert(target.to_string(), Pushed { project: project.to_string(), ids });
    }

    /// Writes the record into the root `root`'s `.mem/`, atomically.
    pub fn write(&self, root: &Path) -> Result<()> {
        let dir = mem::store::state_dir(root)?;
        let text = serde_json::to_string(self)
            .map_err(|e| Error::Record { path: path(root), reason: e.to_string() })?;
        mem::store::write_atomic(&dir.join(FILE), text.as_bytes(), mem::store::Overwrite::Yes)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STORE: &str = "127.0.0.1:5432/team";

    fn present<'a>(ids: &[&'a str]) -> HashSet<&'a str> {
        ids.iter().copied().collect()
    }

    #[test]
    fn a_record_written_is_read_back_and_names_what_was_deleted_since() {
        let root = tempfile::tempdir().unwrap();
        let mut record = Record::read(root.path()).unwrap();
        assert_eq!(record.deleted(STORE, "demo", &present(&[])), vec![]);
        record.set(STORE, "demo", vec!["b".into(), "a".into(), "a".into()]);
        record.set("db.example.com:5432/other", "demo", vec!["c".into()]);
        record.write(root.path()).unwrap();
        let back = Record::read(root.path()).unwrap();
        assert_eq!(back, record);
        assert_eq!(
            back.deleted(STORE, "demo", &present(&["a"])),
            vec![("demo".to_string(), "b".to_string())]
        );
        // Another store's record, or another project's, is never this push's business.
        assert_eq!(back.deleted("127.0.0.1:5432/elsewhere", "demo", &present(&[])), vec![]);
        assert_eq!(back.deleted(STORE, "acme/api", &present(&[])), vec![]);
    }

    #[test]
    fn a_record_mem_did_not_write_is_refused_whole() {
        let root = tempfile::tempdir().unwrap();
        let file = mem::store::state_dir(root.path()).unwrap().join(FILE);
        let cases = [
            ("{not json", "key must be a string"),
            (r#"{"version":2,"stores":{}}"#, "version 2, this mem knows 1"),
            (r#"{"version":1,"stores":{"s":{"project":"p","ids":["../x"]}}}"#, "is no memory id"),
            (r#"{"version":1,"stores":{},"more":1}"#, "unknown field"),
        ];
        for (text, reason) in cases {
            std::fs::write(&file, text).unwrap();
            let e = Record::read(root.path()).unwrap_err().to_string();
            assert!(e.contains(reason) && e.contains("team-pushed"), "{text}: {e}");
        }
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        assert!(Record::read(root.path()).is_err(), "a folder is no record");
    }
}
