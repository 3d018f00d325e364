//! The engine's side of memories checked against the code (see [`crate::cites`]): which root
//! is checked, the verdicts of what recall shows (cached in `.mem/`), the `code` factor applied
//! to recall's top window, `mem verify`, its confirmations and its fixes of pure renames.

use std::collections::HashSet;

use jiff::Timestamp;

use super::Files;
use crate::cites::{Cache, Repo, Status, Subject, Verdict};
use crate::format::MemoryType;
use crate::index::{Hit, Record};
use crate::{Error, Result};

/// A memory of the project root and its verdict, for `mem verify`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Verified {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its type.
    #[serde(rename = "type")]
    pub kind: MemoryType,
    /// Its file, relative to the root.
    #[serde(skip)]
    pub path: String,
    /// The worst verdict of what it cites.
    pub code_status: Option<Status>,
    /// What it cites, each with its verdict.
    pub cites: Vec<crate::cites::Cite>,
    /// Paths it names outside the repository (never read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<String>,
    /// What could not be checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchecked: Option<String>,
}

/// The note that goes with a memory of type `kind` citing `cites` into an agent's context: for
/// one that states how things are and cites code gone or moved (see [`crate::cites::note`]).
pub fn code_note(kind: MemoryType, cites: &[crate::cites::Cite]) -> Option<String> {
    states_how_things_are(kind).then(|| crate::cites::note(cites)).flatten()
}

/// Whether a memory of this type states how things are (and so is flagged and demoted when
/// its code is gone): semantic and procedural ones; an episodic one records what happened.
pub fn states_how_things_are(kind: MemoryType) -> bool {
    matches!(kind, MemoryType::Semantic | MemoryType::Procedural)
}

/// Whether an engine's memories are checked against its repository's code.
pub struct Code {
    on: bool,
}

impl Code {
    /// Checks on (only a project root is ever checked).
    pub(super) fn new() -> Code {
        Code { on: true }
    }

    /// Turns the checking of this root's memories against its repository's code on or off (the
    /// CLI turns it off for a root given with `--dir` or `MEM_DIR`); on by default, and only a
    /// project root is ever checked.
    pub fn set_checks(&mut self, on: bool) {
        self.on = on;
    }

    /// The repository this root's memories are checked against: a project root's (see
    /// [`Repo::of_root`]) with checks on; `None` otherwise.
    pub fn repo(&self, files: &Files) -> Option<Repo> {
        self.on.then(|| Repo::of_root(&files.root)).flatten()
    }

    /// The verdicts of `records` (in order), from the cache where still valid; `None` for
    /// each when this root is not checked. A memory's citations count from its creation or
    /// its last confirmation ([`Usage::confirm`]), whichever is later.
    pub fn verdicts(&self, files: &Files, records: &[&Record]) -> Vec<Option<Verdict>> {
        let Some(repo) = self.repo(files) else { return vec![None; records.len()] };
        verdicts_of(files, &repo, records).into_iter().map(Some).collect()
    }

    /// Gives each hit its verdict and applies the `code` factor to those that state how things
    /// are and whose cited code is all gone; the hits are then ranked again. Only the hits
    /// (recall's top window) are checked, never the whole root.
    pub(super) fn judge_hits(&self, files: &Files, hits: &mut [Hit]) {
        let Some(repo) = self.repo(files).filter(|_| !hits.is_empty()) else { return };
        let records: Vec<&Record> = hits.iter().map(|h| &h.record).collect();
        let verdicts = verdicts_of(files, &repo, &records);
        let ranking = &files.config.ranking;
        let mut demoted = false;
        for (hit, verdict) in hits.iter_mut().zip(verdicts) {
            if states_how_things_are(hit.record.kind) && verdict.all_gone() {
                hit.components.code = 0.0;
                hit.score = crate::score::combine(&hit.components, ranking);
                demoted = true;
            }
            hit.code_note = code_note(hit.record.kind, &verdict.cites);
            hit.code_status = verdict.code_status;
            hit.cites = verdict.cites;
        }
        if demoted {
            // A stable sort: ties keep the order the index gave them.
            hits.sort_by(|a, b| b.score.total_cmp(&a.score));
            for (i, hit) in hits.iter_mut().enumerate() {
                hit.rank = i + 1;
            }
        }
    }

    /// Every memory of the project root that cites code, worst first (then by title); an error
    /// when this root is not checked against a repository. Call [`super::Engine::refresh`] first.
    pub fn verify(&self, files: &Files) -> Result<Vec<Verified>> {
        let repo = self.repo(files).ok_or_else(|| Error::NotProject(files.root.clone()))?;
        let records = files.list(&[], &[])?;
        let refs: Vec<&Record> = records.iter().collect();
        let mut cache = Cache::open(&repo, &files.state_dir);
        let verdicts = verdicts_in(files, &mut cache, &refs);
        // What no memory holds any more is dropped from the cache.
        cache.retain_used();
        cache.save();
        let mut out: Vec<Verified> = records
            .into_iter()
            .zip(verdicts)
            .filter_map(|(r, v)| {
                (!v.cites.is_empty() || !v.outside.is_empty() || v.unchecked.is_some()).then_some(
                    Verified {
                        id: r.id,
                        title: r.title,
                        kind: r.kind,
                        path: r.path,
                        code_status: v.code_status,
                        cites: v.cites,
                        outside: v.outside,
                        unchecked: v.unchecked,
                    },
                )
            })
            .collect();
        out.sort_by(|a, b| b.code_status.cmp(&a.code_status).then(a.title.cmp(&b.title)));
        Ok(out)
    }

    /// The semantic and procedural memories whose cited code is all gone (by commits git
    /// knows) and that were not used since, with when the last of it went; empty when this
    /// root is not checked.
    pub(super) fn code_gone(
        &self,
        files: &Files,
    ) -> Result<std::collections::HashMap<String, Timestamp>> {
        let mut gone = std::collections::HashMap::new();
        if self.repo(files).is_none() {
            return Ok(gone);
        }
        for v in self.verify(files)? {
            let all_gone = !v.cites.is_empty() && v.cites.iter().all(|c| c.status == Status::Gone);
            if !all_gone || !states_how_things_are(v.kind) {
                continue;
            }
            // An uncommitted removal has no date: it waits for its commit.
            let dates: Option<Vec<Timestamp>> = v
                .cites
                .iter()
                .map(|c| c.date.as_deref().and_then(|d| format!("{d}T00:00:00Z").parse().ok()))
                .collect();
            let Some(since) = dates.and_then(|d| d.into_iter().max()) else { continue };
            let used = files.last_used.get(crate::format::id_key(&v.id));
            if used.is_some_and(|at| at >= since.as_second()) {
                continue;
            }
            gone.insert(v.id, since);
        }
        Ok(gone)
    }
}

/// A memory rewritten (or, dry, to be rewritten) by `mem verify --fix`: its old paths replaced
/// by the paths they were renamed to.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fixed {
    /// Its id.
    pub id: String,
    /// Its file, relative to the root.
    pub path: String,
    /// The renames applied, old path to new.
    pub renames: Vec<(String, String)>,
    /// The unified diff of its file (empty when refused).
    pub diff: String,
    /// Why it was not rewritten: a new path that git gives holds a control character, a
    /// newline or `<`, which mem never writes into a memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Code {
    /// The memories whose only flagged citations are renamed paths (`moved` paths, no symbol),
    /// each with the diff that writes the new path where the old one stood; unless `dry_run`,
    /// the files are rewritten (atomically, holding the root's lock). The one place mem edits a
    /// memory's body it did not write; `updated` is set to `now`. Call [`super::Engine::refresh`]
    /// first.
    pub fn fix_renames(
        &self,
        files: &mut Files,
        dry_run: bool,
        now: Timestamp,
    ) -> Result<Vec<Fixed>> {
        let mut fixed = Vec::new();
        for v in self.verify(files)? {
            let flagged: Vec<&crate::cites::Cite> =
                v.cites.iter().filter(|c| c.status.is_flagged()).collect();
            let pure = !flagged.is_empty()
                && flagged.iter().all(|c| c.status == Status::Moved && c.symbol.is_none());
            if !pure {
                continue;
            }
            let renames: Vec<(String, String)> =
                flagged.iter().filter_map(|c| Some((c.path.clone(), c.to.clone()?))).collect();
            if let Some((_, to)) = renames.iter().find(|(_, to)| !crate::cites::is_plain(to)) {
                let refused = format!(
                    "not rewritten: the repository renamed the path to {:?}, which holds a \
                     control character, a newline or `<`; mem writes no such name into a \
                     memory (edit it by hand if it is right)",
                    crate::cites::shown(to)
                );
                let (id, path, diff) = (v.id, v.path, String::new());
                fixed.push(Fixed { id, path, renames, diff, refused: Some(refused) });
                continue;
            }
            let path = files.root.join(&v.path);
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let Ok((_, body)) = crate::format::split_front_matter(&text) else { continue };
            let mut new_body = body.to_string();
            for (old, new) in &renames {
                new_body = replace_path(&new_body, old, new);
            }
            if new_body == body {
                continue; // cited by a suffix only: the memory is left to its author
            }
            let new_text = crate::format::with_body(&text, &new_body)
                .and_then(|t| {
                    crate::format::edit_front_matter(&t, &[crate::format::updated_at(now)])
                })
                .map_err(|source| Error::Parse { path: v.path.clone().into(), source })?;
            let diff = similar::TextDiff::from_lines(&text, &new_text)
                .unified_diff()
                .header(&format!("a/{}", v.path), &format!("b/{}", v.path))
                .to_string();
            if !dry_run {
                let rel = v.path.clone();
                files.with_lock(|files| files.rewrite(&rel, |_| Ok(new_text.clone())))?;
            }
            fixed.push(Fixed { id: v.id, path: v.path, renames, diff, refused: None });
        }
        Ok(fixed)
    }
}

/// The verdicts of `records` against `repo`, through its cache (saved when it changed).
fn verdicts_of(files: &Files, repo: &Repo, records: &[&Record]) -> Vec<Verdict> {
    let mut cache = Cache::open(repo, &files.state_dir);
    let out = verdicts_in(files, &mut cache, records);
    cache.save();
    out
}

/// The verdicts of `records` from `cache`, those missing or out of date computed and
/// stored in it.
fn verdicts_in(files: &Files, cache: &mut Cache, records: &[&Record]) -> Vec<Verdict> {
    let keyed: Vec<(String, i64)> = records.iter().map(|r| cite_key(files, r)).collect();
    let mut out: Vec<Option<Verdict>> =
        keyed.iter().map(|(key, _)| cache.get(key).cloned()).collect();
    let missing: Vec<usize> = (0..records.len()).filter(|i| out[*i].is_none()).collect();
    if !missing.is_empty() {
        let texts: Vec<String> = missing.iter().map(|i| cited_text(files, records[*i])).collect();
        let items: Vec<(String, Subject)> = missing
            .iter()
            .zip(&texts)
            .map(|(i, text)| (keyed[*i].0.clone(), Subject { text, since: keyed[*i].1 }))
            .collect();
        for (i, verdict) in missing.iter().zip(cache.verdicts(&items)) {
            out[*i] = Some(verdict);
        }
    }
    let keys: HashSet<&str> = keyed.iter().map(|(k, _)| k.as_str()).collect();
    cache.note_used(&keys);
    out.into_iter().map(Option::unwrap_or_default).collect()
}

/// The cache key of a record (its file as indexed, and when its citations count from) and
/// that time in seconds.
fn cite_key(files: &Files, r: &Record) -> (String, i64) {
    let confirmed = files.last_used.confirmed(crate::format::id_key(&r.id));
    let since = r.created.as_second().max(confirmed.unwrap_or(i64::MIN));
    let key = format!("{}\t{}\t{}\t{since}", r.path, r.stamp.size, r.stamp.mtime_ns);
    (key, since)
}

/// A memory's title and body, as its citations are read from (empty when its file cannot
/// be read: it cites nothing then).
fn cited_text(files: &Files, r: &Record) -> String {
    let path = files.root.join(&r.path);
    let Ok(bytes) = crate::store::read_limited(&path, files.config.limits.max_file_bytes) else {
        return String::new();
    };
    match crate::format::Memory::parse_bytes(&bytes) {
        Ok(memory) => format!("{}\n{}", r.title, memory.body()),
        Err(_) => String::new(),
    }
}

/// `text` with each whole-path occurrence of `old` (not part of a longer path) replaced by
/// `new`.
fn replace_path(text: &str, old: &str, new: &str) -> String {
    let part =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | '+');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + old.len()..].chars().next();
        // A trailing `.` ends a sentence, not a path.
        let after_ok = match after {
            Some('.') => {
                !rest[at + old.len() + 1..].starts_with(|c: char| c.is_ascii_alphanumeric())
            }
            Some(c) => !part(c),
            None => true,
        };
        out.push_str(&rest[..at]);
        if !before.is_some_and(|c| part(c) && c != '.') && after_ok {
            out.push_str(new);
        } else {
            out.push_str(old);
        }
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_whole_paths_are_replaced() {
        let text =
            "See worker/retry.ts. Not old/worker/retry.ts nor worker/retry.tsx; `worker/retry.ts`";
        assert_eq!(
            super::replace_path(text, "worker/retry.ts", "worker/b/retry.ts"),
            "See worker/b/retry.ts. Not old/worker/retry.ts nor worker/retry.tsx; `worker/b/retry.ts`"
        );
    }
}
