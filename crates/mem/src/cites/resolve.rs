//! The verdicts of many memories at once: their candidates resolved against the work tree,
//! then git asked once per kind of question for all of them (the index for paths missing from
//! the tree, the history for deletions and renames: `paths.rs`; the blobs at the commit each
//! memory was written at; `git grep` for symbols not found in their file: `symbols.rs`). Every
//! step is bounded by the citations; the one that reads the tree, `git grep`, runs only for
//! symbols that are not in the file cited with them.

use std::collections::{BTreeMap, HashMap};

use super::extract::{self, Candidates, SymbolWord};
use super::git::{Blob, Git};
use super::paths;
use super::resolved::{Pending, Resolved, symbol_cite};
use super::symbols::Version;
use super::tree::{Place, Tree};
use super::{ByKey, Checked, Cite, Repo, Status, Subject, Verdict, commit_at, defs, distinct};

/// See [`Repo::check`].
pub(super) fn check(repo: &Repo, subjects: &[Subject]) -> Vec<Checked> {
    let found: Vec<Candidates> =
        subjects.iter().map(|s| within_top(extract::candidates(s.text), repo.top())).collect();
    let mut out: Vec<Checked> = found
        .iter()
        .map(|c| Checked {
            verdict: Verdict { outside: c.outside.clone(), ..Verdict::default() },
            watched: BTreeMap::new(),
        })
        .collect();
    if found.iter().all(|c| c.paths.is_empty() && c.symbols.is_empty()) {
        return out;
    }
    let tree = Tree::new(repo.top());
    let git = Git::new(repo.top(), repo.partial());
    let head = match git.head() {
        Ok(head) => head,
        Err(problem) => {
            for (checked, c) in out.iter_mut().zip(&found) {
                if !c.paths.is_empty() || !c.symbols.is_empty() {
                    checked.verdict.unchecked = Some(format!("not checked: {problem}"));
                }
            }
            return out;
        }
    };
    let unchecked = if head.is_none() {
        Some("the repository has no commits: only the work tree was checked".to_string())
    } else if repo.shallow() {
        Some("a shallow clone: what was removed before its oldest commit is not known".into())
    } else {
        None
    };
    let mut problems = Vec::new();
    let mut places: HashMap<String, Place> = HashMap::new();
    let mut place =
        |path: &str| places.entry(path.to_string()).or_insert_with(|| tree.place(path)).clone();
    let parents = match head {
        Some(_) => git.first_parents().unwrap_or_else(|p| {
            problems.push(p);
            Vec::new()
        }),
        None => Vec::new(),
    };
    let bases: Vec<Option<&str>> = subjects.iter().map(|s| commit_at(&parents, s.since)).collect();
    let mut found = found;
    let (resolved, rewritten) =
        paths::resolve(&git, head.is_some(), &mut place, &mut found, &bases, &mut problems);
    // Each cited file of the work tree is read once, for its changes and for its symbols.
    let mut contents: HashMap<String, Option<String>> = HashMap::new();
    let changes = changes(&git, &tree, &found, &bases, &resolved, &mut contents, &mut problems);
    let mut read = |path: &str| text_of(&tree, &mut contents, path).clone();
    // Paths first, then the symbols found in the file cited with them; the others wait for
    // `git grep`.
    let mut pending: Vec<Pending> = Vec::new();
    for (i, c) in found.iter().enumerate() {
        let cites = &mut out[i].verdict.cites;
        let mut outside = Vec::new();
        for word in &c.paths {
            match resolved.get(&word.text) {
                Some(Resolved::Outside) => outside.push(word.text.clone()),
                Some(
                    r @ (Resolved::Here(_)
                    | Resolved::Moved(..)
                    | Resolved::Gone(..)
                    | Resolved::Unknown(_)),
                ) => {
                    let cite = path_cite(r, changes.get(&(i, word.text.clone())).copied());
                    if !cites.iter().any(|x: &Cite| x.path == cite.path && x.symbol.is_none()) {
                        cites.push(cite);
                    }
                }
                _ => {}
            }
        }
        out[i].verdict.outside.extend(outside);
        for symbol in &c.symbols {
            if c.paths.iter().any(|p| p.text == symbol.shown && known(&resolved, &p.text)) {
                continue;
            }
            let pair = pair_of(c, symbol, &resolved).cloned();
            let in_file = pair.as_ref().and_then(Resolved::now_at).and_then(&mut read);
            // Held where the file defines it: a name left only in a string or a comment of its
            // file is not the function the memory cites.
            let held =
                in_file.is_some_and(|text| text.lines().any(|l| defs::defines(l, &symbol.name)));
            match (&pair, held) {
                (Some(Resolved::Here(p)), true) => {
                    out[i].verdict.cites.push(symbol_cite(p, &symbol.name, Status::Current));
                }
                (Some(Resolved::Moved(from, to, removal)), true) => {
                    let mut cite = symbol_cite(from, &symbol.name, Status::Moved);
                    cite.to = Some(to.clone());
                    cite.commit = removal.as_ref().map(|r| r.commit.clone());
                    cite.date = removal.as_ref().map(|r| r.date.clone());
                    out[i].verdict.cites.push(cite);
                }
                _ => pending.push((i, symbol.clone(), pair)),
            }
        }
    }
    if head.is_some() {
        let since: Vec<i64> = subjects.iter().map(|s| s.since).collect();
        super::symbols::judge(&git, &bases, &since, pending, &mut out, &mut problems);
    }
    for (i, checked) in out.iter_mut().enumerate() {
        let verdict = std::mem::take(&mut checked.verdict);
        let asked = !found[i].paths.is_empty() || !found[i].symbols.is_empty();
        let note = match problems.first() {
            Some(problem) if asked => Some(format!("partly checked: {problem}")),
            _ => unchecked.clone(),
        };
        checked.verdict = Verdict::of(verdict.cites, verdict.outside, note);
        let mut watch: Vec<String> = found[i].paths.iter().map(|p| p.text.clone()).collect();
        watch.extend(rewritten.iter().filter(|(m, _)| *m == i).map(|(_, word)| word.clone()));
        for cite in &checked.verdict.cites {
            watch.push(cite.path.clone());
            watch.extend(cite.to.clone());
        }
        for path in watch {
            let stamp = place(&path).stamp();
            checked.watched.insert(path, stamp);
        }
    }
    out
}

/// Whether a path word resolved to something the repository knows.
fn known(resolved: &ByKey<Resolved>, word: &str) -> bool {
    resolved.get(word).is_some_and(|r| r.cited().is_some())
}

/// How a cited file stands against its version at the memory's commit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    /// This many lines changed (added and removed); 0 for none.
    Lines(u64),
    /// Changed, lines not counted: the file is over the read bound, its blob id differs.
    Uncounted,
    /// Not known: that version is not in this clone.
    Unavailable,
}

/// How each cited file changed since its memory was written, by (memory, path word). A file
/// over the read bound is never read: it changed when its blob in the index differs from the
/// one at the memory's commit, or the work tree's size differs from the index's.
fn changes(
    git: &Git,
    tree: &Tree,
    found: &[Candidates],
    bases: &[Option<&str>],
    resolved: &ByKey<Resolved>,
    contents: &mut HashMap<String, Option<String>>,
    problems: &mut Vec<String>,
) -> HashMap<(usize, String), Change> {
    let mut asks: Vec<(usize, String, String)> = Vec::new();
    for (i, c) in found.iter().enumerate() {
        let Some(base) = bases[i] else { continue };
        for word in &c.paths {
            if let Some(Resolved::Here(path)) = resolved.get(&word.text) {
                asks.push((i, word.text.clone(), format!("{base}:{path}")));
            }
        }
    }
    let specs = distinct(asks.iter().map(|(_, _, s)| s.clone()));
    let mut then = super::symbols::versions(git, &specs, problems);
    // A file the memory's commit did not have, renamed since from one it had (a path that
    // `mem verify --fix` wrote): compared with that file as the commit had it.
    let absent: Vec<String> = specs.iter().filter(|s| !then.contains_key(*s)).cloned().collect();
    let origins = origins(git, absent, problems);
    let old_specs = distinct(origins.values().cloned());
    let old = super::symbols::versions(git, &old_specs, problems);
    for (spec, origin) in origins {
        if let Some(version) = old.get(&origin) {
            then.insert(spec, version.clone());
        }
    }
    // A file over the read bound, then and now, is compared by its blob (a file over it only
    // then or only now changed: its size did).
    let path_of = |spec: &str| spec.split_once(':').map_or("", |(_, p)| p).to_string();
    let now_large = |path: &str| match tree.place(path) {
        Place::Here { size, .. } => size > super::tree::MAX_FILE_BYTES,
        _ => false,
    };
    let large: Vec<String> = distinct(asks.iter().filter_map(|(_, _, spec)| {
        let path = path_of(spec);
        (matches!(then.get(spec), Some(Version::Large(_))) && now_large(&path)).then_some(path)
    }));
    let index_specs: Vec<String> = large.iter().map(|p| format!(":{p}")).collect();
    let in_index = git.blob_ids(&index_specs).unwrap_or_else(|p| {
        problems.push(p);
        vec![Blob::None; index_specs.len()]
    });
    let in_index: HashMap<&String, &Blob> = large.iter().zip(&in_index).collect();
    let mut lines = HashMap::new();
    for (i, word, spec) in asks {
        let path = path_of(&spec);
        let change = match then.get(&spec) {
            None => continue,
            Some(Version::Missing) => Change::Unavailable,
            Some(Version::Large(old)) => match (in_index.get(&path), tree.place(&path)) {
                (Some(Blob::Here { id, size }), Place::Here { size: now, .. }) => {
                    if id == old && now == *size { Change::Lines(0) } else { Change::Uncounted }
                }
                (None, Place::Here { .. }) => Change::Uncounted,
                _ => continue,
            },
            Some(Version::Text(old)) => match text_of(tree, contents, &path) {
                Some(new) if new == old => Change::Lines(0),
                Some(new) => Change::Lines(super::changed_lines(old, new)),
                None if now_large(&path) => Change::Uncounted,
                None => continue,
            },
        };
        lines.insert((i, word), change);
    }
    lines
}

/// For each `rev:path` spec of `specs` (a file that `rev` did not have), the `rev:old` spec of
/// the file that `path` was renamed from since `rev` had it: each step back is the commit
/// that last added the path and git's rename detection at it, at most
/// [`paths::MAX_RENAMES`] steps, one `git log`, one `git diff-tree` and one `git cat-file` per
/// step for all of them.
fn origins(git: &Git, specs: Vec<String>, problems: &mut Vec<String>) -> HashMap<String, String> {
    let mut found = HashMap::new();
    // (spec asked, its rev, the path followed back)
    let mut open: Vec<(String, String, String)> = specs
        .into_iter()
        .filter_map(|s| {
            let (rev, path) = s.split_once(':')?;
            let (rev, path) = (rev.to_string(), path.to_string());
            Some((s, rev, path))
        })
        .collect();
    for _ in 0..paths::MAX_RENAMES {
        if open.is_empty() {
            break;
        }
        let pathspecs = distinct(open.iter().map(|(.., p)| format!(":(literal){p}")));
        let added = git.additions(&pathspecs).unwrap_or_else(|p| {
            problems.push(p);
            HashMap::new()
        });
        let commits =
            distinct(open.iter().filter_map(|(.., p)| Some(added.get(p)?.commit.clone())));
        let renames = git.renames(&commits).unwrap_or_else(|p| {
            problems.push(p);
            Default::default()
        });
        let back: Vec<(String, String, String)> = open
            .into_iter()
            .filter_map(|(spec, rev, path)| {
                let by = renames.by_commit.get(&added.get(&path)?.commit)?;
                let old = by.iter().find(|(_, new)| **new == path)?.0.clone();
                Some((spec, rev, old))
            })
            .collect();
        let asked: Vec<String> = back.iter().map(|(_, rev, old)| format!("{rev}:{old}")).collect();
        let ids = git.blob_ids(&asked).unwrap_or_else(|p| {
            problems.push(p);
            vec![Blob::None; asked.len()]
        });
        open = Vec::new();
        for ((spec, rev, old), (asked, id)) in back.into_iter().zip(asked.into_iter().zip(ids)) {
            match id {
                Blob::None => open.push((spec, rev, old)),
                _ => drop(found.insert(spec, asked)),
            }
        }
    }
    found
}

/// The text of the work tree's file `path` (see [`Tree::read`]), read once per check.
fn text_of<'a>(
    tree: &Tree,
    contents: &'a mut HashMap<String, Option<String>>,
    path: &str,
) -> &'a Option<String> {
    contents
        .entry(path.to_string())
        .or_insert_with(|| tree.read(path).map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// The citation of a path.
fn path_cite(r: &Resolved, lines: Option<Change>) -> Cite {
    let mut cite = Cite {
        path: r.cited().unwrap_or_default().to_string(),
        symbol: None,
        status: Status::Current,
        to: None,
        lines: None,
        commit: None,
        date: None,
    };
    match r {
        Resolved::Here(_) => match lines {
            Some(Change::Lines(n)) if n > 0 => {
                cite.status = Status::Changed;
                cite.lines = Some(n);
            }
            Some(Change::Uncounted) => cite.status = Status::Changed,
            Some(Change::Unavailable) => cite.status = Status::Unavailable,
            _ => {}
        },
        Resolved::Moved(_, to, by) => {
            cite.status = Status::Moved;
            cite.to = Some(to.clone());
            cite.commit = by.as_ref().map(|b| b.commit.clone());
            cite.date = by.as_ref().map(|b| b.date.clone());
        }
        Resolved::Unknown(_) => cite.status = Status::Unavailable,
        Resolved::Gone(_, by) => {
            cite.status = Status::Gone;
            cite.commit = by.as_ref().map(|b| b.commit.clone());
            cite.date = by.as_ref().map(|b| b.date.clone());
        }
        _ => {}
    }
    cite
}

/// The path cited with a symbol: one in its sentence that the repository knows, else the
/// memory's only such path.
fn pair_of<'a>(
    c: &Candidates,
    symbol: &SymbolWord,
    resolved: &'a ByKey<Resolved>,
) -> Option<&'a Resolved> {
    let known: Vec<(&str, &Resolved)> = c
        .paths
        .iter()
        .filter_map(|p| {
            resolved.get(&p.text).filter(|r| r.cited().is_some()).map(|r| (p.text.as_str(), r))
        })
        .collect();
    let same = c.paths.iter().filter(|p| p.sentence == symbol.sentence);
    for p in same {
        if let Some((_, r)) = known.iter().find(|(w, _)| *w == p.text) {
            return Some(r);
        }
    }
    match known.as_slice() {
        [(_, only)] => Some(only),
        _ => None,
    }
}

/// `c` with its absolute paths into the repository's own folder `top` taken back in: the top
/// itself is the repository, not a path out of it (a session's digest names its folder), and
/// a path under it is checked as the path from the top.
fn within_top(mut c: Candidates, top: &std::path::Path) -> Candidates {
    let outside = std::mem::take(&mut c.outside);
    for word in outside {
        match std::path::Path::new(&word).strip_prefix(top) {
            Ok(rel) if rel.as_os_str().is_empty() => {}
            Ok(rel) => {
                let text = rel.to_string_lossy().into_owned();
                if !c.paths.iter().any(|p| p.text == text) {
                    // Its sentence is unknown: no symbol is paired with it by sentence.
                    c.paths.push(extract::PathWord { text, sentence: usize::MAX });
                }
            }
            Err(_) => c.outside.push(word),
        }
    }
    c
}
