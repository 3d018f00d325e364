//! `mem health` and `mem stats`: what the root's index, usage log, captures and model look like.

use std::collections::BTreeMap;
use std::path::PathBuf;

use jiff::Timestamp;
use serde::Serialize;

use super::{Code, Files, ModelStatus, Sessions, Usage, Vectors};
use crate::format::MemoryType;
use crate::health::{self, CaptureSummary, Coverage, IndexCheck};
use crate::index::RefreshReport;
use crate::store;
use crate::usage;
use crate::{Error, Result};

/// The usage log's condition.
#[derive(Clone, Debug, Default, Serialize)]
pub struct UsageCheck {
    /// Whether `.mem/usage.db` exists.
    pub present: bool,
    /// Events it holds.
    pub events: u64,
    /// What is wrong with it, if anything.
    pub error: Option<String>,
    /// Lines of the usage files (`usage/*.tsv`) that could not be read, each `path:line:
    /// reason`: skipped by every reader, and a failed check here.
    pub file_problems: Vec<String>,
    /// Usage files that are not read at all, each `path: reason` (not a regular file, a link
    /// out of `usage/`, too large): skipped by every reader, and a failed check here.
    pub skipped_files: Vec<String>,
}

/// The session log's condition.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SessionLogCheck {
    /// Whether `.mem/sessions.db` exists.
    pub present: bool,
    /// Its counts, when it could be read.
    pub counts: Option<crate::session::LogHealth>,
    /// What is wrong with it, if anything.
    pub error: Option<String>,
}

/// What `mem health` found.
#[derive(Clone, Debug, Serialize)]
pub struct Health {
    /// Set when opening found the index corrupt or outdated (it was rebuilt, empty).
    pub notice: Option<String>,
    /// Index against files.
    pub index: IndexCheck,
    /// The usage log.
    pub usage: UsageCheck,
    /// The session log.
    pub sessions: SessionLogCheck,
    /// Captures of the last 24 hours.
    pub capture: CaptureSummary,
    /// This project's sessions on disk against sessions captured, when a transcripts folder
    /// was given.
    pub coverage: Option<Coverage>,
    /// The embedding model and the vectors.
    pub embedding: ModelStatus,
    /// Temporary files left by interrupted writes (older than a minute), relative to the
    /// root; the next refresh removes them.
    pub leftovers: Vec<String>,
    /// Memories both in the root and in `archive/` (a prune or restore killed between its two
    /// steps); the next prune or restore of the memory finishes the move.
    pub interrupted_moves: Vec<InterruptedMove>,
    /// Memory files git left unmerged, relative to the root: a pull met a memory retired on
    /// one side (archived, removed) and edited on the other (a modify/delete conflict, which
    /// no merge driver sees). The edited file is read meanwhile, as a live memory.
    pub unmerged: Vec<String>,
    /// The memories checked against the project's code (`mem verify`), in a project root: a
    /// warning when some cite code that is gone or moved, never a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeCheck>,
    /// Memories that `mem capture` took from what the user stated in a session (`source:
    /// session/<id>`, no digest), as the index has them.
    pub stated_facts: usize,
    /// Memory files whose body holds secrets (written by hand, or before every write was
    /// redacted); `mem redact` replaces them.
    pub secrets: Vec<super::SecretFile>,
}

/// What `mem verify` would say, counted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CodeCheck {
    /// Memories that cite code of the repository.
    pub citing: usize,
    /// Those whose cited code is gone (some of it).
    pub gone: usize,
    /// Those whose cited code moved (and none is gone).
    pub moved: usize,
}

/// A memory both in the root and in `archive/`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct InterruptedMove {
    /// The memory's id.
    pub id: String,
    /// Its file in the root, relative to it.
    pub path: String,
    /// Its file in the archive, relative to the root.
    pub archived: String,
}

impl Health {
    /// Whether everything checked is sound.
    pub fn ok(&self) -> bool {
        self.notice.is_none()
            && self.index.ok()
            && self.usage.error.is_none()
            && self.usage.file_problems.is_empty()
            && self.usage.skipped_files.is_empty()
            && self.sessions.error.is_none()
            && self.capture.ok()
            && self.coverage.as_ref().is_none_or(|c| c.gaps.is_empty())
            && self.leftovers.is_empty()
            && self.interrupted_moves.is_empty()
            && self.unmerged.is_empty()
            && self.secrets.is_empty()
            && !matches!(self.embedding, ModelStatus::Broken { .. })
    }
}

/// Counts for `mem stats`.
#[derive(Clone, Debug, Serialize)]
pub struct Stats {
    /// The memory root.
    pub root: PathBuf,
    /// Indexed memories.
    pub memories: usize,
    /// Indexed memories by type.
    pub by_type: BTreeMap<MemoryType, usize>,
    /// Bytes of `.mem/` used by the index.
    pub index_bytes: u64,
    /// Files that could not be indexed.
    pub bad_files: usize,
    /// Ids used by more than one file.
    pub duplicate_ids: usize,
}

impl Files {
    /// This project's main sessions in `sources` (transcript folders, agents' stores) against
    /// the sessions captured into this root (`source: session/<id>`), as the index has them.
    pub fn coverage(&self, sources: &health::Sources) -> Result<health::Coverage> {
        let found = health::transcripts(sources, &health::project_dir(&self.root))?;
        let prefix = crate::capture::SESSION_SOURCE;
        let captured: Vec<String> = self
            .index
            .sources_starting(prefix)?
            .into_iter()
            .map(|s| s[prefix.len()..].to_string())
            .collect();
        Ok(health::coverage(found, &captured))
    }

    /// The capture log's summary of the 24 hours before `now`.
    pub fn capture_summary(&self, now: Timestamp) -> Result<health::CaptureSummary> {
        let log = self.state_dir.join(crate::capture::LOG_FILE);
        health::capture_summary(&log, now, 24).map_err(|e| Error::io(&log, e))
    }

    /// How many indexed memories capture took from what a user stated: those with the tag
    /// [`crate::capture::facts::FACT_TAG`] and a session as their source, not every memory
    /// whose source names a session (a digest, or one written by hand or by another tool).
    fn stated_facts(&self) -> Result<usize> {
        let tag = [crate::capture::facts::FACT_TAG.to_string()];
        let records = self.index.records(&[], &tag)?;
        Ok(records
            .iter()
            .filter(|r| {
                r.source.as_deref().is_some_and(|s| s.starts_with(crate::capture::SESSION_SOURCE))
                    && !r.id.starts_with(crate::capture::DIGEST_ID_PREFIX)
            })
            .count())
    }

    /// Memories whose id is both in the index and in a file under `archive/`.
    fn interrupted_moves(&self) -> Result<Vec<InterruptedMove>> {
        let archive = self.root.join(store::ARCHIVE_DIR);
        let max = self.config.limits.max_file_bytes;
        let mut found = Vec::new();
        for file in store::scan(&archive).files {
            let Ok(bytes) = store::read_limited(&archive.join(&file.rel), max) else { continue };
            let Ok(memory) = crate::format::Memory::parse_bytes(&bytes) else { continue };
            let id = memory.id().as_str();
            for path in self.index.paths_of(id)? {
                let archived = format!("{}/{}", store::ARCHIVE_DIR, file.rel);
                found.push(InterruptedMove { id: id.to_string(), path, archived });
            }
        }
        found.sort();
        Ok(found)
    }

    /// The files under the root that git's index holds unmerged (`git ls-files -u`), each
    /// once; none outside a git work tree or when git cannot tell.
    fn unmerged(&self) -> Vec<String> {
        let args = ["ls-files", "-u", "-z", "--", "."];
        let Ok(out) = crate::git::Runner::new(&self.root).run(&args, &[], b"", None) else {
            return Vec::new();
        };
        let mut paths: Vec<String> = out
            .stdout
            .split(|b| *b == 0)
            .filter_map(|entry| entry.splitn(2, |b| *b == b'\t').nth(1))
            .map(|path| String::from_utf8_lossy(path).into_owned())
            .collect();
        paths.dedup();
        paths
    }

    /// Counts of what is indexed; `report` is the refresh that preceded it.
    pub fn stats(&self, report: &RefreshReport) -> Result<Stats> {
        // Counted by the index's terms, without reading each memory's stored record.
        let by_type: BTreeMap<MemoryType, usize> = self.index.tally()?.by_type;
        Ok(Stats {
            root: self.root.clone(),
            memories: self.index.len(),
            by_type,
            index_bytes: self.index.size_on_disk(),
            bad_files: report.bad.len() + report.scan_issues.len(),
            duplicate_ids: self.duplicates().len(),
        })
    }
}

/// Checks the root without changing it: index against files (by content), parse errors,
/// the usage log, the capture log of the last 24 hours, and, given a folder of agent
/// transcripts, which main sessions of this project (see [`health::project_dir`]) were
/// never captured. Call it on an engine that has not refreshed, or there is nothing left
/// to find.
pub(super) fn check(
    files: &Files,
    usage_part: &mut Usage,
    sessions_part: &mut Sessions,
    vectors: &mut Vectors,
    code_part: &Code,
    now: Timestamp,
    transcripts: Option<&health::Sources>,
) -> Result<Health> {
    let scan = store::scan(&files.root);
    let index = health::check_index(
        &files.root,
        files.index.manifest()?,
        &scan,
        files.config.limits.max_file_bytes,
    );
    let usage_path = files.state_dir.join(usage::FILE);
    let mut usage = if usage_path.exists() {
        match usage_part.log().and_then(|log| log.check().and_then(|()| log.event_count())) {
            Ok(events) => UsageCheck { present: true, events, ..Default::default() },
            Err(e) => {
                UsageCheck { present: true, error: Some(e.to_string()), ..Default::default() }
            }
        }
    } else {
        UsageCheck::default()
    };
    (usage.file_problems, usage.skipped_files) = match usage::shared::load(&files.root) {
        Ok(files) => (files.problems, files.skipped),
        Err(e) => (vec![e.to_string()], Vec::new()),
    };
    let sessions_path = files.state_dir.join(crate::session::FILE);
    let sessions = if sessions_path.exists() {
        let counts = sessions_part.log().and_then(|log| log.health());
        match counts {
            Ok(counts) => SessionLogCheck {
                present: true,
                error: counts.problem.as_ref().map(|p| {
                    format!(
                        "{} is damaged ({p}); mem never deletes it: move it aside and the next \
                         capture starts a new one",
                        sessions_path.display()
                    )
                }),
                counts: Some(counts),
            },
            Err(e) => SessionLogCheck { present: true, counts: None, error: Some(e.to_string()) },
        }
    } else {
        SessionLogCheck::default()
    };
    let capture = files.capture_summary(now)?;
    let coverage = match transcripts {
        None => None,
        Some(sources) => Some(files.coverage(sources)?),
    };
    let leftovers = super::files::stale_leftovers(&scan.leftovers, now).map(String::from).collect();
    let interrupted_moves = files.interrupted_moves()?;
    let unmerged = files.unmerged();
    let embedding = vectors.status(files);
    let code = match code_part.repo(files) {
        Some(_) => Some(code_check(files, code_part)?),
        None => None,
    };
    Ok(Health {
        notice: files.pending_notice.clone(),
        index,
        usage,
        sessions,
        capture,
        coverage,
        embedding,
        leftovers,
        interrupted_moves,
        unmerged,
        code,
        stated_facts: files.stated_facts()?,
        // The walk the index was checked against: the files are not listed again.
        secrets: files.secret_files(&scan.files),
    })
}

/// The counts of [`Code::verify`].
fn code_check(files: &Files, code: &Code) -> Result<CodeCheck> {
    let verified = code.verify(files)?;
    let count =
        |s: crate::cites::Status| verified.iter().filter(|v| v.code_status == Some(s)).count();
    let citing = verified.iter().filter(|v| v.code_status.is_some()).count();
    let gone = count(crate::cites::Status::Gone);
    let moved = count(crate::cites::Status::Moved);
    Ok(CodeCheck { citing, gone, moved })
}
