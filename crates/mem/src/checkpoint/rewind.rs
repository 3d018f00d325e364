//! Rewind: the working tree put back as a checkpoint holds it, whatever kind each path has
//! now (a file, a folder, a link: kind changes both ways), byte for byte (names that are not
//! UTF-8 included), never touching a memory root, a path the checkpoint left out, or a path
//! the checkpoint's own ignore rules excluded.

use std::path::Path;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use jiff::Timestamp;

use super::git::{TempIndex, nul_joined, nul_separated, os_path, path_under, shown};
use super::snapshot::{MemoryRoots, skipped_of};
use super::{Rewound, Workspace};
use crate::{Error, Result};

/// The mode git gives a submodule's entry (a commit, not a file).
const GITLINK: &[u8] = b"160000";

/// One difference between the present and the checkpoint, from `git diff-tree --raw -z`.
struct Change {
    /// The mode now (`000000` when the path is not in the present snapshot).
    now_mode: Vec<u8>,
    /// The mode in the checkpoint (`000000` when it does not hold the path).
    then_mode: Vec<u8>,
    /// The path, relative to the top, as git gives it.
    path: Vec<u8>,
}

impl Change {
    fn in_checkpoint(&self) -> bool {
        self.then_mode != b"000000"
    }

    fn in_present(&self) -> bool {
        self.now_mode != b"000000"
    }
}

/// The checkpoint's own ignore rules: its `.gitignore` files, read from its tree.
struct IgnoredThen {
    /// Each `.gitignore` of the checkpoint, with its folder relative to the top.
    matchers: Vec<(Vec<u8>, Gitignore)>,
}

impl IgnoredThen {
    fn of(workspace: &Workspace, tree: &str, files: &[u8]) -> Result<IgnoredThen> {
        let mut matchers = Vec::new();
        for name in nul_separated(files) {
            let folder = match name.strip_suffix(b".gitignore") {
                Some(folder) if folder.is_empty() || folder.ends_with(b"/") => folder,
                _ => continue,
            };
            let spec = format!("{tree}:{}", shown(name));
            let Ok(text) = workspace.runner.raw(&["cat-file", "blob", &spec], &[], b"") else {
                continue;
            };
            let root = path_under(&workspace.top, folder);
            let mut builder = GitignoreBuilder::new(&root);
            for line in String::from_utf8_lossy(&text).lines() {
                // A line git would reject is not a rule for git either.
                let _ = builder.add_line(None, line);
            }
            if let Ok(matcher) = builder.build() {
                matchers.push((folder.to_vec(), matcher));
            }
        }
        // Deepest first: a nested file's rules win over its parents'.
        matchers.sort_by_key(|(folder, _)| std::cmp::Reverse(folder.len()));
        Ok(IgnoredThen { matchers })
    }

    /// Whether the checkpoint's rules ignore the file `path` (relative to the top).
    fn ignores(&self, top: &Path, path: &[u8]) -> bool {
        let full = path_under(top, path);
        for (folder, matcher) in &self.matchers {
            if !path.starts_with(folder) {
                continue;
            }
            let matched = matcher.matched_path_or_any_parents(&full, false);
            if matched.is_ignore() {
                return true;
            }
            if matched.is_whitelist() {
                return false;
            }
        }
        false
    }
}

/// Whether something at `path` (relative to `top`) stands in the way of a file there: one of
/// its folders is a file or a link now, or it is a folder itself. Such a path is not "ignored
/// now": it changed kind, and the rewind puts the checkpoint's kind back.
fn kind_changed(top: &Path, path: &[u8]) -> bool {
    let rel = os_path(path);
    let mut at = top.to_path_buf();
    let mut parts = rel.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if parts.peek().is_some() && !meta.is_dir() => return true,
            Ok(meta) if parts.peek().is_none() && meta.is_dir() => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

impl Workspace {
    /// Restores the working tree (or only `paths`, relative to the top) to checkpoint `id`,
    /// after taking a checkpoint of the present state so that the rewind can be undone.
    /// With `dry_run`, says what it would change and changes nothing. A rewind that was
    /// interrupted is completed by running it again.
    pub fn rewind(
        &self,
        id: &str,
        paths: &[String],
        dry_run: bool,
        now: Timestamp,
    ) -> Result<Rewound> {
        if let Some(what) = self.busy() {
            return Err(Error::Checkpoint(format!(
                "{what} is in progress in {}: finish or abort it first; mem never rewinds in the middle of one",
                self.top.display()
            )));
        }
        let target = self.resolve(id)?;
        let then = target.tree.as_str();
        let present = self.snapshot()?;
        let ls = ["ls-tree", "-r", "-z", "--name-only", then];
        let then_files = self.runner.raw(&ls, &[], b"")?;
        let mut roots = MemoryRoots::default();
        // Checkpoints taken before memory roots were left out hold them: never restored.
        roots.extend(MemoryRoots::of(nul_separated(&then_files)));
        let (skipped_roots, skipped_files) = skipped_of(&target.body);
        let ignored_then = IgnoredThen::of(self, then, &then_files)?;
        let mut args = vec!["diff-tree", "-r", "-z", "--no-renames", "--raw"];
        args.extend([present.tree.as_str(), then, "--"]);
        args.extend(paths.iter().map(String::as_str));
        let raw = self.runner.raw(&args, &[], b"")?;
        let mut kept_memory: Vec<String> = present.roots.names();
        kept_memory.extend(roots.names());
        kept_memory.extend(skipped_roots);
        kept_memory.sort();
        kept_memory.dedup();
        roots.extend(present.roots.clone());
        let mut rewound = Rewound { kept_memory, ..Rewound::default() };
        let (mut restore, mut remove): (Vec<Vec<u8>>, Vec<Vec<u8>>) = (Vec::new(), Vec::new());
        for change in changes(&raw) {
            let name = shown(&change.path);
            if roots.holds(&change.path) {
                continue;
            }
            if change.now_mode == GITLINK || change.then_mode == GITLINK {
                rewound.submodules.push(name);
            } else if !change.in_checkpoint() {
                if skipped_files.iter().any(|s| s.path == name) {
                    rewound.kept_skipped.push(name);
                } else if ignored_then.ignores(&self.top, &change.path) {
                    rewound.kept_ignored_then.push(name);
                } else {
                    rewound.removed.push(name);
                    remove.push(change.path);
                }
            } else if !change.in_present()
                && std::fs::symlink_metadata(path_under(&self.top, &change.path)).is_ok()
                && !kind_changed(&self.top, &change.path)
            {
                // On disk, yet not in the present snapshot: ignored now, or too large now.
                rewound.kept_ignored.push(name);
            } else {
                rewound.restored.push(name);
                restore.push(change.path);
            }
        }
        if dry_run || (restore.is_empty() && remove.is_empty()) {
            return Ok(rewound);
        }
        let label = format!("before rewind to {}", target.number);
        rewound.before = Some(self.record(&present, &label, now)?.id);
        // What the present has where the checkpoint has something else goes first: a file
        // that replaced a folder, a link that replaced one.
        for name in &remove {
            let path = path_under(&self.top, name);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&path, e)),
            }
            self.remove_empty_folders(path.parent());
        }
        // A folder where the checkpoint has a file: it goes when nothing is left in it.
        let mut blocked = Vec::new();
        for name in &restore {
            let path = path_under(&self.top, name);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir())
                && std::fs::remove_dir(&path).is_err()
            {
                blocked.push(name.clone());
            }
        }
        if !blocked.is_empty() {
            restore.retain(|n| !blocked.contains(n));
            let blocked: Vec<String> = blocked.iter().map(|n| shown(n)).collect();
            rewound.restored.retain(|n| !blocked.contains(n));
            rewound.kept_folders = blocked;
        }
        if !restore.is_empty() {
            let index = TempIndex::new(&self.git_dir)?;
            let env = index.env();
            self.runner.raw(&["read-tree", then], &env, b"")?;
            let checkout = ["checkout-index", "-f", "-z", "--stdin"];
            self.runner.raw(&checkout, &env, &nul_joined(&restore))?;
        }
        Ok(rewound)
    }

    /// Removes `dir` and the folders above it that are left empty, up to the top (as git
    /// leaves no empty folder).
    fn remove_empty_folders(&self, mut dir: Option<&Path>) {
        while let Some(d) = dir.filter(|d| *d != self.top && d.starts_with(&self.top)) {
            if std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
}

/// The changes of `git diff-tree -r -z --raw` output: `:MODE MODE SHA SHA STATUS\0PATH\0`.
fn changes(raw: &[u8]) -> Vec<Change> {
    let mut fields = raw.split(|b| *b == 0);
    let mut out = Vec::new();
    while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
        let meta = meta.strip_prefix(b":").unwrap_or(meta);
        let mut parts = meta.split(|b| *b == b' ');
        if let (Some(now_mode), Some(then_mode)) = (parts.next(), parts.next()) {
            out.push(Change {
                now_mode: now_mode.to_vec(),
                then_mode: then_mode.to_vec(),
                path: path.to_vec(),
            });
        }
    }
    out
}
