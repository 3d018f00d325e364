//! The capture page (`/capture`): what `mem health --transcripts` computes, by the same engine
//! calls ([`mem::Engine::coverage`] with the agents' own folders of the project, and
//! [`mem::Engine::capture_summary`]): per agent, the
//! sessions seen in its transcripts against those captured and missing, with each missing
//! session's cause as the agent's spec states it; per agent and per day, the sessions captured
//! (the session log) and those missing (by their transcript's last change); and the captures
//! that failed in the last 24 hours (the capture log).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::response::Response;
use maud::html;
use mem::agent::Agent;

use super::{Shared, html as ui};
use crate::setup;
use crate::shared::coverage::{missed_causes, transcript_folders};
use crate::shared::words::MISSED_HINT;

/// How many days of the session log the per-day table shows.
const DAYS: usize = 14;

/// `GET /capture`.
pub(super) async fn page(State(app): State<Shared>) -> Response {
    super::respond(|| {
        let now = app.now();
        let mut layers = app.layers();
        let engine = layers.project();
        let project = mem::health::project_dir(engine.files.root());
        let homes = crate::shared::gate::homes();
        let folders = transcript_folders(None, &project, &homes);
        // What `mem health --transcripts` reports of capture, without its other checks.
        let coverage = engine.files.coverage(&folders)?;
        let capture = engine.files.capture_summary(now)?;
        let configured = setup::configured(&project, &homes);
        let causes = missed_causes(&coverage, &project, &configured, &homes);
        let sessions = match mem::session::SessionLog::existing_in(engine.files.root())? {
            Some(log) => log.list(None, usize::MAX >> 1)?,
            None => Vec::new(),
        };
        // Per day and agent: sessions captured (the log's start) and missing (their
        // transcript's last change).
        let mut days: BTreeMap<String, BTreeMap<&'static str, (usize, usize)>> = BTreeMap::new();
        for s in &sessions {
            let day = s.started_at.map_or("unknown".into(), |t| t.strftime("%Y-%m-%d").to_string());
            let agent = s.agent.map_or("unknown", |a| a.spec().title);
            days.entry(day).or_default().entry(agent).or_default().0 += 1;
        }
        for gap in &coverage.gaps {
            let changed = std::fs::metadata(&gap.path).and_then(|m| m.modified()).ok();
            let day = changed
                .and_then(|t| jiff::Timestamp::try_from(t).ok())
                .map_or("unknown".into(), |t| t.strftime("%Y-%m-%d").to_string());
            days.entry(day).or_default().entry(gap.agent.spec().title).or_default().1 += 1;
        }
        let missing_of = |agent: Agent| coverage.gaps.iter().filter(|g| g.agent == agent).count();
        let captured_of = |agent: Agent| sessions.iter().filter(|s| s.agent == Some(agent)).count();
        Ok(ui::page(
            "Capture",
            "/capture",
            html! {
                h1 { "Capture" }
                (ui::command("mem health --transcripts"))
                p { (coverage.captured) " of " (coverage.found) " sessions of this project found in the agents' transcripts were captured." }
                table.counts {
                    tr { th { "agent" } th { "sessions in the log" } th { "missing from the transcripts" } }
                    @for agent in Agent::ALL {
                        tr { td { (agent.spec().title) } td { (captured_of(agent)) } td { (missing_of(agent)) } }
                    }
                }
                h2 { "Captured (and missing) per day" }
                table.counts {
                    tr { th { "day" } @for agent in Agent::ALL { th { (agent.spec().title) } } th { "all captured" } }
                    @for (day, by) in days.iter().rev().take(DAYS) {
                        tr {
                            td { (day) }
                            @for agent in Agent::ALL {
                                @let (done, missed) = by.get(agent.spec().title).copied().unwrap_or_default();
                                td { (done) @if missed > 0 { " " span.missing { "+" (missed) " missing" } } }
                            }
                            td { (by.values().map(|c| c.0).sum::<usize>()) }
                        }
                    }
                }
                h2 { "Missing sessions" }
                @if coverage.gaps.is_empty() { p { "None." } }
                ul {
                    @for gap in &coverage.gaps {
                        li.missing { (gap.agent.spec().title) " " code { (gap.session_id) } " " (gap.path) }
                    }
                }
                @for cause in &causes { p { "Cause: " (cause) } }
                @if causes.is_empty() && !coverage.gaps.is_empty() { p { (MISSED_HINT) } }
                h2 { "Capture errors (last 24 hours)" }
                p { (capture.ok) " captures, " (capture.errors) " failed, " (capture.unreadable) " unreadable lines in the log." }
                @if let Some((at, why)) = &capture.last_error { p.error { "Last failure " (at) ": " (why) } }
            },
        ))
    })
}
