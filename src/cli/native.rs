//! The agents' own memories joined as read-only layers (docs/agents.md, "The agents' own
//! memories"): read by each agent's reader ([`mem::agent::MemorySpec`]) from the folders the
//! environment gives ([`super::hook::homes`]), indexed into the root's `.mem/native/<layer>/`
//! and opened beside the project's and the user's layers; and `mem adopt`, which copies one
//! into a root of mem's.

use std::path::{Path, PathBuf};

use anyhow::Result;
use mem::agent::{Agent, NativeRead, Sources};
use mem::engine::Layers;
use mem::store::{Layer, PROJECT_DIR, RootSource};
use mem::{Config, Engine};

use super::{hook, user};

/// Whether the native layers are read for `root`: never for a root given with `--dir` or
/// `MEM_DIR` (evals, benches and tests never read a developer's agent folders), else as the
/// user configuration says (on by default) unless the root's `mem.toml` turns them off.
pub(super) fn enabled(source: RootSource, config: &Config) -> Result<bool> {
    if source == RootSource::Explicit || config.agents.read_own_memories == Some(false) {
        return Ok(false);
    }
    Ok(user::load()?.agents.read_own_memories)
}

/// The project folder whose agents' memories go with `root`: the folder holding a project's
/// `.memory/`, a root found above the working directory, else the working directory.
pub(super) fn project_of(root: &Path, source: RootSource, cwd: Option<&str>) -> Option<PathBuf> {
    if root.file_name().is_some_and(|n| n == PROJECT_DIR) {
        return root.parent().map(Path::to_path_buf);
    }
    if source == RootSource::Ancestor {
        return Some(root.to_path_buf());
    }
    match cwd {
        Some(cwd) if Path::new(cwd).is_absolute() => Some(PathBuf::from(cwd)),
        _ => std::env::current_dir().ok(),
    }
}

/// What each agent that keeps memories of its own has for `project`, with the reader's
/// warnings (a file not read).
pub(super) fn read_all(project: Option<&Path>) -> Vec<(Agent, NativeRead)> {
    let homes = hook::homes();
    Agent::ALL
        .into_iter()
        .filter_map(|agent| {
            let spec = agent.spec().memory?;
            let home = homes.of(agent)?;
            let sources = Sources { home, user: homes.user(), project };
            Some((agent, (spec.read)(&sources)))
        })
        .collect()
}

/// `layers` with the native layers of `root` joined, when [`enabled`]: each agent's memories
/// indexed, the warnings of its reader on stderr (one line a file), an agent with none (and
/// no layer indexed before) left out. A layer that cannot be indexed or opened is a warning.
pub(super) fn join(
    now: jiff::Timestamp,
    mut layers: Layers,
    source: RootSource,
    cwd: Option<&str>,
) -> Result<Layers> {
    join_into(now, &mut layers, source, cwd)?;
    Ok(layers)
}

/// [`join`] in place: the native layers `layers` had are replaced by those read now (an
/// engine already open for an agent is kept, its files written again: a served hook of
/// `mem mcp` reopens no index).
pub(super) fn join_into(
    now: jiff::Timestamp,
    layers: &mut Layers,
    source: RootSource,
    cwd: Option<&str>,
) -> Result<()> {
    let mut open = layers.take_natives();
    let root = layers.project().root().to_path_buf();
    if !enabled(source, layers.project().config())? {
        return Ok(());
    }
    let project = project_of(&root, source, cwd);
    let mut natives = Vec::new();
    for (agent, read) in read_all(project.as_deref()) {
        for warning in &read.warnings {
            eprintln!("mem: warning: {warning}");
        }
        let folder = mem::engine::native_folder(&root, agent);
        if read.memories.is_empty() && !folder.is_dir() {
            continue;
        }
        let kept = open.iter().position(|(a, _)| *a == agent).map(|i| open.swap_remove(i).1);
        let opened = (|| -> Result<Engine> {
            let folder = mem::engine::index_native(&root, agent, &read, now)?;
            if let Some(engine) = kept {
                return Ok(engine);
            }
            let mut engine = super::open::engine_at(&folder)?;
            engine.set_code_checks(false);
            Ok(engine)
        })();
        match opened {
            Ok(engine) => natives.push((agent, engine)),
            Err(e) => eprintln!(
                "mem: warning: the {} layer is not searched: {}",
                Layer::Native(agent).as_str(),
                super::output::describe(&e)
            ),
        }
    }
    layers.set_natives(natives);
    Ok(())
}

/// Writes again what changed in the agents' memories of the native layers `layers` joined
/// (for `mem mcp`, which keeps its layers open: each tool call sees what an agent saved
/// meanwhile); the reader's warnings were said when the layers were joined.
pub(super) fn reindex(layers: &mut Layers, now: jiff::Timestamp) {
    let joined: Vec<Layer> = layers.natives().collect();
    if joined.is_empty() {
        return;
    }
    let root = layers.project().root().to_path_buf();
    let project = project_of(&root, RootSource::Ancestor, None);
    for (agent, read) in read_all(project.as_deref()) {
        if joined.contains(&Layer::Native(agent))
            && let Err(e) = mem::engine::index_native(&root, agent, &read, now)
        {
            eprintln!("mem: warning: the {} layer: {e}", Layer::Native(agent).as_str());
        }
    }
}

/// Where a memory of `layer` lives, for people: `claude auto memory · feedback` for an
/// agent's own (its label and kind), else the layer's name.
pub(super) fn lives_in(layer: Layer, memory: &mem::Memory) -> String {
    let Layer::Native(agent) = layer else { return format!("the {} layer", layer.as_str()) };
    let label = agent.spec().memory.map_or(layer.as_str(), |m| m.label);
    match memory.tags().get(1) {
        Some(kind) => format!("{label} · {kind}"),
        None => label.to_string(),
    }
}

/// What `mem health` says of one agent's own memories.
#[derive(serde::Serialize)]
pub(super) struct NativeCount {
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
pub(super) fn counts(engine: &Engine, source: RootSource) -> Result<Vec<NativeCount>> {
    if !enabled(source, engine.config())? {
        return Ok(Vec::new());
    }
    let project = project_of(engine.root(), source, None);
    let mut counts = Vec::new();
    for (agent, read) in read_all(project.as_deref()) {
        if read.memories.is_empty() && read.warnings.is_empty() {
            continue;
        }
        counts.push(NativeCount {
            agent: agent.name(),
            layer: Layer::Native(agent).as_str(),
            label: agent.spec().memory.map_or("", |m| m.label),
            memories: read.memories.len(),
            not_adopted: read.memories.iter().filter(|m| engine.get(&m.id).is_err()).count(),
            warnings: read.warnings,
        });
    }
    Ok(counts)
}

/// The lines of `mem health` on the agents' own memories ([`counts`]).
pub(super) fn health_lines(counts: &[NativeCount]) -> String {
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

/// An error for a memory of an agent's own, which mem never changes (`forget`, `supersede`):
/// adopt it, or change it in the agent.
pub(super) fn refuse_read_only(layers: &mut Layers, id: &str) -> Result<()> {
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

/// The note `mem setup AGENT` prints once about the agent's own memories: mem reads them,
/// and `mem adopt` copies them into mem; nothing for an agent that keeps none here.
pub(super) fn setup_note(agent: Agent, project: &Path) -> String {
    let Some(spec) = agent.spec().memory else { return String::new() };
    let found = read_all(Some(project)).into_iter().find(|(a, _)| *a == agent);
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
