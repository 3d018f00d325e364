//! The manifest: what the index holds for each file (size, mtime, content hash, id), so a
//! refresh only re-reads files that changed.
//!
//! It is kept as a base, `manifest-<B>.bin` (the whole manifest of generation B), and the log
//! of the changes committed since, `manifest-<B>.log` (one record per commit, appended and
//! synced before the commit): a commit that changes one file appends a few bytes instead of
//! rewriting the whole manifest. Each commit of the index names in its payload the base and
//! how many bytes of its log belong to it ([`Place`]), so the two never disagree: what a commit
//! that never happened appended after that length is ignored, and cut by the next append.
//! When the log outgrows a quarter of its base, the next commit writes a new base instead.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom, Write};

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
}

/// Every indexed file, keyed by its path relative to the root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Entries by relative path.
    pub files: FxHashMap<String, Entry>,
    /// Whether only some entries were read ([`Manifest::load_where`]): never saved as a base.
    #[serde(skip)]
    pub partial: bool,
}

/// An entry as the base holds it, read without copying its path and id.
#[derive(Deserialize)]
struct EntryRef<'a> {
    size: u64,
    mtime_ns: i64,
    hash: [u8; 16],
    #[serde(borrow)]
    id: &'a str,
}

/// Which entries a partial read keeps: by path and mtime.
pub type Keep<'a> = &'a dyn Fn(&str, i64) -> bool;

/// The entries of a base, all of them, or those a [`Keep`] accepts, decoded without
/// allocating the others.
struct Kept<'k>(Option<Keep<'k>>);

impl<'de> serde::de::DeserializeSeed<'de> for Kept<'_> {
    type Value = FxHashMap<String, Entry>;

    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Kept<'_> {
    type Value = FxHashMap<String, Entry>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a map of paths to manifest entries")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        // All of them: a table sized for all at once (serde caps its first allocation at
        // 1 MiB, and the table then grows by rehashing: 100,000 entries rehashed three times
        // on every load). The length comes from the file: bounded (about 16 MiB of table) so
        // that a damaged one cannot ask for much up front; a larger root grows past it.
        let len = if self.0.is_none() { map.size_hint().unwrap_or(0).min(200_000) } else { 0 };
        let mut files = FxHashMap::with_capacity_and_hasher(len, Default::default());
        while let Some((rel, e)) = map.next_entry::<&'de str, EntryRef<'de>>()? {
            if self.0.is_none_or(|keep| keep(rel, e.mtime_ns)) {
                let entry =
                    Entry { size: e.size, mtime_ns: e.mtime_ns, hash: e.hash, id: e.id.into() };
                files.insert(rel.to_string(), entry);
            }
        }
        Ok(files)
    }
}

/// Hash of file content as kept in the manifest.
pub fn content_hash(bytes: &[u8]) -> [u8; 16] {
    blake3::hash(bytes).as_bytes()[..16].try_into().expect("16 bytes")
}

/// The base manifest file written at generation `base`.
pub fn path(state_dir: &Path, base: u64) -> PathBuf {
    state_dir.join(format!("manifest-{base}.bin"))
}

/// The log of the changes committed on top of the base of generation `base`.
pub fn log_path(state_dir: &Path, base: u64) -> PathBuf {
    state_dir.join(format!("manifest-{base}.log"))
}

/// Where the manifest of a commit is: its base and the length of the base's log that belongs
/// to it (recorded in the commit's payload).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The generation whose whole manifest is the base.
    pub base: u64,
    /// Bytes of the base's log that belong to the commit (0: the base alone).
    pub log_len: u64,
}

/// One commit's changes: an entry set (`Some`) or dropped (`None`), by path.
pub type Changes = Vec<(String, Option<Entry>)>;

/// A log at most this long is never compacted (small roots would rewrite their base often).
const MIN_LOG_BYTES: u64 = 64 * 1024;

/// Whether the changes of the next commit, `record_len` bytes, are better written as a new
/// base than appended to the log at `place` on a base of `base_bytes`.
pub fn compact(place: Place, base_bytes: u64, record_len: usize) -> bool {
    place.log_len + record_len as u64 > MIN_LOG_BYTES.max(base_bytes / 4)
}

/// A log record: the changes' length (4 bytes, little-endian), then the changes.
pub fn record(changes: &Changes) -> Vec<u8> {
    let mut bytes = postcard::to_extend(changes, vec![0u8; 4]).expect("changes always serialise");
    let len = u32::try_from(bytes.len() - 4).unwrap_or(u32::MAX);
    bytes[..4].copy_from_slice(&len.to_le_bytes());
    bytes
}

/// Appends `record` to the log of `place.base` at `place.log_len` (cutting what a commit that
/// did not happen left after it) and syncs it; returns the log's new length. The log must be
/// a plain file (never a link a cloned `.mem/` could plant).
pub fn append(state_dir: &Path, place: Place, record: &[u8]) -> Result<u64> {
    let p = log_path(state_dir, place.base);
    let new = match std::fs::symlink_metadata(&p) {
        Ok(meta) if meta.file_type().is_file() => false,
        Ok(_) => return Err(invalid(&p, "is not a plain file")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(Error::io(&p, e)),
    };
    let io = |e| Error::io(&p, e);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&p)
        .map_err(io)?;
    file.set_len(place.log_len).map_err(io)?;
    file.seek(SeekFrom::Start(place.log_len)).map_err(io)?;
    file.write_all(record).map_err(io)?;
    // The commit that names this length follows: the record must be on disk before it.
    file.sync_data().map_err(io)?;
    if new {
        crate::store::sync_dir(state_dir)?;
    }
    Ok(place.log_len + record.len() as u64)
}

/// An error for a manifest file whose content is not what was written.
fn invalid(p: &Path, message: &str) -> Error {
    Error::io(p, std::io::Error::new(std::io::ErrorKind::InvalidData, message.to_string()))
}

impl Manifest {
    /// Reads the manifest at `place`: its base, with the log's records up to `place.log_len`
    /// applied in order.
    pub fn load(state_dir: &Path, place: Place) -> Result<Manifest> {
        Manifest::read(state_dir, place, None)
    }

    /// Reads only the entries of the manifest at `place` that `keep` accepts (by path and
    /// mtime), without allocating the others: a partial manifest, for a refresh of some
    /// folders or files in a large root.
    pub fn load_where(state_dir: &Path, place: Place, keep: Keep) -> Result<Manifest> {
        Manifest::read(state_dir, place, Some(keep))
    }

    fn read(state_dir: &Path, place: Place, keep: Option<Keep>) -> Result<Manifest> {
        let p = path(state_dir, place.base);
        let bytes = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
        // postcard writes a struct as its fields one after the other: the manifest's bytes are
        // those of its one field, the map.
        let mut de = postcard::Deserializer::from_bytes(&bytes);
        let files = serde::de::DeserializeSeed::deserialize(Kept(keep), &mut de)
            .map_err(|e| invalid(&p, &e.to_string()))?;
        let mut manifest = Manifest { files, partial: keep.is_some() };
        if place.log_len == 0 {
            return Ok(manifest);
        }
        let p = log_path(state_dir, place.base);
        let log = std::fs::read(&p).map_err(|e| Error::io(&p, e))?;
        let Some(mut rest) = usize::try_from(place.log_len).ok().and_then(|n| log.get(..n)) else {
            return Err(invalid(&p, "is shorter than the index's commit says"));
        };
        while !rest.is_empty() {
            let (len, tail) = rest.split_at_checked(4).ok_or_else(|| invalid(&p, "cut short"))?;
            let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
            let (changes, tail) =
                tail.split_at_checked(len).ok_or_else(|| invalid(&p, "cut short"))?;
            let mut changes: Changes =
                postcard::from_bytes(changes).map_err(|e| invalid(&p, &e.to_string()))?;
            if let Some(keep) = keep {
                // An entry set and not kept drops what the base (or an earlier record) held.
                for (rel, entry) in &mut changes {
                    if entry.as_ref().is_some_and(|e| !keep(rel, e.mtime_ns)) {
                        *entry = None;
                    }
                }
            }
            manifest.apply(changes);
            rest = tail;
        }
        Ok(manifest)
    }

    /// Sets and drops entries as `changes` say.
    pub fn apply(&mut self, changes: Changes) {
        for (rel, entry) in changes {
            match entry {
                Some(entry) => self.files.insert(rel, entry),
                None => self.files.remove(&rel),
            };
        }
    }

    /// Writes the whole manifest as the base of generation `base`, atomically; returns its
    /// size in bytes. A partial one is refused.
    pub fn save(&self, state_dir: &Path, base: u64) -> Result<u64> {
        if self.partial {
            let message = "a partial manifest is not a base";
            return Err(invalid(&path(state_dir, base), message));
        }
        let bytes = postcard::to_stdvec(self).expect("a manifest always serialises");
        write_atomic(&path(state_dir, base), &bytes, Overwrite::Yes)?;
        Ok(bytes.len() as u64)
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn entry(id: &str, size: u64) -> Entry {
        Entry { size, mtime_ns: 1, hash: [7; 16], id: id.to_string() }
    }

    fn at(log_len: u64) -> Place {
        Place { base: 3, log_len }
    }

    /// The log's records are applied on top of the base in order, up to the length the commit
    /// names; a record a commit that never happened left after it is ignored, and the next
    /// append replaces it.
    #[test]
    fn the_log_replays_up_to_the_committed_length_only() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        let mut want = Manifest::default();
        want.files.insert("a.md".into(), entry("a", 1));
        want.files.insert("b.md".into(), entry("b", 1));
        want.save(state, 3).unwrap();
        assert_eq!(Manifest::load(state, at(0)).unwrap(), want);

        let first: Changes = vec![("c.md".into(), Some(entry("c", 1))), ("a.md".into(), None)];
        let len1 = append(state, at(0), &record(&first)).unwrap();
        let second: Changes = vec![("b.md".into(), Some(entry("b", 2)))];
        let len2 = append(state, at(len1), &record(&second)).unwrap();
        want.apply(first);
        assert_eq!(Manifest::load(state, at(len1)).unwrap(), want);
        want.apply(second);
        assert_eq!(Manifest::load(state, at(len2)).unwrap(), want);
        assert!(!want.files.contains_key("a.md") && want.files["b.md"].size == 2);

        let never: Changes = vec![("z.md".into(), Some(entry("z", 9)))];
        append(state, at(len2), &record(&never)).unwrap();
        assert_eq!(Manifest::load(state, at(len2)).unwrap(), want, "an uncommitted record");
        let third: Changes = vec![("d.md".into(), Some(entry("d", 1)))];
        let len3 = append(state, at(len2), &record(&third)).unwrap();
        assert_eq!(std::fs::metadata(log_path(state, 3)).unwrap().len(), len3);
        want.apply(third);
        assert_eq!(Manifest::load(state, at(len3)).unwrap(), want);
        assert!(!want.files.contains_key("z.md"));
    }

    /// A partial read keeps exactly the entries of the whole manifest that its filter accepts,
    /// after the log's records (one moving an entry out of the filter drops it); it is never
    /// saved as a base.
    #[test]
    fn a_partial_read_keeps_what_its_filter_accepts_and_is_never_a_base() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        let mut whole = Manifest::default();
        for (rel, mtime_ns) in [("a/1.md", 1), ("a/2.md", 1), ("b/1.md", 1), ("b/2.md", 50)] {
            whole.files.insert(rel.into(), Entry { mtime_ns, ..entry(rel, 1) });
        }
        whole.save(state, 3).unwrap();
        let changes: Changes = vec![
            ("a/2.md".into(), None),
            ("b/2.md".into(), Some(entry("b2", 2))),
            ("b/3.md".into(), Some(Entry { mtime_ns: 60, ..entry("b3", 1) })),
        ];
        let len = append(state, at(0), &record(&changes)).unwrap();
        whole.apply(changes);
        let keep = |rel: &str, mtime_ns: i64| rel.starts_with("a/") || mtime_ns > 10;
        let part = Manifest::load_where(state, at(len), &keep).unwrap();
        let mut want = Manifest::load(state, at(len)).unwrap();
        assert_eq!(want, whole);
        want.files.retain(|rel, e| keep(rel, e.mtime_ns));
        assert_eq!(part.files, want.files);
        let kept: BTreeSet<&str> = part.files.keys().map(String::as_str).collect();
        assert_eq!(kept, BTreeSet::from(["a/1.md", "b/3.md"]));
        assert!(part.partial && part.save(state, 4).is_err());
        assert!(!path(state, 4).exists());
    }

    /// A log shorter than its commit says, or whose records do not decode, is an error (the
    /// index is then rebuilt), never a silently different manifest.
    #[test]
    fn a_log_cut_short_or_damaged_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path();
        Manifest::default().save(state, 3).unwrap();
        let changes: Changes = vec![("c.md".into(), Some(entry("c", 1)))];
        let len = append(state, at(0), &record(&changes)).unwrap();
        assert!(Manifest::load(state, at(len + 1)).is_err(), "cut short");
        assert!(Manifest::load(state, at(len - 1)).is_err(), "a record cut in two");
        std::fs::write(log_path(state, 3), vec![0xff; len as usize]).unwrap();
        assert!(Manifest::load(state, at(len)).is_err(), "garbage");
    }

    /// A `.mem/` from a cloned repository could hold the log as a link to the user's file: it
    /// is refused, and the file it names is left as it was.
    #[cfg(unix)]
    #[test]
    fn the_log_is_never_written_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "the user's file\n").unwrap();
        std::os::unix::fs::symlink(&victim, log_path(&state, 3)).unwrap();
        let changes: Changes = vec![("c.md".into(), Some(entry("c", 1)))];
        assert!(append(&state, at(0), &record(&changes)).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's file\n");
    }

    /// The log grows to a quarter of its base (at least 64 KiB) before a new base is written.
    #[test]
    fn a_new_base_once_the_log_outgrows_a_quarter_of_it() {
        assert!(!compact(at(0), 100, 1_000));
        assert!(!compact(at(60_000), 100, 5_000));
        assert!(compact(at(60_000), 100, 6_000));
        assert!(!compact(at(1_000_000), 5_000_000, 100));
        assert!(compact(at(1_250_000), 5_000_000, 1));
    }
}
