//! Two memory roots searched as one: the project's and the user's (what spans projects:
//! preferences, cross-project procedures). Each root keeps its own index and usage log; a
//! recall searches both and merges the hits, project first on ties, every hit labelled with
//! its layer.

use std::path::Path;

use jiff::Timestamp;

use super::{Engine, Recall, RecallOptions};
use crate::Result;
use crate::index::{Hit, RefreshReport};
use crate::question::Question;
use crate::store::Layer;

/// The project's engine and, when one is configured, the user's.
pub struct Layers {
    project: Engine,
    user: Option<Engine>,
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
        Layers { project, user, user_problem: None }
    }

    /// Records why the user layer named in the user configuration is not searched (it could
    /// not be opened): the project is served alone, and a request for the user layer gets
    /// this reason.
    pub fn without_user(mut self, problem: String) -> Layers {
        self.user = None;
        self.user_problem = Some(problem);
        self
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
            .map(|e| e.root())
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
        }
    }

    /// The project's engine.
    pub fn project(&mut self) -> &mut Engine {
        &mut self.project
    }

    /// The layer holding memory `id`: the project's when both do.
    pub fn locate(&mut self, id: &str) -> Option<Layer> {
        if self.project.get(id).is_ok() {
            return Some(Layer::Project);
        }
        let user = self.user.as_mut()?;
        user.get(id).is_ok().then_some(Layer::User)
    }

    /// Starts watching both roots (see [`Engine::watch`]); the layers that cannot be
    /// watched, with the reason.
    pub fn watch(&mut self) -> Vec<(Layer, String)> {
        let mut refused = Vec::new();
        if let Err(reason) = self.project.watch() {
            refused.push((Layer::Project, reason));
        }
        if let Some(user) = &mut self.user
            && let Err(reason) = user.watch()
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
        Ok(reports)
    }

    /// Recalls from both layers and merges the hits (see [`merge`]); each layer records the
    /// retrievals of its hits that made the merged list, when `options.record` says so.
    pub fn recall(
        &mut self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<LayeredRecall> {
        let Some(user) = &mut self.user else {
            let recall = self.project.recall(query, options, now, progress)?;
            return Ok(LayeredRecall { recall, user_report: None });
        };
        let quiet = RecallOptions { record: false, ..options.clone() };
        // One analysis of the question for both layers.
        let question = Question::new(query, now);
        let mut recall = self.project.recall_question(&question, &quiet, now, progress)?;
        let lent = self.project.lend_model(user);
        let theirs = user.recall_question(&question, &quiet, now, progress);
        if lent {
            user.lend_model(&mut self.project);
        }
        let theirs = theirs?;
        recall.hits = merge(std::mem::take(&mut recall.hits), theirs.hits, options.limit);
        if recall.relevance.is_none() {
            recall.relevance = theirs.relevance;
        }
        let mut user_report = theirs.report;
        if options.record {
            let of = |layer| -> Vec<Hit> {
                recall.hits.iter().filter(|h| h.layer == Some(layer)).cloned().collect()
            };
            let (mine, theirs) = (of(Layer::Project), of(Layer::User));
            recall.report.notices.extend(self.project.record_retrievals(query, &mine, now));
            user_report.notices.extend(user.record_retrievals(query, &theirs, now));
        }
        Ok(LayeredRecall { recall, user_report: Some(user_report) })
    }
}

/// The hits of both layers as one ranking, at most `limit`. Each root divides relevance by
/// its own best match, so a root whose best match is weak would still have a hit of relevance
/// 1; scores are therefore put on one scale by the best match's strength (an absolute
/// measure: coverage of the query, or cosine): each layer's scores are multiplied by its best
/// strength over the best of both. Project hits come first on equal scores, and a memory id
/// found in both layers is the project's.
pub fn merge(project: Vec<Hit>, user: Vec<Hit>, limit: usize) -> Vec<Hit> {
    let best = |hits: &[Hit]| hits.iter().map(|h| h.strength).fold(0.0f64, f64::max);
    let (best_project, best_user) = (best(&project), best(&user));
    let top = best_project.max(best_user);
    let scale = |b: f64| if top > 0.0 { b / top } else { 1.0 };
    let (scale_project, scale_user) = (scale(best_project), scale(best_user));
    let mut merged: Vec<Hit> = Vec::with_capacity(project.len() + user.len());
    for mut hit in project {
        hit.layer = Some(Layer::Project);
        hit.score *= scale_project;
        merged.push(hit);
    }
    for mut hit in user {
        if merged.iter().any(|h| h.record.id == hit.record.id) {
            continue;
        }
        hit.layer = Some(Layer::User);
        hit.score *= scale_user;
        merged.push(hit);
    }
    // Stable: on equal scores the project's hits, listed first, stay first.
    merged.sort_by(|a, b| b.score.total_cmp(&a.score));
    merged.truncate(limit);
    for (i, hit) in merged.iter_mut().enumerate() {
        hit.rank = i + 1;
    }
    merged
}
