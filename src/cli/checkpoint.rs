//! `mem checkpoint`, `mem checkpoints`, `mem rewind`: snapshots of the git working tree the
//! command runs in, under `refs/mem/checkpoints/` (see [`mem::checkpoint`]).

use anyhow::{Result, bail};

use std::path::Path;

use crate::shared::Globals;
use mem::agent::Agent;
use mem::capture::Payload;

use super::hook;
use mem::checkpoint::Workspace;
use mem::session::SessionLog;

/// Arguments of `mem checkpoint`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// A label for the checkpoint.
    #[arg(short = 'm', long = "message", value_name = "LABEL")]
    label: Option<String>,
    /// Print the outcome as JSON.
    #[arg(long, conflicts_with = "hook")]
    json: bool,
    /// Run as this agent's UserPromptSubmit hook: read its payload on stdin, checkpoint the
    /// repository of its working directory (none outside one), record the checkpoint in the
    /// session log against the turn the prompt starts, print nothing, exit 0 even on failure.
    #[arg(long, value_parser = crate::shared::gate::agent_parser(), value_name = "AGENT", conflicts_with = "label")]
    hook: Option<Agent>,
    /// With --hook: which registration started it (`--project-only`, `--user-scope`; see
    /// docs/agents.md).
    #[command(flatten)]
    registration: crate::shared::gate::Registration,
    #[command(subcommand)]
    action: Option<Action>,
}

/// What `mem checkpoint` can do besides taking one.
#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Remove old checkpoints (their refs only; the user's refs are never touched).
    Prune {
        /// Keep this many of the newest.
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Remove those taken longer ago than this (e.g. 30d, 12h, "2 weeks").
        #[arg(long, value_name = "DURATION")]
        older_than: Option<String>,
    },
}

/// Arguments of `mem checkpoints`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print a JSON array.
    #[arg(long)]
    json: bool,
}

/// Arguments of `mem rewind`.
#[derive(Debug, clap::Args)]
pub struct RewindArgs {
    /// The checkpoint (its id from `mem checkpoints`, or the start of it).
    id: String,
    /// Only these files or folders, relative to the repository's top.
    paths: Vec<String>,
    /// Say what would change, change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
}

fn workspace(ctx: &Globals) -> Result<Workspace> {
    let cwd = std::env::current_dir()?;
    workspace_at(ctx, &cwd)
}

/// The repository `dir` is in, with the size cap of the user configuration, lowered by the
/// `mem.toml` of the memory root found from `dir` when it sets a smaller one.
fn workspace_at(ctx: &Globals, dir: &Path) -> Result<Workspace> {
    let workspace = Workspace::find(dir)?;
    let user = crate::shared::user::load()?.checkpoint.max_file_bytes;
    let root = ctx
        .locate_root(dir.to_str())
        .ok()
        .and_then(|(root, _)| mem::config::Config::load(&root).ok())
        .and_then(|config| config.checkpoint.max_file_bytes);
    let cap = [user, root].into_iter().flatten().min();
    Ok(match cap {
        Some(bytes) => workspace.with_max_file_bytes(bytes),
        None => workspace,
    })
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if let Some(agent) = args.hook {
        let started = args.registration.started();
        let ctx = &ctx.for_hook(started);
        return hook::run(ctx, agent, "checkpoint", started, |_, _, event| {
            checkpoint_turn(ctx, event).map(|_| None)
        });
    }
    let workspace = workspace(ctx)?;
    if let Some(Action::Prune { keep, older_than }) = args.action {
        if keep.is_none() && older_than.is_none() {
            bail!("say which to remove: --keep N, --older-than DURATION, or both");
        }
        let cutoff = match older_than {
            Some(text) => {
                let span: jiff::Span = text.parse().map_err(|e| {
                    anyhow::anyhow!("--older-than {text:?} is not a duration ({e}); e.g. 30d")
                })?;
                let zoned = ctx.now.in_tz("UTC")?;
                Some(zoned.checked_sub(span)?.timestamp())
            }
            None => None,
        };
        let removed = workspace.prune(keep, cutoff)?;
        if args.json {
            return crate::shared::output::print_json(&serde_json::json!({ "removed": removed }));
        }
        println!("removed {} checkpoints", removed.len());
        return Ok(());
    }
    let label = args.label.unwrap_or_else(|| "checkpoint".to_string());
    let taken = workspace.checkpoint(&label, ctx.now)?;
    if args.json {
        return crate::shared::output::print_json(&taken);
    }
    let mut text = match taken.new {
        true => format!("checkpoint {}\n", taken.id),
        false => format!("nothing changed since checkpoint {}\n", taken.id),
    };
    text.push_str(&skipped_text(&taken.skipped_roots, &taken.skipped_files));
    crate::shared::output::print_text(&text)
}

/// What a checkpoint left out, one line each.
fn skipped_text(roots: &[String], files: &[mem::checkpoint::SkippedFile]) -> String {
    let mut text = String::new();
    for root in roots {
        text.push_str(&format!("  left out {root} (a memory root: memories are not rewound)\n"));
    }
    for file in files {
        text.push_str(&format!(
            "  left out {} ({} bytes, over the checkpoint size cap: [checkpoint] max_file_bytes)\n",
            file.path, file.bytes
        ));
    }
    text
}

pub fn list(args: ListArgs, ctx: &Globals) -> Result<()> {
    let workspace = workspace(ctx)?;
    let list = workspace.list()?;
    // The turns the checkpoint hook recorded, when the session log of this root has any.
    let turns = match session_log_near(ctx) {
        Some(log) => log.checkpoint_turns(workspace.top())?,
        None => Vec::new(),
    };
    let turns_of = |id: &str| -> Vec<(String, i64)> {
        turns.iter().filter(|(c, _, _)| c == id).map(|(_, s, t)| (s.clone(), *t)).collect()
    };
    if args.json {
        let list: Vec<serde_json::Value> = list
            .iter()
            .map(|c| {
                let mut value = serde_json::to_value(c).expect("a checkpoint serializes");
                let turns: Vec<_> = turns_of(&c.id)
                    .into_iter()
                    .map(|(s, t)| serde_json::json!({ "session": s, "turn": t }))
                    .collect();
                value["turns"] = serde_json::json!(turns);
                value
            })
            .collect();
        return crate::shared::output::print_json(&list);
    }
    let mut text = String::new();
    if list.is_empty() {
        text.push_str("no checkpoints yet: `mem checkpoint` takes one\n");
    }
    for c in &list {
        let before: Vec<String> =
            turns_of(&c.id).into_iter().map(|(s, t)| format!("session {s} turn {t}")).collect();
        let before = match before.is_empty() {
            true => String::new(),
            false => format!("  (before {})", before.join(", ")),
        };
        let skipped = match c.skipped_files.len() {
            0 => String::new(),
            n => format!("  ({n} large files left out)"),
        };
        text.push_str(&format!(
            "{}  {}  {} files changed  {}{before}{skipped}\n",
            c.id, c.at, c.files_changed, c.label
        ));
    }
    // Labels, session ids and names come from others: printed without control characters.
    crate::shared::output::print_text(&text)
}

pub fn rewind(args: RewindArgs, ctx: &Globals) -> Result<()> {
    let rewound = workspace(ctx)?.rewind(&args.id, &args.paths, args.dry_run, ctx.now)?;
    if args.json {
        return crate::shared::output::print_json(&rewound);
    }
    let verb = |done: &str, would: &str| if args.dry_run { would } else { done }.to_string();
    let mut text = String::new();
    let mut say = |paths: &[String], what: &dyn Fn(&str) -> String| {
        for path in paths {
            text.push_str(&what(path));
            text.push('\n');
        }
    };
    say(&rewound.restored, &|p| format!("{} {p}", verb("restored", "would restore")));
    say(&rewound.removed, &|p| format!("{} {p}", verb("removed", "would remove")));
    say(&rewound.kept_ignored, &|p| format!("left {p} as it is (ignored now)"));
    say(&rewound.kept_ignored_then, &|p| {
        format!("left {p} as it is (the checkpoint's .gitignore excluded it)")
    });
    say(&rewound.kept_skipped, &|p| {
        format!("left {p} as it is (too large: the checkpoint left it out)")
    });
    say(&rewound.kept_folders, &|p| {
        format!(
            "left {p} as it is (a folder holding ignored files; the checkpoint has a file there)"
        )
    });
    say(&rewound.submodules, &|p| {
        format!("left submodule {p} at its commit (rewind does not move submodules)")
    });
    say(&rewound.kept_memory, &|p| {
        format!("left {p} as it is (a memory root: checkpoints hold no memories)")
    });
    if rewound.restored.is_empty() && rewound.removed.is_empty() {
        text.push_str(&format!("the working tree is as checkpoint {} has it\n", args.id));
    }
    if let Some(before) = &rewound.before {
        text.push_str(&format!("undo with: mem rewind {before}\n"));
    }
    crate::shared::output::print_text(&text)
}

/// The checkpoint hook: the repository of the agent's working directory checkpointed before
/// the prompt, and recorded in the session log as the checkpoint of the turn the prompt starts.
/// Outside a repository there is nothing to do. The turn is one more than the prompts the log
/// has for the session once its transcript is read, unless the transcript already ends with
/// this very prompt.
fn checkpoint_turn(ctx: &Globals, event: &Payload) -> Result<()> {
    let cwd = match &event.cwd {
        Some(cwd) => Path::new(cwd).to_path_buf(),
        None => std::env::current_dir()?,
    };
    if !Workspace::is_inside(&cwd) {
        return Ok(());
    }
    let workspace = workspace_at(ctx, &cwd)?;
    let home = dirs::home_dir().and_then(|h| std::fs::canonicalize(h).ok());
    let top = std::fs::canonicalize(workspace.top()).ok();
    if home.is_some() && home == top {
        bail!(
            "the repository at {} is your home folder: the checkpoint hook never snapshots it \
             (every file under home would be in each checkpoint); run `mem checkpoint` there \
             yourself if you mean it",
            workspace.top().display()
        );
    }
    let Some(session) = &event.session_id else {
        workspace.checkpoint("before a prompt", ctx.now)?;
        return Ok(());
    };
    if let Err(e) = mem::capture::check_session_id(session) {
        // The files are checkpointed all the same; the turn cannot be recorded.
        workspace.checkpoint("before a prompt", ctx.now)?;
        bail!("checkpoint taken, turn not recorded: {e}");
    }
    // The turn goes to the session log of the memory root found from the working directory;
    // where there is none and the per-user root was never made, the hook makes none.
    let Some(root) = ctx.existing_root_near(event.cwd.as_deref())? else {
        workspace.checkpoint("before a prompt", ctx.now)?;
        return Ok(());
    };
    let mut log = SessionLog::open_in(&root)?;
    let turn = prompt_turn(&mut log, session, event)?;
    let label = format!("before turn {turn} of session {session}");
    let taken = workspace.checkpoint(&label, ctx.now)?;
    log.record_checkpoint(session, turn, &taken.id, workspace.top(), ctx.now)?;
    Ok(())
}

/// The number of the prompt a UserPromptSubmit hook of `session` comes with: the transcript
/// read into the log first, one more than the prompts there, unless the transcript already
/// holds this one.
fn prompt_turn(log: &mut SessionLog, session: &str, event: &Payload) -> Result<i64> {
    if let Some(transcript) = event.transcript_file(&crate::shared::gate::homes()) {
        log.import(&transcript, session, None)?;
    }
    let mut turn = log.turns(session)? + 1;
    let prompt = event.prompt.as_deref().map(|p| mem::session::events::log_text(p, &mut 0));
    if turn > 1 && prompt.is_some() && log.last_prompt(session)? == prompt {
        turn -= 1;
    }
    Ok(turn)
}

/// The session log of the memory root found from the working directory, if it has one (never
/// created here, nor the root).
fn session_log_near(ctx: &Globals) -> Option<SessionLog> {
    let (root, _) = ctx.locate_root(None).ok()?;
    SessionLog::existing_in(&root).ok().flatten()
}
