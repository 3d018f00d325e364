//! `mem used ID...`: record that memories helped.

use anyhow::Result;

use crate::shared::Globals;

/// Arguments of `mem used`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Ids of the memories that helped.
    #[arg(required = true)]
    ids: Vec<String>,
    /// Only log the events; leave the files alone until `mem sync`.
    #[arg(long)]
    no_sync: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    if args.ids.iter().any(|id| engine.files.get(id).is_err()) {
        // Some live in another layer (the user's, an agent's own: its local log only).
        return other_layers(&args, ctx);
    }
    let (paths, report) = engine.used(&args.ids, ctx.now, !args.no_sync)?;
    for failure in &report.failed {
        eprintln!("mem: warning: recorded, but not written to the file yet: {failure}");
    }
    let mut text = String::new();
    for (id, path) in args.ids.iter().zip(paths) {
        text.push_str(&format!("used\t{id}\t{path}\n"));
    }
    crate::shared::output::print_text(&text)
}

/// `mem used` of ids some of which live in a layer other than the project's: each layer
/// records its own; an id no layer holds is an error before anything is recorded.
fn other_layers(args: &Args, ctx: &Globals) -> Result<()> {
    let mut layers = ctx.layers_near(None)?;
    layers.refresh(ctx.now, &mem::progress::Silent)?;
    let mut found = Vec::new();
    for id in &args.ids {
        match layers.locate(id) {
            Some(layer) => found.push((id.clone(), layer)),
            None => {
                // The project's error, as for one root.
                layers.project().used(std::slice::from_ref(id), ctx.now, false)?;
            }
        }
    }
    let mut text = String::new();
    for (id, layer) in found {
        let engine = layers.engine(layer).expect("located");
        let (paths, report) = engine.used(std::slice::from_ref(&id), ctx.now, !args.no_sync)?;
        for failure in &report.failed {
            eprintln!("mem: warning: recorded, but not written to the file yet: {failure}");
        }
        for path in paths {
            text.push_str(&format!("used\t{id}\t{path}\n"));
        }
    }
    crate::shared::output::print_text(&text)
}
