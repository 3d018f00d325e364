//! The command-line front end: clap definitions, one module per subcommand, and the shared
//! helpers that print reports. The only place that prints or reads the clock.

mod add;
mod allow;
mod capture;
mod checkpoint;
mod completions;
mod context;
mod eval;
mod forget;
mod globals;
mod health;
mod hook;
mod index;
mod init;
mod list;
mod machine;
mod man;
mod mcp;
mod prune;
mod recall;
mod reflect;
mod session;
mod setup;
mod show;
mod stats;
mod sync;
mod used;
mod user;
mod verify;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use jiff::Timestamp;
use mem::store;

pub(crate) use self::globals::Globals;
use mem::{Engine, MemoryType, RefreshReport};

/// Local long-term memory for AI coding agents: Markdown memories, ranked recall.
#[derive(Debug, Parser)]
#[command(name = "mem", version, about, max_term_width = 100)]
pub struct Cli {
    /// Memory root to use (default: $MEM_DIR, else the nearest folder above with a mem.toml,
    /// else the per-user root under the XDG data directory).
    #[arg(long, global = true, env = "MEM_DIR", value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Take this time as "now" (RFC 3339, e.g. 2026-11-30T12:00:00Z), for reproducible runs.
    #[arg(long, global = true, env = "MEM_NOW", value_name = "TIME", value_parser = parse_now)]
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
    /// Write the usage log into the memory files' `access:` front-matter.
    Sync(sync::Args),
    /// Mark a memory invalid from now on (it stays on disk; recall leaves it out).
    Forget(forget::ForgetArgs),
    /// Mark a memory as replaced by another.
    Supersede(forget::SupersedeArgs),
    /// Suggest (--dry-run) or archive memories that faded, went unused, are invalid or duplicated.
    Prune(prune::Args),
    /// Bring an archived memory back.
    Restore(prune::RestoreArgs),
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
    /// the root); the tools are recall, remember, get, recent, forget, used, and session_list,
    /// session_search and session_resume over the session log. See docs/mcp.md.
    Mcp(mcp::Args),
    /// Capture an agent session (hook payload on stdin) as one episodic memory.
    Capture(capture::Args),
    /// Wire mem into Claude Code, Codex or Gemini CLI: hooks and MCP server in its own config files.
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
    /// Print the shell completion script for mem (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the manual page (roff), or write one page per command with --out DIR.
    Man(man::Args),
}

/// Runs the parsed command; the exit status on success (0, or 1 for `mem health` finding a
/// problem and for `mem recall` finding nothing).
/// Hook mode (`--hook`, seen by `main` on the command line): whatever can be set aside is, so
/// that the agent's hook still answers (a broken user configuration file, see
/// [`user::set_aside_when_broken`]).
pub fn hook_mode() {
    user::set_aside_when_broken();
}

pub fn run(cli: Cli) -> Result<u8> {
    VERBOSE.store(cli.verbose, std::sync::atomic::Ordering::Relaxed);
    let ctx = Globals { dir: cli.dir, now: now(cli.now), fixed_now: cli.now };
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
        Command::Checkpoint(args) => checkpoint::run(args, &ctx),
        Command::Checkpoints(args) => checkpoint::list(args, &ctx),
        Command::Rewind(args) => checkpoint::rewind(args, &ctx),
        Command::Session(args) => session::run(args, &ctx),
        Command::Forget(args) => forget::forget(args, &ctx),
        Command::Supersede(args) => forget::supersede(args, &ctx),
        Command::Prune(args) => prune::run(args, &ctx),
        Command::Restore(args) => prune::restore(args, &ctx),
        Command::Reflect(args) => reflect::run(args, &ctx),
        Command::Capture(args) => return capture::run(args, &ctx),
        Command::Context(args) => context::run(args, &ctx),
        Command::Mcp(args) => mcp::run(args, &ctx),
        Command::Setup(args) => setup::run(args, &ctx),
        Command::Allow(args) => allow::run(args, &ctx),
    };
    done.map(|()| 0)
}

/// "Now": `fixed` (from `--now` or `MEM_NOW`) when given, else the clock. The one place the
/// binary reads the clock: once per command, or once per request for `mem mcp`.
#[allow(clippy::disallowed_methods)]
fn now(fixed: Option<Timestamp>) -> Timestamp {
    fixed.unwrap_or_else(Timestamp::now)
}

pub(crate) fn parse_now(s: &str) -> std::result::Result<Timestamp, String> {
    mem::format::parse_time(s)
}

/// Whether an error is a write to a closed pipe (`mem recall ... | head`), which is not a failure.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// An error and its causes on one line, leaving out a cause its effect already quotes (the
/// library's messages include their source).
pub fn describe(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
    }
    text
}

/// Makes `dir` a memory root (see [`store::init`]) and starts observing its usage now, unless
/// it already does: time before that is not time without use (docs/decay.md).
fn init_root(dir: &Path, now: Timestamp) -> Result<store::InitReport> {
    let report = store::init(dir)?;
    Engine::open(dir)
        .and_then(|mut engine| engine.start_observing(now))
        .with_context(|| format!("cannot start usage observation in {}", dir.display()))?;
    // Made here: the user's own (see `machine`).
    if let Err(e) = machine::remember(dir, None) {
        eprintln!("mem: warning: {}", describe(&e));
    }
    Ok(report)
}

/// Whether two paths name the same folder (both canonicalized when they exist).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Starts timing a duration (the binary measures; the engine never does).
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> std::time::Instant {
    std::time::Instant::now()
}

/// Writes the usage log into the files before a command that reads or moves them all, unless
/// `skip` or `[usage] sync = false`. Files that cannot be synced are reported on stderr; their
/// events wait in the log.
fn sync_first(engine: &mut Engine, now: Timestamp, skip: bool) -> Result<()> {
    if skip || !engine.config().usage.sync {
        return Ok(());
    }
    let hidden = mem::progress::Silent;
    engine.refresh(now, &hidden)?;
    let report = engine.sync(now)?;
    for failure in &report.failed {
        eprintln!("{failure}  [its access: line stays; it is still read]");
    }
    if report.files > 0 {
        engine.refresh(now, &hidden)?;
    }
    Ok(())
}

/// A settings error about a command-line override, named as the option (`--min-cluster`).
fn option_error(e: mem::config::SettingError) -> anyhow::Error {
    anyhow::anyhow!("--{} {}", e.key.replace('_', "-"), e.message)
}

/// A progress bar for indexing files on stderr when it is a terminal, hidden otherwise.
fn progress_bar() -> Bar {
    progress_bar_for("indexing", "files")
}

/// A progress bar on stderr, drawn by indicatif, for the library's [`mem::progress::Progress`].
struct Bar(indicatif::ProgressBar);

impl mem::progress::Progress for Bar {
    fn set_length(&self, len: u64) {
        self.0.set_length(len);
    }

    fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A progress bar "`doing` [bar] pos/len `things` (eta left)" on stderr when it is a
/// terminal, hidden otherwise.
fn progress_bar_for(doing: &str, things: &str) -> Bar {
    if std::io::stderr().is_terminal() {
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{doing} {{bar:30}} {{pos}}/{{len}} {things} ({{eta}} left)"
        )) {
            bar.set_style(style);
        }
        Bar(bar)
    } else {
        Bar(indicatif::ProgressBar::hidden())
    }
}

/// The model folder and ONNX Runtime library: the environment's, else the user
/// configuration's (an empty variable counts as unset).
fn model_overrides() -> Result<mem::embed::ModelOverrides> {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let user = user::load()?;
    Ok(mem::embed::ModelOverrides {
        model_dir: env(mem::embed::MODEL_DIR_ENV).or(user.embed.model_dir),
        runtime: env(mem::embed::ORT_LIB_ENV).or(user.embed.ort_library),
    })
}

/// The values of `--layer`.
fn layer_parser() -> impl clap::builder::TypedValueParser<Value = mem::store::Layer> {
    use clap::builder::{PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(["project", "user"])
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Parses a share between 0 and 1 (`--min-strength`).
fn parse_share(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("expected a number from 0 to 1, got {s:?}")),
    }
}

/// Parses `--mode`: one of the library's recall modes, each listed in the help.
fn recall_mode_parser() -> impl clap::builder::TypedValueParser<Value = mem::config::RecallMode> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let modes = mem::config::RecallMode::ALL;
    PossibleValuesParser::new(modes.map(|m| PossibleValue::new(m.as_str()).help(m.describe())))
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Parses `--fusion`: one of the library's fusions, each listed in the help.
fn fusion_parser() -> impl clap::builder::TypedValueParser<Value = mem::config::Fusion> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let fusions = mem::config::Fusion::ALL;
    PossibleValuesParser::new(fusions.map(|f| PossibleValue::new(f.as_str()).help(f.describe())))
        .map(|s| s.parse().expect("clap checked it is a possible value"))
}

/// Prints a refresh's notices and problems on stderr, one line each.
fn print_problems(report: &RefreshReport) {
    for line in problem_lines(report) {
        eprintln!("{line}");
    }
}

/// Whether `--verbose` was given: every problem on its own line.
static VERBOSE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A refresh's notices and problems as [`print_problems`] prints them: one line per kind of
/// problem, with a count and the first example, or every problem with `--verbose`.
fn problem_lines(report: &RefreshReport) -> Vec<String> {
    let verbose = VERBOSE.load(std::sync::atomic::Ordering::Relaxed);
    let mut lines: Vec<String> =
        report.notices.iter().map(|notice| format!("mem: notice: {notice}")).collect();
    lines.extend(report.warnings.iter().map(|warning| format!("mem: warning: {warning}")));
    lines.extend(report.bad.iter().map(|bad| format!("{bad}  [skipped]")));
    lines.extend(
        report
            .scan_issues
            .iter()
            .map(|issue| format!("{}: {}  [skipped]", issue.path.display(), issue.message)),
    );
    lines.extend(report.duplicates.iter().map(|(id, paths)| {
        format!("mem: warning: id {id:?} is used by {} files: {}", paths.len(), paths.join(", "))
    }));
    // Files that are skipped are always listed one by one; warnings about files that are
    // read are summarised per kind.
    let kinds: [(&str, Vec<String>); 1] = [(
        "memories are created after now (their age counts as zero)",
        report
            .future
            .iter()
            .map(|(path, created)| {
                format!(
                    "{path}: warning: created {created} is in the future; its age counts as zero"
                )
            })
            .collect(),
    )];
    for (kind, all) in kinds {
        match all.as_slice() {
            [] => {}
            [one] => lines.push(one.clone()),
            [first, ..] if !verbose => lines.push(format!(
                "mem: warning: {} {kind}; e.g. {first}  (--verbose lists all)",
                all.len()
            )),
            _ => lines.extend(all),
        }
    }
    lines
}

/// A memory as JSON, the fields `mem show --json` and the MCP tool `get` share: the file's
/// own fields, its whole front-matter and its body.
fn memory_json(path: &str, memory: &mem::Memory) -> serde_json::Value {
    serde_json::json!({
        "id": memory.id(),
        "path": path,
        "title": memory.title(),
        "type": memory.kind(),
        "importance": memory.importance(),
        "created": memory.created(),
        "tags": memory.tags(),
        "source": memory.source(),
        "front_matter": memory.front_matter(),
        "body": memory.body(),
    })
}

/// Writes `value` as pretty JSON and a newline to stdout.
fn print_json(value: &impl serde::Serialize) -> Result<()> {
    let text = escape_controls(&serde_json::to_string_pretty(value)?);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    Ok(())
}

/// JSON text with DEL and the C1 control characters (U+0080 to U+009F, CSI among them) escaped
/// too: serde_json escapes only those below U+0020, and a terminal acts on the others. They
/// can only stand inside strings, so the text stays the same JSON.
fn escape_controls(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Writes text to stdout.
fn print_text(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    // A memory edited by hand may hold terminal escapes: they are dropped, never acted on.
    out.write_all(mem::format::without_controls(text).as_bytes())?;
    out.flush()?;
    Ok(())
}

/// A borderless table whose columns line up.
fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled)
        .set_header(header.iter().map(comfy_table::Cell::new));
    t
}

/// A table as text, without the padding at the end of each line.
fn render(table: &comfy_table::Table) -> String {
    table.lines().map(|l| l.trim_end().to_string() + "\n").collect()
}

/// Ages as people say them: 5h, 12d, 8mo, 3y.
fn age(days: f64) -> String {
    if days < 1.0 {
        format!("{}h", (days * 24.0).floor() as i64)
    } else if days < 60.0 {
        format!("{}d", days.floor() as i64)
    } else if days < 730.0 {
        format!("{}mo", (days / 30.44).floor() as i64)
    } else {
        format!("{}y", (days / 365.25).floor() as i64)
    }
}

/// `--type` values.
fn parse_type(s: &str) -> std::result::Result<MemoryType, String> {
    s.parse()
}
