//! `mem used ID...`: record that memories helped.

use anyhow::Result;

use super::Globals;

/// Arguments of `mem used`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Ids of the memories that helped.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Only log the events; leave the files alone until `mem sync`.
    #[arg(long)]
    no_sync: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let (paths, report) = engine.used(&args.ids, ctx.now, !args.no_sync)?;
    for failure in &report.failed {
        eprintln!("mem: warning: recorded, but not written to the file yet: {failure}");
    }
    let mut text = String::new();
    for (id, path) in args.ids.iter().zip(paths) {
        text.push_str(&format!("used\t{id}\t{path}\n"));
    }
    super::output::print_text(&text)
}
