//! `mem session list|show|search|resume`: the session log of the memory root
//! (`.mem/sessions.db`, see [`mem::session`]), which `mem capture` feeds.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use mem::format::whole_second;
use mem::session::ledger::{self};
use mem::session::resume::{self, one_line};
use mem::session::{Kind, LoggedEvent, SessionLog};

use crate::shared::Globals;
use crate::shared::injected::{Injected, fill_titles, injected};
use crate::shared::words::no_log_yet;
use mem::agent::Agent;
use mem::capture::Payload;

use super::hook;

/// Arguments of `mem session`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// List sessions, the most recent first: id, agent, start, turns, project, first prompt.
    List {
        /// Only sessions whose project is this folder or inside it.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// How many.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Print a session's events in order: prompts, answers, tool calls and results, settings
    /// and checkpoints, each with its turn; and, after each prompt (or at the start), what mem's
    /// hooks put into the session's context then (`injected`: each memory with its title,
    /// whether its line went whole or cut, and its characters), from the injection ledger,
    /// with the turn's totals.
    Show {
        /// The session id (or a unique start of it).
        id: String,
        /// Up to this turn only.
        #[arg(long, value_name = "N")]
        turn: Option<i64>,
        /// Print every event whole (by default each is cut to one line).
        #[arg(long)]
        full: bool,
        /// Print a JSON array of events (with `injected` entries: `event`, `memories` with each
        /// one's `memory` id, `title` (null for a memory since deleted), `hash`, `chars` and
        /// `cut`, and their total `chars`; after each turn's last, an `injected_total` entry
        /// with the turn's `memories`, `cut` and `chars`).
        #[arg(long)]
        json: bool,
    },
    /// Full-text search over every session's events (SQLite FTS5), best first, with snippets.
    Search {
        /// The words to look for (all of them; any of them when no event has all).
        #[arg(required = true)]
        query: Vec<String>,
        /// Only sessions whose project is this folder or inside it.
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// How many events.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// A compact Markdown state to continue a session from: goal, plan, last prompts, files
    /// touched, commands run and how they ended, open problems, last answer.
    Resume {
        /// The session id (or a unique start of it); by default the most recent session of
        /// the working directory.
        id: Option<String>,
        /// Most characters to print.
        #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(200..))]
        budget: u64,
        /// The state as it was at the end of this turn ("rewind the conversation").
        #[arg(long, value_name = "N")]
        turn: Option<i64>,
        /// Answer this agent's SessionStart hook: read its payload on stdin, resume the session
        /// it continues (after a resume or a compaction) or else the previous session of its
        /// folder, print it as the JSON the agent reads, exit 0 even on failure.
        #[arg(long, value_parser = crate::shared::gate::agent_parser(), value_name = "AGENT", conflicts_with_all = ["id", "turn"])]
        hook: Option<Agent>,
    },
}

/// The session log of `root`.
pub(super) fn open(root: &Path) -> Result<SessionLog> {
    match SessionLog::existing_in(root)? {
        Some(log) => Ok(log),
        None => bail!("{}", no_log_yet(root)),
    }
}

/// A folder as the log records projects: absolute, as the agent saw it (its cwd).
fn folder(dir: &Path) -> Result<String> {
    let dir = std::path::absolute(dir)?.to_string_lossy().into_owned();
    Ok(match dir.trim_end_matches('/') {
        "" => "/".to_string(),
        trimmed => trimmed.to_string(),
    })
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if let Action::Resume { hook: Some(agent), budget, .. } = args.action {
        return hook::run(
            ctx,
            agent,
            "session resume",
            crate::shared::gate::Started::Own,
            |agent, _, event| resume_hook(ctx, agent, event, budget),
        );
    }
    let log = open(&ctx.root()?)?;
    match args.action {
        Action::List { project, limit, json } => {
            let project = project.as_deref().map(folder).transpose()?;
            let sessions = log.list(project.as_deref(), limit)?;
            if json {
                return crate::shared::output::print_json(&sessions);
            }
            let mut out = String::new();
            if sessions.is_empty() {
                out.push_str("no sessions yet: `mem capture` adds them from the agents' hooks\n");
            }
            for s in &sessions {
                out.push_str(&format!(
                    "{}\t{}\t{}\t{} turns\t{}\t{}\n",
                    s.id,
                    s.agent.map_or("unknown", |a| a.name()),
                    s.started_at.map(whole_second).map_or("-".into(), |t| t.to_string()),
                    s.turns,
                    s.project.as_deref().unwrap_or("-"),
                    one_line(s.first_prompt.as_deref().unwrap_or(""), 80)
                ));
            }
            crate::shared::output::print_text(&out)
        }
        Action::Show { id, turn, full, json } => {
            let session = log.session(&id)?;
            let events = log.events(&session.id, turn)?;
            let mut groups = injected(&log.injections(&session.id, turn)?);
            add_titles(ctx, &mut groups);
            let totals = turn_totals(&groups);
            let mut shown: Vec<Shown> = events.iter().map(Shown::Event).collect();
            // Each group goes after its turn's prompt (a start's, first), or after its turn.
            for group in &groups {
                let at = match shown.iter().position(|s| s.is_prompt_of(group.turn)) {
                    // After the prompt and the groups placed after it already, in order.
                    Some(i) => {
                        let after =
                            shown[i + 1..].iter().take_while(|s| matches!(s, Shown::Injected(_)));
                        i + 1 + after.count()
                    }
                    None => shown.iter().position(|s| s.turn() > group.turn).unwrap_or(shown.len()),
                };
                shown.insert(at, Shown::Injected(group));
            }
            let shown = with_totals(shown, &totals);
            if json {
                return crate::shared::output::print_json(&shown);
            }
            let mut out = String::new();
            for s in &shown {
                match s {
                    Shown::Event(e) => out.push_str(&show_event(e, full)),
                    Shown::Injected(g) => out.push_str(&show_injected(g)),
                    Shown::Total(t) => out.push_str(&format!(
                        "turn {}\t-\tinjected total\t{} memories ({} cut), {} chars\n",
                        t.turn, t.memories, t.cut, t.chars
                    )),
                }
            }
            crate::shared::output::print_text(&out)
        }
        Action::Search { query, project, limit, json } => {
            let project = project.as_deref().map(folder).transpose()?;
            let hits = log.search(&query.join(" "), project.as_deref(), limit)?;
            if json {
                return crate::shared::output::print_json(&hits);
            }
            let mut out = String::new();
            for h in &hits {
                out.push_str(&format!(
                    "{}\tturn {}\t{}\t{}\t{}\n",
                    h.session,
                    h.turn,
                    h.kind.as_str(),
                    h.at.map(whole_second).map_or("-".into(), |t| t.to_string()),
                    h.snippet
                ));
            }
            if hits.is_empty() {
                eprintln!("mem: no event matches");
            }
            crate::shared::output::print_text(&out)
        }
        Action::Resume { id, budget, turn, hook: None } => {
            let session = match id {
                Some(id) => log.session(&id)?,
                None => {
                    let here = folder(&std::env::current_dir()?)?;
                    match log.list(Some(&here), 1)?.into_iter().next() {
                        Some(s) => s,
                        None => bail!(
                            "no session of {here} in the log; give a session id (`mem session list`)"
                        ),
                    }
                }
            };
            let events = log.events(&session.id, turn)?;
            crate::shared::output::print_text(&resume::render(&session, &events, budget as usize))
        }
        Action::Resume { hook: Some(_), .. } => unreachable!("answered above"),
    }
}

/// What the context hooks put into a session's context with one turn.
#[derive(Debug, serde::Serialize)]
struct Total {
    /// Always `injected_total`.
    kind: &'static str,
    turn: i64,
    /// Memories sent (one sent twice, after a compaction, counts twice).
    memories: usize,
    /// How many of them went cut.
    cut: usize,
    chars: usize,
}

/// A line of `mem session show`: an event, an injection, or a turn's totals.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
enum Shown<'a> {
    Event(&'a LoggedEvent),
    Injected(&'a Injected),
    Total(&'a Total),
}

impl Shown<'_> {
    fn turn(&self) -> i64 {
        match self {
            Shown::Event(e) => e.turn,
            Shown::Injected(g) => g.turn,
            Shown::Total(t) => t.turn,
        }
    }

    /// Whether it is the prompt of `turn` (any first line of the start, turn 0).
    fn is_prompt_of(&self, turn: i64) -> bool {
        matches!(self, Shown::Event(e) if e.turn == turn && e.kind == Kind::Prompt)
    }
}

/// Fills in the title of each memory `groups` name, from the root's layers as they are now
/// (read from the files the index names, which the hooks brought up to date before sending):
/// a memory since deleted, or every one when the root cannot be opened (a warning), has none.
fn add_titles(ctx: &Globals, groups: &mut [Injected]) {
    if groups.iter().all(|g| g.memories.is_empty()) {
        return;
    }
    let mut layers = match ctx.layers_near(None) {
        Ok(layers) => layers,
        Err(e) => {
            eprintln!(
                "mem: warning: the memories' titles cannot be shown: {}",
                crate::shared::output::describe(&e)
            );
            return;
        }
    };
    fill_titles(&mut layers, groups);
}

/// The totals of each turn that had memories sent, in order of turns.
fn turn_totals(groups: &[Injected]) -> Vec<Total> {
    let mut totals: Vec<Total> = Vec::new();
    for g in groups.iter().filter(|g| !g.memories.is_empty()) {
        let total = match totals.iter_mut().find(|t| t.turn == g.turn) {
            Some(total) => total,
            None => {
                let kind = "injected_total";
                totals.push(Total { kind, turn: g.turn, memories: 0, cut: 0, chars: 0 });
                totals.last_mut().expect("just pushed")
            }
        };
        total.memories += g.memories.len();
        total.cut += g.memories.iter().filter(|m| m.sent.cut).count();
        total.chars += g.chars;
    }
    totals
}

/// `shown` with each turn's totals after the last injection of that turn.
fn with_totals<'a>(shown: Vec<Shown<'a>>, totals: &'a [Total]) -> Vec<Shown<'a>> {
    let last =
        |turn: i64| shown.iter().rposition(|s| matches!(s, Shown::Injected(g) if g.turn == turn));
    let after: Vec<(usize, &Total)> =
        totals.iter().filter_map(|t| last(t.turn).map(|i| (i, t))).collect();
    let mut out = Vec::with_capacity(shown.len() + after.len());
    for (i, s) in shown.into_iter().enumerate() {
        out.push(s);
        out.extend(after.iter().filter(|(at, _)| *at == i).map(|(_, t)| Shown::Total(t)));
    }
    out
}

/// An injection as `mem session show` prints it.
fn show_injected(g: &Injected) -> String {
    let at = g.at.map(whole_second).map_or("-".into(), |t| t.to_string());
    if g.event == ledger::RESET {
        return format!(
            "turn {}\t{at}\tinjected\tthe context started again (compaction or clear)\n",
            g.turn
        );
    }
    let ids: Vec<&str> = g.memories.iter().map(|m| m.sent.memory.as_str()).collect();
    let mut out = format!(
        "turn {}\t{at}\tinjected\t{}: {} memories, {} chars: {}\n",
        g.turn,
        g.event,
        g.memories.len(),
        g.chars,
        ids.join(", ")
    );
    for m in &g.memories {
        let how = if m.sent.cut { "cut" } else { "whole" };
        out.push_str(&format!("    {}\t{how}\t{} chars", m.sent.memory, m.sent.chars));
        if let Some(title) = &m.title {
            out.push_str(&format!("\t{}", one_line(title, 120)));
        }
        out.push('\n');
    }
    out
}

/// One event as `mem session show` prints it.
fn show_event(e: &LoggedEvent, full: bool) -> String {
    let at = e.at.map(whole_second).map_or("-".into(), |t| t.to_string());
    let mut text = match (e.kind, &e.checkpoint) {
        (Kind::Checkpoint, Some(id)) => format!("{}  (`mem rewind {id}`)", e.text),
        _ => e.text.clone(),
    };
    if let (Kind::ToolResult, Some(status)) = (e.kind, e.status) {
        text = format!("[exit {status}] {text}");
    }
    if full {
        let indented = text.lines().map(|l| format!("    {l}\n")).collect::<String>();
        format!("turn {}\t{at}\t{}\n{indented}", e.turn, e.kind.as_str())
    } else {
        format!("turn {}\t{at}\t{}\t{}\n", e.turn, e.kind.as_str(), one_line(&text, 200))
    }
}

/// `resume --hook`: the session the SessionStart continues (a resume, a compaction: the log
/// has its id), else the previous session of the agent's folder; nothing when there is none.
fn resume_hook(
    ctx: &Globals,
    agent: Agent,
    event: &Payload,
    budget: u64,
) -> Result<Option<String>> {
    let root = ctx.root_near(event.cwd.as_deref())?;
    let Some(mut log) = SessionLog::existing_in(&root)? else { return Ok(None) };
    let current = event.session_id.as_deref();
    if let (Some(id), Some(transcript)) =
        (current, event.transcript_file(&crate::shared::gate::homes()))
    {
        log.import(&transcript, id, None)?;
    }
    let continued = match current {
        Some(id) => log.session(id).ok().filter(|s| s.id == id && s.turns > 0),
        None => None,
    };
    let session = match continued {
        Some(s) => s,
        None => {
            let project = event.cwd.as_deref().map(Path::new).map(folder).transpose()?;
            let recent = log.list(project.as_deref(), 2)?;
            match recent.into_iter().find(|s| Some(s.id.as_str()) != current) {
                Some(s) => s,
                None => return Ok(None),
            }
        }
    };
    let events = log.events(&session.id, None)?;
    let text = resume::render(&session, &events, budget as usize);
    let name = event.hook_event.as_deref().unwrap_or(agent.spec().events.start);
    Ok(agent.context_answer(name, &text))
}
