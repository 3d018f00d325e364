//! `mem session list|show|search|resume`: the session log of the memory root
//! (`.mem/sessions.db`, see [`mem::session`]), which `mem capture` feeds.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use mem::format::whole_second;
use mem::session::ledger::{self, Injection, Sent};
use mem::session::resume::{self, one_line};
use mem::session::{Event, Kind, SessionLog};

use super::Globals;
use mem::agent::Agent;

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
    /// hooks put into the session's context then (`injected`: the memories and their
    /// characters), from the injection ledger.
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
        /// one's `memory` id, `hash` and `chars`, and their total `chars`).
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
        #[arg(long, value_parser = super::hook::agent_parser(), value_name = "AGENT", conflicts_with_all = ["id", "turn"])]
        hook: Option<Agent>,
    },
}

/// The session log of `root`.
fn open(root: &Path) -> Result<SessionLog> {
    match SessionLog::existing_in(root)? {
        Some(log) => Ok(log),
        None => bail!(
            "no session log yet in {}: `mem capture` writes it from the agents' hooks \
             (`mem setup claude` or `mem setup codex` installs them)",
            root.display()
        ),
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
        return hook::run(ctx, agent, "session resume", false, |_, event| {
            resume_hook(ctx, agent, event, budget)
        });
    }
    let log = open(&ctx.root()?)?;
    match args.action {
        Action::List { project, limit, json } => {
            let project = project.as_deref().map(folder).transpose()?;
            let sessions = log.list(project.as_deref(), limit)?;
            if json {
                return super::print_json(&sessions);
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
            super::print_text(&out)
        }
        Action::Show { id, turn, full, json } => {
            let session = log.session(&id)?;
            let events = log.events(&session.id, turn)?;
            let groups = injected(&log.injections(&session.id, turn)?);
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
            if json {
                return super::print_json(&shown);
            }
            let mut out = String::new();
            for s in &shown {
                match s {
                    Shown::Event(e) => out.push_str(&show_event(e, full)),
                    Shown::Injected(g) => out.push_str(&show_injected(g)),
                }
            }
            super::print_text(&out)
        }
        Action::Search { query, project, limit, json } => {
            let project = project.as_deref().map(folder).transpose()?;
            let hits = log.search(&query.join(" "), project.as_deref(), limit)?;
            if json {
                return super::print_json(&hits);
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
            super::print_text(&out)
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
            super::print_text(&resume::render(&session, &events, budget as usize))
        }
        Action::Resume { hook: Some(_), .. } => unreachable!("answered above"),
    }
}

/// What one context hook call put into the session's context, or where its context started
/// again (`event` `reset`, no memories).
#[derive(Debug, serde::Serialize)]
struct Injected {
    /// Always `injected`, beside the events' kinds.
    kind: &'static str,
    turn: i64,
    at: Option<jiff::Timestamp>,
    event: String,
    memories: Vec<Sent>,
    chars: usize,
}

/// A line of `mem session show`: an event, or an injection.
#[derive(Debug, serde::Serialize)]
#[serde(untagged)]
enum Shown<'a> {
    Event(&'a Event),
    Injected(&'a Injected),
}

impl Shown<'_> {
    fn turn(&self) -> i64 {
        match self {
            Shown::Event(e) => e.turn,
            Shown::Injected(g) => g.turn,
        }
    }

    /// Whether it is the prompt of `turn` (any first line of the start, turn 0).
    fn is_prompt_of(&self, turn: i64) -> bool {
        matches!(self, Shown::Event(e) if e.turn == turn && e.kind == Kind::Prompt)
    }
}

/// The ledger's rows grouped by hook call (same turn, event and time).
fn injected(rows: &[Injection]) -> Vec<Injected> {
    let mut groups: Vec<Injected> = Vec::new();
    for row in rows {
        let same = groups.last_mut().filter(|g| {
            g.turn == row.turn && g.event == row.event && g.at == row.at && row.sent.is_some()
        });
        match (same, &row.sent) {
            (Some(group), Some(sent)) => {
                group.chars += sent.chars;
                group.memories.push(sent.clone());
            }
            _ => groups.push(Injected {
                kind: "injected",
                turn: row.turn,
                at: row.at,
                event: row.event.clone(),
                chars: row.sent.as_ref().map_or(0, |s| s.chars),
                memories: row.sent.iter().cloned().collect(),
            }),
        }
    }
    groups
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
    let ids: Vec<&str> = g.memories.iter().map(|m| m.memory.as_str()).collect();
    format!(
        "turn {}\t{at}\tinjected\t{}: {} memories, {} chars: {}\n",
        g.turn,
        g.event,
        g.memories.len(),
        g.chars,
        ids.join(", ")
    )
}

/// One event as `mem session show` prints it.
fn show_event(e: &Event, full: bool) -> String {
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
    event: &hook::Event,
    budget: u64,
) -> Result<Option<String>> {
    let root = ctx.root_near(event.cwd.as_deref())?;
    let Some(mut log) = SessionLog::existing_in(&root)? else { return Ok(None) };
    let current = event.session_id.as_deref();
    if let (Some(id), Some(transcript)) = (current, event.transcript_file()) {
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
    let name = event.name.as_deref().unwrap_or(hook::SESSION_START);
    Ok(agent.context_answer(name, &text))
}
