//! `mem team init|push|forget`: the team store (docs/teams.md): its schema, publishing this
//! root's memories (and the user layer's with `--user`), and taking an author's rows out.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{Context as _, Result};
use jiff::Timestamp;
use mem::Engine;
use mem::turns::Mode;
use mem_team::publish::{Publisher, private, row};
use mem_team::record::Record;
use mem_team::{Pushed, Row, Team};

use crate::shared::{Globals, open, output, team, team_push, user};

/// How long `mem team` commands wait for the store, connecting and per statement.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Rows per transaction of a push.
const BATCH: usize = 500;

/// Arguments of `mem team`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Create or migrate the team store's schema (pgvector, full text, HNSW for the model's
    /// vector length).
    Init(InitArgs),
    /// Publish this root's memories (redacted; `publish: false` ones stay home) to the team
    /// store: only what changed, one transaction per batch.
    Push(PushArgs),
    /// Remove rows from the team store.
    Forget(ForgetArgs),
    /// Let a database role see a project's memories (row-level security: a role sees only the
    /// projects granted to it). Run by the store's owner.
    Grant(GrantArgs),
    /// Take a project back from a database role.
    Revoke(GrantArgs),
    /// List every grant, role and project.
    Grants,
}

#[derive(Debug, clap::Args)]
struct GrantArgs {
    /// The database role (CREATE ROLE ... LOGIN, or a group role its members inherit from).
    role: String,
    /// The projects, as the store names them (`mem team push` prints a root's).
    #[arg(required = true)]
    projects: Vec<String>,
}

#[derive(Debug, clap::Args)]
struct InitArgs {
    /// Also index vectors of this length (the configured model's is indexed anyway).
    #[arg(long, value_name = "N")]
    dim: Vec<usize>,
}

#[derive(Debug, clap::Args)]
struct PushArgs {
    /// Also publish the user layer's memories (under the project `~AUTHOR`).
    #[arg(long)]
    user: bool,
    /// Push quietly (the outcome goes to the root's `.mem/team-push.json`, for `mem health`),
    /// or leave word for a push that runs: what a capture starts, detached, with `[team] push
    /// = "capture"`.
    #[arg(long, hide = true, conflicts_with = "user")]
    background: bool,
}

#[derive(Debug, clap::Args)]
struct ForgetArgs {
    /// Every row this author published, in every project the store lets you see.
    #[arg(long, value_name = "NAME")]
    author: String,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    match args.command {
        Command::Init(args) => init(args, ctx),
        Command::Push(args) => push(args, ctx),
        Command::Forget(args) => forget(args),
        Command::Grant(args) => grant(args, true),
        Command::Revoke(args) => grant(args, false),
        Command::Grants => grants(),
    }
}

fn connect() -> Result<Team> {
    Ok(Team::connect(&team::required(TIMEOUT)?)?)
}

/// The store, connected, and where it is (`host:port/database`: the key of the roots' records).
fn connect_to() -> Result<(Team, String)> {
    let settings = team::required(TIMEOUT)?;
    let target = mem_team::settings::target(&settings.config()?.0);
    Ok((Team::connect(&settings)?, target))
}

fn init(args: InitArgs, ctx: &Globals) -> Result<()> {
    let mut dims = args.dim;
    let mut engine = ctx.engine()?;
    if engine.vectors.model().source().is_some() {
        dims.push(engine.vectors.model().embedder().context("cannot load the model")?.dim());
    }
    dims.sort_unstable();
    dims.dedup();
    let done = connect()?.init(&dims)?;
    let mut text = if done.from == done.to {
        format!("team store schema is up to date (version {})\n", done.to)
    } else if done.from == 0 {
        format!("created the team store schema (version {})\n", done.to)
    } else {
        format!("migrated the team store schema from version {} to {}\n", done.from, done.to)
    };
    for dim in done.indexed {
        text.push_str(&format!("indexed vectors of length {dim} (HNSW, cosine)\n"));
    }
    output::print_text(&text)
}

/// A memory marked never to publish, or deleted: its project and id.
type Withheld = (String, String);

/// A root's part of a push: its rows, the (project, id) of those marked never to publish, and
/// those its record says it pushed and that are gone from its files.
struct Part {
    root: std::path::PathBuf,
    project: String,
    rows: Vec<Row>,
    withheld: Vec<Withheld>,
    deleted: Vec<Withheld>,
    record: Record,
}

/// The part of the root `engine` in a push to the store `target` as `publisher` says.
fn part_of(engine: &Engine, publisher: &Publisher, target: &str, now: Timestamp) -> Result<Part> {
    let (rows, withheld) = rows_of(engine, publisher, now)?;
    let root = engine.files.root().to_path_buf();
    let record = Record::read(&root).unwrap_or_else(|e| {
        eprintln!("mem: warning: {e}; this push withdraws nothing as deleted");
        Record::default()
    });
    let present: HashSet<&str> = rows
        .iter()
        .map(|r| r.id.as_str())
        .chain(withheld.iter().map(|(_, id)| id.as_str()))
        .collect();
    let deleted = record.deleted(target, &publisher.project, &present);
    Ok(Part { root, project: publisher.project.clone(), rows, withheld, deleted, record })
}

/// The rows of a root's memories, and the (project, id) of those marked never to publish.
fn rows_of(
    engine: &Engine,
    publisher: &Publisher,
    now: Timestamp,
) -> Result<(Vec<Row>, Vec<Withheld>)> {
    let mut rows: Vec<Row> = Vec::new();
    let mut withheld = Vec::new();
    let mut take = |path: &str, memory: &mem::Memory, archived: bool| -> Result<()> {
        let id = memory.id().to_string();
        if rows.iter().any(|r| r.id == id) {
            return Ok(());
        }
        if private(memory) {
            withheld.push((publisher.project.clone(), id));
        } else {
            rows.push(row(publisher, path, memory, archived, now)?);
        }
        Ok(())
    };
    for record in engine.files.list(&[], &[])? {
        let (path, memory) = engine.files.get(&record.id)?;
        take(&path, &memory, false)?;
    }
    for (path, memory) in engine.files.archived()? {
        take(&path, &memory, true)?;
    }
    Ok((rows, withheld))
}

/// `mem team push`: holding the root's turn (waiting for a push that runs; with
/// `--background`, leaving word for it instead), pushes, and again while captures left word
/// meanwhile; each outcome kept for `mem health`. `--background` prints nothing.
fn push(args: PushArgs, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let root = engine.files.root().to_path_buf();
    let mode = if args.background { Mode::Background } else { Mode::Wait };
    let Some(turn) = team_push::turns(&root)?.take(mode)? else { return Ok(()) };
    for run in 1..=mem::turns::MAX_RUNS {
        turn.begin();
        if run > 1 {
            engine.refresh(ctx.now, &mem::progress::Silent)?;
        }
        let done = push_once(&args, &mut engine, ctx.now);
        let mut outcome = team_push::Outcome {
            at: Some(ctx.now),
            background: args.background,
            ..team_push::Outcome::default()
        };
        match &done {
            Ok((project, _, pushed)) => {
                outcome.project = Some(project.clone());
                outcome.sent = pushed.sent;
                outcome.unchanged = pushed.unchanged;
                outcome.withdrawn = pushed.withdrawn;
                outcome.deleted = pushed.deleted;
            }
            Err(e) => outcome.error = Some(output::describe(e)),
        }
        team_push::keep(&root, &outcome)?;
        let (project, reused, done) = done?;
        if !args.background {
            output::print_text(&report(&project, reused, &done))?;
        }
        if !turn.again() {
            break;
        }
    }
    Ok(())
}

/// One push of the root `engine` (and the user layer's with `--user`): the project, with a
/// model how many vectors came from the index, what it did. The roots' records are written
/// once it committed.
fn push_once(
    args: &PushArgs,
    engine: &mut Engine,
    now: Timestamp,
) -> Result<(String, Option<usize>, Pushed)> {
    let author = team::author()?;
    let machine = team::machine()?;
    let project = team::project(engine)?;
    let publisher = Publisher { project: project.clone(), layer: "project", author, machine };
    let (mut store, target) = connect_to()?;
    let mut parts = vec![part_of(engine, &publisher, &target, now)?];
    if args.user {
        let folder = user::load()?
            .layers
            .user
            .context("--user: no user layer ([layers] user in the user configuration file)")?;
        let mut theirs = open::engine_at(&folder)?;
        theirs.refresh(now, &mem::progress::Silent)?;
        let mine = Publisher {
            project: format!("~{}", publisher.author),
            layer: "user",
            ..publisher.clone()
        };
        parts.push(part_of(&theirs, &mine, &target, now)?);
    }
    let model = match engine.vectors.model().source() {
        Some(_) => Some(team::model_id(
            engine.vectors.model().embedder().context("cannot load the model")?,
        )),
        None => None,
    };
    let mut reused = 0;
    let mut embed = |rows: &[Row]| {
        let model = model.clone()?;
        let texts: Vec<String> = rows.iter().map(mem_team::publish::embedding_text).collect();
        // The vector the root's index computed from the very text sent (none for a row whose
        // text redaction changed, nor for one the index does not hold), else the model's.
        let mut vectors: Vec<Option<Vec<f32>>> = rows
            .iter()
            .zip(&texts)
            .map(|(row, text)| engine.vectors.stored(&engine.files, &row.id, text).ok().flatten())
            .collect();
        let todo: Vec<&str> = texts
            .iter()
            .zip(&vectors)
            .filter(|(_, known)| known.is_none())
            .map(|(text, _)| text.as_str())
            .collect();
        reused += rows.len() - todo.len();
        if !todo.is_empty() {
            let embedder = engine.vectors.model().embedder().ok()?;
            let fresh = match embedder.embed(&todo, 32) {
                Ok(fresh) => fresh,
                Err(e) => {
                    eprintln!("mem: warning: rows sent without vectors: {e}");
                    return None;
                }
            };
            let missing = vectors.iter_mut().filter(|v| v.is_none());
            for (slot, vector) in missing.zip(fresh) {
                *slot = Some(vector);
            }
        }
        Some((model, vectors.into_iter().collect::<Option<Vec<_>>>()?))
    };
    let rows: Vec<Row> = parts.iter().flat_map(|p| p.rows.iter().cloned()).collect();
    let withheld: Vec<Withheld> = parts.iter().flat_map(|p| p.withheld.clone()).collect();
    let deleted: Vec<Withheld> = parts.iter().flat_map(|p| p.deleted.clone()).collect();
    let done = store.push(rows, &withheld, &deleted, model.as_deref(), &mut embed, BATCH)?;
    // Only now: an interrupted push leaves the records as they were, and the next one
    // withdraws what this one did not.
    for part in parts {
        let mut record = part.record;
        record.set(&target, &part.project, part.rows.into_iter().map(|r| r.id).collect());
        record.write(&part.root).with_context(|| {
            format!("the push committed, but its record in {} was not written", part.root.display())
        })?;
    }
    Ok((project, model.map(|_| reused), done))
}

/// What a push did, in words; `reused`: with a model, how many vectors came from the index.
fn report(project: &str, reused: Option<usize>, done: &Pushed) -> String {
    let vectors = match reused {
        Some(reused) => {
            format!(", {} with vectors, {reused} of them the index's", done.with_vectors)
        }
        None => String::new(),
    };
    let mut text = format!(
        "pushed {} memories to the team store as {project} ({} unchanged{vectors}), in {} \
         transactions\n",
        done.sent, done.unchanged, done.batches
    );
    if done.withdrawn > 0 {
        text.push_str(&format!(
            "withdrew {} memories marked publish: false from the team store\n",
            done.withdrawn
        ));
    }
    if done.deleted > 0 {
        text.push_str(&format!(
            "withdrew {} memories whose files were deleted from the team store\n",
            done.deleted
        ));
    }
    text
}

fn forget(args: ForgetArgs) -> Result<()> {
    let removed = connect()?.forget_author(&args.author)?;
    output::print_text(&format!("removed {removed} rows of {} from the team store\n", args.author))
}

fn grant(args: GrantArgs, give: bool) -> Result<()> {
    let mut store = connect()?;
    let mut text = String::new();
    for project in &args.projects {
        let changed = if give {
            store.grant(&args.role, project)?
        } else {
            store.revoke(&args.role, project)?
        };
        let role = &args.role;
        text.push_str(&match (give, changed) {
            (true, true) => format!("granted {project} to {role}\n"),
            (true, false) => format!("{role} had {project} already\n"),
            (false, true) => format!("took {project} back from {role}\n"),
            (false, false) => format!("{role} had no grant of {project}\n"),
        });
    }
    output::print_text(&text)
}

fn grants() -> Result<()> {
    let grants = connect()?.grants()?;
    if grants.is_empty() {
        return output::print_text("no grants: roles other than the owner see nothing\n");
    }
    let text: String =
        grants.iter().map(|(role, project)| format!("{role}\t{project}\n")).collect();
    output::print_text(&text)
}
