//! Progress of long operations (indexing, embedding), reported to whatever the front end shows.
//! The library only counts; drawing a bar is the front end's job.

/// Receives the progress of one long operation. Called from several threads.
pub trait Progress: Sync {
    /// The operation has `len` steps in all.
    fn set_length(&self, len: u64);
    /// `n` more steps are done.
    fn inc(&self, n: u64);
    /// The operation is over (whether or not every step was counted).
    fn finish(&self);
}

/// Progress that nobody watches.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn set_length(&self, _len: u64) {}
    fn inc(&self, _n: u64) {}
    fn finish(&self) {}
}
