//! `mem list`: memories, newest first.

use anyhow::Result;
use comfy_table::Cell;
use mem::MemoryType;

use crate::shared::Globals;

/// Arguments of `mem list`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only memories of this type; repeat for several.
    #[arg(long = "type", short = 't', value_parser = super::parse::parse_type)]
    kinds: Vec<MemoryType>,
    /// Only memories with this tag; repeat to require several.
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// At most this many (newest first).
    #[arg(short = 'n', long)]
    limit: Option<usize>,
    /// Print a JSON array.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (engine, _) = ctx.refreshed_engine()?;
    let mut records = engine.files.list(&args.kinds, &args.tags)?;
    if let Some(limit) = args.limit {
        records.truncate(limit);
    }
    if args.json {
        return crate::shared::output::print_json(&records);
    }
    if records.is_empty() {
        return Ok(());
    }
    let mut table =
        crate::shared::output::table(&["id", "type", "imp", "created", "title", "path"]);
    for r in &records {
        table.add_row(vec![
            Cell::new(&r.id),
            Cell::new(r.kind),
            Cell::new(r.importance),
            Cell::new(r.created.strftime("%Y-%m-%d")),
            Cell::new(mem::format::clip(&r.title, 60)),
            Cell::new(&r.path),
        ]);
    }
    crate::shared::output::print_text(&crate::shared::output::render(&table))
}
