//! `mem show ID`: one memory, its fields and its body.

use anyhow::Result;
use serde_json::json;

use super::Context;

/// Arguments of `mem show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory's id.
    id: String,
    /// Print the fields, the whole front-matter and the body as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let (engine, _) = ctx.refreshed_engine()?;
    let (path, memory) = engine.get(&args.id)?;
    let age_days = mem::score::age_days(ctx.now.as_second(), memory.last_access().as_second());
    if args.json {
        return super::print_json(&json!({
            "id": memory.id(),
            "path": path,
            "title": memory.title(),
            "type": memory.kind(),
            "importance": memory.importance(),
            "created": memory.created(),
            "last_access": memory.last_access(),
            "access_count": memory.access().map(|a| a.count).unwrap_or(0),
            "tags": memory.tags(),
            "source": memory.source(),
            "front_matter": memory.front_matter(),
            "body": memory.body(),
        }));
    }
    let mut text = String::new();
    text.push_str(&format!("id          {}\n", memory.id()));
    text.push_str(&format!("path        {path}\n"));
    text.push_str(&format!("title       {}\n", memory.title()));
    text.push_str(&format!("type        {}\n", memory.kind()));
    text.push_str(&format!("importance  {}\n", memory.importance()));
    text.push_str(&format!("created     {}\n", memory.created()));
    text.push_str(&format!(
        "last access {} ({} ago, {} accesses)\n",
        memory.last_access(),
        super::age(age_days),
        memory.access().map(|a| a.count).unwrap_or(0)
    ));
    if !memory.tags().is_empty() {
        text.push_str(&format!("tags        {}\n", memory.tags().join(", ")));
    }
    if let Some(source) = memory.source() {
        text.push_str(&format!("source      {source}\n"));
    }
    text.push('\n');
    text.push_str(memory.body());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    super::print_text(&text)
}
