//! `mem sync`: write this machine's usage log to its usage file in `usage/`.

use anyhow::{Result, bail};

use crate::shared::Globals;

/// Arguments of `mem sync`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    if !engine.files.config().usage.sync {
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
        crate::shared::output::print_json(&report)?;
    } else {
        let recovered = if report.recovered > 0 {
            format!(" ({} interrupted syncs settled)", report.recovered)
        } else {
            String::new()
        };
        let mut text = if report.events == 0 && report.files == 0 {
            format!("no new usage to write{recovered}\n")
        } else {
            format!(
                "wrote {} usage {} to {}{recovered}\n",
                report.events,
                if report.events == 1 { "event" } else { "events" },
                report.usage_file
            )
        };
        if report.files > 0 {
            let (line, files) =
                if report.files == 1 { ("line", "memory file") } else { ("lines", "memory files") };
            text.push_str(&format!(
                "moved the access: {line} (usage counts an older mem wrote) of {} {files} to {}\n",
                report.files, report.usage_file
            ));
        }
        crate::shared::output::print_text(&text)?;
    }
    if !report.failed.is_empty() {
        bail!("{} files could not be migrated (listed above)", report.failed.len());
    }
    Ok(())
}
