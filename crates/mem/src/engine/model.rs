//! The embedding model of an engine: configured by the front end, loaded on first use (or on
//! a thread of its own, while the index is read) and kept, so that a long-running process such
//! as the MCP server loads it once; released with its engine, or left to the process's exit
//! when the front end said the process ends soon.

use crate::embed::{EmbedError, Embedder, Loading, ModelOverrides, ModelSource};
use crate::{Error, Result};

/// An engine's embedding model and where it stands.
pub struct Model {
    source: Option<ModelSource>,
    slot: Slot,
    /// Left to the process's exit instead of freed when dropped ([`ModelOverrides::leave_at_exit`]).
    leave_at_exit: bool,
}

enum Slot {
    Unloaded,
    /// Being loaded on a thread of its own ([`Model::start_loading`]).
    Loading(Loading),
    Ready(Box<Embedder>),
    Failed(String),
}

impl Model {
    /// The model `overrides` name (not loaded yet).
    pub(super) fn configured(overrides: &ModelOverrides) -> Model {
        Model {
            source: ModelSource::configured(overrides),
            slot: Slot::Unloaded,
            leave_at_exit: overrides.leave_at_exit,
        }
    }

    /// The configured model, if any.
    pub fn source(&self) -> Option<&ModelSource> {
        self.source.as_ref()
    }

    /// The loaded model, loading it on first use. A model that failed to load is not tried
    /// again; the same error comes back.
    pub fn embedder(&mut self) -> Result<&mut Embedder> {
        let Some(source) = &self.source else {
            return Err(Error::NoModel);
        };
        self.slot = match std::mem::replace(&mut self.slot, Slot::Unloaded) {
            Slot::Unloaded => loaded(Embedder::load(source)),
            Slot::Loading(loading) => loaded(loading.wait()),
            done => done,
        };
        match &mut self.slot {
            Slot::Ready(embedder) => Ok(embedder),
            Slot::Failed(message) => Err(Error::Embed(EmbedError::Unusable(message.clone()))),
            Slot::Unloaded | Slot::Loading(_) => unreachable!("loaded above"),
        }
    }

    /// Why the configured model could not be used, once it was tried.
    pub fn warning(&self) -> Option<String> {
        match &self.slot {
            Slot::Failed(message) => Some(format!("embedding model: {message}")),
            _ => None,
        }
    }

    /// Whether it is neither loaded, nor loading, nor failed.
    pub(super) fn is_idle(&self) -> bool {
        matches!(self.slot, Slot::Unloaded)
    }

    /// Starts loading the configured model on a thread of its own, when it is idle;
    /// [`Model::embedder`] waits for it.
    pub(super) fn start_loading(&mut self) {
        if self.is_idle()
            && let Some(source) = self.source.clone()
            && let Some(loading) = Loading::start(source)
        {
            self.slot = Slot::Loading(loading);
        }
    }

    /// Takes `loading` as this model when it loads the configured one and none is loaded yet;
    /// otherwise it is waited for and dropped.
    pub(super) fn give(&mut self, loading: Loading) {
        if self.is_idle() && self.source.as_ref() == Some(loading.source()) {
            self.slot = Slot::Loading(loading);
        }
    }

    /// The embedding of `text`.
    pub(super) fn embed(&mut self, text: &str) -> Result<Vec<f32>> {
        embed_one(self.embedder()?, text)
    }

    /// Takes the model out (loading it first), so that it can run beside a refresh;
    /// [`Model::put`] gives it back.
    pub(super) fn take(&mut self) -> Result<Box<Embedder>> {
        self.embedder()?;
        match std::mem::replace(&mut self.slot, Slot::Unloaded) {
            Slot::Ready(embedder) => Ok(embedder),
            _ => unreachable!("embedder() succeeded"),
        }
    }

    /// Gives back the model [`Model::take`] took.
    pub(super) fn put(&mut self, embedder: Box<Embedder>) {
        self.slot = Slot::Ready(embedder);
    }

    /// Moves this loaded model into `to` when both are configured with the same model and `to`
    /// is idle: two roots searched together load it once. Whether it moved.
    pub(super) fn lend(&mut self, to: &mut Model) -> bool {
        if self.source != to.source || !to.is_idle() {
            return false;
        }
        match std::mem::replace(&mut self.slot, Slot::Unloaded) {
            loaded @ (Slot::Ready(_) | Slot::Loading(_)) => {
                to.slot = loaded;
                true
            }
            other => {
                self.slot = other;
                false
            }
        }
    }
}

impl Drop for Model {
    /// A process that ends soon leaves the model to its exit: ONNX Runtime's session and the
    /// tokenizer take milliseconds to free what the system reclaims at exit anyway.
    fn drop(&mut self) {
        if !self.leave_at_exit {
            return;
        }
        match std::mem::replace(&mut self.slot, Slot::Unloaded) {
            Slot::Ready(embedder) => std::mem::forget(embedder),
            Slot::Loading(loading) => {
                if let Ok(embedder) = loading.wait() {
                    std::mem::forget(embedder);
                }
            }
            Slot::Unloaded | Slot::Failed(_) => {}
        }
    }
}

/// The slot of a model that loaded, or failed to.
fn loaded<E: std::fmt::Display>(result: std::result::Result<Embedder, E>) -> Slot {
    match result {
        Ok(embedder) => Slot::Ready(Box::new(embedder)),
        Err(e) => Slot::Failed(e.to_string()),
    }
}

/// The embedding of one text.
pub(super) fn embed_one(embedder: &mut Embedder, text: &str) -> Result<Vec<f32>> {
    let mut vectors = embedder.embed(&[text], 1)?;
    Ok(vectors.pop().unwrap_or_default())
}
