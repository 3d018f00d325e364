//! `mem init [DIR]` and `mem init --project`.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use mem::store;

use super::Globals;

/// Arguments of `mem init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to make a memory root (created if missing).
    #[arg(conflicts_with = "project")]
    dir: Option<PathBuf>,
    /// Make the project memory root: `.memory/` at the top of the git repository the working
    /// directory is in (else in the working directory). Commands run anywhere in the project
    /// find it; the repository's own Markdown never becomes memories.
    #[arg(long)]
    project: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let dir = match (&args.dir, args.project) {
        (_, true) => store::project_top(&cwd).join(store::PROJECT_DIR),
        (Some(dir), false) => dir.clone(),
        (None, false) => {
            if store::is_repository_top(&cwd) {
                eprintln!(
                    "mem: warning: {} is the top of a git repository: every Markdown file below it \
                     (README, docs, dependencies) would be read as a memory; `mem init --project` \
                     keeps the project's memories in {}/ instead",
                    cwd.display(),
                    store::PROJECT_DIR
                );
            }
            PathBuf::from(".")
        }
    };
    let report = init_root(&dir, ctx.now)?;
    let shown = dir.display();
    let kind = if args.project { "project memory root" } else { "memory root" };
    if report.wrote_config {
        super::output::print_text(&format!(
            "initialised {kind} {shown} (mem.toml, .gitignore, usage/)\n"
        ))
    } else {
        super::output::print_text(&format!(
            "{shown} is already a memory root; nothing overwritten\n"
        ))
    }
}

/// Makes `dir` a memory root (see [`store::init`]) and starts observing its usage now, unless
/// it already does: time before that is not time without use (docs/decay.md).
pub(super) fn init_root(dir: &std::path::Path, now: jiff::Timestamp) -> Result<store::InitReport> {
    let report = store::init(dir)?;
    mem::Engine::open(dir)
        .and_then(|mut engine| engine.start_observing(now))
        .with_context(|| format!("cannot start usage observation in {}", dir.display()))?;
    // Made here: the user's own (see `machine`).
    if let Err(e) = super::machine::remember(dir, None) {
        eprintln!("mem: warning: {}", super::output::describe(&e));
    }
    Ok(report)
}
