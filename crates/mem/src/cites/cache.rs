//! The verdicts already computed, in `.mem/cites.json`: per memory, valid while each path its
//! verdict looked at has the same stamp in the work tree (an uncommitted edit or delete
//! counts). A verdict that depends on the whole repository as HEAD has it (a symbol defined
//! nowhere, a file deleted without a commit, something not checked) is valid only while the
//! repository's key ([`Repo::key`]: HEAD, the branch it names, the index, the packed refs) is
//! the same; the others do not depend on it: a file's version at the commit its memory was
//! written at never changes, and where the file is now is in the work tree. A memory is keyed
//! by its caller: its file's stamp and the time its citations were last known true.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::tree::Tree;
use super::{Checked, Repo, Subject, Verdict};

/// The cache file in `.mem/`.
pub const CACHE_FILE: &str = "cites.json";

/// The most a cache file is read: past it, the verdicts are computed again.
const MAX_CACHE_BYTES: u64 = 64 << 20;

/// The version of the verdicts a cache holds: a cache of another version is dropped whole (2:
/// a partial clone's missing objects and files over the read bound are judged, not passed as
/// current; 3: a rename staged and not committed is moved, not deleted by an older commit; 4:
/// a path written from a subfolder is the file it named when its memory was written).
const VERSION: u32 = 4;

#[derive(Default, Serialize, Deserialize)]
struct Stored {
    #[serde(default)]
    version: u32,
    repo: String,
    entries: HashMap<String, Checked>,
}

/// The verdicts of one repository's memories, loaded from `.mem/`, checked before use.
pub struct Cache {
    repo: Repo,
    tree: Tree,
    file: PathBuf,
    stored: Stored,
    changed: bool,
    /// The stamps of the paths looked at by this cache's checks, each stat-ed once.
    stamps: std::cell::RefCell<HashMap<String, (u8, u64, i64)>>,
    /// The keys of the memories asked about (see [`Cache::retain_used`]).
    used: std::collections::HashSet<String>,
}

/// Whether a verdict holds only for the HEAD and index it was computed at: a symbol gone (it
/// may be defined again anywhere), a file deleted or renamed and not committed (its commit is
/// to come), or something that could not be checked.
fn depends_on_head(verdict: &Verdict) -> bool {
    use super::Status::{Gone, Moved, Unavailable};
    verdict.unchecked.is_some()
        || verdict.cites.iter().any(|c| c.status == Unavailable)
        || verdict.cites.iter().any(|c| match c.status {
            Gone => c.symbol.is_some() || c.commit.is_none(),
            Moved => c.symbol.is_none() && c.commit.is_none(),
            _ => false,
        })
}

impl Cache {
    /// The cache of `repo`'s verdicts kept in `state_dir` (empty when missing or unreadable),
    /// without those that depended on another HEAD or index.
    pub fn open(repo: &Repo, state_dir: &Path) -> Cache {
        let file = state_dir.join(CACHE_FILE);
        let key = repo.key();
        let mut stored =
            crate::untrusted::read(&file, MAX_CACHE_BYTES, crate::untrusted::Links::InFolder)
                .ok()
                .flatten()
                .and_then(|bytes| serde_json::from_slice::<Stored>(&bytes).ok())
                .filter(|stored| stored.version == VERSION)
                .unwrap_or(Stored { version: VERSION, ..Stored::default() });
        let mut changed = false;
        if stored.repo != key {
            // Another HEAD or index: what depends on them is computed again.
            stored.entries.retain(|_, entry| !depends_on_head(&entry.verdict));
            stored.repo = key;
            changed = true;
        }
        Cache {
            tree: Tree::new(repo.top()),
            repo: repo.clone(),
            file,
            stored,
            changed,
            stamps: Default::default(),
            used: Default::default(),
        }
    }

    /// The cached verdict of the memory keyed `key`, when every path it looked at is as it
    /// was.
    pub fn get(&self, key: &str) -> Option<&Verdict> {
        let entry = self.stored.entries.get(key)?;
        let same = entry.watched.iter().all(|(path, stamp)| self.stamp(path) == *stamp);
        same.then_some(&entry.verdict)
    }

    /// The stamp of `path` in the work tree, stat-ed once per cache.
    fn stamp(&self, path: &str) -> (u8, u64, i64) {
        if let Some(stamp) = self.stamps.borrow().get(path) {
            return *stamp;
        }
        let stamp = self.tree.place(path).stamp();
        self.stamps.borrow_mut().insert(path.to_string(), stamp);
        stamp
    }

    /// The verdicts of `items` (each a key and its subject), from the cache where valid, the
    /// others computed together and stored.
    pub fn verdicts(&mut self, items: &[(String, Subject)]) -> Vec<Verdict> {
        let mut out: Vec<Option<Verdict>> =
            items.iter().map(|(key, _)| self.get(key).cloned()).collect();
        let missing: Vec<usize> = (0..items.len()).filter(|i| out[*i].is_none()).collect();
        if !missing.is_empty() {
            let subjects: Vec<Subject> = missing.iter().map(|i| items[*i].1).collect();
            let checked = self.repo.check(&subjects);
            for (i, checked) in missing.into_iter().zip(checked) {
                out[i] = Some(checked.verdict.clone());
                self.stored.entries.insert(items[i].0.clone(), checked);
            }
            self.changed = true;
        }
        out.into_iter().map(Option::unwrap_or_default).collect()
    }

    /// Notes that the entries of `keys` are in use (by the memories just asked about).
    pub fn note_used(&mut self, keys: &std::collections::HashSet<&str>) {
        self.used.extend(keys.iter().map(|k| k.to_string()));
    }

    /// Drops every entry not noted in use: after a check of every memory of the root, those of
    /// memories that changed or are gone.
    pub fn retain_used(&mut self) {
        let before = self.stored.entries.len();
        let used = &self.used;
        self.stored.entries.retain(|k, _| used.contains(k));
        self.changed |= self.stored.entries.len() != before;
    }

    /// Writes the cache back when it changed; a cache that cannot be written is no error (the
    /// verdicts are computed again next time).
    pub fn save(&mut self) {
        if !self.changed {
            return;
        }
        if let Ok(bytes) = serde_json::to_vec(&self.stored) {
            let _ = crate::store::write_cache(&self.file, &bytes);
        }
        self.changed = false;
    }
}
