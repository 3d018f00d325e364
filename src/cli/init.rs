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

pub fn run(args: Args, _ctx: &Context) -> Result<()> {
    let report = mem::store::init(&args.dir)?;
    let shown = args.dir.display();
    if report.wrote_config {
        super::print_text(&format!("initialised memory root {shown} (mem.toml, .gitignore)\n"))
    } else {
        super::print_text(&format!("{shown} is already a memory root; nothing overwritten\n"))
    }
}
