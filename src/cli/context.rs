//! `mem context`: a compact Markdown block for the start of an agent session, within a
//! character budget; with `--hook`, the answer to an agent's SessionStart or UserPromptSubmit
//! hook.

use anyhow::Result;
use mem::engine::ContextOptions;
use mem::session::SessionLog;

use crate::shared::Globals;
use mem::agent::Agent;
use mem::capture::Payload;

use super::hook;

/// Arguments of `mem context`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Also recall the memories for this task.
    #[arg(long)]
    task: Option<String>,
    /// Most characters to print; the block is cut between memories, never inside one.
    #[arg(long, default_value_t = 4000, value_parser = clap::value_parser!(u64).range(200..))]
    budget: u64,
    /// How many key memories (procedural and semantic, most important first) to consider.
    #[arg(long, default_value_t = 12)]
    key: usize,
    /// How many of the most recent captured sessions to list (0: none).
    #[arg(long, default_value_t = 3)]
    sessions: usize,
    /// Leave out the task's memories that match it weakly (strength below this, 0 to 1; see
    /// `mem recall --min-strength`).
    #[arg(long, default_value_t = mem::engine::DEFAULT_MIN_STRENGTH, value_name = "S", value_parser = super::parse::parse_share)]
    min_strength: f64,
    /// Answer this agent's hook: read its payload on stdin; for a UserPromptSubmit, only the
    /// memories relevant to the prompt, else the block; print it as the JSON the agent reads
    /// (nothing when nothing is relevant) and exit 0 even on failure, which is logged in
    /// .mem/capture.log. See docs/agents.md.
    #[arg(long, value_parser = crate::shared::gate::agent_parser(), value_name = "AGENT")]
    hook: Option<Agent>,
    /// With --hook: which registration started it (`--project-only`, `--user-scope`; see
    /// docs/agents.md).
    #[command(flatten)]
    registration: crate::shared::gate::Registration,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if let Some(agent) = args.hook {
        return hook_answer(&args, agent, ctx);
    }
    let mut layers = ctx.layers_near(None)?;
    if args.task.is_some() {
        // The model loads while the index is refreshed.
        let project = layers.project();
        project.vectors.start_loading_model(&project.files, None);
    }
    for (_, report) in layers.refresh(ctx.now, &crate::shared::bar::progress_bar())? {
        crate::shared::output::print_problems(&report);
    }
    let options = ContextOptions {
        task: args.task,
        budget: args.budget as usize,
        key: args.key,
        min_strength: args.min_strength,
        sessions: args.sessions,
        held: Vec::new(),
        exclude: Vec::new(),
    };
    let context = layers.context(&options, ctx.now)?;
    if let Some(report) = &context.report {
        crate::shared::output::print_problems(report);
    }
    crate::shared::output::print_text(&context.text)
}

/// `--hook`: never fails the agent's hook; a failure is reported on stderr and logged.
fn hook_answer(args: &Args, agent: Agent, ctx: &Globals) -> Result<()> {
    let started = args.registration.started();
    let ctx = &ctx.for_hook(started);
    hook::run_answer(ctx, agent, "context", started, |agent, payload, event, here| {
        answer(args, agent, ctx, payload, event, here)
    })
}

/// The injection ledger of one session, read before the answer: where to record what the
/// answer sends once it reached the agent.
struct Ledger {
    log: SessionLog,
    session: String,
    /// The prompt's number, which only labels the ledger's rows.
    turn: i64,
    /// What the session's context holds (each memory's id, hash, and whether it went cut).
    held: Vec<mem::session::ledger::Sent>,
    /// The fact memories taken from the session's own prompts: its history holds them.
    facts: Vec<String>,
    /// `.mem/ledger.lock`, held from reading the ledger until what was sent is recorded (the
    /// ledger dropped): an agent that starts the next hook before this one's process has
    /// recorded (Copilot CLI) waits, and sees it sent. `None`: not had in time.
    _turn: Option<std::fs::File>,
}

impl Ledger {
    /// The ledger of `session` in the log of the root `root` for `agent`'s hook `event`
    /// (`name`), with a reset recorded after a compaction or a clear, and after a resume that
    /// lost part of what was sent (see `agent::Spec::resume_keeps`); `None` when nothing is to
    /// be sent (a resumed session holds what was sent into it).
    fn before(
        root: &std::path::Path,
        agent: Agent,
        session: &str,
        name: &str,
        event: &Payload,
        now: jiff::Timestamp,
    ) -> mem::Result<Option<Ledger>> {
        let turn_lock = ledger_lock(root);
        let mut log = SessionLog::open_in(root)?;
        // The prompts the log has of the session (each Stop's capture brings in the turn that
        // ended), and this one.
        let turn = log.turns(session)? + i64::from(event.prompt.is_some());
        match event.source.as_deref().filter(|_| name == agent.spec().events.start) {
            // The resumed conversation holds what was sent into it, of the hooks the agent
            // keeps on resume; the rest is sent again.
            Some("resume")
                if log.has_injections(session)?
                    && !log.record_resume(session, turn, agent.spec().resume_keeps, now)? =>
            {
                return Ok(None);
            }
            Some("compact" | "clear") => log.record_reset(session, turn, now)?,
            _ => {}
        }
        let held = log.in_context(session)?;
        let facts = log.facts_of(session)?;
        Ok(Some(Ledger { log, session: session.to_string(), turn, held, facts, _turn: turn_lock }))
    }
}

/// The model, loading from now on, for a hook that will embed its `task` in-process (no server
/// of the root listens): when a model is configured and the root's recall uses it.
fn early_model(root: &std::path::Path, task: bool) -> Option<mem::embed::Loading> {
    if !task {
        return None;
    }
    mem::open::start_model(root, &crate::shared::open::model_overrides(true).ok()?)
}

/// The hook's answer, or `None` when there is nothing to add. What the session's context
/// already holds is not sent again (the injection ledger of the session log, when the payload
/// names the session): a resumed session gets again only what its agent's resume drops, a
/// compaction or a clear empties what the context holds. What is sent is recorded once it was written to the agent.
/// A session log that cannot be used (damaged, locked) stops no context: it goes without the
/// ledger, with a warning.
fn answer(
    args: &Args,
    agent: Agent,
    ctx: &Globals,
    payload: &[u8],
    event: &Payload,
    here: hook::Here,
) -> Result<Option<hook::Answer>> {
    let hook::Here { surroundings, found } = here;
    let found = ctx.made(found)?;
    let (root, source) = (found.root.clone(), found.source);
    // The session's `mem mcp`, when it listens, answers with the model it holds; else a prompt
    // is embedded here, and the model loads while the ledger and the index are read.
    let listening = crate::shared::served::client::listening(&root);
    let task = event.prompt.is_some() || args.task.is_some();
    let early = if listening { None } else { early_model(&root, task) };
    let name = event.hook_event.as_deref().unwrap_or(agent.spec().events.start);
    // The session and its digest's id, when the payload names one that can have a digest.
    let session = event
        .session_id
        .as_deref()
        .and_then(|s| mem::capture::check_session_id(s).ok().map(|digest| (s, digest)));
    let mut ledger = None;
    if let Some((session, _)) = session {
        match Ledger::before(&root, agent, session, name, event, ctx.now) {
            Ok(Some(found)) => ledger = Some(found),
            Ok(None) => return Ok(None),
            Err(e) => {
                let e = anyhow::Error::new(e).context(
                    "warning: the session log cannot be used; the context goes without the \
                     injection ledger (memories the session holds may be sent again)",
                );
                hook::report_failure(ctx, payload, "context", &e);
            }
        }
    }
    let mut options = ContextOptions {
        task: args.task.clone(),
        budget: args.budget as usize,
        key: args.key,
        min_strength: args.min_strength,
        sessions: args.sessions,
        held: ledger.as_mut().map(|l| std::mem::take(&mut l.held)).unwrap_or_default(),
        // The session's own digest and facts: the session holds all of them.
        exclude: session
            .map(|(_, digest)| digest.to_string())
            .into_iter()
            .chain(ledger.as_mut().map(|l| std::mem::take(&mut l.facts)).unwrap_or_default())
            .collect(),
    };
    if let Some(prompt) = &event.prompt {
        // A prompt gets its own memories only.
        options = ContextOptions { task: Some(prompt.clone()), key: 0, sessions: 0, ..options };
    }
    // The team store, asked on a thread of its own while the local layers answer (a prompt).
    let team = event.prompt.as_deref().and_then(|p| crate::shared::team::ask_for_hook(&root, p));
    // The session's `mem mcp` answers when it can (it has the model loaded), else this process.
    let asked =
        crate::shared::served::Asked { agent: agent.name().to_string(), cwd: event.cwd.clone() };
    let served = listening
        .then(|| crate::shared::served::client::context(&root, source, ctx.now, &options, asked))
        .flatten();
    let context = match served {
        Some(served) => {
            for warning in &served.warnings {
                eprintln!("mem: warning: {warning}");
            }
            served
        }
        None => {
            let mut layers = ctx.layers_at(&surroundings, found)?;
            match early {
                Some(loading) => {
                    let project = layers.project();
                    project.vectors.give_model(&project.files, loading);
                }
                // A server listened but did not answer (another key, busy): load it from now.
                None if options.task.is_some() => {
                    let project = layers.project();
                    project.vectors.start_loading_model(&project.files, None);
                }
                None => {}
            }
            // The agent holds its own memories already: never sent to it again, nor mem's
            // copies of them (adopted).
            options.exclude.extend(layers.native_ids(agent));
            layers.without_native(agent);
            layers.refresh(ctx.now, &mem::progress::Silent)?;
            let context = layers.context(&options, ctx.now)?;
            let (text, memories, sent) = (context.text, context.memories, context.sent);
            crate::shared::served::Answer { text, memories, sent, warnings: Vec::new() }
        }
    };
    let mut context = context;
    if let Some(team) = team {
        let local: Vec<String> = context.sent.iter().map(|s| s.memory.clone()).collect();
        let room = (args.budget as usize).saturating_sub(context.text.chars().count());
        if let Some((block, sent)) = team.block(ctx.now, &options.held, &local, room) {
            if context.memories == 0 {
                context.text = "# Memory (from mem)\n".to_string();
            }
            context.text.push('\n');
            context.text.push_str(&block);
            context.memories += sent.len();
            context.sent.extend(sent);
        }
    }
    if context.memories == 0 {
        return Ok(None);
    }
    let Some(text) = agent.context_answer(name, &context.text) else { return Ok(None) };
    let delivered = ledger.map(|mut ledger| {
        let (name, sent, now) = (name.to_string(), context.sent, ctx.now);
        Box::new(move || -> Result<()> {
            // The ledger, and with it the lock, goes once this is recorded.
            Ok(ledger.log.record_injections(&ledger.session, ledger.turn, &name, &sent, now)?)
        }) as Box<dyn FnOnce() -> Result<()>>
    });
    Ok(Some(hook::Answer { text, delivered }))
}

/// How long a context hook waits for another hook of the same root to record what it sent.
const LEDGER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An exclusive lock on `.mem/ledger.lock` of `root`, taken within [`LEDGER_WAIT`] (released
/// when dropped, or when the process ends); `None` when it cannot be had in time, and the hook
/// goes on as before.
fn ledger_lock(root: &std::path::Path) -> Option<std::fs::File> {
    let path = mem::store::state_dir(root).ok()?.join("ledger.lock");
    let file = std::fs::File::options().create(true).truncate(false).write(true).open(path).ok()?;
    let start = crate::shared::bar::stopwatch();
    loop {
        match file.try_lock() {
            Ok(()) => return Some(file),
            Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LEDGER_WAIT => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(_) => return None,
        }
    }
}
