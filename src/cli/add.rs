//! `mem add [TEXT]`: write a new memory.

use std::io::{IsTerminal, Read};

use anyhow::{Context as _, Result, bail};
use mem::engine::{OnSimilar, Remembered, Similar};
use mem::store::Layer;
use mem::{MemoryType, NewMemory};

use crate::shared::Globals;

/// Arguments of `mem add`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory's text (Markdown). Read from stdin when absent or `-`.
    text: Option<String>,
    /// episodic (something that happened), semantic (a fact or decision) or procedural (how to).
    #[arg(long = "type", short = 't', default_value = "semantic", value_parser = super::parse::parse_type)]
    kind: MemoryType,
    /// 1 (mundane) to 10 (critical).
    #[arg(long, short = 'i', default_value_t = mem::format::DEFAULT_IMPORTANCE, value_parser = clap::value_parser!(u8).range(1..=10))]
    importance: u8,
    /// A tag; repeat for several.
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// A title, written as the first heading.
    #[arg(long)]
    title: Option<String>,
    /// Where the memory comes from (e.g. session/abc123).
    #[arg(long)]
    source: Option<String>,
    /// Print {"id", "path"} as JSON.
    #[arg(long)]
    json: bool,
    /// Write it even if a very similar memory exists.
    #[arg(long, conflicts_with = "supersede")]
    force: bool,
    /// Write it and mark the very similar existing memory as superseded by it.
    #[arg(long)]
    supersede: bool,
    /// Which root gets it: `project` (default: the root found from here) or `user` (the user
    /// layer of the user configuration, `[layers] user`: preferences, cross-project
    /// procedures; with `[layers] user_remote`, pushed to that remote in the background).
    #[arg(long, value_parser = super::parse::layer_parser(), default_value = "project")]
    layer: Layer,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let text = match args.text.as_deref() {
        Some(text) if text != "-" => text.to_string(),
        _ => {
            let mut stdin = std::io::stdin();
            if stdin.is_terminal() {
                bail!("give the memory's text as an argument or on stdin");
            }
            let mut text = String::new();
            stdin.read_to_string(&mut text).context("cannot read the memory's text from stdin")?;
            text
        }
    };
    let mut layers = ctx.layers_near(None)?;
    let Some(engine) = layers.engine(args.layer) else {
        if let Some(problem) = layers.user_problem() {
            bail!("{problem}");
        }
        bail!(
            "no user layer: name one with `[layers] user = \"~/.local/share/mem\"` in {} (a root \
             given with --dir or MEM_DIR is searched alone)",
            crate::shared::user::path()
                .map_or("the user configuration file".into(), |p| p.display().to_string())
        );
    };
    crate::shared::output::print_problems(
        &engine.refresh(ctx.now, &crate::shared::bar::progress_bar())?,
    );
    let new = NewMemory {
        text,
        kind: args.kind,
        importance: args.importance,
        tags: args.tags,
        title: args.title,
        source: args.source,
    };
    let on_similar = match (args.force, args.supersede) {
        (_, true) => OnSimilar::Supersede,
        (true, false) => OnSimilar::Keep,
        (false, false) => OnSimilar::Refuse,
    };
    let remembered = engine.remember(new, on_similar, ctx.now)?;
    if let Some(warning) = engine.vectors.model().warning() {
        eprintln!("mem: warning: {warning}; near-duplicates checked by TF-IDF only");
    }
    match remembered {
        Remembered::Duplicate { id, path, unsynced } => {
            for failure in &unsynced {
                eprintln!("mem: warning: use recorded, but not written to the file yet: {failure}");
            }
            eprintln!(
                "mem: already remembered as {id} ({path}); not written again, counted as used"
            );
            if args.json {
                crate::shared::output::print_json(
                    &serde_json::json!({ "id": id, "path": path, "duplicate": true }),
                )
            } else {
                crate::shared::output::print_text(&format!(
                    "{id}\t{}\n",
                    engine.files.root().join(&path).display()
                ))
            }
        }
        Remembered::Similar(Similar { id, path, similarity, measure }) => bail!(
            "a very similar memory exists: {id} ({path}), {measure} similarity {similarity:.2}; \
             add --force to keep both, or --supersede to replace it"
        ),
        Remembered::Added { added, superseded } => {
            // The user layer's remote gets it in the background.
            crate::shared::remote::after_write(engine.files.root());
            if let Some(old) = &superseded {
                eprintln!("mem: {old} is superseded by {}", added.id);
            }
            if args.json {
                crate::shared::output::print_json(&added)
            } else {
                let path = engine.files.root().join(&added.path);
                crate::shared::output::print_text(&format!("{}\t{}\n", added.id, path.display()))
            }
        }
    }
}
