//! What a checkpoint holds: the working tree as git sees it (tracked files and untracked ones
//! that are not ignored), less what mem leaves out and records as skipped: memory roots
//! (memory is a layer of its own, not workspace state) and files over the size cap.

use std::path::Path;

use super::Workspace;
use super::git::{TempIndex, nul_joined, nul_separated, path_under, shown};
use crate::Result;

/// The memory roots in a list of a repository's files: `.memory/` and every other folder
/// holding a `mem.toml` (its whole content), and, when the repository's top is a root itself,
/// the files it reads as memories (Markdown outside hidden folders), `archive/` and `usage/`.
/// Checkpoints leave them out and rewind never changes them.
#[derive(Clone, Debug, Default)]
pub(super) struct MemoryRoots {
    /// The roots' folders, each ending in `/` (raw bytes: names need not be UTF-8).
    folders: Vec<Vec<u8>>,
    /// The top of the repository is a root.
    top: bool,
}

impl MemoryRoots {
    /// The roots that the files `files` (relative to the top) show.
    pub(super) fn of<'a>(files: impl Iterator<Item = &'a [u8]>) -> MemoryRoots {
        let project = format!("{}/", crate::store::PROJECT_DIR).into_bytes();
        let mut roots = MemoryRoots::default();
        for file in files {
            let Some(folder) = file.strip_suffix(crate::config::CONFIG_FILE.as_bytes()) else {
                if file.starts_with(&project) && !roots.folders.contains(&project) {
                    roots.folders.push(project.clone());
                }
                continue;
            };
            if folder.is_empty() {
                roots.top = true;
            } else if folder.ends_with(b"/") && !roots.folders.iter().any(|f| f == folder) {
                roots.folders.push(folder.to_vec());
            }
        }
        roots
    }

    /// Adds the roots of `other`.
    pub(super) fn extend(&mut self, other: MemoryRoots) {
        for folder in other.folders {
            if !self.folders.contains(&folder) {
                self.folders.push(folder);
            }
        }
        self.top |= other.top;
    }

    /// Whether the file `path` (relative to the top) belongs to a memory root.
    pub(super) fn holds(&self, path: &[u8]) -> bool {
        if self.folders.iter().any(|f| path.starts_with(f)) {
            return true;
        }
        let text = String::from_utf8_lossy(path);
        self.top
            && (crate::store::is_memory_path(Path::new(text.as_ref()))
                || ["archive/", "usage/"].iter().any(|d| text.starts_with(d)))
    }

    /// The roots, as folders ending in `/` (`./` for the top), sorted.
    pub(super) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.folders.iter().map(|f| shown(f)).collect();
        names.sort();
        if self.top {
            names.insert(0, "./".to_string());
        }
        names
    }
}

/// A file a checkpoint left out because of its size.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SkippedFile {
    /// Its path relative to the top (lossy where not UTF-8).
    pub path: String,
    /// Its size.
    pub bytes: u64,
}

/// A snapshot of the working tree: its tree, and what it left out.
pub(super) struct Snapshot {
    /// The tree object.
    pub(super) tree: String,
    /// The memory roots left out.
    pub(super) roots: MemoryRoots,
    /// The files left out for their size (raw names), with their sizes.
    pub(super) too_large: Vec<(Vec<u8>, u64)>,
}

impl Snapshot {
    /// What it left out: the memory roots (folders ending in `/`) and the files too large.
    pub(super) fn skipped(&self) -> (Vec<String>, Vec<SkippedFile>) {
        let files = self
            .too_large
            .iter()
            .map(|(name, bytes)| SkippedFile { path: shown(name), bytes: *bytes })
            .collect();
        (self.roots.names(), files)
    }

    /// The lines a checkpoint's commit message records of what it left out (read back by
    /// [`skipped_of`]).
    pub(super) fn skipped_lines(&self) -> String {
        let (roots, files) = self.skipped();
        let mut lines = String::new();
        for root in roots {
            lines.push_str(&format!("{SKIPPED} memory-root {}\n", quoted(&root)));
        }
        for file in files {
            lines.push_str(&format!("{SKIPPED} size {} {}\n", file.bytes, quoted(&file.path)));
        }
        lines
    }
}

/// The start of a commit message line that records a path the checkpoint left out.
const SKIPPED: &str = "mem-skipped:";

fn quoted(path: &str) -> String {
    serde_json::to_string(path).expect("a string serialises")
}

/// What a checkpoint's commit message `body` says it left out: memory roots (folders ending
/// in `/`) and files too large, as paths relative to the top.
pub(super) fn skipped_of(body: &str) -> (Vec<String>, Vec<SkippedFile>) {
    let (mut roots, mut files) = (Vec::new(), Vec::new());
    for line in body.lines() {
        let Some(rest) = line.strip_prefix(SKIPPED) else { continue };
        let mut parts = rest.trim().splitn(2, ' ');
        match (parts.next(), parts.next()) {
            (Some("memory-root"), Some(path)) => {
                roots.extend(serde_json::from_str::<String>(path).ok());
            }
            (Some("size"), Some(rest)) => {
                let mut parts = rest.splitn(2, ' ');
                let bytes = parts.next().and_then(|b| b.parse().ok()).unwrap_or(0);
                let path = parts.next().and_then(|p| serde_json::from_str::<String>(p).ok());
                files.extend(path.map(|path| SkippedFile { path, bytes }));
            }
            _ => {}
        }
    }
    (roots, files)
}

impl Workspace {
    /// The tree of the working tree as it is now, its bytes as they are (no filter runs), built
    /// in a temporary index seeded from the user's, which is not touched. Memory roots and
    /// files over the size cap are left out before git reads them (no blob is written for
    /// them) and removed from the temporary index where the user's index tracks them.
    pub(super) fn snapshot(&self) -> Result<Snapshot> {
        let index = TempIndex::new(&self.git_dir)?;
        let user_index = self.git_dir.join("index");
        if user_index.is_file() {
            std::fs::copy(&user_index, &index.path)
                .map_err(|e| crate::Error::io(&index.path, e))?;
        }
        let env = index.env();
        // A file under a filter (Git LFS) that did not change since the user's index has the
        // filter's blob there (a pointer), not its bytes: it is hashed again, filters off.
        let filtered = self.runner.filtered(&env)?;
        if !filtered.is_empty() {
            let remove = ["update-index", "--force-remove", "-z", "--stdin"];
            self.runner.raw(&remove, &env, &nul_joined(&filtered))?;
        }
        let ls = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"];
        let listed = self.runner.raw(&ls, &env, b"")?;
        let roots = MemoryRoots::of(nul_separated(&listed));
        // Only files git would read again can be too large: untracked and modified ones.
        let ls = ["ls-files", "-z", "--others", "--modified", "--exclude-standard"];
        let changed = self.runner.raw(&ls, &env, b"")?;
        let mut too_large = Vec::new();
        for name in nul_separated(&changed).filter(|n| !roots.holds(n)) {
            let meta = std::fs::symlink_metadata(path_under(&self.top, name));
            if let Ok(meta) = meta
                && meta.is_file()
                && meta.len() > self.max_file_bytes
                && !too_large.iter().any(|(n, _)| n == name)
            {
                too_large.push((name.to_vec(), meta.len()));
            }
        }
        let mut left_out: Vec<&[u8]> = too_large.iter().map(|(n, _)| n.as_slice()).collect();
        let mut pathspecs = b".\0".to_vec();
        for root in &roots.folders {
            pathspecs.extend_from_slice(b":(exclude,literal)");
            pathspecs.extend_from_slice(root.strip_suffix(b"/").unwrap_or(root));
            pathspecs.push(0);
        }
        for name in nul_separated(&listed).filter(|n| roots.holds(n)) {
            left_out.push(name);
        }
        for name in &left_out {
            pathspecs.extend_from_slice(b":(exclude,literal)");
            pathspecs.extend_from_slice(name);
            pathspecs.push(0);
        }
        let add = ["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"];
        self.runner.raw(&add, &env, &pathspecs)?;
        if !left_out.is_empty() {
            let remove = ["update-index", "--force-remove", "-z", "--stdin"];
            self.runner.raw(&remove, &env, &nul_joined(&left_out))?;
        }
        let tree = self.git(&["write-tree"], &env)?.trim().to_string();
        Ok(Snapshot { tree, roots, too_large })
    }
}
