//! The agents' own memories as read-only layers (docs/agents.md, "The agents' own memories"):
//! what an agent's reader found ([`crate::agent::NativeRead`]) is written, as memory files of
//! mem's format, into the root's `.mem/native/<layer>/`, a root of its own that mem indexes
//! and ranks like any other (with its own usage log, local only); only the files that changed
//! are written again, those gone removed. It is derived state: deleting it loses only the
//! native memories' usage. And `adopt`: an agent's memory copied into a root of mem's, under
//! the same id, which then hides the agent's copy from recall.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use super::Layers;
use crate::agent::{Agent, NativeMemory, NativeRead};
use crate::format::{MemoryType, whole_second, yaml_text};
use crate::store::{self, Layer, Overwrite};
use crate::{Error, Result};

/// The folder of `.mem/` that holds the native layers.
pub const NATIVE_DIR: &str = "native";

/// Where the native layer of `agent` is indexed for `root`: `<root>/.mem/native/<layer>/`.
pub fn native_folder(root: &Path, agent: Agent) -> PathBuf {
    root.join(store::STATE_DIR).join(NATIVE_DIR).join(Layer::Native(agent).as_str())
}

/// The type and importance of an agent's kind of memory (docs/format.md, "Native layers"):
/// `feedback` is how to work (procedural, 7); `user` (6), `project` (5), `reference` (4) and
/// any other are facts (semantic, 5).
pub fn native_type(kind: Option<&str>) -> (MemoryType, u8) {
    match kind {
        Some("feedback") => (MemoryType::Procedural, 7),
        Some("user") => (MemoryType::Semantic, 6),
        Some("reference") => (MemoryType::Semantic, 4),
        _ => (MemoryType::Semantic, 5),
    }
}

/// The memory file of mem's format that stands for `memory` of the layer `layer`: its id,
/// type and importance by its kind, created when its file was last modified (not after
/// `now`), tagged with the layer and its kind, its file as `source`.
pub fn native_file(layer: &str, memory: &NativeMemory, now: Timestamp) -> String {
    let (kind, importance) = native_type(memory.kind.as_deref());
    let created = whole_second(memory.modified.map_or(now, |m| m.min(now)));
    let mut tags = vec![yaml_text(layer)];
    tags.extend(memory.kind.as_deref().map(yaml_text));
    let clean = |t: &str| -> String {
        t.chars().filter(|c| !c.is_control() || *c == '\n' || *c == '\t').collect()
    };
    let mut out = format!(
        "---\nid: {}\ntype: {}\nimportance: {importance}\ncreated: {created}\ntags: [{}]\n\
         source: {}\n---\n",
        memory.id,
        kind.as_str(),
        tags.join(", "),
        yaml_text(&memory.file.to_string_lossy())
    );
    if let Some(title) = memory.title.as_deref() {
        out.push_str(&format!("# {}\n\n", clean(title).replace('\n', " ").trim()));
    }
    out.push_str(clean(&memory.text).trim());
    out.push('\n');
    out
}

/// Writes what `read` found of `agent`'s memories into its native folder under `root` (see
/// the module doc): the files that changed, and removes those of memories gone. The folder.
pub fn index_native(
    root: &Path,
    agent: Agent,
    read: &NativeRead,
    now: Timestamp,
) -> Result<PathBuf> {
    store::state_dir(root)?;
    let folder = native_folder(root, agent);
    std::fs::create_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
    let rel = folder.strip_prefix(root).unwrap_or(&folder).to_string_lossy().into_owned();
    store::inside_root(root, &rel)?;
    // Its usage stays in its own local log: never synced into a usage file.
    let config = folder.join(crate::config::CONFIG_FILE);
    if !config.exists() {
        store::write_atomic(&config, b"[usage]\nsync = false\n", Overwrite::Yes)?;
    }
    let layer = Layer::Native(agent).as_str();
    let mut keep = std::collections::BTreeSet::new();
    for memory in &read.memories {
        let name = format!("{}.md", memory.id);
        let path = folder.join(&name);
        // What reaches the other agents carries no secret of the agent's file.
        let (text, _) = crate::capture::redact(&native_file(layer, memory, now));
        keep.insert(name);
        if std::fs::read(&path).is_ok_and(|old| old == text.as_bytes()) {
            continue;
        }
        store::write_atomic(&path, text.as_bytes(), Overwrite::Yes)?;
    }
    let entries = std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name.ends_with(".md") && name.starts_with(&format!("{layer}."));
        if ours && !keep.contains(&name) {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
        }
    }
    Ok(folder)
}

/// A native memory adopted into a root of mem's.
#[derive(Debug)]
pub struct Adopted {
    /// Its id (the agent's, kept).
    pub id: String,
    /// The layer it went to.
    pub layer: Layer,
    /// The agent whose memory it was.
    pub agent: Agent,
    /// How many secrets were redacted from its text.
    pub redacted: usize,
}

impl Layers {
    /// Copies the native memory `id` into a root of mem's, redacted as captures are, with its
    /// origin in `source`: into `to` when given, else the user layer for the agent's personal
    /// kinds ([`crate::agent::MemorySpec::personal`]) when there is one, else the project. The
    /// copy keeps the id, so the agent's own is no longer recalled; the agent's copy edited
    /// later stays hidden (mem's copy is the one that counts). A `source` under the user's
    /// `home` is written from `~`, so that a copy committed with the project names no home.
    pub fn adopt(
        &mut self,
        id: &str,
        to: Option<Layer>,
        home: Option<&std::path::Path>,
        now: Timestamp,
    ) -> Result<Adopted> {
        let Some(Layer::Native(agent)) = self.locate(id).filter(|l| !l.writable()) else {
            return Err(Error::InvalidMemory(
                "not a memory of an agent's own (see `mem recall --layer AGENT`): only those \
                 can be adopted"
                    .into(),
            ));
        };
        let native = self.engine(Layer::Native(agent)).expect("located");
        let (_, memory) = native.files.get(id)?;
        let text = memory.render();
        let uses = native
            .usage
            .view(&native.files)
            .map_or(0, |view| view.uses().iter().filter(|(i, _)| i == id).count());
        let spec = agent.spec().memory.expect("a native layer has a memory spec");
        let personal = memory.tags().iter().any(|t| spec.personal.contains(&t.as_str()));
        let layer = match to {
            Some(layer) if !layer.writable() => {
                return Err(Error::InvalidMemory(format!(
                    "the {} layer is read only: adopt into project or user",
                    layer.as_str()
                )));
            }
            Some(layer) => layer,
            None if personal && self.engine(Layer::User).is_some() => Layer::User,
            None => Layer::Project,
        };
        let (text, redacted) = crate::capture::redact(&text);
        let origin = memory.source().unwrap_or(id);
        let origin = match home.and_then(|h| std::path::Path::new(origin).strip_prefix(h).ok()) {
            Some(rest) => format!("~/{}", rest.display()),
            None => origin.to_string(),
        };
        let source = format!("{}: {origin}", spec.label);
        let text = crate::format::edit_front_matter(&text, &[("source", Some(yaml_text(&source)))])
            .map_err(|e| Error::InvalidMemory(e.to_string()))?;
        let Some(engine) = self.engine(layer) else {
            return Err(Error::InvalidMemory(format!(
                "there is no {} layer here to adopt into",
                layer.as_str()
            )));
        };
        if engine.files.get(id).is_ok() {
            return Err(Error::InvalidMemory(format!("{id} is adopted already")));
        }
        let path = engine.files.root().join(format!("{id}.md"));
        store::write_atomic(&path, text.as_bytes(), Overwrite::No)?;
        // Its usage moves with it: one use in mem's root for each it had as the agent's.
        if uses > 0 {
            engine.refresh(now, &crate::progress::Silent)?;
            for _ in 0..uses {
                engine.used(&[id.to_string()], now, false)?;
            }
        }
        Ok(Adopted { id: id.to_string(), layer, agent, redacted })
    }
}
