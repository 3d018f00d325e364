use std::process::Command;

use crate::util::{Dir, bin, ids, memory, run};

fn counts(dir: &Dir) -> serde_json::Value {
    dir.mem(&["index", "--json"]).json()
}

#[test]
fn refresh_only_touches_what_changed() {
    let dir = Dir::new();
    for i in 0..5 {
        dir.write(
            &format!("m{i}.md"),
            memory(&format!("m{i}"), "semantic", 5, "2026-01-01T00:00:00Z", &format!("note {i}\n")),
        );
    }
    let first = counts(&dir);
    assert_eq!((first["added"].as_u64(), first["memories"].as_u64()), (Some(5), Some(5)));

    dir.write("m1.md", memory("m1", "semantic", 5, "2026-01-01T00:00:00Z", "note one, edited\n"));
    std::fs::remove_file(dir.path().join("m2.md")).unwrap();
    dir.write("new.md", memory("new", "episodic", 5, "2026-01-01T00:00:00Z", "brand new\n"));
    let second = counts(&dir);
    assert_eq!(second["added"], 1, "{second}");
    assert_eq!(second["updated"], 1, "{second}");
    assert_eq!(second["removed"], 1, "{second}");
    assert_eq!(second["memories"], 5, "{second}");

    // Rewriting a file with the same bytes changes its mtime but not its content.
    dir.write("m3.md", dir.read("m3.md"));
    let third = counts(&dir);
    assert_eq!((third["added"].as_u64(), third["updated"].as_u64()), (Some(0), Some(0)), "{third}");
    assert_eq!(ids(&dir.mem(&["recall", "edited", "--json"]).json()), ["m1"]);
    assert_eq!(ids(&dir.mem(&["recall", "brand", "--json"]).json()), ["new"]);
}

#[test]
fn rebuild_and_deleting_state_give_the_same_ranking() {
    let dir = Dir::example();
    let query = ["recall", "why does the login test fail", "--json", "--no-record"];
    let before = dir.mem(&query).json();
    // Add memories after the first build, so the index has several segments.
    dir.mem(&["add", "The login test failed again: session cookie expired", "--type", "episodic"])
        .ok();
    let with_new = dir.mem(&query).json();
    std::fs::remove_dir_all(dir.path().join(".mem")).unwrap();
    let rebuilt = dir.mem(&query).json();
    assert_eq!(with_new, rebuilt, "deleting .mem/ changes nothing");
    let forced = dir.mem(&["index", "--rebuild", "--json"]).json();
    assert_eq!(forced["added"].as_u64(), forced["memories"].as_u64());
    assert_eq!(dir.mem(&query).json(), rebuilt);
    assert!(!ids(&before).is_empty());
}

#[test]
fn a_corrupt_index_is_rebuilt_with_a_notice() {
    let dir = Dir::example();
    let query = ["recall", "deploy checklist", "--json", "--no-record"];
    let good = dir.mem(&query).json();
    std::fs::write(dir.path().join(".mem/index/meta.json"), "{ not json").unwrap();
    let out = dir.mem(&query);
    assert_eq!(out.json(), good);
    assert!(
        out.stderr.contains("notice: the index in") && out.stderr.contains("is corrupt"),
        "{}",
        out.stderr
    );
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);

    // Damage the segment files themselves: 5 bytes is a length tantivy 0.27 panics on rather
    // than reporting, 100 bytes one it reports.
    for garbage in [&b"trash"[..], &[7u8; 100][..]] {
        for entry in std::fs::read_dir(dir.path().join(".mem/index")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e != "json" && e != "lock") {
                std::fs::write(&path, garbage).unwrap();
            }
        }
        let out = dir.mem(&query);
        assert_eq!(out.json(), good);
        assert!(out.stderr.contains("notice: the index in"), "{}", out.stderr);
    }

    // A missing manifest is an inconsistent index too.
    for entry in std::fs::read_dir(dir.path().join(".mem")).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("manifest-") {
            std::fs::remove_file(path).unwrap();
        }
    }
    let out = dir.mem(&query);
    assert_eq!(out.json(), good);
    assert!(out.stderr.contains("unreadable manifest"), "{}", out.stderr);
}

/// The manifest files under `.mem/`, by name.
fn manifests(dir: &Dir) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.path().join(".mem"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("manifest-"))
        .collect();
    names.sort();
    names
}

/// A file added by another tool costs the next recall a record appended to the manifest's log,
/// not a rewrite of the whole manifest; many changes at once write a new base (the old one
/// and its log are deleted); a log cut short is an inconsistent index, rebuilt with a notice.
#[test]
fn a_change_is_appended_to_the_manifest_log_and_many_make_a_new_base() {
    let dir = Dir::new();
    for i in 0..5 {
        let body = format!("note {i}\n");
        dir.write(
            &format!("notes/m{i}.md"),
            memory(&format!("m{i}"), "semantic", 5, "2026-01-01T00:00:00Z", &body),
        );
    }
    dir.mem(&["index"]).ok();
    // The empty manifest of a new index is the base; the first five entries are its log.
    let first = manifests(&dir);
    assert_eq!(first, ["manifest-0.bin", "manifest-0.log"]);
    let state = dir.path().join(".mem");
    let base_bytes = std::fs::read(state.join(&first[0])).unwrap();
    let log_len = std::fs::metadata(state.join(&first[1])).unwrap().len();

    let quokka = memory("added", "semantic", 5, "2026-01-01T00:00:00Z", "a quokka sighting\n");
    dir.write("notes/added.md", quokka);
    assert_eq!(ids(&dir.mem(&["recall", "quokka", "--json"]).json()), ["added"]);
    assert_eq!(manifests(&dir), first);
    assert_eq!(std::fs::read(state.join(&first[0])).unwrap(), base_bytes, "base rewritten");
    let grown = std::fs::metadata(state.join(&first[1])).unwrap().len();
    assert!(grown > log_len && grown < log_len + 200, "{log_len} -> {grown} bytes");
    // Another process reads the manifest the log describes: nothing is read again.
    let again = counts(&dir);
    assert_eq!((again["added"].as_u64(), again["unchanged"].as_u64()), (Some(0), Some(6)));

    for i in 0..2_000 {
        let body = format!("bulk note {i}\n");
        dir.write(
            &format!("bulk/b{i}.md"),
            memory(&format!("b{i}"), "semantic", 5, "2026-01-01T00:00:00Z", &body),
        );
    }
    assert_eq!(counts(&dir)["added"], 2_000);
    let bulk = manifests(&dir);
    assert!(bulk.len() == 1 && bulk[0].ends_with(".bin") && bulk[0] != first[0], "{bulk:?}");

    dir.write("notes/late.md", memory("late", "semantic", 5, "2026-01-01T00:00:00Z", "late\n"));
    assert_eq!(ids(&dir.mem(&["recall", "late", "--json"]).json()), ["late"]);
    let log = dir.path().join(".mem").join(bulk[0].replace(".bin", ".log"));
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::File::options().write(true).open(&log).unwrap().set_len(len - 1).unwrap();
    let out = dir.mem(&["recall", "late", "--json"]);
    assert_eq!(ids(&out.json()), ["late"]);
    assert!(out.stderr.contains("unreadable manifest (its log is cut short)"), "{}", out.stderr);
}

#[test]
fn concurrent_adds_and_recalls_all_land() {
    let dir = Dir::new();
    dir.write("seed.md", memory("seed", "semantic", 5, "2026-01-01T00:00:00Z", "parallel seed\n"));
    let root = dir.path().to_str().unwrap().to_string();
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut cmd = Command::new(bin());
            crate::util::clean_env(&mut cmd);
            if i % 2 == 0 {
                cmd.args([
                    "--dir",
                    &root,
                    "add",
                    &format!("parallel note number {i}"),
                    "--tag",
                    "parallel",
                ]);
            } else {
                cmd.args(["--dir", &root, "recall", "parallel", "--json"]);
            }
            cmd.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let listed =
        run(Command::new(bin()).args(["--dir", &root, "list", "--tag", "parallel", "--json"]))
            .json();
    assert_eq!(listed.as_array().unwrap().len(), 4, "every add landed: {listed}");
}
