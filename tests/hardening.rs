//! Regression tests of the fault and bad-input probe: each is named after the defect it pins.

use std::path::Path;

use crate::util::{Dir, memory};

/// A root of `n` small memories about redis, indexed.
fn indexed_root(n: usize) -> Dir {
    let dir = Dir::new();
    for i in 0..n {
        dir.write(
            &format!("m{i}.md"),
            memory(
                &format!("m{i}"),
                "semantic",
                5,
                "2026-01-01T00:00:00Z",
                &format!("# note {i}\nredis cache note number {i}\n"),
            ),
        );
    }
    dir.mem(&["index"]).ok();
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn del_files(index: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(index)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".del"))
        .collect();
    found.sort();
    found
}

/// A kill after tantivy wrote `<segment>.<opstamp>.del` but before the commit left a file the
/// next update tried to create again, and every later command failed until `.mem/` was
/// deleted. The state is made exactly: the update is run once to learn the file's name, then
/// the index from before it is put back with that file beside it (listed in tantivy's
/// `.managed.json`, as a kill leaves it, and not listed).
#[test]
fn a_kill_during_an_index_update_does_not_make_the_root_unusable() {
    for listed in [true, false] {
        let dir = indexed_root(40);
        let state = dir.path().join(".mem");
        let before = dir.path().join("before");
        copy_dir(&state, &before);
        let index = state.join("index");
        let old = del_files(&index);
        let mut text = dir.read("m7.md");
        text.push_str("another line about redis\n");
        dir.write("m7.md", &text);
        dir.mem(&["index"]).ok();
        let new: Vec<String> = del_files(&index).into_iter().filter(|f| !old.contains(f)).collect();
        assert_eq!(new.len(), 1, "the update deletes one document: {new:?}");

        std::fs::remove_dir_all(&state).unwrap();
        copy_dir(&before, &state);
        std::fs::remove_dir_all(&before).unwrap();
        std::fs::write(index.join(&new[0]), b"half-written").unwrap();
        if listed {
            let managed = index.join(".managed.json");
            let mut files: Vec<String> =
                serde_json::from_str(&std::fs::read_to_string(&managed).unwrap()).unwrap();
            files.push(new[0].clone());
            std::fs::write(&managed, serde_json::to_string(&files).unwrap()).unwrap();
        }
        let usage_probe = state.join("usage.db");
        let out = dir.mem(&["recall", "--json", "redis", "another"]);
        assert_eq!(out.code, 0, "listed: {listed}\n{}", out.stderr);
        assert_eq!(out.json()[0]["id"], "m7", "listed: {listed}");
        assert!(!out.stderr.contains("delete the .mem"), "{}", out.stderr);
        assert!(usage_probe.exists(), "the usage log is kept");
        let health = dir.mem(&["health"]);
        assert_eq!(health.code, 0, "{}{}", health.stdout, health.stderr);
    }
}

/// Writes a shared library whose constructor creates the file named by `$MEM_TEST_MARKER`:
/// loading it leaves a trace.
fn marker_library(path: &Path) {
    let source = path.with_extension("c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n#include <stdlib.h>\n__attribute__((constructor)) static void ran(void) {\n  const char *m = getenv(\"MEM_TEST_MARKER\");\n  if (m) { FILE *f = fopen(m, \"w\"); if (f) fclose(f); }\n}\n",
    )
    .unwrap();
    let out = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(path)
        .arg(&source)
        .output()
        .expect("the C compiler (cc) builds the probe library");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// A root's mem.toml named a model folder inside the root: opening a cloned repository made
/// `mem` load (and run) the library in it. The same for a summariser command.
#[test]
fn opening_a_root_runs_no_code_from_it() {
    let dir = Dir::new();
    dir.write("note.md", memory("n1", "semantic", 5, "2026-01-01T00:00:00Z", "redis port 6379\n"));
    std::fs::create_dir_all(dir.path().join("model")).unwrap();
    marker_library(&dir.path().join("model/libonnxruntime.so"));
    let marker = dir.path().join("loaded");
    let touched = dir.path().join("summarized");
    dir.write(
        "mem.toml",
        format!(
            "[embed]\nmodel_dir = \"model\"\n[reflect]\nsummarizer = \"touch {}\"\nmin_cluster = 2\n",
            touched.display()
        ),
    );
    for args in [&["recall", "redis"][..], &["recall", "--mode", "hybrid", "redis"], &["reflect"]] {
        let out = crate::util::run(
            std::process::Command::new(crate::util::bin())
                .arg("--dir")
                .arg(dir.path())
                .args(args)
                .env("MEM_TEST_MARKER", &marker),
        );
        assert!(!marker.exists(), "{args:?} loaded the root's library");
        assert!(!touched.exists(), "{args:?} ran the root's summariser");
        assert!(out.stderr.contains("[embed] model_dir is ignored"), "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("[reflect] summarizer is ignored"), "{args:?}: {}", out.stderr);
    }
    // The same folder named by the user is the user's decision: it is loaded (with the model
    // files beside the library, which is checked last).
    for entry in std::fs::read_dir(crate::util::model_dir()).unwrap().flatten() {
        let name = entry.file_name();
        // The files only: not the optimised model kept beside them (`optimized/`).
        if name != "libonnxruntime.so" && entry.file_type().is_ok_and(|t| t.is_file()) {
            std::fs::copy(entry.path(), dir.path().join("model").join(name)).unwrap();
        }
    }
    dir.write_user_config(&format!("[embed]\nmodel_dir = {:?}\n", dir.path().join("model")));
    let out = crate::util::run(
        std::process::Command::new(crate::util::bin())
            .arg("--dir")
            .arg(dir.path())
            .args(["recall", "--mode", "hybrid", "redis"])
            .env("XDG_CONFIG_HOME", dir.home())
            .env("MEM_TEST_MARKER", &marker),
    );
    assert!(marker.exists(), "the user's model folder is used: {}", out.stderr);
}

/// A root whose `linkdir` is a symbolic link to a folder outside it, with one memory there.
fn root_with_outside_link() -> (Dir, std::path::PathBuf) {
    let dir = Dir::new();
    let outside = dir
        .path()
        .join("..")
        .join(format!("outside-{}", dir.path().file_name().unwrap().to_string_lossy()));
    std::fs::create_dir_all(&outside).unwrap();
    let outside = std::fs::canonicalize(&outside).unwrap();
    std::fs::write(
        outside.join("ext2.md"),
        memory("ext2", "episodic", 1, "2020-01-01T00:00:00Z", "an old outside note about kafka\n"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, dir.path().join("linkdir")).unwrap();
    dir.write("in.md", memory("in1", "semantic", 5, "2026-01-01T00:00:00Z", "kafka inside\n"));
    dir.observe_since("2020-01-01T00:00:00Z");
    (dir, outside)
}

/// `mem prune` moved a memory reached through a link that leaves the root into `archive/`
/// and removed the original outside the root; `used`, `sync` and `forget` rewrote it.
#[test]
fn nothing_outside_the_root_is_written_moved_or_deleted_through_a_symlink() {
    let (dir, outside) = root_with_outside_link();
    let original = std::fs::read_to_string(outside.join("ext2.md")).unwrap();
    // Read and recalled.
    let hits = dir.mem(&["recall", "--json", "--no-record", "kafka"]).json();
    assert_eq!(hits.as_array().unwrap().len(), 2);

    let prune = dir.mem(&["prune"]);
    assert_eq!(prune.code, 0, "{}", prune.stderr);
    assert!(prune.stderr.contains("not archived: linkdir/ext2.md"), "{}", prune.stderr);
    assert!(!dir.path().join("archive/linkdir/ext2.md").exists());
    let forget = dir.mem(&["forget", "ext2"]);
    assert_eq!(forget.code, 2);
    assert!(
        forget.stderr.contains("linkdir/ext2.md is reached through a symbolic link"),
        "{}",
        forget.stderr
    );

    // Usage goes to usage/ inside the root: the linked file is not written.
    dir.mem(&["used", "ext2"]).ok();
    dir.mem(&["sync"]).ok();

    assert_eq!(std::fs::read_to_string(outside.join("ext2.md")).unwrap(), original);
    std::fs::remove_dir_all(&outside).unwrap();
}

/// An `archive` folder that is a link out of the root would make prune write outside it.
#[test]
fn prune_does_not_write_through_an_archive_link() {
    let (dir, outside) = root_with_outside_link();
    std::fs::remove_file(dir.path().join("linkdir")).unwrap();
    std::fs::remove_file(outside.join("ext2.md")).unwrap();
    dir.write("old.md", memory("old1", "episodic", 1, "2020-01-01T00:00:00Z", "stale\n"));
    dir.observe_since("2020-01-01T00:00:00Z");
    std::os::unix::fs::symlink(&outside, dir.path().join("archive")).unwrap();
    let prune = dir.mem(&["prune"]);
    assert!(prune.stderr.contains("not archived: archive/old.md"), "{}", prune.stderr);
    assert!(dir.path().join("old.md").exists());
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    std::fs::remove_dir_all(&outside).unwrap();
}

/// A prune killed between writing the archived copy and removing the original left both, and
/// every later prune and restore of it failed with "File exists".
#[test]
fn a_prune_killed_between_its_two_steps_is_finished_by_the_next_one() {
    let dir = Dir::new();
    let text = memory("old1", "episodic", 1, "2020-01-01T00:00:00Z", "stale lunch order\n");
    dir.write("old.md", &text);
    dir.write("keep.md", memory("k1", "semantic", 9, "2026-11-01T00:00:00Z", "keep me\n"));
    dir.observe_since("2020-01-01T00:00:00Z");
    // The state a kill leaves: the archived copy written, the original still there.
    dir.write(
        "archive/old.md",
        text.replace("---\nstale", "archived_at: 2026-11-30T11:00:00Z\n---\nstale"),
    );
    // Health says so.
    dir.mem(&["index"]).ok();
    let health = dir.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(
        health.stdout.contains("old1 is both at old.md and at archive/old.md"),
        "{}",
        health.stdout
    );
    let json: serde_json::Value =
        serde_json::from_str(&dir.mem(&["health", "--json"]).stdout).unwrap();
    assert_eq!(
        json["interrupted_moves"],
        serde_json::json!([{ "id": "old1", "path": "old.md", "archived": "archive/old.md" }]),
        "named fields, not a tuple"
    );
    let prune = dir.mem(&["prune"]);
    assert_eq!(prune.code, 0, "{}", prune.stderr);
    assert!(!dir.path().join("old.md").exists(), "the move is finished");
    assert!(dir.path().join("archive/old.md").exists());

    // The same for a restore killed between its steps.
    dir.write("old.md", &text);
    let restore = dir.mem(&["restore", "old1"]);
    assert_eq!(restore.code, 0, "{}", restore.stderr);
    assert!(dir.path().join("old.md").exists() && !dir.path().join("archive/old.md").exists());

    // Another memory in the way is named, with the fix.
    dir.write("archive/old.md", memory("other", "episodic", 1, "2020-01-01T00:00:00Z", "x\n"));
    let blocked = dir.mem(&["prune"]);
    assert!(
        blocked.stderr.contains("archive/old.md exists and holds another memory (other)"),
        "{}",
        blocked.stderr
    );
    assert!(dir.path().join("old.md").exists());
}

/// `mem add` kept ESC and NUL bytes, and `list`/`recall` printed them to the terminal.
#[test]
fn terminal_escapes_are_neither_stored_nor_printed() {
    let dir = Dir::new();
    let added = dir.mem(&[
        "add",
        "--title",
        "red \u{1b}[31malert",
        "text with \u{1b}]0;pwned\u{7} and \u{1b}[2J clear",
    ]);
    added.ok();
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
        .collect();
    let stored = std::fs::read_to_string(files[0].path()).unwrap();
    assert!(!stored.contains('\u{1b}') && !stored.contains('\u{7}'), "{stored:?}");
    // A file written by hand with an escape in its title is listed without it.
    dir.write(
        "hand.md",
        memory(
            "h1",
            "semantic",
            5,
            "2026-01-01T00:00:00Z",
            "# evil \u{1b}[2J title\nclear screen\n",
        ),
    );
    for args in [&["list"][..], &["recall", "clear"]] {
        let out = dir.mem(args);
        assert!(!out.stdout.contains('\u{1b}'), "{args:?}: {:?}", out.stdout);
        assert!(out.stdout.contains("evil [2J title"), "{args:?}: {}", out.stdout);
    }
}

/// `[usage] busy_timeout_ms = 2147483648` made recall, used, health and sync panic in rusqlite.
#[test]
fn a_huge_busy_timeout_is_a_settings_error_not_a_panic() {
    let dir = Dir::new();
    dir.write("a.md", memory("a1", "semantic", 5, "2026-01-01T00:00:00Z", "redis\n"));
    dir.write("mem.toml", "[usage]\nbusy_timeout_ms = 2147483648\n");
    for args in [&["recall", "redis"][..], &["used", "a1"], &["health"], &["sync"]] {
        let out = dir.mem(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("[usage] busy_timeout_ms must be at most 2147483647"),
            "{}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

/// Messages that did not say what was wrong: a UTF-8 BOM, a file given as the root, a file in
/// the way of a new one, a 10,000-character id echoed whole.
#[test]
fn unclear_messages_say_what_is_wrong() {
    let dir = Dir::new();
    dir.write(
        "bom.md",
        format!("\u{feff}{}", memory("b1", "semantic", 5, "2026-01-01T00:00:00Z", "x\n")),
    );
    let out = dir.mem(&["index"]);
    assert!(
        out.stderr.contains("bom.md:1: the file starts with a UTF-8 byte-order mark (BOM)"),
        "{}",
        out.stderr
    );

    let file = dir.write("plain.txt", "not a folder");
    let out = crate::util::run(
        std::process::Command::new(crate::util::bin()).arg("--dir").arg(&file).arg("list"),
    );
    assert!(out.stderr.contains("plain.txt is a file, not a folder"), "{}", out.stderr);

    let long = "x".repeat(10_000);
    let out = dir.mem(&["show", &long]);
    assert!(
        out.stderr.contains("(10000 characters)") && out.stderr.len() < 1_000,
        "{}",
        out.stderr
    );
}

/// `mem health` exited 1 ("stale") right after a successful `sync`, `used` or `forget`, and
/// `.mem-tmp-*` files left by kills were never cleaned up or reported.
#[test]
fn health_is_clean_after_writes_and_leftover_temp_files_are_reported_then_removed() {
    let dir = Dir::new();
    dir.write("a.md", memory("a1", "semantic", 5, "2026-01-01T00:00:00Z", "redis one\n"));
    dir.write("b.md", memory("b1", "semantic", 5, "2026-01-01T00:00:00Z", "redis two\n"));
    dir.mem(&["index"]).ok();
    for args in [&["used", "--no-sync", "a1"][..], &["sync"], &["used", "b1"], &["forget", "a1"]] {
        dir.mem(args).ok();
        let health = dir.mem(&["health"]);
        assert_eq!(health.code, 0, "after {args:?}: {}", health.stdout);
    }
    let tmp = dir.write(".mem-tmp-AbCd12", "half a memory");
    let old = std::process::Command::new("touch")
        .args(["-d", "2026-11-29T00:00:00Z"])
        .arg(&tmp)
        .status()
        .unwrap();
    assert!(old.success());
    let health = dir.mem(&["health"]);
    assert_eq!(health.code, 1);
    assert!(
        health.stdout.contains("1 temporary files left by interrupted writes"),
        "{}",
        health.stdout
    );
    let index = dir.mem(&["index"]);
    assert!(index.stderr.contains("removed 1 temporary files"), "{}", index.stderr);
    assert!(!tmp.exists());
    assert_eq!(dir.mem(&["health"]).code, 0);
}

/// Three clusters of observations.
fn clustered_root() -> Dir {
    let dir = Dir::new();
    let topics = [
        "deploy pipeline failed again",
        "database migration stalled after deploy",
        "login cookie expired for users",
    ];
    for (t, topic) in topics.iter().enumerate() {
        for i in 0..8 {
            let id = format!("e{t}{i}");
            let text = format!("{topic} note{t}{i}a note{t}{i}b\n");
            dir.write(
                &format!("{id}.md"),
                memory(&id, "episodic", 3, "2026-11-20T00:00:00Z", &text),
            );
        }
    }
    dir
}

/// The source ids of each reflection in `reflections/`, sorted.
fn reflections(dir: &Dir) -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = std::fs::read_dir(dir.path().join("reflections"))
        .unwrap()
        .flatten()
        .map(|e| {
            let memory = mem::Memory::parse(&std::fs::read_to_string(e.path()).unwrap()).unwrap();
            let mut ids: Vec<String> =
                memory.derived_from().iter().map(|i| i.to_string()).collect();
            ids.sort();
            ids
        })
        .collect();
    all.sort();
    all
}

/// A reflection killed after writing its first file (sources not marked yet), then run again,
/// merged unrelated clusters into that one reflection. It must write what an uninterrupted
/// run writes.
#[test]
fn a_reflection_killed_after_its_first_file_then_rerun_writes_the_same_clusters() {
    let whole = clustered_root();
    whole.mem(&["reflect"]).ok();
    let expected = reflections(&whole);
    assert_eq!(expected.len(), 3, "{expected:?}");

    let cut = clustered_root();
    let first = std::fs::read_dir(whole.path().join("reflections"))
        .unwrap()
        .flatten()
        .find(|e| std::fs::read_to_string(e.path()).unwrap().contains("e00"))
        .unwrap();
    cut.write(
        &format!("reflections/{}", first.file_name().to_string_lossy()),
        std::fs::read(first.path()).unwrap(),
    );
    cut.mem(&["reflect"]).ok();
    assert_eq!(reflections(&cut), expected);
}

/// `add` rounded `created` to the nearest second, up half the time, so that a memory written now
/// was "in the future" for every other process until the next second.
#[test]
fn add_never_dates_a_memory_in_the_future() {
    let dir = Dir::new();
    let out = crate::util::run(
        std::process::Command::new(crate::util::bin())
            .arg("--dir")
            .arg(dir.path())
            .args(["add", "--json", "written at 12:00:00.9"])
            .env("MEM_NOW", "2026-11-30T12:00:00.9Z"),
    );
    let path = out.json()["path"].as_str().unwrap().to_string();
    assert!(dir.read(&path).contains("created: 2026-11-30T12:00:00Z\n"), "{}", dir.read(&path));
    let list = dir.mem(&["list"]);
    assert!(!list.stderr.contains("in the future"), "{}", list.stderr);
}
