//! `mem init [DIR]`.

use std::path::PathBuf;

use anyhow::Result;

use super::Context;

/// Arguments of `mem init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder to make a memory root (created if missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let report = mem::store::init(&args.dir)?;
    // Usage observation starts now: time before it is not time without use (docs/decay.md).
    mem::Engine::open(&args.dir)?.start_observing(ctx.now)?;
    let shown = args.dir.display();
    if report.wrote_config {
        super::print_text(&format!(
            "initialised memory root {shown} (mem.toml, .gitignore, usage/)\n"
        ))
    } else {
        super::print_text(&format!("{shown} is already a memory root; nothing overwritten\n"))
    }
}
