//! `mem context`: a compact Markdown block for the start of an agent session, within a
//! character budget; with `--hook`, the answer to an agent's SessionStart or UserPromptSubmit
//! hook.

use anyhow::Result;
use mem::engine::ContextOptions;
use mem::session::SessionLog;

use super::Globals;
use mem::agent::Agent;

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
    #[arg(long, default_value_t = mem::engine::DEFAULT_MIN_STRENGTH, value_name = "S", value_parser = super::parse_share)]
    min_strength: f64,
    /// Answer this agent's hook: read its payload on stdin; for a UserPromptSubmit, only the
    /// memories relevant to the prompt, else the block; print it as the JSON the agent reads
    /// (nothing when nothing is relevant) and exit 0 even on failure, which is logged in
    /// .mem/capture.log. See docs/agents.md.
    #[arg(long, value_parser = super::hook::agent_parser(), value_name = "AGENT")]
    hook: Option<Agent>,
    /// With --hook: do nothing unless a project memory root is found from the payload's
    /// working directory (see docs/agents.md).
    #[arg(long, requires = "hook", help = hook::PROJECT_ONLY_HELP)]
    project_only: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if let Some(agent) = args.hook {
        return hook_answer(&args, agent, ctx);
    }
    let mut layers = ctx.layers_near(None)?;
    for (_, report) in layers.refresh(ctx.now, &super::progress_bar())? {
        super::print_problems(&report);
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
        super::print_problems(report);
    }
    super::print_text(&context.text)
}

/// `--hook`: never fails the agent's hook; a failure is reported on stderr and logged.
fn hook_answer(args: &Args, agent: Agent, ctx: &Globals) -> Result<()> {
    let ctx = &ctx.for_hook(args.project_only);
    hook::run(ctx, agent, "context", args.project_only, |_, event| answer(args, agent, ctx, event))
}

/// The hook's answer, or `None` when there is nothing to add. What the session's context
/// already holds is not sent again (the injection ledger of the session log, when the payload
/// names the session): a resumed session gets no start context again, a compaction or a clear
/// empties what the context holds.
fn answer(args: &Args, agent: Agent, ctx: &Globals, event: &hook::Event) -> Result<Option<String>> {
    let mut layers = ctx.layers_near(event.cwd.as_deref())?;
    layers.refresh(ctx.now, &mem::progress::Silent)?;
    let name = event.name.as_deref().unwrap_or(hook::SESSION_START);
    let prompt = event.prompt.as_ref();
    // The session and its digest's id, when the payload names one that can have a digest.
    let session = event
        .session_id
        .as_deref()
        .and_then(|s| mem::capture::check_session_id(s).ok().map(|digest| (s, digest)));
    let mut ledger = match session {
        Some((session, _)) => {
            let log = SessionLog::open_in(layers.project().root())?;
            Some((log, session))
        }
        None => None,
    };
    let mut turn = 0;
    let mut held = Vec::new();
    if let Some((log, session)) = &mut ledger {
        // The prompts the log has of the session (each Stop's capture brings in the turn that
        // ended), and this one: the turn number only labels the ledger's rows.
        turn = log.turns(session)? + i64::from(prompt.is_some());
        match event.source.as_deref().filter(|_| name == hook::SESSION_START) {
            // The resumed conversation holds what was sent into it, of the hooks the agent
            // keeps on resume; the rest is sent again.
            Some("resume")
                if log.has_injections(session)?
                    && !log.record_resume(session, turn, agent.spec().resume_keeps, ctx.now)? =>
            {
                return Ok(None);
            }
            Some("compact" | "clear") => log.record_reset(session, turn, ctx.now)?,
            _ => {}
        }
        held = log.in_context(session)?;
    }
    let mut options = ContextOptions {
        task: args.task.clone(),
        budget: args.budget as usize,
        key: args.key,
        min_strength: args.min_strength,
        sessions: args.sessions,
        held,
        // The session's own digest: the session holds all of it.
        exclude: session.map(|(_, digest)| digest.to_string()).into_iter().collect(),
    };
    if let Some(prompt) = prompt {
        // A prompt gets its own memories only.
        options = ContextOptions { task: Some(prompt.clone()), key: 0, sessions: 0, ..options };
    }
    let context = layers.context(&options, ctx.now)?;
    if context.memories == 0 {
        return Ok(None);
    }
    if let Some((log, session)) = &mut ledger {
        log.record_injections(session, turn, name, &context.sent, ctx.now)?;
    }
    Ok(agent.context_answer(name, &context.text))
}
