//! The memory root on disk: finding it, creating it, walking its Markdown files, and writing
//! files atomically.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::config::{CONFIG_FILE, DEFAULT_CONFIG};

mod walk;
pub mod worktree;

pub use self::walk::{
    DirStamp, FileStat, Scan, ScanIssue, Stamp, is_memory_path, is_under, mtime_ns, names_hash,
    racy_window_ns, scan, scan_under, settled,
};
use crate::format::FormatError;
use crate::{Error, Result};

/// Folder under the root that holds derived state (index, caches); safe to delete.
pub const STATE_DIR: &str = ".mem";
/// Folder under the root whose memories are archived, not live.
pub const ARCHIVE_DIR: &str = "archive";
/// The folder of a repository that holds its project memory root (`mem init --project`).
pub const PROJECT_DIR: &str = ".memory";

/// Which of the roots searched together a memory lives in (see [`crate::engine::Layers`]):
/// the project's, the user's, which holds what spans projects, or an agent's own memories,
/// read only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// The project's root (`.memory/`, or the root the command found or was given).
    Project,
    /// The per-user root named in the user configuration file (`[layers] user`).
    User,
    /// An agent's own memories ([`crate::agent::MemorySpec`]): read only, indexed into the
    /// root's `.mem/native/<layer>/`.
    Native(crate::agent::Agent),
}

impl Layer {
    /// The layer's name, as `--layer` takes it and JSON shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Project => "project",
            Layer::User => "user",
            Layer::Native(agent) => agent.spec().memory.map_or(agent.name(), |m| m.layer),
        }
    }

    /// The name of every layer recall can search: `project`, `user`, then each agent's own
    /// memories (the layer names of the agents' specs).
    pub fn names() -> Vec<&'static str> {
        let natives =
            crate::agent::Agent::ALL.into_iter().filter_map(|a| Some(a.spec().memory?.layer));
        ["project", "user"].into_iter().chain(natives).collect()
    }

    /// Whether mem writes to this layer (an agent's own memories it only reads).
    pub fn writable(self) -> bool {
        !matches!(self, Layer::Native(_))
    }
}

impl serde::Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::str::FromStr for Layer {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Layer, String> {
        match s {
            "project" => Ok(Layer::Project),
            "user" => Ok(Layer::User),
            other => crate::agent::Agent::of_layer(other).map(Layer::Native).ok_or_else(|| {
                let natives: Vec<&str> = crate::agent::Agent::ALL
                    .into_iter()
                    .filter_map(|a| Some(a.spec().memory?.layer))
                    .collect();
                format!("unknown layer {other:?}: project, user or {}", natives.join(", "))
            }),
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
/// wins over a `mem.toml` beside it), a linked git worktree's being the main worktree's
/// ([`worktree::shared_root`]), else `default` (created on first use).
pub fn find_root(
    explicit: Option<&Path>,
    cwd: &Path,
    default: Option<PathBuf>,
) -> Result<(PathBuf, RootSource)> {
    find_root_with(explicit, cwd, default, &|_| true)
}

/// [`find_root`], a linked worktree's shared root taken only when `accept` takes it (the
/// owner check of `open::locate`): else the worktree's own root is looked for, as in a
/// repository without worktrees.
pub fn find_root_with(
    explicit: Option<&Path>,
    cwd: &Path,
    default: Option<PathBuf>,
    accept: &dyn Fn(&Path) -> bool,
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
        if let Some(shared) = worktree::shared_root(dir).filter(|root| accept(root)) {
            return Ok((shared, RootSource::Ancestor));
        }
        let project = dir.join(PROJECT_DIR);
        if holds_config(&project)? {
            return Ok((project, RootSource::Ancestor));
        }
        if holds_config(dir)? {
            return Ok((dir.to_path_buf(), RootSource::Ancestor));
        }
    }
    let default = default.ok_or(Error::NoRootFound)?;
    Ok((default, RootSource::Default))
}

/// Whether `dir` holds a `mem.toml`. One that is there but is no regular file (a FIFO, a link
/// to a device or to nowhere) is an error that names it, never passed over for a root further
/// up or the per-user one: mem would then keep memories somewhere the user did not mean.
fn holds_config(dir: &Path) -> Result<bool> {
    use crate::untrusted::{self, Links, Unreadable};
    let path = dir.join(CONFIG_FILE);
    let refused = |why: Unreadable| Error::Config {
        path: path.clone(),
        message: format!(
            "{why}; a memory root's mem.toml must be a regular file: replace it with one (or \
             remove it, and this folder is no memory root)"
        ),
    };
    // One look at the name itself settles the usual cases: nothing there (most folders on the
    // way up), or a regular file. A link, or anything else, is looked at closely below.
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Ok(meta) if meta.file_type().is_file() => return Ok(true),
        _ => {}
    }
    match untrusted::check(&path, Links::Follow) {
        Ok(Some(_)) => Ok(true),
        Ok(None) => match std::fs::read_link(&path) {
            Ok(target) => Err(refused(Unreadable::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("a symbolic link to {}, which does not exist", target.display()),
            )))),
            Err(_) => Ok(false),
        },
        // A folder mem may not look into, or a file where a folder would be, holds no root.
        Err(Unreadable::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(false)
        }
        Err(why) => Err(refused(why)),
    }
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
    let gitignore = inside_root(dir, ".gitignore")?;
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

/// The state folder ([`STATE_DIR`]) of `root`, created if missing, once it is checked to be a
/// real folder holding only real files and folders. mem replaces and deletes files there, so a
/// symbolic link in it (say, committed to a cloned repository) would make it change files
/// outside the root: it is refused with [`Error::UnsafeState`], never followed. Every writer
/// of `.mem/` gets the folder from here.
pub fn state_dir(root: &Path) -> Result<PathBuf> {
    let dir = root.join(STATE_DIR);
    if std::fs::symlink_metadata(&dir).is_err() {
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            // Made by another process meanwhile (or a link made meanwhile): checked below.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&dir, e)),
        }
    }
    check_real(&dir, true)?;
    Ok(dir)
}

/// The state folder of `root` as [`state_dir`] checks it, or `None` when it does not exist
/// (never created here).
pub fn existing_state_dir(root: &Path) -> Result<Option<PathBuf>> {
    let dir = root.join(STATE_DIR);
    match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => state_dir(root).map(Some),
    }
}

/// Refuses `path` unless it is a real folder (`dir`) or file, and, for a folder, everything
/// in it likewise.
fn check_real(path: &Path, dir: bool) -> Result<()> {
    let unsafe_state = |what: String| Error::UnsafeState { path: path.to_path_buf(), what };
    let meta = std::fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path).map(|t| format!(" to {}", t.display()));
        return Err(unsafe_state(format!("a symbolic link{}", target.unwrap_or_default())));
    }
    if !kind.is_dir() {
        return match (dir, kind.is_file()) {
            (false, true) => Ok(()),
            (true, _) => Err(unsafe_state("not a folder".into())),
            (false, false) => Err(unsafe_state("not a regular file".into())),
        };
    }
    for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, e))? {
        let entry = entry.map_err(|e| Error::io(path, e))?;
        let kind = entry.file_type().map_err(|e| Error::io(entry.path(), e))?;
        // Files are checked by their entry's type alone: no stat per file.
        if kind.is_dir() || kind.is_symlink() || !kind.is_file() {
            check_real(&entry.path(), kind.is_dir())?;
        }
    }
    Ok(())
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
    let real = real_path(&path)?;
    if real.starts_with(&real_root) { Ok(path) } else { Err(Error::OutsideRoot(rel.into())) }
}

/// Where `path` (which may not exist yet) really is: the longest part of it that exists, with
/// every symbolic link resolved, then the rest as written.
pub fn real_path(path: &Path) -> Result<PathBuf> {
    let mut existing = path;
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
    Ok(real)
}

/// Flushes the entries of the folder `dir` to disk: a file created, renamed or removed in it
/// stays so after a power cut.
pub fn sync_dir(dir: &Path) -> Result<()> {
    std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| Error::io(dir, e))
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
    sync_dir(dir)
}

/// Writes a cache file of `.mem/` so that readers see the old file or the new one: a temporary
/// file and a rename, without fsync. After a power cut it may be empty, old or missing, never
/// a mix; use it only for what is checked on reading and recomputed when it does not fit.
pub fn write_cache(path: &Path, contents: &[u8]) -> Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| Error::io(dir, e))?;
    tmp.write_all(contents).map_err(|e| Error::io(tmp.path(), e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Reads a memory file's bytes, refusing files over `limit` bytes before reading them, and
/// anything but a regular file (see [`crate::untrusted`]; a memory reached through a link out
/// of the root is read).
pub fn read_limited(path: &Path, limit: u64) -> std::result::Result<Vec<u8>, ReadError> {
    use crate::untrusted::{self, Links, Unreadable};
    match untrusted::read(path, limit, Links::Follow) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(ReadError::Io(std::io::ErrorKind::NotFound.into())),
        Err(Unreadable::TooLarge { size, limit }) => {
            Err(ReadError::Format(FormatError::TooLarge { size, limit }))
        }
        Err(Unreadable::Io(e)) => Err(ReadError::Io(e)),
        Err(other) => Err(ReadError::Io(std::io::Error::other(other.to_string()))),
    }
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
