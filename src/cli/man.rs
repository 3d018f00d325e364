//! `mem man`: the manual page, generated from the command-line definitions: `mem.1` as roff
//! on stdout, or with `--out DIR` `mem.1` and a `mem-<command>.1` per subcommand in DIR.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::CommandFactory;

/// Arguments of `mem man`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write mem.1 and one page per subcommand (mem-recall.1, ...) into this folder
    /// (created if missing) instead of printing mem.1.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Prints `mem.1`, or writes every page into `--out`.
pub fn run(args: Args) -> Result<()> {
    let command = crate::commands::Cli::command();
    if let Some(dir) = args.out {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the folder {}", dir.display()))?;
        clap_mangen::generate_to(command, &dir)
            .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
        return Ok(());
    }
    let mut page = Vec::new();
    clap_mangen::Man::new(command).render(&mut page)?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page)?;
    out.flush()?;
    Ok(())
}
