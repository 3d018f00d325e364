//! The open layers `mem ui`'s requests share, as a pool: each request takes a `Layers` of its
//! own and gives it back when it is done, so a slow page (an overview at 100,000 memories)
//! never makes another wait behind it. The first is opened at start; more are opened as
//! requests overlap, up to [`MAX_OPEN`]; past that a request waits for one to come back. Each
//! refreshes from the files when a page reads it, so a change made through one is seen by the
//! others.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use mem::engine::Layers;

/// The most `Layers` open at once: as many pages served at the same time.
pub(super) const MAX_OPEN: usize = 4;

/// How another `Layers` over the same roots is opened.
type Open = Box<dyn Fn() -> anyhow::Result<Layers> + Send + Sync>;

/// The pool.
pub(super) struct Pool {
    state: Mutex<State>,
    back: Condvar,
    open: Open,
}

/// The idle `Layers`, and how many exist.
struct State {
    idle: Vec<Layers>,
    made: usize,
}

impl Pool {
    /// A pool holding `first`, which opens more with `open`.
    pub(super) fn new(first: Layers, open: Open) -> Pool {
        Pool { state: Mutex::new(State { idle: vec![first], made: 1 }), back: Condvar::new(), open }
    }

    /// The pool's state (a panic in an earlier request does not lock the page out).
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A `Layers` for one request: an idle one, else a new one while fewer than [`MAX_OPEN`]
    /// exist (one that cannot be opened is waited for instead), else the next given back.
    pub(super) fn take(&self) -> Lease<'_> {
        let mut state = self.state();
        loop {
            if let Some(layers) = state.idle.pop() {
                return Lease { layers: Some(layers), pool: self };
            }
            if state.made < MAX_OPEN {
                state.made += 1;
                drop(state);
                match (self.open)() {
                    Ok(layers) => return Lease { layers: Some(layers), pool: self },
                    Err(e) => {
                        eprintln!(
                            "mem: warning: cannot open the memory roots again ({e:#}); waiting"
                        );
                        state = self.state();
                        state.made -= 1;
                    }
                }
            }
            state = self.back.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// One request's `Layers`, given back to the pool when dropped.
pub(super) struct Lease<'a> {
    layers: Option<Layers>,
    pool: &'a Pool,
}

impl std::ops::Deref for Lease<'_> {
    type Target = Layers;

    fn deref(&self) -> &Layers {
        self.layers.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for Lease<'_> {
    fn deref_mut(&mut self) -> &mut Layers {
        self.layers.as_mut().expect("held until dropped")
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(layers) = self.layers.take() {
            self.pool.state().idle.push(layers);
            self.pool.back.notify_one();
        }
    }
}
