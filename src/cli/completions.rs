//! `mem completions SHELL`: the shell's completion script for `mem`, on stdout.

use std::io::Write;

use anyhow::Result;
use clap::CommandFactory;

/// Arguments of `mem completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    shell: clap_complete::Shell,
}

/// Prints the completion script generated from the command-line definitions.
pub fn run(args: Args) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut crate::commands::Cli::command(), "mem", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(())
}
