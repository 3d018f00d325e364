//! Reading a file that a clone, an agent or another program controls (the usage files of a
//! root, its `mem.toml`, the agents' settings, transcripts, the user configuration, memory
//! files): only a regular file is read, of bounded size, and where the file is mem's own, not
//! through a symbolic link out of its folder. Whatever else sits at the path is refused with
//! [`Unreadable`], which the caller reports before it goes on with the rest.
//!
//! The path is stat-ed before it is opened (opening a FIFO waits for a writer; a device such as
//! `/dev/zero` never ends), and the open file again, in case the path changed in between; the
//! read itself stops one byte past the bound, so a file that grows meanwhile is refused too.

use std::fs::{File, Metadata};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

pub use crate::error::Unreadable;

/// Whether a symbolic link at the path is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Followed wherever it leads: the file is the user's or an agent's (a settings file kept
    /// in a dotfiles repository, a transcript).
    Follow,
    /// Followed only to a file inside the path's own folder: the file is mem's own (a usage
    /// file), and a link out of its folder, committed to a cloned repository, could make mem
    /// read, or write, any file of the user's.
    InFolder,
}

/// The metadata of the regular file at `path`, `None` when nothing is there (a link that leads
/// nowhere included), checked as the module says without opening it.
pub fn check(path: &Path, links: Links) -> Result<Option<Metadata>, Unreadable> {
    let found = |r: std::io::Result<Metadata>| match r {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Unreadable::Io(e)),
    };
    let Some(own) = found(std::fs::symlink_metadata(path))? else { return Ok(None) };
    // A regular file itself, no link: what following would give.
    if own.file_type().is_file() {
        return Ok(Some(own));
    }
    if links == Links::InFolder && own.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(Unreadable::Io)?;
        let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let inside = match (std::fs::canonicalize(path), std::fs::canonicalize(folder)) {
            (Ok(real), Ok(folder)) => real.starts_with(folder),
            (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            _ => false,
        };
        if !inside {
            return Err(Unreadable::LinkOut(target));
        }
    }
    let Some(meta) = found(std::fs::metadata(path))? else { return Ok(None) };
    if !meta.is_file() {
        return Err(Unreadable::NotRegular(kind(&meta)));
    }
    Ok(Some(meta))
}

/// The regular file at `path` opened for reading, `None` when nothing is there (see
/// [`check`]); for a file read as a stream, line by line, whatever its size.
pub fn open(path: &Path, links: Links) -> Result<Option<File>, Unreadable> {
    if check(path, links)?.is_none() {
        return Ok(None);
    }
    // Non-blocking: a FIFO put in the file's place after the check opens at once (and is
    // refused below) instead of waiting for a writer; reads of a regular file are unaffected.
    let nonblocking = rustix::fs::OFlags::NONBLOCK.bits() as i32;
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(nonblocking).open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Unreadable::Io(e)),
    };
    let meta = file.metadata().map_err(Unreadable::Io)?;
    if !meta.is_file() {
        return Err(Unreadable::NotRegular(kind(&meta)));
    }
    Ok(Some(file))
}

/// The bytes of the regular file at `path` when it holds at most `limit` of them, `None` when
/// nothing is there (see [`check`]).
pub fn read(path: &Path, limit: u64, links: Links) -> Result<Option<Vec<u8>>, Unreadable> {
    let Some(file) = open(path, links)? else { return Ok(None) };
    let size = file.metadata().map_err(Unreadable::Io)?.len();
    if size > limit {
        return Err(Unreadable::TooLarge { size, limit });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(Unreadable::Io)?;
    if bytes.len() as u64 > limit {
        return Err(Unreadable::TooLarge { size: bytes.len() as u64, limit });
    }
    Ok(Some(bytes))
}

/// [`read`] for a text file: bytes that are not UTF-8 are an error, as `read_to_string`'s.
pub fn read_text(path: &Path, limit: u64, links: Links) -> Result<Option<String>, Unreadable> {
    let Some(bytes) = read(path, limit, links)? else { return Ok(None) };
    String::from_utf8(bytes).map(Some).map_err(|_| {
        Unreadable::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        ))
    })
}

/// What a file that is not a regular one is, for a message.
pub fn kind(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "another kind of file"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn only_regular_files_of_bounded_size_are_read_and_links_stay_in_their_folder() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("usage");
        std::fs::create_dir(&folder).unwrap();
        let file = folder.join("a.tsv");
        std::fs::write(&file, "12345").unwrap();
        assert_eq!(read(&file, 5, Links::InFolder).unwrap().unwrap(), b"12345");
        assert!(matches!(read(&file, 4, Links::Follow), Err(Unreadable::TooLarge { size: 5, .. })));
        assert!(read(&folder.join("none.tsv"), 5, Links::Follow).unwrap().is_none());

        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "x").unwrap();
        let out = folder.join("out.tsv");
        std::os::unix::fs::symlink(&outside, &out).unwrap();
        assert!(matches!(read(&out, 5, Links::InFolder), Err(Unreadable::LinkOut(_))));
        assert_eq!(read(&out, 5, Links::Follow).unwrap().unwrap(), b"x");
        let beside = folder.join("beside.tsv");
        std::os::unix::fs::symlink("a.tsv", &beside).unwrap();
        assert_eq!(read(&beside, 5, Links::InFolder).unwrap().unwrap(), b"12345");

        let zero = folder.join("zero.tsv");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(read(&zero, 5, Links::InFolder), Err(Unreadable::LinkOut(_))));
        let e = read(&zero, 5, Links::Follow).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file but a character device");
        assert!(matches!(open(&folder, Links::Follow), Err(Unreadable::NotRegular("a folder"))));
    }
}
