//! The work tree as citations see it: where a cited path leads, without ever following a
//! symbolic link out of the repository, and a cited file's text, bounded. A clone controls
//! every name here, so nothing outside the top folder is stat-ed or read.

use std::path::{Component, Path, PathBuf};

/// The most a cited file is read (to compare it with its old version, or to look for a
/// symbol): a larger file counts as changed or not by its size alone.
pub(super) const MAX_FILE_BYTES: u64 = 1 << 20;

/// How many symbolic links one path may pass through.
const MAX_LINKS: usize = 16;

/// Where a cited path leads in the work tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Place {
    /// Something is there: a file (with its size and modification time in ns) or a folder.
    Here { file: bool, size: u64, mtime_ns: i64 },
    /// Nothing is there.
    Missing,
    /// It leads out of the repository through a symbolic link.
    Outside,
}

impl Place {
    /// The stamp a cache compares: what is there, its size and time.
    pub(super) fn stamp(&self) -> (u8, u64, i64) {
        match *self {
            Place::Here { file, size, mtime_ns } => (1 + u8::from(file), size, mtime_ns),
            Place::Missing => (0, 0, 0),
            Place::Outside => (3, 0, 0),
        }
    }
}

/// The work tree of one repository: its top folder, as the file system resolves it, and the
/// folders under it already found to be plain folders (no link), so that paths in one folder
/// stat it once.
pub(super) struct Tree {
    top: PathBuf,
    folders: std::cell::RefCell<std::collections::HashSet<PathBuf>>,
}

impl Tree {
    /// The work tree whose top folder is `top` (resolved once, so that a link above it does
    /// not count as leading out).
    pub(super) fn new(top: &Path) -> Tree {
        let top = std::fs::canonicalize(top).unwrap_or_else(|_| top.to_path_buf());
        Tree { top, folders: Default::default() }
    }

    /// Where `rel` (a path relative to the top, `/`-separated) leads: each symbolic link on
    /// the way is read and must stay inside the top, else the path is [`Place::Outside`].
    pub(super) fn place(&self, rel: &str) -> Place {
        let mut at = self.top.clone();
        let mut pending: Vec<PathBuf> =
            rel.split('/').rev().filter(|p| !p.is_empty()).map(PathBuf::from).collect();
        let mut links = 0;
        while let Some(part) = pending.pop() {
            match part.to_str() {
                Some(".") => continue,
                Some("..") => {
                    if at == self.top {
                        return Place::Outside;
                    }
                    at.pop();
                    continue;
                }
                _ => {}
            }
            let next = at.join(&part);
            if !pending.is_empty() && self.folders.borrow().contains(&next) {
                at = next;
                continue;
            }
            let meta = match std::fs::symlink_metadata(&next) {
                Ok(meta) => meta,
                Err(_) => return Place::Missing,
            };
            if !meta.file_type().is_symlink() {
                if meta.is_dir() {
                    self.folders.borrow_mut().insert(next.clone());
                }
                at = next;
                continue;
            }
            links += 1;
            let Ok(target) = std::fs::read_link(&next) else { return Place::Missing };
            if links > MAX_LINKS || target.is_absolute() {
                // An absolute target inside the top is rare; refusing it keeps the rule simple.
                return Place::Outside;
            }
            for component in target.components().rev() {
                match component {
                    Component::Normal(name) => pending.push(PathBuf::from(name)),
                    Component::ParentDir => pending.push(PathBuf::from("..")),
                    Component::CurDir => {}
                    _ => return Place::Outside,
                }
            }
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) => {
                use std::os::unix::fs::MetadataExt as _;
                Place::Here {
                    file: meta.is_file(),
                    size: meta.len(),
                    mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
                }
            }
            Err(_) => Place::Missing,
        }
    }

    /// The text of the regular file `rel` leads to inside the top, when it is at most
    /// [`MAX_FILE_BYTES`]; `None` otherwise.
    pub(super) fn read(&self, rel: &str) -> Option<Vec<u8>> {
        if !matches!(self.place(rel), Place::Here { file: true, .. }) {
            return None;
        }
        let path = self.top.join(rel);
        crate::untrusted::read(&path, MAX_FILE_BYTES, crate::untrusted::Links::Follow).ok()?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_out_of_the_top_are_outside_and_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().join("repo");
        std::fs::create_dir_all(top.join("src")).unwrap();
        std::fs::write(top.join("src/a.rs"), "fn a() {}").unwrap();
        std::os::unix::fs::symlink("../../secret", top.join("src/out")).unwrap();
        std::os::unix::fs::symlink("/etc", top.join("etc")).unwrap();
        std::os::unix::fs::symlink("src/a.rs", top.join("alias.rs")).unwrap();
        let tree = Tree::new(&top);
        assert!(matches!(tree.place("src/a.rs"), Place::Here { file: true, size: 9, .. }));
        assert!(matches!(tree.place("alias.rs"), Place::Here { file: true, .. }));
        assert_eq!(tree.place("src/out"), Place::Outside);
        assert_eq!(tree.place("etc/passwd"), Place::Outside);
        assert_eq!(tree.place("src/../../x"), Place::Outside);
        assert_eq!(tree.place("src/b.rs"), Place::Missing);
        assert_eq!(tree.read("src/out"), None);
        assert_eq!(tree.read("alias.rs").unwrap(), b"fn a() {}");
    }
}
