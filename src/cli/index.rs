//! `mem index`: bring the index up to date, or rebuild it.

use anyhow::Result;
use serde_json::json;

use super::Context;

/// Arguments of `mem index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Throw the index away and build it again from the files.
    #[arg(long)]
    rebuild: bool,
    /// Print the counts as JSON.
    #[arg(long)]
    json: bool,
    /// With --rebuild: do not write the usage log into the files first.
    #[arg(long)]
    no_sync: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let started = super::stopwatch();
    let mut engine = ctx.engine()?;
    let progress = super::progress_bar();
    // Usage reaches the files before the derived state is thrown away.
    super::sync_first(&mut engine, ctx.now, !args.rebuild || args.no_sync)?;
    let mut report = if args.rebuild {
        engine.rebuild(ctx.now, &progress)?
    } else {
        engine.refresh(ctx.now, &progress)?
    };
    if !report.changed() {
        report.duplicates = engine.duplicates();
    }
    super::print_problems(&report);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let total = report.added + report.updated + report.unchanged + report.touched;
    if args.json {
        return super::print_json(&json!({
            "memories": total,
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.unchanged + report.touched,
            "bad": report.bad.len() + report.scan_issues.len(),
            "duplicate_ids": report.duplicates.len(),
            "elapsed_ms": elapsed_ms,
        }));
    }
    super::print_text(&format!(
        "{total} memories indexed: {} added, {} updated, {} removed, {} unchanged; {} bad ({elapsed_ms:.0} ms)\n",
        report.added,
        report.updated,
        report.removed,
        report.unchanged + report.touched,
        report.bad.len() + report.scan_issues.len(),
    ))
}
