//! `mem stats`: counts by type, index size, bad files.

use anyhow::Result;

use crate::shared::Globals;

/// Arguments of `mem stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the counts as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (engine, report) = ctx.refreshed_engine()?;
    let stats = engine.files.stats(&report)?;
    if args.json {
        return crate::shared::output::print_json(&stats);
    }
    let by_type: Vec<String> = stats.by_type.iter().map(|(t, n)| format!("{t} {n}")).collect();
    crate::shared::output::print_text(&format!(
        "root           {}\nmemories       {} ({})\nindex          {:.1} KiB in .mem/\nbad files      {}\nduplicate ids  {}\n",
        stats.root.display(),
        stats.memories,
        by_type.join(", "),
        stats.index_bytes as f64 / 1024.0,
        stats.bad_files,
        stats.duplicate_ids,
    ))
}
