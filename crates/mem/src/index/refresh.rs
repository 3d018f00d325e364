//! Refresh: the index brought up to date with the files, reading only what changed.

use std::path::Path;

use jiff::Timestamp;
use rayon::prelude::*;
use tantivy::{TantivyDocument, Term};

use super::{
    Entry, Fields, Manifest, MemoryIndex, Stamp, VERIFIED_STAMP, content_hash, manifest, payload,
    remove_manifests,
};
use crate::format::Memory;
use crate::store::{self, FileStat, ReadError, Scan, ScanIssue, read_limited};
use crate::{Error, Result};

/// Up to this many added or changed memories, a refresh looks for duplicates of their ids
/// one by one in the index; more, and it counts every id of the manifest.
const FEW_CHANGES: usize = 1_000;

/// What a refresh found and did.
#[derive(Debug, Default)]
pub struct RefreshReport {
    /// Memories indexed for the first time.
    pub added: usize,
    /// Memories re-indexed because their content changed.
    pub updated: usize,
    /// Memories removed from the index (file deleted, or now unreadable).
    pub removed: usize,
    /// Files left as they were.
    pub unchanged: usize,
    /// Files whose mtime changed but content did not.
    pub touched: usize,
    /// Files that could not be read or parsed, each as `path:line: reason`.
    pub bad: Vec<Error>,
    /// The paths of those files, relative to the root.
    pub bad_paths: Vec<String>,
    /// Those of them whose content breaks the format, as read: not read again while their
    /// size and mtime stay (see [`BadFile`]).
    pub bad_files: Vec<BadFile>,
    /// Files read (and parsed) by this refresh.
    pub read: usize,
    /// Folders or files the walk could not use.
    pub scan_issues: Vec<ScanIssue>,
    /// Ids used by more than one file.
    pub duplicates: Vec<(String, Vec<String>)>,
    /// Newly indexed memories whose `created` is after `now` (their age counts as zero).
    pub future: Vec<(String, Timestamp)>,
    /// One-line notices (an index rebuilt because it was corrupt or outdated).
    pub notices: Vec<String>,
    /// One-line warnings about something the user should fix (an unusable embedding model).
    pub warnings: Vec<String>,
}

impl RefreshReport {
    /// Adds the counts of files added, updated, removed and touched by `other`.
    pub fn add_counts(&mut self, other: &RefreshReport) {
        self.added += other.added;
        self.updated += other.updated;
        self.removed += other.removed;
        self.touched += other.touched;
    }

    /// Whether the index was written.
    pub fn changed(&self) -> bool {
        self.added + self.updated + self.removed + self.touched > 0
    }

    /// Records a file that could not be read or parsed (as a bad file if its content is bad).
    fn add_bad(&mut self, file: &FileStat, error: Error) {
        // A file too large is found so without reading it; nor is an I/O error
        // (permissions, say) a matter of content.
        if let Error::Parse { source, .. } = &error
            && !matches!(source, crate::format::FormatError::TooLarge { .. })
        {
            self.bad_files.push(BadFile {
                rel: file.rel.clone(),
                size: file.size,
                mtime_ns: file.mtime_ns,
                seen_ns: 0,
                message: error.to_string(),
            });
        }
        self.bad.push(error);
        self.bad_paths.push(file.rel.clone());
    }

    /// Sorts the lists of bad files and future memories, for a stable report.
    fn sort_lists(&mut self) {
        self.bad.sort_by_key(|e| e.to_string());
        self.bad_paths.sort();
        self.bad_files.sort_by(|a, b| a.rel.cmp(&b.rel));
        self.future.sort();
    }
}

/// A file whose content breaks the format, as a refresh read it. A later refresh takes the
/// failure from here instead of reading and parsing the file again while its size and mtime
/// are the same and its mtime was old enough to trust when it was read: a hostile file costs
/// its parse once, not on every recall, and is still reported every time.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BadFile {
    /// Path relative to the root.
    pub rel: String,
    /// Its size when read.
    pub size: u64,
    /// Its mtime when read (ns since the epoch).
    pub mtime_ns: i64,
    /// When it was read, by the file system's clock (ns since the epoch); 0 until the caller
    /// stamps it.
    pub seen_ns: i64,
    /// The failure, as reported (`path:line: reason`).
    pub message: String,
}

impl BadFile {
    /// Whether `file` is this bad file as it was read.
    fn still(&self, file: &FileStat) -> bool {
        self.size == file.size
            && self.mtime_ns == file.mtime_ns
            && store::settled(self.mtime_ns, self.seen_ns)
    }
}

/// How a refresh reads files: the size over which a file is not read, and the bad files
/// known from an earlier refresh.
#[derive(Clone, Copy, Debug)]
pub struct Reading<'a> {
    /// `[limits] max_file_bytes`.
    pub max_file_bytes: u64,
    /// Files that broke the format when last read (see [`BadFile`]).
    pub known_bad: &'a [BadFile],
}

/// Which indexed files a refresh may find gone.
#[derive(Clone, Copy, Debug)]
pub enum Scope<'a> {
    /// The scan covers the whole root: an indexed file it did not find is removed.
    All,
    /// The scan covers only these files: an indexed one among them it did not find is removed.
    Files(&'a rustc_hash::FxHashSet<String>),
    /// The scan covers these folders (relative to the root, ending in `/`, or empty for the
    /// root: every file below them) and these files: an indexed file among them it did not
    /// find is removed.
    Under {
        /// The folders walked.
        folders: &'a [String],
        /// The files stat'ed besides.
        files: &'a rustc_hash::FxHashSet<String>,
    },
}

impl Scope<'_> {
    /// Whether the scan covers the file `rel`.
    fn covers(&self, rel: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Files(files) => files.contains(rel),
            Scope::Under { folders, files } => store::is_under(rel, folders) || files.contains(rel),
        }
    }
}

/// The outcome of reading and parsing one file during a refresh.
enum Outcome {
    /// Read and parsed; `touched` when only its size or mtime changed, not its content (its
    /// document is written again, for the stamp it carries).
    Parsed {
        doc: TantivyDocument,
        entry: Entry,
        created: Timestamp,
        touched: bool,
    },
    /// Exactly as indexed (re-read because its mtime was too recent to trust).
    Same,
    Bad(Error),
}

/// The index writes a refresh found needed, gathered from the outcomes of its reads.
struct Writes<'a> {
    /// Files re-read and found exactly as indexed.
    rechecked: usize,
    /// Manifest entries to set (`Some`) or drop (`None`), by path.
    changes: Vec<(&'a str, Option<Entry>)>,
    /// Paths whose documents are deleted.
    deletes: Vec<&'a str>,
    /// Documents added.
    adds: Vec<TantivyDocument>,
}

impl MemoryIndex {
    /// Brings the index up to date with `scan`, which covers `scope`: reads only new files
    /// and files whose size or mtime changed (or that changed too recently to trust their
    /// mtime), parses them in parallel, and commits once. Bad files are reported and left out;
    /// those of `known_bad` that did not change are reported without being read.
    pub fn refresh(
        &mut self,
        root: &Path,
        scan: Scan,
        scope: Scope,
        reading: Reading,
        now: Timestamp,
        progress: &dyn crate::progress::Progress,
    ) -> Result<RefreshReport> {
        let mut report = RefreshReport { scan_issues: scan.issues, ..Default::default() };
        let Reading { max_file_bytes, known_bad } = reading;
        // Taken out (not copied: 100,000 entries) and put back, changed or not; an error on the
        // way leaves it to be read again from its file. Not read yet, a refresh of some folders
        // or files reads only the entries it needs: those in scope, and the unsettled ones.
        let manifest = match scope {
            Scope::All => self.take_manifest()?,
            _ if self.manifest.get().is_some() => self.take_manifest()?,
            _ => {
                let verified = self.verified_ns;
                let keep = |rel: &str, mtime_ns: i64| {
                    scope.covers(rel) || !store::settled(mtime_ns, verified)
                };
                Manifest::load_where(&self.state_dir, self.place, &keep)
                    .map_err(super::unreadable_manifest)?
            }
        };
        let (mut candidates, known) = self.triage(&scan.files, &manifest, known_bad, &mut report);
        let removed = removed_files(&scan.files, &manifest, scope, known);
        // A refresh that reads records the clock before its first read as the new verification
        // time, so every indexed file not settled then is read too, in scope or not (usually
        // none: files written within the window before the last verification).
        let elsewhere = match scope {
            Scope::All => Vec::new(),
            _ if candidates.is_empty() => Vec::new(),
            _ => self.unsettled_elsewhere(root, &manifest, scope),
        };
        let mut untouched = RefreshReport::default();
        candidates.extend(self.triage(&elsewhere, &manifest, &[], &mut untouched).0);
        report.read = candidates.len();
        // A later clock (the commit's) could trust a file that changed after its read within
        // one tick of its mtime.
        let verified = if candidates.is_empty() {
            self.verified_ns
        } else {
            super::clock_ns(&self.state_dir)?.max(self.verified_ns)
        };
        let outcomes = read_all(root, &candidates, max_file_bytes, &self.fields, progress);
        let writes = tally(outcomes, &removed, now, &mut report);
        report.sort_lists();
        let rechecked = writes.rechecked;
        if report.changed() {
            report.duplicates = self.write_changes(manifest, &removed, writes, verified)?;
        } else if !manifest.partial {
            self.manifest = std::sync::OnceLock::from(manifest);
        }
        if !report.changed() && rechecked > 0 && verified > self.verified_ns {
            self.record_verified(verified);
        }
        Ok(report)
    }

    /// The indexed files outside `scope` not settled at the last verification, as they are
    /// now (those gone are left out: a file is trusted only as a stat finds it).
    fn unsettled_elsewhere(&self, root: &Path, manifest: &Manifest, scope: Scope) -> Vec<FileStat> {
        manifest
            .files
            .iter()
            .filter(|(rel, e)| !store::settled(e.mtime_ns, self.verified_ns) && !scope.covers(rel))
            .filter_map(|(rel, _)| FileStat::of(root, rel))
            .collect()
    }

    /// Sorts the scanned files into unchanged, still bad, and to be read (with their entries).
    fn triage<'f, 'm>(
        &self,
        files: &'f [FileStat],
        manifest: &'m Manifest,
        known_bad: &[BadFile],
        report: &mut RefreshReport,
    ) -> (Vec<(&'f FileStat, Option<&'m Entry>)>, usize) {
        let known_bad: rustc_hash::FxHashMap<&str, &BadFile> =
            known_bad.iter().map(|b| (b.rel.as_str(), b)).collect();
        let mut candidates: Vec<(&FileStat, Option<&Entry>)> = Vec::new();
        let mut known = 0;
        for file in files {
            let previous = manifest.files.get(&file.rel);
            known += usize::from(previous.is_some());
            match previous {
                Some(e)
                    if e.size == file.size
                        && e.mtime_ns == file.mtime_ns
                        && store::settled(e.mtime_ns, self.verified_ns) =>
                {
                    report.unchanged += 1
                }
                None => match known_bad.get(file.rel.as_str()).filter(|b| b.still(file)) {
                    Some(bad) => {
                        let path = file.rel.clone().into();
                        report.bad.push(Error::StillBad { path, message: bad.message.clone() });
                        report.bad_paths.push(file.rel.clone());
                        report.bad_files.push((*bad).clone());
                    }
                    None => candidates.push((file, None)),
                },
                _ => candidates.push((file, previous)),
            }
        }
        (candidates, known)
    }

    /// Applies `writes` to `manifest`, commits it with the index, and returns duplicate ids.
    fn write_changes(
        &mut self,
        manifest: Manifest,
        removed: &[String],
        writes: Writes,
        verified: i64,
    ) -> Result<Vec<(String, Vec<String>)>> {
        let mut changes: manifest::Changes =
            removed.iter().map(|rel| (rel.clone(), None)).collect();
        changes.extend(writes.changes.into_iter().map(|(rel, entry)| (rel.to_string(), entry)));
        // Only an added or changed memory can bring a duplicate id: few changes look up their
        // ids in the index (`mem stats` and `mem index` ask for every duplicate anyway).
        let mut ids: Vec<String> = Vec::new();
        for entry in changes.iter().filter_map(|(_, entry)| entry.as_ref()) {
            if ids.len() > FEW_CHANGES {
                break;
            }
            ids.push(entry.id.clone());
        }
        let record = manifest::record(&changes);
        let mut next =
            if manifest.partial && manifest::compact(self.place, self.base_bytes, record.len()) {
                // The commit writes a new base, which holds every entry: the whole manifest.
                self.take_manifest()?
            } else {
                manifest
            };
        next.apply(changes);
        self.commit(next, &record, (&writes.deletes, writes.adds), verified)?;
        if ids.len() > FEW_CHANGES {
            return Ok(self.manifest()?.duplicate_ids());
        }
        ids.sort_unstable();
        ids.dedup();
        let mut duplicates = Vec::new();
        for id in ids {
            let paths = self.paths_of(&id)?;
            if paths.len() > 1 {
                duplicates.push((id, paths));
            }
        }
        Ok(duplicates)
    }

    /// Records a later verification time for this index state (files re-hashed and found as
    /// indexed), so that the next refresh, in this process or another, trusts them.
    fn record_verified(&mut self, verified: i64) {
        self.verified_ns = verified;
        let (instance, generation) = self.version();
        let text = format!("{instance} {generation} {verified}\n");
        // Derived: losing it (or failing to write it) only costs re-hashing those files again.
        let _best_effort =
            store::write_cache(&self.state_dir.join(VERIFIED_STAMP), text.as_bytes());
    }

    /// Commits the documents deleted and added with the manifest `next`, which is the current
    /// one with the changes of `record` (see [`manifest::record`]) applied, and the
    /// verification time `verified`: the record is appended to the manifest's log, or `next`
    /// (never partial then) written as a new base when the log would outgrow a quarter of its
    /// base.
    fn commit(
        &mut self,
        next: Manifest,
        record: &[u8],
        (deletes, adds): (&[&str], Vec<TantivyDocument>),
        verified: i64,
    ) -> Result<()> {
        let threads = if adds.len() >= 2_000 { 2 } else { 1 };
        let mut writer = super::writer(&self.index, threads)?;
        // A writer killed before its commit leaves files the last commit does not use (a
        // `.del` file of the next opstamp among them, which this commit would try to create
        // again): they go first. Writers take turns under the root's lock.
        writer.garbage_collect_files().wait()?;
        for rel in deletes {
            writer.delete_term(Term::from_field_text(self.fields.path, rel));
        }
        for doc in adds {
            writer.add_document(doc)?;
        }
        let generation = self.generation + 1;
        let (place, base_bytes) = if manifest::compact(self.place, self.base_bytes, record.len()) {
            let bytes = next.save(&self.state_dir, generation)?;
            (manifest::Place { base: generation, log_len: 0 }, bytes)
        } else {
            let log_len = manifest::append(&self.state_dir, self.place, record)?;
            (manifest::Place { base: self.place.base, log_len }, self.base_bytes)
        };
        let mut commit = writer.prepare_commit()?;
        commit.set_payload(&payload(self.instance, generation, place, verified));
        commit.commit()?;
        writer.wait_merging_threads()?;
        remove_manifests(&self.state_dir, Some(place.base))?;
        self.verified_ns = verified;
        self.place = place;
        self.base_bytes = base_bytes;
        self.manifest =
            if next.partial { std::sync::OnceLock::new() } else { std::sync::OnceLock::from(next) };
        self.generation = generation;
        self.reader.reload()?;
        Ok(())
    }
}

/// The indexed files within `scope` that the scan did not find, of which it found `known`.
fn removed_files(
    files: &[FileStat],
    manifest: &Manifest,
    scope: Scope,
    known: usize,
) -> Vec<String> {
    let seen = || -> rustc_hash::FxHashSet<&str> { files.iter().map(|f| f.rel.as_str()).collect() };
    match scope {
        // Every indexed file was seen unless fewer known files were found than are indexed.
        Scope::All if known == manifest.files.len() => Vec::new(),
        Scope::All => {
            let seen = seen();
            manifest.files.keys().filter(|rel| !seen.contains(&rel[..])).cloned().collect()
        }
        Scope::Under { .. } => {
            let in_scope = |rel: &str| scope.covers(rel);
            let indexed = manifest.files.keys().filter(|rel| in_scope(rel)).count();
            // Every indexed file in scope was seen unless fewer were found than are indexed.
            if indexed == known {
                return Vec::new();
            }
            let seen = seen();
            let mut gone: Vec<String> = manifest
                .files
                .keys()
                .filter(|rel| in_scope(rel) && !seen.contains(&rel[..]))
                .cloned()
                .collect();
            gone.sort();
            gone
        }
        Scope::Files(files) => {
            let seen = seen();
            let mut gone: Vec<String> = files
                .iter()
                .filter(|rel| manifest.files.contains_key(*rel) && !seen.contains(&rel[..]))
                .cloned()
                .collect();
            gone.sort();
            gone
        }
    }
}

/// Reads and parses the candidate files in parallel, with whether each was indexed.
fn read_all<'a>(
    root: &Path,
    candidates: &[(&'a FileStat, Option<&Entry>)],
    max_file_bytes: u64,
    fields: &Fields,
    progress: &dyn crate::progress::Progress,
) -> Vec<(&'a FileStat, bool, Outcome)> {
    progress.set_length(candidates.len() as u64);
    let outcomes = candidates
        .par_iter()
        .map(|(file, previous)| {
            let outcome = read_one(root, file, *previous, max_file_bytes, fields);
            progress.inc(1);
            (*file, previous.is_some(), outcome)
        })
        .collect();
    progress.finish();
    outcomes
}

/// Counts the outcomes into `report` and gathers the index writes they call for.
fn tally<'a>(
    outcomes: Vec<(&'a FileStat, bool, Outcome)>,
    removed: &'a [String],
    now: Timestamp,
    report: &mut RefreshReport,
) -> Writes<'a> {
    let mut writes = Writes {
        rechecked: 0,
        changes: Vec::new(),
        deletes: removed.iter().map(String::as_str).collect(),
        adds: Vec::new(),
    };
    for (file, was_indexed, outcome) in outcomes {
        let rel = file.rel.as_str();
        match outcome {
            Outcome::Same => {
                report.unchanged += 1;
                writes.rechecked += 1;
            }
            Outcome::Parsed { doc, entry, created, touched } => {
                if touched {
                    report.touched += 1;
                    writes.deletes.push(rel);
                } else if was_indexed {
                    report.updated += 1;
                    writes.deletes.push(rel);
                } else {
                    report.added += 1;
                }
                if created > now && !touched {
                    report.future.push((rel.to_string(), created));
                }
                writes.changes.push((rel, Some(entry)));
                writes.adds.push(doc);
            }
            Outcome::Bad(error) => {
                if was_indexed {
                    report.removed += 1;
                    writes.deletes.push(rel);
                    writes.changes.push((rel, None));
                }
                report.add_bad(file, error);
            }
        }
    }
    report.removed += removed.len();
    writes
}

/// Reads, hashes and parses one candidate file.
fn read_one(
    root: &Path,
    file: &FileStat,
    previous: Option<&Entry>,
    max_file_bytes: u64,
    fields: &Fields,
) -> Outcome {
    let path = root.join(&file.rel);
    let bytes = match read_limited(&path, max_file_bytes) {
        Ok(bytes) => bytes,
        Err(ReadError::Io(e)) => return Outcome::Bad(Error::io(&file.rel, e)),
        Err(ReadError::Format(source)) => {
            return Outcome::Bad(Error::Parse { path: file.rel.clone().into(), source });
        }
    };
    let hash = content_hash(&bytes);
    let same = previous.filter(|p| p.hash == hash);
    if same.is_some_and(|p| p.size == file.size && p.mtime_ns == file.mtime_ns) {
        return Outcome::Same;
    }
    match Memory::parse_bytes(&bytes) {
        Ok(memory) => {
            let entry = Entry {
                size: file.size,
                mtime_ns: file.mtime_ns,
                hash,
                id: memory.id().to_string(),
            };
            let stamp = Stamp { size: file.size, mtime_ns: file.mtime_ns };
            Outcome::Parsed {
                doc: fields.document(&file.rel, stamp, &memory),
                entry,
                created: memory.created(),
                touched: same.is_some(),
            }
        }
        Err(source) => Outcome::Bad(Error::Parse { path: file.rel.clone().into(), source }),
    }
}

#[cfg(test)]
mod tests;
