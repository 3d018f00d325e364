//! What resolving a memory's citations gives, shared by the path side (`resolve.rs`) and the
//! symbol side (`symbols.rs`): where a path word leads, a symbol waiting for `git grep`, and a
//! symbol's citation.

use super::extract::SymbolWord;
use super::git::Removal;
use super::{Cite, Status};

/// A symbol waiting for `git grep`: its memory, the word, the path cited with it.
pub(super) type Pending = (usize, SymbolWord, Option<Resolved>);

/// Where a path word of a memory leads.
#[derive(Clone, Debug)]
pub(super) enum Resolved {
    /// Out of the repository, through a link.
    Outside,
    /// It is in the work tree at this path (the word itself, or the one file it is a suffix
    /// of).
    Here(String),
    /// The path was renamed: from, to, by which commit (`None`: a rename staged in the index,
    /// not committed).
    Moved(String, String, Option<Removal>),
    /// The path is gone: which path, and the commit that removed it (`None`: not committed).
    Gone(String, Option<Removal>),
    /// The path was removed by a commit whose renames this partial clone cannot tell.
    Unknown(String),
}

impl Resolved {
    /// The path as the memory's citation names it.
    pub(super) fn cited(&self) -> Option<&str> {
        match self {
            Resolved::Here(p)
            | Resolved::Moved(p, ..)
            | Resolved::Gone(p, _)
            | Resolved::Unknown(p) => Some(p),
            _ => None,
        }
    }

    /// The file where the path's content is now.
    pub(super) fn now_at(&self) -> Option<&str> {
        match self {
            Resolved::Here(p) | Resolved::Moved(_, p, _) => Some(p),
            _ => None,
        }
    }
}

/// The citation of a symbol at `path`.
pub(super) fn symbol_cite(path: &str, name: &str, status: Status) -> Cite {
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
