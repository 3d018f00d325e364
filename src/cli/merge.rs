//! The hidden `mem merge-driver %O %A %B %P` git runs: two edits of one memory made one without
//! a conflict marker, the earlier kept as a superseded memory (docs/teams.md, "Conflicts").

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use mem::store::{self, Overwrite};

use crate::shared::Globals;

/// Arguments of `mem merge-driver` (git gives them: see docs/teams.md).
#[derive(Debug, clap::Args)]
pub struct DriverArgs {
    /// The merge base's version of the file (git's `%O`; empty when both sides added it).
    base: PathBuf,
    /// Ours (`%A`): the merged file is written here.
    ours: PathBuf,
    /// Theirs (`%B`).
    theirs: PathBuf,
    /// The file's path in the work tree (`%P`), from its top: the earlier edit goes beside it.
    path: String,
}

/// Run by git as the merge driver: exits non-zero (git then writes its conflict markers) when
/// a side is not a memory file.
pub fn driver(args: DriverArgs, ctx: &Globals) -> Result<()> {
    let limit = mem::config::Limits::default().max_file_bytes;
    let read = |path: &Path| -> Result<String> {
        let bytes = store::read_limited(path, limit).map_err(|e| match e {
            store::ReadError::Io(e) => anyhow!("{}: {e}", path.display()),
            store::ReadError::Format(e) => anyhow!("{}: {e}", path.display()),
        })?;
        String::from_utf8(bytes).map_err(|_| anyhow!("{} is not UTF-8", path.display()))
    };
    let fails = || format!("{}: git leaves its conflict markers; `mem resolve` it then", args.path);
    let base = read(&args.base).ok();
    let ours = read(&args.ours).with_context(fails)?;
    let theirs = read(&args.theirs).with_context(fails)?;
    let merged = mem::merge::merge(base.as_deref(), &ours, &theirs, ctx.now).with_context(fails)?;
    if let Some(earlier) = &merged.earlier {
        // git runs the driver at the top of the work tree, where `%P` starts.
        let top = std::env::current_dir().context("cannot read the working directory")?;
        let folder = args.path.rsplit_once('/').map_or("", |(dir, _)| dir);
        let rel = mem::merge::write_earlier(&top, folder, earlier).with_context(fails)?;
        let id = mem::Memory::parse(&merged.text).map(|m| m.id().to_string()).unwrap_or_default();
        eprintln!(
            "mem: {}: both sides changed the text of {id}: the later edit stays, the earlier is \
             kept as {rel} (superseded by {id}); `git add {rel}` to commit it",
            args.path
        );
    }
    store::write_atomic(&args.ours, merged.text.as_bytes(), Overwrite::Yes)
        .with_context(|| format!("cannot write {}", args.ours.display()))
}
