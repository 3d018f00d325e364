//! `mem health`: the verifier. Exit status 0 when all is well, 1 when something is wrong.

use std::path::PathBuf;

use anyhow::Result;

use mem::engine::ModelStatus;

use super::Context;

/// Arguments of `mem health`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder of agent transcripts (e.g. ~/.claude/projects/<project>, ~/.codex/sessions):
    /// report which of this project's sessions were never captured (subagent transcripts
    /// and Codex sessions whose working directory is outside the project are left out).
    #[arg(long, value_name = "DIR")]
    transcripts: Option<PathBuf>,
    /// Print the findings as JSON.
    #[arg(long)]
    json: bool,
}

/// The exit status for "something is wrong" (2 stays "could not run").
pub const UNHEALTHY: u8 = 1;

pub fn run(args: Args, ctx: &Context) -> Result<u8> {
    // No refresh: the point is to see what a refresh would have to fix.
    let mut engine = ctx.engine()?;
    let health = engine.health(ctx.now, args.transcripts.as_deref())?;
    let status_code = if health.ok() { 0 } else { UNHEALTHY };
    if args.json {
        let mut value = serde_json::to_value(&health)?;
        value["ok"] = serde_json::Value::Bool(health.ok());
        super::print_json(&value)?;
        return Ok(status_code);
    }
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
    for (id, path, archived) in &health.interrupted_moves {
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
    text.push_str(&status(c.ok(), "capture", &capture));
    if let Some(cov) = &health.coverage {
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
            let agent = gap.agent.as_str();
            text.push_str(&format!(
                "    not captured {agent:<6}  {}  {}\n",
                gap.session_id, gap.path
            ));
        }
    }
    let (ok, detail) = match &health.embedding {
        ModelStatus::NotConfigured => (
            true,
            "no model configured: recall is BM25 only ([embed] model_dir or MEM_EMBED_MODEL_DIR \
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
    text.push_str(&status(ok, "embedding", &detail));
    super::print_text(&text)?;
    Ok(status_code)
}

/// One status line: a check mark or a cross, the area, the finding.
fn status(ok: bool, what: &str, detail: &str) -> String {
    format!("{} {what:<9} {detail}\n", if ok { "✓" } else { "✗" })
}
