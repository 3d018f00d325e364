//! Memory roots searched as one: the project's, the user's (what spans projects:
//! preferences, cross-project procedures) and the agents' own memories, read only (the native
//! layers, `engine/native.rs`). Each root keeps its own index and usage log; a recall searches
//! them all and merges the hits, project first on ties, every hit labelled with its layer; a
//! native memory adopted into mem (same id) or whose text a memory of mem holds is left out.

use std::path::Path;

use jiff::Timestamp;

use super::{Engine, Recall, RecallOptions};
use crate::Result;
use crate::agent::Agent;
use crate::index::{Hit, RefreshReport};
use crate::question::Question;
use crate::store::Layer;

/// The project's engine and, when one is configured, the user's.
pub struct Layers {
    project: Engine,
    user: Option<Engine>,
    /// The agents' own memories, read only, each as the root mem indexed them into.
    natives: Vec<(Agent, Engine)>,
    /// Why the configured user layer is not searched, when it could not be opened.
    user_problem: Option<String>,
}

/// A recall over both layers: the merged hits in `recall`, with the project's report, mode
/// and relevance measure, and the user layer's own report.
#[derive(Debug)]
pub struct LayeredRecall {
    /// The merged recall (its report is the project layer's).
    pub recall: Recall,
    /// What the user layer's refresh found, when there is a user layer.
    pub user_report: Option<RefreshReport>,
}

impl Layers {
    /// The project's root, and the user's when given (a user root that is the project's root
    /// is not searched twice: give `None`).
    pub fn new(project: Engine, user: Option<Engine>) -> Layers {
        Layers { project, user, natives: Vec::new(), user_problem: None }
    }

    /// Records why the user layer named in the user configuration is not searched (it could
    /// not be opened): the project is served alone, and a request for the user layer gets
    /// this reason.
    pub fn without_user(mut self, problem: String) -> Layers {
        self.user = None;
        self.user_problem = Some(problem);
        self
    }

    /// These layers with the agents' own memories joined, read only (see
    /// [`super::native::index_native`]).
    pub fn with_natives(mut self, natives: Vec<(Agent, Engine)>) -> Layers {
        self.natives = natives;
        self
    }

    /// Takes the native layers out (to join them again, or to answer without one of them).
    pub fn take_natives(&mut self) -> Vec<(Agent, Engine)> {
        std::mem::take(&mut self.natives)
    }

    /// Puts `natives` in as the native layers, in the order of [`Agent::ALL`].
    pub fn set_natives(&mut self, mut natives: Vec<(Agent, Engine)>) {
        natives.sort_by_key(|(agent, _)| Agent::ALL.iter().position(|a| a == agent));
        self.natives = natives;
    }

    /// The ids of the memories `agent` keeps itself (its native layer; none without one): mem's
    /// copy of one (adopted, same id) need not go to that agent.
    pub fn native_ids(&self, agent: Agent) -> Vec<String> {
        let Some((_, engine)) = self.natives.iter().find(|(a, _)| *a == agent) else {
            return Vec::new();
        };
        engine
            .files
            .list(&[], &[])
            .map(|records| records.into_iter().map(|r| r.id).collect())
            .unwrap_or_default()
    }

    /// Leaves out the native layer of `agent` (its memories are already in its context).
    pub fn without_native(&mut self, agent: Agent) {
        self.natives.retain(|(a, _)| *a != agent);
    }

    /// The native layers joined, in the order of [`Agent::ALL`].
    pub fn natives(&self) -> impl Iterator<Item = Layer> + '_ {
        self.natives.iter().map(|(a, _)| Layer::Native(*a))
    }

    /// Why the configured user layer is not searched, if it is not.
    pub fn user_problem(&self) -> Option<&str> {
        self.user_problem.as_deref()
    }

    /// A root that is no longer a folder (moved or deleted since it was opened), if any: a
    /// long-lived process must not write to its old path.
    pub fn missing_root(&self) -> Option<&Path> {
        std::iter::once(&self.project)
            .chain(&self.user)
            .map(|e| e.files.root())
            .find(|root| !root.is_dir())
    }

    /// Whether a user layer is searched beside the project.
    pub fn layered(&self) -> bool {
        self.user.is_some()
    }

    /// The engine of `layer`, if there is one.
    pub fn engine(&mut self, layer: Layer) -> Option<&mut Engine> {
        match layer {
            Layer::Project => Some(&mut self.project),
            Layer::User => self.user.as_mut(),
            Layer::Native(agent) => {
                self.natives.iter_mut().find(|(a, _)| *a == agent).map(|(_, e)| e)
            }
        }
    }

    /// The project's engine.
    pub fn project(&mut self) -> &mut Engine {
        &mut self.project
    }

    /// The layer holding memory `id`: the project's when both do.
    pub fn locate(&mut self, id: &str) -> Option<Layer> {
        if self.project.files.get(id).is_ok() {
            return Some(Layer::Project);
        }
        if let Some(user) = self.user.as_mut()
            && user.files.get(id).is_ok()
        {
            return Some(Layer::User);
        }
        let (agent, _) = self.natives.iter_mut().find(|(_, e)| e.files.get(id).is_ok())?;
        Some(Layer::Native(*agent))
    }

    /// Whether the native memory `id` was adopted: a layer of mem's holds that id.
    pub fn is_adopted(&self, id: &str) -> bool {
        self.project.files.get(id).is_ok()
            || self.user.as_ref().is_some_and(|u| u.files.get(id).is_ok())
    }

    /// Starts watching both roots (see [`Files::watch`](super::Files::watch)); the layers that cannot be
    /// watched, with the reason.
    pub fn watch(&mut self) -> Vec<(Layer, String)> {
        let mut refused = Vec::new();
        if let Err(reason) = self.project.files.watch() {
            refused.push((Layer::Project, reason));
        }
        if let Some(user) = &mut self.user
            && let Err(reason) = user.files.watch()
        {
            refused.push((Layer::User, reason));
        }
        refused
    }

    /// Brings both indexes up to date as a recall does (see [`Engine::refresh_for_recall`]);
    /// the reports, project first.
    pub fn refresh_for_recall(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Vec<(Layer, RefreshReport)>> {
        self.each(|engine| engine.refresh_for_recall(now, progress))
    }

    /// Brings both indexes up to date; the reports, project first.
    pub fn refresh(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Vec<(Layer, RefreshReport)>> {
        self.each(|engine| engine.refresh(now, progress))
    }

    /// `f` run on the project's engine, then the user's; its reports, by layer.
    fn each(
        &mut self,
        mut f: impl FnMut(&mut Engine) -> Result<RefreshReport>,
    ) -> Result<Vec<(Layer, RefreshReport)>> {
        let mut reports = vec![(Layer::Project, f(&mut self.project)?)];
        if let Some(user) = &mut self.user {
            reports.push((Layer::User, f(user)?));
        }
        for (agent, engine) in &mut self.natives {
            reports.push((Layer::Native(*agent), f(engine)?));
        }
        Ok(reports)
    }

    /// Recalls from every layer and merges the hits (see [`merge`]); each layer records the
    /// retrievals of its hits that made the merged list, when `options.record` says so.
    pub fn recall(
        &mut self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<LayeredRecall> {
        self.recall_in(query, options, None, now, progress)
    }

    /// [`Layers::recall`] from `only` that layer when given (an error for a layer not
    /// searched here).
    pub fn recall_in(
        &mut self,
        query: &str,
        options: &RecallOptions,
        only: Option<Layer>,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<LayeredRecall> {
        if let Some(layer) = only.filter(|l| *l != Layer::Project) {
            let Some(engine) = self.engine(layer) else {
                return Err(crate::Error::InvalidMemory(format!(
                    "the {} layer is not searched here (no such layer for this root, or it \
                     is turned off)",
                    layer.as_str()
                )));
            };
            let mut recall = engine.recall(query, options, now, progress)?;
            // An agent's memory adopted into mem is mem's now: recalled from mem's layer.
            if let Layer::Native(_) = layer {
                recall.hits.retain(|hit| !self.is_adopted(&hit.record.id));
            }
            for hit in &mut recall.hits {
                hit.layer = Some(layer);
            }
            return Ok(LayeredRecall { recall, user_report: None });
        }
        if only.is_none() && self.user.is_none() && self.natives.is_empty() {
            let recall = self.project.recall(query, options, now, progress)?;
            return Ok(LayeredRecall { recall, user_report: None });
        }
        let quiet = RecallOptions { record: false, ..options.clone() };
        // One analysis of the question for every layer.
        let question = Question::new(query, now);
        let mut recall = self.project.recall_question(&question, &quiet, now, progress)?;
        if only == Some(Layer::Project) {
            for hit in &mut recall.hits {
                hit.layer = Some(Layer::Project);
            }
            if options.record {
                let hits = recall.hits.clone();
                recall.report.notices.extend(self.project.record_retrievals(query, &hits, now));
            }
            return Ok(LayeredRecall { recall, user_report: None });
        }
        let mut others = Vec::new();
        let mut user_report = None;
        let project = &mut self.project;
        let engines = self
            .user
            .iter_mut()
            .map(|e| (Layer::User, e))
            .chain(self.natives.iter_mut().map(|(a, e)| (Layer::Native(*a), e)));
        for (layer, engine) in engines {
            let lent = project.vectors.model().lend(engine.vectors.model());
            let theirs = engine.recall_question(&question, &quiet, now, progress);
            if lent {
                engine.vectors.model().lend(project.vectors.model());
            }
            let theirs = theirs?;
            if recall.relevance.is_none() {
                recall.relevance = theirs.relevance;
            }
            if layer == Layer::User {
                user_report = Some(theirs.report);
            } else {
                recall.report.notices.extend(theirs.report.notices);
                recall.report.bad.extend(theirs.report.bad);
            }
            others.push((layer, theirs.hits));
        }
        // A native memory adopted into mem keeps its id (mem's copy is the one recalled), and
        // one whose words a memory of mem found holds is that memory's fact: sent once.
        let body =
            |engine: &Engine, id: &str| engine.files.get(id).ok().map(|(_, m)| fact(m.body()));
        let this = &*self;
        let mut ours: Vec<String> =
            recall.hits.iter().filter_map(|h| body(&this.project, &h.record.id)).collect();
        if let (Some(user), Some((_, hits))) = (&this.user, others.first()) {
            ours.extend(hits.iter().filter_map(|h| body(user, &h.record.id)));
        }
        for ((layer, hits), native) in
            others.iter_mut().filter(|(l, _)| *l != Layer::User).zip(&this.natives)
        {
            debug_assert_eq!(*layer, Layer::Native(native.0));
            hits.retain(|h| {
                let id = &h.record.id;
                let theirs = body(&native.1, id).unwrap_or_default();
                let held = !theirs.is_empty() && ours.iter().any(|o| same_fact(o, &theirs));
                !this.is_adopted(id) && !held
            });
        }
        recall.hits = merge(std::mem::take(&mut recall.hits), others, options.limit);
        if options.record {
            let of = |layer| -> Vec<Hit> {
                recall.hits.iter().filter(|h| h.layer == Some(layer)).cloned().collect()
            };
            let mine = of(Layer::Project);
            recall.report.notices.extend(self.project.record_retrievals(query, &mine, now));
            let mut notices = Vec::new();
            if let Some(user) = &mut self.user {
                notices.extend(user.record_retrievals(query, &of(Layer::User), now));
            }
            for (agent, engine) in &mut self.natives {
                let theirs = of(Layer::Native(*agent));
                recall.report.notices.extend(engine.record_retrievals(query, &theirs, now));
            }
            if let Some(report) = &mut user_report {
                report.notices.extend(notices);
            }
        }
        Ok(LayeredRecall { recall, user_report })
    }
}

/// The hits of every layer as one ranking, at most `limit`. Each root divides relevance by
/// its own best match, so a root whose best match is weak would still have a hit of relevance
/// 1; scores are therefore put on one scale by the best match's strength (an absolute
/// measure: coverage of the query, or cosine): each layer's scores are multiplied by its best
/// strength over the best of all. Project hits come first on equal scores, then the user's;
/// a memory id found in two layers is the first's.
pub fn merge(project: Vec<Hit>, others: Vec<(Layer, Vec<Hit>)>, limit: usize) -> Vec<Hit> {
    let best = |hits: &[Hit]| hits.iter().map(|h| h.strength).fold(0.0f64, f64::max);
    let top = others.iter().map(|(_, h)| best(h)).fold(best(&project), f64::max);
    let scale = |b: f64| if top > 0.0 { b / top } else { 1.0 };
    let mut merged: Vec<Hit> = Vec::with_capacity(project.len());
    let layers = std::iter::once((Layer::Project, project)).chain(others);
    for (layer, hits) in layers {
        let factor = scale(best(&hits));
        for mut hit in hits {
            if merged.iter().any(|h| h.record.id == hit.record.id) {
                continue;
            }
            hit.layer = Some(layer);
            hit.layer_scale = Some(factor);
            hit.score *= factor;
            merged.push(hit);
        }
    }
    // Stable: on equal scores the project's hits, listed first, stay first.
    merged.sort_by(|a, b| b.score.total_cmp(&a.score));
    merged.truncate(limit);
    for (i, hit) in merged.iter_mut().enumerate() {
        hit.rank = i + 1;
    }
    merged
}

/// Whether two facts (as [`fact`] gives them) are one: one holds the other, and the shorter is
/// at least half the longer (a short memory that a word of a long one matches is another).
fn same_fact(a: &str, b: &str) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    !short.is_empty() && long.contains(short) && short.len() * 2 >= long.len()
}

/// The fact a memory's body states, as [`words`]: its first paragraph that is not a heading.
fn fact(body: &str) -> String {
    let lines = body.lines().skip_while(|l| l.trim().is_empty() || l.starts_with('#'));
    let paragraph: Vec<&str> = lines.take_while(|l| !l.trim().is_empty()).collect();
    words(&paragraph.join(" "))
}

/// The words of a text in lower case, one space between them (case, spacing and punctuation
/// aside), for telling one fact written twice.
fn words(text: &str) -> String {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::{fact, same_fact};

    #[test]
    fn one_fact_told_apart_from_another_that_shares_a_word() {
        let native =
            fact("# Deploy window\n\nDeploy only Tuesday to Thursday.\n\n**Why:** the rota.\n");
        assert_eq!(native, "deploy only tuesday to thursday");
        assert!(same_fact(&fact("Deploy only Tuesday to Thursday."), &native));
        assert!(!same_fact(&fact("Deploy"), &native));
        assert!(!same_fact(&fact("We use pnpm"), &native));
    }
}
