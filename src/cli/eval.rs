//! `mem eval QUERIES.jsonl`: recall quality (Recall@5/10/20, nDCG@10, MRR) and latency of the
//! real recall path on a labelled query set.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use comfy_table::Cell;
use mem::RecallOptions;
use mem::eval::{self, Summary};

use super::Context;

/// Arguments of `mem eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON lines: {"qid", "query", "relevant": [ids], "type" (optional)}.
    queries: PathBuf,
    /// How many memories each recall returns.
    #[arg(short = 'k', long = "limit", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..))]
    limit: u16,
    /// Print the whole report (overall, by type, every query) as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("cannot read {}", args.queries.display()))?;
    let queries = eval::parse_queries(&text)
        .with_context(|| format!("{} is not a valid query file", args.queries.display()))?;
    let (mut engine, _) = ctx.refreshed_engine()?;
    for q in &queries {
        for id in &q.relevant {
            if let Err(e) = engine.get(id) {
                bail!("query {}: relevant id {id:?} cannot be used: {e}", q.qid);
            }
        }
    }
    let options = RecallOptions { limit: usize::from(args.limit), ..Default::default() };
    let hidden = indicatif::ProgressBar::hidden();
    let mut results = Vec::with_capacity(queries.len());
    for q in &queries {
        let started = super::stopwatch();
        let (hits, _) = engine.recall(&q.query, &options, ctx.now, &hidden)?;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let ranked: Vec<String> = hits.into_iter().map(|h| h.record.id).collect();
        results.push(eval::score_query(q, &ranked, latency_ms));
    }
    let report = eval::report(results);
    if args.json {
        return super::print_json(&report);
    }
    let mut table = super::table(&[
        "queries", "n", "R@5", "R@10", "R@20", "nDCG@10", "MRR", "p50 ms", "p95 ms",
    ]);
    table.add_row(row("all", &report.overall));
    for (kind, summary) in &report.by_type {
        table.add_row(row(kind, summary));
    }
    let mut text = super::render(&table);
    let misses: Vec<String> = report
        .queries
        .iter()
        .filter(|r| !r.missed.is_empty())
        .map(|r| format!("  {}: {}", r.qid, r.missed.join(", ")))
        .collect();
    if !misses.is_empty() {
        text.push_str(&format!("\nrelevant memories not in the top {}:\n", args.limit));
        text.push_str(&misses.join("\n"));
        text.push('\n');
    }
    super::print_text(&text)
}

fn row(name: &str, s: &Summary) -> Vec<Cell> {
    vec![
        Cell::new(name),
        Cell::new(s.queries),
        Cell::new(format!("{:.3}", s.recall_at_5)),
        Cell::new(format!("{:.3}", s.recall_at_10)),
        Cell::new(format!("{:.3}", s.recall_at_20)),
        Cell::new(format!("{:.3}", s.ndcg_at_10)),
        Cell::new(format!("{:.3}", s.mrr)),
        Cell::new(format!("{:.1}", s.latency_p50_ms)),
        Cell::new(format!("{:.1}", s.latency_p95_ms)),
    ]
}
