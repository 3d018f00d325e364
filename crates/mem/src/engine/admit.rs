//! New memories: admission control (duplicate, near-duplicate, fresh) and writing the file.

use jiff::Timestamp;
use serde::Serialize;

use super::{Files, RecallOptions, Usage, Vectors};
use crate::format::{Memory, NewMemory};
use crate::similarity::Space;
use crate::store::{self, Overwrite};
use crate::{Error, Result};

/// A memory file written by [`Files::add`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Added {
    /// Its new id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
}

/// What admission control found for a new text.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Admission {
    /// Nothing like it exists.
    Fresh,
    /// The same text exists already.
    Duplicate {
        /// The existing memory.
        id: String,
        /// Its path.
        path: String,
    },
    /// A very similar text exists.
    Similar(Similar),
}

/// A very similar memory that exists already.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Similar {
    /// The existing memory.
    pub id: String,
    /// Its path.
    pub path: String,
    /// Cosine similarity, by `measure`.
    pub similarity: f32,
    /// "embedding" (the model's cosine) or "tf-idf" (word weights).
    pub measure: &'static str,
}

impl Files {
    /// Writes a new memory file `<id>.md` at the top of the root, atomically; never replaces a
    /// file. The index picks it up on its next refresh.
    pub fn add(&self, new: NewMemory, now: Timestamp) -> Result<Added> {
        self.write_new(redacted(new).0, now)
    }

    /// [`Files::add`] of a memory whose secrets were redacted already.
    pub(super) fn write_new(&self, new: NewMemory, now: Timestamp) -> Result<Added> {
        let memory = Memory::create(new, now)?;
        let rel = format!("{}.md", memory.id());
        store::write_atomic(&self.root.join(&rel), memory.render().as_bytes(), Overwrite::No)?;
        Ok(Added { id: memory.id().to_string(), path: rel })
    }
}

/// Admission control for a new text: an exact duplicate of an existing memory (same words,
/// case and spacing aside), a near-duplicate, or fresh. Near-duplicate means an embedding
/// cosine of at least `[embed] near_duplicate` with any memory when a model is configured
/// and usable, else a TF-IDF cosine of at least `[admission] near_duplicate` against the
/// ten closest memories by BM25. A model that cannot be used is reported by
/// [`Model::warning`](super::Model::warning).
pub(crate) fn admit(
    files: &Files,
    vectors: &mut Vectors,
    new: &NewMemory,
    now: Timestamp,
) -> Result<Admission> {
    admit_among(files, vectors, new, now, |_| true)
}

/// [`admit`] against the memories `keep` accepts only. Exact means the same words
/// in lower case, one space between them, a final full stop aside
/// ([`crate::capture::facts::normal`]).
pub(crate) fn admit_among(
    files: &Files,
    vectors: &mut Vectors,
    new: &NewMemory,
    now: Timestamp,
    keep: impl Fn(&Memory) -> bool,
) -> Result<Admission> {
    let normal = crate::capture::facts::normal;
    let text = normal(&new.text);
    // Relevance alone: an old, unimportant exact duplicate must not fall out of the ten.
    let options = RecallOptions { limit: 10, ..Default::default() };
    let relevance_only = crate::config::Ranking {
        recency_weight: 0.0,
        importance_weight: 0.0,
        ..files.config.ranking.clone()
    };
    let question = crate::question::Question::new(&new.text, now);
    let hits = files.search_ranked(&question, &options, now, &relevance_only)?;
    let mut bodies = Vec::with_capacity(hits.len());
    for hit in &hits {
        let Ok((path, memory)) = files.get(&hit.record.id) else { continue };
        if !keep(&memory) {
            continue;
        }
        let body = memory.body();
        let without_title =
            body.trim_start().strip_prefix('#').map(|b| b.split_once('\n').map_or("", |x| x.1));
        if normal(body) == text || without_title.is_some_and(|b| normal(b) == text) {
            return Ok(Admission::Duplicate { id: hit.record.id.clone(), path });
        }
        bodies.push((hit.record.id.clone(), path, body.to_string()));
    }
    if vectors.model().source().is_some() && files.config.embed.near_duplicate < 1.0 {
        let threshold = files.config.embed.near_duplicate;
        let limit = files.config.embed.recall_embed_limit;
        let hidden = crate::progress::Silent;
        let nearest = vectors.sync(files, Some(limit), &hidden).and_then(|synced| {
            let vector = vectors.model().embed(&new.text)?;
            Ok((vectors.nearest(&vector, 10, threshold), synced.pending))
        });
        let nearest = nearest.map(|(found, pending)| {
            let kept = found.into_iter().find(|(id, _)| files.get(id).is_ok_and(|m| keep(&m.1)));
            (kept, pending)
        });
        match nearest {
            Ok((nearest, pending)) => match nearest {
                Some((id, similarity)) => {
                    let path = files.path_of(&id)?;
                    return Ok(Admission::Similar(Similar {
                        id,
                        path,
                        similarity,
                        measure: "embedding",
                    }));
                }
                // Every memory has a vector and none is close: fresh. With memories left
                // without a vector (more than the recall limit), TF-IDF checks those too.
                None if pending == 0 => return Ok(Admission::Fresh),
                None => {}
            },
            // The model's failure is kept for `embedding_warning`; TF-IDF decides.
            Err(Error::Embed(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let threshold = files.config.admission.near_duplicate;
    if bodies.is_empty() || threshold >= 1.0 {
        return Ok(Admission::Fresh);
    }
    let mut texts = vec![new.text.clone()];
    texts.extend(bodies.iter().map(|(_, _, b)| b.clone()));
    let (_, vectors) = Space::fit(&texts);
    let best = bodies
        .into_iter()
        .zip(&vectors[1..])
        .map(|((id, path, _), v)| (id, path, vectors[0].dot(v)))
        .max_by(|a, b| a.2.total_cmp(&b.2));
    Ok(match best {
        Some((id, path, similarity)) if similarity >= threshold => {
            Admission::Similar(Similar { id, path, similarity, measure: "tf-idf" })
        }
        _ => Admission::Fresh,
    })
}

/// What [`super::Engine::remember`] does when a very similar memory exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnSimilar {
    /// Write nothing and say which memory is similar.
    #[default]
    Refuse,
    /// Write it anyway: both are kept.
    Keep,
    /// Write it and mark the similar memory as superseded by it.
    Supersede,
}

/// What [`super::Engine::remember`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Remembered {
    /// A new memory file.
    Added {
        /// The new memory.
        added: Added,
        /// The similar memory it supersedes, with [`OnSimilar::Supersede`].
        superseded: Option<String>,
    },
    /// The same text is remembered already: nothing written, the existing memory counted as
    /// used.
    Duplicate {
        /// The existing memory.
        id: String,
        /// Its path.
        path: String,
        /// Files the use could not be written into yet (their events wait in the log).
        unsynced: Vec<String>,
    },
    /// A very similar memory exists and [`OnSimilar::Refuse`] was asked: nothing written.
    Similar(Similar),
}

/// Remembers a new text the way every front end does: an exact duplicate is not written
/// again but counted as used; a near-duplicate is refused, kept or supersedes the old one
/// as `on_similar` says; the file must fit `[limits] max_file_bytes` (or the index would
/// skip it). A new file is indexed at once. Call [`super::Engine::refresh`] first.
pub(super) fn remember(
    files: &mut Files,
    usage: &mut Usage,
    vectors: &mut Vectors,
    new: NewMemory,
    on_similar: OnSimilar,
    now: Timestamp,
) -> Result<Remembered> {
    // Compared and written as it will be kept: without its secrets.
    let (new, _) = redacted(new);
    let mut replaces = None;
    match admit(files, vectors, &new, now)? {
        Admission::Fresh => {}
        Admission::Duplicate { id, path } => {
            // Saying it again is a use of the memory that says it.
            let (_, synced) = usage.used(files, std::slice::from_ref(&id), now, true)?;
            return Ok(Remembered::Duplicate { id, path, unsynced: synced.failed });
        }
        Admission::Similar(similar) => match on_similar {
            OnSimilar::Refuse => {
                return Ok(Remembered::Similar(similar));
            }
            OnSimilar::Keep => {}
            OnSimilar::Supersede => replaces = Some(similar.id),
        },
    }
    let size = Memory::create(new.clone(), now)?.render().len() as u64;
    let max = files.config.limits.max_file_bytes;
    if size > max {
        return Err(Error::InvalidMemory(format!(
            "the memory file would be {size} bytes, over [limits] max_file_bytes ({max}) of \
             mem.toml; shorten the text"
        )));
    }
    let added = files.write_new(new, now)?;
    // The index learns of it now, not at the next recall (`mem health` compares them).
    files.refresh(usage, now, &crate::progress::Silent)?;
    if let Some(old) = &replaces {
        files.supersede(old, &added.id, now)?;
    }
    Ok(Remembered::Added { added, superseded: replaces })
}

/// `new` with the secrets of its text, title and source redacted (see
/// [`crate::capture::redact`]), and how many there were: nothing mem writes keeps one.
pub fn redacted(mut new: NewMemory) -> (NewMemory, usize) {
    let (text, mut count) = crate::capture::redact(&new.text);
    new.text = text;
    for field in [&mut new.title, &mut new.source] {
        if let Some(value) = field.as_mut() {
            let (clean, n) = crate::capture::redact(value);
            *value = clean;
            count += n;
        }
    }
    (new, count)
}
