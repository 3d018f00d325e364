//! The usage that travels with the memories: `usage/<machine>.tsv` in the root, one file per
//! machine (per usage log), append-only. Clones of a root shared with git each append to their
//! own file, so merging never conflicts, and the decay computed from the union of the files is
//! the one a single machine that saw every event would compute.
//!
//! Lines, tab-separated (`#` starts a comment):
//!
//! ```text
//! since      TIME                                when this machine began observing usage
//! base       ID  COUNT  RETRIEVED  LAST  STRENGTH  an `access:` line moved out of a memory
//! used       SEQ  TIME  ID                       `mem used`
//! retrieved  SEQ  TIME  ID  RANK                 a recall returned ID at RANK
//! confirmed  TIME  ID                            `mem verify --confirm`: what ID cites was
//!                                                checked and found right at TIME
//! ```
//!
//! `SEQ` is the event's number in this machine's usage log: a line appended twice (a sync
//! stopped after the append) is read once. A last line without its newline is a write cut
//! short (a kill or a power cut during the append): it is not read, and the next append
//! replaces it, so its event is written again, whole, and counted once. A `base` is read once per id whatever the number of
//! files that carry it (the one with the highest count), so two clones that both moved the same
//! `access:` line out count it once.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::decay::Reinforcement;
use crate::format::Access;
use crate::untrusted::{self, Links};
use crate::{Error, Result};

/// Folder of the usage files, at the top of the root.
pub const DIR: &str = "usage";
/// Extension of a usage file.
pub const EXT: &str = "tsv";

/// The largest usage file read (about four million events): a file is read whole, and one
/// that never ends (a link to a device) must not take all the memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// First line of a new usage file.
const HEADER: &str = "# mem usage events of one machine: append-only; commit it (docs/teams.md)\n";

/// What the usage files of a root say.
#[derive(Clone, Debug, Default)]
pub struct SharedUsage {
    /// When usage observation began: the earliest `since` of any file, or the earliest event
    /// when one is older (events recorded before `mem init` wrote its `since`).
    pub since: Option<Timestamp>,
    /// Usage summaries moved out of `access:` lines, by id.
    pub bases: HashMap<String, Access>,
    /// Events by memory id, in no particular order.
    pub events: HashMap<String, Vec<Reinforcement>>,
    /// The last confirmation of each confirmed memory (`mem verify --confirm`), by id.
    pub confirmed: HashMap<String, Timestamp>,
    /// Lines that could not be read, each with its file and line number; they are skipped.
    pub problems: Vec<String>,
    /// Files that were not read, each `path: reason` (not a regular file, a link out of
    /// `usage/`, over [`MAX_FILE_BYTES`]; see [`crate::untrusted`]); they are skipped.
    pub skipped: Vec<String>,
}

/// The usage file of the machine whose usage log is `machine`.
pub fn file_of(root: &Path, machine: &str) -> PathBuf {
    root.join(DIR).join(format!("{machine}.{EXT}"))
}

/// The summary that counts when several describe one memory: the most used, then the most
/// retrieved, then the latest.
pub fn larger(a: Access, b: Access) -> Access {
    let key = |x: &Access| (x.count, x.retrieved, x.last);
    if key(&b) > key(&a) { b } else { a }
}

/// Reads every usage file of the root (none is no usage observed yet).
pub fn load(root: &Path) -> Result<SharedUsage> {
    let dir = root.join(DIR);
    let mut out = SharedUsage::default();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(Error::io(&dir, e)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == EXT))
        .collect();
    files.sort();
    for path in files {
        match untrusted::read(&path, MAX_FILE_BYTES, Links::InFolder) {
            Ok(Some(bytes)) => read_into(&bytes, &path, &mut out),
            Ok(None) => {} // removed meanwhile
            Err(why) => out.skipped.push(format!("{}: {why}", path.display())),
        }
    }
    Ok(out)
}

/// The bytes of this machine's own usage file, checked as [`load`] checks every file; `None`
/// when it does not exist.
fn read_own(path: &Path) -> Result<Option<Vec<u8>>> {
    untrusted::read(path, MAX_FILE_BYTES, Links::InFolder)
        .map_err(|source| Error::Unreadable { path: path.to_path_buf(), source })
}

/// The whole lines of a usage file's bytes (all but an unfinished last line), numbered from
/// 1, each as text, or `None` when it is not valid UTF-8. The files come from other machines
/// and through git: one bad line is skipped and reported, never fatal to the rest.
fn file_lines(bytes: &[u8]) -> impl Iterator<Item = (usize, Option<&str>)> {
    complete(bytes).split(|b| *b == b'\n').enumerate().filter_map(|(n, line)| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        (!line.is_empty()).then(|| (n + 1, std::str::from_utf8(line).ok()))
    })
}

fn read_into(bytes: &[u8], path: &Path, out: &mut SharedUsage) {
    let mut seen = HashSet::new();
    for (n, line) in file_lines(bytes) {
        let Some(line) = line else {
            out.problems.push(format!("{}:{n}: not valid UTF-8; skipped", path.display()));
            continue;
        };
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        match parse_line(line) {
            Ok(Line::Since(at)) => out.since = Some(out.since.map_or(at, |s| s.min(at))),
            Ok(Line::Base(id, access)) => {
                let merged = match out.bases.remove(&id) {
                    Some(old) => larger(old, access),
                    None => access,
                };
                out.bases.insert(id, merged);
            }
            Ok(Line::Confirmed(id, at)) => {
                let last = out.confirmed.entry(id).or_insert(at);
                *last = (*last).max(at);
            }
            Ok(Line::Reinforcement(seq, id, event)) => {
                // Observation began by the first event at the latest: as the usage log's
                // first event counts before a sync (`Usage::view`), so counts the
                // synced one after, and `.mem/` rebuilt proposes the same.
                out.since = Some(out.since.map_or(event.at(), |s| s.min(event.at())));
                if seen.insert(seq) {
                    out.events.entry(id).or_default().push(event);
                }
            }
            Err(why) => out.problems.push(format!("{}:{n}: {why}", path.display())),
        }
    }
}

/// The highest event number in one machine's file (0 when it has none or does not exist).
pub fn last_seq(path: &Path) -> Result<i64> {
    let Some(bytes) = read_own(path)? else { return Ok(0) };
    Ok(file_lines(&bytes)
        .filter_map(|(_, l)| match parse_line(l?) {
            Ok(Line::Reinforcement(seq, ..)) => Some(seq),
            _ => None,
        })
        .max()
        .unwrap_or(0))
}

/// The whole lines of a usage file: all but an unfinished last line (one without its newline).
fn complete(bytes: &[u8]) -> &[u8] {
    bytes.iter().rposition(|b| *b == b'\n').map_or(&[], |end| &bytes[..=end])
}

enum Line {
    Since(Timestamp),
    Base(String, Access),
    Reinforcement(i64, String, Reinforcement),
    Confirmed(String, Timestamp),
}

fn parse_line(line: &str) -> std::result::Result<Line, String> {
    let f: Vec<&str> = line.split('\t').collect();
    let time = |s: &str| s.parse::<Timestamp>().map_err(|e| format!("bad time {s:?}: {e}"));
    let int = |s: &str| s.parse::<i64>().map_err(|e| format!("bad number {s:?}: {e}"));
    let count = |s: &str| s.parse::<u64>().map_err(|e| format!("bad count {s:?}: {e}"));
    match f.as_slice() {
        ["since", at] => Ok(Line::Since(time(at)?)),
        ["base", id, used, retrieved, last, strength] => Ok(Line::Base(
            id.to_string(),
            Access {
                count: count(used)?,
                retrieved: count(retrieved)?,
                last: if last.is_empty() { None } else { Some(time(last)?) },
                strength: if strength.is_empty() {
                    None
                } else {
                    Some(strength.parse().map_err(|e| format!("bad strength {strength:?}: {e}"))?)
                },
            },
        )),
        ["used", seq, at, id] => Ok(Line::Reinforcement(
            int(seq)?,
            id.to_string(),
            Reinforcement::Used { at: time(at)? },
        )),
        ["retrieved", seq, at, id, rank] => {
            let rank = u32::try_from(int(rank)?.max(1)).map_err(|e| e.to_string())?;
            Ok(Line::Reinforcement(
                int(seq)?,
                id.to_string(),
                Reinforcement::Retrieved { at: time(at)?, rank },
            ))
        }
        ["confirmed", at, id] => Ok(Line::Confirmed(id.to_string(), time(at)?)),
        _ => Err(format!("not a usage line: {line:?}")),
    }
}

/// The line of event number `seq` of memory `id`.
pub fn event_line(seq: i64, id: &str, event: &Reinforcement) -> String {
    match event {
        Reinforcement::Used { at } => format!("used\t{seq}\t{at}\t{id}\n"),
        Reinforcement::Retrieved { at, rank } => format!("retrieved\t{seq}\t{at}\t{id}\t{rank}\n"),
    }
}

/// The line that records a confirmation of memory `id`'s citations at `at`.
pub fn confirm_line(id: &str, at: Timestamp) -> String {
    format!("confirmed\t{at}\t{id}\n")
}

/// The line that moves an `access:` summary out of memory `id`.
pub fn base_line(id: &str, a: &Access) -> String {
    let last = a.last.map(|t| t.to_string()).unwrap_or_default();
    let strength = a.strength.map(|s| s.to_string()).unwrap_or_default();
    format!("base\t{id}\t{}\t{}\t{last}\t{strength}\n", a.count, a.retrieved)
}

/// Appends `lines` to the usage file at `path` and flushes it to disk. A missing file is
/// created with its header and `since` (when this machine began observing usage); an
/// unfinished last line (a write cut short) is cut off first, and a `since` it took with it
/// is written again.
pub fn append(path: &Path, since: Timestamp, lines: &str) -> Result<()> {
    let dir = path.parent().expect("a usage file is inside usage/");
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    // Read too: anything but a regular file of `usage/` is refused before it is opened.
    let refused = |source| Error::Unreadable { path: path.to_path_buf(), source };
    untrusted::check(path, Links::InFolder).map_err(refused)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(refused(untrusted::Unreadable::NotRegular(untrusted::kind(&meta))));
    }
    if meta.len() > MAX_FILE_BYTES {
        let too_large = untrusted::Unreadable::TooLarge { size: meta.len(), limit: MAX_FILE_BYTES };
        return Err(refused(too_large));
    }
    let mut old = Vec::new();
    (&mut file).take(MAX_FILE_BYTES).read_to_end(&mut old).map_err(|e| Error::io(path, e))?;
    let whole = complete(&old).len();
    if whole < old.len() {
        file.set_len(whole as u64).map_err(|e| Error::io(path, e))?;
    }
    file.seek(SeekFrom::Start(whole as u64)).map_err(|e| Error::io(path, e))?;
    let mut text = String::new();
    if whole == 0 {
        text.push_str(HEADER);
    }
    if !file_lines(&old)
        .any(|(_, l)| l.is_some_and(|l| matches!(parse_line(l), Ok(Line::Since(_)))))
    {
        text.push_str(&format!("since\t{since}\n"));
    }
    text.push_str(lines);
    file.write_all(text.as_bytes()).map_err(|e| Error::io(path, e))?;
    file.sync_all().map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + s).unwrap()
    }

    #[test]
    fn lines_round_trip_and_repeats_count_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = file_of(dir.path(), "a");
        let access = Access { count: 3, last: Some(t(5)), retrieved: 7, strength: Some(141.75) };
        let lines = base_line("m1", &access)
            + &event_line(1, "m1", &Reinforcement::Used { at: t(10) })
            + &event_line(2, "m2", &Reinforcement::Retrieved { at: t(20), rank: 4 });
        append(&a, t(1), &lines).unwrap();
        append(&a, t(99), &event_line(2, "m2", &Reinforcement::Retrieved { at: t(20), rank: 4 }))
            .unwrap();
        let b = file_of(dir.path(), "b");
        append(&b, t(0), &base_line("m1", &access)).unwrap();
        std::fs::write(dir.path().join(DIR).join("notes.txt"), "ignored").unwrap();
        let shared = load(dir.path()).unwrap();
        assert_eq!(shared.since, Some(t(0)));
        assert_eq!(shared.bases["m1"], access);
        assert_eq!(shared.events["m1"], [Reinforcement::Used { at: t(10) }]);
        assert_eq!(shared.events["m2"], [Reinforcement::Retrieved { at: t(20), rank: 4 }]);
        assert!(shared.problems.is_empty(), "{:?}", shared.problems);
        assert_eq!(last_seq(&a).unwrap(), 2);
        assert_eq!(last_seq(&file_of(dir.path(), "none")).unwrap(), 0);
    }

    #[test]
    fn observation_starts_at_an_event_older_than_every_since() {
        let dir = tempfile::tempdir().unwrap();
        let a = file_of(dir.path(), "a");
        append(&a, t(50), &event_line(1, "m1", &Reinforcement::Used { at: t(10) })).unwrap();
        append(&file_of(dir.path(), "b"), t(30), "").unwrap();
        assert_eq!(load(dir.path()).unwrap().since, Some(t(10)));
    }

    #[cfg(unix)]
    #[test]
    fn a_usage_file_that_is_no_regular_file_of_the_folder_is_skipped_and_named() {
        let dir = tempfile::tempdir().unwrap();
        append(&file_of(dir.path(), "a"), t(5), "").unwrap();
        let zero = file_of(dir.path(), "zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let shared = load(dir.path()).unwrap();
        assert_eq!(shared.since, Some(t(5)));
        assert_eq!(shared.skipped.len(), 1, "{:?}", shared.skipped);
        assert!(shared.skipped[0].contains("zero.tsv: a symbolic link out of its folder"));
        let e = append(&zero, t(5), "").unwrap_err().to_string();
        assert!(e.starts_with(&format!("cannot read {}: a symbolic", zero.display())), "{e}");
        assert!(last_seq(&zero).is_err());
    }

    #[test]
    fn a_bad_line_is_reported_and_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let a = file_of(dir.path(), "a");
        append(&a, t(0), "used\tx\tnot-a-time\tm1\nused\t3\t2026-01-01T00:00:00Z\tm1\n").unwrap();
        let shared = load(dir.path()).unwrap();
        assert_eq!(shared.problems.len(), 1, "{:?}", shared.problems);
        assert!(shared.problems[0].contains("a.tsv:3"), "{:?}", shared.problems);
        assert_eq!(shared.events["m1"].len(), 1);
    }

    #[test]
    fn a_torn_last_line_is_not_read_and_the_next_append_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        let a = file_of(dir.path(), "a");
        let used = event_line(1, "m1", &Reinforcement::Used { at: t(10) });
        append(&a, t(0), &used).unwrap();
        let whole = std::fs::read_to_string(&a).unwrap();
        // Cut inside the id: "m" would read as another memory's event, number 2.
        let torn = event_line(2, "m2", &Reinforcement::Used { at: t(20) });
        std::fs::write(&a, format!("{whole}{}", &torn[..torn.len() - 2])).unwrap();
        let shared = load(dir.path()).unwrap();
        assert!(shared.problems.is_empty(), "{:?}", shared.problems);
        assert!(!shared.events.contains_key("m"));
        assert_eq!(last_seq(&a).unwrap(), 1);
        append(&a, t(0), &torn).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), format!("{whole}{torn}"));
        assert_eq!(load(dir.path()).unwrap().events["m2"], [Reinforcement::Used { at: t(20) }]);

        // Cut inside the first write: the header and `since` are written again.
        let b = file_of(dir.path(), "b");
        std::fs::write(&b, &HEADER[..10]).unwrap();
        append(&b, t(5), &used).unwrap();
        assert_eq!(
            std::fs::read_to_string(&b).unwrap(),
            format!("{HEADER}since\t{}\n{used}", t(5))
        );
    }
}
