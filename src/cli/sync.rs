//! `mem sync`: fold the usage log into the memory files.

use anyhow::{Result, bail};

use super::Context;

/// Arguments of `mem sync`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    if !engine.config().usage.sync {
        bail!(
            "[usage] sync = false in mem.toml: usage stays in .mem/usage.db and no file is written"
        );
    }
    let report = engine.sync(ctx.now)?;
    if report.files > 0 {
        // The index learns of the new `access:` lines now (`mem health` compares).
        engine.refresh(ctx.now, &mem::progress::Silent)?;
    }
    for failure in &report.failed {
        eprintln!("{failure}  [its access: line stays; it is still read]");
    }
    if args.json {
        super::print_json(&report)?;
    } else {
        let recovered = if report.recovered > 0 {
            format!(" ({} interrupted syncs settled)", report.recovered)
        } else {
            String::new()
        };
        super::print_text(&format!(
            "synced {} events into {}; moved the access: line of {} files there{recovered}\n",
            report.events, report.usage_file, report.files
        ))?;
    }
    if !report.failed.is_empty() {
        bail!("{} files could not be migrated (listed above)", report.failed.len());
    }
    Ok(())
}
