//! The freshness contract (docs/format.md, "Freshness"), clause by clause: what recall sees of
//! files changed by mem itself and by other tools, without a stat per file.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::util::{Dir, memory, run};

/// `(id, path)` of every memory a recall over all of them returns, sorted.
fn seen(dir: &Dir) -> Vec<(String, String)> {
    let json = dir.mem(&["recall", "shared", "--json", "--no-record", "-k", "1000"]).json();
    let mut found: Vec<(String, String)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["id"].as_str().unwrap().into(), h["path"].as_str().unwrap().into()))
        .collect();
    found.sort();
    found
}

/// `(id, path)` of every memory file under the root, as a fresh index would see them.
fn on_disk(dir: &Dir) -> Vec<(String, String)> {
    let copy = Dir::new();
    copy_md(dir.path(), copy.path(), dir.path());
    seen(&copy)
}

fn copy_md(from: &Path, to: &Path, top: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if path.is_dir() {
            copy_md(&path, to, top);
        } else if name.ends_with(".md") {
            let target = to.join(path.strip_prefix(top).unwrap());
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&path, target).unwrap();
        }
    }
}

fn note(id: &str, body: &str) -> String {
    memory(id, "semantic", 5, "2026-01-01T00:00:00Z", &format!("{body} shared\n"))
}

/// Sets the mtime of every file and folder under `dir` (but `.mem/` and `.git/`) to
/// 2026-01-01, so that no timestamp is too recent to trust and only real changes move them.
fn age(dir: &Path) {
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == ".mem" || n == ".git") {
            continue;
        }
        if path.is_dir() {
            age(&path);
        } else {
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(past).unwrap();
        }
    }
    std::fs::File::open(dir).unwrap().set_modified(past).unwrap();
}

/// Rewrites a file in place (same inode, so its folder does not change), as `>` in a shell
/// or an editor that does not replace files does.
fn edit_in_place(dir: &Dir, rel: &str, text: &str) {
    use std::io::Write;
    let mut file = std::fs::File::options().write(true).truncate(true).open(dir.path().join(rel));
    file.as_mut().unwrap().write_all(text.as_bytes()).unwrap();
}

fn ids_for(dir: &Dir, query: &str) -> Vec<String> {
    crate::util::ids(&dir.mem(&["recall", query, "--json", "--no-record"]).json_found())
}

#[test]
fn what_mem_writes_is_seen_at_once() {
    let dir = Dir::new();
    dir.mem(&["init"]).ok();
    dir.write("notes/a.md", note("a", "alpha"));
    assert_eq!(ids_for(&dir, "alpha"), ["a"]);
    let added = dir.mem(&["add", "bravo deploy rule shared", "--type", "procedural", "--json"]);
    let id = added.json()["id"].as_str().unwrap().to_string();
    assert_eq!(ids_for(&dir, "bravo"), std::slice::from_ref(&id));
    dir.mem(&["forget", &id]).ok();
    assert!(ids_for(&dir, "bravo").is_empty());
}

#[test]
fn files_added_removed_renamed_and_folders_renamed_by_other_tools_are_seen_next_recall() {
    let dir = Dir::new();
    for i in 0..6 {
        dir.write(&format!("notes/n{i}.md"), note(&format!("n{i}"), "note"));
        dir.write(&format!("deep/er/d{i}.md"), note(&format!("d{i}"), "deep"));
    }
    age(dir.path());
    assert_eq!(seen(&dir), on_disk(&dir));
    assert_eq!(seen(&dir).len(), 12);

    // Each change lands in a folder whose mtime is a day old: only the folder tells.
    dir.write("notes/new.md", note("new", "fresh"));
    assert_eq!(seen(&dir), on_disk(&dir));
    std::fs::remove_file(dir.path().join("deep/er/d0.md")).unwrap();
    assert_eq!(seen(&dir), on_disk(&dir));
    std::fs::rename(dir.path().join("notes/n1.md"), dir.path().join("notes/renamed.md")).unwrap();
    std::fs::rename(dir.path().join("notes/n2.md"), dir.path().join("deep/er/moved.md")).unwrap();
    assert_eq!(seen(&dir), on_disk(&dir));
    std::fs::rename(dir.path().join("deep"), dir.path().join("shallow")).unwrap();
    let after = seen(&dir);
    assert_eq!(after, on_disk(&dir));
    assert!(after.iter().any(|(id, path)| id == "d1" && path == "shallow/er/d1.md"), "{after:?}");
    std::fs::create_dir_all(dir.path().join("notes/sub")).unwrap();
    dir.write("notes/sub/s.md", note("s", "sub"));
    assert_eq!(seen(&dir), on_disk(&dir));
    std::fs::remove_dir_all(dir.path().join("notes")).unwrap();
    assert_eq!(seen(&dir), on_disk(&dir));
    assert_eq!(seen(&dir).len(), 6);
}

fn git(dir: &Path, args: &[&str]) {
    let out = run(Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .current_dir(dir));
    assert_eq!(out.code, 0, "git {args:?}: {}", out.stderr);
}

#[test]
fn a_git_checkout_or_pull_changing_many_files_at_once_is_seen_next_recall() {
    let dir = Dir::new();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    for i in 0..40 {
        dir.write(&format!("t{}/m{i}.md", i % 4), note(&format!("m{i}"), &format!("first {i}")));
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "one"]);
    git(dir.path(), &["checkout", "-q", "-b", "other"]);
    for i in 0..40 {
        let rel = format!("t{}/m{i}.md", i % 4);
        match i % 3 {
            0 => std::fs::remove_file(dir.path().join(&rel)).unwrap(),
            1 => {
                dir.write(&rel, note(&format!("m{i}"), &format!("second {i} rewritten")));
            }
            _ => {}
        }
        dir.write(&format!("t9/x{i}.md"), note(&format!("x{i}"), "added on the branch"));
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "two"]);
    git(dir.path(), &["checkout", "-q", "main"]);
    age(dir.path());
    let main = seen(&dir);
    assert_eq!((main.len(), &main), (40, &on_disk(&dir)));

    git(dir.path(), &["checkout", "-q", "other"]);
    let other = seen(&dir);
    assert_eq!(other, on_disk(&dir));
    assert_eq!(other.len(), 40 - 14 + 40);
    assert_eq!(ids_for(&dir, "rewritten").len(), 13, "the rewritten files are read again");

    // A pull into a clone that has recalled before.
    let clone = Dir::new();
    let from = dir.path().to_str().unwrap();
    git(clone.path(), &["clone", "-q", "-b", "main", from, "."]);
    age(clone.path());
    assert_eq!(seen(&clone).len(), 40);
    git(clone.path(), &["pull", "-q", "origin", "other"]);
    assert_eq!(seen(&clone), on_disk(&clone));
    assert_eq!(ids_for(&clone, "rewritten").len(), 13);
}

#[test]
fn an_edit_in_place_is_seen_by_the_recall_that_returns_it_and_by_all_after_mem_index() {
    let dir = Dir::new();
    dir.write("a.md", note("a", "apple pie recipe"));
    dir.write("b.md", note("b", "cherry tart"));
    age(dir.path());
    assert_eq!(ids_for(&dir, "apple"), ["a"]);

    // The folder does not change; the recall that returns `a` stats its file and sees it.
    edit_in_place(&dir, "a.md", &note("a", "banana bread, no fruit left"));
    assert!(ids_for(&dir, "apple").is_empty(), "a returned memory is read again");
    assert_eq!(ids_for(&dir, "banana"), ["a"]);

    // A memory no recall returned keeps its old text until the full check...
    edit_in_place(&dir, "b.md", &note("b", "durian smoothie"));
    assert!(ids_for(&dir, "durian").is_empty(), "not returned, not checked: the bound applies");
    // ...which `mem index` does at once.
    dir.mem(&["index"]).ok();
    assert_eq!(ids_for(&dir, "durian"), ["b"]);
}

#[test]
fn the_full_check_comes_within_the_bound_and_check_full_restores_it_every_recall() {
    let dir = Dir::new();
    dir.write("mem.toml", "[index]\nfull_check_secs = 1\n");
    dir.write("a.md", note("a", "apple"));
    dir.write("b.md", note("b", "cherry"));
    age(dir.path());
    assert_eq!(ids_for(&dir, "cherry"), ["b"]);
    edit_in_place(&dir, "b.md", &note("b", "durian"));
    std::thread::sleep(Duration::from_millis(1_100));
    assert_eq!(ids_for(&dir, "durian"), ["b"], "a full check after full_check_secs");

    edit_in_place(&dir, "mem.toml", "[index]\ncheck = \"full\"\n");
    assert_eq!(ids_for(&dir, "durian"), ["b"]);
    edit_in_place(&dir, "a.md", &note("a", "elderberry"));
    assert_eq!(ids_for(&dir, "elderberry"), ["a"], "check = full stats every file");
}

#[test]
fn a_bad_file_is_reported_by_every_recall_and_seen_once_fixed() {
    let dir = Dir::new();
    dir.write("a.md", note("a", "apple"));
    dir.write("bad.md", "---\nid: bad\ntype: nonsense\n---\nbody\n");
    age(dir.path());
    for _ in 0..2 {
        let out = dir.mem(&["recall", "apple", "--no-record"]);
        assert!(out.stderr.contains("bad.md"), "{}", out.stderr);
    }
    edit_in_place(&dir, "bad.md", &note("bad", "fixed apple"));
    let out = dir.mem(&["recall", "apple", "--json", "--no-record"]);
    assert!(!out.stderr.contains("bad.md"), "{}", out.stderr);
    assert_eq!(crate::util::ids(&out.json()).len(), 2);
}
