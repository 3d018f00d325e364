//! The git merge driver's registration in a clone: the attribute committed with the memory root
//! (`.gitattributes`: [`ATTRIBUTE`]) and the driver in the clone's own git configuration
//! (`merge.mem.name`, `merge.mem.driver`), which git never takes from a repository. git is run
//! through [`crate::git::Runner`] only.

use std::path::Path;

use crate::git::Runner;
use crate::store::{self, Overwrite};
use crate::untrusted::{self, Links};
use crate::{Error, Result};

/// The line of a memory root's `.gitattributes` that has git merge its memory files with mem's
/// driver.
pub const ATTRIBUTE: &str = "*.md merge=mem";

/// The attributes file of a memory root.
pub const ATTRIBUTES_FILE: &str = ".gitattributes";

/// The git configuration key of the driver's command.
pub const DRIVER_KEY: &str = "merge.mem.driver";

/// The git configuration key of the driver's name.
pub const NAME_KEY: &str = "merge.mem.name";

/// The name git shows for the driver.
pub const NAME: &str = "mem: both edits of a memory kept, the later one current (docs/teams.md)";

/// The most bytes of a root's `.gitattributes` read (it comes with a clone).
const MAX_ATTRIBUTES_BYTES: u64 = 64 << 10;

/// What [`register`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Registered {
    /// The attribute line was added to the root's `.gitattributes`.
    pub attribute: bool,
    /// The driver was set in the clone's git configuration; `None` when the root is not in a
    /// git repository (or git cannot be run).
    pub config: Option<bool>,
}

/// Registers the driver for the memory root `root`: [`ATTRIBUTE`] in its `.gitattributes`
/// (added once), and, in the git repository holding it, `merge.mem.name` and
/// `merge.mem.driver` set to `command` (only when git knows no `merge.mem.driver` yet: one the
/// user set, here or in their own configuration, is kept). Running it twice writes nothing the
/// second time.
pub fn register(root: &Path, command: &str) -> Result<Registered> {
    let attribute = add_attribute(root)?;
    let git = Runner::new(root);
    let config = match configured(&git) {
        None => None,
        Some(true) => Some(false),
        Some(false) => {
            for (key, value) in [(NAME_KEY, NAME), (DRIVER_KEY, command)] {
                let done = git.run(&["config", "--local", key, value], &[], b"", None);
                match done {
                    Ok(done) if done.status.success() => {}
                    Ok(done) => return Err(config_failed(key, &done.first_error())),
                    Err(e) => return Err(config_failed(key, &e.to_string())),
                }
            }
            Some(true)
        }
    };
    Ok(Registered { attribute, config })
}

fn config_failed(key: &str, why: &str) -> Error {
    Error::Merge(format!("cannot set {key} in the clone's git configuration: {why}"))
}

/// Whether the root's `.gitattributes` asks for mem's driver while the git repository holding
/// the root has none configured: a merge of two edits would then leave conflict markers.
pub fn missing(root: &Path) -> bool {
    asks_for_driver(root) && configured(&Runner::new(root)) == Some(false)
}

/// Whether git knows `merge.mem.driver` (in any of its configuration files); `None` when the
/// folder is in no git repository, or git cannot be run.
fn configured(git: &Runner) -> Option<bool> {
    let inside = git.run(&["rev-parse", "--git-dir"], &[], b"", None).ok()?;
    if !inside.status.success() {
        return None;
    }
    let found = git.run(&["config", "--get", DRIVER_KEY], &[], b"", None).ok()?;
    match found.status.code() {
        Some(0) => Some(!found.stdout.trim_ascii().is_empty()),
        Some(1) => Some(false),
        _ => None,
    }
}

/// Whether the root's `.gitattributes` has a line setting `merge=mem`.
pub fn asks_for_driver(root: &Path) -> bool {
    let path = root.join(ATTRIBUTES_FILE);
    let Ok(Some(text)) = untrusted::read_text(&path, MAX_ATTRIBUTES_BYTES, Links::InFolder) else {
        return false;
    };
    text.lines().any(asks)
}

/// Whether an attributes line sets `merge=mem` (for any pattern).
fn asks(line: &str) -> bool {
    let line = line.trim();
    !line.starts_with('#') && line.split_whitespace().skip(1).any(|a| a == "merge=mem")
}

/// Adds [`ATTRIBUTE`] to the root's `.gitattributes` unless a line already has it; whether it
/// wrote.
fn add_attribute(root: &Path) -> Result<bool> {
    let path = store::inside_root(root, ATTRIBUTES_FILE)?;
    let text = match untrusted::read_text(&path, MAX_ATTRIBUTES_BYTES, Links::InFolder) {
        Ok(text) => text.unwrap_or_default(),
        Err(e) => return Err(Error::io(&path, std::io::Error::other(e.to_string()))),
    };
    if text.lines().any(|l| l.trim() == ATTRIBUTE) {
        return Ok(false);
    }
    let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
    let overwrite = if path.exists() { Overwrite::Yes } else { Overwrite::No };
    store::write_atomic(&path, format!("{text}{sep}{ATTRIBUTE}\n").as_bytes(), overwrite)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attributes_line_asks_for_the_driver() {
        assert!(asks(ATTRIBUTE));
        assert!(asks("  notes/*.md   text merge=mem "));
        assert!(!asks("# *.md merge=mem"));
        assert!(!asks("*.md merge=union"));
        assert!(!asks("merge=mem"), "a pattern comes first");
    }

    #[test]
    fn the_attribute_is_added_once_after_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(ATTRIBUTES_FILE), "*.tsv text").unwrap();
        assert!(add_attribute(dir.path()).unwrap());
        assert!(!add_attribute(dir.path()).unwrap());
        let text = std::fs::read_to_string(dir.path().join(ATTRIBUTES_FILE)).unwrap();
        assert_eq!(text, format!("*.tsv text\n{ATTRIBUTE}\n"));
        assert!(asks_for_driver(dir.path()));
    }
}
