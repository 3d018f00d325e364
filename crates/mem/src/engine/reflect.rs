//! `mem reflect`: the plan (clusters of observations, reflections they join) and writing it.

use std::collections::{BTreeMap, HashMap};

use jiff::Timestamp;
use serde::Serialize;

use super::{Files, parse_error};
use crate::embed::vectors::VectorStore;
use crate::format::{Memory, MemoryId, MemoryType, NewMemory, edit_front_matter, with_body};
use crate::format::{yaml_ids, yaml_text};
use crate::similarity::{self, Digest, Space, SparseVec};
use crate::store::{self, Overwrite};
use crate::{Error, Result};

/// Folder, under the root, where `mem reflect` writes new reflections.
pub const REFLECTIONS_DIR: &str = "reflections";

/// The instructions a summariser command receives before the memories of a cluster.
pub const SUMMARY_PROMPT: &str = "You are consolidating related notes from a software \
project's long-term memory into one memory. Write 3 to 6 sentences of plain Markdown that say \
what the notes have in common: the facts, the causes, the decisions, and what to do. No title, \
no preamble. The notes:\n";

/// Which memories `mem reflect` clusters.
#[derive(Clone, Debug)]
pub struct ReflectOptions {
    /// Types to consider (all when empty); `mem reflect` defaults to episodic.
    pub kinds: Vec<MemoryType>,
    /// Only memories created at or after this time.
    pub since: Option<Timestamp>,
    /// Cosine similarity for two memories to belong together.
    pub threshold: f32,
    /// Smallest new cluster.
    pub min_cluster: usize,
    /// Group by embedding cosine at this threshold instead of TF-IDF at `threshold`; every
    /// memory needs a vector ([`Vectors::sync`](super::Vectors::sync) first).
    pub embedding_threshold: Option<f32>,
}

/// A memory named in a proposal.
#[derive(Clone, Debug, Serialize)]
pub struct SourceRef {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Its title.
    pub title: String,
}

/// One reflection `mem reflect` would write or update.
#[derive(Clone, Debug, Serialize)]
pub struct Proposal {
    /// The reflection this updates; `None` for a new one.
    pub updates: Option<SourceRef>,
    /// Title, type, importance, tags and summary.
    pub digest: Digest,
    /// Every source, old and new.
    pub sources: Vec<SourceRef>,
    /// Ids of the sources that get `consolidated_into` now.
    pub new_sources: Vec<String>,
    /// Ids an updated reflection already lists; kept in `derived_from` even when those
    /// memories are no longer recalled (invalidated, archived).
    pub keep: Vec<String>,
}

/// A reflection written by [`super::Engine::reflect`].
#[derive(Clone, Debug, Serialize)]
pub struct Written {
    /// Its id.
    pub id: String,
    /// Its path relative to the root.
    pub path: String,
    /// Whether it existed and was updated.
    pub updated: bool,
    /// How many sources it has.
    pub sources: usize,
}

/// What `mem reflect` did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReflectReport {
    /// Reflections written or updated.
    pub written: Vec<Written>,
    /// Clusters skipped, each with the reason (a failing summariser, say).
    pub failed: Vec<String>,
}

/// Writes a cluster's summary from a prompt (the [`SUMMARY_PROMPT`] and the sources); the
/// front end supplies it (the CLI runs a configured command). An [`Error::Summarizer`] skips
/// the cluster; any other error stops the reflection.
pub trait Summarize {
    /// The summary of `prompt`, plain Markdown.
    fn summarize(&self, prompt: &str) -> Result<String>;
}

/// What `mem reflect` would write: observations that join an existing reflection (which
/// is then updated), and new clusters of at least `min_cluster` (each a new reflection).
pub(super) fn plan(
    files: &Files,
    store: Option<&VectorStore>,
    options: &ReflectOptions,
    now: Timestamp,
) -> Result<Vec<Proposal>> {
    // Planning only reads: the memories are kept without their front-matter mapping.
    let loaded: Vec<(String, Memory)> = files
        .load_all_map(|rel, m| (!m.is_invalid_at(now)).then(|| (rel, m.without_front_matter())));
    let (space, vectors) = Space::fit_with(loaded.len(), |i| {
        let m = &loaded[i].1;
        std::borrow::Cow::Owned(format!("{}\n{}", m.title(), m.body()))
    });
    let position: HashMap<&str, usize> =
        loaded.iter().enumerate().map(|(i, (_, m))| (m.id().as_str(), i)).collect();

    // Existing reflections and the memories they were made from.
    let reflections: Vec<(usize, Vec<usize>)> = loaded
        .iter()
        .enumerate()
        .filter(|(_, (_, m))| !m.derived_from().is_empty())
        .map(|(i, (_, m))| {
            let sources: Vec<usize> = m
                .derived_from()
                .iter()
                .filter_map(|id| position.get(id.as_str()).copied())
                .collect();
            (i, sources)
        })
        .collect();

    let candidates: Vec<usize> = loaded
        .iter()
        .enumerate()
        .filter(|(_, (_, m))| {
            (options.kinds.is_empty() || options.kinds.contains(&m.kind()))
                && m.consolidated_into().is_none()
                && m.derived_from().is_empty()
                && options.since.is_none_or(|since| m.created() >= since)
        })
        .map(|(i, _)| i)
        .collect();

    let group = Grouping { reflections: &reflections, candidates: &candidates };
    let (joining, clusters) = match options.embedding_threshold {
        Some(threshold) => {
            let dense = loaded
                .iter()
                .map(|(path, m)| {
                    store
                        .and_then(|s| s.get(m.id().as_str()))
                        .map(similarity::DenseVec)
                        .ok_or_else(|| Error::NoVector(path.clone()))
                })
                .collect::<Result<Vec<_>>>()?;
            group.run(&dense, threshold, options.min_cluster, similarity::dense_neighbours)
        }
        None => group.run(&vectors, options.threshold, options.min_cluster, similarity::neighbours),
    };

    let source_ref = |i: usize| SourceRef {
        id: loaded[i].1.id().to_string(),
        path: loaded[i].0.clone(),
        title: loaded[i].1.title(),
    };
    let digest_of = |members: &[usize]| {
        let sources: Vec<(&Memory, &SparseVec)> =
            members.iter().map(|&i| (&loaded[i].1, &vectors[i])).collect();
        similarity::digest(&space, &sources)
    };
    let mut proposals = Vec::new();
    for (r, new) in joining {
        let (reflection, old) = &reflections[r];
        // A source listed already but never marked (a run stopped half-way) is not added
        // twice; it only gets its mark.
        let mut all = old.clone();
        all.extend(new.iter().filter(|i| !old.contains(i)));
        let keep = loaded[*reflection].1.derived_from().iter().map(|id| id.to_string()).collect();
        proposals.push(Proposal {
            updates: Some(source_ref(*reflection)),
            digest: digest_of(&all),
            sources: all.iter().map(|&i| source_ref(i)).collect(),
            new_sources: new.iter().map(|&i| loaded[i].1.id().to_string()).collect(),
            keep,
        });
    }
    for members in clusters {
        proposals.push(Proposal {
            updates: None,
            digest: digest_of(&members),
            sources: members.iter().map(|&i| source_ref(i)).collect(),
            new_sources: members.iter().map(|&i| loaded[i].1.id().to_string()).collect(),
            keep: Vec::new(),
        });
    }
    Ok(proposals)
}

/// Writes the proposals: new reflections under `reflections/`, updated ones in place, and
/// `consolidated_into` on their new sources. With a summariser, its output is the body; a
/// cluster whose summariser fails is skipped and reported, the others go on.
pub(super) fn write(
    files: &mut Files,
    proposals: &[Proposal],
    summarizer: Option<&dyn Summarize>,
    now: Timestamp,
) -> Result<ReflectReport> {
    files.with_lock(|files| {
        let mut report = ReflectReport::default();
        for proposal in proposals {
            match write_reflection(files, proposal, summarizer, now) {
                Ok(written) => report.written.push(written),
                Err(
                    e @ (Error::Summarizer { .. } | Error::Parse { .. } | Error::InvalidMemory(_)),
                ) => {
                    report.failed.push(format!("{}: {e}", proposal.digest.title));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(report)
    })
}

fn write_reflection(
    files: &Files,
    proposal: &Proposal,
    summarizer: Option<&dyn Summarize>,
    now: Timestamp,
) -> Result<Written> {
    let d = &proposal.digest;
    let summary = match summarizer {
        Some(s) => {
            let mut prompt = String::from(SUMMARY_PROMPT);
            for source in &proposal.sources {
                let text = std::fs::read_to_string(files.root.join(&source.path))
                    .map_err(|e| Error::io(files.root.join(&source.path), e))?;
                let body = Memory::parse(&text).map(|m| m.body().to_string()).unwrap_or(text);
                prompt.push_str(&format!(
                    "\n### {} ({})\n{}\n",
                    source.title,
                    source.id,
                    body.trim()
                ));
            }
            s.summarize(&prompt)?
        }
        None => d.sentences.iter().map(|s| format!("- {s}\n")).collect(),
    };
    let mut text = format!("{}\n\n## Sources\n\n", summary.trim_end());
    for source in &proposal.sources {
        text.push_str(&format!("- {}: {}\n", source.id, source.title));
    }
    let mut ids: Vec<MemoryId> = Vec::new();
    for id in proposal.keep.iter().chain(proposal.sources.iter().map(|s| &s.id)) {
        let id = MemoryId::new(id)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let (id, rel, updated) = match &proposal.updates {
        None => {
            let memory = Memory::create(
                NewMemory {
                    text: text.clone(),
                    kind: d.kind,
                    importance: d.importance,
                    tags: d.tags.clone(),
                    title: Some(d.title.clone()),
                    source: Some("reflect".into()),
                },
                now,
            )?;
            let rel = format!("{REFLECTIONS_DIR}/{}.md", memory.id());
            let file =
                edit_front_matter(&memory.render(), &[("derived_from", Some(yaml_ids(&ids)))])
                    .map_err(parse_error(&rel))?;
            let path = store::inside_root(&files.root, &rel)?;
            std::fs::create_dir_all(path.parent().expect("has a folder"))
                .map_err(|e| Error::io(&path, e))?;
            store::write_atomic(&path, file.as_bytes(), Overwrite::No)?;
            (memory.id().to_string(), rel, false)
        }
        Some(existing) => {
            let edits = [
                ("derived_from", Some(yaml_ids(&ids))),
                ("importance", Some(d.importance.to_string())),
                crate::format::updated_at(now),
            ];
            files.rewrite(&existing.path, |old| {
                with_body(old, &format!("# {}\n\n{text}", d.title))
                    .and_then(|f| edit_front_matter(&f, &edits))
            })?;
            (existing.id.clone(), existing.path.clone(), true)
        }
    };
    // Sources last: a crash before this leaves them unconsolidated, and the next run
    // finds them close to this reflection and joins them to it instead of starting over.
    let reflection_id = MemoryId::new(&id)?;
    for source in proposal.sources.iter().filter(|s| proposal.new_sources.contains(&s.id)) {
        let edits = [
            ("consolidated_into", Some(yaml_text(reflection_id.as_str()))),
            crate::format::updated_at(now),
        ];
        files.rewrite(&source.path, |old| edit_front_matter(old, &edits))?;
    }
    Ok(Written { id, path: rel, updated, sources: proposal.sources.len() })
}

/// Which observations join existing reflections, and which form new clusters, by one
/// similarity measure.
struct Grouping<'a> {
    /// Each reflection (index into the loaded memories) with its sources.
    reflections: &'a [(usize, Vec<usize>)],
    /// Observations not consolidated yet.
    candidates: &'a [usize],
}

impl Grouping<'_> {
    /// Observations that join a reflection (keyed by its position in `reflections`), and
    /// clusters of the others. An observation joins by the rule that grows a cluster: it is
    /// close to the reflection's centre *and* to at least one of its sources. The centre of
    /// many varied sources is close to much of everything; by that alone, a reflection
    /// whose sources were not marked yet (a run killed after writing it) swallowed every
    /// cluster the run had not written.
    fn run<V: similarity::Similarity + Clone>(
        &self,
        vectors: &[V],
        threshold: f32,
        min_cluster: usize,
        neighbours: impl Fn(&[V], f32) -> Vec<Vec<(usize, f32)>>,
    ) -> (BTreeMap<usize, Vec<usize>>, Vec<Vec<usize>>) {
        let centres: Vec<V> = self
            .reflections
            .iter()
            .map(|(_, sources)| V::mean(sources.iter().map(|&s| &vectors[s])))
            .collect();
        let mut joining: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut free = Vec::new();
        for &c in self.candidates {
            let best = centres
                .iter()
                .enumerate()
                .map(|(r, centre)| (r, vectors[c].similarity(centre)))
                .filter(|&(_, sim)| sim >= threshold)
                .filter(|&(r, _)| {
                    let sources = &self.reflections[r].1;
                    sources.iter().any(|&s| vectors[c].similarity(&vectors[s]) >= threshold)
                })
                .max_by(|a, b| a.1.total_cmp(&b.1));
            match best {
                Some((r, _)) => joining.entry(r).or_default().push(c),
                None => free.push(c),
            }
        }
        let free_vectors: Vec<V> = free.iter().map(|&i| vectors[i].clone()).collect();
        let graph = neighbours(&free_vectors, threshold);
        let clusters = similarity::cluster(&free_vectors, &graph, threshold, min_cluster)
            .into_iter()
            .map(|cluster| cluster.iter().map(|&k| free[k]).collect())
            .collect();
        (joining, clusters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::similarity::SparseVec;

    /// Four sources far from each other, and an observation at 0.3 from each: close to their
    /// centre (0.6), close to none of them.
    #[test]
    fn an_observation_joins_a_reflection_only_near_one_of_its_sources() {
        let axis = |i: u32| SparseVec(vec![(i, 1.0)]);
        let mut vectors: Vec<SparseVec> = (0..4).map(axis).collect();
        let w = 0.3f32;
        let rest = (1.0 - 4.0 * w * w).sqrt();
        vectors.push(SparseVec(vec![(0, w), (1, w), (2, w), (3, w), (4, rest)]));
        vectors.push(SparseVec(vec![(0, 0.8), (5, 0.6)]));
        let reflections = vec![(usize::MAX, vec![0, 1, 2, 3])];
        let candidates = vec![4, 5];
        let group = Grouping { reflections: &reflections, candidates: &candidates };
        let (joining, _) = group.run(&vectors, 0.35, 2, crate::similarity::neighbours);
        assert_eq!(joining.get(&0), Some(&vec![5]), "only the one near a source joins");
    }
}
