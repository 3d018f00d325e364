//! The repository's memory shared by its worktrees: from a linked worktree (`git worktree
//! add`), the project root is the main worktree's `.memory/` (docs/teams.md, "Worktrees").
//! The main worktree is found without running git, from the files git writes: the linked
//! worktree's `.git` file (`gitdir: <main>/.git/worktrees/<name>`), that folder's `commondir`
//! (the main `.git`) and `gitdir` (back to the linked worktree's `.git` file). All three are
//! read as untrusted (a folder unpacked from an archive can hold a `.git` file naming anything):
//! each is a bounded regular file, and what they name must agree, or the worktree is taken as
//! no linked worktree and its own root is used, as before.

use std::path::{Path, PathBuf};

use super::{PROJECT_DIR, holds_config};
use crate::Config;
use crate::untrusted::{self, Links};

/// The most read of each of git's small pointer files.
const MAX_POINTER_BYTES: u64 = 4096;

/// The main worktree of the linked worktree whose top is `top` (the folder holding its `.git`
/// file), when git's files agree on it: `top/.git` names a folder `<common>/worktrees/<name>`,
/// whose `commondir` names `<common>`, whose `gitdir` names `top/.git` again, and `<common>`
/// is the `.git` folder (not a link) of another folder, the main worktree. `None` otherwise: a
/// main worktree, a bare repository's worktree, a `.git` file naming something else.
pub fn main_worktree(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    if !std::fs::symlink_metadata(&dot_git).ok()?.file_type().is_file() {
        return None;
    }
    let git_dir = canonical(&pointer(&dot_git, "gitdir:")?, top)?;
    let common = canonical(&pointer(&git_dir.join("commondir"), "")?, &git_dir)?;
    if git_dir.parent()? != common.join("worktrees") || common.file_name()? != ".git" {
        return None;
    }
    let back = canonical(&pointer(&git_dir.join("gitdir"), "")?, &git_dir)?;
    if back != dot_git.canonicalize().ok()? {
        return None;
    }
    let main = common.parent()?;
    let main_git = main.join(".git");
    let real_folder = std::fs::symlink_metadata(&main_git).is_ok_and(|m| m.file_type().is_dir());
    if !real_folder || main_git.canonicalize().ok()? != common || main == top.canonicalize().ok()? {
        return None;
    }
    Some(main.to_path_buf())
}

/// The root a linked worktree at `top` shares: the main worktree's `.memory/`, when it holds a
/// regular `mem.toml` and neither its `mem.toml` nor the worktree's own `.memory/mem.toml` sets
/// `[project] per_worktree = true`. `None` keeps the worktree's own root.
pub fn shared_root(top: &Path) -> Option<PathBuf> {
    let root = main_worktree(top)?.join(PROJECT_DIR);
    if !holds_config(&root).unwrap_or(false) {
        return None;
    }
    let own = top.join(PROJECT_DIR);
    let per_worktree = |dir: &Path| Config::load(dir).is_ok_and(|c| c.project.per_worktree);
    if per_worktree(&root) || (holds_config(&own).unwrap_or(false) && per_worktree(&own)) {
        return None;
    }
    Some(root)
}

/// The path a pointer file of git's holds after `prefix` (`gitdir:` in a `.git` file, nothing
/// in `commondir`), trimmed; `None` when it is no bounded regular UTF-8 file, lacks the prefix
/// or names nothing.
fn pointer(path: &Path, prefix: &str) -> Option<PathBuf> {
    let text = untrusted::read_text(path, MAX_POINTER_BYTES, Links::InFolder).ok()??;
    let named = text.trim().strip_prefix(prefix)?.trim();
    (!named.is_empty() && !named.contains('\n')).then(|| PathBuf::from(named))
}

/// `path` (relative to `base` when not absolute) with every link resolved, when it exists.
fn canonical(path: &Path, base: &Path) -> Option<PathBuf> {
    (if path.is_absolute() { path.to_path_buf() } else { base.join(path) }).canonicalize().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A main worktree `main/` and a linked worktree `linked/` as `git worktree add` lays them
    /// out; returns the temporary folder.
    fn layout(commondir: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let git_dir = dir.path().join("main/.git/worktrees/linked");
        std::fs::create_dir_all(&git_dir).unwrap();
        std::fs::create_dir_all(dir.path().join("linked")).unwrap();
        let linked_git = dir.path().join("linked/.git");
        std::fs::write(&linked_git, format!("gitdir: {}\n", git_dir.display())).unwrap();
        std::fs::write(git_dir.join("commondir"), commondir).unwrap();
        std::fs::write(git_dir.join("gitdir"), format!("{}\n", linked_git.display())).unwrap();
        dir
    }

    #[test]
    fn a_linked_worktree_leads_to_its_main_worktree() {
        let dir = layout("../..\n");
        let main = dir.path().join("main").canonicalize().unwrap();
        assert_eq!(main_worktree(&dir.path().join("linked")), Some(main.clone()));
        // An absolute commondir, and a relative gitdir in the `.git` file, as git may write.
        std::fs::write(
            main.join(".git/worktrees/linked/commondir"),
            main.join(".git").display().to_string(),
        )
        .unwrap();
        std::fs::write(dir.path().join("linked/.git"), "gitdir: ../main/.git/worktrees/linked")
            .unwrap();
        assert_eq!(main_worktree(&dir.path().join("linked")), Some(main.clone()));
        // The main worktree itself, and a folder without `.git`, are no linked worktrees.
        assert_eq!(main_worktree(&main), None);
        assert_eq!(main_worktree(dir.path()), None);
    }

    #[test]
    fn pointers_that_disagree_lead_nowhere() {
        let linked = |dir: &tempfile::TempDir| dir.path().join("linked");
        // A `.git` file without `gitdir:`, naming nothing, or naming a folder that is not there.
        for text in ["", "gitdir:", "nonsense", "gitdir: /nonexistent/.git/worktrees/x"] {
            let dir = layout("../..");
            std::fs::write(linked(&dir).join(".git"), text).unwrap();
            assert_eq!(main_worktree(&linked(&dir)), None, "{text:?}");
        }
        // A commondir elsewhere than the folder above `worktrees/`.
        let dir = layout("..");
        assert_eq!(main_worktree(&linked(&dir)), None);
        // A gitdir that does not lead back (the worktree copied or moved).
        let dir = layout("../..");
        let other = dir.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(".git"), "x").unwrap();
        let back = dir.path().join("main/.git/worktrees/linked/gitdir");
        std::fs::write(&back, other.join(".git").display().to_string()).unwrap();
        assert_eq!(main_worktree(&linked(&dir)), None);
        // A `.git` file too large to be git's, and a commondir that is a folder.
        let dir = layout("../..");
        std::fs::write(linked(&dir).join(".git"), "x".repeat(5000)).unwrap();
        assert_eq!(main_worktree(&linked(&dir)), None);
        let dir = layout("../..");
        let commondir = dir.path().join("main/.git/worktrees/linked/commondir");
        std::fs::remove_file(&commondir).unwrap();
        std::fs::create_dir(&commondir).unwrap();
        assert_eq!(main_worktree(&linked(&dir)), None);
    }

    #[test]
    fn the_shared_root_is_the_main_worktrees_unless_one_is_kept_per_worktree() {
        let dir = layout("../..");
        let linked = dir.path().join("linked");
        assert_eq!(shared_root(&linked), None, "the main worktree has no root");
        let main_root = dir.path().join("main").join(PROJECT_DIR);
        super::super::init(&main_root).unwrap();
        let shared = main_root.canonicalize().unwrap();
        assert_eq!(shared_root(&linked), Some(shared.clone()));
        super::super::init(&linked.join(PROJECT_DIR)).unwrap();
        assert_eq!(shared_root(&linked), Some(shared.clone()));
        let setting = "[project]\nper_worktree = true\n";
        std::fs::write(linked.join(PROJECT_DIR).join("mem.toml"), setting).unwrap();
        assert_eq!(shared_root(&linked), None, "the worktree's own root keeps it apart");
        std::fs::write(linked.join(PROJECT_DIR).join("mem.toml"), "").unwrap();
        std::fs::write(main_root.join("mem.toml"), setting).unwrap();
        assert_eq!(shared_root(&linked), None, "the main worktree's root keeps them apart");
    }
}
