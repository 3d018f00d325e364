//! The prune review (`/prune?reason=…&page=…&archived=…`): the candidates `mem prune --dry-run`
//! gives (the same engine call, [`mem::Engine::prune_candidates`], with the root's `[prune]`
//! rules), counted by reason, one reason's shown a page at a time, each with its retention
//! curve; the selected ones, or all of a reason, archived by a POST that does what `mem prune`
//! does (the usage log written into the files first, then moved to `archive/`, never deleted);
//! and the archive, a page at a time, the selected memories or all of them brought back by a
//! POST that does what `mem restore` does.

use anyhow::Result;
use axum::Form;
use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};
use mem::prune::Candidate;

use super::{Shared, html as ui};

/// How many candidates, or archived memories, a page shows.
const PAGE: usize = 50;

/// The review's query: which reason's candidates, and which page of them and of the archive.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Params {
    #[serde(default)]
    reason: String,
    #[serde(default)]
    page: Option<usize>,
    #[serde(default)]
    archived: Option<usize>,
}

/// The reason a candidate is listed under: its safest.
fn kind_of(c: &Candidate) -> &'static str {
    c.reasons.first().map_or("other", |r| r.kind())
}

/// Page `page` (from 1) of `items`, and how many pages there are (at least 1); a page past the
/// last is a bad parameter.
fn page_of<T>(items: &[T], page: Option<usize>) -> Result<(&[T], usize, usize)> {
    let pages = items.len().div_ceil(PAGE).max(1);
    let page = page.unwrap_or(1);
    if page == 0 || page > pages {
        return Err(super::bad_parameter(format!("no page {page}: there are {pages}")));
    }
    let start = (page - 1) * PAGE;
    Ok((&items[start..(start + PAGE).min(items.len())], page, pages))
}

/// The links to the previous and next pages, `link` making each one's address.
fn pager(page: usize, pages: usize, link: impl Fn(usize) -> String) -> Markup {
    html! {
        @if pages > 1 {
            p.pager {
                @if page > 1 { a href=(link(page - 1)) { "← previous" } " " }
                "page " (page) " of " (pages)
                @if page < pages { " " a href=(link(page + 1)) { "next →" } }
            }
        }
    }
}

/// `GET /prune`.
pub(super) async fn page(State(app): State<Shared>, Query(params): Query<Params>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        engine.refresh(now, &mem::progress::Silent)?;
        let rules = engine.files.config().prune.clone();
        let decay = engine.files.config().decay.clone();
        let candidates = engine.prune_candidates_untitled(&rules, now)?;
        let mut groups: Vec<(&'static str, Vec<&Candidate>)> = Vec::new();
        for c in &candidates {
            match groups.iter_mut().find(|(k, _)| *k == kind_of(c)) {
                Some((_, list)) => list.push(c),
                None => groups.push((kind_of(c), vec![c])),
            }
        }
        let shown = match params.reason.as_str() {
            "" => groups.first(),
            reason => Some(groups.iter().find(|(k, _)| *k == reason).ok_or_else(|| {
                super::bad_parameter(format!("no candidate is listed for {reason:?}"))
            })?),
        };
        let (kind, list) = shown.map_or(("", &[][..]), |(k, l)| (*k, l.as_slice()));
        // How many the shown reason lists in all, and how it reads.
        let (listed, reason) = (list.len(), kind.replace('_', " "));
        let (list, page, pages) = page_of(list, params.page)?;
        // Only the shown page's titles and archived files are read.
        let mut list: Vec<Candidate> = list.iter().map(|c| (*c).clone()).collect();
        engine.files.add_titles(&mut list)?;
        let mut archived = engine.files.archived_paths();
        archived.sort();
        let (archived_shown, archived_page, archived_pages) = page_of(&archived, params.archived)?;
        let archived_shown = engine.files.archived_at(archived_shown)?;
        // Curves for the candidates shown only.
        let view = engine.usage.view(&engine.files)?;
        let mut curves = Vec::with_capacity(list.len());
        for c in &list {
            curves.push(engine.files.get(&c.id).ok().map(|(_, memory)| {
                let (base, events) = view.history(&memory, &decay);
                let threshold = rules.retention_threshold;
                super::memory::curve(&memory, (base, &events), view.since, now, threshold)
            }));
        }
        let address = |reason: &str, page: usize, archived: usize| {
            ui::href(&format!("/prune?reason={reason}&page={page}&archived={archived}"))
        };
        Ok(ui::page(
            "Prune review",
            "/prune",
            html! {
                h1 { "Prune review" }
                p { (candidates.len()) " candidates. Archiving moves a memory to " code { "archive/" }
                    " (nothing is deleted); " code { "mem restore ID" } " brings it back." }
                (ui::command("mem prune --dry-run"))
                @if !groups.is_empty() {
                    ul.reasons {
                        @for (k, l) in &groups {
                            li {
                                @if *k == kind { strong { (k.replace('_', " ")) " (" (l.len()) ")" } }
                                @else { a href=(address(k, 1, archived_page)) { (k.replace('_', " ")) " (" (l.len()) ")" } }
                            }
                        }
                    }
                }
                form id="archive" method="post" action=(ui::href("/prune/archive")) {
                    @if !list.is_empty() {
                        section.group {
                            h2 { (reason) " (" (listed) ")" }
                            @for (c, curve) in list.iter().zip(&curves) {
                                div.candidate {
                                    label {
                                        input type="checkbox" name="id" value=(c.id);
                                        " " a href=(ui::href(&format!("/memory/{}", c.id))) { (c.title) }
                                    }
                                    p.meta { (c.kind.as_str()) " · importance " (c.importance) " · R = "
                                        (format!("{:.3}", c.retention)) " · used " (c.used) " · "
                                        (c.reasons.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("; ")) }
                                    @if let Some(curve) = curve { (curve) }
                                }
                            }
                            (pager(page, pages, |p| address(kind, p, archived_page)))
                        }
                        // The script's one button: shown only when the script runs.
                        button id="select-all" type="button" hidden { "Select all on this page" } " "
                        button type="submit" { "Archive the selected" } " "
                        button type="submit" name="all" value=(kind) {
                            "Archive all " (listed) " " (reason)
                        }
                        (ui::command("mem prune (for all of them)"))
                    }
                }
                section.archive {
                    h2 { "Archive (" (archived.len()) ")" }
                    @if !archived.is_empty() {
                        form id="restore" method="post" action=(ui::href("/prune/restore")) {
                            @for (rel, memory) in &archived_shown {
                                label.restore {
                                    input type="checkbox" name="id" value=(memory.id());
                                    " " span { (memory.title()) " " code { "archive/" (rel) } }
                                }
                            }
                            (pager(archived_page, archived_pages, |p| address(kind, page, p)))
                            button type="submit" { "Restore the selected" } " "
                            button type="submit" name="all" value="archive" { "Restore all " (archived.len()) }
                            (ui::command("mem restore ID …"))
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
    let done = super::blocking(|| -> Result<()> {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        engine.refresh(now, &mem::progress::Silent)?;
        crate::shared::usage::sync_first(engine, now, false)?;
        let rules = engine.files.config().prune.clone();
        let chosen: std::collections::HashSet<&str> =
            fields.iter().filter(|(k, _)| k == "id").map(|(_, v)| v.as_str()).collect();
        // "Archive all" of a reason: every candidate listed under it.
        let all = fields.iter().find(|(k, _)| k == "all").map(|(_, v)| v.as_str());
        let candidates: Vec<Candidate> = engine
            .prune_candidates_untitled(&rules, now)?
            .into_iter()
            .filter(|c| all.map_or(chosen.contains(c.id.as_str()), |kind| kind_of(c) == kind))
            .collect();
        let archived = engine.files.archive(&candidates, now)?;
        engine.refresh(now, &mem::progress::Silent)?;
        if let Some(refusal) = archived.refused.first() {
            anyhow::bail!("not archived: {refusal}");
        }
        Ok(())
    });
    match done {
        Ok(()) => super::see_other("/prune"),
        Err(e) => super::failed(&e),
    }
}

/// `POST /prune/restore` with `id=…` repeated, or `all=archive`: `mem restore ID …` for the
/// selected archived memories, or for every one.
pub(super) async fn restore(
    State(app): State<Shared>,
    Form(fields): Form<Vec<(String, String)>>,
) -> Response {
    let done = super::blocking(|| -> Result<()> {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        let ids: Vec<String> = if fields.iter().any(|(k, v)| k == "all" && v == "archive") {
            engine.files.archived()?.into_iter().map(|(_, m)| m.id().to_string()).collect()
        } else {
            fields.iter().filter(|(k, _)| k == "id").map(|(_, v)| v.clone()).collect()
        };
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let outcomes = engine.files.restore_many(&ids)?;
        engine.refresh(now, &mem::progress::Silent)?;
        let refused: Vec<String> = ids
            .iter()
            .zip(outcomes)
            .filter_map(|(id, outcome)| outcome.err().map(|e| format!("{id}: {e}")))
            .collect();
        if !refused.is_empty() {
            anyhow::bail!("not restored: {}", refused.join("; "));
        }
        Ok(())
    });
    match done {
        Ok(()) => super::see_other("/prune"),
        Err(e) => super::failed(&e),
    }
}
