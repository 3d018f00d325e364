//! A root's memories as the rows a team store holds: redacted as every write of mem's is
//! (`mem::capture::redact`: the title, the body and every front-matter value), with their
//! state (a forgotten, superseded or archived memory is published as such, so the store never
//! serves what a file retired), and a hash of all of it, by which a push sends only what
//! changed. A memory whose front-matter says `publish: false` is never published ([`private`]).

use jiff::Timestamp;
use mem::Memory;

use crate::{Error, Result};

/// What a published memory is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Recalled.
    Live,
    /// `invalid_at` passed (`mem forget`).
    Forgotten,
    /// `superseded_by` another.
    Superseded,
    /// Moved to `archive/` by `mem prune`.
    Archived,
}

impl State {
    /// The name the store keeps.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Live => "live",
            State::Forgotten => "forgotten",
            State::Superseded => "superseded",
            State::Archived => "archived",
        }
    }
}

/// Who publishes, and as what.
#[derive(Clone, Debug)]
pub struct Publisher {
    /// The project's name in the store (`[team] project`, else from the repository's remote).
    pub project: String,
    /// `project` or `user`.
    pub layer: &'static str,
    /// The author's name (`[team] author`).
    pub author: String,
    /// This machine's name.
    pub machine: String,
}

/// One memory as the store holds it.
#[derive(Clone, Debug)]
pub struct Row {
    /// The project's name (the user layer's rows: `~author`).
    pub project: String,
    /// The memory's id.
    pub id: String,
    /// `project` or `user`.
    pub layer: &'static str,
    /// Who published it.
    pub author: String,
    /// From which machine.
    pub machine: String,
    /// Its path in the root.
    pub path: String,
    /// `episodic`, `semantic` or `procedural`.
    pub kind: String,
    /// 1 to 10.
    pub importance: i16,
    /// When it was written.
    pub created: Timestamp,
    /// When it was last edited.
    pub updated: Option<Timestamp>,
    /// What it is now.
    pub state: State,
    /// Its front-matter as JSON, redacted.
    pub front_matter: serde_json::Value,
    /// Its title, redacted.
    pub title: String,
    /// Its body, redacted.
    pub body: String,
    /// The tags (for the text the model embeds).
    pub tags: Vec<String>,
    /// A hash of everything above: a row whose hash the store holds is not sent again.
    pub hash: String,
}

/// Whether a memory is marked never to be published (`publish: false` in its front-matter).
pub fn private(memory: &Memory) -> bool {
    let key = serde_norway::Value::String("publish".into());
    memory.front_matter().get(&key).and_then(|v| v.as_bool()) == Some(false)
}

/// The row of `memory` (at `path`, archived or not) as `publisher` publishes it at `now`.
pub fn row(
    publisher: &Publisher,
    path: &str,
    memory: &Memory,
    archived: bool,
    now: Timestamp,
) -> Result<Row> {
    let state = if archived {
        State::Archived
    } else if memory.superseded_by().is_some() {
        State::Superseded
    } else if memory.is_invalid_at(now) {
        State::Forgotten
    } else {
        State::Live
    };
    let front_matter = serde_json::to_value(memory.front_matter())
        .map_err(|e| Error::Settings(format!("{path}: front-matter as JSON: {e}")))?;
    let (front_matter, _) = mem::capture::redact_json(&front_matter);
    let (title, _) = mem::capture::redact(&memory.title());
    let (body, _) = mem::capture::redact(memory.body());
    let tags: Vec<String> = memory.tags().iter().map(|t| mem::capture::redact(t).0).collect();
    let mut row = Row {
        project: publisher.project.clone(),
        id: memory.id().to_string(),
        layer: publisher.layer,
        author: publisher.author.clone(),
        machine: publisher.machine.clone(),
        path: path.to_string(),
        kind: memory.kind().as_str().to_string(),
        importance: i16::from(memory.importance()),
        created: memory.created(),
        updated: memory.updated(),
        state,
        front_matter,
        title,
        body,
        tags,
        hash: String::new(),
    };
    row.hash = hash(&row);
    Ok(row)
}

/// The text the model embeds for a row (as for a local memory).
pub fn embedding_text(row: &Row) -> String {
    mem::embed::memory_text(&row.title, &row.tags, &row.body)
}

/// The id of the model's vectors in the store: its length and checksum (vectors under another
/// id are never compared).
pub fn model_id(embedder: &mem::embed::Embedder) -> String {
    let hex: String = embedder.checksum()[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("{}d-{hex}", embedder.dim())
}

/// A hash of what a row says (the vector follows from it and the model).
fn hash(row: &Row) -> String {
    let mut h = blake3::Hasher::new();
    let created = row.created.to_string();
    let updated = row.updated.map(|t| t.to_string()).unwrap_or_default();
    let fm = row.front_matter.to_string();
    let importance = row.importance.to_string();
    for part in [
        &row.project,
        &row.id,
        row.layer,
        &row.author,
        &row.path,
        &row.kind,
        &importance,
        &created,
        &updated,
        row.state.as_str(),
        &fm,
        &row.title,
        &row.body,
    ] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize().to_hex()[..32].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(extra: &str, body: &str) -> Memory {
        let text = format!(
            "---\nid: m1\ntype: semantic\nimportance: 7\ncreated: 2026-11-01T00:00:00Z\n{extra}---\n{body}"
        );
        Memory::parse(&text).unwrap()
    }

    fn publisher() -> Publisher {
        Publisher {
            project: "p".into(),
            layer: "project",
            author: "ana".into(),
            machine: "m".into(),
        }
    }

    #[test]
    fn a_row_is_redacted_states_what_retired_it_and_hashes_what_it_says() {
        let now: Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        let secret = "password=hunter2hunter2";
        let m = memory(&format!("note: \"{secret}\"\n"), &format!("# Deploy\n\nUse {secret}.\n"));
        let r = row(&publisher(), "m1.md", &m, false, now).unwrap();
        assert_eq!(r.state, State::Live);
        let all = format!("{} {} {}", r.title, r.body, r.front_matter);
        assert!(!all.contains("hunter2"), "{all}");
        assert!(r.body.contains("[REDACTED"), "{}", r.body);
        let forgotten = memory("invalid_at: 2026-11-02T00:00:00Z\n", "x\n");
        assert_eq!(row(&publisher(), "a", &forgotten, false, now).unwrap().state, State::Forgotten);
        let gone = memory("superseded_by: m2\ninvalid_at: 2026-11-02T00:00:00Z\n", "x\n");
        assert_eq!(row(&publisher(), "a", &gone, false, now).unwrap().state, State::Superseded);
        let archived = row(&publisher(), "archive/a", &memory("", "x\n"), true, now).unwrap();
        assert_eq!(archived.state, State::Archived);
        let live = row(&publisher(), "a", &memory("", "x\n"), false, now).unwrap();
        assert_ne!(live.hash, archived.hash);
        assert_eq!(live.hash, row(&publisher(), "a", &memory("", "x\n"), false, now).unwrap().hash);
        assert!(private(&memory("publish: false\n", "x\n")));
        assert!(!private(&memory("publish: true\n", "x\n")));
    }
}
