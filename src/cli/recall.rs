//! `mem recall QUERY`: the ranked top-k, as a table, with `--explain`, or as JSON.

use anyhow::Result;
use comfy_table::Cell;
use mem::config::RecallMode;
use mem::engine::LayeredRecall;
use mem::{Hit, MemoryType, RecallOptions};

use crate::shared::{Globals, team};

/// Arguments of `mem recall`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What you are working on, in your own words.
    #[arg(required = true, num_args = 1..)]
    query: Vec<String>,
    /// How many memories to return.
    #[arg(short = 'k', long = "limit", default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..))]
    limit: u16,
    /// Only memories of this type; repeat for several.
    #[arg(long = "type", short = 't', value_parser = super::parse::parse_type)]
    kinds: Vec<MemoryType>,
    /// Only memories with this tag; repeat to require several.
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// Show every component of every score.
    #[arg(long)]
    explain: bool,
    /// Print a JSON array (see docs/ranking.md for the fields).
    #[arg(long, conflicts_with = "explain")]
    json: bool,
    /// Also return invalidated memories, marked as such.
    #[arg(long)]
    include_invalid: bool,
    /// Recall what was valid at this time (RFC 3339 or YYYY-MM-DD): created by then and not yet
    /// invalidated.
    #[arg(long, value_name = "TIME", value_parser = super::parse::parse_now, conflicts_with = "include_invalid")]
    as_of: Option<jiff::Timestamp>,
    /// Do not record this recall in the usage log (`--as-of` never records).
    #[arg(long)]
    no_record: bool,
    /// Relevance from BM25, embedding cosine, or both fused. Default: `[embed] mode` (hybrid)
    /// when a model is configured, else bm25.
    #[arg(long, value_parser = super::parse::recall_mode_parser())]
    mode: Option<RecallMode>,
    /// Leave out memories that match the query weakly: strength (the share of the query's
    /// content words a memory holds, or its embedding cosine) below this, 0 to 1.
    #[arg(long, default_value_t = 0.0, value_name = "S", value_parser = super::parse::parse_share)]
    min_strength: f64,
    /// Only memories of this layer: project, user, or an agent's own memories (claude,
    /// codex, gemini: read only).
    #[arg(long, value_parser = super::parse::any_layer_parser())]
    layer: Option<mem::store::Layer>,
}

/// Runs `mem recall`; the exit status is 1 when nothing matches (grep's convention).
pub fn run(args: Args, ctx: &Globals) -> Result<u8> {
    let mut layers = ctx.layers_near(None)?;
    if args.layer.is_none_or(|l| l == mem::store::Layer::Project) {
        // The model loads while the index is refreshed.
        let project = layers.project();
        project.vectors.start_loading_model(&project.files, args.mode);
    }
    let record_retrievals = layers.project().files.config().usage.record_retrievals;
    let options = RecallOptions {
        kinds: args.kinds,
        tags: args.tags,
        limit: usize::from(args.limit),
        include_invalid: args.include_invalid,
        as_of: args.as_of,
        // Looking into the past is not a use of the memories now.
        record: !args.no_record && args.as_of.is_none() && record_retrievals,
        mode: args.mode,
        min_strength: args.min_strength,
    };
    let query = args.query.join(" ");
    let LayeredRecall { recall, user_report } = layers.recall_in(
        &query,
        &options,
        args.layer,
        ctx.now,
        &crate::shared::bar::progress_bar(),
    )?;
    crate::shared::output::print_problems(&recall.report);
    if let Some(report) = &user_report {
        crate::shared::output::print_problems(report);
    }
    // The team layer joins a recall of every layer, unfiltered but by type.
    let joins_team = args.layer.is_none()
        && options.tags.is_empty()
        && options.as_of.is_none()
        && !options.include_invalid;
    let mut team_hits = Vec::new();
    if joins_team {
        let project = layers.project();
        let answer = team::join_recall(project, &recall, &query, options.limit, &options.kinds);
        if let Some(answer) = answer {
            if let Some(problem) = &answer.problem {
                eprintln!("mem: team store: {problem}; answered from the local layers");
            }
            team_hits = answer.hits;
        }
    }
    let hits = &recall.hits;
    if hits.is_empty() && team_hits.is_empty() {
        eprintln!("mem: nothing matches {:?}", query);
    }
    if args.json {
        // Each hit names its layer, the project's when it is searched alone.
        let hits: Vec<Hit> = hits
            .iter()
            .cloned()
            .map(|h| Hit { layer: h.layer.or(Some(mem::store::Layer::Project)), ..h })
            .collect();
        let mut all: Vec<serde_json::Value> =
            hits.iter().map(serde_json::to_value).collect::<Result<_, _>>()?;
        all.extend(team_hits.iter().map(team::hit_json));
        crate::shared::output::print_json(&all)?;
        return Ok(if all.is_empty() { NOTHING } else { 0 });
    }
    if hits.is_empty() && team_hits.is_empty() {
        return Ok(NOTHING);
    }
    if hits.is_empty() {
        crate::shared::output::print_text(&team_table(&team_hits))?;
        return Ok(0);
    }
    let semantic = hits.iter().any(|h| h.semantic.is_some());
    let layered = layers.layered() || hits.iter().any(|h| h.layer.is_some_and(|l| !l.writable()));
    let mut header = vec!["#", "score", "type", "imp", "age", "title", "path"];
    if layered {
        header.push("layer");
    }
    if args.explain {
        let mut columns = vec!["relevance", "episode", "bm25"];
        if semantic {
            columns.extend(["cosine", "fused"]);
        }
        columns.extend(mem::score::FACTORS.iter().map(|f| f.name));
        header.splice(2..2, columns);
    }
    let mut table = crate::shared::output::table(&header);
    for hit in hits {
        let mut cells = row(hit, args.explain, semantic);
        if layered {
            cells.push(Cell::new(hit.layer.map_or("", |l| l.as_str())));
        }
        table.add_row(cells);
    }
    let mut text = crate::shared::output::render(&table);
    if args.explain {
        text.push_str(&code_lines(hits));
        text.push_str(&recall.explain(layers.project().files.config()));
        if layered {
            text.push_str(
                "two layers searched: each layer's scores are multiplied by its best strength \
                 over the best of both, project first on equal scores\n",
            );
        }
    }
    if !team_hits.is_empty() {
        text.push_str(&team_table(&team_hits));
    }
    crate::shared::output::print_text(&text)?;
    Ok(0)
}

/// The team layer's hits as a table after the local ones, each with its project and author.
fn team_table(hits: &[mem_team::TeamHit]) -> String {
    let header = ["#", "relevance", "type", "imp", "title", "project", "author"];
    let mut table = crate::shared::output::table(&header);
    for (i, (relevance, hit)) in hits.iter().map(|h| (h.relevance, &h.memory)).enumerate() {
        table.add_row(vec![
            Cell::new(i + 1),
            Cell::new(format!("{relevance:.3}")),
            Cell::new(&hit.kind),
            Cell::new(hit.importance),
            Cell::new(mem::format::clip(&mem::format::without_controls(&hit.title), 60)),
            Cell::new(mem::format::without_controls(&hit.project)),
            Cell::new(mem::format::without_controls(&hit.author)),
        ]);
    }
    format!(
        "team store ({} memories published by the team):\n{}",
        hits.len(),
        crate::shared::output::render(&table)
    )
}

/// What `--explain` says of the code each hit cites: a line per hit that cites any, then a
/// line per citation.
fn code_lines(hits: &[Hit]) -> String {
    let mut text = String::new();
    for hit in hits.iter().filter(|h| !h.cites.is_empty()) {
        let worst = hit.code_status.map_or("-", |s| s.name());
        text.push_str(&format!("#{} cites code ({worst}):\n", hit.rank));
        for cite in &hit.cites {
            text.push_str(&format!("  {}\n", cite.line()));
        }
    }
    text
}

/// The exit status of a recall that found nothing.
const NOTHING: u8 = 1;

fn row(hit: &Hit, explain: bool, semantic: bool) -> Vec<Cell> {
    let r = &hit.record;
    let mut cells = vec![
        Cell::new(hit.rank),
        Cell::new(format!("{:.3}", hit.score)),
        Cell::new(r.kind),
        Cell::new(r.importance),
        Cell::new(crate::shared::output::age(hit.age_days)),
        Cell::new(match &r.invalid_at {
            Some(at) => format!(
                "[invalid since {}] {}",
                at.strftime("%Y-%m-%d"),
                mem::format::clip(&r.title, 40)
            ),
            None => mem::format::clip(&r.title, 60),
        }),
        Cell::new(&r.path),
    ];
    if explain {
        let c = &hit.components;
        let mut columns = vec![
            Cell::new(format!("{:.3}", c.relevance)),
            Cell::new(format!("{:.3}", c.episode)),
            Cell::new(format!("{:.2}", hit.bm25)),
        ];
        if semantic {
            let s = hit.semantic;
            columns.push(Cell::new(
                s.and_then(|s| s.cosine).map_or("-".to_string(), |c| format!("{c:.3}")),
            ));
            columns.push(Cell::new(s.map_or("-".to_string(), |s| format!("{:.4}", s.fused))));
        }
        columns
            .extend(mem::score::FACTORS.iter().map(|f| Cell::new(format!("{:.3}", (f.value)(c)))));
        cells.splice(2..2, columns);
    }
    cells
}
