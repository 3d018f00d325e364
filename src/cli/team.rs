//! `mem team init|push|forget`: the team store (docs/teams.md): its schema, publishing this
//! root's memories (and the user layer's with `--user`), and taking an author's rows out.

use std::time::Duration;

use anyhow::{Context as _, Result};
use mem::Engine;
use mem_team::publish::{Publisher, private, row};
use mem_team::{Row, Team};

use crate::shared::{Globals, open, output, team, user};

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

/// A memory marked never to publish: its project and id.
type Withheld = (String, String);

/// The rows of a root's memories, and the (project, id) of those marked never to publish.
fn rows_of(
    engine: &Engine,
    publisher: &Publisher,
    now: jiff::Timestamp,
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

fn push(args: PushArgs, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let author = team::author()?;
    let machine = team::machine()?;
    let project = team::project(&engine)?;
    let publisher = Publisher { project: project.clone(), layer: "project", author, machine };
    let (mut rows, mut withheld) = rows_of(&engine, &publisher, ctx.now)?;
    if args.user {
        let folder = user::load()?
            .layers
            .user
            .context("--user: no user layer ([layers] user in the user configuration file)")?;
        let mut theirs = open::engine_at(&folder)?;
        theirs.refresh(ctx.now, &mem::progress::Silent)?;
        let mine = Publisher {
            project: format!("~{}", publisher.author),
            layer: "user",
            ..publisher.clone()
        };
        let (more, private) = rows_of(&theirs, &mine, ctx.now)?;
        rows.extend(more);
        withheld.extend(private);
    }
    let mut store = connect()?;
    let mut embedder = match engine.vectors.model().source() {
        Some(_) => Some(engine.vectors.model().embedder().context("cannot load the model")?),
        None => None,
    };
    let model = embedder.as_deref().map(team::model_id);
    let mut embed = |texts: &[String]| {
        let embedder = embedder.as_deref_mut()?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        match embedder.embed(&texts, 32) {
            Ok(vectors) => Some((team::model_id(embedder), vectors)),
            Err(e) => {
                eprintln!("mem: warning: rows sent without vectors: {e}");
                None
            }
        }
    };
    let done = store.push(rows, &withheld, model.as_deref(), &mut embed, BATCH)?;
    let mut text = format!(
        "pushed {} memories to the team store as {project} ({} unchanged{}), in {} transactions\n",
        done.sent,
        done.unchanged,
        if model.is_some() {
            format!(", {} with vectors", done.with_vectors)
        } else {
            String::new()
        },
        done.batches
    );
    if done.withdrawn > 0 {
        text.push_str(&format!(
            "withdrew {} memories marked publish: false from the team store\n",
            done.withdrawn
        ));
    }
    output::print_text(&text)
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
