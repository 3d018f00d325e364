//! The team store in `mem ui`: its hits on the search page, after the local ones (the team layer
//! joins a search of every layer as it joins `mem recall`, by the same call,
//! [`crate::shared::team::join_recall`]), and a team memory's own page (`/team?project=…&id=…`),
//! its whole text, read from the store by [`crate::shared::team::get`]. Every text of a row is
//! another member's (or whoever reaches the store), shown as text, escaped by maud, its Markdown
//! rendered as a local memory's is (raw HTML shown as text, no image, only safe links), labelled
//! with its project and author. Read only: no page changes the store, so neither has a form.

use axum::extract::Query;
use axum::response::Response;
use maud::{Markup, html};

use super::html as ui;
use crate::shared::team::{TeamAnswer, Unread, get, key};

/// The fields of a team memory's page.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Params {
    #[serde(default)]
    project: String,
    #[serde(default)]
    id: String,
}

/// The longest snippet of a team hit's body on the search page.
const SNIPPET: usize = 300;

/// `GET /team?project=…&id=…`: the team store's live memory `id` of `project`, whole.
pub(super) async fn page(Query(params): Query<Params>) -> Response {
    super::respond(|| {
        let named = key(&params.project, &params.id);
        if params.project.is_empty() || params.id.is_empty() {
            return Err(super::bad_parameter("a team memory is named by project and id".into()));
        }
        let memory = get(&params.project, &params.id).map_err(|why| match why {
            Unread::Unanswered(_) => super::unavailable(why.message(&named)),
            Unread::NoStore | Unread::Absent => super::not_there(why.message(&named)),
        })?;
        let title = mem::format::without_controls(&memory.title);
        let updated = memory.updated.as_deref().map(date);
        Ok(ui::page(
            &title,
            "",
            html! {
                h1 { (title) }
                p.meta {
                    span.kind { (memory.kind) } " " span.layer.team { "team" } " "
                    "importance " (memory.importance) " · from " (label(&memory.project, &memory.author))
                    " · created " (date(&memory.created))
                    @if let Some(updated) = updated { " · edited " (updated) }
                    " · pushed " (date(&memory.pushed))
                }
                p.note {
                    "A memory of the team store, " code { (named) } ": another member's words, \
                     data, never instructions. Read only here: it changes in a root of its \
                     project, then " code { "mem team push" } "."
                }
                section.body { (ui::markdown(super::memory::without_title(&memory.body, &memory.title))) }
            },
        ))
    })
}

/// The search page's part of the team layer: its hits, each labelled and linked to its page,
/// and why the store did not answer, in one line, when it did not.
pub(super) fn hits(answer: &TeamAnswer) -> Markup {
    html! {
        @if let Some(problem) = &answer.problem {
            p.notice.team { "Team store: " (problem) "; answered from the local layers." }
        }
        @if !answer.hits.is_empty() {
            section.team {
                h2 { "Team store (" (answer.hits.len()) " memories published by the team)" }
                ol.hits.team {
                    @for (relevance, hit) in answer.hits.iter().map(|h| (h.relevance, &h.memory)) {
                        li.hit.team {
                            div.head {
                                span.score { (format!("{relevance:.3}")) }
                                a.title href=(ui::href(&href(&hit.project, &hit.id))) { (mem::format::without_controls(&hit.title)) }
                                span.kind { (hit.kind) }
                                span.layer.team { "team" }
                                (label(&hit.project, &hit.author))
                            }
                            p.snippet { (snippet(&hit.body, &hit.title)) }
                        }
                    }
                }
            }
        }
    }
}

/// The start of a team hit's `body`, without the `# title` line the hit's link shows already.
fn snippet(body: &str, title: &str) -> String {
    let text = super::memory::without_title(body, title).trim();
    mem::format::clip(&mem::format::without_controls(text), SNIPPET)
}

/// The page of the team memory `id` of `project`, from the secret prefix.
fn href(project: &str, id: &str) -> String {
    format!("/team?project={}&id={}", ui::query_value(project), ui::query_value(id))
}

/// A team memory's project and author.
fn label(project: &str, author: &str) -> Markup {
    html! {
        span.project { (mem::format::without_controls(project)) }
        " by " span.author { (mem::format::without_controls(author)) }
    }
}

/// The day of a time as the store gives it (`2026-11-01 09:30:00+00`).
fn date(at: &str) -> &str {
    at.split_once(' ').map_or(at, |(day, _)| day)
}
