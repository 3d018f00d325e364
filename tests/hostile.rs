//! Regressions of the second fault probe: what a cloned repository may carry into a root (links
//! in `.mem/`, a crafted index, names that are not UTF-8) and what mem then refuses to do.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::{Dir, NOW, Out, memory};

/// Every file under `dir` with its bytes, and every folder (as an empty value).
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(top: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(top).unwrap().to_path_buf();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                out.insert(rel.join(""), Vec::new());
                walk(top, &path, out);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A root with one memory, and a folder beside it (outside it) that a link could name:
/// `index/thesis.txt`, `gitconfig`, `usage.db`, `sessions.db`, `folders.bin`, `lock`.
fn root_and_victim() -> (Dir, tempfile::TempDir) {
    let dir = Dir::new();
    dir.mem(&["init", "."]).ok();
    dir.write("in.md", memory("in1", "semantic", 5, "2026-01-01T00:00:00Z", "kafka inside\n"));
    let victim = tempfile::tempdir().unwrap();
    let v = victim.path();
    std::fs::create_dir(v.join("index")).unwrap();
    std::fs::write(v.join("index/thesis.txt"), "four years of work\n").unwrap();
    std::fs::write(v.join("gitconfig"), "[user]\n\tname = Ana\n").unwrap();
    for name in ["usage.db", "sessions.db", "folders.bin", "lock", "manifest-7.bin"] {
        std::fs::write(v.join(name), format!("the user's own {name}\n")).unwrap();
    }
    (dir, victim)
}

/// The commands a user, a hook or an agent runs on a root, with their stdin; `true` for a hook,
/// which exits 0 whatever happens and says why on stderr.
fn commands(dir: &Dir) -> Vec<(Vec<String>, String, bool)> {
    let payload = serde_json::json!({
        "session_id": "s1", "cwd": dir.path(), "hook_event_name": "UserPromptSubmit",
        "prompt": "kafka", "transcript_path": dir.path().join("none.jsonl"),
    })
    .to_string();
    let plain: &[&[&str]] = &[
        &["recall", "kafka"],
        &["add", "a new note about kafka"],
        &["index"],
        &["list"],
        &["health"],
        &["stats"],
        &["show", "in1"],
        &["used", "in1"],
        &["prune", "--dry-run"],
        &["sync"],
        &["reflect", "--dry-run"],
        &["session", "list"],
    ];
    let mut out: Vec<(Vec<String>, String, bool)> = plain
        .iter()
        .map(|args| (args.iter().map(|a| a.to_string()).collect(), String::new(), false))
        .collect();
    for hook in [&["context", "--hook", "claude"][..], &["capture", "--hook", "claude"]] {
        out.push((hook.iter().map(|a| a.to_string()).collect(), payload.clone(), true));
    }
    out
}

/// Where a link is put: `.mem` itself, or one of its files or folders (made real first by
/// `mem index`), and the victim path it names.
const LINKS: &[(&str, &str)] = &[
    (".mem", ""),
    (".mem/capture.log", "gitconfig"),
    (".mem/index", "index"),
    (".mem/usage.db", "usage.db"),
    (".mem/sessions.db", "sessions.db"),
    (".mem/folders.bin", "folders.bin"),
    (".mem/lock", "lock"),
];

/// One MCP recall on `dir`: what the server wrote on stdout up to its answer (or its end), and
/// its stderr.
fn mcp_recall(dir: &Dir) -> (String, String) {
    use std::io::BufRead;
    let mut child = dir.spawn(&["--now", NOW, "mcp"]);
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":{"query":"kafka"}}}"#,
    ];
    for line in lines {
        // A server that refused to start has closed its stdin.
        let _ = writeln!(stdin, "{line}");
    }
    let mut answer = String::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        answer.push_str(&line);
        if line.contains(r#""id":2"#) {
            break;
        }
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (answer, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Defect 1 and 2 of the probe: with `.mem` a link to `../victim`, one recall deleted
/// `victim/index/` and overwrote files there; with `.mem/capture.log` a link, every hook
/// appended to its target. Every command, against each kind of link: the link is refused and
/// named, nothing outside the root changes.
#[test]
fn no_command_follows_a_link_in_dot_mem() {
    for (link, target) in LINKS {
        let (dir, victim) = root_and_victim();
        dir.mem(&["index"]).ok();
        let path = dir.path().join(link);
        if path.is_dir() {
            std::fs::remove_dir_all(&path).unwrap();
        } else {
            let _ = std::fs::remove_file(&path);
        }
        std::os::unix::fs::symlink(victim.path().join(target), dir.path().join(link)).unwrap();
        let before = contents(victim.path());
        for (args, stdin, hook) in commands(&dir) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out: Out = dir.mem_stdin(&args, &stdin);
            let named = out.stderr.contains(link) && out.stderr.contains("is a symbolic link");
            if hook {
                assert_eq!(out.code, 0, "{link}: {args:?}: {}", out.stderr);
            } else {
                assert_eq!(out.code, 2, "{link}: {args:?}: {}{}", out.stdout, out.stderr);
            }
            assert!(named, "{link}: {args:?} names the link: {}", out.stderr);
            assert_eq!(contents(victim.path()), before, "{link}: {args:?} changed the victim");
        }
        let (answer, stderr) = mcp_recall(&dir);
        let refused = format!("{answer}{stderr}").contains("is a symbolic link");
        assert!(refused, "{link}: mcp: {answer}\n{stderr}");
        assert_eq!(contents(victim.path()), before, "{link}: mcp changed the victim");
        // Once the link is gone, the root works again.
        std::fs::remove_file(dir.path().join(link)).unwrap();
        let hits = dir.mem(&["recall", "--json", "kafka"]).json();
        assert_eq!(crate::util::ids(&hits), ["in1"], "{link}");
    }
}

/// tantivy deletes the files its `.managed.json` lists once it no longer uses them, joined to
/// the index folder: a committed `.mem/index/` could name any file. Such an index is rebuilt.
#[test]
fn an_index_that_lists_files_outside_its_folder_is_rebuilt_and_they_are_kept() {
    let (dir, victim) = root_and_victim();
    dir.mem(&["index"]).ok();
    let managed = dir.path().join(".mem/index/.managed.json");
    let mut names: Vec<String> =
        serde_json::from_str(&std::fs::read_to_string(&managed).unwrap()).unwrap();
    let absolute = victim.path().join("gitconfig");
    names.push(absolute.to_str().unwrap().to_string());
    names.push(format!("../../../{}", victim.path().join("lock").display()));
    std::fs::write(&managed, serde_json::to_string(&names).unwrap()).unwrap();
    let before = contents(victim.path());
    let add = dir.mem(&["add", "another note about kafka"]);
    assert!(add.stderr.contains("outside its folder; rebuilding it"), "{}", add.stderr);
    let hits = dir.mem(&["recall", "--json", "kafka"]).json();
    assert_eq!(hits.as_array().unwrap().len(), 2);
    dir.mem(&["index"]).ok();
    assert_eq!(contents(victim.path()), before);
}

/// Defect 4: a file or folder name that is not UTF-8 anywhere in a root made every command
/// panic (exit 101), hooks included; MCP answered "internal error". The walk reports the name
/// (shown lossily) and skips it and everything below it.
#[test]
fn a_name_that_is_not_utf8_is_reported_and_skipped_by_every_command() {
    use std::os::unix::ffi::OsStrExt;
    let (dir, _victim) = root_and_victim();
    let bad_dir = dir.path().join(std::ffi::OsStr::from_bytes(b"notes-\xff"));
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("n.md"), memory("n1", "semantic", 5, NOW, "kafka below\n"))
        .unwrap();
    let bad_file = dir.path().join(std::ffi::OsStr::from_bytes(b"old-\xfe.md"));
    std::fs::write(&bad_file, memory("o1", "semantic", 5, NOW, "kafka old\n")).unwrap();
    for _ in 0..2 {
        // The second time from what the first one saved in .mem/.
        let out = dir.mem(&["recall", "--json", "kafka"]);
        assert_eq!(crate::util::ids(&out.json()), ["in1"], "{}", out.stderr);
        for name in ["notes-\u{fffd}", "old-\u{fffd}.md"] {
            assert!(out.stderr.contains(name), "{name}: {}", out.stderr);
        }
        assert!(out.stderr.contains("not valid UTF-8"), "{}", out.stderr);
    }
    for args in [&["list"][..], &["index"], &["stats"], &["add", "one more note"]] {
        let out = dir.mem(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    let health = dir.mem(&["health"]);
    assert!(health.stdout.contains("notes-\u{fffd}"), "{}", health.stdout);
    let payload = serde_json::json!({
        "session_id": "s1", "cwd": dir.path(), "hook_event_name": "UserPromptSubmit",
        "prompt": "kafka inside",
    });
    let hook = dir.mem_stdin(&["context", "--hook", "claude"], payload.to_string());
    assert_eq!(hook.code, 0, "{}", hook.stderr);
    assert!(hook.stdout.contains("kafka inside"), "{}{}", hook.stdout, hook.stderr);
    let (answer, stderr) = mcp_recall(&dir);
    assert!(answer.contains("in1") && !answer.contains("internal error"), "{answer}\n{stderr}");
}

/// Defect 5: a 200 KB file nesting 100,000 `[` made each `mem context --hook` take 75 s. The
/// front-matter is bounded before the YAML parser sees it, and the error names the limit.
#[test]
fn hostile_front_matter_is_refused_before_parsing_with_the_limit_named() {
    let (dir, _victim) = root_and_victim();
    dir.write(
        "nested.md",
        format!("---\nid: x\ntype: semantic\ntags: {}\n---\n", "[".repeat(50_000)),
    );
    let long = format!("---\nid: y\ntype: semantic\ntitle: \"{}\"\n---\n", "a".repeat(70_000));
    dir.write("long.md", long);
    let quoted = format!("---\nid: z\ntype: semantic\ntitle: \"{}\"\n---\n", "[".repeat(300));
    dir.write("quoted.md", quoted);
    let out = dir.mem(&["recall", "--json", "kafka"]);
    assert_eq!(crate::util::ids(&out.json()), ["in1"], "{}", out.stderr);
    let nested = "nested.md:4: front-matter has 257 `[` or `{`, over the limit of 256";
    assert!(out.stderr.contains(nested), "{}", out.stderr);
    assert!(out.stderr.contains("quoted.md:4: front-matter has 257"), "{}", out.stderr);
    let long = "long.md: front-matter is 70031 bytes, over the 65536-byte limit";
    assert!(out.stderr.contains(long), "{}", out.stderr);
    // Reported by every recall, and by the hook's context without a failure.
    let again = dir.mem(&["recall", "--json", "kafka"]);
    assert!(again.stderr.contains(nested), "{}", again.stderr);
}

/// Defect 13: one Latin-1 byte in a committed `usage/*.tsv` made recall, show, prune, sync,
/// MCP recall and the context hook fail, while `mem health` said the usage check passed. The
/// line is skipped and counted; health fails on it and names it.
#[test]
fn a_usage_line_that_is_not_utf8_is_skipped_and_health_fails_on_it() {
    let (dir, _victim) = root_and_victim();
    let mut tsv =
        b"# usage\nsince\t2026-01-01T00:00:00Z\nused\t1\t2026-02-01T00:00:00Z\tcaf\xe9\n".to_vec();
    tsv.extend_from_slice(b"used\t2\t2026-02-02T00:00:00Z\tin1\n");
    dir.write("usage/other.tsv", &tsv);
    let recall = dir.mem(&["recall", "--json", "kafka"]);
    assert_eq!(crate::util::ids(&recall.json()), ["in1"], "{}", recall.stderr);
    let show = dir.mem(&["show", "--json", "in1"]).json();
    assert_eq!(show["access_count"], 1, "{show}");
    for args in [&["prune", "--dry-run"][..], &["sync"], &["used", "in1"], &["sync"]] {
        let out = dir.mem(args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    let payload = serde_json::json!({
        "session_id": "s1", "cwd": dir.path(), "hook_event_name": "UserPromptSubmit",
        "prompt": "kafka inside",
    });
    let hook = dir.mem_stdin(&["context", "--hook", "claude"], payload.to_string());
    assert!(hook.stdout.contains("kafka inside"), "{}{}", hook.stdout, hook.stderr);
    let (answer, stderr) = mcp_recall(&dir);
    assert!(answer.contains("in1") && !answer.contains("isError\":true"), "{answer}\n{stderr}");
    let health = dir.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(
        health.stdout.contains("1 lines of the usage files cannot be read"),
        "{}",
        health.stdout
    );
    assert!(health.stdout.contains("other.tsv:3: not valid UTF-8; skipped"), "{}", health.stdout);
    // The bytes of the file are kept as they were: mem appends only to its own file.
    assert!(std::fs::read(dir.path().join("usage/other.tsv")).unwrap().starts_with(&tsv));
}

/// Defect 16 (one item): `list --json` and `show --json` passed raw U+007F and U+009B (a
/// terminal's CSI) from a hand-edited file. JSON output escapes them.
#[test]
fn json_output_escapes_del_and_c1_controls() {
    let (dir, _victim) = root_and_victim();
    dir.write("odd.md", memory("odd1", "semantic", 5, NOW, "title \u{9b}31m red \u{7f} del\n"));
    for args in [&["list", "--json"][..], &["show", "--json", "odd1"], &["recall", "--json", "red"]]
    {
        let out = dir.mem(args);
        assert!(out.code <= 1, "{args:?}: {}", out.stderr);
        assert!(!out.stdout.contains(['\u{9b}', '\u{7f}']), "{args:?}: {:?}", out.stdout);
        assert!(out.stdout.contains("\\u009b31m"), "{args:?}: {}", out.stdout);
        let parsed: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        assert!(parsed.to_string().contains('\u{9b}'), "the same JSON once parsed");
    }
}
