//! When a refresh trusts a file's size and mtime, and when it reads the file again.

use std::time::{Duration, UNIX_EPOCH};

use super::*;

const NOW: &str = "2026-11-30T12:00:00Z";

/// A root with an index in its `.mem/`.
struct Root {
    dir: tempfile::TempDir,
    index: MemoryIndex,
}

impl Root {
    fn new() -> Root {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".mem")).unwrap();
        let index = MemoryIndex::create(&dir.path().join(".mem")).unwrap();
        Root { dir, index }
    }

    /// Writes memory `name` with `body`, its mtime `offset_ns` from the file system's clock (rounded
    /// down to whole milliseconds when `whole_ms`).
    fn write(&self, name: &str, body: &str, offset_ns: i64, whole_ms: bool) {
        let path = self.dir.path().join(name);
        let id = name.replace('/', "-");
        let text = format!("---\nid: {id}\ntype: semantic\ncreated: 2026-01-01\n---\n{body}\n");
        std::fs::write(&path, text).unwrap();
        // The file system's clock, as a refresh reads it.
        let now = super::super::clock_ns(&self.dir.path().join(".mem")).unwrap();
        let mut mtime = u64::try_from(now + offset_ns).unwrap();
        if whole_ms {
            mtime -= mtime % 1_000_000;
        }
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(UNIX_EPOCH + Duration::from_nanos(mtime)).unwrap();
    }

    /// Refreshes the whole root; how many files it read.
    fn refresh_all(&mut self) -> usize {
        let scan = store::scan(self.dir.path());
        self.refresh(scan, Scope::All)
    }

    /// Refreshes the files `rels` only; how many files it read.
    fn refresh_files(&mut self, rels: &[&str]) -> usize {
        let mut scan = Scan::default();
        scan.files.extend(rels.iter().filter_map(|rel| FileStat::of(self.dir.path(), rel)));
        let scope: rustc_hash::FxHashSet<String> = rels.iter().map(|r| r.to_string()).collect();
        self.refresh(scan, Scope::Files(&scope))
    }

    /// Refreshes the folders `folders` (ending in `/`) only; how many files it read.
    fn refresh_under(&mut self, folders: &[&str]) -> usize {
        let folders: Vec<String> = folders.iter().map(|f| f.to_string()).collect();
        let mut scan = Scan::default();
        for folder in &folders {
            scan.files.extend(store::scan_under(self.dir.path(), folder).files);
        }
        let files = rustc_hash::FxHashSet::default();
        self.refresh(scan, Scope::Under { folders: &folders, files: &files })
    }

    fn refresh(&mut self, scan: Scan, scope: Scope) -> usize {
        let reading = Reading { max_file_bytes: 1 << 20, known_bad: &[] };
        let silent = &crate::progress::Silent;
        let now = NOW.parse().unwrap();
        let report = self.index.refresh(self.dir.path(), scan, scope, reading, now, silent);
        report.unwrap().read
    }
}

/// Whole-millisecond mtimes (a coarse file system) wait 2 s before they are trusted; finer ones
/// 100 ms.
#[test]
fn a_file_is_trusted_once_read_after_its_file_systems_granularity() {
    assert_eq!(store::racy_window_ns(1_767_225_600_000_000_000), 2_000_000_000);
    assert_eq!(store::racy_window_ns(1_767_225_600_123_000_000), 2_000_000_000);
    assert_eq!(store::racy_window_ns(1_767_225_600_123_456_789), 100_000_000);
    let mut root = Root::new();
    // Both stamped a second ago: the coarse one is within its 2 s window, the fine one is not.
    root.write("coarse.md", "kafka", -1_000_000_000, true);
    root.write("fine.md", "kafka", -1_000_000_007, false);
    assert_eq!(root.refresh_all(), 2);
    assert_eq!(root.refresh_all(), 1, "the coarse one is read again, the fine one trusted");
    std::thread::sleep(Duration::from_millis(1_100));
    assert_eq!(root.refresh_all(), 1, "read once more, now past its window");
    assert_eq!(root.refresh_all(), 0, "both trusted");
    // Another process trusts them as well: the verification was recorded without a commit.
    let mut other = MemoryIndex::open(&root.dir.path().join(".mem")).unwrap().0;
    std::mem::swap(&mut root.index, &mut other);
    assert_eq!(root.refresh_all(), 0);
}

/// A refresh of some files also reads the indexed files elsewhere that are not settled yet:
/// it records a new verification time for all of them.
#[test]
fn a_refresh_of_some_files_reads_the_unsettled_ones_elsewhere_too() {
    let mut root = Root::new();
    root.write("old.md", "apple", -10_000_000_007, false);
    // Stamped in the future: never settled while this test runs.
    root.write("future.md", "banana", 60_000_000_007, false);
    assert_eq!(root.refresh_all(), 2);
    assert_eq!(root.refresh_all(), 1, "the future one is read again, the old one trusted");
    root.write("old.md", "apple pie", -5_000_000_007, false);
    assert_eq!(root.refresh_files(&["old.md"]), 2, "the changed file and the unsettled one");
    assert_eq!(root.refresh_files(&["old.md"]), 0, "nothing changed in scope: nothing read");
    assert_eq!(root.index.len(), 2);
}

/// A refresh of some folders reads only the manifest's entries it needs; what it commits, a
/// log record or a new base, holds every entry all the same.
#[test]
fn a_refresh_of_a_folder_reads_part_of_the_manifest_and_commits_all_of_it() {
    let mut root = Root::new();
    std::fs::create_dir(root.dir.path().join("a")).unwrap();
    std::fs::create_dir(root.dir.path().join("b")).unwrap();
    // Long names: the record of 700 changes outgrows the log's 64 KiB floor.
    let a = |i: usize| format!("a/{i}-{}.md", "x".repeat(40));
    for i in 0..700 {
        root.write(&a(i), "apple", -10_000_000_007, false);
    }
    for i in 0..5 {
        root.write(&format!("b/{i}.md"), "banana", -10_000_000_007, false);
    }
    assert_eq!(root.refresh_all(), 705);
    let state = root.dir.path().join(".mem");
    let full = |root: &Root| Manifest::load(&state, root.index.place).unwrap();
    let before = full(&root);
    // One file changed, seen by another process (which has not read the manifest): a log
    // record.
    root.index = MemoryIndex::open(&state).unwrap().0;
    root.write(&a(0), "apple pie", -5_000_000_007, false);
    assert_eq!(root.refresh_under(&["a/"]), 1);
    assert!(root.index.manifest.get().is_none(), "a partial manifest is not kept");
    assert!(root.index.place.log_len > 0, "appended to the log");
    let after = full(&root);
    assert_eq!(after.files.len(), 705);
    assert_ne!(after.files[&a(0)], before.files[&a(0)]);
    assert_eq!(after.files["b/0.md"], before.files["b/0.md"]);
    // Every file of the folder changed: a record past a quarter of the base, so a new base,
    // which must hold the other folder's entries too.
    for i in 0..700 {
        root.write(&a(i), "apricot", -4_000_000_007, false);
    }
    let base = root.index.place.base;
    assert_eq!(root.refresh_under(&["a/"]), 700);
    assert_ne!(root.index.place.base, base, "a new base");
    let compacted = full(&root);
    assert_eq!(compacted.files.len(), 705);
    assert_eq!(compacted.files["b/4.md"], before.files["b/4.md"]);
    let (mut reopened, notice) = MemoryIndex::open(&state).unwrap();
    assert_eq!(notice, None);
    assert_eq!(reopened.take_manifest().unwrap().files, compacted.files);
}
