//! `mem context`: a compact Markdown block for the start of an agent session, within a
//! character budget.

use anyhow::Result;
use mem::engine::ContextOptions;

use super::Context;

/// Arguments of `mem context`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also recall the memories for this task.
    #[arg(long)]
    task: Option<String>,
    /// Most characters to print; the block is cut between memories, never inside one.
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(200..))]
    budget: u64,
    /// How many key memories (procedural and semantic, most important first) to consider.
    #[arg(long, default_value_t = 12)]
    key: usize,
    /// Leave out the task's memories that match it weakly (strength below this, 0 to 1; see
    /// `mem recall --min-strength`).
    #[arg(long, default_value_t = mem::engine::DEFAULT_MIN_STRENGTH, value_name = "S", value_parser = super::parse_share)]
    min_strength: f64,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let options = ContextOptions {
        task: args.task,
        budget: args.budget as usize,
        key: args.key,
        min_strength: args.min_strength,
    };
    let context = engine.context(&options, ctx.now)?;
    if let Some(report) = &context.report {
        super::print_problems(report);
    }
    super::print_text(&context.text)
}
