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
    let report = engine.sync()?;
    if report.files > 0 {
        // The index learns of the new `access:` lines now (`mem health` compares).
        engine.refresh(ctx.now, &mem::progress::Silent)?;
    }
    for id in &report.unknown_ids {
        eprintln!(
            "mem: warning: usage events for {id}, which has no readable memory file (deleted, \
             archived or reported above); kept in the log"
        );
    }
    for failure in &report.failed {
        eprintln!("{failure}  [not synced; its events are kept]");
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
            "synced {} events into {} files{recovered}\n",
            report.events, report.files
        ))?;
    }
    if !report.failed.is_empty() {
        bail!("{} files could not be synced (listed above)", report.failed.len());
    }
    Ok(())
}
