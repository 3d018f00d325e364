//! `mem capture` on a root: one session memory written or updated per hook call, every attempt
//! logged.

use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::agent::{Agent, Homes};
use crate::capture::{
    CaptureFailure, Captured, IMPORTANCE, LogEntry, Payload, SESSION_SOURCE, SESSIONS_DIR,
    SessionInfo, Status, Transcript, Written, append_log, fail, parse_payload, payload_help,
    project_tag, read_transcript, redact, summarize,
};
use crate::format::yaml_text;
use crate::format::{Memory, MemoryId, MemoryType, NewMemory, edit_front_matter, with_body};
use crate::json::MAX_LINE_BYTES;
use crate::store::{self, Overwrite};
use crate::{Error, Result};

use super::{Files, Sessions, Usage, Vectors};

/// The parts of an engine that one capture reads and writes.
pub(super) struct Capturing<'a> {
    /// The root the session memory and the facts are written in.
    pub(super) files: &'a mut Files,
    /// The usage log the facts said again are recorded in.
    pub(super) usage: &'a mut Usage,
    /// The session log the transcript's events are imported into.
    pub(super) sessions: &'a mut Sessions,
    /// The model that tells a new fact from a near-duplicate.
    pub(super) vectors: &'a mut Vectors,
}

impl Capturing<'_> {
    /// Captures a session from a hook payload: reads its transcript, writes or updates
    /// `sessions/session-<session_id>.md`, and appends the outcome, success or failure, to
    /// `.mem/capture.log`. An error that could not be logged says so too. A payload that
    /// names no transcript is looked up by session id in the agents' folders (`homes`).
    pub(super) fn capture(
        &mut self,
        payload: &[u8],
        homes: &Homes,
        now: Timestamp,
    ) -> Result<Captured> {
        let mut entry = LogEntry::new(now);
        let result = self.capture_into(payload, homes, now, &mut entry);
        match &result {
            Ok(captured) => {
                entry.path = captured.path.clone();
                entry.redacted = captured.redacted;
            }
            Err(e) => {
                entry.status = Status::Error;
                entry.error = Some(e.to_string());
            }
        }
        let logged = append_log(self.files.root(), &entry);
        match (result, logged) {
            (result, Ok(())) => result,
            (Ok(captured), Err(e)) => Err(fail(
                CaptureFailure::Log,
                format!(
                    "captured {}, but could not log it: {e}",
                    captured.path.as_deref().unwrap_or("nothing")
                ),
            )),
            (Err(first), Err(e)) => {
                Err(fail(CaptureFailure::Log, format!("{first} (and could not log it: {e})")))
            }
        }
    }

    fn capture_into(
        &mut self,
        payload: &[u8],
        homes: &Homes,
        now: Timestamp,
        entry: &mut LogEntry,
    ) -> Result<Captured> {
        let raw = payload;
        let payload = match parse_payload(payload) {
            Ok(p) => p,
            Err(e) => {
                entry.fill_from_raw(payload);
                return Err(e);
            }
        };
        entry.session_id.clone_from(&payload.session_id);
        entry.hook_event.clone_from(&payload.hook_event);
        let (session_id, id) = payload.session()?;
        let stored = match payload.transcript_path {
            None => self.stored_transcript(session_id, homes)?,
            Some(_) => None,
        };
        let path = match stored {
            Some(path) => path,
            None => transcript_path(&payload, session_id, homes)?,
        };
        entry.transcript = Some(path.display().to_string());
        let path = match &payload.cwd {
            Some(cwd) if path.is_relative() => Path::new(cwd).join(path),
            _ => path,
        };
        let nothing = || Captured::nothing(&id, session_id, &payload.hook_event, &path);
        if !crate::capture::wait_for_hook(&path, raw) {
            entry.note = Some(format!(
                "the transcript did not record this hook within {} s: captured what it holds",
                crate::capture::HOOK_WAIT.as_secs()
            ));
        }
        let Some(file) = open_transcript(&path)? else {
            // Not written yet (a Stop that comes before the agent's first write, a session
            // that never started, as `claude mcp list` ends one): nothing to capture yet; the
            // next hook of the session captures it.
            entry.note = Some("the transcript does not exist yet: nothing to capture".into());
            return Ok(nothing());
        };
        let transcript = read_transcript(std::io::BufReader::with_capacity(64 * 1024, file))
            .map_err(|e| cannot_read(&path, e))?;
        entry.skipped_lines = transcript.skipped_lines;
        if transcript.lines > 0 && transcript.recognised == 0 {
            if transcript.session_lines == transcript.lines {
                // Only the lines about the session that come before its first message (an
                // interactive Claude Code session's first Stop can come before the messages
                // are written): nothing to capture yet.
                entry.note = Some("the transcript holds no message yet: nothing to capture".into());
                return Ok(nothing());
            }
            return Err(unknown_format(&path, &transcript));
        }
        let mut captured = Captured {
            format: transcript.format,
            requests: transcript.request_count(),
            tool_calls: transcript.tool_calls,
            skipped_lines: transcript.skipped_lines,
            oversized_lines: transcript.oversized_lines,
            truncated: transcript.truncated,
            ..nothing()
        };
        if transcript.is_empty() && payload.last_assistant_message.is_none() {
            captured.logged_events = self.log_session(&path, session_id, None)?;
            return Ok(captured);
        }
        let (rel, written, redacted) =
            self.write_digest((session_id, &id), &payload, &transcript, now)?;
        captured.path = Some(rel.clone());
        captured.written = written;
        captured.redacted = redacted;
        let cwd = payload.cwd.as_deref().or(transcript.cwd.as_deref());
        captured.facts = self
            .take_facts(session_id, transcript.stated(), cwd, now)
            .map_err(|e| fail(CaptureFailure::Facts, format!("wrote {rel}, but {e}")))?;
        captured.logged_events = self
            .log_session(&path, session_id, Some(id.as_str()))
            .map_err(|e| fail(CaptureFailure::SessionLog, format!("wrote {rel}, but {e}")))?;
        Ok(captured)
    }

    /// Writes the session's digest from its transcript: the summary, tagged with the project,
    /// created at the transcript's first event (else `now`). Its path, what happened to the
    /// file, and the secrets redacted.
    fn write_digest(
        &mut self,
        (session_id, id): (&str, &MemoryId),
        payload: &Payload,
        transcript: &Transcript,
        now: Timestamp,
    ) -> Result<(String, Written, usize)> {
        let cwd = payload.cwd.clone().or_else(|| transcript.cwd.clone());
        let summary = summarize(
            transcript,
            &SessionInfo {
                session_id,
                cwd: cwd.as_deref(),
                outcome: payload.last_assistant_message.as_deref(),
            },
        );
        let project = cwd.as_deref().map(|c| redact(c).0);
        let mut tags = vec!["session".to_string()];
        tags.extend(cwd.as_deref().and_then(project_tag));
        let new = NewMemory {
            text: summary.body,
            kind: MemoryType::Episodic,
            importance: IMPORTANCE,
            tags,
            title: None,
            source: Some(format!("{SESSION_SOURCE}{session_id}")),
        };
        let created = transcript.first_at.unwrap_or(now);
        let (rel, written) = self.write_session(id, new, created, project.as_deref(), now)?;
        Ok((rel, written, summary.redacted))
    }

    /// Appends what is new in `transcript` to the session log, as events of `session` (whose
    /// digest is the memory `memory`); the number of events appended.
    fn log_session(
        &mut self,
        transcript: &Path,
        session: &str,
        memory: Option<&str>,
    ) -> Result<usize> {
        let imported = self.sessions.log()?.import(transcript, session, memory)?;
        Ok(imported.events)
    }

    /// Writes a session memory: a new file, or the existing one with its body and the lines
    /// capture owns (`source`, `project`) replaced and `updated` set to `now` (when that
    /// changes anything). Under the root's lock.
    fn write_session(
        &mut self,
        id: &MemoryId,
        new: NewMemory,
        created: Timestamp,
        project: Option<&str>,
        now: Timestamp,
    ) -> Result<(String, Written)> {
        let rel = format!("{SESSIONS_DIR}/{id}.md");
        let path = self.files.root().join(&rel);
        let parse_error = |source| Error::Parse { path: rel.clone().into(), source };
        let mut owned = vec![("source", new.source.as_deref().map(yaml_text))];
        if let Some(project) = project {
            owned.push(("project", Some(yaml_text(project))));
        }
        self.files.with_lock(|files| {
            check_sessions_folder(files.root())?;
            // The session file itself may be a link out of the root: never written through.
            store::inside_root(files.root(), &rel)?;
            let old = match std::fs::read(&path) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(Error::io(&path, e)),
            };
            match old {
                None => {
                    let memory = Memory::create(new, created)?;
                    let mut edits = vec![("id", Some(yaml_text(id.as_str())))];
                    edits.extend(owned.iter().cloned());
                    let text = edit_front_matter(&memory.render(), &edits).map_err(parse_error)?;
                    let folder = path.parent().expect("sessions/ is a folder");
                    std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
                    store::write_atomic(&path, text.as_bytes(), Overwrite::No)?;
                    Ok((rel.clone(), Written::Created))
                }
                Some(bytes) => {
                    let memory = Memory::parse_bytes(&bytes).map_err(parse_error)?;
                    if memory.id() != id {
                        return Err(fail(CaptureFailure::SessionFile, format!(
                            "{rel} holds the memory {:?}, not {id:?}; move it elsewhere so that \
                             mem capture can write this session",
                            memory.id().as_str()
                        )));
                    }
                    let text = String::from_utf8(bytes).expect("parse_bytes checked UTF-8");
                    let body = format!("{}\n", new.text.trim());
                    let updated = with_body(&text, &body)
                        .and_then(|t| edit_front_matter(&t, &owned))
                        .map_err(parse_error)?;
                    if updated == text {
                        return Ok((rel.clone(), Written::Unchanged));
                    }
                    let updated = edit_front_matter(&updated, &[crate::format::updated_at(now)])
                        .map_err(parse_error)?;
                    store::write_atomic(&path, updated.as_bytes(), Overwrite::Yes)?;
                    Ok((rel.clone(), Written::Updated))
                }
            }
        })
    }
}

/// Refuses a `sessions` folder that is a symlink leading outside the root (or nowhere): capture
/// writes only inside the root. A link to a folder inside the root is followed.
fn check_sessions_folder(root: &Path) -> Result<()> {
    let folder = root.join(SESSIONS_DIR);
    match std::fs::symlink_metadata(&folder) {
        Ok(meta) if meta.file_type().is_symlink() => {}
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(&folder, e)),
    }
    let target = std::fs::read_link(&folder).map_err(|e| Error::io(&folder, e))?;
    let refused = |why: String| {
        fail(
            CaptureFailure::SessionFile,
            format!(
                "the sessions folder {} is a symbolic link to {}, {why}; mem capture does not \
                 write through it: replace the link with a folder",
                folder.display(),
                target.display()
            ),
        )
    };
    let resolved = std::fs::canonicalize(&folder)
        .map_err(|e| refused(format!("which leads nowhere ({e})")))?;
    let root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    if !resolved.starts_with(&root) {
        return Err(refused(format!(
            "outside the memory root {} (it leads to {})",
            root.display(),
            resolved.display()
        )));
    }
    Ok(())
}

impl Capturing<'_> {
    /// The transcript of a session that an agent keeps in a store of its own
    /// ([`crate::agent::Stored`]), written from the store into
    /// `.mem/transcripts/<agent>/<session id>.jsonl` (rewritten only when the store gives more);
    /// `None` when no agent's store holds the session.
    fn stored_transcript(&mut self, session_id: &str, homes: &Homes) -> Result<Option<PathBuf>> {
        for agent in Agent::ALL {
            let (Some(stored), Some(home)) = (agent.spec().stored, homes.of(agent)) else {
                continue;
            };
            let lines = (stored.transcript)(home, session_id).map_err(|e| {
                let file = (stored.file)(home);
                fail(
                    CaptureFailure::Transcript,
                    format!("cannot read session {session_id} in {}: {e}", file.display()),
                )
            })?;
            let Some(lines) = lines else { continue };
            // The copy keeps no secret of the session, and only its owner reads it.
            let mut text = String::new();
            for line in &lines {
                let (line, _) = crate::capture::redact_json(line);
                text.push_str(&serde_json::to_string(&line).expect("JSON serialises"));
                text.push('\n');
            }
            let dir = self.files.state_dir.join(TRANSCRIPTS_DIR).join(agent.name());
            private_dir(&dir)?;
            let path = dir.join(format!("{session_id}.jsonl"));
            let old = std::fs::read(&path).ok();
            if old.as_deref() != Some(text.as_bytes()) {
                store::write_atomic(&path, text.as_bytes(), Overwrite::Yes)?;
            }
            // Not what was read before and more (another branch of a session's tree): the log
            // reads it again from its start.
            if old.is_some_and(|old| !text.as_bytes().starts_with(&old)) {
                self.sessions.log()?.read_again(&path)?;
            }
            set_mode(&path, 0o600)?;
            return Ok(Some(path));
        }
        Ok(None)
    }
}

/// Makes `dir` and the folder above it (`transcripts/`) when missing, readable by their owner
/// only, existing ones included.
fn private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    set_mode(dir, 0o700)?;
    match dir.parent() {
        Some(parent) => set_mode(parent, 0o700),
        None => Ok(()),
    }
}

/// Sets the permission bits of `path`.
fn set_mode(path: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(path, e))
}

/// The folder of `.mem/` that holds the transcripts mem writes of sessions an agent keeps in a
/// store of its own.
pub const TRANSCRIPTS_DIR: &str = "transcripts";

/// The session's transcript: the payload's `transcript_path` as given, else the one an agent
/// keeps of the session in its home folder.
fn transcript_path(payload: &Payload, session_id: &str, homes: &Homes) -> Result<PathBuf> {
    if let Some(given) = &payload.transcript_path {
        return Ok(PathBuf::from(given));
    }
    crate::capture::find_transcript(homes, session_id).ok_or_else(|| {
        fail(
            CaptureFailure::Transcript,
            format!(
                "the hook payload names no transcript, and no transcript of session {session_id} \
                 is in the agents' folders; {}",
                payload_help()
            ),
        )
    })
}

/// The transcript opened for reading; `None` when it does not exist. Anything but a regular
/// file is refused (see [`crate::untrusted`]: a FIFO would wait for a writer, and a device such
/// as /dev/zero never ends).
fn open_transcript(path: &Path) -> Result<Option<std::fs::File>> {
    use crate::untrusted::{self, Links, Unreadable};
    untrusted::open(path, Links::Follow).map_err(|e| match e {
        Unreadable::Io(e) => cannot_read(path, e),
        not_regular => fail(
            CaptureFailure::Transcript,
            format!(
                "cannot read the transcript {}: it is {not_regular}; `transcript_path` must name \
                 the session's JSONL file",
                path.display(),
            ),
        ),
    })
}

/// The failure to read the transcript at `path`.
fn cannot_read(path: &Path, e: std::io::Error) -> Error {
    fail(CaptureFailure::Transcript, format!("cannot read the transcript {}: {e}", path.display()))
}

/// The failure of a transcript with lines of no known agent.
fn unknown_format(path: &Path, transcript: &Transcript) -> Error {
    let agents: Vec<&str> = Agent::ALL.iter().map(|a| a.title()).collect();
    fail(
        CaptureFailure::Transcript,
        format!(
            "the transcript {} has no line in the format of a known agent ({}) ({} of {} lines \
             skipped: not JSON even after cleaning, or over {} MiB)",
            path.display(),
            agents.join(", "),
            transcript.skipped_lines,
            transcript.lines,
            MAX_LINE_BYTES >> 20
        ),
    )
}
