//! The git merge driver as the binary registers it (`mem init --project`, `mem setup`): the
//! command git runs (this executable, by its absolute path) and the line said about it.

use std::path::Path;

use anyhow::{Context as _, Result};

/// The command line git runs as the driver: this `mem`, by its absolute path (the clone's own
/// git configuration is this machine's, and git may run with another `PATH`).
pub fn command() -> Result<String> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("cannot tell where the mem executable is")?;
    let exe = crate::setup::command::shell_word(&exe)?;
    Ok(format!("{exe} merge-driver %O %A %B %P"))
}

/// Registers the driver for the project root `root` (see [`mem::merge::driver::register`]);
/// the line to print when anything was written.
pub fn register(root: &Path) -> Result<Option<String>> {
    let done = mem::merge::driver::register(root, &command()?).with_context(|| {
        format!("cannot register mem's git merge driver for {}", root.display())
    })?;
    let mut wrote = Vec::new();
    if done.attribute {
        wrote.push(format!(
            "`{}` in {}",
            mem::merge::driver::ATTRIBUTE,
            root.join(".gitattributes").display()
        ));
    }
    if done.config == Some(true) {
        wrote
            .push(format!("`{}` in the clone's git configuration", mem::merge::driver::DRIVER_KEY));
    }
    Ok((!wrote.is_empty()).then(|| {
        format!(
            "registered mem's git merge driver: {} (two edits of a memory are both kept; \
             docs/teams.md)\n",
            wrote.join(" and ")
        )
    }))
}
