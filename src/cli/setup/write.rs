//! How `mem setup` writes the agents' files. Every target is checked, and its new text written
//! beside it, before any file is replaced (a dangling link, a folder that cannot be written:
//! nothing is written). Each file is then replaced by an atomic exchange that brings back what
//! was there: a version that another program (the agent itself) saved since setup read the file
//! is merged with setup's edit, never lost. The temporary files a killed setup left are removed
//! by the next one.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use jiff::Timestamp;
use mem::store;
use tempfile::NamedTempFile;

use super::{Change, read_settings};

/// How many times in a row a file may change under setup before it stops merging.
const MERGES: usize = 64;

/// How many times setup tries to put back a version saved meanwhile before it gives up.
const RESTORES: usize = 1000;

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
    let mut builder = tempfile::Builder::new();
    builder.prefix(store::TEMP_PREFIX);
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder
        .tempfile_in(folder)
        .with_context(|| format!("cannot write {} (in {})", path.display(), folder.display()))?;
    if let Some(text) = &change.after {
        fill(&mut tmp, text, std::fs::metadata(&real).ok().map(|m| m.permissions()))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(Prepared { change, real, tmp })
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

/// What was at the file when setup put its text there.
enum Swapped {
    /// What setup expected: the file is done.
    Same,
    /// Another version, saved since setup read the file; setup's text is in place.
    Other(Option<String>),
    /// Another version, and setup's text is not in place (no exchange on this file system).
    NotPlaced(Option<String>),
}

/// Replaces the file by setup's text, merging any version another program saved meanwhile:
/// setup's text is exchanged with what is at the file; when that is not what setup read, the
/// edit is made again on it and exchanged again, until what comes back is what setup put there.
/// A version setup cannot edit is put back, and the error says why.
fn replace(one: Prepared<'_>) -> Result<()> {
    let Prepared { change, real, mut tmp } = one;
    let path = &change.path;
    let folder = real.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut expected = change.before.clone();
    let mut placed = change.after.clone();
    let mut failure: Option<anyhow::Error> = None;
    for round in 0.. {
        let swapped = swap(&tmp, &real, &placed, &expected)
            .with_context(|| format!("cannot write {}", path.display()))?;
        let pulled = match swapped {
            Swapped::Same => {
                drop(tmp);
                store::sync_dir(&folder)?;
                return failure.map_or(Ok(()), Err);
            }
            Swapped::Other(pulled) => {
                expected = placed;
                pulled
            }
            Swapped::NotPlaced(current) => {
                expected = current.clone();
                current
            }
        };
        let permissions = std::fs::metadata(tmp.path()).ok().map(|m| m.permissions());
        if round == MERGES && failure.is_none() {
            failure = Some(anyhow::anyhow!(
                "{} changed while mem setup edited it, {MERGES} times in a row; it is left as \
                 the other program saved it: run mem setup again when the agent is idle",
                path.display()
            ));
        }
        if round >= MERGES + RESTORES {
            let kept = tmp.into_temp_path().keep().ok();
            bail!(
                "{} changed while mem setup edited it, too often to put it back; the version \
                 saved meanwhile is kept in {}",
                path.display(),
                kept.map_or("nothing".into(), |k| k.display().to_string())
            );
        }
        if failure.is_none() {
            match (change.edit)(pulled.as_deref()) {
                Ok(after) => placed = after,
                Err(e) => {
                    failure = Some(e.context(format!(
                        "{} changed while mem setup edited it, and mem setup cannot edit what \
                         it holds now; it is left as the other program saved it",
                        path.display()
                    )));
                    placed = pulled;
                }
            }
        } else {
            placed = pulled;
        }
        tmp = tempfile::Builder::new()
            .prefix(store::TEMP_PREFIX)
            .tempfile_in(&folder)
            .with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(text) = &placed {
            fill(&mut tmp, text, permissions)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    unreachable!("the loop returns")
}

/// Puts `placed` (in `tmp`; `None`: no file) at `real` and takes out what was there.
#[cfg(target_os = "linux")]
fn swap(
    tmp: &NamedTempFile,
    real: &Path,
    placed: &Option<String>,
    expected: &Option<String>,
) -> Result<Swapped> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    let pulled = match placed {
        Some(_) => match renameat_with(CWD, tmp.path(), CWD, real, RenameFlags::EXCHANGE) {
            Ok(()) => Some(read_back(tmp.path())?),
            Err(Errno::NOENT) => {
                match renameat_with(CWD, tmp.path(), CWD, real, RenameFlags::NOREPLACE) {
                    Ok(()) => None,
                    // Saved meanwhile: what is there now is not what setup expected.
                    Err(Errno::EXIST) => return Ok(Swapped::NotPlaced(read_back(real).map(Some)?)),
                    Err(e) => return Err(std::io::Error::from(e).into()),
                }
            }
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                return swap_checked(tmp, real, placed, expected);
            }
            Err(e) => return Err(std::io::Error::from(e).into()),
        },
        None => match std::fs::rename(real, tmp.path()) {
            Ok(()) => Some(read_back(tmp.path())?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        },
    };
    Ok(if pulled == *expected { Swapped::Same } else { Swapped::Other(pulled) })
}

#[cfg(not(target_os = "linux"))]
fn swap(
    tmp: &NamedTempFile,
    real: &Path,
    placed: &Option<String>,
    expected: &Option<String>,
) -> Result<Swapped> {
    swap_checked(tmp, real, placed, expected)
}

/// Where the file system cannot exchange two files: checks that the file is still what setup
/// read just before replacing it (a narrow window, not none).
fn swap_checked(
    tmp: &NamedTempFile,
    real: &Path,
    placed: &Option<String>,
    expected: &Option<String>,
) -> Result<Swapped> {
    let current = read_settings(real)?;
    if current != *expected {
        return Ok(Swapped::NotPlaced(current));
    }
    match placed {
        Some(_) => std::fs::rename(tmp.path(), real)?,
        None => std::fs::remove_file(real)?,
    }
    Ok(Swapped::Same)
}

/// The text of a file setup took out of the way.
fn read_back(path: &Path) -> Result<String> {
    Ok(read_settings(path)?.unwrap_or_default())
}

/// Whether a file name is one that mem's atomic writes give their temporary files: the prefix
/// and six letters or digits.
fn is_temp_name(name: &str) -> bool {
    name.strip_prefix(store::TEMP_PREFIX)
        .is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Removes from each of `folders` (not below) mem's own temporary files that are older than a
/// few minutes at `now` (left by a killed write: a write takes far less); returns those removed.
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
            if !entry.file_name().to_str().is_some_and(is_temp_name) {
                continue;
            }
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let old = meta
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

    #[test]
    fn only_mem_s_temporary_names_are_taken() {
        assert!(is_temp_name(".mem-tmp-aB3xYz"));
        assert!(!is_temp_name(".mem-tmp-notes.txt"));
        assert!(!is_temp_name(".mem-tmp-aB3xY"));
        assert!(!is_temp_name("mem-tmp-aB3xYz"));
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
