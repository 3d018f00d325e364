//! The search page (`/?q=…&type=…&tag=…&layer=…`): the ranking of `mem recall`, by the same
//! engine call ([`Layers::recall`]), rendered on the server (the page works without
//! JavaScript; the script only searches as you type). Each hit shows its score's factors as
//! bars; `--explain`'s sentences open on demand. Looking is not a use: the page records no
//! retrieval (as `mem recall --no-record`). A search of every layer without tags is joined by
//! the team store's hits when one is configured, after the local ones, as `mem recall` joins
//! them (`team.rs`).

use anyhow::Result;
use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};
use mem::engine::{LayeredRecall, Layers};
use mem::store::Layer;
use mem::{MemoryType, RecallOptions};

use super::{Shared, html as ui};

/// The search form's fields.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Params {
    #[serde(default)]
    q: String,
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    layer: String,
}

/// How many hits a search shows.
const LIMIT: usize = 20;

/// `GET /`: the form, and the hits when there is a query.
pub(super) async fn page(State(app): State<Shared>, Query(params): Query<Params>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        let results = if params.q.trim().is_empty() {
            first_screen(&mut layers, now)?
        } else {
            hits(&mut layers, &params, now)?
        };
        // Every layer searched here: the project's, the user's, each agent's own.
        let mut names = vec![Layer::Project.as_str()];
        if layers.engine(Layer::User).is_some() {
            names.push(Layer::User.as_str());
        }
        names.extend(layers.natives().map(|l| l.as_str()));
        let layered = names.len() > 1;
        Ok(ui::page(
            "Search",
            "/",
            html! {
                form id="search" method="get" action=(ui::href("/")) {
                    label.hidden for="q" { "Search the memories" }
                    input id="q" type="search" name="q" value=(params.q) placeholder="what are you working on?" autofocus;
                    select name="type" {
                        option value="" { "any type" }
                        @for kind in MemoryType::ALL {
                            option value=(kind.as_str()) selected[params.kind == kind.as_str()] { (kind.as_str()) }
                        }
                    }
                    input type="text" name="tag" value=(params.tag) placeholder="tag";
                    @if layered {
                        select name="layer" {
                            option value="" { "every layer" }
                            @for name in &names {
                                option value=(name) selected[params.layer == *name] { (name) }
                            }
                        }
                    }
                    button type="submit" { "Recall" }
                }
                div id="results" { (results) }
            },
        ))
    })
}

/// How many memories the first screen lists as the most recent, and as the most used.
const FIRST: usize = 10;

/// What the search page shows before a query: how many memories each layer holds, by type
/// (as `mem stats` counts them), then the most recent and the most used (uses in the usage log)
/// of every layer that are neither invalid nor superseded, each linked. Read from the index's
/// counts and fast fields and the usage log, not from every memory.
fn first_screen(layers: &mut Layers, now: jiff::Timestamp) -> Result<Markup> {
    let mut all: Vec<Layer> = vec![Layer::Project];
    if layers.engine(Layer::User).is_some() {
        all.push(Layer::User);
    }
    all.extend(layers.natives());
    let valid = |r: &mem::index::Record| {
        r.invalid_at.is_none_or(|at| at > now) && r.superseded_by.is_none()
    };
    let mut counts: Vec<(Layer, Vec<usize>)> = Vec::new();
    let mut recent: Vec<(Layer, mem::index::Record)> = Vec::new();
    let mut used: Vec<(Layer, mem::index::Record, u64)> = Vec::new();
    for layer in all {
        let Some(engine) = layers.engine(layer) else { continue };
        let tally = engine.files.tally()?;
        let by_kind =
            MemoryType::ALL.iter().map(|k| tally.by_type.get(k).copied().unwrap_or(0)).collect();
        counts.push((layer, by_kind));
        // Enough of the newest that the valid ones fill the list.
        let newest = engine.files.newest(FIRST * 4)?;
        recent.extend(newest.into_iter().filter(|r| valid(r)).take(FIRST).map(|r| (layer, r)));
        let mut uses: Vec<(String, u64)> = engine
            .usage
            .view(&engine.files)
            .map(|v| v.use_counts())
            .unwrap_or_default()
            .into_iter()
            .collect();
        uses.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut taken = 0;
        for (id, n) in uses {
            if taken == FIRST {
                break;
            }
            if let Ok(Some(r)) = engine.files.record(&id).map(|r| r.filter(|r| valid(r))) {
                used.push((layer, r, n));
                taken += 1;
            }
        }
    }
    recent.sort_by(|a, b| b.1.created.cmp(&a.1.created).then(a.1.id.cmp(&b.1.id)));
    recent.truncate(FIRST);
    used.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.last_access.cmp(&a.1.last_access)));
    used.truncate(FIRST);
    let item = |layer: &Layer, r: &mem::index::Record, what: String| {
        html! {
            li {
                a href=(ui::href(&format!("/memory/{}", r.id))) { (r.title) }
                " " span.meta { (r.kind.as_str()) " · " (layer.as_str()) " · " (what) }
            }
        }
    };
    Ok(html! {
        section.first {
            h2 { "What mem remembers" }
            table.layers {
                tr { th { "layer" } @for k in MemoryType::ALL { th { (k.as_str()) } } th { "all" } }
                @for (layer, by_kind) in &counts {
                    tr {
                        td { (layer.as_str()) }
                        @for n in by_kind { td { (n) } }
                        td { (by_kind.iter().sum::<usize>()) }
                    }
                }
            }
            h2 { "Most recent" }
            @if recent.is_empty() { p.empty { "No memory yet: " code { "mem add" } " writes one." } }
            ol.first { @for (layer, r) in &recent { (item(layer, r, format!("created {}", r.created.strftime("%Y-%m-%d")))) } }
            h2 { "Most used" }
            @if used.is_empty() { p.empty { "None used yet: " code { "mem used ID" } " (or the MCP tool " code { "used" } ") records a use." } }
            ol.first { @for (layer, r, n) in &used { (item(layer, r, format!("used {n} times"))) } }
        }
    })
}

/// The hits of `params` as `mem recall` ranks them, with their factors and the explanation.
fn hits(layers: &mut Layers, params: &Params, now: jiff::Timestamp) -> Result<Markup> {
    let kinds = match params.kind.as_str() {
        "" => Vec::new(),
        kind => vec![kind.parse::<MemoryType>().map_err(super::bad_parameter)?],
    };
    let tags = params.tag.split_whitespace().map(str::to_string).collect();
    let options = RecallOptions { kinds, tags, limit: LIMIT, record: false, ..Default::default() };
    // One layer alone, as `mem recall --layer` searches it.
    let only = match params.layer.as_str() {
        "" => None,
        name => {
            let natives: Vec<Layer> = layers.natives().collect();
            let all = [Layer::Project, Layer::User].into_iter().chain(natives);
            Some(all.into_iter().find(|l| l.as_str() == name).ok_or_else(|| {
                super::bad_parameter(format!("no layer {name:?} is searched here"))
            })?)
        }
    };
    let LayeredRecall { recall, .. } =
        layers.recall_in(&params.q, &options, only, now, &mem::progress::Silent)?;
    let shown: Vec<&mem::Hit> = recall.hits.iter().collect();
    // The team store joins a search of every layer without tags, as `mem recall`'s.
    let team = if only.is_none() && options.tags.is_empty() {
        let project = layers.project();
        crate::shared::team::join_recall(project, &recall, &params.q, LIMIT, &options.kinds)
    } else {
        None
    };
    let team_hits = team.as_ref().map_or(0, |t| t.hits.len());
    let explain = recall.explain(layers.project().files.config());
    // A hybrid or vector recall that ranked with BM25 alone says so.
    let fallback = recall.fallback.clone();
    let mut command = format!("mem recall {}", shell_word(&params.q));
    if !params.kind.is_empty() {
        command.push_str(&format!(" --type {}", params.kind));
    }
    for tag in params.tag.split_whitespace() {
        command.push_str(&format!(" --tag {}", shell_word(tag)));
    }
    if let Some(layer) = only {
        command.push_str(&format!(" --layer {}", layer.as_str()));
    }
    command.push_str(" --no-record --explain");
    Ok(html! {
        @if let Some(why) = &fallback {
            p.notice { "Ranked with BM25 alone, not the configured recall with the model: " (why) }
        }
        @if shown.is_empty() && team_hits == 0 {
            p.empty { "Nothing matches." }
        }
        ol.hits {
            @for hit in &shown {
                li.hit {
                    div.head {
                        span.score { (format!("{:.3}", hit.score)) }
                        a.title href=(ui::href(&format!("/memory/{}", hit.record.id))) { (hit.record.title) }
                        span.kind { (hit.record.kind.as_str()) }
                        @if let Some(layer) = hit.layer { span.layer { (layer.as_str()) } }
                        @if let Some(at) = hit.record.invalid_at {
                            span.invalid { "invalid since " (at.strftime("%Y-%m-%d")) }
                        }
                        @if let Some(status) = hit.code_status { span.code { "code: " (status.name()) } }
                    }
                    p.snippet { (hit.snippet) }
                    table.factors {
                        tr { td { "relevance" } td { (ui::bar(hit.components.relevance, 120)) } td { (format!("{:.3}", hit.components.relevance)) } }
                        @for factor in mem::score::FACTORS {
                            @let value = (factor.value)(&hit.components);
                            tr { td { (factor.name) } td { (ui::bar(value, 120)) } td { (format!("{value:.3}")) } }
                        }
                        // The layer's scale multiplies the score these factors make.
                        @if let Some(scale) = hit.layer_scale.filter(|s| *s < 1.0) {
                            tr.scale { td { "× layer scale" } td { (ui::bar(scale, 120)) } td { (format!("{scale:.3}")) } }
                        }
                    }
                    p.path { (hit.record.path) }
                }
            }
        }
        @if let Some(team) = &team { (super::team::hits(team)) }
        @if !explain.is_empty() {
            details.explain {
                summary { "Why this order (" code { "--explain" } ")" }
                pre { (explain) }
            }
        }
        (ui::command(&command))
    })
}

/// `word` quoted for a shell when it needs it (as `mem setup` quotes its paths).
pub(super) fn shell_word(word: &str) -> String {
    crate::setup::command::shell_word(std::path::Path::new(word)).unwrap_or_default()
}
