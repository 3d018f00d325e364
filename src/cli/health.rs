//! `mem health`: the verifier. Exit status 0 when all is well, 1 when something is wrong.

use std::path::{Path, PathBuf};

use anyhow::Result;

use mem::engine::ModelStatus;

use super::Globals;

/// Arguments of `mem health`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Report which of this project's agent sessions were never captured. Alone: the agents'
    /// own folders (Claude Code's and Gemini CLI's for the project and each of its subfolders,
    /// Codex's sessions). With a folder (e.g. ~/.claude/projects/<project>, ~/.codex/sessions): that
    /// one, and for Claude Code's folder of the project, those of its subfolders. Subagent
    /// transcripts and sessions whose working directory is outside the project are left out.
    #[arg(long, value_name = "DIR", num_args = 0..=1)]
    transcripts: Option<Option<PathBuf>>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
}

/// The exit status for "something is wrong" (2 stays "could not run").
pub const UNHEALTHY: u8 = 1;

pub fn run(args: Args, ctx: &Globals) -> Result<u8> {
    // No refresh: the point is to see what a refresh would have to fix.
    let mut engine = ctx.engine()?;
    let project = mem::health::project_dir(engine.root());
    let folders = args.transcripts.as_ref().map(|dir| transcript_folders(dir.as_deref(), &project));
    let health = engine.health(ctx.now, folders.as_deref())?;
    let configured = match dirs::home_dir() {
        Some(home) => super::setup::configured(
            &project,
            &home,
            super::hook::codex_home().as_deref(),
            super::hook::gemini_home().as_deref(),
        ),
        None => Vec::new(),
    };
    let hooks_run = configured.iter().all(super::setup::Configured::runs);
    let missing = missing_user_hooks(engine.root(), &configured);
    let ok = health.ok() && hooks_run && missing.is_empty();
    let status_code = if ok { 0 } else { UNHEALTHY };
    if args.json {
        let mut value = serde_json::to_value(&health)?;
        value["agent_commands"] = serde_json::to_value(&configured)?;
        value["ok"] = serde_json::Value::Bool(ok);
        super::print_json(&value)?;
        return Ok(status_code);
    }
    // Codex's user configuration: whether mem's `notify` captures, whether the project is
    // trusted (read once for both).
    let codex_config = super::hook::codex_home()
        .and_then(|c| super::setup::read_settings(&c.join("config.toml")).ok().flatten());
    let mut text = files_lines(&health);
    text.push_str(&logs_lines(&health));
    if let Some(cov) = &health.coverage {
        text.push_str(&coverage_lines(cov, &project, &configured, codex_config.as_deref()));
    }
    if !configured.is_empty() {
        let notify = codex_config.as_deref().is_some_and(super::setup::has_mem_notify);
        text.push_str(&agent_commands(&configured, notify));
    }
    if !missing.is_empty() {
        let detail = "hooks this project's setup put in the user's settings are gone";
        text.push_str(&status(false, "agents", detail));
    }
    for (agent, file) in &missing {
        text.push_str(&format!(
            "    {agent}'s user-level --project-only hooks are gone from {}: sessions started \
             in a subfolder of this project are not captured; run `mem setup {}` here again\n",
            file.display(),
            agent.name()
        ));
    }
    if let Some(code) = &health.code {
        text.push_str(&code_line(code));
    }
    text.push_str(&embedding_line(&health.embedding));
    super::print_text(&text)?;
    Ok(status_code)
}

/// The lines on the files: the index against them, those that do not parse, interrupted
/// moves and writes.
fn files_lines(health: &mem::engine::Health) -> String {
    let mut text = String::new();
    if let Some(notice) = &health.notice {
        text.push_str(&status(false, "index", notice));
    }
    let i = &health.index;
    let current = i.missing.is_empty() && i.stale.is_empty() && i.orphaned.is_empty();
    text.push_str(&status(
        current,
        "index",
        &if current {
            format!("{} files, {} indexed, all current", i.files, i.indexed)
        } else {
            format!(
                "{} missing, {} stale, {} orphaned ({} files, {} indexed); `mem index` fixes it",
                i.missing.len(),
                i.stale.len(),
                i.orphaned.len(),
                i.files,
                i.indexed
            )
        },
    ));
    for (label, list) in [("missing", &i.missing), ("stale", &i.stale), ("orphaned", &i.orphaned)] {
        for path in list {
            text.push_str(&format!("    {label:<9} {path}\n"));
        }
    }
    let parses = i.bad.is_empty() && i.unreadable.is_empty();
    text.push_str(&status(
        parses,
        "files",
        &if parses {
            "every memory file parses".to_string()
        } else {
            format!("{} files fail to parse or cannot be read", i.bad.len() + i.unreadable.len())
        },
    ));
    for reason in i.bad.iter().chain(&i.unreadable) {
        text.push_str(&format!("    {reason}\n"));
    }
    for mem::engine::InterruptedMove { id, path, archived } in &health.interrupted_moves {
        text.push_str(&status(
            false,
            "moves",
            &format!(
                "{id} is both at {path} and at {archived} (a prune or restore was interrupted); \
                 `mem prune` or `mem restore {id}` finishes the move"
            ),
        ));
    }
    if !health.leftovers.is_empty() {
        text.push_str(&status(
            false,
            "writes",
            &format!(
                "{} temporary files left by interrupted writes; `mem index` removes them",
                health.leftovers.len()
            ),
        ));
        for path in &health.leftovers {
            text.push_str(&format!("    {path}\n"));
        }
    }
    text
}

/// The lines on the logs: usage, the usage files, the session log, captures.
fn logs_lines(health: &mem::engine::Health) -> String {
    let mut text = String::new();
    let u = &health.usage;
    text.push_str(&status(
        u.error.is_none(),
        "usage",
        &match (&u.error, u.present) {
            (Some(e), _) => e.clone(),
            (None, true) => format!("usage.db consistent ({} events)", u.events),
            (None, false) => "no usage log yet".to_string(),
        },
    ));
    if !u.file_problems.is_empty() {
        let what = format!(
            "{} lines of the usage files cannot be read and are skipped; fix or delete them \
             (each is one event, or a note of when observation began)",
            u.file_problems.len()
        );
        text.push_str(&status(false, "usage files", &what));
        for line in &u.file_problems {
            text.push_str(&format!("    {line}\n"));
        }
    }
    if !u.skipped_files.is_empty() {
        let what = format!(
            "{} usage files are not read (their events do not count); fix or remove each",
            u.skipped_files.len()
        );
        text.push_str(&status(false, "usage files", &what));
        for line in &u.skipped_files {
            text.push_str(&format!("    {line}\n"));
        }
    }
    let l = &health.sessions;
    text.push_str(&status(
        l.error.is_none(),
        "sessions",
        &match (&l.error, &l.counts) {
            (Some(e), _) => e.clone(),
            (None, Some(n)) => format!(
                "sessions.db consistent ({} sessions, {} events from {} transcripts{})",
                n.sessions,
                n.events,
                n.transcripts,
                match n.skipped_lines {
                    0 => String::new(),
                    k => format!("; {k} transcript lines skipped"),
                }
            ),
            (None, None) => "no session log yet".to_string(),
        },
    ));
    let c = &health.capture;
    let mut capture = if c.present {
        format!("{} ok, {} errors in the last 24 h", c.ok, c.errors)
    } else {
        "no capture log yet".to_string()
    };
    if let Some((at, error)) = &c.last_error {
        capture.push_str(&format!("; last error {at}: {error}"));
    }
    if c.unreadable > 0 {
        capture.push_str(&format!("; {} unreadable log lines", c.unreadable));
    }
    if health.stated_facts > 0 {
        let n = health.stated_facts;
        let facts = if n == 1 { "fact" } else { "facts" };
        capture.push_str(&format!("; {n} {facts} taken from what users stated"));
    }
    text.push_str(&status(c.ok(), "capture", &capture));
    text
}

/// The lines on the sessions on disk against those captured, with the causes of the gaps
/// mem can name (`codex_config`: the text of Codex's user configuration, when there is one).
fn coverage_lines(
    cov: &mem::health::Coverage,
    project: &Path,
    configured: &[super::setup::Configured],
    codex_config: Option<&str>,
) -> String {
    let mut text = String::new();
    let mut detail = format!("{}/{} local sessions captured", cov.captured, cov.found);
    let mut left_out = Vec::new();
    match cov.subagents {
        0 => {}
        1 => left_out.push("1 subagent transcript".to_string()),
        n => left_out.push(format!("{n} subagent transcripts")),
    }
    match cov.other_projects {
        0 => {}
        1 => left_out.push("1 Codex session of another project".to_string()),
        n => left_out.push(format!("{n} Codex sessions of other projects")),
    }
    if !left_out.is_empty() {
        detail.push_str(&format!(" (left out: {})", left_out.join(", ")));
    }
    text.push_str(&status(cov.gaps.is_empty(), "coverage", &detail));
    for gap in &cov.gaps {
        let agent = gap.agent.name();
        text.push_str(&format!("    not captured {agent:<6}  {}  {}\n", gap.session_id, gap.path));
    }
    for file in &cov.unreadable {
        text.push_str(&format!("    not read (skipped): {file}\n"));
    }
    let codex_gaps = cov.gaps.iter().any(|g| g.agent == mem::agent::Agent::Codex);
    let project_hooks = configured
        .iter()
        .any(|c| Path::new(&c.file).starts_with(project) && c.file.ends_with(".codex/hooks.json"));
    if codex_gaps
        && project_hooks
        && !codex_config.is_some_and(|t| codex_trusts_project(t, project))
    {
        text.push_str(
            "    cause: Codex does not trust this project, so it reads none of its .codex/ files \
             (mem's hooks there included): start Codex here and trust the project, then trust \
             the hooks (/hooks); `mem capture --missed` captures the sessions missed\n",
        );
    } else if codex_gaps && configured.iter().any(|c| c.trusted == Some(false)) {
        text.push_str(
            "    cause: Codex has not trusted mem's hooks yet (see `agents` below): run /hooks \
             in Codex and trust them; `mem capture --missed` captures the sessions missed\n",
        );
    } else if !cov.gaps.is_empty() {
        text.push_str(
            "    `mem capture --missed` captures them (sessions from before the hooks ran: \
             before the project or its hooks were trusted, or while mem was not on PATH)\n",
        );
    }
    let own = mem::agent::claude::folder_name(project);
    let in_subfolder = cov.gaps.iter().any(|g| {
        g.agent == mem::agent::Agent::Claude
            && Path::new(&g.path)
                .parent()
                .and_then(Path::file_name)
                .is_some_and(|n| mem::agent::claude::extends(&n.to_string_lossy(), &own))
    });
    let user_hooks = claude_home()
        .is_some_and(|c| configured.iter().any(|h| Path::new(&h.file) == c.join("settings.json")));
    if in_subfolder && !user_hooks {
        text.push_str(
            "    cause: Claude Code runs a project's hooks only when started in the project's \
             top folder; `mem setup claude` in this checkout adds hooks to your own settings \
             that capture the sessions started in its subfolders\n",
        );
    }
    text
}

/// Whether Codex's user configuration `config` trusts the project at `project`
/// (`[projects."<path>"] trust_level = "trusted"`, by its path or a folder above it): Codex
/// reads a project's `.codex/` only then.
fn codex_trusts_project(config: &str, project: &Path) -> bool {
    let Ok(doc) = config.parse::<toml_edit::DocumentMut>() else { return false };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_table_like()) else {
        return false;
    };
    let project = project.canonicalize().unwrap_or_else(|_| project.to_path_buf());
    projects.iter().any(|(path, entry)| {
        let trusted = entry.get("trust_level").and_then(|t| t.as_str()) == Some("trusted");
        let path = Path::new(path);
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        trusted && project.starts_with(path)
    })
}

/// The line on the embedding model.
fn embedding_line(embedding: &ModelStatus) -> String {
    let (ok, detail) = match embedding {
        ModelStatus::NotConfigured => (
            true,
            "no model configured: recall is BM25 only ([embed] model_dir in the user configuration \
             or MEM_EMBED_MODEL_DIR \
             adds one; scripts/fetch-model.sh fetches it)"
                .to_string(),
        ),
        ModelStatus::Ready { dir, dim, vectors, memories } => (
            true,
            format!(
                "model in {dir} loads ({dim}-d); {vectors}/{memories} memories have vectors{}",
                if vectors < memories { "; `mem index` computes the rest" } else { "" }
            ),
        ),
        ModelStatus::Broken { message, .. } => {
            (false, format!("{message}; recall falls back to BM25"))
        }
    };
    status(ok, "embedding", &detail)
}

/// The folders of transcripts to check for `project`: `given`, widened to the folders of the
/// project's subfolders when it is Claude Code's folder of the project; without `given`, the
/// agents' own folders.
pub(super) fn transcript_folders(given: Option<&Path>, project: &Path) -> Vec<PathBuf> {
    use mem::agent::claude::{folder_name as claude_folder_name, folders as claude_folders};
    let Some(given) = given else {
        let mut folders =
            claude_home().map(|c| claude_folders(&c.join("projects"), project)).unwrap_or_default();
        folders.extend(super::hook::codex_sessions().filter(|d| d.is_dir()));
        if let Some(gemini) = super::hook::gemini_home() {
            folders.extend(mem::agent::gemini::folders(&gemini, project));
        }
        return folders;
    };
    let projects = given.parent().filter(|_| {
        given.file_name().is_some_and(|n| n.to_string_lossy() == claude_folder_name(project))
    });
    match projects {
        Some(projects) => claude_folders(projects, project),
        None => vec![given.to_path_buf()],
    }
}

/// Claude Code's folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_home() -> Option<PathBuf> {
    std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| dirs::home_dir().map(|h| h.join(".claude")))
}

/// The lines on the commands the agents run mem by: one when they all start a mem, else one
/// per command that starts nothing, with what to do.
fn agent_commands(configured: &[super::setup::Configured], notify: bool) -> String {
    let broken: Vec<_> = configured.iter().filter(|c| !c.runs()).collect();
    if broken.is_empty() {
        let mut runs: Vec<&str> = configured.iter().filter_map(|c| c.runs.as_deref()).collect();
        runs.sort_unstable();
        runs.dedup();
        let detail = format!(
            "{} commands in the agents' configuration start mem ({})",
            configured.len(),
            runs.join(", ")
        );
        return status(true, "agents", &detail);
    }
    let mut text = status(
        false,
        "agents",
        &format!(
            "{} of {} commands in the agents' configuration do not run: nothing is captured or \
             recalled through them",
            broken.len(),
            configured.len()
        ),
    );
    for c in broken {
        let fix = if c.runs.is_some() && notify {
            "Codex has not trusted these hooks yet, so it does not run them: mem's notify program \
             captures each turn meanwhile, but no memory reaches the model; run /hooks in Codex \
             and trust the mem hooks"
        } else if c.runs.is_some() {
            "Codex has not trusted these hooks yet, so it does not run them and this project's \
             Codex sessions are not captured: run /hooks in Codex and trust the mem hooks"
        } else if c.program.contains('/') {
            "that file does not exist or is not executable; run `mem setup` again with this mem"
        } else {
            "not found on PATH; put the folder of mem on PATH"
        };
        text.push_str(&format!("    `{}` in {}: {fix}\n", c.program, c.file));
    }
    text
}

/// The agents set up for this project (this machine's record of roots) whose user-level
/// `--project-only` hooks are gone from the user's settings file (removed by hand, or by a
/// `--remove` elsewhere), with that file: their sessions started in a subfolder go uncaptured.
fn missing_user_hooks(
    root: &Path,
    configured: &[super::setup::Configured],
) -> Vec<(mem::agent::Agent, PathBuf)> {
    use mem::agent::Agent;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let Some(record) = super::machine::roots().into_iter().find(|r| r.path == root) else {
        return Vec::new();
    };
    let mut missing = Vec::new();
    for name in &record.agents {
        let file = match Agent::from_name(name) {
            Some(Agent::Claude) => claude_home().map(|c| c.join("settings.json")),
            Some(Agent::Gemini) => super::hook::gemini_home().map(|g| g.join("settings.json")),
            _ => None,
        };
        let Some(file) = file else { continue };
        let has = |c: &&super::setup::Configured| Path::new(&c.file) == file;
        if !configured.iter().any(|c| has(&c)) {
            missing.push((Agent::from_name(name).expect("matched above"), file));
        }
    }
    missing
}

/// The line on the memories checked against the project's code: a warning (`!`), never a
/// failure, when some cite code that is gone or moved.
fn code_line(code: &mem::engine::CodeCheck) -> String {
    let flagged = code.gone + code.moved;
    if flagged == 0 {
        return status(
            true,
            "code",
            &format!("{} memories cite code, all of it there", code.citing),
        );
    }
    format!(
        "! {:<9} {flagged} of {} memories citing code may be outdated ({} gone, {} moved); `mem \
         verify` lists them, `mem verify --fix` rewrites renamed paths\n",
        "code", code.citing, code.gone, code.moved
    )
}

/// One status line: a check mark or a cross, the area, the finding.
fn status(ok: bool, what: &str, detail: &str) -> String {
    format!("{} {what:<9} {detail}\n", if ok { "✓" } else { "✗" })
}
