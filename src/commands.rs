//! Every subcommand and the front end that runs it: the command line's modules (`cli`), the MCP
//! server (`mcp`), the page (`ui`) and agent setup (`setup`); the one place that knows them all.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};
use jiff::Timestamp;

use crate::cli::*;
use crate::shared::{Globals, now, user};
use crate::{mcp, served, setup, ui};

/// Local long-term memory for AI coding agents: Markdown memories, ranked recall.
#[derive(Debug, Parser)]
#[command(name = "mem", version, about, max_term_width = 100)]
pub struct Cli {
    /// Memory root to use (default: $MEM_DIR, else the nearest folder above with a mem.toml,
    /// else the per-user root under the XDG data directory).
    #[arg(long, global = true, env = "MEM_DIR", value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Take this time as "now" (RFC 3339, e.g. 2026-11-30T12:00:00Z), for reproducible runs.
    #[arg(long, global = true, env = "MEM_NOW", value_name = "TIME", value_parser = parse::parse_now)]
    now: Option<Timestamp>,
    /// List every problem found in the files (by default: one line per kind, with a count
    /// and an example).
    #[arg(long, short = 'v', global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Make a folder a memory root (a commented mem.toml, .mem/ in .gitignore); --project makes
    /// the repository's .memory/ folder its project root.
    Init(init::Args),
    /// Write a new memory (text as argument or on stdin).
    Add(add::Args),
    /// Bring the index up to date by checking every file (recall checks folders and what it returns).
    Index(index::Args),
    /// Rank memories for a task by relevance × recency × importance.
    Recall(recall::Args),
    /// Print one memory.
    Show(show::Args),
    /// List memories, newest first.
    List(list::Args),
    /// Count memories by type, index size, bad files.
    Stats(stats::Args),
    /// Measure recall quality and latency on a labelled query file.
    Eval(eval::Args),
    /// Record that memories helped; they grow stronger and decay more slowly.
    Used(used::Args),
    /// Write this machine's usage to its usage file (`usage/<machine>.tsv`), and sync the user
    /// layer with its git remote (`[layers] user_remote`): commit, pull, push.
    Sync(sync::Args),
    /// Copy an agent's own memory (Claude Code auto memory, Codex, Gemini CLI) into mem:
    /// redacted, with its origin in `source`, under the same id.
    Adopt(adopt::AdoptArgs),
    /// Mark a memory invalid from now on (it stays on disk; recall leaves it out).
    Forget(forget::ForgetArgs),
    /// Mark a memory as replaced by another.
    Supersede(forget::SupersedeArgs),
    /// Replace the secrets already in the memory files (those `mem health` reports).
    Redact(redact::Args),
    /// Suggest (--dry-run) or archive memories that faded, went unused, are invalid or duplicated.
    Prune(prune::Args),
    /// Bring an archived memory back.
    Restore(prune::RestoreArgs),
    /// Resolve a memory file a git merge left conflict markers in: the later edit (by
    /// `updated`) stays, the earlier one becomes a memory of its own, superseded.
    Resolve(merge::ResolveArgs),
    /// Merge two versions of a memory file: run by git (`merge.mem.driver`, registered by
    /// `mem init --project` and `mem setup`), not by hand.
    #[command(hide = true)]
    MergeDriver(merge::DriverArgs),
    /// Consolidate clusters of related observations into higher-level memories.
    Reflect(reflect::Args),
    /// Print a compact Markdown block of key memories (and a recall for --task) for a session start.
    Context(context::Args),
    /// Verify the root: index against files, parse errors, usage log, captures, session coverage.
    Health(health::Args),
    /// Check the project root's memories against the code they cite (current, changed, moved,
    /// gone); exit 1 when something cited is gone or moved.
    Verify(verify::Args),
    /// Serve this root to AI agents over the Model Context Protocol (stdio).
    ///
    /// An MCP client starts it and speaks JSON-RPC on its stdin and stdout until it closes
    /// stdin. Register it as the command `mem` with the arguments `mcp` (add `--dir DIR` to pin
    /// the root; in the user's own configuration, which starts it in every folder, `mcp
    /// --user-scope`); the tools are recall, remember, get, recent, forget, used, and
    /// session_list, session_search and session_resume over the session log. See docs/mcp.md.
    Mcp(mcp::Args),
    /// Capture an agent session (hook payload on stdin) as one episodic memory.
    Capture(capture::Args),
    /// Wire mem into a coding agent (Claude Code, Codex, Gemini CLI, OpenCode, GitHub Copilot
    /// CLI, pi): hooks and MCP server in its own config files.
    Setup(setup::Args),
    /// Let sessions use a memory root this machine did not make or set up (a cloned
    /// repository's, one someone else owns).
    Allow(allow::Args),
    /// Snapshot the git working tree under refs/mem/checkpoints/ (HEAD, index and branches untouched).
    Checkpoint(checkpoint::Args),
    /// List the checkpoints of this repository, newest first.
    Checkpoints(checkpoint::ListArgs),
    /// Restore files to a checkpoint, after checkpointing the present (so it can be undone).
    Rewind(checkpoint::RewindArgs),
    /// The session log: list, show, search and resume agent sessions that `mem capture` logged.
    Session(session::Args),
    /// Serve a local web page over this root on 127.0.0.1: search with the why, decay curves,
    /// prune review, capture coverage, sessions and what each sent the model (docs/ui.md); a
    /// root this machine did not make, set up or allow is refused (`mem allow`).
    Ui(ui::Args),
    /// The team's shared store on PostgreSQL (docs/teams.md): `init` its schema, `push` this
    /// root's memories, `forget --author` one author's rows.
    Team(team::Args),
    /// Print the shell completion script for mem (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the manual page (roff), or write one page per command with --out DIR.
    Man(man::Args),
}

/// Hook mode (`--hook`, seen by `main` on the command line): whatever can be set aside is, so
/// that the agent's hook still answers (a broken user configuration file, see
/// [`user::set_aside_when_broken`]).
pub fn hook_mode() {
    user::set_aside_when_broken();
}

/// Runs the parsed command; the exit status on success (0, or 1 for `mem health` finding a
/// problem and for `mem recall` finding nothing).
pub fn run(cli: Cli) -> Result<u8> {
    crate::shared::output::VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    // A recall or a hook's context ends the process: its model is left to the exit.
    let ends_soon = matches!(cli.command, Command::Recall(_) | Command::Context(_));
    let ctx = Globals { dir: cli.dir, now: now(cli.now), fixed_now: cli.now, ends_soon };
    if !matches!(cli.command, Command::Completions(_) | Command::Man(_) | Command::MergeDriver(_)) {
        // The user's own redaction patterns apply to everything this process writes (the
        // merge driver writes only what git gives it, and must not fail on a broken file).
        user::load()?;
    }
    let done = match cli.command {
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Health(args) => return health::run(args, &ctx),
        Command::Verify(args) => return verify::run(args, &ctx),
        Command::Init(args) => init::run(args, &ctx),
        Command::Add(args) => add::run(args, &ctx),
        Command::Index(args) => index::run(args, &ctx),
        Command::Recall(args) => return recall::run(args, &ctx),
        Command::Show(args) => show::run(args, &ctx),
        Command::List(args) => list::run(args, &ctx),
        Command::Stats(args) => stats::run(args, &ctx),
        Command::Eval(args) => eval::run(args, &ctx),
        Command::Used(args) => used::run(args, &ctx),
        Command::Sync(args) => sync::run(args, &ctx),
        Command::Adopt(args) => adopt::adopt(args, &ctx),
        Command::Checkpoint(args) => checkpoint::run(args, &ctx),
        Command::Checkpoints(args) => checkpoint::list(args, &ctx),
        Command::Rewind(args) => checkpoint::rewind(args, &ctx),
        Command::Session(args) => session::run(args, &ctx),
        Command::Forget(args) => forget::forget(args, &ctx),
        Command::Supersede(args) => forget::supersede(args, &ctx),
        Command::Redact(args) => redact::run(args, &ctx),
        Command::Prune(args) => prune::run(args, &ctx),
        Command::Restore(args) => prune::restore(args, &ctx),
        Command::Resolve(args) => merge::resolve(args, &ctx),
        Command::MergeDriver(args) => merge::driver(args, &ctx),
        Command::Reflect(args) => reflect::run(args, &ctx),
        Command::Capture(args) => return capture::run(args, &ctx),
        Command::Context(args) => context::run(args, &ctx),
        Command::Mcp(args) => mcp::run(args, &ctx, served::listen),
        Command::Ui(args) => ui::run(args, &ctx),
        Command::Setup(args) => setup::run(args, &ctx),
        Command::Allow(args) => allow::run(args, &ctx),
        Command::Team(args) => team::run(args, &ctx),
    };
    done.map(|()| 0)
}
