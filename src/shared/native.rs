//! The agents' own memories joined as read-only layers (docs/agents.md, "The agents' own
//! memories"): read by each agent's reader ([`mem::agent::MemorySpec`]) from the folders the
//! environment gives ([`crate::shared::gate::homes`]), indexed into the root's `.mem/native/<layer>/`
//! and opened beside the project's and the user's layers; and `mem adopt`, which copies one
//! into a root of mem's.

use std::path::Path;

use mem::Engine;
use mem::agent::Agent;
use mem::engine::Layers;
use mem::store::{Layer, RootSource};

/// Writes again what changed in the agents' memories of the native layers `layers` joined
/// (for `mem mcp`, which keeps its layers open: each tool call sees what an agent saved
/// meanwhile); the reader's warnings were said when the layers were joined.
pub fn reindex(layers: &mut Layers, now: jiff::Timestamp) {
    let joined: Vec<Layer> = layers.natives().collect();
    if joined.is_empty() {
        return;
    }
    let root = layers.project().files.root().to_path_buf();
    let project = mem::open::project_of(&root, RootSource::Ancestor, &root);
    for (agent, read) in mem::open::read_natives(&crate::shared::gate::homes(), Some(&project)) {
        if joined.contains(&Layer::Native(agent))
            && let Err(e) = mem::engine::index_native(&root, agent, &read, now)
        {
            eprintln!("mem: warning: the {} layer: {e}", Layer::Native(agent).as_str());
        }
    }
}

/// What `mem health` says of one agent's own memories.
#[derive(serde::Serialize)]
pub struct NativeCount {
    /// The agent's name.
    agent: &'static str,
    /// Its layer's name.
    layer: &'static str,
    /// Where its memories live (`claude auto memory`).
    label: &'static str,
    /// How many memories its reader found.
    memories: usize,
    /// How many of them no root of mem's holds (not adopted).
    not_adopted: usize,
    /// The reader's warnings (a file not read).
    warnings: Vec<String>,
}

/// Per agent whose own memories are read for the root of `engine` (found as `source`): how many there are, how
/// many are not adopted, and what its reader could not read (nothing when the layers are off).
pub fn counts(
    engine: &Engine,
    source: RootSource,
    s: &mem::open::Surroundings,
) -> Vec<NativeCount> {
    if !mem::open::natives_enabled(s, source, engine.files.config()) {
        return Vec::new();
    }
    let project = mem::open::project_of(engine.files.root(), source, &s.cwd);
    let mut counts = Vec::new();
    for (agent, read) in mem::open::read_natives(&s.homes, Some(&project)) {
        if read.memories.is_empty() && read.warnings.is_empty() {
            continue;
        }
        counts.push(NativeCount {
            agent: agent.name(),
            layer: Layer::Native(agent).as_str(),
            label: agent.spec().memory.map_or("", |m| m.label),
            memories: read.memories.len(),
            not_adopted: read.memories.iter().filter(|m| !adopted(engine, s, &m.id)).count(),
            warnings: read.warnings,
        });
    }
    counts
}

/// Whether the agent's memory `id` was adopted: indexed in the project's root, or its file is
/// where `mem adopt` writes it (`ID.md` at the top of the project's or the user's root), so
/// that `mem health`, which changes no index, counts an adoption made just before.
fn adopted(engine: &Engine, s: &mem::open::Surroundings, id: &str) -> bool {
    let file = format!("{id}.md");
    engine.files.get(id).is_ok()
        || engine.files.root().join(&file).is_file()
        || s.user_layer.as_ref().is_some_and(|dir| dir.join(&file).is_file())
}

/// The lines of `mem health` on the agents' own memories ([`counts`]).
pub fn health_lines(counts: &[NativeCount]) -> String {
    let mut text = String::new();
    for count in counts {
        let Some(agent) = Agent::from_name(count.agent) else { continue };
        let hint = if count.not_adopted > 0 {
            format!("; `mem adopt --all-from {}` copies them into mem", count.agent)
        } else {
            String::new()
        };
        text.push_str(&format!(
            "{} {:<9} {}: {} memories in {}, {} not adopted{hint}\n",
            if count.warnings.is_empty() { "✓" } else { "!" },
            count.layer,
            agent.title(),
            count.memories,
            count.label,
            count.not_adopted,
        ));
        for warning in &count.warnings {
            text.push_str(&format!("    {warning}\n"));
        }
    }
    text
}

/// The note `mem setup AGENT` prints once about the agent's own memories: mem reads them,
/// and `mem adopt` copies them into mem; nothing for an agent that keeps none here.
pub fn setup_note(agent: Agent, project: &Path) -> String {
    let Some(spec) = agent.spec().memory else { return String::new() };
    let found = mem::open::read_natives(&crate::shared::gate::homes(), Some(project))
        .into_iter()
        .find(|(a, _)| *a == agent);
    let count = found.map_or(0, |(_, read)| read.memories.len());
    let held = match count {
        0 => String::new(),
        n => format!(" (it keeps {n} here)"),
    };
    format!(
        "note: mem reads {}'s own memories ({}){held} as the read-only `{}` layer; `mem adopt \
         --all-from {}` copies them into mem, where teammates and the other agents get them\n",
        agent.title(),
        spec.label,
        spec.layer,
        agent.name()
    )
}
