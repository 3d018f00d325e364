//! A memory's page (`/memory/<id>`), what `mem show` prints and more: its Markdown rendered
//! (raw HTML shown as text), its front-matter, its uses and retrievals on a time line, its
//! retention curve `exp(−t/S)` from `created` to a year ahead (today, the prune threshold and
//! each reinforcement marked), its links, the code it cites with their verdicts; and the
//! POSTs `forget` and `used`, through the engine calls of `mem forget` and `mem used`.

use anyhow::Result;
use axum::Form;
use axum::extract::{Path, State};
use axum::response::Response;
use jiff::{Timestamp, ToSpan};
use maud::{Markup, html};
use mem::Memory;
use mem::decay::{Reinforcement, State as Usage};

use mem::store::Layer;

use super::{Shared, html as ui};

/// Points on a retention curve.
const SAMPLES: usize = 160;

/// `GET /memory/<id>`.
pub(super) async fn page(State(app): State<Shared>, Path(id): Path<String>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        layers.refresh_for_recall(now, &mem::progress::Silent)?;
        let (layer, path, memory) = super::find(&mut layers, &id)?;
        let layered = layers.layered();
        let engine = super::engine(&mut layers, layer);
        let decay = engine.files.config().decay.clone();
        let threshold = engine.files.config().prune.retention_threshold;
        // As `mem show`: the file's own usage when the usage log cannot be read.
        let (notice, base, events, since) = match engine.usage.view(&engine.files) {
            Ok(view) => {
                let (base, events) = view.history(&memory, &decay);
                (None, base, events, view.since)
            }
            Err(e) => (Some(e.to_string()), Usage::of(&memory, &decay), Vec::new(), None),
        };
        let state = events.iter().copied().fold(base, Usage::fold);
        let cites = citations(engine, &memory);
        let title = memory.title();
        Ok(ui::page(
            &title,
            "",
            html! {
                h1 { (title) }
                @if let Layer::Native(_) = layer {
                    // An agent's own memory: where it lives in the agent, not mem's mirror of it.
                    p.meta {
                        span.kind { (memory.kind().as_str()) } " " span.layer { (layer.as_str()) } " "
                        "importance " (memory.importance()) " · lives in " (crate::shared::words::lives_in(layer, &memory))
                        @if let Some(file) = memory.source() { " · " code { (file) } }
                        " · last changed in the agent " (memory.created().strftime("%Y-%m-%d"))
                    }
                } @else {
                    p.meta {
                        span.kind { (memory.kind().as_str()) } " "
                        @if layered { span.layer { (layer.as_str()) } " " }
                        "importance " (memory.importance()) " · " code { (path) }
                        " · created " (memory.created().strftime("%Y-%m-%d"))
                    }
                }
                @if let Some(notice) = notice { p.error { "usage log not read, showing the file's own usage: " (notice) } }
                @if let Some(at) = memory.invalid_at() { p.invalid { "invalid since " (at) } }
                section.curve {
                    h2 { "Retention" }
                    p { "R = " (format!("{:.3}", state.retention(now))) " now · strength S = "
                        (format!("{:.1}", state.effective_strength())) " days · R = exp(−t/S) · used "
                        (state.used) " times, retrieved " (state.retrieved) " times" }
                    p { (crate::shared::words::prune_figure(state.prune_retention(since, now), since)) }
                    (curve(&memory, (base, &events), since, now, threshold))
                    p.legend { "Blue: retention as prune counts it. Dashed: the prune threshold (" (threshold) "). Green: uses and the last access. Purple: usage observed from. Grey: retrievals. Red: today." }
                }
                section.body { (ui::markdown(without_title(memory.body(), &title))) }
                (links(&memory))
                @if !cites.is_empty() {
                    section.cites { h2 { "Code it cites" } ul { @for line in &cites { li { (line) } } } }
                }
                (timeline(&events))
                section.front {
                    h2 { "Front-matter" }
                    pre { (serde_norway::to_string(memory.front_matter()).unwrap_or_default()) }
                }
                (actions(&id, layer))
            },
        ))
    })
}

/// The retention curve from `created` to a year after `now`.
pub(super) fn curve(
    memory: &Memory,
    (base, events): (Usage, &[Reinforcement]),
    since: Option<Timestamp>,
    now: Timestamp,
    threshold: f64,
) -> Markup {
    let start = memory.created();
    let end = now.checked_add((365 * 24).hours()).unwrap_or(now);
    let end = if end <= start { start.checked_add(1.hours()).unwrap_or(start) } else { end };
    let span = (end.as_second() - start.as_second()) as f64;
    let x = |t: Timestamp| (t.as_second() - start.as_second()) as f64 / span;
    let mut points = Vec::with_capacity(SAMPLES + 1);
    for i in 0..=SAMPLES {
        let t = start.as_second() + (span * i as f64 / SAMPLES as f64) as i64;
        let t = Timestamp::from_second(t).unwrap_or(start);
        let state = events.iter().filter(|e| e.at() <= t).copied().fold(base, Usage::fold);
        // The figure prune uses, at each time: the one the card and the page give for today.
        points.push((x(t), state.prune_retention(since, t)));
    }
    let mut marks: Vec<(f64, String, &'static str)> = events
        .iter()
        .map(|e| match e {
            Reinforcement::Used { at } => (x(*at), format!("used {at}"), "used"),
            Reinforcement::Retrieved { at, rank } => {
                (x(*at), format!("retrieved at rank {rank}, {at}"), "retrieved")
            }
        })
        .collect();
    if base.last >= start && base.last <= end {
        marks.push((x(base.last), format!("last access {}", base.last), "used"));
    }
    if let Some(since) = since.filter(|&s| s >= start && s <= end) {
        marks.push((x(since), format!("usage observed from {since}"), "observed"));
    }
    // The curve's figure for today, on its mark: the one the card and the page give.
    let today = events.iter().filter(|e| e.at() <= now).copied().fold(base, Usage::fold);
    let today = today.prune_retention(since, now);
    marks.push((x(now), format!("today {now}: R = {today:.3}"), "today"));
    let label = format!("retention of {} from {start} to {end}", memory.id());
    let chart = ui::Chart {
        points: &points,
        marks: &marks,
        threshold: Some((threshold, format!("prune threshold {threshold}"))),
        label: &label,
    };
    html! {
        (chart.svg(640.0, 160.0))
        p.axis { span { (start.strftime("%Y-%m-%d")) } span { (end.strftime("%Y-%m-%d")) } }
    }
}

/// `body` without its first line when that is the `# title` the page's heading shows already.
pub(super) fn without_title<'a>(body: &'a str, title: &str) -> &'a str {
    let text = body.trim_start();
    match text.split_once('\n') {
        Some((first, rest)) if first.trim_end() == format!("# {title}") => rest,
        None if text.trim_end() == format!("# {title}") => "",
        _ => body,
    }
}

/// `derived_from`, `consolidated_into`, `superseded_by` as links.
fn links(memory: &Memory) -> Markup {
    let link = |id: &mem::MemoryId| html! { a href=(ui::href(&format!("/memory/{id}"))) { (id) } };
    html! {
        @if !memory.derived_from().is_empty() || memory.consolidated_into().is_some() || memory.superseded_by().is_some() {
            section.links {
                h2 { "Links" }
                ul {
                    @for id in memory.derived_from() { li { "derived from " (link(id)) } }
                    @if let Some(id) = memory.consolidated_into() { li { "consolidated into " (link(id)) } }
                    @if let Some(id) = memory.superseded_by() { li { "superseded by " (link(id)) } }
                }
            }
        }
    }
}

/// The uses and retrievals, newest first.
fn timeline(events: &[Reinforcement]) -> Markup {
    html! {
        section.timeline {
            h2 { "Uses and retrievals" }
            @if events.is_empty() { p { "None recorded beyond the file's " code { "access:" } " line." } }
            ol {
                @for e in events.iter().rev() {
                    @match e {
                        Reinforcement::Used { at } => li.used { (at.strftime("%Y-%m-%d %H:%M")) " used" },
                        Reinforcement::Retrieved { at, rank } => li.retrieved { (at.strftime("%Y-%m-%d %H:%M")) " retrieved at rank " (rank) },
                    }
                }
            }
        }
    }
}

/// The citations of a memory and their verdicts, as `mem verify` states them (none when the
/// root is not a project's or checks are off).
fn citations(engine: &mem::Engine, memory: &Memory) -> Vec<String> {
    if engine.code.repo(&engine.files).is_none() {
        return Vec::new();
    }
    // Its own record by its id: the page's time does not grow with the store.
    let Ok(Some(record)) = engine.files.record(memory.id().as_str()) else { return Vec::new() };
    let Some(Some(verdict)) = engine.code.verdicts(&engine.files, &[&record]).into_iter().next()
    else {
        return Vec::new();
    };
    verdict.cites.iter().map(|c| format!("{} {}", c.label(), c.what_happened())).collect()
}

/// The forms of `forget` and `used`, with their commands; an agent's own memory (in `layer`)
/// is changed in the agent or adopted, never forgotten here.
fn actions(id: &str, layer: Layer) -> Markup {
    html! {
        section.actions {
            h2 { "Actions" }
            form method="post" action=(ui::href(&format!("/memory/{id}/used"))) {
                button type="submit" { "It helped (used)" }
                (ui::command(&format!("mem used {id}")))
            }
            @if matches!(layer, Layer::Native(_)) {
                p.note { "An agent's own memory: change it in the agent, or adopt it to keep it as mem's." }
                (ui::command(&format!("mem adopt {id}")))
            } @else {
                form method="post" action=(ui::href(&format!("/memory/{id}/forget"))) {
                    input type="text" name="reason" placeholder="why it is no longer true";
                    button type="submit" { "Forget (mark invalid)" }
                    (ui::command(&format!("mem forget {id} --reason …")))
                }
            }
        }
    }
}

/// The form of `forget`.
#[derive(Debug, serde::Deserialize)]
pub(super) struct ForgetForm {
    #[serde(default)]
    reason: String,
}

/// `POST /memory/<id>/forget`: `mem forget ID --reason`.
pub(super) async fn forget(
    State(app): State<Shared>,
    Path(id): Path<String>,
    Form(form): Form<ForgetForm>,
) -> Response {
    change(&app, &id, true, |engine, now| {
        let reason = Some(form.reason.trim()).filter(|r| !r.is_empty());
        engine.files.forget(&id, reason, now).map(drop)
    })
}

/// `POST /memory/<id>/used`: `mem used ID`.
pub(super) async fn used(State(app): State<Shared>, Path(id): Path<String>) -> Response {
    change(&app, &id, false, |engine, now| {
        engine.used(std::slice::from_ref(&id), now, true).map(drop)
    })
}

/// Runs `f` on the engine of the layer holding `id`, then back to its page; `writes` (it changes
/// the memory's file) is refused for an agent's own memory, as the command refuses it.
fn change(
    app: &Shared,
    id: &str,
    writes: bool,
    f: impl FnOnce(&mut mem::Engine, Timestamp) -> mem::Result<()>,
) -> Response {
    let done = super::blocking(|| -> Result<()> {
        let now = app.now();
        let mut layers = app.layers();
        layers.refresh(now, &mem::progress::Silent)?;
        if writes {
            crate::shared::words::refuse_read_only(&mut layers, id)
                .map_err(|e| super::forbidden(format!("{e:#}")))?;
        }
        let (layer, _, _) = super::find(&mut layers, id)?;
        let engine = super::engine(&mut layers, layer);
        f(engine, now)?;
        engine.refresh(now, &mem::progress::Silent)?;
        Ok(())
    });
    match done {
        Ok(()) => super::see_other(&format!("/memory/{id}")),
        Err(e) => super::failed(&e),
    }
}
