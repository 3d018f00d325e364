//! The verdicts of many memories at once: their candidates resolved against the work tree,
//! then git asked once per kind of question for all of them (the index for paths missing from
//! the tree, the history for deletions and renames, the blobs at the commit each memory was
//! written at, `git grep` for symbols not found in their file). Every step is bounded by the
//! citations; the one that reads the tree, `git grep`, runs only for symbols that are not in
//! the file cited with them.

use std::collections::{BTreeMap, HashMap};

use super::extract::{self, Candidates, SymbolWord};
use super::git::{Git, GrepLine, Removal};
use super::tree::{Place, Tree};
use super::{ByKey, Checked, Cite, Repo, Status, Subject, Verdict, commit_at, defs, distinct};

/// A symbol waiting for `git grep`: its memory, the word, the path cited with it.
type Pending = (usize, SymbolWord, Option<Resolved>);

/// How many renames in a row one path is followed through.
const MAX_RENAMES: usize = 4;

/// How many removal commits of symbols are looked up (one `git log -S` each) per check.
const MAX_PICKAXES: usize = 32;

/// Where a path word of a memory leads.
#[derive(Clone, Debug)]
enum Resolved {
    /// Out of the repository, through a link.
    Outside,
    /// It is in the work tree at this path (the word itself, or the one file it is a suffix
    /// of).
    Here(String),
    /// The path was renamed: from, to, by which commit.
    Moved(String, String, Removal),
    /// The path is gone: which path, and the commit that removed it (`None`: not committed).
    Gone(String, Option<Removal>),
}

impl Resolved {
    /// The path as the memory's citation names it.
    fn cited(&self) -> Option<&str> {
        match self {
            Resolved::Here(p) | Resolved::Moved(p, ..) | Resolved::Gone(p, _) => Some(p),
            _ => None,
        }
    }

    /// The file where the path's content is now.
    fn now_at(&self) -> Option<&str> {
        match self {
            Resolved::Here(p) | Resolved::Moved(_, p, _) => Some(p),
            _ => None,
        }
    }
}

/// See [`Repo::check`].
pub(super) fn check(repo: &Repo, subjects: &[Subject]) -> Vec<Checked> {
    let found: Vec<Candidates> = subjects.iter().map(|s| extract::candidates(s.text)).collect();
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
    let git = Git::new(repo.top());
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
    if head.is_some() && !missing.is_empty() {
        let tracked = git.tracked(&pathspecs(&missing)).unwrap_or_else(|p| {
            problems.push(p);
            Vec::new()
        });
        let mut still = Vec::new();
        for word in missing {
            match unique_match(&word, tracked.iter()) {
                Some(path) => {
                    let r = match place(&path) {
                        Place::Here { .. } => Resolved::Here(path),
                        Place::Outside => Resolved::Outside,
                        Place::Missing => Resolved::Gone(path, None),
                    };
                    resolved.insert(word, r);
                }
                None if tracked.iter().any(|t| suffix_of(&word, t)) => {}
                None => still.push(word),
            }
        }
        let deleted = git.deletions(&pathspecs(&still)).unwrap_or_else(|p| {
            problems.push(p);
            HashMap::new()
        });
        for word in still {
            let Some(path) = unique_match(&word, deleted.keys()) else { continue };
            let removal = deleted[&path].clone();
            let r = follow(&git, &mut place, path, removal, &mut problems);
            resolved.insert(word, r);
        }
    }
    let parents = match head {
        Some(_) => git.first_parents().unwrap_or_else(|p| {
            problems.push(p);
            Vec::new()
        }),
        None => Vec::new(),
    };
    let bases: Vec<Option<&str>> = subjects.iter().map(|s| commit_at(&parents, s.since)).collect();
    let changes = changes(&git, &tree, &found, &bases, &resolved, &mut problems);
    let mut contents: HashMap<String, Option<String>> = HashMap::new();
    let mut read = |path: &str| {
        contents
            .entry(path.to_string())
            .or_insert_with(|| tree.read(path).map(|b| String::from_utf8_lossy(&b).into_owned()))
            .clone()
    };
    // Paths first, then the symbols found in the file cited with them; the others wait for
    // `git grep`.
    let mut pending: Vec<Pending> = Vec::new();
    for (i, c) in found.iter().enumerate() {
        let cites = &mut out[i].verdict.cites;
        let mut outside = Vec::new();
        for word in &c.paths {
            match resolved.get(&word.text) {
                Some(Resolved::Outside) => outside.push(word.text.clone()),
                Some(r @ (Resolved::Here(_) | Resolved::Moved(..) | Resolved::Gone(..))) => {
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
            let held =
                in_file.is_some_and(|text| text.lines().any(|l| defs::mentions(l, &symbol.name)));
            match (&pair, held) {
                (Some(Resolved::Here(p)), true) => {
                    out[i].verdict.cites.push(symbol_cite(p, &symbol.name, Status::Current));
                }
                (Some(Resolved::Moved(from, to, removal)), true) => {
                    let mut cite = symbol_cite(from, &symbol.name, Status::Moved);
                    cite.to = Some(to.clone());
                    cite.commit = Some(removal.commit.clone());
                    cite.date = Some(removal.date.clone());
                    out[i].verdict.cites.push(cite);
                }
                _ => pending.push((i, symbol.clone(), pair)),
            }
        }
    }
    if head.is_some() && !pending.is_empty() {
        let names = distinct(pending.iter().map(|(_, s, _)| s.name.clone()));
        let at_head = grep_defs(&git, "HEAD", &names, &mut problems);
        let mut later = Vec::new();
        for (i, symbol, pair) in pending {
            let name = &symbol.name;
            if at_head.env.contains_key(name) {
                continue;
            }
            let defined: &[String] = at_head.defs.get(name).map_or(&[], Vec::as_slice);
            let cited = pair.as_ref().and_then(Resolved::cited).map(str::to_string);
            let cite = match (cited, defined.first()) {
                (None, Some(at)) => symbol_cite(at, name, Status::Current),
                (Some(p), Some(_)) if defined.iter().all(|d| *d == p) => {
                    // Defined there in HEAD, gone from the work tree: removed, not committed.
                    symbol_cite(&p, name, Status::Gone)
                }
                (Some(p), Some(_)) => {
                    let to = defined.iter().find(|d| **d != p).cloned();
                    Cite { to, ..symbol_cite(&p, name, Status::Moved) }
                }
                (_, None) => {
                    later.push((i, symbol, pair));
                    continue;
                }
            };
            out[i].verdict.cites.push(cite);
        }
        gone_symbols(&git, &bases, later, &mut out, &mut problems);
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

/// The pathspecs that find `words` as they are and as the suffix of a longer path.
fn pathspecs(words: &[String]) -> Vec<String> {
    words.iter().flat_map(|w| [format!(":(literal){w}"), format!(":(glob)**/{w}")]).collect()
}

/// Whether `word` names `path`: the same, or its end after a `/`.
fn suffix_of(word: &str, path: &str) -> bool {
    path == word || path.ends_with(&format!("/{word}"))
}

/// The one path of `paths` that `word` names (itself, else as its only suffix).
fn unique_match<'a>(word: &str, paths: impl Iterator<Item = &'a String>) -> Option<String> {
    let matches: Vec<&String> = paths.filter(|p| suffix_of(word, p)).collect();
    if let Some(exact) = matches.iter().find(|p| p.as_str() == word) {
        return Some(exact.to_string());
    }
    match matches.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    }
}

/// Follows a deleted path through the renames of the commits that removed it, up to
/// [`MAX_RENAMES`].
fn follow(
    git: &Git,
    place: &mut impl FnMut(&str) -> Place,
    path: String,
    removal: Removal,
    problems: &mut Vec<String>,
) -> Resolved {
    let (mut at, mut by) = (path.clone(), removal.clone());
    for _ in 0..MAX_RENAMES {
        let renames = git.renames(&by.commit).unwrap_or_else(|p| {
            problems.push(p);
            HashMap::new()
        });
        let Some(next) = renames.get(&at).cloned() else { break };
        match place(&next) {
            Place::Here { .. } => return Resolved::Moved(path, next, by),
            Place::Outside => return Resolved::Outside,
            Place::Missing => {}
        }
        let spec = [format!(":(literal){next}")];
        let Some(again) = git.deletions(&spec).ok().and_then(|d| d.get(&next).cloned()) else {
            // Renamed, then gone from the work tree without a commit.
            return Resolved::Gone(path, None);
        };
        (at, by) = (next, again);
    }
    let last = if at == path { removal } else { by };
    Resolved::Gone(path, Some(last))
}

/// How many lines changed in each cited file since its memory was written, by (memory, path
/// word): `Some(0)` for none.
fn changes(
    git: &Git,
    tree: &Tree,
    found: &[Candidates],
    bases: &[Option<&str>],
    resolved: &ByKey<Resolved>,
    problems: &mut Vec<String>,
) -> HashMap<(usize, String), u64> {
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
    let ids = git.blob_ids(&specs).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let id_of: HashMap<&String, &String> =
        specs.iter().zip(&ids).filter_map(|(s, id)| Some((s, id.as_ref()?))).collect();
    let blob_ids = distinct(id_of.values().map(|id| (*id).clone()));
    let blobs = git.blobs(&blob_ids, super::tree::MAX_FILE_BYTES).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let blob_of: HashMap<&String, &Vec<u8>> =
        blob_ids.iter().zip(&blobs).filter_map(|(id, b)| Some((id, b.as_ref()?))).collect();
    let mut now: HashMap<String, Option<Vec<u8>>> = HashMap::new();
    let mut lines = HashMap::new();
    for (i, word, spec) in asks {
        let Some(old) = id_of.get(&spec).and_then(|id| blob_of.get(id)) else { continue };
        let path = spec.split_once(':').map_or("", |(_, p)| p).to_string();
        let new = now.entry(path.clone()).or_insert_with(|| tree.read(&path));
        if let Some(new) = new.as_ref() {
            let n = if new == *old { 0 } else { super::changed_lines(old, new) };
            lines.insert((i, word), n);
        }
    }
    lines
}

/// The citation of a path.
fn path_cite(r: &Resolved, lines: Option<u64>) -> Cite {
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
        Resolved::Here(_) if lines.is_some_and(|n| n > 0) => {
            cite.status = Status::Changed;
            cite.lines = lines;
        }
        Resolved::Moved(_, to, by) => {
            cite.status = Status::Moved;
            cite.to = Some(to.clone());
            cite.commit = Some(by.commit.clone());
            cite.date = Some(by.date.clone());
        }
        Resolved::Gone(_, by) => {
            cite.status = Status::Gone;
            cite.commit = by.as_ref().map(|b| b.commit.clone());
            cite.date = by.as_ref().map(|b| b.date.clone());
        }
        _ => {}
    }
    cite
}

/// The citation of a symbol at `path`.
fn symbol_cite(path: &str, name: &str, status: Status) -> Cite {
    Cite {
        path: path.to_string(),
        symbol: Some(name.to_string()),
        status,
        to: None,
        lines: None,
        commit: None,
        date: None,
    }
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

/// What `git grep` found of some names at one commit: where each is defined, and which are
/// environment variables.
#[derive(Default)]
struct Found {
    defs: HashMap<String, Vec<String>>,
    env: HashMap<String, ()>,
}

fn grep_defs(git: &Git, rev: &str, names: &[String], problems: &mut Vec<String>) -> Found {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let lines: Vec<GrepLine> = git.grep(rev, &refs).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let mut found = Found::default();
    for line in &lines {
        for name in names {
            if !defs::mentions(&line.text, name) {
                continue;
            }
            let upper =
                name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if upper && defs::reads_env(&line.text, name) {
                found.env.insert(name.clone(), ());
            }
            if defs::defines(&line.text, name) {
                let at = found.defs.entry(name.clone()).or_default();
                if !at.contains(&line.path) {
                    at.push(line.path.clone());
                }
            }
        }
    }
    found
}

/// Symbols defined nowhere at HEAD: a citation, gone, when the commit their memory was
/// written at defined them (with the commit that removed them, when `git log -S` finds it);
/// not a citation otherwise.
fn gone_symbols(
    git: &Git,
    bases: &[Option<&str>],
    later: Vec<Pending>,
    out: &mut [Checked],
    problems: &mut Vec<String>,
) {
    let mut by_base: BTreeMap<&str, Vec<Pending>> = BTreeMap::new();
    for (i, symbol, pair) in later {
        if let Some(base) = bases[i] {
            by_base.entry(base).or_default().push((i, symbol, pair));
        }
    }
    let mut pickaxes = 0;
    for (base, items) in by_base {
        let names = distinct(items.iter().map(|(_, s, _)| s.name.clone()));
        let then = grep_defs(git, base, &names, problems);
        for (i, symbol, pair) in items {
            let name = &symbol.name;
            let Some(at) = then.defs.get(name).and_then(|d| d.first()) else { continue };
            if then.env.contains_key(name) {
                continue;
            }
            let path = pair.as_ref().and_then(Resolved::cited).unwrap_or(at).to_string();
            let mut cite = symbol_cite(&path, name, Status::Gone);
            if pickaxes < MAX_PICKAXES {
                pickaxes += 1;
                if let Ok(Some(removal)) = git.removal_of(base, name, at) {
                    cite.commit = Some(removal.commit);
                    cite.date = Some(removal.date);
                }
            }
            out[i].verdict.cites.push(cite);
        }
    }
}
