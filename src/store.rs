//! The memory root on disk: finding it, creating it, walking its Markdown files, and writing
//! files atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::config::{CONFIG_FILE, DEFAULT_CONFIG};
use crate::format::FormatError;
use crate::{Error, Result};

/// Folder under the root that holds derived state (index, caches); safe to delete.
pub const STATE_DIR: &str = ".mem";
/// Folder under the root whose memories are archived, not live.
pub const ARCHIVE_DIR: &str = "archive";
/// The folder of a repository that holds its project memory root (`mem init --project`).
pub const PROJECT_DIR: &str = ".memory";

/// Which of the two roots searched together a memory lives in (see
/// [`crate::engine::Layers`]): the project's, or the user's, which holds what spans projects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// The project's root (`.memory/`, or the root the command found or was given).
    Project,
    /// The per-user root named in the user configuration file (`[layers] user`).
    User,
}

impl Layer {
    /// The layer's name, as `--layer` takes it and JSON shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Project => "project",
            Layer::User => "user",
        }
    }
}

impl std::str::FromStr for Layer {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Layer, String> {
        match s {
            "project" => Ok(Layer::Project),
            "user" => Ok(Layer::User),
            other => Err(format!("unknown layer {other:?}: project or user")),
        }
    }
}

/// How the memory root was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootSource {
    /// `--dir` or `$MEM_DIR`.
    Explicit,
    /// The nearest ancestor of the working directory with a `mem.toml`, or with a project
    /// folder ([`PROJECT_DIR`]) holding one.
    Ancestor,
    /// The per-user default root.
    Default,
}

/// Picks the memory root: `explicit` if given (it must exist), else the nearest ancestor of
/// `cwd` that is a root (holds a `mem.toml`) or holds a project root (`.memory/mem.toml`, which
/// wins over a `mem.toml` beside it), else `default` (created on first use).
pub fn find_root(
    explicit: Option<&Path>,
    cwd: &Path,
    default: Option<PathBuf>,
) -> Result<(PathBuf, RootSource)> {
    if let Some(dir) = explicit {
        let dir = if dir.is_absolute() { dir.to_path_buf() } else { cwd.join(dir) };
        if dir.is_file() {
            return Err(Error::RootIsFile(dir));
        }
        if !dir.is_dir() {
            return Err(Error::NoRoot(dir));
        }
        return Ok((dir, RootSource::Explicit));
    }
    for dir in cwd.ancestors() {
        let project = dir.join(PROJECT_DIR);
        if project.join(CONFIG_FILE).is_file() {
            return Ok((project, RootSource::Ancestor));
        }
        if dir.join(CONFIG_FILE).is_file() {
            return Ok((dir.to_path_buf(), RootSource::Ancestor));
        }
    }
    let default = default.ok_or(Error::NoRootFound)?;
    Ok((default, RootSource::Default))
}

/// The top of the project `cwd` belongs to: the nearest ancestor holding `.git` (a folder, or
/// the file of a worktree), else `cwd` itself.
pub fn project_top(cwd: &Path) -> PathBuf {
    cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd).to_path_buf()
}

/// Whether `dir` is the top of a git repository (its memory root would take in the
/// repository's own Markdown).
pub fn is_repository_top(dir: &Path) -> bool {
    dir.join(".git").exists()
}

/// What `init` did.
#[derive(Debug, Default)]
pub struct InitReport {
    /// `mem.toml` was written (it did not exist).
    pub wrote_config: bool,
    /// `.gitignore` was written or extended with `.mem/`.
    pub wrote_gitignore: bool,
}

/// Makes `dir` a memory root: the folder, a commented `mem.toml`, and `.mem/` in `.gitignore`.
/// Existing files are kept; running it twice changes nothing.
pub fn init(dir: &Path) -> Result<InitReport> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut report = InitReport::default();
    let config = dir.join(CONFIG_FILE);
    if !config.exists() {
        write_atomic(&config, DEFAULT_CONFIG.as_bytes(), Overwrite::No)?;
        report.wrote_config = true;
    }
    let gitignore = dir.join(".gitignore");
    let line = format!("{STATE_DIR}/");
    match std::fs::read_to_string(&gitignore) {
        Ok(text) => {
            if !text.lines().any(|l| l.trim() == line || l.trim() == STATE_DIR) {
                let sep = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
                write_atomic(
                    &gitignore,
                    format!("{text}{sep}{line}\n").as_bytes(),
                    Overwrite::Yes,
                )?;
                report.wrote_gitignore = true;
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            write_atomic(&gitignore, format!("{line}\n").as_bytes(), Overwrite::No)?;
            report.wrote_gitignore = true;
        }
        Err(e) => return Err(Error::io(gitignore, e)),
    }
    Ok(report)
}

/// Name prefix of the temporary files [`write_atomic`] writes next to their target.
pub const TEMP_PREFIX: &str = ".mem-tmp-";

/// Whether [`write_atomic`] may replace an existing file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overwrite {
    /// Replace the file if it exists.
    Yes,
    /// Fail if the file exists.
    No,
}

/// The file `rel` of `root` (which may not exist yet) when it really lies inside the root; a
/// symbolic link on its way that leaves the root is [`Error::OutsideRoot`]. Every write, move
/// and delete of a memory goes through this check.
pub fn inside_root(root: &Path, rel: &str) -> Result<PathBuf> {
    let path = root.join(rel);
    let real_root = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
    // The longest part of the path that exists, resolved, then the rest as written.
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut real = std::fs::canonicalize(existing).map_err(|e| Error::io(existing, e))?;
    real.extend(rest.iter().rev());
    if real.starts_with(&real_root) { Ok(path) } else { Err(Error::OutsideRoot(rel.into())) }
}

/// Writes `contents` to `path` so that readers see the old file or the new one, never a part:
/// a temporary file in the same folder, fsync, rename, fsync of the folder.
/// Replacing a file keeps its permissions, and writes through a symlink to the file it names.
pub fn write_atomic(path: &Path, contents: &[u8], overwrite: Overwrite) -> Result<()> {
    let resolved;
    let mut keep_permissions = None;
    let path = match std::fs::symlink_metadata(path) {
        Ok(meta) if overwrite == Overwrite::Yes => {
            let target = if meta.file_type().is_symlink() {
                resolved = std::fs::canonicalize(path).map_err(|e| Error::io(path, e))?;
                resolved.as_path()
            } else {
                path
            };
            keep_permissions = std::fs::metadata(target).ok().map(|m| m.permissions());
            target
        }
        _ => path,
    };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    #[cfg(unix)]
    {
        // Like any new file: read-write for all, as far as the umask allows.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(|e| Error::io(dir, e))?;
    if let Some(permissions) = keep_permissions {
        tmp.as_file().set_permissions(permissions).map_err(|e| Error::io(tmp.path(), e))?;
    }
    tmp.write_all(contents).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.as_file().sync_all().map_err(|e| Error::io(tmp.path(), e))?;
    let persisted = match overwrite {
        Overwrite::Yes => tmp.persist(path),
        Overwrite::No => tmp.persist_noclobber(path),
    };
    persisted.map_err(|e| match e.error.kind() {
        std::io::ErrorKind::AlreadyExists => Error::Exists(path.to_path_buf()),
        _ => Error::io(path, e.error),
    })?;
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))?;
    Ok(())
}

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

/// A file or folder the walk could not use, with the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
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
        let path = entry.path();
        let Some(name) = name.to_str() else {
            if is_md || file_type.is_dir() {
                let message = "name is not valid UTF-8; rename it to index it".to_string();
                scan.issues.push(issue(&path, message));
            }
            continue;
        };
        let rel = format!("{rel_dir}{name}");
        let meta = if file_type.is_symlink() {
            let meta = std::fs::metadata(&path);
            match &meta {
                Ok(m) if m.is_dir() => {
                    subdirs.push((path, rel, meta));
                    continue;
                }
                Ok(m) if m.is_file() && is_md => meta,
                Ok(_) => continue,
                Err(e) => {
                    if is_md {
                        scan.issues.push(issue(&path, format!("broken symlink: {e}")));
                    }
                    continue;
                }
            }
        } else if file_type.is_dir() {
            let meta = entry.metadata();
            subdirs.push((path, rel, meta));
            continue;
        } else if file_type.is_file() && is_md {
            entry.metadata()
        } else {
            continue;
        };
        match meta {
            Ok(meta) => {
                scan.files.push(FileStat { rel, size: meta.len(), mtime_ns: mtime_ns(&meta) })
            }
            Err(e) => scan.issues.push(issue(&path, e.to_string())),
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
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

/// Reads a memory file's bytes, refusing files over `limit` bytes before reading them.
pub fn read_limited(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, ReadError> {
    let size = std::fs::metadata(path).map_err(ReadError::Io)?.len();
    if size > limit {
        return Err(ReadError::Format(FormatError::TooLarge { size, limit }));
    }
    std::fs::read(path).map_err(ReadError::Io)
}

/// Why a memory file could not be read.
#[derive(Debug)]
pub enum ReadError {
    /// The file system refused.
    Io(std::io::Error),
    /// The file breaks the format contract.
    Format(FormatError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_folder_is_found_from_any_subfolder_and_wins_over_a_root_beside_it() {
        let repo = tempfile::tempdir().unwrap();
        let deep = repo.path().join("src/a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        assert_eq!(project_top(&deep), repo.path());
        assert!(matches!(find_root(None, &deep, None), Err(Error::NoRootFound)));
        std::fs::write(repo.path().join(CONFIG_FILE), "").unwrap();
        assert_eq!(find_root(None, &deep, None).unwrap().0, repo.path());
        init(&repo.path().join(PROJECT_DIR)).unwrap();
        let (root, source) = find_root(None, &deep, None).unwrap();
        assert_eq!((root, source), (repo.path().join(PROJECT_DIR), RootSource::Ancestor));
        // Inside the project folder, it is the nearest root too.
        let inside = repo.path().join(PROJECT_DIR).join("notes");
        std::fs::create_dir(&inside).unwrap();
        assert_eq!(find_root(None, &inside, None).unwrap().0, repo.path().join(PROJECT_DIR));
    }

    #[test]
    fn memory_paths_skip_state_archive_and_hidden_folders() {
        for yes in ["a.md", "notes/a.md", "deep/er/a.md", "sub/archive/a.md"] {
            assert!(is_memory_path(Path::new(yes)), "{yes}");
        }
        for no in [".mem/a.md", "archive/a.md", ".git/x.md", "a/.hidden/b.md", "a.txt", ".a.md"] {
            assert!(!is_memory_path(Path::new(no)), "{no}");
        }
    }

    #[test]
    fn scan_agrees_with_is_memory_path() {
        let dir = tempfile::tempdir().unwrap();
        for p in
            ["a.md", "n/b.md", "archive/c.md", ".mem/d.md", "n/.x/e.md", "f.txt", "n/archive/g.md"]
        {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x").unwrap();
        }
        let mut found: Vec<_> = scan(dir.path()).files.into_iter().map(|f| f.rel).collect();
        found.sort();
        assert_eq!(found, ["a.md", "n/archive/g.md", "n/b.md"]);
    }

    #[test]
    fn atomic_write_without_overwrite_refuses_existing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.md");
        write_atomic(&p, b"one", Overwrite::No).unwrap();
        assert!(write_atomic(&p, b"two", Overwrite::No).is_err());
        write_atomic(&p, b"three", Overwrite::Yes).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "three");
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn init_is_idempotent_and_extends_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target").unwrap();
        let first = init(dir.path()).unwrap();
        assert!(first.wrote_config && first.wrote_gitignore);
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
            "target\n.mem/\n"
        );
        let second = init(dir.path()).unwrap();
        assert!(!second.wrote_config && !second.wrote_gitignore);
    }
}
