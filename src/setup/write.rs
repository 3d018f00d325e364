//! How `mem setup` writes the agents' files. Every target is checked, and its new text written
//! beside it, before any file is replaced (a dangling link, a folder that cannot be written:
//! nothing is written). Immediately before a file is replaced, it is read again and compared
//! with what setup's edit was made on: a version another program (the agent itself) saved
//! meanwhile gets the edit made again on it (up to [`REDOS`] times, then setup stops with an
//! error and the file as saved), and the replacement, an exchange, checks that the file it takes
//! out is the one compared, else puts it straight back. A writer that does not lock can still
//! save in the instant between that check and the exchange (docs/reliability.md). Setup's
//! temporary files carry its process id: the next setup removes those of a killed one at once.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use jiff::Timestamp;
use mem::store;
use tempfile::NamedTempFile;

use super::Change;

/// How many times setup makes its edit again on a version another program saved meanwhile
/// before it stops.
const REDOS: usize = 3;

/// Age after which one of mem's temporary files is taken as left by a killed write.
const STALE: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// A change ready to be made: the file it really writes (through links) and its new text in a
/// temporary file beside it (an empty one when the file is to be deleted).
pub struct Prepared<'a> {
    change: &'a Change,
    real: PathBuf,
    tmp: NamedTempFile,
}

/// Checks every target and writes each new text beside its file; on any failure, nothing is
/// left written (folders made for it go again) and the error says so.
pub fn prepare<'a>(changes: &[&'a Change]) -> Result<Vec<Prepared<'a>>> {
    let mut made: Vec<PathBuf> = Vec::new();
    let mut prepared = Vec::new();
    for change in changes {
        match prepare_one(change, &mut made) {
            Ok(one) => prepared.push(one),
            Err(e) => {
                drop(prepared);
                for folder in made.iter().rev() {
                    let _ = std::fs::remove_dir(folder);
                }
                return Err(e.context("nothing was written"));
            }
        }
    }
    Ok(prepared)
}

fn prepare_one<'a>(change: &'a Change, made: &mut Vec<PathBuf>) -> Result<Prepared<'a>> {
    let path = &change.path;
    let real = real_target(path)?;
    let folder = real.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    make_folder(folder, made)?;
    let mut tmp = temp_in(folder)
        .with_context(|| format!("cannot write {} (in {})", path.display(), folder.display()))?;
    if let Some(text) = &change.after {
        fill(&mut tmp, text, std::fs::metadata(&real).ok().map(|m| m.permissions()))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Prepared { change, real, tmp })
}

/// A new temporary file of setup's in `folder`: named with this process's id
/// (`.mem-tmp-p<pid>-XXXXXX`), so that the next setup knows one a killed setup left (its process
/// is gone) and removes it at once.
fn temp_in(folder: &Path) -> std::io::Result<NamedTempFile> {
    use std::os::unix::fs::PermissionsExt as _;
    tempfile::Builder::new()
        .prefix(&format!("{}p{}-", store::TEMP_PREFIX, std::process::id()))
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(folder)
}

/// Writes `text` into `tmp`, with `permissions` when given, and flushes it to disk.
fn fill(
    tmp: &mut NamedTempFile,
    text: &str,
    permissions: Option<std::fs::Permissions>,
) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(permissions) = permissions {
        tmp.as_file().set_permissions(permissions)?;
    }
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()
}

/// The file a path really names: through its links (a dotfiles link is written through). A
/// link to nothing is refused, naming it, unless only the file is missing in a folder that is.
fn real_target(path: &Path) -> Result<PathBuf> {
    let mut at = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let to = std::fs::read_link(&at)
                    .with_context(|| format!("cannot read the link {}", at.display()))?;
                at = at.parent().unwrap_or(Path::new("/")).join(to);
            }
            Ok(_) => {
                return std::fs::canonicalize(&at)
                    .with_context(|| format!("cannot resolve {}", at.display()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let folder = at.parent().unwrap_or(Path::new("/"));
                if at != path && !folder.is_dir() {
                    bail!(
                        "{} is a dangling symbolic link: it leads to {}, whose folder {} does \
                         not exist; create that folder (or remove the link), then run mem setup \
                         again",
                        path.display(),
                        at.display(),
                        folder.display()
                    );
                }
                return Ok(at);
            }
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", at.display())),
        }
    }
    bail!("{} leads through too many symbolic links", path.display())
}

/// Makes `folder` and the folders above it that are missing, recording those it made; a
/// dangling link on the way is named as one.
fn make_folder(folder: &Path, made: &mut Vec<PathBuf>) -> Result<()> {
    let mut missing = Vec::new();
    let mut at = folder;
    while std::fs::metadata(at).is_err() {
        if std::fs::symlink_metadata(at).is_ok() {
            let to = std::fs::read_link(at).unwrap_or_default();
            bail!(
                "{} is a dangling symbolic link (it leads to {}, which does not exist); create \
                 what it leads to (or remove the link), then run mem setup again",
                at.display(),
                to.display()
            );
        }
        missing.push(at.to_path_buf());
        match at.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => at = parent,
            _ => break,
        }
    }
    for folder in missing.into_iter().rev() {
        std::fs::create_dir(&folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
        made.push(folder);
    }
    Ok(())
}

/// Makes the prepared changes, in order. A failure names the files already written.
pub fn commit(prepared: Vec<Prepared<'_>>) -> Result<()> {
    let mut done: Vec<String> = Vec::new();
    for one in prepared {
        let path = one.change.path.clone();
        if let Err(e) = replace(one) {
            let written = match done.is_empty() {
                true => "no other file was written".to_string(),
                false => format!("already written: {}", done.join(", ")),
            };
            return Err(e.context(written));
        }
        done.push(path.display().to_string());
    }
    Ok(())
}

/// Replaces the file by setup's text. Immediately before, the file is read again and compared
/// with the text setup's edit was made on; when another program (the agent) saved another
/// version meanwhile, the edit is made again on that one, up to [`REDOS`] times, and then
/// setup stops with an error and the file as the other program saved it. The replacement
/// itself is an exchange that checks the file it took out is the one compared (by its identity,
/// [`Identity`]); when it is not, that file goes straight back, and the round is redone.
fn replace(one: Prepared<'_>) -> Result<()> {
    let Prepared { change, real, mut tmp } = one;
    let path = &change.path;
    let folder = real.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut expected = change.before.clone();
    let mut placed = change.after.clone();
    let mut redos = 0;
    loop {
        let (current, identity) = read_identified(&real)
            .with_context(|| format!("cannot read {} again", path.display()))?;
        if current == expected {
            let put = put(&tmp, &real, placed.is_some(), identity)
                .with_context(|| format!("cannot write {}", path.display()))?;
            if put {
                drop(tmp);
                store::sync_dir(&folder)?;
                return Ok(());
            }
            // Saved in the instant between the read and the exchange, and put back: read again.
        }
        if redos == REDOS {
            bail!(
                "{} changed while mem setup edited it, {} times in a row; it is left as the \
                 other program saved it (nothing of mem's was written to it): run mem setup \
                 again when the agent is idle",
                path.display(),
                REDOS + 1
            );
        }
        redos += 1;
        if current != expected {
            let permissions = std::fs::metadata(tmp.path()).ok().map(|m| m.permissions());
            placed = (change.edit)(current.as_deref()).with_context(|| {
                format!(
                    "{} changed while mem setup edited it, and mem setup cannot edit what it \
                     holds now; it is left as the other program saved it",
                    path.display()
                )
            })?;
            expected = current;
            tmp = temp_in(&folder).with_context(|| format!("cannot write {}", path.display()))?;
            if let Some(text) = &placed {
                fill(&mut tmp, text, permissions)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
    }
}

/// What tells one version of a file from another saved in its place by rename: the file
/// itself (device and inode), its size and its modification time (a freed inode may be used
/// again; a rename changes the file's ctime, so that is not compared).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
}

impl Identity {
    /// The identity of the file `meta` describes.
    fn of(meta: &std::fs::Metadata) -> Identity {
        use std::os::unix::fs::MetadataExt as _;
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// The text of the file at `real` and its identity, read from one open file (`None`, `None`:
/// no file).
fn read_identified(real: &Path) -> Result<(Option<String>, Option<Identity>)> {
    use std::io::Read as _;
    let Some(file) = mem::untrusted::open(real, mem::untrusted::Links::Follow)? else {
        return Ok((None, None));
    };
    let identity = Identity::of(&file.metadata()?);
    let mut bytes = Vec::new();
    file.take(super::MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > super::MAX_SETTINGS_BYTES {
        bail!("{} is larger than {} bytes", real.display(), super::MAX_SETTINGS_BYTES);
    }
    Ok((Some(String::from_utf8(bytes).context("the file is not UTF-8")?), Some(identity)))
}

/// Puts setup's text (in `tmp`; none when `placed` is false: the file is removed) at `real`,
/// provided the file there is still `identity` (`None`: no file); whether it did. When
/// another version was saved in between, it is left (or put back) in place.
fn put(tmp: &NamedTempFile, real: &Path, placed: bool, identity: Option<Identity>) -> Result<bool> {
    match (placed, identity) {
        (false, None) => Ok(identity_at(real)?.is_none()),
        (false, Some(identity)) => {
            // Taken out of the way (over the empty temporary file), then checked.
            match std::fs::rename(real, tmp.path()) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(e.into()),
            }
            if identity_at(tmp.path())? == Some(identity) {
                return Ok(true);
            }
            // Another version: back in place, unless a newer one is there already.
            let _ = rename_noreplace(tmp.path(), real);
            Ok(false)
        }
        (true, None) => Ok(rename_noreplace(tmp.path(), real)?),
        (true, Some(identity)) => exchange_checked(tmp, real, identity),
    }
}

/// Exchanges setup's text (in `tmp`) with the file at `real`, and keeps the exchange only when
/// the file taken out is `identity`; otherwise exchanges them back at once. Whether it kept it.
#[cfg(target_os = "linux")]
fn exchange_checked(tmp: &NamedTempFile, real: &Path, identity: Identity) -> Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    match renameat_with(CWD, tmp.path(), CWD, real, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        // Removed meanwhile: read again.
        Err(Errno::NOENT) => return Ok(false),
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
            return rename_checked(tmp, real, identity);
        }
        Err(e) => return Err(std::io::Error::from(e).into()),
    }
    if identity_at(tmp.path())? == Some(identity) {
        return Ok(true);
    }
    // Another version was saved in the instant between the read and the exchange: it goes
    // straight back (setup's text comes back into the temporary file).
    renameat_with(CWD, tmp.path(), CWD, real, RenameFlags::EXCHANGE)
        .map_err(std::io::Error::from)?;
    Ok(false)
}

#[cfg(not(target_os = "linux"))]
fn exchange_checked(tmp: &NamedTempFile, real: &Path, identity: Identity) -> Result<bool> {
    rename_checked(tmp, real, identity)
}

/// Where the file system cannot exchange two files: setup's text renamed over the file when the
/// file is still `identity` just before (a narrow window, not none).
fn rename_checked(tmp: &NamedTempFile, real: &Path, identity: Identity) -> Result<bool> {
    if identity_at(real)? != Some(identity) {
        return Ok(false);
    }
    std::fs::rename(tmp.path(), real)?;
    Ok(true)
}

/// The identity of the file at `path` (not through a link), `None` when nothing is there.
fn identity_at(path: &Path) -> std::io::Result<Option<Identity>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(Identity::of(&meta))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Renames `from` to `to` unless something is at `to`; whether it did.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        use rustix::io::Errno;
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(true),
            Err(Errno::EXIST) => return Ok(false),
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if identity_at(to)?.is_some() {
        return Ok(false);
    }
    std::fs::rename(from, to)?;
    Ok(true)
}

/// Whether a file name is one that mem's atomic writes give their temporary files: the prefix
/// and six letters or digits, or setup's (the prefix, `p`, the process id, `-`, six letters or
/// digits); with the process id for setup's.
fn temp_name(name: &str) -> Option<Option<u32>> {
    let six = |rest: &str| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric());
    let rest = name.strip_prefix(store::TEMP_PREFIX)?;
    if six(rest) {
        return Some(None);
    }
    let (pid, rest) = rest.strip_prefix('p')?.split_once('-')?;
    let pid = pid.parse().ok().filter(|_| six(rest) && pid.bytes().all(|b| b.is_ascii_digit()))?;
    Some(Some(pid))
}

/// Whether a file name is one that mem's atomic writes give their temporary files.
#[cfg(test)]
fn is_temp_name(name: &str) -> bool {
    temp_name(name).is_some()
}

/// Whether the process `pid` is alive.
fn alive(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// Removes from each of `folders` (not below) mem's own temporary files left by a killed
/// write: setup's whose process is gone, at once, and any older than a few minutes at `now` (a
/// write takes far less); returns those removed.
pub fn remove_stale(folders: &[PathBuf], now: Timestamp) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let cutoff = now.checked_sub(STALE).unwrap_or(now);
    let mut seen: Vec<PathBuf> = Vec::new();
    for folder in folders {
        // Never through a link: a cloned repository's `.memory/.mem` may lead anywhere.
        if std::fs::symlink_metadata(folder).is_ok_and(|m| m.file_type().is_symlink()) {
            continue;
        }
        let folder = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.clone());
        if seen.contains(&folder) {
            continue;
        }
        seen.push(folder.clone());
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let Some(owner) = entry.file_name().to_str().and_then(temp_name) else { continue };
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let killed = owner.is_some_and(|pid| pid != std::process::id() && !alive(pid));
            let old = killed
                || meta
                    .modified()
                    .ok()
                    .and_then(|m| Timestamp::try_from(m).ok())
                    .is_some_and(|m| m < cutoff);
            if meta.is_file() && old && std::fs::remove_file(entry.path()).is_ok() {
                removed.push(entry.path());
            }
        }
    }
    removed
}

/// The folder each change's file is really in (through its links), where setup writes.
pub fn folders(changes: &[Change]) -> Vec<PathBuf> {
    changes
        .iter()
        .filter_map(|c| {
            let real = real_target(&c.path).ok()?;
            Some(real.parent()?.to_path_buf())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Item 12 of the third probe: a version saved between setup's read and its write is
    /// merged (the edit made again on it), not replaced by setup's copy of the older one.
    #[test]
    fn a_version_saved_meanwhile_is_edited_again_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "a\n").unwrap();
        let change =
            Change::new(path.clone(), |text| Ok(Some(format!("{}+mem\n", text.unwrap_or("")))))
                .unwrap();
        assert_eq!(change.after.as_deref(), Some("a\n+mem\n"));
        let prepared = prepare(&[&change]).unwrap();
        // The agent saves its own version by rename, after setup read the file.
        let theirs = dir.path().join("theirs");
        std::fs::write(&theirs, "b\n").unwrap();
        std::fs::rename(&theirs, &path).unwrap();
        commit(prepared).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b\n+mem\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    /// A version saved meanwhile that setup cannot edit is left as saved, and said.
    #[test]
    fn a_version_saved_meanwhile_that_cannot_be_edited_is_left_as_saved() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "a\n").unwrap();
        let change = Change::new(path.clone(), |text| match text {
            Some("a\n") => Ok(Some("a+mem\n".into())),
            _ => anyhow::bail!("not mine"),
        })
        .unwrap();
        let prepared = prepare(&[&change]).unwrap();
        std::fs::write(dir.path().join("theirs"), "b\n").unwrap();
        std::fs::rename(dir.path().join("theirs"), &path).unwrap();
        let error = format!("{:#}", commit(prepared).unwrap_err());
        assert!(error.contains("changed while mem setup edited it"), "{error}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "b\n");
    }

    /// Issue #51: a file that changes under setup at every try is left as the other program
    /// saved it, after three edits made again, with a clear error.
    #[test]
    fn a_file_that_keeps_changing_is_left_as_saved_after_three_redos() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "a\n").unwrap();
        let (saves, at) = (std::rc::Rc::new(std::cell::Cell::new(0)), path.clone());
        let counted = std::rc::Rc::clone(&saves);
        let change = Change::new(path.clone(), move |text| {
            // Another program saves a new version each time setup edits.
            counted.set(counted.get() + 1);
            let theirs = at.with_file_name("theirs");
            std::fs::write(&theirs, format!("v{}\n", counted.get())).unwrap();
            std::fs::rename(&theirs, &at).unwrap();
            Ok(Some(format!("{}+mem\n", text.unwrap_or(""))))
        })
        .unwrap();
        let prepared = prepare(&[&change]).unwrap();
        let error = format!("{:#}", commit(prepared).unwrap_err());
        assert!(error.contains("changed while mem setup edited it, 4 times in a row"), "{error}");
        assert_eq!(saves.get(), 4, "the first edit and three again");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "v4\n");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    }

    #[test]
    fn only_mem_s_temporary_names_are_taken() {
        assert!(is_temp_name(".mem-tmp-aB3xYz"));
        assert!(!is_temp_name(".mem-tmp-notes.txt"));
        assert!(!is_temp_name(".mem-tmp-aB3xY"));
        assert!(!is_temp_name("mem-tmp-aB3xYz"));
        assert_eq!(temp_name(".mem-tmp-p4242-aB3xYz"), Some(Some(4242)));
        assert!(!is_temp_name(".mem-tmp-p42x-aB3xYz"));
        assert!(!is_temp_name(".mem-tmp-p42-aB3xY"));
    }

    #[test]
    fn old_temporary_files_go_and_new_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new, theirs) = (
            dir.path().join(".mem-tmp-AAAAAA"),
            dir.path().join(".mem-tmp-BBBBBB"),
            dir.path().join(".mem-tmp-mine.txt"),
        );
        for path in [&old, &new, &theirs] {
            std::fs::write(path, "x").unwrap();
        }
        let long_ago = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        for path in [&old, &theirs] {
            std::fs::File::options()
                .write(true)
                .open(path)
                .unwrap()
                .set_modified(long_ago)
                .unwrap();
        }
        // `now` a minute after the new file was written.
        let written = Timestamp::try_from(std::fs::metadata(&new).unwrap().modified().unwrap());
        let now = written.unwrap().checked_add(std::time::Duration::from_secs(60)).unwrap();
        let removed = remove_stale(&[dir.path().to_path_buf()], now);
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert!(!old.exists() && new.exists() && theirs.exists());
    }
}
