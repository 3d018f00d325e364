//! `mem resolve PATH` and the hidden `mem merge-driver %O %A %B %P` git runs: two edits of one
//! memory made one without a conflict marker, the earlier kept as a superseded memory
//! (docs/teams.md, "Conflicts").

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, anyhow};
use mem::store::{self, Overwrite};

use crate::shared::Globals;

/// Arguments of `mem resolve`.
#[derive(Debug, clap::Args)]
pub struct ResolveArgs {
    /// The memory file holding git's conflict markers, as `mem health` names it (relative to
    /// the memory root), or a path to it from here.
    path: PathBuf,
}

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

pub fn resolve(args: ResolveArgs, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let rel = inside(engine.files.root(), &args.path)?;
    let done = engine.files.resolve(&rel, ctx.now)?;
    let mut text = format!("resolved {}: {} holds the later edit\n", done.path, done.id);
    if let Some(earlier) = &done.earlier {
        text.push_str(&format!(
            "the earlier edit of the text is {earlier} (superseded by {})\n",
            done.id
        ));
    }
    text.push_str("in a git merge, `git add` the files and commit\n");
    crate::shared::output::print_text(&text)
}

/// `path` relative to the memory root `root`: as given when the root holds it, else the file
/// it names from here, which must be inside the root.
fn inside(root: &Path, path: &Path) -> Result<String> {
    if path.is_relative() && root.join(path).is_file() {
        let rel = path.to_str().ok_or_else(|| anyhow!("{} is not valid UTF-8", path.display()))?;
        return Ok(rel.trim_start_matches("./").to_string());
    }
    let real = std::fs::canonicalize(path).with_context(|| {
        format!("{} is neither in the memory root {} nor here", path.display(), root.display())
    })?;
    let root = std::fs::canonicalize(root)
        .with_context(|| format!("cannot read the memory root {}", root.display()))?;
    let rel = real
        .strip_prefix(&root)
        .map_err(|_| anyhow!("{} is not in the memory root {}", path.display(), root.display()))?;
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    Ok(parts.ok_or_else(|| anyhow!("{} is not valid UTF-8", rel.display()))?.join("/"))
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
