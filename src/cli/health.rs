//! `mem health`: the verifier. Exit status 0 when all is well, 1 when something is wrong.

use std::path::{Path, PathBuf};

use anyhow::Result;

use mem::agent::{Agent, Homes};

use crate::shared::Globals;
use crate::shared::coverage::{missed_causes, transcript_folders};
use crate::shared::words::{MISSED_HINT, embedding_line, status};

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
    let (mut engine, source) = ctx.engine_found()?;
    let project = mem::health::project_dir(engine.files.root());
    let homes = crate::shared::gate::homes();
    let folders =
        args.transcripts.as_ref().map(|dir| transcript_folders(dir.as_deref(), &project, &homes));
    let health = engine.health(ctx.now, folders.as_ref())?;
    let configured = crate::setup::configured(&project, &homes);
    let hooks_run = configured.iter().all(crate::setup::Configured::runs);
    let missing = missing_user_hooks(engine.files.root(), &configured, &homes);
    let unmarked = configured.iter().any(|c| c.unmarked);
    // The user layer's remote: out of reach is a warning, a refused folder a failure.
    let remote = crate::shared::remote::health(ctx);
    let remote_ok = remote.as_ref().is_none_or(|(_, ok, _)| *ok);
    let ok = health.ok() && hooks_run && missing.is_empty() && !unmarked && remote_ok;
    let status_code = if ok { 0 } else { UNHEALTHY };
    let served = crate::shared::served::enabled()
        .then(|| crate::shared::served::client::status(engine.files.root(), source));
    let native = crate::shared::native::counts(&engine, source, &ctx.surroundings(None)?);
    // A warning, not a failure: nothing is wrong with the files until a merge of two edits.
    let no_driver = mem::merge::driver::missing(engine.files.root());
    // A warning too: without the store, recall and the hooks answer from the local layers.
    let team = crate::shared::team::status();
    // What the hooks met: a failure within the last minute leaves the store alone meanwhile.
    let team_hook = team.as_ref().and(crate::shared::team::hook_failure(engine.files.root()));
    // The root's last push (a capture's in the background, or `mem team push`): a warning when
    // it failed, as the store out of reach is.
    let team_push = crate::shared::team_push::health_line(engine.files.root());
    let mut team_json = None;
    if args.json {
        if let Some(team) = &team {
            let (ok, detail) = match team {
                Ok(detail) => (true, detail),
                Err(problem) => (false, problem),
            };
            team_json =
                Some(serde_json::json!({ "ok": ok, "detail": detail, "hook_failure": team_hook }));
        }
        let mut value = serde_json::to_value(&health)?;
        value["served_hooks"] = served_json(served.as_deref());
        value["agents_own_memories"] = serde_json::to_value(&native)?;
        value["agent_commands"] = serde_json::to_value(&configured)?;
        value["merge_driver_missing"] = serde_json::Value::Bool(no_driver);
        if let Some(team) = team_json {
            value["team"] = team;
        }
        if let Some((_, _, json)) = &remote {
            value["user_remote"] = json.clone();
        }
        if let Some((_, outcome)) = &team_push {
            value["team_push"] = serde_json::to_value(outcome)?;
        }
        value["ok"] = serde_json::Value::Bool(ok);
        crate::shared::output::print_json(&value)?;
        return Ok(status_code);
    }
    let mut text = files_lines(&health);
    if no_driver {
        text.push_str(&format!(
            "! {:<9} {} asks git to merge memories with mem's driver, and this clone has none in \
             its git configuration: a merge of two edits of one memory leaves conflict markers; \
             `mem init --project` registers it\n",
            "merge",
            engine.files.root().join(mem::merge::driver::ATTRIBUTES_FILE).display()
        ));
    }
    if let Some((lines, _, _)) = &remote {
        text.push_str(lines);
    }
    text.push_str(&logs_lines(&health));
    if let Some(cov) = &health.coverage {
        text.push_str(&coverage_lines(cov, &project, &configured, &homes));
    }
    if !configured.is_empty() {
        text.push_str(&agent_commands(&configured));
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
    if unmarked {
        text.push_str(&unmarked_lines(&configured));
    }
    if let Some(code) = &health.code {
        text.push_str(&code_line(code));
    }
    text.push_str(&crate::shared::native::health_lines(&native));
    text.push_str(&embedding_line(&health.embedding));
    text.push_str(&status(true, "hooks", &served_line(served.as_deref())));
    match &team {
        Some(Ok(detail)) => text.push_str(&status(true, "team", detail)),
        Some(Err(problem)) => text.push_str(&format!(
            "! {:<9} {problem}: recall and the hooks answer from the local layers\n",
            "team"
        )),
        None => {}
    }
    if let Some(failure) = &team_hook {
        text.push_str(&format!("! {:<9} {failure}\n", "team"));
    }
    if let Some((line, _)) = &team_push {
        text.push_str(line);
    }
    crate::shared::output::print_text(&text)?;
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
    for path in &i.conflicted {
        text.push_str(&format!(
            "    {path} holds git conflict markers: `mem resolve {}` keeps both sides as \
             memories (the later edit stays, the earlier is superseded)\n",
            crate::setup::command::shell_word(Path::new(path)).unwrap_or_else(|_| path.clone())
        ));
    }
    for path in &health.unmerged {
        let word = crate::setup::command::shell_word(Path::new(path)).unwrap_or(path.clone());
        text.push_str(&status(
            false,
            "merge",
            &format!(
                "{path} is unmerged in git (a merge stopped on it: retired on one side and \
                 edited on the other, or both edited without the merge driver); mem reads the \
                 file as it is until `git add {word}` keeps it (after `mem resolve {word}` if it \
                 holds markers) or `git rm {word}` retires it (run in the root's folder)"
            ),
        ));
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
    if !health.secrets.is_empty() {
        let count: usize = health.secrets.iter().map(|f| f.secrets).sum();
        text.push_str(&status(
            false,
            "secrets",
            &format!(
                "{count} secrets in {} memory files (see docs/capture.md, \"Redaction\"); `mem \
                 redact` replaces them",
                health.secrets.len()
            ),
        ));
        for file in &health.secrets {
            text.push_str(&format!("    {} ({})\n", file.path, file.secrets));
        }
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
/// the agents' own files tell (`agent::Spec::missed_because`).
fn coverage_lines(
    cov: &mem::health::Coverage,
    project: &Path,
    configured: &[crate::setup::Configured],
    homes: &Homes,
) -> String {
    let mut text = String::new();
    let mut detail = format!("{}/{} local sessions captured", cov.captured, cov.found);
    let mut left_out = Vec::new();
    match cov.subagents {
        0 => {}
        1 => left_out.push("1 subagent transcript".to_string()),
        n => left_out.push(format!("{n} subagent transcripts")),
    }
    for (agent, n) in &cov.other_projects_by {
        let title = agent.title();
        left_out.push(match n {
            1 => format!("1 {title} session of another project"),
            n => format!("{n} {title} sessions of other projects"),
        });
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
    let causes = missed_causes(cov, project, configured, homes);
    for cause in &causes {
        text.push_str(&format!("    cause: {cause}\n"));
    }
    if causes.is_empty() && !cov.gaps.is_empty() {
        text.push_str(&format!("    {}\n", MISSED_HINT));
    }
    text
}

/// What the `mem mcp` servers of the root say of this process's hooks (`None`: served hooks
/// are off), as the hooks line of `mem health` says it.
fn served_line(servers: Option<&[(u32, u64, Vec<String>)]>) -> String {
    let Some(servers) = servers else {
        return format!("answered in-process ({} is set)", crate::shared::served::OFF_ENV);
    };
    if let Some((pid, answered, _)) = servers.iter().find(|(_, _, differs)| differs.is_empty()) {
        return format!(
            "answered by the session's mem mcp (pid {pid}, {answered} answered so far), which \
             has the root open and the model loaded"
        );
    }
    match servers {
        [] => "answered in-process (no mem mcp session of this root is running)".to_string(),
        _ => {
            let others: Vec<String> = servers
                .iter()
                .map(|(pid, _, differs)| format!("pid {pid}: {}", differs.join(", ")))
                .collect();
            format!(
                "answered in-process: the mem mcp sessions of this root run with another \
                 setting than this shell ({}); a hook is served only where they agree",
                others.join("; ")
            )
        }
    }
}

/// [`served_line`]'s facts for `--json`.
fn served_json(servers: Option<&[(u32, u64, Vec<String>)]>) -> serde_json::Value {
    let servers = servers.map(|servers| {
        let list: Vec<serde_json::Value> = servers
            .iter()
            .map(|(pid, answered, differs)| {
                serde_json::json!({ "pid": pid, "answered": answered, "differs": differs })
            })
            .collect();
        list
    });
    serde_json::json!({ "enabled": servers.is_some(), "servers": servers.unwrap_or_default() })
}

/// The lines on the commands the agents run mem by: one when they all start a mem, else one
/// per command that starts nothing, with what to do.
fn agent_commands(configured: &[crate::setup::Configured]) -> String {
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
        let fix = if let Some(fix) = c.fix.filter(|_| c.runs.is_some()) {
            fix
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
    configured: &[crate::setup::Configured],
    homes: &Homes,
) -> Vec<(Agent, PathBuf)> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let Some(record) = crate::shared::machine::roots().into_iter().find(|r| r.path == root) else {
        return Vec::new();
    };
    let Some(home) = homes.user() else { return Vec::new() };
    let mut missing = Vec::new();
    for agent in record.agents.iter().filter_map(|name| Agent::from_name(name)) {
        let entry = crate::setup::entry(agent);
        let Some(file) = (entry.project_only_hooks)(home, homes.config_of(agent)) else { continue };
        if !configured.iter().any(|c| Path::new(&c.file) == file) {
            missing.push((agent, file));
        }
    }
    missing
}

/// The lines on the user-level commands that lack `--user-scope` (written by an older setup at
/// user scope): they use a cloned repository's root that nobody here made or allowed.
fn unmarked_lines(configured: &[crate::setup::Configured]) -> String {
    let unmarked: Vec<_> = configured.iter().filter(|c| c.unmarked).collect();
    let mut text = status(
        false,
        "agents",
        &format!(
            "{} user-level commands lack --user-scope (an older `mem setup --scope user` wrote \
             them): they use a cloned repository's memory root that nobody here made or allowed",
            unmarked.len()
        ),
    );
    for c in unmarked {
        text.push_str(&format!(
            "    `{}` in {}: run `mem setup {} --scope user` again\n",
            c.program,
            c.file,
            c.agent.name()
        ));
    }
    text
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
