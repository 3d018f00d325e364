//! Freshness: how a recall knows the index matches the files without a stat per file.
//!
//! The contract (docs/format.md, "Freshness"):
//! - whatever `mem` writes itself is indexed before the command that wrote it returns;
//! - a file added, removed or renamed by any other tool changes its folder's mtime: a recall
//!   stats every folder of the root (not every file) and re-reads the folders that changed;
//! - a file edited in place by another tool is re-read by the first recall that returns it
//!   (each returned memory's file is stat'ed, and the recall runs again if one changed), and by
//!   any recall once `[index] full_check_secs` have passed since every file was last checked,
//!   or after `mem index`;
//! - `[index] check = "full"` checks every file on every recall, as `mem index` does.
//!
//! What the last check saw is kept in `.mem/folders.bin` (derived state, like the index).

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use super::{Files, Usage};
use crate::Result;
use crate::config::Check;
use crate::index::{BadFile, Reading, RefreshReport, Scope};
use crate::store::{self, DirStamp, FileStat, ScanIssue};

/// File under `.mem/` that holds what the last check of the folders saw.
const FILE: &str = "folders.bin";

/// What the last check of the root saw, for the index state it describes.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Folders {
    /// The index state (instance, generation) these folders were checked against.
    version: (u64, u64),
    /// When every file was last checked (ns since the epoch, wall clock).
    full_check_ns: i64,
    /// When the folders were last stat'ed, just before (ns since the epoch, wall clock).
    checked_ns: i64,
    /// Every folder walked.
    dirs: Vec<DirStamp>,
    /// Files that could not be read or parsed (checked by every recall, to report them).
    bad: Vec<String>,
    /// Those that break the format, as read: reported without being read again while they
    /// stay as they were.
    bad_files: Vec<BadFile>,
    /// What the walk could not use.
    issues: Vec<ScanIssue>,
}

/// The wall clock in ns since the epoch. Not the product's time (that is always an argument,
/// `--now` in the binary): the file system stamps mtimes with this clock, and freshness is
/// about comparing with them.
#[allow(clippy::disallowed_methods)]
pub(super) fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Folders {
    fn path(state_dir: &Path) -> std::path::PathBuf {
        state_dir.join(FILE)
    }

    fn load(state_dir: &Path) -> Option<Folders> {
        let bytes = std::fs::read(Folders::path(state_dir)).ok()?;
        postcard::from_bytes(&bytes).ok()
    }

    /// Records it in `state_dir`.
    pub(super) fn save(&self, state_dir: &Path) -> Result<()> {
        let bytes = postcard::to_stdvec(self).map_err(|e| {
            crate::Error::io(Folders::path(state_dir), std::io::Error::other(e.to_string()))
        })?;
        // Derived and checked on reading (the index state it describes): no fsync.
        store::write_cache(&Folders::path(state_dir), &bytes)
    }

    /// What a full refresh saw: every folder, checked at `taken_ns`.
    pub(super) fn after_full(
        version: (u64, u64),
        taken_ns: i64,
        dirs: Vec<DirStamp>,
        report: &RefreshReport,
    ) -> Folders {
        Folders {
            version,
            full_check_ns: taken_ns,
            checked_ns: taken_ns,
            dirs,
            bad: report.bad_paths.clone(),
            bad_files: stamped(&report.bad_files, taken_ns),
            issues: report.scan_issues.clone(),
        }
    }

    /// The bad files known to the last check, if it can be read.
    pub(super) fn known_bad(state_dir: &Path) -> Vec<BadFile> {
        Folders::load(state_dir).map(|f| f.bad_files).unwrap_or_default()
    }

    /// The folders that changed since they were checked: gone, another mtime, or (when
    /// their mtime is too close to the check to trust) other names. Outermost first; a folder
    /// inside one that changed is left out (it is walked with it).
    fn changed(&self, root: &Path) -> Vec<String> {
        let changed = |d: &DirStamp| -> bool {
            let path = root.join(&d.rel);
            match std::fs::metadata(&path) {
                Ok(meta) if meta.is_dir() => {
                    let mtime = store::mtime_ns(&meta);
                    mtime != d.mtime_ns
                        || (!store::settled(d.mtime_ns, self.checked_ns)
                            && store::names_hash(&path, &d.rel) != Some(d.names))
                }
                _ => true,
            }
        };
        let stale: Vec<&DirStamp> = if self.dirs.len() > 64 {
            use rayon::prelude::*;
            self.dirs.par_iter().filter(|d| changed(d)).collect()
        } else {
            self.dirs.iter().filter(|d| changed(d)).collect()
        };
        let mut rels: Vec<String> = stale.into_iter().map(|d| d.rel.clone()).collect();
        rels.sort();
        let mut outermost: Vec<String> = Vec::new();
        for rel in rels {
            if !outermost.iter().any(|o| rel.starts_with(o.as_str())) {
                outermost.push(rel);
            }
        }
        outermost
    }

    /// Whether a folder read again by name (its mtime too close to the last check to trust)
    /// would be trusted after a check at `now_ns`.
    fn settles_by(&self, now_ns: i64) -> bool {
        self.dirs.iter().any(|d| {
            !store::settled(d.mtime_ns, self.checked_ns) && store::settled(d.mtime_ns, now_ns)
        })
    }
}

/// `bad` with the files read by this check stamped as read at `taken_ns` (when it started).
fn stamped(bad: &[BadFile], taken_ns: i64) -> Vec<BadFile> {
    let stamp = |b: &BadFile| BadFile {
        seen_ns: if b.seen_ns == 0 { taken_ns } else { b.seen_ns },
        ..b.clone()
    };
    bad.iter().map(stamp).collect()
}

impl Files {
    /// Brings the index up to date for a recall, by the contract above: the folders that
    /// changed are walked again, the files that could not be read are read again, and every
    /// file is checked when `[index] check = "full"`, when the index changed under another
    /// process's hands, or when the last full check is older than `[index] full_check_secs`.
    ///
    /// While the root is watched ([`Files::watch`]), nothing is checked until the watcher
    /// reports a change (then the folders, and the memory files it names) or the full-check
    /// bound passes.
    pub fn refresh_for_recall(
        &mut self,
        usage: &mut Usage,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let max_age = self.full_check_ns();
        let full = self.config.index.check == Check::Full;
        let Some(watch) = &mut self.watch else {
            return self.refresh_by_folders(usage, now, progress);
        };
        let seen = watch.take();
        let wall = wall_ns();
        if full || wall.saturating_sub(watch.checked_ns) > max_age {
            watch.checked_ns = wall;
            return self.refresh(usage, now, progress);
        }
        if seen.is_empty() {
            return Ok(RefreshReport::default());
        }
        let rels: Vec<String> = seen
            .paths
            .iter()
            .filter_map(|p| p.strip_prefix(&self.root).ok())
            .filter(|rel| store::is_memory_path(rel))
            .filter_map(|rel| rel.to_str().map(|r| r.replace('\\', "/")))
            .collect::<FxHashSet<String>>()
            .into_iter()
            .collect();
        let mut report = self.refresh_by_folders(usage, now, progress)?;
        if !rels.is_empty() {
            let files = self.refresh_files(&rels, now)?;
            report.add_counts(&files);
            report.bad.extend(files.bad);
        }
        Ok(report)
    }

    /// Starts watching the root for changes (for a long-lived process); afterwards
    /// [`Files::refresh_for_recall`] reads nothing until something changes. The reason when
    /// the system refuses; the folder check stays in use then.
    pub fn watch(&mut self) -> std::result::Result<(), String> {
        let watch = super::watch::Watch::start(&self.root, wall_ns())?;
        self.watch = Some(watch);
        Ok(())
    }

    /// `[index] full_check_secs` in ns.
    fn full_check_ns(&self) -> i64 {
        i64::try_from(self.config.index.full_check_secs)
            .unwrap_or(i64::MAX)
            .saturating_mul(1_000_000_000)
    }

    /// The quick check by folders (see the module's contract).
    fn refresh_by_folders(
        &mut self,
        usage: &mut Usage,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let started = wall_ns();
        let Some(mut folders) = self.quick_folders(started) else {
            return self.refresh(usage, now, progress);
        };
        if !folders.changed(&self.root).is_empty() || !folders.bad.is_empty() {
            let mut report =
                self.with_lock(|files| files.refresh_folders(now, started, progress))?;
            report.warnings.extend(usage.refresh_last_used(self)?);
            return Ok(report);
        }
        if folders.settles_by(started) {
            // Every folder was just found as it was: record when, so that the next recall
            // trusts the recent ones. Losing this only costs reading their names again.
            folders.checked_ns = started;
            let _best_effort = folders.save(&self.state_dir);
        }
        let mut report = RefreshReport { scan_issues: folders.issues, ..Default::default() };
        report.warnings.extend(usage.refresh_last_used(self)?);
        Ok(report)
    }

    /// The folders of the last check, when a quick check may rely on them.
    fn quick_folders(&self, wall: i64) -> Option<Folders> {
        if self.config.index.check == Check::Full || self.pending_notice.is_some() {
            return None;
        }
        let folders = Folders::load(&self.state_dir)?;
        let fresh = wall.saturating_sub(folders.full_check_ns) <= self.full_check_ns()
            && folders.full_check_ns <= wall;
        (fresh && folders.version == self.index.version() && self.index.is_current())
            .then_some(folders)
    }

    /// Under the lock: walks the folders that changed again and reads the files that could
    /// not be read again, then records what it saw. Falls back to a full refresh when the
    /// index changed meanwhile or the root itself changed.
    fn refresh_folders(
        &mut self,
        now: Timestamp,
        started: i64,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        // Another process may have refreshed while this one waited for the lock.
        let Some(mut folders) = self.quick_folders(started) else {
            return self.refresh_locked(now, progress, false);
        };
        let changed = folders.changed(&self.root);
        if changed.iter().any(|rel| rel.is_empty()) {
            return self.refresh_locked(now, progress, false);
        }
        let mut scan = store::Scan::default();
        for rel in &changed {
            let part = store::scan_under(&self.root, rel);
            scan.files.extend(part.files);
            scan.issues.extend(part.issues);
            scan.dirs.extend(part.dirs);
        }
        // The files that could not be read before are read again.
        let mut bad: FxHashSet<String> = FxHashSet::default();
        for rel in folders.bad.iter().filter(|rel| !store::is_under(rel, &changed)) {
            bad.insert(rel.clone());
            scan.files.extend(FileStat::of(&self.root, rel));
        }
        let dirs = std::mem::take(&mut scan.dirs);
        let max = self.config.limits.max_file_bytes;
        let known = std::mem::take(&mut folders.bad_files);
        let reading = Reading { max_file_bytes: max, known_bad: &known };
        let scope = Scope::Under { folders: &changed, files: &bad };
        let report = self.index.refresh(&self.root, scan, scope, reading, now, progress)?;
        folders.dirs.retain(|d| !store::is_under(&d.rel, &changed));
        folders.dirs.extend(dirs);
        folders.bad = report.bad_paths.clone();
        folders.bad_files = stamped(&report.bad_files, started);
        folders.issues.retain(|i| !store::is_under(&i.path.to_string_lossy(), &changed));
        folders.issues.extend(report.scan_issues.iter().cloned());
        folders.version = self.index.version();
        folders.checked_ns = started;
        folders.save(&self.state_dir)?;
        let mut report = report;
        report.scan_issues = folders.issues;
        Ok(report)
    }

    /// Re-reads the files of `rels` (relative to the root) that changed since they were
    /// indexed, under the lock.
    pub(super) fn refresh_files(
        &mut self,
        rels: &[String],
        now: Timestamp,
    ) -> Result<RefreshReport> {
        self.with_lock(|files| {
            if let Some(notice) = files.reopen_if_stale()? {
                files.pending_notice.get_or_insert(notice);
            }
            let before = files.index.version();
            let mut scan = store::Scan::default();
            scan.files.extend(rels.iter().filter_map(|rel| FileStat::of(&files.root, rel)));
            let scope: FxHashSet<String> = rels.iter().cloned().collect();
            let max = files.config.limits.max_file_bytes;
            let silent = &crate::progress::Silent;
            let started = wall_ns();
            // Read once: its bad files now, and it is updated after the commit.
            let folders = Folders::load(&files.state_dir);
            let known = folders.as_ref().map_or(&[][..], |f| &f.bad_files[..]);
            let reading = Reading { max_file_bytes: max, known_bad: known };
            let report = files.index.refresh(
                &files.root,
                scan,
                Scope::Files(&scope),
                reading,
                now,
                silent,
            )?;
            // The folders described the index before this commit, which changed no folder.
            if report.changed()
                && let Some(mut folders) = folders
                && folders.version == before
            {
                folders.version = files.index.version();
                folders.bad.retain(|rel| !scope.contains(rel));
                folders.bad.extend(report.bad_paths.iter().cloned());
                folders.bad_files.retain(|b| !scope.contains(&b.rel));
                folders.bad_files.extend(stamped(&report.bad_files, started));
                folders.save(&files.state_dir)?;
            }
            Ok(report)
        })
    }

    /// The files among `stamps` (path relative to the root, and the file as indexed) that are
    /// not as indexed: gone, another size or mtime, or an mtime too recent to trust.
    pub(super) fn changed_files(&self, stamps: &[(&str, crate::index::Stamp)]) -> Vec<String> {
        stamps
            .iter()
            .filter(|(rel, stamp)| match std::fs::metadata(self.root.join(rel)) {
                Ok(meta) => {
                    meta.len() != stamp.size
                        || store::mtime_ns(&meta) != stamp.mtime_ns
                        || !self.index.trusts(stamp.mtime_ns)
                }
                Err(_) => true,
            })
            .map(|(rel, _)| rel.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::format::{MemoryType, NewMemory};

    /// A file that broke the format is parsed once, then reported from what was read while
    /// it stays as it was (defect 5 of the second probe: every recall re-parsed it).
    #[test]
    fn a_bad_file_is_parsed_once_and_reported_every_time() {
        let now: Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut engine = Engine::open(dir.path()).unwrap();
        let note = NewMemory {
            text: "kafka".into(),
            kind: MemoryType::Semantic,
            importance: 5,
            tags: vec![],
            title: None,
            source: None,
        };
        engine.files.add(note, now).unwrap();
        let bad = dir.path().join("bad.md");
        std::fs::write(&bad, format!("---\nid: b\ntags: {}\n---\n", "[".repeat(5000))).unwrap();
        let hour_ago = std::time::SystemTime::UNIX_EPOCH
            + std::time::Duration::from_nanos(u64::try_from(wall_ns()).unwrap())
            - std::time::Duration::from_secs(3600);
        // Both an hour old: old enough to trust their mtimes.
        let set_mtime = || {
            for entry in std::fs::read_dir(dir.path()).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "md") {
                    let file = std::fs::File::options().write(true).open(&path).unwrap();
                    file.set_modified(hour_ago).unwrap();
                }
            }
        };
        set_mtime();
        let silent = &crate::progress::Silent;
        let first = engine.refresh_for_recall(now, silent).unwrap();
        assert_eq!(first.read, 2, "both files read");
        let message = first.bad[0].to_string();
        assert!(message.contains("bad.md:3: front-matter has 257 `[`"), "{message}");
        for _ in 0..2 {
            let again = engine.refresh_for_recall(now, silent).unwrap();
            assert_eq!(again.read, 0, "nothing read again");
            assert_eq!(
                again.bad.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
                std::slice::from_ref(&message)
            );
        }
        // Another process's engine, and a full check, take it from `.mem/` too.
        let mut other = Engine::open(dir.path()).unwrap();
        let full = other.refresh(now, silent).unwrap();
        assert_eq!((full.read, full.bad.len()), (0, 1));
        // Changed, it is read again.
        std::fs::write(&bad, "---\nid: b\ntype: semantic\ncreated: 2026-01-01\n---\nfixed\n")
            .unwrap();
        set_mtime();
        let fixed = engine.refresh_for_recall(now, silent).unwrap();
        assert_eq!((fixed.read, fixed.bad.len(), fixed.added), (1, 0, 1));
    }
}
