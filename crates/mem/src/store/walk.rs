//! The walk of a root: which files are memories, every folder's stamp, and the symlink loops
//! it reports instead of following.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::{ARCHIVE_DIR, TEMP_PREFIX};

/// One Markdown file found under the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStat {
    /// Path relative to the root, `/`-separated.
    pub rel: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
}

impl FileStat {
    /// The file at `rel` as `meta` describes it.
    pub fn new(rel: String, meta: &std::fs::Metadata) -> FileStat {
        FileStat { rel, size: meta.len(), mtime_ns: mtime_ns(meta) }
    }

    /// The regular file (or symlink to one) at `rel` under `root`, if there is one.
    pub fn of(root: &Path, rel: &str) -> Option<FileStat> {
        let meta = std::fs::metadata(root.join(rel)).ok().filter(|m| m.is_file())?;
        Some(FileStat::new(rel.to_string(), &meta))
    }
}

/// A file or folder the walk could not use, with the reason.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ScanIssue {
    /// Where, relative to the root when possible.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// The result of walking a root.
#[derive(Debug, Default)]
pub struct Scan {
    /// Memory files, in walk order.
    pub files: Vec<FileStat>,
    /// Everything that could not be walked (symlink loops, unreadable folders...).
    pub issues: Vec<ScanIssue>,
    /// Temporary files of [`write_atomic`] (`.mem-tmp-*`) left by an interrupted write, as
    /// (path relative to the root, modification time in ns since the epoch).
    pub leftovers: Vec<(String, i64)>,
    /// Every folder walked, as it was just before its entries were read.
    pub dirs: Vec<DirStamp>,
}

/// A folder of the root as the walk found it: a file added, removed or renamed in it changes
/// its mtime, and the names it holds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DirStamp {
    /// Path relative to the root: empty for the root, else ending in `/`.
    pub rel: String,
    /// Modification time (ns since the epoch), taken before its entries were read.
    pub mtime_ns: i64,
    /// An order-free hash of the names in it that the walk looks at (see [`names_hash`]).
    pub names: u64,
}

/// Whether the walk looks at an entry of the folder `rel_dir` named `name`: not hidden, not
/// `archive/` at the top, not a temporary file of [`write_atomic`].
fn walked(rel_dir: &str, name: &str) -> bool {
    !(name.starts_with('.') || (rel_dir.is_empty() && name == ARCHIVE_DIR))
}

/// An order-free hash of the names of `dir` (its path relative to the root is `rel_dir`) that
/// the walk looks at, read without a stat; `None` when it cannot be read.
pub fn names_hash(dir: &Path, rel_dir: &str) -> Option<u64> {
    let mut hash = 0u64;
    for entry in std::fs::read_dir(dir).ok()? {
        let name = entry.ok()?.file_name();
        let name = name.to_string_lossy();
        if walked(rel_dir, &name) {
            hash = hash.wrapping_add(name_hash(&name));
        }
    }
    Some(hash)
}

fn name_hash(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    name.hash(&mut h);
    h.finish()
}

/// Whether the path `rel` (relative to the root) lies in one of `folders` (relative to the
/// root, each ending in `/`, or empty for the root itself).
pub fn is_under(rel: &str, folders: &[String]) -> bool {
    folders.iter().any(|folder| rel.starts_with(folder.as_str()))
}

/// Whether a path relative to the root is a live memory file's place: a `.md` file not under
/// `.mem/`, `archive/` or any hidden folder.
pub fn is_memory_path(rel: &Path) -> bool {
    let mut components = rel.components().peekable();
    let mut first = true;
    while let Some(c) = components.next() {
        let name = c.as_os_str().to_string_lossy();
        let last = components.peek().is_none();
        if name.starts_with('.') || (first && !last && name == ARCHIVE_DIR) {
            return false;
        }
        if last {
            return name.ends_with(".md");
        }
        first = false;
    }
    false
}

/// Walks `root` for memory files (see [`is_memory_path`]), folders in parallel, following
/// symlinks and reporting loops instead of looping. Files are stat'ed relative to their
/// folder's handle, which is what keeps a refresh of 10,000 files cheap.
pub fn scan(root: &Path) -> Scan {
    scan_under(root, "")
}

/// Walks the folder `rel_dir` of `root` (empty, or ending in `/`) and everything below it,
/// as [`scan`] walks the root.
pub fn scan_under(root: &Path, rel_dir: &str) -> Scan {
    let dir = root.join(rel_dir);
    // The folders from the root down, for symlink loop checks as a walk from the root has.
    let mut chain: Vec<DirId> = Vec::new();
    let mut above = root.to_path_buf();
    for part in Path::new(rel_dir).components() {
        chain.extend(dir_id(&above, &std::fs::metadata(&above)));
        above.push(part);
    }
    let meta = std::fs::metadata(&dir);
    let mtime = meta.as_ref().map(mtime_ns).unwrap_or(0);
    chain.extend(dir_id(&dir, &meta));
    let mut scan = scan_dir(root, &dir, rel_dir, &chain, mtime);
    scan.issues.sort_by(|a, b| a.path.cmp(&b.path));
    scan
}

/// Above this many files, a folder's files are stat'ed on every core.
const PARALLEL_STATS: usize = 512;

/// Identity of a folder (device, inode), to detect symlink loops.
type DirId = (u64, u64);

#[cfg(unix)]
fn dir_id(_path: &Path, meta: &std::io::Result<std::fs::Metadata>) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    meta.as_ref().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(path: &Path, _meta: &std::io::Result<std::fs::Metadata>) -> Option<DirId> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path).ok()?.hash(&mut h);
    Some((0, h.finish()))
}

/// Scans one folder, whose path relative to the root is `rel_dir` (empty, or ending in `/`);
/// `ancestors` are the folders above it (itself included), for loop checks.
/// `dir_mtime` is the folder's mtime, taken before this reads it.
fn scan_dir(root: &Path, dir: &Path, rel_dir: &str, ancestors: &[DirId], dir_mtime: i64) -> Scan {
    let mut scan = Scan::default();
    let mut names = 0u64;
    let issue = |path: &Path, message: String| ScanIssue { path: relative(root, path), message };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            scan.issues.push(issue(dir, e.to_string()));
            return scan;
        }
    };
    let mut subdirs: Vec<(PathBuf, String, std::io::Result<std::fs::Metadata>)> = Vec::new();
    let mut plain: Vec<(String, std::fs::DirEntry)> = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                scan.issues.push(issue(dir, e.to_string()));
                continue;
            }
        };
        let name = entry.file_name();
        let lossy = name.to_string_lossy();
        if lossy.starts_with(TEMP_PREFIX) {
            if let Ok(meta) = entry.metadata()
                && meta.is_file()
            {
                scan.leftovers.push((format!("{rel_dir}{lossy}"), mtime_ns(&meta)));
            }
            continue;
        }
        if !walked(rel_dir, &lossy) {
            continue;
        }
        names = names.wrapping_add(name_hash(&lossy));
        let Ok(file_type) = entry.file_type() else { continue };
        let is_md = lossy.ends_with(".md");
        // The full path is built only where it is needed: most entries are plain files.
        let Some(name) = name.to_str() else {
            if is_md || file_type.is_dir() {
                let message = "name is not valid UTF-8; rename it to index it".to_string();
                scan.issues.push(issue(&entry.path(), message));
            }
            continue;
        };
        let rel = format!("{rel_dir}{name}");
        if file_type.is_symlink() {
            let path = entry.path();
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => subdirs.push((path, rel, Ok(m))),
                Ok(m) if m.is_file() && is_md => scan.files.push(FileStat::new(rel, &m)),
                Ok(_) => {}
                Err(e) if is_md => {
                    scan.issues.push(issue(&path, format!("broken symlink: {e}")));
                }
                Err(_) => {}
            }
        } else if file_type.is_dir() {
            subdirs.push((entry.path(), rel, entry.metadata()));
        } else if file_type.is_file() && is_md {
            plain.push((rel, entry));
        }
    }
    // Plain files are stat'ed relative to the folder's handle; a large folder's stats (a
    // folder walked again after a change holds 100,000 files at worst) are shared out.
    let stat = |(rel, entry): (String, std::fs::DirEntry)| match entry.metadata() {
        Ok(meta) => Ok(FileStat::new(rel, &meta)),
        Err(e) => Err(issue(&entry.path(), e.to_string())),
    };
    let stated: Vec<Result<FileStat, ScanIssue>> = if plain.len() > PARALLEL_STATS {
        plain.into_par_iter().map(stat).collect()
    } else {
        plain.into_iter().map(stat).collect()
    };
    for stated in stated {
        match stated {
            Ok(file) => scan.files.push(file),
            Err(problem) => scan.issues.push(problem),
        }
    }
    let children: Vec<Scan> = subdirs
        .into_par_iter()
        .map(|(path, rel, meta)| {
            let Some(id) = dir_id(&path, &meta) else {
                let message = meta.err().map(|e| e.to_string()).unwrap_or_default();
                return Scan { issues: vec![issue(&path, message)], ..Scan::default() };
            };
            if let Some(pos) = ancestors.iter().position(|a| *a == id) {
                let target = ancestors_path(root, dir, ancestors.len() - 1 - pos);
                let message =
                    format!("symlink loop: points back to {}; skipped", display_rel(&target));
                return Scan { issues: vec![issue(&path, message)], ..Scan::default() };
            }
            let mut chain = ancestors.to_vec();
            chain.push(id);
            let mtime = meta.as_ref().map(mtime_ns).unwrap_or(0);
            scan_dir(root, &path, &format!("{rel}/"), &chain, mtime)
        })
        .collect();
    scan.dirs.push(DirStamp { rel: rel_dir.to_string(), mtime_ns: dir_mtime, names });
    for child in children {
        scan.files.extend(child.files);
        scan.issues.extend(child.issues);
        scan.leftovers.extend(child.leftovers);
        scan.dirs.extend(child.dirs);
    }
    scan
}

/// The folder `up` levels above `dir` (0 is `dir` itself), relative to `root`.
fn ancestors_path(root: &Path, dir: &Path, up: usize) -> PathBuf {
    let target = dir.ancestors().nth(up).unwrap_or(root);
    relative(root, target)
}

fn display_rel(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        "the memory root".to_string()
    } else {
        rel.display().to_string()
    }
}

/// Modification time of `meta` in nanoseconds since the Unix epoch (0 if unknown).
/// A file as a stat saw it: what tells an unchanged file from a changed one (the index's
/// manifest, the vector file, the usage files behind `.mem/last-used.bin`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Stamp {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, ns since the epoch (see [`mtime_ns`]).
    pub mtime_ns: i64,
}

impl Stamp {
    /// The stamp of a file whose metadata is `meta`.
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        Stamp { size: meta.len(), mtime_ns: mtime_ns(meta) }
    }
}

/// How long after `mtime_ns` a file or folder may still change without its mtime changing:
/// the file system's timestamp granularity, with a margin. Whole milliseconds or coarser (FAT
/// stamps 2 s, HFS+ 1 s, exFAT 10 ms): 2 s. Finer (ext4, XFS, Btrfs, tmpfs, APFS, NTFS): 100 ms,
/// ten times the longest tick of the clock Linux stamps with (HZ = 100). A finer file system
/// stamps a whole millisecond once in a million times, and then only waits the longer window.
pub fn racy_window_ns(mtime_ns: i64) -> i64 {
    if mtime_ns % 1_000_000 == 0 { 2_000_000_000 } else { 100_000_000 }
}

/// Whether something stamped `mtime_ns` and checked at `checked_ns` (the same clock) was checked
/// late enough that any later change gives it another mtime.
pub fn settled(mtime_ns: i64, checked_ns: i64) -> bool {
    mtime_ns.saturating_add(racy_window_ns(mtime_ns)) < checked_ns
}

/// A file's modification time in ns since the epoch (0 when the system cannot tell, or before
/// the epoch).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `path` relative to `root`, as valid UTF-8: a name that is not is shown lossily (an issue
/// names it for people, and is stored in `.mem/`, which takes only UTF-8).
fn relative(root: &Path, path: &Path) -> PathBuf {
    PathBuf::from(path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned())
}
