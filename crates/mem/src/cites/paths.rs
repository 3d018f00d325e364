//! Where the path words of many memories lead, git asked once per kind of question for all of
//! them: the work tree; the index and HEAD (a delete or a `git mv` staged and not committed);
//! for a word that is no tracked path, the file it was the tail of when its memory was written
//! (`auth/session.py` for `backend/auth/session.py`), else the one tracked or deleted file it
//! names; the history's deletions, followed through git's renames.

use std::collections::{HashMap, HashSet};

use super::extract::Candidates;
use super::git::{Blob, Git, Removal};
use super::resolved::Resolved;
use super::tree::Place;
use super::{ByKey, distinct};

/// How many renames in a row one path is followed through.
pub(super) const MAX_RENAMES: usize = 4;

/// What the path words of a check lead to, by path word; the words of `found` that named
/// another file when their memory was written are replaced by that file's path, and returned
/// as (memory, word as written), so that the caller still watches them.
pub(super) fn resolve(
    git: &Git,
    committed: bool,
    place: &mut impl FnMut(&str) -> Place,
    found: &mut [Candidates],
    bases: &[Option<&str>],
    problems: &mut Vec<String>,
) -> (ByKey<Resolved>, Vec<(usize, String)>) {
    let words = distinct(found.iter().flat_map(|c| c.paths.iter().map(|p| p.text.clone())));
    let mut resolved: ByKey<Resolved> = HashMap::new();
    let mut missing = Vec::new();
    for word in &words {
        match place(word) {
            Place::Here { .. } => drop(resolved.insert(word.clone(), Resolved::Here(word.clone()))),
            Place::Outside => drop(resolved.insert(word.clone(), Resolved::Outside)),
            Place::Missing => missing.push(word.clone()),
        }
    }
    if !committed || missing.is_empty() {
        return (resolved, Vec::new());
    }
    // In the index but not in the work tree: deleted, not committed. In HEAD but not in the
    // index: a delete or a rename staged (one lookup each).
    let specs: Vec<String> =
        missing.iter().flat_map(|w| [format!(":{w}"), format!("HEAD:{w}")]).collect();
    let ids = git.blob_ids(&specs).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let mut ids = ids.into_iter().chain(std::iter::repeat(Blob::None));
    let mut unknown = Vec::new();
    let mut staged = Vec::new();
    for word in missing {
        match (ids.next(), ids.next()) {
            (Some(Blob::None), Some(Blob::None)) => unknown.push(word),
            (Some(Blob::None), _) => staged.push(word),
            _ => drop(resolved.insert(word.clone(), Resolved::Gone(word, None))),
        }
    }
    if !staged.is_empty() {
        let renames = git.staged_renames().unwrap_or_else(|p| {
            problems.push(p);
            HashMap::new()
        });
        for word in staged {
            let r = match renames.get(&word).map(|to| (to, place(to))) {
                Some((to, Place::Here { .. })) => Resolved::Moved(word.clone(), to.clone(), None),
                Some((_, Place::Outside)) => Resolved::Outside,
                _ => Resolved::Gone(word.clone(), None),
            };
            resolved.insert(word, r);
        }
    }
    if unknown.is_empty() {
        return (resolved, Vec::new());
    }
    // The tracked paths (git matches the index against the pathspecs) and the deleted ones
    // that each word is, or is the tail of.
    let suffixes: Vec<String> = unknown.iter().map(|w| format!(":(glob)**/{w}")).collect();
    let tracked = git.tracked(&suffixes).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let tracked = ByName::of(tracked.iter());
    let deleted = git.deletions(&pathspecs(&unknown)).unwrap_or_else(|p| {
        problems.push(p);
        HashMap::new()
    });
    let names = ByName::of(deleted.keys());
    let mut follow_up: Vec<(String, String, Removal)> = Vec::new();
    let mut rewritten = Vec::new();
    for (i, word, path) in at_their_commit(git, found, bases, &unknown, &tracked, &names, problems)
    {
        let known = resolved.contains_key(&path) || follow_up.iter().any(|(w, ..)| *w == path);
        if !known {
            let r = match place(&path) {
                Place::Here { .. } => Some(Resolved::Here(path.clone())),
                Place::Outside => Some(Resolved::Outside),
                // Tracked, gone from the work tree: deleted, not committed.
                Place::Missing if tracked.named(&path).any(|p| *p == path) => {
                    Some(Resolved::Gone(path.clone(), None))
                }
                Place::Missing => {
                    // Known only at that commit (another branch's): left to the rule below.
                    let Some(by) = deleted.get(&path) else { continue };
                    follow_up.push((path.clone(), path.clone(), by.clone()));
                    None
                }
            };
            if let Some(r) = r {
                resolved.insert(path.clone(), r);
            }
        }
        let Some(k) = found[i].paths.iter().position(|p| p.text == word) else { continue };
        found[i].paths[k].text = path.clone();
        if word != path {
            rewritten.push((i, word));
        }
    }
    // The words that no memory's commit told apart: one tracked file they name, else one
    // deleted path; a word that is the tail of several tracked files counts only as a deleted
    // path of its own (a root `README.rst` deleted, `examples/*/README.rst` still there).
    for word in unknown {
        if resolved.contains_key(&word) || follow_up.iter().any(|(w, ..)| *w == word) {
            continue;
        }
        if let Some(path) = tracked.unique(&word) {
            let r = match place(&path) {
                Place::Here { .. } => Resolved::Here(path),
                Place::Outside => Resolved::Outside,
                Place::Missing => Resolved::Gone(path, None),
            };
            resolved.insert(word, r);
            continue;
        }
        let path = if tracked.any(&word) {
            deleted.contains_key(&word).then(|| word.clone())
        } else {
            names.unique(&word)
        };
        if let Some(path) = path {
            let removal = deleted[&path].clone();
            follow_up.push((word, path, removal));
        }
    }
    resolved.extend(follow(git, place, follow_up, problems));
    (resolved, rewritten)
}

/// For the words of `unknown` that are (or end) several tracked or deleted paths, the one that
/// the commit each memory was written at held: the word itself when that commit had it, else
/// the one such path it had. As (memory, word, path), for each memory whose commit tells them
/// apart; one `git cat-file` for all.
fn at_their_commit(
    git: &Git,
    found: &[Candidates],
    bases: &[Option<&str>],
    unknown: &[String],
    tracked: &ByName,
    deleted: &ByName,
    problems: &mut Vec<String>,
) -> Vec<(usize, String, String)> {
    let unknown: HashSet<&str> = unknown.iter().map(String::as_str).collect();
    // (memory, word, its base, the paths it may name)
    let mut asks: Vec<(usize, &str, &str, Vec<String>)> = Vec::new();
    for (i, c) in found.iter().enumerate() {
        let Some(base) = bases[i] else { continue };
        for word in c.paths.iter().map(|p| p.text.as_str()).filter(|w| unknown.contains(w)) {
            let named = distinct(tracked.named(word).chain(deleted.named(word)).cloned());
            if named.len() > 1 {
                asks.push((i, word, base, named));
            }
        }
    }
    let specs = distinct(
        asks.iter()
            .flat_map(|(_, _, base, named)| named.iter().map(move |p| format!("{base}:{p}"))),
    );
    let ids = git.blob_ids(&specs).unwrap_or_else(|p| {
        problems.push(p);
        vec![Blob::None; specs.len()]
    });
    let then: HashSet<&String> =
        specs.iter().zip(&ids).filter(|(_, id)| **id != Blob::None).map(|(s, _)| s).collect();
    let mut out = Vec::new();
    for (i, word, base, named) in asks {
        let held: Vec<&String> =
            named.iter().filter(|p| then.contains(&format!("{base}:{p}"))).collect();
        let path = match held.as_slice() {
            _ if held.iter().any(|p| *p == word) => word.to_string(),
            [one] => one.to_string(),
            _ => continue,
        };
        out.push((i, word.to_string(), path));
    }
    out
}

/// The pathspecs that find `words` as they are and as the suffix of a longer path.
fn pathspecs(words: &[String]) -> Vec<String> {
    words.iter().flat_map(|w| [format!(":(literal){w}"), format!(":(glob)**/{w}")]).collect()
}

/// Whether `word` names `path`: the same, or its end after a `/`.
fn suffix_of(word: &str, path: &str) -> bool {
    path == word
        || (path.len() > word.len()
            && path.ends_with(word)
            && path.as_bytes()[path.len() - word.len() - 1] == b'/')
}

/// Paths by their file name, to find the ones a word names without a scan of them all.
struct ByName<'a>(HashMap<&'a str, Vec<&'a String>>);

impl<'a> ByName<'a> {
    fn of(paths: impl Iterator<Item = &'a String>) -> ByName<'a> {
        let mut map: HashMap<&str, Vec<&String>> = HashMap::new();
        for path in paths {
            map.entry(path.rsplit('/').next().unwrap_or(path)).or_default().push(path);
        }
        ByName(map)
    }

    /// The paths `word` names: itself, or as their suffix.
    fn named(&self, word: &str) -> impl Iterator<Item = &'a String> {
        let name = word.rsplit('/').next().unwrap_or(word);
        let word = word.to_string();
        self.0.get(name).into_iter().flatten().copied().filter(move |p| suffix_of(&word, p))
    }

    /// Whether `word` names any of them.
    fn any(&self, word: &str) -> bool {
        self.named(word).next().is_some()
    }

    /// The one path `word` names (itself, else as its only suffix).
    fn unique(&self, word: &str) -> Option<String> {
        let matches: Vec<&String> = self.named(word).collect();
        if let Some(exact) = matches.iter().find(|p| p.as_str() == word) {
            return Some(exact.to_string());
        }
        match matches.as_slice() {
            [one] => Some(one.to_string()),
            _ => None,
        }
    }
}

/// Follows deleted paths (each a path word, the path it named, the commit that removed it)
/// through the renames of the commits that removed them, up to [`MAX_RENAMES`] in a row: one
/// `git diff-tree --stdin` per step for all of them. A path renamed (once or more) names the
/// commit that renamed it, the one that removed the path cited; one renamed and then deleted
/// names the commit that deleted it last.
fn follow(
    git: &Git,
    place: &mut impl FnMut(&str) -> Place,
    deleted: Vec<(String, String, Removal)>,
    problems: &mut Vec<String>,
) -> Vec<(String, Resolved)> {
    // (word, path cited, the commit that removed it, path now followed, its removal)
    let mut open: Vec<(String, String, Removal, String, Removal)> =
        deleted.into_iter().map(|(w, p, r)| (w, p.clone(), r.clone(), p, r)).collect();
    let mut done = Vec::new();
    for _ in 0..MAX_RENAMES {
        if open.is_empty() {
            break;
        }
        let commits = distinct(open.iter().map(|(.., by)| by.commit.clone()));
        let renames = git.renames(&commits).unwrap_or_else(|p| {
            problems.push(p);
            Default::default()
        });
        let mut renamed = Vec::new();
        for (word, path, first, at, by) in open {
            match renames.by_commit.get(&by.commit).and_then(|r| r.get(&at)).cloned() {
                None if renames.unsure.contains(&by.commit) => {
                    done.push((word, Resolved::Unknown(path)));
                }
                None => done.push((word, Resolved::Gone(path, Some(by)))),
                Some(next) => match place(&next) {
                    Place::Here { .. } => {
                        done.push((word, Resolved::Moved(path, next, Some(first))));
                    }
                    Place::Outside => done.push((word, Resolved::Outside)),
                    Place::Missing => renamed.push((word, path, first, next)),
                },
            }
        }
        let specs: Vec<String> = renamed.iter().map(|(.., n)| format!(":(literal){n}")).collect();
        let again = git.deletions(&specs).unwrap_or_else(|p| {
            problems.push(p);
            HashMap::new()
        });
        open = Vec::new();
        for (word, path, first, next) in renamed {
            match again.get(&next) {
                Some(by) => open.push((word, path, first, next, by.clone())),
                // Renamed, then gone from the work tree without a commit.
                None => done.push((word, Resolved::Gone(path, None))),
            }
        }
    }
    done.extend(open.into_iter().map(|(w, p, .., by)| (w, Resolved::Gone(p, Some(by)))));
    done
}
