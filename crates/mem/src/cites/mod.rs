//! Memories checked against the code they cite. A project root (`.memory/` at the top of a git
//! work tree) holds memories about that repository's code; the paths and symbols a memory
//! cites are found in its text (`extract.rs`), kept only when the repository knows them, and
//! each gets a verdict against the work tree and git's history ([`Status`]): current, changed
//! since the memory was written, moved (renamed, or a symbol defined in another file now), or
//! gone (with the commit that removed it when git knows it). A memory's verdict is the worst
//! of its citations; a memory that cites nothing has none.
//!
//! Git is asked safely (`git.rs`): a cloned repository's hooks, fsmonitor, diff drivers and
//! filters never run. Whatever cannot be checked (no git, no commits, a shallow history) is
//! said in [`Verdict::unchecked`], never an error. Verdicts are cached in `.mem/cites.json`
//! (`cache.rs`), keyed by the repository's HEAD and index and each cited path's stat.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod cache;
mod defs;
pub mod extract;
mod git;
mod paths;
mod resolve;
mod resolved;
mod symbols;
mod tree;

#[cfg(test)]
mod tests;

pub use self::cache::{CACHE_FILE, Cache};

/// The name of a project root's folder at the top of its work tree.
pub const PROJECT_FOLDER: &str = ".memory";

/// How a citation, or a memory, stands against the code now; ordered from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// The path exists (and a symbol cited with it is still in it), unchanged since.
    Current,
    /// Not known: its version at the memory's commit is not in this clone (a partial clone,
    /// whose missing objects mem never fetches).
    Unavailable,
    /// It exists, but its file changed since the memory was written.
    Changed,
    /// The path was renamed, or the symbol is now defined in another file (`to`).
    Moved,
    /// The path or symbol no longer exists anywhere.
    Gone,
}

impl Status {
    /// Its name in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Status::Current => "current",
            Status::Unavailable => "unavailable",
            Status::Changed => "changed",
            Status::Moved => "moved",
            Status::Gone => "gone",
        }
    }

    /// Whether it is worth a flag: the code it cites is gone or moved.
    pub fn is_flagged(self) -> bool {
        matches!(self, Status::Moved | Status::Gone)
    }
}

/// One citation of a memory and its verdict.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cite {
    /// The path cited (relative to the work tree's top), or where the symbol is (or was)
    /// defined.
    pub path: String,
    /// The symbol cited, when it is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Its verdict.
    pub status: Status,
    /// Where it is now, when moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// How many lines changed (added and removed), when changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
    /// The commit that removed or renamed it, when git knows it (`None` for a change not
    /// committed yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// That commit's date, `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
}

/// A path or symbol named by git (so by the repository) or by a memory, as mem shows it in a
/// line of text, a note or a context block: data on one line. Control characters are escaped
/// (`\n`, `\t`, `\u{1b}`) and `<` is shown as `‹`, so that no name starts a line, ends a
/// fence or poses as a tag.
pub fn shown(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push('‹'),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Whether `name` is shown as it is (see [`shown`]): no control character, no `<`.
pub fn is_plain(name: &str) -> bool {
    shown(name) == name
}

impl Cite {
    /// What it cites, as people read it: `path`, or `symbol()`; see [`shown`].
    pub fn label(&self) -> String {
        match &self.symbol {
            Some(symbol) => format!("{}()", shown(symbol)),
            None => shown(&self.path),
        }
    }

    /// Its line in a listing (`mem verify`, `mem recall --explain`): what it cites, where
    /// (for a symbol), and what happened to it, every name shown as data.
    pub fn line(&self) -> String {
        let at = match &self.symbol {
            Some(_) => format!(" in {}", shown(&self.path)),
            None => String::new(),
        };
        format!("{}{at} {}", self.label(), self.what_happened())
    }

    /// The few words that say what happened to it: `was deleted in 3f2a91c on 2026-10-02`,
    /// `moved to src/new.rs`, `changed (12 lines)`, `is current`.
    pub fn what_happened(&self) -> String {
        match self.status {
            Status::Current => "is current".into(),
            Status::Unavailable => "could not be compared: not in this clone".into(),
            Status::Changed => match self.lines {
                Some(n) => format!("changed ({n} lines)"),
                None => "changed".into(),
            },
            Status::Moved => format!("moved to {}", shown(self.to.as_deref().unwrap_or("?"))),
            Status::Gone => {
                let what = if self.symbol.is_some() { "was removed" } else { "was deleted" };
                match (&self.commit, &self.date) {
                    (Some(c), Some(d)) => format!("{what} in {} on {d}", short(c)),
                    (Some(c), None) => format!("{what} in {}", short(c)),
                    _ if self.symbol.is_none() => format!("{what} (not committed)"),
                    _ => what.to_string(),
                }
            }
        }
    }
}

/// The first 7 characters of a commit id.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(7)]
}

/// A memory's verdict: the worst of its citations, each citation, and what was not checked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The worst status of its citations; `None` when it cites nothing.
    pub code_status: Option<Status>,
    /// Its citations, in order of appearance.
    pub cites: Vec<Cite>,
    /// Paths it names that lead outside the repository: never read, only reported.
    pub outside: Vec<String>,
    /// What could not be checked, and why (no git, no commits, a shallow history).
    pub unchecked: Option<String>,
}

impl Verdict {
    /// The verdict of `cites`, worst first.
    fn of(cites: Vec<Cite>, outside: Vec<String>, unchecked: Option<String>) -> Verdict {
        let code_status = cites.iter().map(|c| c.status).max();
        Verdict { code_status, cites, outside, unchecked }
    }

    /// Whether every citation is gone (the ranking's `code` factor).
    pub fn all_gone(&self) -> bool {
        !self.cites.is_empty() && self.cites.iter().all(|c| c.status == Status::Gone)
    }

    /// The note that goes with the memory into an agent's context when it may be outdated:
    /// `may be outdated: backend/app/auth.py was deleted in 3f2a91c on 2026-10-02`; `None`
    /// when nothing it cites is gone or moved.
    pub fn note(&self) -> Option<String> {
        note(&self.cites)
    }
}

/// The "may be outdated" note of a memory whose citations are `cites` (see [`Verdict::note`]).
pub fn note(cites: &[Cite]) -> Option<String> {
    let flagged: Vec<String> = cites
        .iter()
        .filter(|c| c.status.is_flagged())
        .take(3)
        .map(|c| format!("{} {}", c.label(), c.what_happened()))
        .collect();
    (!flagged.is_empty()).then(|| format!("may be outdated: {}", flagged.join("; ")))
}

/// What a memory is checked from: its text and when its citations were last known true (its
/// creation, or its last confirmation), in seconds since the epoch.
#[derive(Clone, Copy, Debug)]
pub struct Subject<'a> {
    /// Its title and body.
    pub text: &'a str,
    /// When what it says was last known to hold.
    pub since: i64,
}

/// A git work tree whose project root's memories are checked against it.
#[derive(Clone, Debug)]
pub struct Repo {
    top: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
}

impl Repo {
    /// The repository of a project root: `root` is a folder named [`PROJECT_FOLDER`] at the
    /// top of a git work tree (a `.git` folder, or a `.git` file as a linked worktree or a
    /// submodule has, beside it). Any other root has no repository.
    pub fn of_root(root: &Path) -> Option<Repo> {
        if root.file_name()? != PROJECT_FOLDER {
            return None;
        }
        let top = root.parent()?;
        let dot_git = top.join(".git");
        let meta = std::fs::symlink_metadata(&dot_git).ok()?;
        let git_dir = if meta.is_dir() {
            dot_git
        } else if meta.is_file() {
            let text =
                crate::untrusted::read_text(&dot_git, 4096, crate::untrusted::Links::InFolder)
                    .ok()??;
            let named = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
            if named.is_absolute() { named } else { top.join(named) }
        } else {
            return None;
        };
        let common_dir = match small_text(&git_dir.join("commondir")) {
            Some(common) => git_dir.join(common.trim()),
            None => git_dir.clone(),
        };
        Some(Repo { top: top.to_path_buf(), git_dir, common_dir })
    }

    /// The work tree's top folder.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// What the verdicts depend on besides the cited files, read without running git: HEAD
    /// (and the branch it names), the index, the packed refs and the shallow marker, by
    /// content or stat. Two equal keys mean the same commits and the same index.
    pub fn key(&self) -> String {
        use std::fmt::Write as _;
        use std::os::unix::fs::MetadataExt as _;
        let mut key = String::new();
        let head = small_text(&self.git_dir.join("HEAD")).unwrap_or_default();
        let _ = write!(key, "{}|", head.trim());
        let branch = head.trim().strip_prefix("ref:").map(str::trim);
        let mut files = vec![self.git_dir.join("index"), self.common_dir.join("packed-refs")];
        files.push(self.common_dir.join("shallow"));
        if let Some(branch) = branch.filter(|b| !b.contains("..")) {
            files.push(self.common_dir.join(branch));
        }
        for file in files {
            match std::fs::metadata(&file) {
                Ok(m) => {
                    let _ =
                        write!(key, "{}.{}.{}.{}|", m.len(), m.mtime(), m.mtime_nsec(), m.ino());
                }
                Err(_) => key.push_str("-|"),
            }
        }
        key
    }

    /// Whether the history is cut short (a shallow clone).
    fn shallow(&self) -> bool {
        self.common_dir.join("shallow").exists()
    }

    /// Whether this is a partial clone, whose missing objects git would fetch from a promisor
    /// remote: its configuration names one (`extensions.partialClone`, `remote.*.promisor`).
    fn partial(&self) -> bool {
        crate::untrusted::read_text(
            &self.common_dir.join("config"),
            1 << 20,
            crate::untrusted::Links::Follow,
        )
        .ok()
        .flatten()
        .is_some_and(|c| {
            let c = c.to_ascii_lowercase();
            c.contains("partialclone") || c.contains("promisor")
        })
    }

    /// The verdicts of `subjects`, computed now (no cache): a handful of git processes for all
    /// of them together, each bounded by the citations.
    pub fn check(&self, subjects: &[Subject]) -> Vec<Checked> {
        resolve::check(self, subjects)
    }
}

/// A verdict with what it depends on in the work tree: each path looked at, with its stamp.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Checked {
    /// The verdict.
    pub verdict: Verdict,
    /// The paths (relative to the top) whose stamps it depends on.
    pub watched: BTreeMap<String, (u8, u64, i64)>,
}

/// The text of a small file of the git folder (HEAD, commondir): a regular file of at most
/// 4 KiB, else `None` (a FIFO planted there must not hang a hook).
fn small_text(path: &Path) -> Option<String> {
    crate::untrusted::read_text(path, 4096, crate::untrusted::Links::Follow).ok().flatten()
}

/// Distinct items of `items`, in first-seen order.
fn distinct<T: Clone + Eq + std::hash::Hash>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut seen = HashSet::new();
    items.into_iter().filter(|i| seen.insert(i.clone())).collect()
}

/// The first-parent commit current at `since`: the newest one committed at or before it.
fn commit_at(parents: &[(String, i64)], since: i64) -> Option<&str> {
    parents.iter().find(|(_, time)| *time <= since).map(|(c, _)| c.as_str())
}

/// Counts lines added and removed between two versions of a file.
fn changed_lines(old: &str, new: &str) -> u64 {
    let diff = similar::TextDiff::from_lines(old, new);
    diff.iter_all_changes().filter(|c| c.tag() != similar::ChangeTag::Equal).count() as u64
}

/// What each path word of a check resolved to, by the word.
type ByKey<V> = HashMap<String, V>;
