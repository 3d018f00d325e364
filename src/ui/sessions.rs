//! The sessions pages: `/sessions?page=…`, the session log as `mem session list` gives it, a
//! page at a time with the count of all, and
//! `/sessions/<id>`, a session's turns and tool calls as `mem session show` gives them, with
//! after each prompt the memories the context hooks injected then (titles, characters, whole
//! or cut), from the injection ledger, grouped by `mem session show`'s own functions.

use axum::extract::{Path, Query, State};
use axum::response::Response;
use maud::{Markup, html};
use mem::format::whole_second;
use mem::session::{Kind, LoggedEvent, ledger};

use super::{Shared, html as ui};
use crate::shared::injected::{Injected, fill_titles, injected};
use crate::shared::words::no_log_yet;

/// How many sessions a page of the list shows.
const PAGE: usize = 100;

/// The list's query: which page.
#[derive(Debug, Default, serde::Deserialize)]
pub(super) struct Params {
    #[serde(default)]
    page: Option<usize>,
}

/// A time as the pages show it, or `-`.
pub(super) fn when(at: Option<jiff::Timestamp>) -> String {
    at.map(whole_second).map_or("-".into(), |t| t.to_string())
}

/// `GET /sessions`.
pub(super) async fn list(State(app): State<Shared>, Query(params): Query<Params>) -> Response {
    super::respond(|| {
        let root = app.layers().project().files.root().to_path_buf();
        // No log yet is an empty list here (the command says how to start one).
        let log = mem::session::SessionLog::existing_in(&root)?;
        let total = log.as_ref().map(|l| l.count()).transpose()?.unwrap_or(0);
        let pages = total.div_ceil(PAGE).max(1);
        let page = params.page.unwrap_or(1);
        if page == 0 || page > pages {
            return Err(super::bad_parameter(format!("no page {page}: there are {pages}")));
        }
        let sessions = match &log {
            Some(log) => log.list_from(None, (page - 1) * PAGE, PAGE)?,
            None => Vec::new(),
        };
        let link = |page: usize| ui::href(&format!("/sessions?page={page}"));
        Ok(ui::page(
            "Sessions",
            "/sessions",
            html! {
                h1 { "Sessions" }
                p { (total) " sessions, the most recent first." }
                (ui::command("mem session list"))
                table.sessions {
                    tr { th { "started" } th { "agent" } th { "turns" } th { "project" } th { "first prompt" } }
                    @for s in &sessions {
                        tr {
                            td { a href=(ui::href(&format!("/sessions/{}", s.id))) { (when(s.started_at)) } }
                            td { (s.agent.map_or("unknown", |a| a.spec().title)) }
                            td { (s.turns) }
                            td { (s.project.as_deref().unwrap_or("-")) }
                            td { (mem::format::clip(s.first_prompt.as_deref().unwrap_or(""), 100)) }
                        }
                    }
                }
                @if pages > 1 {
                    p.pager {
                        @if page > 1 { a href=(link(page - 1)) { "← newer" } " " }
                        "page " (page) " of " (pages)
                        @if page < pages { " " a href=(link(page + 1)) { "older →" } }
                    }
                }
                @if sessions.is_empty() { p.empty { "No sessions yet: " code { "mem capture" } " adds them from the agents' hooks." } }
            },
        ))
    })
}

/// `GET /sessions/<id>`.
pub(super) async fn show(State(app): State<Shared>, Path(id): Path<String>) -> Response {
    super::respond(|| {
        if !mem::agent::is_session_id(&id) {
            return Err(super::not_there(format!("no session {id:?}")));
        }
        let mut layers = app.layers();
        // No log yet, or no such session in it: not there; a log that cannot be read is a
        // failure (500), said as such.
        let root = layers.project().files.root();
        let Some(log) = mem::session::SessionLog::existing_in(root)? else {
            return Err(super::not_there(no_log_yet(root)));
        };
        let session = log.session(&id).map_err(|e| match e {
            mem::Error::NoSuchSession { .. } => super::not_there(e.to_string()),
            e => e.into(),
        })?;
        let events = log.events(&session.id, None)?;
        let mut groups = injected(&log.injections(&session.id, None)?);
        fill_titles(&mut layers, &mut groups);
        let agent = session.agent.map_or("unknown", |a| a.spec().title);
        Ok(ui::page(
            &format!("Session {}", session.id),
            "/sessions",
            html! {
                h1 { "Session " code { (session.id) } }
                p.meta { (agent) " · " (when(session.started_at)) " – " (when(session.last_at)) " · "
                    (session.turns) " turns · " (session.project.as_deref().unwrap_or("-"))
                    @if let Some(model) = &session.model { " · " (model) } }
                (ui::command(&format!("mem session show {}", session.id)))
                ol.events {
                    @for turn in turns(&events, &groups) {
                        @for e in turn.0 { (event(e)) }
                        @for g in turn.1 { (injection(g)) }
                    }
                }
            },
        ))
    })
}

/// The events in turns, each turn's injections after its prompt's events.
fn turns<'a>(
    events: &'a [LoggedEvent],
    groups: &'a [Injected],
) -> Vec<(Vec<&'a LoggedEvent>, Vec<&'a Injected>)> {
    let mut numbers: Vec<i64> =
        events.iter().map(|e| e.turn).chain(groups.iter().map(|g| g.turn)).collect();
    numbers.sort_unstable();
    numbers.dedup();
    let mut out = Vec::new();
    for n in numbers {
        let of_turn: Vec<&LoggedEvent> = events.iter().filter(|e| e.turn == n).collect();
        let split = of_turn.iter().position(|e| e.kind == Kind::Prompt).map_or(0, |i| i + 1);
        out.push((of_turn[..split].to_vec(), Vec::new()));
        out.push((Vec::new(), groups.iter().filter(|g| g.turn == n).collect()));
        out.push((of_turn[split..].to_vec(), Vec::new()));
    }
    out
}

/// One event: its turn, time, kind and text.
fn event(e: &LoggedEvent) -> Markup {
    let mut text = e.text.clone();
    if let (Kind::ToolResult, Some(status)) = (e.kind, e.status) {
        text = format!("[exit {status}] {text}");
    }
    html! {
        li class=(format!("event {}", e.kind.as_str())) {
            span.turn { "turn " (e.turn) } " " span.at { (when(e.at)) } " " span.kind { (e.kind.as_str()) }
            @if let (Kind::Checkpoint, Some(id)) = (e.kind, &e.checkpoint) { " " code { "mem rewind " (id) } }
            pre { (mem::format::clip(&text, 2000)) }
        }
    }
}

/// What one context hook call injected.
fn injection(g: &Injected) -> Markup {
    html! {
        li.injected {
            @if g.event == ledger::RESET {
                span.turn { "turn " (g.turn) } " the context started again (compaction or clear)"
            } @else {
                span.turn { "turn " (g.turn) } " " span.at { (when(g.at)) } " "
                strong { "injected" } " by " (g.event) ": " (g.memories.len()) " memories, " (g.chars) " chars"
                ul {
                    @for m in &g.memories {
                        li {
                            a href=(ui::href(&format!("/memory/{}", m.sent.memory))) {
                                (m.title.as_deref().unwrap_or(&m.sent.memory))
                            }
                            " · " (if m.sent.cut { "cut" } else { "whole" }) " · " (m.sent.chars) " chars"
                        }
                    }
                }
            }
        }
    }
}
