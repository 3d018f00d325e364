//! Symbols that are not where their memory says: where `git grep` finds them defined at a
//! commit, and, for those defined nowhere at HEAD, whether the commit their memory was written
//! at defined them (then they are gone) and which later commit removed them.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::git::{Blob, Git, GrepLine, Removal};
use super::resolved::{Pending, Resolved, symbol_cite};
use super::{Checked, Cite, Status, defs, distinct};

/// How many commits' trees are searched (`git grep`) per check for symbols cited without a
/// file and defined nowhere at HEAD.
const MAX_TREE_GREPS: usize = 4;

/// How many versions of a file are looked at to find the commit that removed a symbol.
const MAX_VERSIONS: usize = 64;

/// How many of the other files that define a symbol at HEAD are looked at, in the order of
/// [`targets`], to find where it moved.
const MAX_TARGETS: usize = 16;

/// The symbols not found where their memory cites them (`pending`), judged by where `git grep`
/// finds them defined at HEAD. Cited without a file: current where defined. Cited with a file
/// that no longer defines it: moved to another file that defines it now and did not when the
/// memory was written (or last confirmed), the first in the order of [`targets`]; gone from its
/// file when every other file that defines it did then already, or when none does (see
/// [`gone_symbols`]). A symbol that its cited file did not define then was elsewhere already:
/// nothing moved since, no citation. The files' versions at the memories' commits are read at
/// once.
pub(super) fn judge(
    git: &Git,
    bases: &[Option<&str>],
    since: &[i64],
    pending: Vec<Pending>,
    out: &mut [Checked],
    problems: &mut Vec<String>,
) {
    if pending.is_empty() {
        return;
    }
    let names = distinct(pending.iter().map(|(_, s, _)| s.name.clone()));
    let at_head = grep_defs(git, "HEAD", &names, problems);
    let mut specs = Vec::new();
    for (i, symbol, pair) in &pending {
        let (Some(cited), Some(base)) = (pair.as_ref().and_then(Resolved::cited), bases[*i]) else {
            continue;
        };
        let Some(defined) = at_head.defs.get(&symbol.name) else { continue };
        let others = targets(cited, defined);
        if !others.is_empty() {
            specs.push(format!("{base}:{cited}"));
            specs.extend(others.iter().map(|o| format!("{base}:{o}")));
        }
    }
    let then = versions(git, &distinct(specs), problems);
    // Whether `path` defined `name` at memory `i`'s commit; `unknown` when that cannot be read
    // (written before the first commit, a file too large, or not in this partial clone).
    let defined_then = |i: usize, path: &str, name: &str, unknown: bool| match bases[i] {
        None => unknown,
        Some(base) => match then.get(&format!("{base}:{path}")) {
            Some(Version::Text(text)) => text.lines().any(|l| defs::defines(l, name)),
            Some(_) => unknown,
            None => false,
        },
    };
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
            // It was elsewhere already then: nothing moved since (a confirmation counts from
            // when it was made).
            (Some(p), Some(_)) if !defined_then(i, &p, name, true) => continue,
            (Some(p), Some(_)) => {
                let others = targets(&p, defined);
                match others.into_iter().find(|d| !defined_then(i, d, name, false)) {
                    Some(to) => {
                        Cite { to: Some(to.clone()), ..symbol_cite(&p, name, Status::Moved) }
                    }
                    // Only namesakes that were there already: removed from its file.
                    None => {
                        later.push((i, symbol, pair));
                        continue;
                    }
                }
            }
            (_, None) => {
                later.push((i, symbol, pair));
                continue;
            }
        };
        out[i].verdict.cites.push(cite);
    }
    gone_symbols(git, bases, since, later, out, problems);
}

/// The files of `defined` other than `cited`, in the order a symbol's move is looked for: a
/// file of the cited one's kind (a test, or not) first, then the one sharing the most leading
/// folders with it, then by path; at most [`MAX_TARGETS`].
fn targets<'a>(cited: &str, defined: &'a [String]) -> Vec<&'a String> {
    let kind = is_test(cited);
    let mut others: Vec<&String> = defined.iter().filter(|d| *d != cited).collect();
    others.sort_by_key(|d| (is_test(d) != kind, std::cmp::Reverse(shared_folders(cited, d)), *d));
    others.truncate(MAX_TARGETS);
    others
}

/// How many leading folders `a` and `b` have in common.
fn shared_folders(a: &str, b: &str) -> usize {
    let folders = |path: &str| path.rsplit_once('/').map_or(String::new(), |(f, _)| f.to_string());
    let (a, b) = (folders(a), folders(b));
    a.split('/').zip(b.split('/')).take_while(|(x, y)| !x.is_empty() && x == y).count()
}

/// Whether `path` is a test's file: under a `test`, `tests`, `spec`, `__tests__`, `testing`,
/// `testdata` or `fixtures` folder, or named `test_*`, `*_test.*`, `*-test.*`, `*_spec.*`,
/// `*.test.*`, `*.spec.*` or `conftest.py`.
fn is_test(path: &str) -> bool {
    const FOLDERS: &[&str] =
        &["test", "tests", "spec", "specs", "__tests__", "testing", "testdata", "fixtures"];
    let path = path.to_ascii_lowercase();
    let (folders, file) = path.rsplit_once('/').unwrap_or(("", &path));
    let stem = file.split('.').next().unwrap_or(file);
    folders.split('/').any(|f| FOLDERS.contains(&f))
        || file.starts_with("test_")
        || file == "conftest.py"
        || ["_test", "-test", "_spec"].iter().any(|end| stem.ends_with(end))
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// What `git grep` found of some names at one commit: where each is defined, and which are
/// environment variables.
#[derive(Default)]
pub(super) struct Found {
    /// Where each name is defined.
    pub(super) defs: HashMap<String, Vec<String>>,
    /// The names read from the environment.
    pub(super) env: HashMap<String, ()>,
}

/// Where `git grep` at `rev` finds each of `names` defined, and which it finds read from the
/// environment.
pub(super) fn grep_defs(
    git: &Git,
    rev: &str,
    names: &[String],
    problems: &mut Vec<String>,
) -> Found {
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let lines: Vec<GrepLine> = git.grep(rev, &refs).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
    let mut found = Found::default();
    for line in &lines {
        let words = line.text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
        for name in distinct(words.filter(|w| wanted.contains(w))) {
            let upper =
                name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            if upper && defs::reads_env(&line.text, name) {
                found.env.insert(name.to_string(), ());
            }
            if defs::defines(&line.text, name) {
                let at = found.defs.entry(name.to_string()).or_default();
                if !at.contains(&line.path) {
                    at.push(line.path.clone());
                }
            }
        }
    }
    found
}

/// Symbols defined nowhere at HEAD: a citation, gone, when the commit their memory was
/// written at defined them: in the file cited with them (its version at that commit, from
/// `git cat-file`), else anywhere (a `git grep` at that commit, for at most
/// [`MAX_TREE_GREPS`] commits per check). Not a citation otherwise. The commit that removed
/// each is the first one since that changed its file and no longer defines it.
pub(super) fn gone_symbols(
    git: &Git,
    bases: &[Option<&str>],
    since: &[i64],
    later: Vec<Pending>,
    out: &mut [Checked],
    problems: &mut Vec<String>,
) {
    // (memory, name, the file that defined it then)
    let mut gone: Vec<(usize, String, String)> = Vec::new();
    let (paired, unpaired): (Vec<Pending>, Vec<Pending>) = later
        .into_iter()
        .partition(|(_, _, pair)| pair.as_ref().and_then(Resolved::cited).is_some());
    let asks: Vec<(usize, String, String, String)> = paired
        .into_iter()
        .filter_map(|(i, symbol, pair)| {
            let path = pair.as_ref().and_then(Resolved::cited)?.to_string();
            Some((i, symbol.name, path.clone(), format!("{}:{path}", bases[i]?)))
        })
        .collect();
    let specs = distinct(asks.iter().map(|(.., spec)| spec.clone()));
    let then = versions(git, &specs, problems);
    for (i, name, path, spec) in asks {
        match then.get(&spec) {
            Some(Version::Text(text))
                if text.lines().any(|l| defs::defines(l, &name)) && !env_var(text, &name) =>
            {
                gone.push((i, name, path));
            }
            // Whether it was defined then is not in this clone.
            Some(Version::Missing) => {
                out[i].verdict.cites.push(symbol_cite(&path, &name, Status::Unavailable));
            }
            _ => {}
        }
    }
    let mut by_base: BTreeMap<&str, Vec<Pending>> = BTreeMap::new();
    for item in unpaired {
        if let Some(base) = bases[item.0] {
            by_base.entry(base).or_default().push(item);
        }
    }
    let mut groups: Vec<(&str, Vec<Pending>)> = by_base.into_iter().collect();
    groups.sort_by_key(|(_, items)| std::cmp::Reverse(items.len()));
    for (base, items) in groups.into_iter().take(MAX_TREE_GREPS) {
        let names = distinct(items.iter().map(|(_, s, _)| s.name.clone()));
        let then = grep_defs(git, base, &names, problems);
        for (i, symbol, _) in items {
            let Some(at) = then.defs.get(&symbol.name).and_then(|d| d.first()) else { continue };
            if !then.env.contains_key(&symbol.name) {
                gone.push((i, symbol.name, at.clone()));
            }
        }
    }
    let removals = symbol_removals(git, &gone, since, problems);
    for ((i, name, path), removal) in gone.into_iter().zip(removals) {
        let mut cite = symbol_cite(&path, &name, Status::Gone);
        if let Some(removal) = removal {
            cite.commit = Some(removal.commit);
            cite.date = Some(removal.date);
        }
        out[i].verdict.cites.push(cite);
    }
}

/// Whether `text` reads the UPPER_CASE `name` from the environment.
fn env_var(text: &str, name: &str) -> bool {
    is_upper(name) && text.lines().any(|l| defs::mentions(l, name) && defs::reads_env(l, name))
}

fn is_upper(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A file's version at a commit (or in the index), as a check reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Version {
    /// Its text (at most the tree's read bound).
    Text(String),
    /// Larger than the read bound: never read; its blob's id.
    Large(String),
    /// Its blob is not in this partial clone (never fetched).
    Missing,
}

/// The version of the file each `rev:path` spec names (no entry: no file there).
pub(super) fn versions(
    git: &Git,
    specs: &[String],
    problems: &mut Vec<String>,
) -> HashMap<String, Version> {
    let ids = git.blob_ids(specs).unwrap_or_else(|p| {
        problems.push(p);
        vec![Blob::None; specs.len()]
    });
    let blobs = git.blobs(&ids, super::tree::MAX_FILE_BYTES).unwrap_or_else(|p| {
        problems.push(p);
        vec![None; ids.len()]
    });
    let mut found = HashMap::new();
    for ((spec, id), blob) in specs.iter().zip(&ids).zip(blobs) {
        let version = match (id, blob) {
            (Blob::None, _) => continue,
            (Blob::Missing(_), _) => Version::Missing,
            (Blob::Here { .. }, Some(bytes)) => {
                Version::Text(String::from_utf8_lossy(&bytes).into_owned())
            }
            (Blob::Here { id, size }, None) if *size > super::tree::MAX_FILE_BYTES => {
                Version::Large(id.clone())
            }
            // Not read (git failed, said above): not known.
            (Blob::Here { .. }, None) => continue,
        };
        found.insert(spec.clone(), version);
    }
    found
}

/// For each gone symbol (memory, name, file that defined it), the first commit after its
/// memory was written that changed that file and left the name undefined (or the file gone):
/// one path-limited `git log` and one `git cat-file` for all of them, at most
/// [`MAX_VERSIONS`] versions looked at per symbol.
fn symbol_removals(
    git: &Git,
    gone: &[(usize, String, String)],
    since: &[i64],
    problems: &mut Vec<String>,
) -> Vec<Option<Removal>> {
    let paths = distinct(gone.iter().map(|(.., p)| p.clone()));
    let touches = git.touching(&paths).unwrap_or_else(|p| {
        problems.push(p);
        Vec::new()
    });
    // Per symbol, the commits to look at, oldest first.
    let candidates: Vec<Vec<&super::git::Touch>> = gone
        .iter()
        .map(|(i, _, path)| {
            let mut list: Vec<&super::git::Touch> =
                touches.iter().filter(|t| t.time > since[*i] && t.paths.contains(path)).collect();
            list.reverse();
            list.truncate(MAX_VERSIONS);
            list
        })
        .collect();
    let specs =
        distinct(gone.iter().zip(&candidates).flat_map(|((.., path), list)| {
            list.iter().map(move |t| format!("{}:{path}", t.commit))
        }));
    let found = versions(git, &specs, problems);
    gone.iter()
        .zip(candidates)
        .map(|((_, name, path), list)| {
            for t in list {
                match found.get(&format!("{}:{path}", t.commit)) {
                    Some(Version::Text(text)) if text.lines().any(|l| defs::defines(l, name)) => {
                        continue;
                    }
                    // A version this clone does not have, or too large to read: which commit
                    // removed it is not known.
                    Some(Version::Missing | Version::Large(_)) => return None,
                    // Not defined there, or the file gone: this commit removed it.
                    _ => return Some(Removal { commit: t.commit.clone(), date: t.date.clone() }),
                }
            }
            None
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_is_looked_for_in_files_of_the_cited_kind_then_nearest_then_by_path() {
        let defined: Vec<String> =
            ["a/tests/helpers.py", "z/tokens.py", "src/auth/new.py", "src/old.py", "src/x.py"]
                .map(String::from)
                .to_vec();
        let order: Vec<&str> =
            targets("src/old.py", &defined).into_iter().map(String::as_str).collect();
        assert_eq!(order, ["src/auth/new.py", "src/x.py", "z/tokens.py", "a/tests/helpers.py"]);
        let order: Vec<&str> =
            targets("tests/test_old.py", &defined).into_iter().map(String::as_str).collect();
        assert_eq!(order[0], "a/tests/helpers.py");
        assert!(is_test("web/src/login.spec.ts") && is_test("pkg/conftest.py"));
        assert!(!is_test("src/latest.py") && !is_test("src/contest/a.py"));
    }
}
