//! What the context hooks put into a session, grouped by hook call with each memory's title:
//! what `mem session show` prints and the page's session view shows.

use mem::session::ledger::{Injection, Sent};
use mem::store::Layer;

/// What one context hook call put into the session's context, or where its context started
/// again (`event` `reset`, no memories).
#[derive(Debug, serde::Serialize)]
pub struct Injected {
    /// Always `injected`, beside the events' kinds.
    kind: &'static str,
    pub turn: i64,
    pub at: Option<jiff::Timestamp>,
    pub event: String,
    pub memories: Vec<InjectedMemory>,
    pub chars: usize,
}

/// One memory an injection sent, and its title.
#[derive(Debug, serde::Serialize)]
pub struct InjectedMemory {
    #[serde(flatten)]
    pub sent: Sent,
    /// Its title in the root now (`None`: no memory has its id any more).
    pub title: Option<String>,
}

/// The ledger's rows grouped by hook call (same turn, event and time).
pub fn injected(rows: &[Injection]) -> Vec<Injected> {
    let mut groups: Vec<Injected> = Vec::new();
    for row in rows {
        let same = groups.last_mut().filter(|g| {
            g.turn == row.turn && g.event == row.event && g.at == row.at && row.sent.is_some()
        });
        match (same, &row.sent) {
            (Some(group), Some(sent)) => {
                group.chars += sent.chars;
                group.memories.push(InjectedMemory { sent: sent.clone(), title: None });
            }
            _ => groups.push(Injected {
                kind: "injected",
                turn: row.turn,
                at: row.at,
                event: row.event.clone(),
                chars: row.sent.as_ref().map_or(0, |s| s.chars),
                memories: row
                    .sent
                    .iter()
                    .map(|s| InjectedMemory { sent: s.clone(), title: None })
                    .collect(),
            }),
        }
    }
    groups
}

/// Fills in the title of each memory `groups` name from `layers` (`None` for one no layer
/// holds now).
pub fn fill_titles(layers: &mut mem::engine::Layers, groups: &mut [Injected]) {
    let mut titles: std::collections::HashMap<String, Option<String>> = Default::default();
    for memory in groups.iter_mut().flat_map(|g| g.memories.iter_mut()) {
        let id = &memory.sent.memory;
        if !titles.contains_key(id) {
            let title = [Layer::Project, Layer::User].into_iter().find_map(|layer| {
                let (_, found) = layers.engine(layer)?.files.get(id).ok()?;
                Some(found.title())
            });
            titles.insert(id.clone(), title);
        }
        memory.title = titles[id].clone();
    }
}
