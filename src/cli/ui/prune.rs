//! The prune review (`/prune`): the candidates `mem prune --dry-run` gives (the same engine
//! call, [`mem::Engine::prune_candidates`], with the root's `[prune]` rules), grouped by
//! reason, each with its retention curve; the selected ones archived by a POST that does what
//! `mem prune` does (the usage log written into the files first, then moved to `archive/`,
//! never deleted); and the archive, each memory with a POST that does what `mem restore` does.

use anyhow::Result;
use axum::Form;
use axum::extract::State;
use axum::response::Response;
use maud::html;
use mem::prune::Candidate;

use super::{Shared, html as ui};

/// `GET /prune`.
pub(super) async fn page(State(app): State<Shared>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        engine.refresh(now, &mem::progress::Silent)?;
        let rules = engine.config().prune.clone();
        let decay = engine.config().decay.clone();
        let candidates = engine.prune_candidates(&rules, now)?;
        let view = engine.usage_view()?;
        let mut groups: Vec<(&'static str, Vec<&Candidate>)> = Vec::new();
        for c in &candidates {
            let kind = c.reasons.first().map_or("other", |r| r.kind());
            match groups.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, list)) => list.push(c),
                None => groups.push((kind, vec![c])),
            }
        }
        let archived = engine.archived()?;
        let mut curves = std::collections::HashMap::with_capacity(candidates.len());
        for c in &candidates {
            curves.insert(
                c.id.as_str(),
                match engine.get(&c.id) {
                    Ok((_, memory)) => {
                        let (base, events) = view.history(&memory, &decay);
                        Some(super::memory::curve(
                            &memory,
                            base,
                            &events,
                            now,
                            rules.retention_threshold,
                        ))
                    }
                    Err(_) => None,
                },
            );
        }
        let curve_of = |c: &Candidate| curves.get(c.id.as_str()).cloned().flatten();
        Ok(ui::page(
            "Prune review",
            "/prune",
            html! {
                h1 { "Prune review" }
                p { (candidates.len()) " candidates. Archiving moves a memory to " code { "archive/" }
                    " (nothing is deleted); " code { "mem restore ID" } " brings it back." }
                (ui::command("mem prune --dry-run"))
                form id="archive" method="post" action=(ui::href("/prune/archive")) {
                    @for (kind, list) in &groups {
                        section.group {
                            h2 { (kind.replace('_', " ")) " (" (list.len()) ")" }
                            @for c in list {
                                div.candidate {
                                    label {
                                        input type="checkbox" name="id" value=(c.id);
                                        " " a href=(ui::href(&format!("/memory/{}", c.id))) { (c.title) }
                                    }
                                    p.meta { (c.kind.as_str()) " · importance " (c.importance) " · R = "
                                        (format!("{:.3}", c.retention)) " · used " (c.used) " · "
                                        (c.reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("; ")) }
                                    @if let Some(curve) = curve_of(c) { (curve) }
                                }
                            }
                        }
                    }
                    @if !candidates.is_empty() {
                        button id="select-all" type="button" { "Select all" } " "
                        button type="submit" { "Archive the selected" }
                        (ui::command("mem prune (for all of them)"))
                    }
                }
                section.archive {
                    h2 { "Archive (" (archived.len()) ")" }
                    @for (rel, memory) in &archived {
                        form.restore method="post" action=(ui::href("/prune/restore")) {
                            input type="hidden" name="id" value=(memory.id());
                            span { (memory.title()) " " code { "archive/" (rel) } " " }
                            button type="submit" { "Restore" }
                            (ui::command(&format!("mem restore {}", memory.id())))
                        }
                    }
                }
            },
        ))
    })
}

/// `POST /prune/archive` with `id=…` repeated: `mem prune` for the selected candidates.
pub(super) async fn archive(
    State(app): State<Shared>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let done = (|| -> Result<()> {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        engine.refresh(now, &mem::progress::Silent)?;
        super::super::sync::sync_first(engine, now, false)?;
        let rules = engine.config().prune.clone();
        let chosen: Vec<&str> =
            fields.iter().filter(|(k, _)| k == "id").map(|(_, v)| v.as_str()).collect();
        let candidates: Vec<Candidate> = engine
            .prune_candidates(&rules, now)?
            .into_iter()
            .filter(|c| chosen.contains(&c.id.as_str()))
            .collect();
        let archived = engine.archive(&candidates, now)?;
        engine.refresh(now, &mem::progress::Silent)?;
        if let Some(refusal) = archived.refused.first() {
            anyhow::bail!("not archived: {refusal}");
        }
        Ok(())
    })();
    match done {
        Ok(()) => super::see_other("/prune"),
        Err(e) => super::failed(&e),
    }
}

/// The form of a restore.
#[derive(Debug, serde::Deserialize)]
pub(super) struct RestoreForm {
    id: String,
}

/// `POST /prune/restore`: `mem restore ID`.
pub(super) async fn restore(State(app): State<Shared>, Form(form): Form<RestoreForm>) -> Response {
    let done = (|| -> Result<()> {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        engine.restore(&form.id)?;
        engine.refresh(now, &mem::progress::Silent)?;
        Ok(())
    })();
    match done {
        Ok(()) => super::see_other("/prune"),
        Err(e) => super::failed(&e),
    }
}
