//! A model loading on a thread of its own, so that a process that will embed soon (a prompt
//! hook, a hybrid recall) loads it while it reads and refreshes the index.

use std::thread::JoinHandle;

use super::{EmbedError, Embedder, ModelSource};

/// The model `source` being loaded on another thread; dropped unused, it is waited for, so that
/// no loading thread outlives its owner or runs while the process exits.
pub struct Loading {
    source: ModelSource,
    thread: Option<JoinHandle<Result<Embedder, EmbedError>>>,
}

impl std::fmt::Debug for Loading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loading").field("source", &self.source).finish()
    }
}

impl Loading {
    /// Starts loading `source` ([`Embedder::load`]); `None` when no thread can be started (the
    /// model is then loaded when first used).
    pub fn start(source: ModelSource) -> Option<Loading> {
        let loaded = source.clone();
        let thread = std::thread::Builder::new()
            .name("mem-model".into())
            .spawn(move || Embedder::load(&loaded))
            .ok()?;
        Some(Loading { source, thread: Some(thread) })
    }

    /// The model being loaded.
    pub fn source(&self) -> &ModelSource {
        &self.source
    }

    /// The loaded model, or why it could not be loaded.
    pub fn wait(mut self) -> Result<Embedder, EmbedError> {
        let thread = self.thread.take().expect("waited for once");
        thread.join().unwrap_or_else(|panic| {
            Err(EmbedError::Unusable(crate::error::panic_message(&*panic, "the model panicked")))
        })
    }
}

impl Drop for Loading {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
