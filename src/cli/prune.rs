//! `mem prune [--dry-run]` and `mem restore ID`.

use anyhow::Result;
use comfy_table::Cell;

use crate::shared::Globals;

/// Arguments of `mem prune`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List the candidates and why; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the candidates as JSON.
    #[arg(long)]
    json: bool,
    /// Retention below which a memory has faded (default from mem.toml: 0.05).
    #[arg(long)]
    threshold: Option<f64>,
    /// Only memories less important than this fade or go unused (default 8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=11))]
    importance_floor: Option<u8>,
    /// Memories younger than this many days never fade out (default 30).
    #[arg(long)]
    min_age_days: Option<f64>,
    /// Never used for this many days makes a candidate (default 180).
    #[arg(long)]
    unused_days: Option<f64>,
    /// Do not write the usage log into the files first (a dry run never does).
    #[arg(long)]
    no_sync: bool,
}

/// Arguments of `mem restore`.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// Id of the archived memory.
    id: String,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    // A dry run changes nothing: unsynced events are folded in memory instead.
    crate::shared::usage::sync_first(&mut engine, ctx.now, args.dry_run || args.no_sync)?;
    let mut rules = engine.files.config().prune.clone();
    if let Some(v) = args.threshold {
        rules.retention_threshold = v;
    }
    if let Some(v) = args.importance_floor {
        rules.importance_floor = v;
    }
    if let Some(v) = args.min_age_days {
        rules.min_age_days = v;
    }
    if let Some(v) = args.unused_days {
        rules.unused_days = v;
    }
    let checked = mem::Config { prune: rules.clone(), ..engine.files.config().clone() };
    checked.validate().map_err(super::parse::option_error)?;
    let candidates = engine.prune_candidates(&rules, ctx.now)?;
    if args.dry_run {
        if args.json {
            return crate::shared::output::print_json(&candidates);
        }
        if candidates.is_empty() {
            return crate::shared::output::print_text("nothing to prune\n");
        }
        let mut text = candidate_table(&candidates, ctx.now);
        let them = if candidates.len() == 1 { "it" } else { "them" };
        text.push_str(&format!(
            "\n{}; `mem prune` moves {them} to archive/ (nothing is deleted)\n",
            summary(&candidates)
        ));
        return crate::shared::output::print_text(&text);
    }
    let archived = engine.files.archive(&candidates, ctx.now)?;
    engine.refresh(ctx.now, &mem::progress::Silent)?;
    for refusal in &archived.refused {
        eprintln!("mem: warning: not archived: {refusal}");
    }
    if args.json {
        let moved: Vec<&str> = archived.moved.iter().map(|(id, _)| id.as_str()).collect();
        let candidates: Vec<_> =
            candidates.iter().filter(|c| moved.contains(&c.id.as_str())).collect();
        return crate::shared::output::print_json(&candidates);
    }
    let mut text = String::new();
    for (id, to) in &archived.moved {
        text.push_str(&format!("archived\t{id}\t{to}\n"));
    }
    text.push_str(&format!(
        "{} memories archived; `mem restore ID` brings one back\n",
        archived.moved.len()
    ));
    crate::shared::output::print_text(&text)
}

/// The candidates as a table that fits the terminal: title, type, importance, age, last use,
/// reasons, id.
fn candidate_table(candidates: &[mem::prune::Candidate], now: jiff::Timestamp) -> String {
    let mut table =
        crate::shared::output::table(&["title", "type", "imp", "age", "last use", "reasons", "id"]);
    // On a terminal, long cells wrap to its width; piped output is never wrapped.
    table.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
    for c in candidates {
        let reasons: Vec<String> = c.reasons.iter().map(|r| r.to_string()).collect();
        let last = match c.last_access {
            Some(at) => {
                format!(
                    "{} ago",
                    crate::shared::output::age(mem::score::age_days(
                        now.as_second(),
                        at.as_second()
                    ))
                )
            }
            None => "never".to_string(),
        };
        table.add_row(vec![
            Cell::new(mem::format::clip(&c.title, 48)),
            Cell::new(c.kind.as_str()),
            Cell::new(c.importance),
            Cell::new(crate::shared::output::age(c.age_days)),
            Cell::new(last),
            Cell::new(reasons.join("; ")),
            Cell::new(&c.id),
        ]);
    }
    crate::shared::output::render(&table)
}

/// "12 candidates: 1 superseded, 11 faded".
fn summary(candidates: &[mem::prune::Candidate]) -> String {
    let parts: Vec<String> = mem::prune::summary(candidates)
        .into_iter()
        .map(|(kind, n)| format!("{n} {}", kind.replace('_', " ")))
        .collect();
    let noun = if candidates.len() == 1 { "candidate" } else { "candidates" };
    format!("{} {noun}: {}", candidates.len(), parts.join(", "))
}

pub fn restore(args: RestoreArgs, ctx: &Globals) -> Result<()> {
    let mut engine = ctx.engine()?;
    let path = engine.files.restore(&args.id)?;
    engine.refresh(ctx.now, &mem::progress::Silent)?;
    crate::shared::output::print_text(&format!("restored\t{}\t{path}\n", args.id))
}
