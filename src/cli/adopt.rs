//! `mem adopt`: an agent's own memory copied into a root of mem's (docs/agents.md, "The
//! agents' own memories").

use anyhow::Result;
use mem::agent::Agent;
use mem::store::Layer;

use crate::shared::Globals;

/// Arguments of `mem adopt`.
#[derive(Debug, clap::Args)]
pub struct AdoptArgs {
    /// Ids of the agents' memories (from `mem recall --layer AGENT`, `mem show`).
    ids: Vec<String>,
    /// Every memory of this agent not adopted yet.
    #[arg(long, value_name = "AGENT", value_parser = crate::shared::gate::agent_parser())]
    all_from: Option<Agent>,
    /// Where to: project or user. Default: the user layer for the agent's personal kinds (a
    /// Claude Code `user` or `feedback` memory), when there is one, else the project.
    #[arg(long, value_parser = super::parse::layer_parser())]
    layer: Option<Layer>,
}

/// `mem adopt ID... | --all-from AGENT [--layer project|user]`.
pub fn adopt(args: AdoptArgs, globals: &Globals) -> Result<()> {
    let AdoptArgs { ids, all_from, layer } = args;
    let mut layers = globals.layers_near(None)?;
    layers.refresh(globals.now, &mem::progress::Silent)?;
    let mut ids = ids.to_vec();
    if let Some(agent) = all_from {
        let Some(engine) = layers.engine(Layer::Native(agent)) else {
            anyhow::bail!(
                "{} has no memories of its own here (or reading them is turned off)",
                agent.title()
            );
        };
        let mut theirs: Vec<String> =
            engine.files.list(&[], &[])?.into_iter().map(|m| m.id).collect();
        theirs.retain(|id| !layers.is_adopted(id));
        theirs.sort();
        ids.extend(theirs);
    }
    if ids.is_empty() {
        anyhow::bail!(
            "name the memories to adopt (IDs from `mem recall --layer AGENT`), or --all-from AGENT"
        );
    }
    let mut failed = 0;
    for id in &ids {
        match layers.adopt(id, layer, crate::shared::gate::homes().user(), globals.now) {
            Ok(adopted) => {
                let redacted = match adopted.redacted {
                    0 => String::new(),
                    n => format!(" ({n} secrets redacted)"),
                };
                println!(
                    "adopted {} from {} into the {} layer{redacted}",
                    adopted.id,
                    adopted.agent.title(),
                    adopted.layer.as_str()
                );
            }
            Err(e) => {
                failed += 1;
                eprintln!("mem: error: {id}: {e}");
            }
        }
    }
    if failed > 0 {
        anyhow::bail!("{failed} of {} memories not adopted", ids.len());
    }
    Ok(())
}
