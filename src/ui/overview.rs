//! The overview page (`/overview`): counts by type and layer (as `mem stats`), growth by month
//! of creation, the index and the embedding model's state (as `mem health` states it).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Response;
use maud::html;
use mem::MemoryType;
use mem::store::Layer;

use super::{Shared, html as ui};

/// How many months the growth chart shows.
const MONTHS: usize = 24;

/// `GET /overview`.
pub(super) async fn page(State(app): State<Shared>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        let reports = layers.refresh_for_recall(now, &mem::progress::Silent)?;
        let mut rows = Vec::new();
        let mut months: BTreeMap<String, usize> = BTreeMap::new();
        for (layer, report) in &reports {
            let Some(engine) = layers.engine(*layer) else { continue };
            let stats = engine.files.stats(report)?;
            // From the index's fast field, not every memory's record.
            for (month, n) in engine.files.tally()?.by_month {
                *months.entry(month).or_default() += n;
            }
            let model = crate::shared::words::embedding_line(&engine.vectors.status(&engine.files));
            rows.push((*layer, stats, model));
        }
        let growth: Vec<(String, usize)> =
            months.into_iter().rev().take(MONTHS).collect::<Vec<_>>().into_iter().rev().collect();
        let layered = rows.len() > 1;
        Ok(ui::page(
            "Overview",
            "/overview",
            html! {
                h1 { "Overview" }
                (ui::command("mem stats"))
                table.counts {
                    tr { @if layered { th { "layer" } } th { "memories" } @for kind in MemoryType::ALL { th { (kind.as_str()) } } th { "index" } th { "bad files" } }
                    @for (layer, stats, _) in &rows {
                        tr {
                            @if layered { td { (layer.as_str()) } }
                            td { (stats.memories) }
                            @for kind in MemoryType::ALL { td { (stats.by_type.get(&kind).copied().unwrap_or(0)) } }
                            td { (format!("{:.1} MB", stats.index_bytes as f64 / 1e6)) }
                            td { (stats.bad_files) }
                        }
                    }
                }
                h2 { "Growth by month" }
                (ui::columns(&growth, 640.0, 120.0))
                @if let (Some(first), Some(last)) = (growth.first(), growth.last()) {
                    p.axis { span { (first.0) } span { (last.0) } }
                }
                h2 { "Index and model" }
                @for (layer, stats, model) in &rows {
                    p { (if *layer == Layer::User { "user: " } else { "" }) code { (stats.root.display()) } }
                    pre { (model.trim_end()) }
                }
            },
        ))
    })
}
