//! The sentences more than one front end says (the command line and the page): a memory's
//! layer, its pruning figure, the embedding model's state, and what to do about what is missing.

use std::path::Path;

use anyhow::Result;
use mem::agent::Agent;
use mem::engine::{Layers, ModelStatus};
use mem::store::Layer;

/// The line on the embedding model.
pub fn embedding_line(embedding: &ModelStatus) -> String {
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

/// What to do about missing sessions no agent's spec names a cause for.
pub const MISSED_HINT: &str = "`mem capture --missed` captures them (sessions from \
     before the hooks ran: before the project or its hooks were trusted, or while mem was not \
     on PATH)";

/// The retention prune compares with its threshold, said with where its clock starts: the
/// line `mem show` prints under the retention, and the one the page of a memory shows.
pub fn prune_figure(prune_retention: f64, since: Option<jiff::Timestamp>) -> String {
    match since {
        Some(since) => format!(
            "for pruning R = {prune_retention:.3} (time counted from {}, when usage observation began)",
            mem::format::whole_second(since)
        ),
        None => format!(
            "for pruning R = {prune_retention:.3} (usage not observed yet in this root: nothing fades)"
        ),
    }
}

/// Where a memory of `layer` lives, for people: `claude auto memory · feedback` for an
/// agent's own (its label and kind), else the layer's name.
pub fn lives_in(layer: Layer, memory: &mem::Memory) -> String {
    let Layer::Native(agent) = layer else { return format!("the {} layer", layer.as_str()) };
    let label = agent.spec().memory.map_or(layer.as_str(), |m| m.label);
    match memory.tags().get(1) {
        Some(kind) => format!("{label} · {kind}"),
        None => label.to_string(),
    }
}

/// An error for a memory of an agent's own, which mem never changes (`forget`, `supersede`):
/// adopt it, or change it in the agent.
pub fn refuse_read_only(layers: &mut Layers, id: &str) -> Result<()> {
    if let Some(layer @ Layer::Native(agent)) = layers.locate(id) {
        anyhow::bail!(
            "{id} is {}'s own memory ({} layer, read only): adopt it with `mem adopt {id}`, or \
             change it in {}",
            agent.title(),
            layer.as_str(),
            agent.title()
        );
    }
    Ok(())
}

/// What to say when `root` has no session log yet.
pub fn no_log_yet(root: &Path) -> String {
    let names: Vec<&str> = Agent::ALL.iter().map(|a| a.name()).collect();
    format!(
        "no session log yet in {}: `mem capture` writes it from the agents' hooks (`mem setup \
         AGENT` installs them, AGENT one of {})",
        root.display(),
        names.join(", ")
    )
}

/// A line of `mem health`: ✓ or ✗, what, and the detail.
pub fn status(ok: bool, what: &str, detail: &str) -> String {
    format!("{} {what:<9} {detail}\n", if ok { "✓" } else { "✗" })
}
