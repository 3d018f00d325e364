//! `mem capture`: read a hook payload on stdin and capture the session it names (see
//! `docs/capture.md`). Every attempt is logged in `.mem/capture.log`, failures included.

use anyhow::{Result, anyhow};
use mem::Engine;
use mem::capture::{self, LogEntry, Written};

use crate::shared::Globals;
use mem::agent::Agent;

/// Arguments of `mem capture`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what was captured as JSON.
    #[arg(long, conflicts_with = "hook")]
    json: bool,
    /// The hook payload as an argument instead of on stdin (Codex's `notify` program gets it
    /// as its last argument).
    #[arg(value_name = "PAYLOAD")]
    payload: Option<String>,
    /// Run as this agent's hook: print nothing on stdout (what both agents accept) and exit 0
    /// even when the capture fails; the failure is on stderr and in .mem/capture.log, and
    /// `mem health` reports it.
    #[arg(long, value_parser = crate::shared::gate::agent_parser(), value_name = "AGENT")]
    hook: Option<Agent>,
    /// With --hook: which registration started it (`--project-only`, `--user-scope`; see
    /// docs/agents.md).
    #[command(flatten)]
    registration: crate::shared::gate::Registration,
    /// Capture, as the hooks would have, every session of this project that `mem health
    /// --transcripts` lists as never captured (the agents' own folders), each into the root
    /// its working directory resolves to; exit 1 when some failed (listed).
    #[arg(long, conflicts_with_all = ["payload", "hook", "json"])]
    missed: bool,
    /// With --missed: only this agent's sessions.
    #[arg(long, requires = "missed", value_parser = crate::shared::gate::agent_parser(), value_name = "AGENT")]
    agent: Option<Agent>,
    /// With --missed: list the sessions it would capture, and capture nothing.
    #[arg(long, requires = "missed")]
    dry_run: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<u8> {
    if args.missed {
        return missed(&args, ctx);
    }
    let hook = args.hook.is_some();
    match capture(args, ctx) {
        Err(e) if hook => {
            eprintln!("mem: capture hook: {}", crate::shared::output::describe(&e));
            Ok(0)
        }
        done => done.map(|()| 0),
    }
}

/// `--missed`: the sessions health finds never captured, captured now (see [`Args::missed`]).
fn missed(args: &Args, ctx: &Globals) -> Result<u8> {
    let engine = ctx.engine()?;
    let project = mem::health::project_dir(engine.files.root());
    let folders =
        crate::shared::coverage::transcript_folders(None, &project, &crate::shared::gate::homes());
    let coverage = engine.files.coverage(&folders)?;
    drop(engine);
    let gaps: Vec<_> =
        coverage.gaps.into_iter().filter(|g| args.agent.is_none_or(|a| a == g.agent)).collect();
    if gaps.is_empty() {
        return crate::shared::output::print_text(&format!(
            "no session of {} is missing ({} found, {} captured)\n",
            project.display(),
            coverage.found,
            coverage.captured
        ))
        .map(|()| 0);
    }
    let mut failed = Vec::new();
    for gap in &gaps {
        let path = std::path::Path::new(&gap.path);
        let stored = gap.agent.spec().stored.is_some();
        // Where the session ran: its root is found from there, as the hooks find it (a store
        // holds only the project's sessions: health kept those alone).
        let cwd = (!stored)
            .then(|| mem::agent::head(path).ok().and_then(|h| h.cwd))
            .flatten()
            .unwrap_or_else(|| project.display().to_string());
        let agent = gap.agent.name();
        if args.dry_run {
            let root = ctx.locate_root(Some(&cwd)).map(|(root, _)| root.display().to_string());
            let into = root
                .unwrap_or_else(|e| format!("(no root: {})", crate::shared::output::describe(&e)));
            crate::shared::output::print_text(&format!(
                "would capture\t{agent}\t{}\t{into}\n",
                gap.session_id
            ))?;
            continue;
        }
        let mut payload = serde_json::json!({
            "session_id": gap.session_id,
            "cwd": cwd,
            "hook_event_name": gap.agent.spec().events.turn_end,
        });
        if !stored {
            // A stored session is read from the agent's store by its id.
            payload["transcript_path"] = gap.path.clone().into();
        }
        let one = Args {
            json: false,
            payload: Some(payload.to_string()),
            hook: None,
            registration: crate::shared::gate::Registration::default(),
            missed: false,
            agent: None,
            dry_run: false,
        };
        if let Err(e) = capture(one, ctx) {
            failed.push(format!(
                "{agent} {} ({}): {}",
                gap.session_id,
                gap.path,
                crate::shared::output::describe(&e)
            ));
        }
    }
    if args.dry_run {
        return crate::shared::output::print_text(&format!(
            "dry run: {} sessions, nothing captured\n",
            gaps.len()
        ))
        .map(|()| 0);
    }
    if failed.is_empty() {
        return Ok(0);
    }
    for line in &failed {
        eprintln!("mem: not captured: {line}");
    }
    eprintln!("mem: {} of {} missed sessions could not be captured", failed.len(), gaps.len());
    Ok(1)
}

fn capture(args: Args, ctx: &Globals) -> Result<()> {
    let started = args.registration.started();
    let ctx = &ctx.for_hook(started);
    let payload = match &args.payload {
        Some(text) => Ok(text.clone().into_bytes()),
        None => super::hook::read_payload(),
    };
    let bytes = match &payload {
        Ok(bytes) | Err((bytes, _)) => bytes,
    };
    let cwd = mem::capture::Payload::read(bytes).cwd;
    // The root is located once, for the gate and the capture.
    let located = ctx.surroundings(cwd.as_deref()).and_then(|s| Ok(mem::open::locate(&s)?));
    if started != crate::shared::gate::Started::Own {
        let found = located.as_ref().map_err(|e| anyhow!("{e:#}"))?;
        match crate::shared::gate::Gate::at(&found.root, found.source, started) {
            crate::shared::gate::Gate::Act => {}
            crate::shared::gate::Gate::Outside => return Ok(()),
            crate::shared::gate::Gate::HeldBack(line) => {
                eprintln!("{line}");
                return Ok(());
            }
        }
    }
    let found = located
        .and_then(|found| ctx.made(found))
        .map_err(|e| anyhow!("{e:#} (not logged: no memory root)"))?;
    let (root, source) = (found.root.clone(), found.source);
    let logged_failure = |payload: &[u8], message: String| {
        let entry = LogEntry::failure(payload, &message, ctx.now);
        match capture::append_log(&root, &entry) {
            Ok(()) => anyhow!("{message}"),
            Err(e) => anyhow!("{message} (and could not log it: {e})"),
        }
    };
    let payload = match payload {
        Ok(payload) => payload,
        Err((partial, message)) => return Err(logged_failure(&partial, message)),
    };
    // The agent that really runs the hook: one that runs another's settings says so.
    let hook = args.hook.map(|agent| agent.of_hook_payload(&payload));
    if let Some(agent) = hook
        && !super::hook::first_call(ctx, &found, agent, "capture", &payload)?
    {
        return Ok(());
    }
    let homes = crate::shared::gate::homes();
    if let Some(agent) = hook
        && crate::setup::defers_to_hooks(agent, &payload, &mem::health::project_dir(&root), &homes)
    {
        return Ok(());
    }
    // Capture writes and indexes text; it never needs the embedding model.
    let mut engine = match Engine::open(&root) {
        Ok(engine) => engine,
        Err(e) => {
            let message = format!("cannot open memory root {}: {e}", root.display());
            return Err(logged_failure(&payload, message));
        }
    };
    let captured = engine.capture(&payload, &homes, ctx.now)?;
    // The index learns of the session now, not at the next recall (`mem health` compares them).
    let report = engine.refresh(ctx.now, &mem::progress::Silent)?;
    crate::shared::output::print_problems(&report);
    let wrote = matches!(captured.written, Written::Created | Written::Updated)
        || !captured.facts.added.is_empty();
    if wrote {
        // Into the user layer: its remote gets it from a detached `mem sync`, never waited for.
        crate::shared::remote::after_write(&root);
        // With `[team] push = "capture"`: a detached `mem team push`, never waited for.
        crate::shared::team_push::after_capture(&root);
    }
    if captured.skipped_lines > 0 {
        eprintln!(
            "mem: notice: skipped {} {} of {} ({} not JSON even after cleaning, {} over {} MiB)",
            captured.skipped_lines,
            if captured.skipped_lines == 1 { "line" } else { "lines" },
            captured.transcript,
            captured.skipped_lines - captured.oversized_lines,
            captured.oversized_lines,
            mem::json::MAX_LINE_BYTES >> 20
        );
    }
    if args.json {
        return crate::shared::output::print_json(&captured);
    }
    if args.hook.is_some() {
        drop(engine);
        if wrote {
            // The session's `mem mcp`, which holds the model, embeds what was written now,
            // while the agent waits for this hook: the next prompt's hook finds it embedded.
            crate::shared::served::client::refresh(&root, source, ctx.now);
        }
        return Ok(());
    }
    match &captured.path {
        None if !std::path::Path::new(&captured.transcript).exists() => {
            eprintln!("mem: nothing to capture yet: {} does not exist yet", captured.transcript);
            Ok(())
        }
        None => {
            eprintln!(
                "mem: nothing to capture yet: {} has no request, message or tool call",
                captured.transcript
            );
            Ok(())
        }
        Some(path) => {
            let verb = match captured.written {
                Written::Created => "created",
                Written::Updated => "updated",
                Written::Unchanged | Written::Nothing => "unchanged",
            };
            let redacted = match captured.redacted {
                0 => String::new(),
                1 => " (1 secret redacted)".to_string(),
                n => format!(" ({n} secrets redacted)"),
            };
            let path = engine.files.root().join(path);
            let mut text = format!("{verb}\t{}\t{}{redacted}\n", captured.id, path.display());
            if captured.facts.stated > 0 {
                text.push_str(&facts_line(&captured.facts));
            }
            crate::shared::output::print_text(&text)
        }
    }
}

/// The line on the facts the session stated: how many, and what became of the new ones.
fn facts_line(facts: &mem::capture::facts::Facts) -> String {
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut line = format!("facts\t{} stated", plural(facts.stated, "statement"));
    if facts.seen > 0 {
        line.push_str(&format!(", {} taken before", facts.seen));
    }
    if !facts.added.is_empty() {
        line.push_str(&format!(", {} added ({})", facts.added.len(), facts.added.join(", ")));
    }
    if !facts.used.is_empty() {
        line.push_str(&format!(
            ", {} already held, counted as used ({})",
            facts.used.len(),
            facts.used.join(", ")
        ));
    }
    for (old, new) in &facts.superseded {
        line.push_str(&format!(", {new} supersedes {old}"));
    }
    line + "\n"
}
