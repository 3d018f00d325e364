//! `mem eval QUERIES.jsonl`: recall quality (Recall@5/10/20, nDCG@10, MRR) and latency of the
//! real recall path on a labelled query set.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use comfy_table::Cell;
use mem::RecallOptions;
use mem::config::{Fusion, RecallMode};
use mem::eval::{self, Summary};

use crate::shared::Globals;

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
    /// Recall mode(s) to evaluate, side by side: e.g. `--mode bm25,hybrid`. Default: the
    /// root's (hybrid when a model is configured, else bm25).
    #[arg(long, value_parser = super::parse::recall_mode_parser(), value_delimiter = ',')]
    mode: Vec<RecallMode>,
    /// Fusion of hybrid recall (overrides `[embed] fusion`).
    #[arg(long, value_parser = super::parse::fusion_parser())]
    fusion: Option<Fusion>,
    /// Weight of the cosine in convex fusion (overrides `[embed] vector_weight`).
    #[arg(long)]
    vector_weight: Option<f64>,
    /// `k` of reciprocal rank fusion (overrides `[embed] rrf_k`).
    #[arg(long)]
    rrf_k: Option<f64>,
    /// Least cosine of a vector-only candidate (overrides `[embed] min_cosine`).
    #[arg(long)]
    min_cosine: Option<f32>,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let text = std::fs::read_to_string(&args.queries)
        .with_context(|| format!("cannot read {}", args.queries.display()))?;
    let queries = eval::parse_queries(&text)
        .with_context(|| format!("{} is not a valid query file", args.queries.display()))?;
    let (mut engine, _) = ctx.refreshed_engine()?;
    for q in &queries {
        for id in &q.relevant {
            if let Err(e) = engine.files.get(id) {
                bail!("query {}: relevant id {id:?} cannot be used: {e}", q.qid);
            }
        }
    }
    let modes = if args.mode.is_empty() {
        vec![engine.vectors.recall_mode(&engine.files, None)]
    } else {
        args.mode
    };
    let mut embed = engine.files.config().embed.clone();
    embed.fusion = args.fusion.unwrap_or(embed.fusion);
    embed.vector_weight = args.vector_weight.unwrap_or(embed.vector_weight);
    embed.rrf_k = args.rrf_k.unwrap_or(embed.rrf_k);
    embed.min_cosine = args.min_cosine.unwrap_or(embed.min_cosine);
    engine.files.set_embed_config(embed).map_err(super::parse::option_error)?;
    if modes.iter().any(|m| *m != RecallMode::Bm25) {
        // Every vector first, so that latencies are those of a warm recall.
        let bar = crate::shared::bar::progress_bar_for("embedding", "memories");
        engine.vectors.sync(&engine.files, None, &bar)?;
    }
    let hidden = mem::progress::Silent;
    let mut reports = Vec::new();
    for mode in modes {
        let options = RecallOptions {
            limit: usize::from(args.limit),
            mode: Some(mode),
            ..Default::default()
        };
        let mut results = Vec::with_capacity(queries.len());
        for q in &queries {
            let started = crate::shared::bar::stopwatch();
            let mem::Recall { hits, report, .. } =
                engine.recall(&q.query, &options, ctx.now, &hidden)?;
            if let Some(warning) = report.warnings.first() {
                bail!("{} recall cannot run: {warning}", mode.as_str());
            }
            let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
            let ranked: Vec<String> = hits.into_iter().map(|h| h.record.id).collect();
            results.push(eval::score_query(q, &ranked, latency_ms));
        }
        reports.push((mode, eval::report(results)));
    }
    if args.json {
        if let [(_, report)] = reports.as_slice() {
            return crate::shared::output::print_json(report);
        }
        let by_mode: serde_json::Map<String, serde_json::Value> = reports
            .iter()
            .map(|(mode, report)| Ok((mode.as_str().to_string(), serde_json::to_value(report)?)))
            .collect::<Result<_>>()?;
        return crate::shared::output::print_json(&by_mode);
    }
    let several = reports.len() > 1;
    let mut header =
        vec!["queries", "n", "R@5", "R@10", "R@20", "nDCG@10", "MRR", "p50 ms", "p95 ms"];
    if several {
        header.insert(0, "mode");
    }
    let mut table = crate::shared::output::table(&header);
    for (mode, report) in &reports {
        let mut add = |name: &str, summary: &Summary| {
            let mut cells = row(name, summary);
            if several {
                cells.insert(0, Cell::new(mode.as_str()));
            }
            table.add_row(cells);
        };
        add("all", &report.overall);
        for (kind, summary) in &report.by_type {
            add(kind, summary);
        }
    }
    let mut text = crate::shared::output::render(&table);
    for (mode, report) in &reports {
        let misses: Vec<String> = report
            .queries
            .iter()
            .filter(|r| !r.missed.is_empty())
            .map(|r| format!("  {}: {}", r.qid, r.missed.join(", ")))
            .collect();
        if !misses.is_empty() {
            let label = if several { format!(" ({})", mode.as_str()) } else { String::new() };
            text.push_str(&format!("\nrelevant memories not in the top {}{label}:\n", args.limit));
            text.push_str(&misses.join("\n"));
            text.push('\n');
        }
    }
    crate::shared::output::print_text(&text)
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
