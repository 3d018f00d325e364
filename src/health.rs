//! The verifier behind `mem health`: does the index match the files, do the files parse, is
//! the usage log sound, did captures succeed, and were the sessions on disk captured. Pure
//! checks over what it is given; it changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use rayon::prelude::*;
use serde::Serialize;

use crate::agent::{Agent, Whose, claude};
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
    type Read = std::result::Result<([u8; 16], Option<String>), String>;
    let results: Vec<(String, Read)> = scan
        .files
        .par_iter()
        .map(|f| {
            let outcome = match read_limited(&root.join(&f.rel), max_bytes) {
                Err(crate::store::ReadError::Io(e)) => Err(format!("{}: {e}", f.rel)),
                Err(crate::store::ReadError::Format(e)) => Err(format!("{}: {e}", f.rel)),
                Ok(bytes) => match Memory::parse_bytes(&bytes) {
                    Ok(m) => Ok((
                        content_hash(&bytes),
                        m.source()
                            .and_then(|s| s.strip_prefix(crate::capture::SESSION_SOURCE))
                            .map(String::from),
                    )),
                    Err(e) => {
                        Err(crate::Error::Parse { path: f.rel.clone().into(), source: e }
                            .to_string())
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
            (Err(reason), _) => check.bad.push(reason),
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
    for list in [&mut check.missing, &mut check.stale, &mut check.orphaned, &mut check.bad] {
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
    /// The transcript's path.
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
    /// Codex rollouts of other projects left out.
    pub other_projects: usize,
    /// Files named like transcripts that are not read, each `path: reason`.
    pub unreadable: Vec<String>,
}

/// The main sessions under the folders `dirs` (recursively) that belong to `project` (see
/// [`project_dir`]), as each agent tells its own (`agent::Spec::whose`): subagents' transcripts
/// (and any under a `subagents` folder) and other projects' sessions left out.
pub fn transcripts(dirs: &[PathBuf], project: &Path) -> Result<Transcripts> {
    let mut found = Transcripts::default();
    for dir in dirs {
        transcripts_under(dir, project, &mut found)?;
    }
    Ok(found)
}

/// Adds the sessions under `dir` to `found` (see [`transcripts`]).
fn transcripts_under(dir: &Path, project: &Path, found: &mut Transcripts) -> Result<()> {
    let top_is_subagents = dir.file_name() == Some(claude::SUBAGENTS_DIR.as_ref());
    let mut stack = vec![(dir.to_path_buf(), top_is_subagents)];
    while let Some((folder, in_subagents)) = stack.pop() {
        for entry in std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))? {
            let entry = entry.map_err(|e| Error::io(&folder, e))?;
            let path = entry.path();
            if entry.file_type().map_err(|e| Error::io(&path, e))?.is_dir() {
                let subagents = in_subagents || entry.file_name() == claude::SUBAGENTS_DIR;
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
            match whose {
                Whose::Subagent => found.subagents += 1,
                Whose::OtherProject => found.other_projects += 1,
                Whose::Project => {
                    let file = SessionFile { session_id, agent, path: path.display().to_string() };
                    found.sessions.insert(file.session_id.clone(), file);
                }
            }
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
mod tests {
    use super::*;
    use crate::agent::inside;

    #[test]
    fn capture_log_window_and_unreadable_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("capture.log");
        std::fs::write(
            &log,
            concat!(
                "{\"at\":\"2026-11-29T10:00:00Z\",\"status\":\"ok\",\"session_id\":\"old\"}\n",
                "{\"at\":\"2026-11-30T10:00:00Z\",\"status\":\"ok\",\"session_id\":\"a\"}\n",
                "{\"at\":\"2026-11-30T11:00:00Z\",\"status\":\"error\",\"error\":\"bad payload\"}\n",
                "not json\n",
            ),
        )
        .unwrap();
        let s = capture_summary(&log, "2026-11-30T12:00:00Z".parse().unwrap(), 24).unwrap();
        assert_eq!((s.ok, s.errors, s.unreadable), (1, 1, 1));
        assert_eq!(s.last_error, Some(("2026-11-30T11:00:00Z".into(), "bad payload".into())));
        assert_eq!(s.sessions, ["a", "old"]);
        let none = capture_summary(&dir.path().join("nope"), Timestamp::UNIX_EPOCH, 24).unwrap();
        assert!(!none.present && none.ok());
    }

    #[test]
    fn the_project_of_a_root() {
        assert_eq!(project_dir(Path::new("/work/shop/.memory")), Path::new("/work/shop"));
        assert_eq!(project_dir(Path::new("/work/shop/.memory/")), Path::new("/work/shop"));
        assert_eq!(project_dir(Path::new("/work/shop/./.memory")), Path::new("/work/shop"));
        assert_eq!(project_dir(Path::new("/home/ana/mem")), Path::new("/home/ana/mem"));
        assert_eq!(project_dir(Path::new(".memory")), Path::new("."));
        assert_eq!(project_dir(Path::new("/")), Path::new("/"));
    }

    /// A Codex rollout's first line, `session_meta`, with `extra` fields in its payload.
    fn rollout(id: &str, cwd: &str, extra: &str) -> String {
        format!(
            "{{\"timestamp\":\"2026-11-30T09:00:00.000Z\",\"type\":\"session_meta\",\"payload\":\
             {{\"id\":\"{id}\",\"timestamp\":\"2026-11-30T09:00:00.000Z\",\"cwd\":\"{cwd}\",\
             \"originator\":\"codex_cli_rs\",\"cli_version\":\"0.63.0\"{extra}}}}}\n\
             {{\"timestamp\":\"2026-11-30T09:00:01.000Z\",\"type\":\"event_msg\",\"payload\":\
             {{\"type\":\"user_message\",\"message\":\"hi\"}}}}\n"
        )
    }

    #[test]
    fn only_the_main_sessions_of_the_project_count() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("shop");
        std::fs::create_dir_all(project.join("src")).unwrap();
        let dir = tmp.path().join("transcripts");
        let write = |rel: &str, text: &str| {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let main = "4b1c0d9e-0000-4000-8000-000000000001";
        write(&format!("claude/{main}.jsonl"), "{}\n");
        write(&format!("claude/{main}/subagents/agent-a1b2c3.jsonl"), "{}\n");
        write("claude/agent-d4e5f6.jsonl", "{}\n");
        write("claude/notes.txt", "not a transcript");
        let ours = "019a2d7a-0000-7000-8000-00000000000a";
        let src = project.join("src");
        write(
            &format!("codex/2026/11/30/rollout-2026-11-30T09-00-00-{ours}.jsonl"),
            &rollout(ours, src.to_str().unwrap(), ",\"source\":\"cli\""),
        );
        let theirs = "019a2d7a-0000-7000-8000-00000000000b";
        write(
            &format!("codex/2026/11/30/rollout-2026-11-30T10-00-00-{theirs}.jsonl"),
            &rollout(theirs, "/elsewhere/shop-old", ""),
        );
        let sibling = "019a2d7a-0000-7000-8000-00000000000c";
        let beside = format!("{}-old", project.display());
        write(
            &format!("codex/2026/11/30/rollout-2026-11-30T11-00-00-{sibling}.jsonl"),
            &rollout(sibling, &beside, ""),
        );
        let review = "019a2d7a-0000-7000-8000-00000000000d";
        write(
            &format!("codex/2026/11/30/rollout-2026-11-30T12-00-00-{review}.jsonl"),
            &rollout(review, project.to_str().unwrap(), ",\"source\":{\"subagent\":\"review\"}"),
        );
        let garbage = "019a2d7a-0000-7000-8000-00000000000e";
        write(&format!("codex/rollout-2026-11-30T13-00-00-{garbage}.jsonl"), "not json\n");

        let found = transcripts(std::slice::from_ref(&dir), &project).unwrap();
        let sessions: Vec<(&str, Agent)> =
            found.sessions.values().map(|s| (s.session_id.as_str(), s.agent)).collect();
        assert_eq!(sessions, [(ours, Agent::Codex), (main, Agent::Claude)]);
        assert_eq!((found.subagents, found.other_projects), (3, 3));

        let cov = coverage(found, &[main.to_string()]);
        assert_eq!((cov.found, cov.captured, cov.subagents, cov.other_projects), (2, 1, 3, 3));
        assert_eq!(cov.gaps.len(), 1);
        assert_eq!((cov.gaps[0].session_id.as_str(), cov.gaps[0].agent), (ours, Agent::Codex));
        let json = serde_json::to_value(&cov.gaps[0]).unwrap();
        assert_eq!(json["agent"], "codex");

        // A folder named `subagents` given as the transcripts folder holds no session.
        let only = transcripts(&[dir.join(format!("claude/{main}/subagents"))], &project).unwrap();
        assert_eq!((only.sessions.len(), only.subagents), (0, 1));
    }

    /// #24, defect 3: Claude Code files a session started in a subfolder under a folder named
    /// after that subfolder.
    #[test]
    fn the_claude_folders_of_a_project_and_its_subfolders() {
        assert_eq!(claude::folder_name(Path::new("/tmp/a.b/my_repo")), "-tmp-a-b-my-repo");
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("shop");
        let projects = tmp.path().join("projects");
        let name = claude::folder_name(&project);
        let session = |folder: &str, id: &str, cwd: &Path| {
            let dir = projects.join(folder);
            std::fs::create_dir_all(&dir).unwrap();
            let line = serde_json::json!({"type": "user", "cwd": cwd, "sessionId": id});
            let queued = "{\"type\":\"queue-operation\"}\n";
            std::fs::write(dir.join(format!("{id}.jsonl")), format!("{queued}{line}\n")).unwrap();
        };
        let (top, sub, other) = (
            "4b1c0d9e-0000-4000-8000-000000000001",
            "4b1c0d9e-0000-4000-8000-000000000002",
            "4b1c0d9e-0000-4000-8000-000000000003",
        );
        session(&name, top, &project);
        session(&format!("{name}-src"), sub, &project.join("src"));
        // Another repository whose name extends this one's: `shop-old`.
        session(&format!("{name}-old"), other, &tmp.path().join("shop-old"));
        std::fs::create_dir_all(projects.join("-elsewhere")).unwrap();
        let folders = claude::folders(&projects, &project);
        assert_eq!(folders.len(), 3, "{folders:?}");
        let found = transcripts(&folders, &project).unwrap();
        let ids: Vec<&str> = found.sessions.keys().map(String::as_str).collect();
        assert_eq!(ids, [top, sub]);
        assert_eq!(found.other_projects, 1);
    }

    #[test]
    fn a_codex_cwd_is_inside_the_project_through_links_too() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("shop");
        std::fs::create_dir_all(project.join("api")).unwrap();
        assert!(inside(&project, &project));
        assert!(inside(&project.join("api"), &project));
        assert!(!inside(&tmp.path().join("shop-old"), &project));
        #[cfg(unix)]
        {
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&project, &link).unwrap();
            assert!(inside(&link.join("api"), &project));
        }
    }
}
