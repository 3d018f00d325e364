//! The engine: one memory root, its settings and its index, behind the operations every front
//! end (the command line, the MCP server, the served hooks, the page) calls. It never prints
//! and never reads the clock: `now` is an argument.

use std::path::Path;

use jiff::Timestamp;

use crate::embed::ModelOverrides;
use crate::index::RefreshReport;
use crate::{Error, Result};

mod admit;
mod capture;
mod cites;
mod context;
mod edit;
mod facts;
mod files;
mod foreign;
mod fresh;
mod health;
mod held;
mod layers;
mod model;
mod native;
mod recall;
mod reflect;
mod resolve;
mod secrets;
mod semantic;
mod sessions;
mod sync;
mod watch;

pub use self::admit::{Added, Admission, OnSimilar, Remembered, Similar};
pub use self::cites::Code;
pub use self::cites::{Verified, states_how_things_are};
pub use self::context::{ContextOptions, SessionContext};
pub use self::edit::{Archived, Forgotten};
pub use self::files::Files;
pub use self::foreign::{Foreign, foreign_block};
pub use self::health::{CodeCheck, Health, InterruptedMove, Stats, UsageCheck};
pub use self::layers::{LayeredRecall, Layers, merge};
pub use self::model::Model;
pub use self::native::{
    Adopted, NATIVE_DIR, index_native, native_file, native_folder, native_type,
};
pub use self::recall::{DEFAULT_MIN_STRENGTH, Recall, RecallOptions};
pub use self::reflect::{
    Proposal, REFLECTIONS_DIR, ReflectOptions, ReflectReport, SUMMARY_PROMPT, SourceRef, Summarize,
    Written,
};
pub use self::resolve::Resolved;
pub use self::secrets::SecretFile;
pub use self::semantic::{ModelStatus, VectorReport, Vectors};
pub use self::sessions::Sessions;
pub use self::sync::{SyncReport, Usage};

/// An open memory root: its parts, each owning what it holds, and the operations that need
/// several of them. A part's own operations are called on it (`engine.files.get(id)`,
/// `engine.code.verify(&engine.files)`); those that take another part say so.
pub struct Engine {
    /// The root's memory files, settings and index.
    pub files: Files,
    /// This machine's usage log and the root's usage files.
    pub usage: Usage,
    /// The session log.
    pub sessions: Sessions,
    /// The embedding model and the memories' vectors.
    pub vectors: Vectors,
    /// Whether the memories are checked against the repository's code.
    pub code: Code,
}

impl Engine {
    /// Opens the memory root `root` (which must exist), creating `.mem/` if needed, with the
    /// model its `mem.toml` names.
    pub fn open(root: &Path) -> Result<Engine> {
        Engine::open_with(root, &ModelOverrides::default())
    }

    /// Opens the memory root `root` like [`Engine::open`], with the front end's overrides of
    /// the model folder and the ONNX Runtime library.
    pub fn open_with(root: &Path, overrides: &ModelOverrides) -> Result<Engine> {
        let files = Files::open(root)?;
        let busy = std::time::Duration::from_millis(files.config.usage.busy_timeout_ms);
        Ok(Engine {
            usage: Usage::new(&files.state_dir, busy),
            sessions: Sessions::new(&files.state_dir, busy),
            vectors: Vectors::new(Model::configured(overrides)),
            code: Code::new(),
            files,
        })
    }

    /// Brings the index up to date with the files (see [`MemoryIndex::refresh`]), holding the
    /// root's lock so that concurrent processes take turns, and the last-use map with the
    /// usage files.
    pub fn refresh(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        self.files.refresh(&mut self.usage, now, progress)
    }

    /// Throws the index away and builds it again from the files.
    pub fn rebuild(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        self.files.rebuild(&mut self.usage, now, progress)
    }

    /// Brings the index up to date for a recall (see [`Files::refresh_for_recall`]).
    pub fn refresh_for_recall(
        &mut self,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        self.files.refresh_for_recall(&mut self.usage, now, progress)
    }

    /// Refreshes the index, then ranks the memories matching `query`. A corrupt index is
    /// rebuilt once (with a notice in the report) before giving up. In vector or hybrid mode
    /// the vectors are brought up to date first (at most `[embed] recall_embed_limit`
    /// memories are embedded here); when the model cannot be used, hybrid recall falls back to
    /// BM25 with a warning in the report, and vector recall fails. The files of the memories
    /// returned are stat'ed, and when one changed since it was indexed it is read again and
    /// the recall runs again.
    pub fn recall(
        &mut self,
        query: &str,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Recall> {
        self.recall_question(&crate::question::Question::new(query, now), options, now, progress)
    }

    /// [`Engine::recall`] of a question already analysed (built at the same `now`), as
    /// [`Layers`] asks each of its engines.
    pub(crate) fn recall_question(
        &mut self,
        question: &crate::question::Question,
        options: &RecallOptions,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<Recall> {
        let mut recalling = recall::Recalling {
            files: &mut self.files,
            usage: &mut self.usage,
            vectors: &mut self.vectors,
            code: &self.code,
        };
        recalling.question(question, options, now, progress)
    }

    /// Appends a `retrieved` event per hit to the usage log (see
    /// [`recall::record_retrievals`]).
    pub(crate) fn record_retrievals(
        &mut self,
        query: &str,
        hits: &[crate::index::Hit],
        now: Timestamp,
    ) -> Option<String> {
        recall::record_retrievals(&mut self.usage, query, hits, now)
    }

    /// Remembers a new text the way every front end does (see [`admit::remember`]): an exact
    /// duplicate is counted as used, a near-duplicate is handled as `on_similar` says, a new
    /// file is indexed at once. Call [`Engine::refresh`] first.
    pub fn remember(
        &mut self,
        new: crate::format::NewMemory,
        on_similar: OnSimilar,
        now: Timestamp,
    ) -> Result<Remembered> {
        admit::remember(&mut self.files, &mut self.usage, &mut self.vectors, new, on_similar, now)
    }

    /// Records that the memories `ids` helped, and syncs them (see [`Usage::used`]).
    pub fn used(
        &mut self,
        ids: &[String],
        now: Timestamp,
        sync: bool,
    ) -> Result<(Vec<String>, SyncReport)> {
        self.usage.used(&mut self.files, ids, now, sync)
    }

    /// Writes the usage log's new events to this machine's usage file (see [`Usage::sync`]).
    pub fn sync(&mut self, now: Timestamp) -> Result<SyncReport> {
        self.usage.sync(&mut self.files, now)
    }

    /// Captures a session from a hook payload: reads its transcript, writes or updates
    /// `sessions/session-<session_id>.md`, takes the facts the user stated, imports the events
    /// into the session log, and appends the outcome to `.mem/capture.log`. A payload that
    /// names no transcript is looked up by session id in the agents' folders (`homes`).
    pub fn capture(
        &mut self,
        payload: &[u8],
        homes: &crate::agent::Homes,
        now: Timestamp,
    ) -> Result<crate::capture::Captured> {
        let mut capturing = capture::Capturing {
            files: &mut self.files,
            usage: &mut self.usage,
            sessions: &mut self.sessions,
            vectors: &mut self.vectors,
        };
        capturing.capture(payload, homes, now)
    }

    /// Checks the root without changing it: index against files (by content), parse errors,
    /// the usage and session logs, the capture log of the last 24 hours, the model, the code
    /// checks, and, given a folder of agent transcripts, which main sessions of this project
    /// were never captured. Call it on an engine that has not refreshed, or there is nothing
    /// left to find.
    pub fn health(
        &mut self,
        now: Timestamp,
        transcripts: Option<&crate::health::Sources>,
    ) -> Result<Health> {
        let Engine { files, usage, sessions, vectors, code } = self;
        health::check(files, usage, sessions, vectors, code, now, transcripts)
    }

    /// The memories `mem prune` would archive, safest first, each with its reasons and title.
    pub fn prune_candidates(
        &mut self,
        rules: &crate::config::PruneConfig,
        now: Timestamp,
    ) -> Result<Vec<crate::prune::Candidate>> {
        edit::prune_candidates(&self.files, &mut self.usage, &self.code, rules, now)
    }

    /// [`Engine::prune_candidates`] without their titles (see
    /// [`edit::prune_candidates_untitled`]); [`Files::add_titles`] adds those shown.
    pub fn prune_candidates_untitled(
        &mut self,
        rules: &crate::config::PruneConfig,
        now: Timestamp,
    ) -> Result<Vec<crate::prune::Candidate>> {
        edit::prune_candidates_untitled(&self.files, &mut self.usage, &self.code, rules, now)
    }

    /// What `mem reflect` would write: observations that join an existing reflection (which
    /// is then updated), and new clusters of at least `min_cluster` (each a new reflection).
    pub fn reflect_plan(&self, options: &ReflectOptions, now: Timestamp) -> Result<Vec<Proposal>> {
        reflect::plan(&self.files, self.vectors.loaded_vectors(), options, now)
    }

    /// Writes the proposals: new reflections under `reflections/`, updated ones in place, and
    /// `consolidated_into` on their new sources. With a summariser, its output is the body; a
    /// cluster whose summariser fails is skipped and reported, the others go on.
    pub fn reflect(
        &mut self,
        proposals: &[Proposal],
        summarizer: Option<&dyn Summarize>,
        now: Timestamp,
    ) -> Result<ReflectReport> {
        reflect::write(&mut self.files, proposals, summarizer, now)
    }

    /// Records that the memory `id` was checked and found right (see [`Usage::confirm`]).
    pub fn confirm(&mut self, id: &str, now: Timestamp) -> Result<()> {
        self.usage.confirm(&mut self.files, id, now)
    }
}

fn parse_error(path: &str) -> impl Fn(crate::format::FormatError) -> Error + '_ {
    move |source| Error::Parse { path: path.into(), source }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{MemoryType, NewMemory};

    fn now() -> Timestamp {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    fn note(text: &str) -> NewMemory {
        NewMemory {
            text: text.into(),
            kind: MemoryType::Semantic,
            importance: 5,
            tags: vec![],
            title: None,
            source: None,
        }
    }

    #[test]
    fn an_open_engine_sees_another_process_rebuild() {
        let dir = tempfile::tempdir().unwrap();
        let hidden = crate::progress::Silent;
        let mut first = Engine::open(dir.path()).unwrap();
        first.files.add(note("alpha"), now()).unwrap();
        assert_eq!(first.refresh(now(), &hidden).unwrap().added, 1);

        let mut second = Engine::open(dir.path()).unwrap();
        second.rebuild(now(), &hidden).unwrap();
        second.files.add(note("beta"), now()).unwrap();
        second.refresh(now(), &hidden).unwrap();

        // The rebuilt index restarts its generations; the first engine must still reload.
        let report = first.refresh(now(), &hidden).unwrap();
        assert_eq!(report.added, 0, "the other process already indexed beta");
        assert_eq!(first.files.list(&[], &[]).unwrap().len(), 2);
    }

    #[test]
    fn recall_says_what_it_did() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(crate::config::CONFIG_FILE),
            "[query]\nsynonyms = [[\"zork\", \"grue\"]]\n",
        )
        .unwrap();
        let mut engine = Engine::open(dir.path()).unwrap();
        engine.files.add(note("the grue waits on port 5432"), now()).unwrap();
        engine.files.add(note("lunch was pasta"), now()).unwrap();
        let options = RecallOptions { limit: 5, ..Default::default() };
        let recall = engine.recall("zork port", &options, now(), &crate::progress::Silent).unwrap();
        assert_eq!(recall.hits.len(), 1);
        assert_eq!(recall.mode, crate::config::RecallMode::Bm25);
        assert_eq!(recall.fallback, None);
        assert_eq!(recall.expansions, ["grue"]);
        // One memory matches: its keyword relevance (BM25 × the coverage factor) is the best.
        let hit = &recall.hits[0];
        let best = crate::score::keyword(
            hit.bm25,
            hit.components.coverage,
            &engine.files.config().ranking,
        );
        assert_eq!(recall.relevance, Some(crate::score::Relevance::Bm25 { best }));
        let explained = recall.explain(engine.files.config());
        assert!(
            explained
                .contains(&format!("relevance = bm25 × (1 − 0.5 + 0.5 × coverage) / {best:.3}")),
            "{explained}"
        );
        assert!(explained.contains("synonyms searched at weight 0.3: grue"), "{explained}");

        let none = engine.recall("zebra", &options, now(), &crate::progress::Silent).unwrap();
        assert!(none.hits.is_empty() && none.relevance.is_none());
        assert_eq!(none.explain(engine.files.config()), "");
    }
}
