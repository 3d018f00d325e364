//! `mem init [DIR]` and `mem init --project`.

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use mem::store;

use crate::shared::Globals;

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
    let report = crate::shared::open::init_root(&dir, ctx.now)?;
    let shown = dir.display();
    let kind = if args.project { "project memory root" } else { "memory root" };
    let mut text = if report.wrote_config {
        format!("initialised {kind} {shown} (mem.toml, .gitignore, usage/)\n")
    } else {
        format!("{shown} is already a memory root; nothing overwritten\n")
    };
    if args.project {
        // Also in a clone that has the root already: the driver lives in the clone's own
        // git configuration, which no clone brings (docs/teams.md, "Conflicts").
        match crate::shared::merge::register(&dir) {
            Ok(line) => text.push_str(&line.unwrap_or_default()),
            Err(e) => eprintln!("mem: warning: {}", crate::shared::output::describe(&e)),
        }
    }
    crate::shared::output::print_text(&text)
}
