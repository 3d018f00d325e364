//! `mem`: a local long-term memory engine for AI coding agents.
//!
//! Memories are Markdown files with YAML front-matter ([`format`]) in a folder, the memory
//! root ([`store`]). The [`index`] (tantivy BM25 with a code-aware tokenizer) is derived state
//! under `.mem/`, refreshed incrementally before each query. Recall ranks matches by
//! relevance × recency × importance ([`score`]). The [`Engine`] ties these together for the
//! front ends.
//!
//! ```
//! use mem::{Engine, NewMemory, MemoryType, RecallOptions};
//! # fn main() -> mem::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let now: jiff::Timestamp = "2026-11-30T10:00:00Z".parse().unwrap();
//! mem::store::init(dir.path())?;
//! let mut engine = Engine::open(dir.path())?;
//! engine.files.add(NewMemory {
//!     text: "We use pnpm, never npm".into(),
//!     kind: MemoryType::Semantic,
//!     importance: 8,
//!     tags: vec!["tooling".into()],
//!     title: None,
//!     source: None,
//! }, now)?;
//! let options = RecallOptions { limit: 20, ..Default::default() };
//! let hidden = mem::progress::Silent;
//! let recall = engine.recall("which package manager: pnpm or npm?", &options, now, &hidden)?;
//! assert_eq!(recall.hits[0].record.title, "We use pnpm, never npm");
//! # Ok(())
//! # }
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod capture;
pub mod checkpoint;
pub mod cites;
pub mod config;
pub mod dates;
pub mod decay;
pub mod embed;
pub mod engine;
pub mod error;
pub mod eval;
pub mod format;
pub mod git;
pub mod health;
pub mod index;
pub mod json;
pub mod merge;
pub mod open;
pub mod progress;
pub mod prune;
pub mod question;
pub mod remote;
pub mod rules;
pub mod score;
pub mod session;
pub mod similarity;
mod sqlite;
pub mod store;
pub mod tokenizer;
pub mod turns;
pub mod untrusted;
pub mod usage;

pub use config::Config;
pub use engine::{Added, Engine, Recall, RecallOptions, Stats, SyncReport};
pub use error::{Error, Result};
pub use format::{Memory, MemoryId, MemoryType, NewMemory};
pub use index::{Hit, Record, RefreshReport};
