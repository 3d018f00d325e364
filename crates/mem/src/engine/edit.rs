//! Changes to existing memories: forget, supersede, and prune's archive and restore (files are
//! moved, never deleted).

use std::path::Path;

use jiff::Timestamp;

use super::{Code, Files, Usage};
use crate::config::PruneConfig;
use crate::decay::State;
use crate::format::{Memory, MemoryId, edit_front_matter, updated_at, whole_second, yaml_text};
use crate::prune::{self, Candidate};
use crate::store::{self, ARCHIVE_DIR, Overwrite};
use crate::{Error, Result};

/// What [`Files::archive`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Archived {
    /// The memories moved, as (id, new path relative to the root).
    pub moved: Vec<(String, String)>,
    /// The memories left where they are, each with the reason (a link that leaves the root).
    pub refused: Vec<String>,
}

/// A memory [`Files::forget`] invalidated.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Forgotten {
    /// Its id.
    pub id: String,
    /// Its file, relative to the root.
    pub path: String,
    /// From when it is invalid, as written into the file.
    pub invalid_at: Timestamp,
}

impl Files {
    /// Marks a memory invalid from `now` on (`invalid_at`, and `invalid_reason` when given).
    /// Nothing is deleted; recall leaves it out unless asked.
    pub fn forget(&mut self, id: &str, reason: Option<&str>, now: Timestamp) -> Result<Forgotten> {
        let id = MemoryId::new(id)?;
        let invalid_at = whole_second(now);
        let mut edits = vec![("invalid_at", Some(invalid_at.to_string()))];
        if let Some(reason) = reason.map(str::trim).filter(|r| !r.is_empty()) {
            edits.push(("invalid_reason", Some(yaml_text(reason))));
        }
        edits.push(updated_at(now));
        let path = self.edit(id.as_str(), &edits)?;
        self.refresh_index(now, &crate::progress::Silent)?;
        Ok(Forgotten { id: id.to_string(), path, invalid_at })
    }

    /// Marks `old` as replaced by `new` (which must exist): `invalid_at` now and
    /// `superseded_by: NEW`.
    pub fn supersede(&mut self, old: &str, new: &str, now: Timestamp) -> Result<String> {
        let new_id = MemoryId::new(new)?;
        if MemoryId::new(old)? == new_id {
            return Err(Error::SelfSupersede);
        }
        self.path_of(new_id.as_str())?;
        let edits = [
            ("invalid_at", Some(whole_second(now).to_string())),
            ("superseded_by", Some(yaml_text(new_id.as_str()))),
            updated_at(now),
        ];
        let path = self.edit(old, &edits)?;
        self.refresh_index(now, &crate::progress::Silent)?;
        Ok(path)
    }

    /// Applies front-matter edits to a memory's file under the lock, refusing to invalidate
    /// one twice.
    fn edit(&mut self, id: &str, edits: &[(&str, Option<String>)]) -> Result<String> {
        self.with_lock(|files| {
            let (rel, memory) = files.get(id)?;
            if let Some(at) = memory.invalid_at() {
                return Err(Error::AlreadyInvalid { id: id.to_string(), since: at, path: rel });
            }
            files.rewrite(&rel, |text| edit_front_matter(text, edits))?;
            Ok(rel)
        })
    }

    /// Fills in the title of each of `candidates` from the index.
    pub fn add_titles(&self, candidates: &mut [Candidate]) -> Result<()> {
        let paths: Vec<&str> = candidates.iter().map(|c| c.path.as_str()).collect();
        let mut titles = self.index.titles(&paths)?;
        for c in candidates {
            if let Some(title) = titles.remove(&c.path) {
                c.title = title;
            }
        }
        Ok(())
    }

    /// Moves `candidates` to `archive/` (same relative path), adding `archived_at` and
    /// `archived_reason`; nothing is deleted. A memory reached through a symbolic link that
    /// leaves the root is not moved: it is listed in [`Archived::refused`] with the reason.
    pub fn archive(&mut self, candidates: &[Candidate], now: Timestamp) -> Result<Archived> {
        self.with_lock(|files| {
            let mut archived = Archived::default();
            for c in candidates {
                let to_rel = format!("{ARCHIVE_DIR}/{}", c.path);
                let (from, to) = match (
                    store::inside_root(&files.root, &c.path),
                    store::inside_root(&files.root, &to_rel),
                ) {
                    (Ok(from), Ok(to)) => (from, to),
                    (Err(e @ Error::OutsideRoot(_)), _) | (_, Err(e @ Error::OutsideRoot(_))) => {
                        archived.refused.push(e.to_string());
                        continue;
                    }
                    (Err(e), _) | (_, Err(e)) => return Err(e),
                };
                let reasons: Vec<String> = c.reasons.iter().map(|r| r.to_string()).collect();
                let edits = [
                    ("archived_at", Some(whole_second(now).to_string())),
                    ("archived_reason", Some(yaml_text(&reasons.join("; ")))),
                ];
                let edited = files.edited(&c.path, |text| edit_front_matter(text, &edits))?;
                move_file(&from, &to, &to_rel, edited.as_bytes())?;
                archived.moved.push((c.id.clone(), to_rel));
            }
            Ok(archived)
        })
    }

    /// The memories in `archive/` that parse, each with its path relative to `archive/`
    /// (what `mem restore` can bring back), in the walk's order.
    pub fn archived(&self) -> Result<Vec<(String, Memory)>> {
        self.archived_at(&self.archived_paths())
    }

    /// The paths of the files in `archive/`, relative to it, in the walk's order: what a page
    /// of the archive is cut from without reading every file.
    pub fn archived_paths(&self) -> Vec<String> {
        store::scan(&self.root.join(ARCHIVE_DIR))
            .files
            .into_iter()
            .map(|f| f.rel.to_string())
            .collect()
    }

    /// The memories of `archive/` at `rels` (relative to it) that parse, in that order.
    pub fn archived_at(&self, rels: &[String]) -> Result<Vec<(String, Memory)>> {
        let archive = self.root.join(ARCHIVE_DIR);
        let mut found = Vec::new();
        for rel in rels {
            let path = archive.join(rel);
            let text = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
            if let Ok(memory) = Memory::parse_bytes(&text) {
                found.push((rel.clone(), memory));
            }
        }
        Ok(found)
    }

    /// Brings an archived memory back to where it was, as it was before `mem prune`.
    pub fn restore(&mut self, id: &str) -> Result<String> {
        MemoryId::new(id)?;
        self.restore_many(&[id])?.remove(0)
    }

    /// Brings the archived memories `ids` back, as [`Files::restore`] does each, reading the
    /// archive once: each one's path, or why it did not come back, in the order of `ids`.
    pub fn restore_many(&mut self, ids: &[&str]) -> Result<Vec<Result<String>>> {
        self.with_lock(|files| {
            let mut archived: std::collections::HashMap<String, Vec<String>> =
                std::collections::HashMap::new();
            for (rel, memory) in files.archived()? {
                archived.entry(memory.id().to_string()).or_default().push(rel);
            }
            Ok(ids
                .iter()
                .map(|id| {
                    let id = MemoryId::new(id)?;
                    files.restore_found(&id, archived.get(id.as_str()).map(Vec::as_slice))
                })
                .collect())
        })
    }

    /// Moves the archived memory `id` back from `found`, the archive's paths that hold it.
    fn restore_found(&self, id: &MemoryId, found: Option<&[String]>) -> Result<String> {
        let rel = match found.unwrap_or_default() {
            [] => return Err(Error::NotArchived(id.to_string())),
            [one] => one.replace('\\', "/"),
            many => {
                let paths = many.iter().map(|p| Path::new(ARCHIVE_DIR).join(p)).collect();
                return Err(Error::DuplicateId { id: id.to_string(), paths });
            }
        };
        let from = store::inside_root(&self.root, &format!("{ARCHIVE_DIR}/{rel}"))?;
        let to = store::inside_root(&self.root, &rel)?;
        let text = std::fs::read_to_string(&from).map_err(|e| Error::io(&from, e))?;
        let edited = edit_front_matter(&text, &[("archived_at", None), ("archived_reason", None)])
            .map_err(|source| Error::Parse { path: from.clone(), source })?;
        move_file(&from, &to, &rel, edited.as_bytes())?;
        Ok(rel)
    }
}

/// The memories `mem prune` would archive, safest first, each with its reasons and title.
pub(super) fn prune_candidates(
    files: &Files,
    usage: &mut Usage,
    code: &Code,
    rules: &PruneConfig,
    now: Timestamp,
) -> Result<Vec<Candidate>> {
    let mut candidates = prune_candidates_untitled(files, usage, code, rules, now)?;
    files.add_titles(&mut candidates)?;
    Ok(candidates)
}

/// [`prune_candidates`] without their titles (empty), from what the index keeps
/// of each memory: no file is read, so that a review counts and pages them at any size;
/// [`Files::add_titles`] adds the titles of those it shows.
pub(super) fn prune_candidates_untitled(
    files: &Files,
    usage: &mut Usage,
    code: &Code,
    rules: &PruneConfig,
    now: Timestamp,
) -> Result<Vec<Candidate>> {
    let standings = files.index.standings()?;
    let view = usage.view(files)?;
    let decay = &files.config.decay;
    let states: Vec<State> =
        standings.iter().map(|s| view.state_of(&s.id, &s.basis, decay)).collect();
    let gone = code.code_gone(files)?;
    Ok(prune::candidates(&standings, &states, rules, view.since, &gone, now))
}

/// Writes `contents` at `to` (which must not exist) and then removes `from`: at every moment
/// at least one complete copy exists. A move killed between its two steps left both copies:
/// when `to` already holds the same memory (same id), the move is finished by removing
/// `from`; another memory at `to` is [`Error::MoveBlocked`].
fn move_file(from: &Path, to: &Path, to_rel: &str, contents: &[u8]) -> Result<()> {
    if let Ok(existing) = std::fs::read(to) {
        let id_of = |bytes: &[u8]| Memory::parse_bytes(bytes).map(|m| m.id().to_string());
        return match (id_of(&existing), id_of(contents)) {
            (Ok(there), Ok(moving)) if there == moving => remove_and_sync(from),
            (there, _) => Err(Error::MoveBlocked {
                to: to_rel.into(),
                other: there.unwrap_or_else(|_| "a file that is not a memory".into()),
            }),
        };
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    store::write_atomic(to, contents, Overwrite::No)?;
    remove_and_sync(from)
}

/// Removes `path` and flushes its folder.
fn remove_and_sync(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    match path.parent() {
        Some(parent) => store::sync_dir(parent),
        None => Ok(()),
    }
}
