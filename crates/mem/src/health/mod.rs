//! The verifier behind `mem health`: does the index match the files, do the files parse, is
//! the usage log sound, did captures succeed, and were the sessions on disk captured. Pure
//! checks over what it is given; it changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rayon::prelude::*;
use serde::Serialize;

use crate::agent::{Agent, Whose};
use crate::format::Memory;
use crate::index::{Manifest, content_hash};
use crate::store::{Scan, read_limited};
use crate::{Error, Result};

/// How the index compares with the files.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexCheck {
    /// Memory files on disk.
    pub files: usize,
    /// Entries in the index.
    pub indexed: usize,
    /// Files that parse but are not in the index.
    pub missing: Vec<String>,
    /// Files whose content differs from what was indexed.
    pub stale: Vec<String>,
    /// Index entries whose file is gone.
    pub orphaned: Vec<String>,
    /// Files that fail to parse, as `path:line: reason`.
    pub bad: Vec<String>,
    /// Those of them that hold git's conflict markers (`mem resolve PATH` splits each), as
    /// paths relative to the root.
    pub conflicted: Vec<String>,
    /// What the walk could not read.
    pub unreadable: Vec<String>,
    /// Session ids of the memories whose `source` is `session/<id>`, read from the files.
    pub sessions: Vec<String>,
}

impl IndexCheck {
    /// Whether the index matches the files and every file parses.
    pub fn ok(&self) -> bool {
        self.missing.is_empty()
            && self.stale.is_empty()
            && self.orphaned.is_empty()
            && self.bad.is_empty()
            && self.unreadable.is_empty()
    }
}

/// Compares every file's content (by hash, not by mtime) with the manifest, in parallel.
pub fn check_index(root: &Path, manifest: &Manifest, scan: &Scan, max_bytes: u64) -> IndexCheck {
    type Read = std::result::Result<([u8; 16], Option<String>), (String, bool)>;
    let results: Vec<(String, Read)> = scan
        .files
        .par_iter()
        .map(|f| {
            let outcome = match read_limited(&root.join(&f.rel), max_bytes) {
                Err(crate::store::ReadError::Io(e)) => Err((format!("{}: {e}", f.rel), false)),
                Err(crate::store::ReadError::Format(e)) => Err((format!("{}: {e}", f.rel), false)),
                Ok(bytes) => match Memory::parse_bytes(&bytes) {
                    Ok(m) => Ok((
                        content_hash(&bytes),
                        m.source()
                            .and_then(|s| s.strip_prefix(crate::capture::SESSION_SOURCE))
                            .map(String::from),
                    )),
                    Err(e) => {
                        let conflicted =
                            matches!(e, crate::format::FormatError::ConflictMarkers { .. });
                        let shown = crate::Error::Parse { path: f.rel.clone().into(), source: e };
                        Err((shown.to_string(), conflicted))
                    }
                },
            };
            (f.rel.clone(), outcome)
        })
        .collect();
    let mut check = IndexCheck {
        files: scan.files.len(),
        indexed: manifest.files.len(),
        unreadable: scan
            .issues
            .iter()
            .map(|i| format!("{}: {}", i.path.display(), i.message))
            .collect(),
        ..Default::default()
    };
    for (rel, outcome) in results {
        match (outcome, manifest.files.get(&rel)) {
            (Err((reason, conflicted)), _) => {
                if conflicted {
                    check.conflicted.push(rel.clone());
                }
                check.bad.push(reason);
            }
            (Ok((_, session)), None) => {
                check.sessions.extend(session);
                check.missing.push(rel);
            }
            (Ok((hash, session)), Some(entry)) => {
                check.sessions.extend(session);
                if entry.hash != hash {
                    check.stale.push(rel);
                }
            }
        }
    }
    let on_disk: std::collections::HashSet<&str> =
        scan.files.iter().map(|f| f.rel.as_str()).collect();
    check.orphaned =
        manifest.files.keys().filter(|rel| !on_disk.contains(&rel[..])).cloned().collect();
    for list in [
        &mut check.missing,
        &mut check.stale,
        &mut check.orphaned,
        &mut check.bad,
        &mut check.conflicted,
    ] {
        list.sort();
    }
    check
}

/// Captures in a recent window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CaptureSummary {
    /// Whether the log exists.
    pub present: bool,
    /// Successful captures in the window.
    pub ok: usize,
    /// Failed captures in the window.
    pub errors: usize,
    /// Lines that could not be read at all (any time).
    pub unreadable: usize,
    /// The last failure in the window: when, and why.
    pub last_error: Option<(String, String)>,
    /// Sessions captured successfully, at any time.
    pub sessions: Vec<String>,
}

impl CaptureSummary {
    /// Whether the window holds no failure and the log no unreadable line.
    pub fn ok(&self) -> bool {
        self.errors == 0 && self.unreadable == 0
    }
}

/// Summarises the capture log at `path` for the `hours` before `now`.
pub fn capture_summary(path: &Path, now: Timestamp, hours: i64) -> std::io::Result<CaptureSummary> {
    let Some(lines) = crate::capture::read_log(path)? else {
        return Ok(CaptureSummary::default());
    };
    let since = now.as_second() - hours * 3600;
    let mut summary = CaptureSummary { present: true, ..Default::default() };
    for entry in lines {
        let Some((entry, at)) =
            entry.and_then(|e| e.at.parse::<Timestamp>().ok().map(|at| (e, at)))
        else {
            summary.unreadable += 1;
            continue;
        };
        let ok = entry.status == crate::capture::Status::Ok;
        if ok && let Some(id) = entry.session_id.clone() {
            summary.sessions.push(id);
        }
        if at.as_second() < since || at > now {
            continue;
        }
        if ok {
            summary.ok += 1;
        } else {
            summary.errors += 1;
            summary.last_error = Some((entry.at.clone(), entry.error.unwrap_or_default()));
        }
    }
    summary.sessions.sort();
    summary.sessions.dedup();
    Ok(summary)
}

/// The project a memory root belongs to: the folder holding the root when the root is a
/// project's `.memory` folder, else the root itself. Lexical: nothing is read from disk.
pub fn project_dir(root: &Path) -> PathBuf {
    let root: PathBuf = root.components().collect();
    match root.parent() {
        Some(parent) if root.file_name() == Some(crate::store::PROJECT_DIR.as_ref()) => {
            if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent.into() }
        }
        _ => root,
    }
}

/// One session's transcript on disk.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SessionFile {
    /// The session id, from the file's name.
    pub session_id: String,
    /// The agent that wrote it.
    pub agent: Agent,
    /// The transcript's path (for an agent that stores its sessions, the store's).
    pub path: String,
}

/// The main sessions of one project under a transcripts folder, and what was left out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Transcripts {
    /// The project's main sessions, by session id.
    pub sessions: BTreeMap<String, SessionFile>,
    /// Subagent transcripts left out: Claude Code's `subagents/agent-<id>.jsonl` (and any
    /// transcript under a `subagents` folder, or named `agent-*.jsonl`), Codex rollouts whose
    /// `session_meta` names a subagent source.
    pub subagents: usize,
    /// Transcripts left out because their `cwd` is outside the project (a Codex rollout's is
    /// also left out when unreadable).
    pub other_projects: usize,
    /// Of those, how many of each agent.
    #[serde(skip)]
    pub other_projects_by: BTreeMap<Agent, usize>,
    /// Files named like transcripts (`*.jsonl`) that are not read, each `path: reason`: not a
    /// regular file (see [`crate::untrusted`]).
    pub unreadable: Vec<String>,
}

/// Sessions found on disk against sessions captured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// The project's main sessions found.
    pub found: usize,
    /// Of those, captured (a memory has `source: session/<id>`).
    pub captured: usize,
    /// The others: session id, agent and transcript path.
    pub gaps: Vec<SessionFile>,
    /// Subagent transcripts left out (not sessions).
    pub subagents: usize,
    /// Sessions of other projects left out (Codex keeps every project's in one folder).
    pub other_projects: usize,
    /// Of those, how many of each agent.
    #[serde(skip)]
    pub other_projects_by: BTreeMap<Agent, usize>,
    /// Files named like transcripts that are not read, each `path: reason`.
    pub unreadable: Vec<String>,
}

/// Where to look for a project's sessions: folders of transcript files, and the stores of the
/// agents that keep their sessions in one ([`crate::agent::Stored`]), by the agent's home folder.
#[derive(Clone, Debug, Default)]
pub struct Sources {
    /// Folders of transcripts, read recursively.
    pub folders: Vec<PathBuf>,
    /// Agents' home folders holding their stores.
    pub stores: Vec<(Agent, PathBuf)>,
}

/// The main sessions under the folders of `sources` (recursively) and in its stores that
/// belong to `project` (see [`project_dir`]), as each agent tells its own
/// (`agent::Spec::whose`): subagents' transcripts (and any under a `subagents` folder) and
/// other projects' sessions left out.
pub fn transcripts(sources: &Sources, project: &Path) -> Result<Transcripts> {
    let mut found = Transcripts::default();
    for dir in &sources.folders {
        transcripts_under(dir, project, &mut found)?;
    }
    for (agent, home) in &sources.stores {
        let Some(stored) = agent.spec().stored else { continue };
        let file = (stored.file)(home);
        let sessions = match (stored.sessions)(home, project) {
            Ok(sessions) => sessions,
            Err(e) => {
                found.unreadable.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        let path = file.display().to_string();
        for (session_id, whose) in sessions {
            found.add(SessionFile { session_id, agent: *agent, path: path.clone() }, whose);
        }
    }
    Ok(found)
}

impl Transcripts {
    /// Counts a session found, by whose it is: the project's is kept, a subagent's or another
    /// project's only counted.
    fn add(&mut self, file: SessionFile, whose: Whose) {
        match whose {
            Whose::Subagent => self.subagents += 1,
            Whose::OtherProject => {
                self.other_projects += 1;
                *self.other_projects_by.entry(file.agent).or_default() += 1;
            }
            Whose::Project => {
                self.sessions.insert(file.session_id.clone(), file);
            }
        }
    }
}

/// Adds the sessions under `dir` to `found` (see [`transcripts`]).
fn transcripts_under(dir: &Path, project: &Path, found: &mut Transcripts) -> Result<()> {
    let subagents_folder = |name: &std::ffi::OsStr| {
        Agent::ALL.iter().any(|a| a.spec().subagents_folder.is_some_and(|f| name == f))
    };
    let top_is_subagents = dir.file_name().is_some_and(subagents_folder);
    let mut stack = vec![(dir.to_path_buf(), top_is_subagents)];
    while let Some((folder, in_subagents)) = stack.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))? {
            let entry = entry.map_err(|e| Error::io(&folder, e))?;
            let path = entry.path();
            if entry.file_type().map_err(|e| Error::io(&path, e))?.is_dir() {
                let subagents = in_subagents || subagents_folder(&entry.file_name());
                stack.push((path, subagents));
                continue;
            }
            // Only a regular file is opened: a FIFO named like a chat or a rollout would wait
            // for a writer, and a device never ends.
            match crate::untrusted::check(&path, crate::untrusted::Links::Follow) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(why) => {
                    if path.extension().is_some_and(|x| x == "jsonl") {
                        found.unreadable.push(format!("{}: {why}", path.display()));
                    }
                    continue;
                }
            }
            let Some((agent, session_id)) = Agent::of_transcript(&path) else {
                continue;
            };
            let whose = match in_subagents {
                true => Whose::Subagent,
                false => (agent.spec().whose)(&path, project).map_err(|e| Error::io(&path, e))?,
            };
            found.add(SessionFile { session_id, agent, path: path.display().to_string() }, whose);
        }
    }
    Ok(())
}

/// Compares the project's `transcripts` with the `captured` session ids.
pub fn coverage(transcripts: Transcripts, captured: &[String]) -> Coverage {
    let mut cov = Coverage {
        found: transcripts.sessions.len(),
        subagents: transcripts.subagents,
        other_projects: transcripts.other_projects,
        other_projects_by: transcripts.other_projects_by,
        unreadable: transcripts.unreadable,
        ..Default::default()
    };
    for (id, file) in transcripts.sessions {
        if captured.contains(&id) {
            cov.captured += 1;
        } else {
            cov.gaps.push(file);
        }
    }
    cov
}

#[cfg(test)]
mod tests;
