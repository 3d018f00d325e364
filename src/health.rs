//! The verifier behind `mem health`: does the index match the files, do the files parse, is
//! the usage log sound, did captures succeed, and were the sessions on disk captured. Pure
//! checks over what it is given; it changes nothing.

use std::collections::BTreeMap;
use std::path::Path;

use jiff::Timestamp;
use rayon::prelude::*;
use serde::Serialize;

use crate::format::Memory;
use crate::index::{Manifest, content_hash};
use crate::store::{Scan, read_limited};

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
    type Read = Result<([u8; 16], Option<String>), String>;
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
                        m.source().and_then(|s| s.strip_prefix("session/")).map(String::from),
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

/// Sessions found on disk against sessions captured.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// Transcripts found.
    pub found: usize,
    /// Of those, captured (a memory has `source: session/<id>`).
    pub captured: usize,
    /// The others: session id and transcript path.
    pub gaps: Vec<(String, String)>,
}

/// Every transcript under `dir` (recursively), by session id.
pub fn transcripts(dir: &Path) -> std::io::Result<BTreeMap<String, String>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                stack.push(path);
            } else if let Some(id) = crate::capture::session_id_of_transcript(&path) {
                found.insert(id, path.display().to_string());
            }
        }
    }
    Ok(found)
}

/// Compares the `transcripts` (session id → path) with the `captured` session ids.
pub fn coverage(transcripts: BTreeMap<String, String>, captured: &[String]) -> Coverage {
    let mut cov = Coverage { found: transcripts.len(), ..Default::default() };
    for (id, path) in transcripts {
        if captured.contains(&id) {
            cov.captured += 1;
        } else {
            cov.gaps.push((id, path));
        }
    }
    cov
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn coverage_lists_the_gaps() {
        let t: BTreeMap<String, String> = [("a", "x/a.jsonl"), ("b", "x/b.jsonl")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let c = coverage(t, &["a".to_string()]);
        assert_eq!((c.found, c.captured), (2, 1));
        assert_eq!(c.gaps, [("b".to_string(), "x/b.jsonl".to_string())]);
    }
}
