//! `mem resolve`: a memory file that a merge left git's conflict markers in, split back into
//! its two versions and merged as the git merge driver merges them (see [`crate::merge`]).

use jiff::Timestamp;
use serde::Serialize;

use super::Files;
use crate::format::split_conflicts;
use crate::store::{self, Overwrite};
use crate::{Error, Result};

/// What [`Files::resolve`] did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Resolved {
    /// The file resolved, relative to the root: it now holds the later edit.
    pub path: String,
    /// The memory's id.
    pub id: String,
    /// The earlier edit's new file, relative to the root, when both sides changed the body
    /// (a memory superseded by `id`).
    pub earlier: Option<String>,
}

impl Files {
    /// Resolves the file `rel` (relative to the root) that holds git's conflict markers: its
    /// two sides merged field by field, the later edit (by `updated`) in the file, the earlier
    /// one, when both changed the body, beside it as a superseded memory. A file without a
    /// whole conflict, or whose sides are not one memory, is left as it is (an error).
    pub fn resolve(&mut self, rel: &str, now: Timestamp) -> Result<Resolved> {
        let max = self.config.limits.max_file_bytes;
        let resolved = self.with_lock(|files| {
            let path = store::inside_root(&files.root, rel)?;
            let bytes = store::read_limited(&path, max).map_err(|e| match e {
                store::ReadError::Io(e) => Error::io(&path, e),
                store::ReadError::Format(source) => Error::Parse { path: rel.into(), source },
            })?;
            let text = String::from_utf8_lossy(&bytes);
            let sides = split_conflicts(&text).ok_or_else(|| {
                Error::Merge(format!(
                    "{rel} holds no whole git conflict (a `<<<<<<<` line, then `=======`, then \
                     `>>>>>>>`): nothing to resolve"
                ))
            })?;
            let merged = crate::merge::merge(
                sides.base.as_deref(),
                &sides.ours,
                &sides.theirs,
                now,
            )
            .map_err(|e| {
                Error::Merge(format!(
                    "{rel}: {e}; the file is left as it is: edit it by hand (keep one side, \
                         or write each into a file of its own)"
                ))
            })?;
            let id = crate::format::Memory::parse(&merged.text)
                .map(|m| m.id().to_string())
                .map_err(|source| Error::Parse { path: rel.into(), source })?;
            let folder = rel.rsplit_once('/').map_or("", |(dir, _)| dir);
            let earlier = match &merged.earlier {
                Some(e) => Some(crate::merge::write_earlier(&files.root, folder, e)?),
                None => None,
            };
            store::write_atomic(&path, merged.text.as_bytes(), Overwrite::Yes)?;
            Ok(Resolved { path: rel.to_string(), id, earlier })
        })?;
        self.refresh_index(now, &crate::progress::Silent)?;
        Ok(resolved)
    }
}
