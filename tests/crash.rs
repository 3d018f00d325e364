//! The crash harness: every writing command is killed (SIGKILL, no cleanup) at random moments
//! of its run, on a fresh copy of one prepared root, and the invariants are checked after each
//! kill:
//!
//! - every memory file parses, and no memory is lost (each id of before is still in the root
//!   or its archive);
//! - a file the command edits in place is either as it was or as an uninterrupted run leaves it;
//! - the usage files (`usage/*.tsv`) read without a problem: an unfinished last line, the trace
//!   of a write cut short, is not read (half of the kills also cut the usage file at a random
//!   byte, as a power cut during its append would: see [`cut_usage_file`]);
//! - the next commands work without manual repair: `mem index`, then the command again where it
//!   can be repeated (or `mem sync`), then `mem recall`;
//! - after that, no id is in two files (a prune or restore cut in two is finished), `mem health`
//!   reports a sound root, no memory file keeps an `access:` line, the usage files hold each
//!   event of the usage log exactly once and each moved `access:` line as it was, and every
//!   memory's usage state (what prune and `mem show` read) is the one its old `access:` line
//!   and the log's events give (events neither lost nor doubled).
//!
//! `cargo test` runs [`CI_KILLS`] kills per command. `MEM_CRASH_SOAK=N` runs N per command
//! instead (`MEM_CRASH_SOAK=100 cargo test --release --test integration crash -- --nocapture`
//! makes 1,000 kills; see docs/reliability.md), and `MEM_CRASH_SEED` picks the random seed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use mem::decay::{Reinforcement, State};
use mem::usage::shared;

use crate::util::{bin, clean_env, memory};

/// Kills per command in a normal test run.
const CI_KILLS: usize = 6;

/// One writing command and how to run it on a copy of the prepared root.
struct Case {
    name: &'static str,
    args: &'static [&'static str],
    /// Whether running it a second time is a normal thing to do (not `forget` twice).
    repeatable: bool,
    /// A file whose presence after the kill means the command did not finish, and is run
    /// again (as `mem health` advises for an interrupted `restore`).
    again_if: Option<&'static str>,
    /// Files it edits in place, whose content must be old or new after a kill.
    edits: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "add",
        args: &["add", "kafka consumer lag alert fired at night"],
        repeatable: true,
        again_if: None,
        edits: &[],
    },
    Case {
        name: "used",
        args: &["used", "s3", "s4"],
        repeatable: false,
        again_if: None,
        edits: &["s3.md", "s4.md"],
    },
    Case {
        name: "sync",
        args: &["sync"],
        repeatable: true,
        again_if: None,
        edits: &["s1.md", "s2.md", "s3.md", "s4.md"],
    },
    Case {
        name: "forget",
        args: &["forget", "s5"],
        repeatable: false,
        again_if: None,
        edits: &["s5.md"],
    },
    Case {
        name: "supersede",
        args: &["supersede", "s6", "--by", "s7"],
        repeatable: false,
        again_if: None,
        edits: &["s6.md"],
    },
    Case { name: "prune", args: &["prune"], repeatable: true, again_if: None, edits: &[] },
    Case {
        name: "restore",
        args: &["restore", "arch1"],
        repeatable: false,
        again_if: Some("archive/arch1.md"),
        edits: &[],
    },
    Case {
        name: "reflect",
        args: &["reflect", "--min-cluster", "3"],
        repeatable: true,
        again_if: None,
        edits: &[],
    },
    Case {
        name: "index",
        args: &["index", "--rebuild"],
        repeatable: true,
        again_if: None,
        edits: &[],
    },
    Case { name: "capture", args: &["capture"], repeatable: true, again_if: None, edits: &[] },
];

/// The prepared root: memories of every kind (four with the `access:` line of an older `mem`),
/// old ones to prune, two clusters to reflect on, an archived memory, unsynced usage (uses and
/// retrievals), and a transcript to capture (in a hidden folder, which is not walked).
fn template() -> &'static Path {
    static TEMPLATE: OnceLock<tempfile::TempDir> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            let write = |rel: &str, text: String| {
                let path = root.join(rel);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            };
            for i in 0..10 {
                let mut text = memory(&format!("s{i}"), "semantic", 6, "2026-06-01T00:00:00Z", &format!("# Fact {i}\nThe service {i} listens on port 80{i:02}.\n"));
                if (1..=4).contains(&i) {
                    let access = format!("access: {{ count: {i}, last: 2026-09-0{i}T00:00:00Z, retrieved: {}, strength: {}.25 }}\n---\n#", 2 * i, 400 + i);
                    text = text.replacen("---\n#", &access, 1);
                }
                write(&format!("s{i}.md"), text);
            }
            for i in 0..6 {
                write(
                    &format!("login/e{i}.md"),
                    memory(&format!("login{i}"), "episodic", 3, "2026-11-20T00:00:00Z", &format!("Users were signed out: the login session cookie expired early, case {i}.\n")),
                );
                write(
                    &format!("redis/e{i}.md"),
                    memory(&format!("redis{i}"), "episodic", 3, "2026-11-21T00:00:00Z", &format!("The redis cache timed out under load and requests failed, night {i}.\n")),
                );
            }
            for i in 0..8 {
                write(
                    &format!("old/o{i}.md"),
                    memory(&format!("old{i}"), "episodic", 1, "2021-01-01T00:00:00Z", &format!("Lunch order number {i}.\n")),
                );
            }
            write(
                "archive/arch1.md",
                memory("arch1", "episodic", 2, "2022-01-01T00:00:00Z", "An archived note.\n")
                    .replace("---\nAn archived", "archived_at: 2026-01-01T00:00:00Z\n---\nAn archived"),
            );
            let transcript = root.join(".fixtures/session.jsonl");
            write(
                ".fixtures/session.jsonl",
                [
                    r#"{"type":"user","sessionId":"c1","cwd":"/work/app","timestamp":"2026-11-29T10:00:00Z","message":{"role":"user","content":"Fix the flaky login test"}}"#,
                    r#"{"type":"assistant","timestamp":"2026-11-29T10:30:00Z","message":{"role":"assistant","content":[{"type":"text","text":"Fixed: the cookie expired."}]}}"#,
                ]
                .join("\n")
                    + "\n",
            );
            write(
                ".fixtures/payload.json",
                format!(
                    r#"{{"session_id":"c1","transcript_path":{},"cwd":"/work/app","hook_event_name":"SessionEnd"}}"#,
                    serde_json::to_string(transcript.to_str().unwrap()).unwrap()
                ),
            );
            for args in [&["index"][..], &["used", "--no-sync", "s1", "s2", "s1"], &["recall", "port"]] {
                let out = run_mem(root, args, None);
                assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            }
            dir
        })
        .path()
}

fn command(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.arg("--dir").arg(root).args(args);
    clean_env(&mut cmd);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    cmd
}

/// Runs `mem` to completion, with `stdin` when given.
fn run_mem(root: &Path, args: &[&str], stdin: Option<&[u8]>) -> std::process::Output {
    let mut cmd = command(root, args);
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn stdin_of(case: &Case, root: &Path) -> Option<Vec<u8>> {
    (case.name == "capture").then(|| std::fs::read(root.join(".fixtures/payload.json")).unwrap())
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A fresh copy of the prepared root. The transcript path in the payload names the template's
/// file, which is only read.
fn fresh() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(template(), dir.path());
    dir
}

/// Every memory file under `root` (archive included, hidden folders not), by path.
fn memory_files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(root, &path, out);
            } else if name.ends_with(".md") {
                let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The ids of the files, each with the paths that hold it; a file that does not parse fails.
fn ids(files: &BTreeMap<String, Vec<u8>>, context: &str) -> BTreeMap<String, Vec<String>> {
    let mut ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (path, bytes) in files {
        let memory = mem::Memory::parse_bytes(bytes).unwrap_or_else(|e| {
            panic!(
                "{context}: {path} does not parse after the kill: {e}\n{}",
                String::from_utf8_lossy(bytes)
            )
        });
        ids.entry(memory.id().to_string()).or_default().push(path.clone());
    }
    ids
}

/// The events of the usage log (`.mem/usage.db`) per memory, in a fixed order.
fn logged_events(root: &Path) -> BTreeMap<String, Vec<Reinforcement>> {
    let db = rusqlite::Connection::open(root.join(".mem/usage.db")).unwrap();
    let mut stmt = db.prepare("SELECT memory_id, kind, at, rank FROM events").unwrap();
    let rows = stmt.query_map([], |r| {
        let at = jiff::Timestamp::from_second(r.get(2)?).unwrap();
        let event = match r.get::<_, String>(1)?.as_str() {
            "used" => Reinforcement::Used { at },
            _ => Reinforcement::Retrieved { at, rank: r.get::<_, i64>(3)? as u32 },
        };
        Ok((r.get::<_, String>(0)?, event))
    });
    let mut out: BTreeMap<String, Vec<Reinforcement>> = BTreeMap::new();
    for row in rows.unwrap() {
        let (id, event) = row.unwrap();
        out.entry(id).or_default().push(event);
    }
    out.values_mut().for_each(|events| events.sort_by_key(order));
    out
}

/// The order events are folded in (as `UsageView::state` does).
fn order(event: &Reinforcement) -> (jiff::Timestamp, u32) {
    match *event {
        Reinforcement::Used { at } => (at, 0),
        Reinforcement::Retrieved { at, rank } => (at, rank),
    }
}

/// The usage files, read as `mem` reads them; a line that does not read fails.
fn usage_files(root: &Path, context: &str) -> shared::SharedUsage {
    let usage = shared::load(root).unwrap();
    assert!(usage.problems.is_empty(), "{context}: usage files: {:?}", usage.problems);
    usage
}

/// A power cut during the usage file's append: the file loses a random tail (`at` of it). The
/// append is flushed before any memory file loses its `access:` line, so the tail a cut can
/// take holds no `base` line of a file already rewritten; the cut may take anything after the
/// last of those (events, `base` lines of files not rewritten, even `since`), which also
/// covers the states of a cut during an earlier append.
fn cut_usage_file(root: &Path, before: &BTreeMap<String, Vec<u8>>, at: f64) -> Option<String> {
    let files = memory_files(root);
    let rewritten: BTreeSet<String> = before
        .iter()
        .filter(|(path, old)| {
            has_access(old) && files.get(*path).is_some_and(|new| !has_access(new))
        })
        .map(|(_, old)| mem::Memory::parse_bytes(old).unwrap().id().to_string())
        .collect();
    let path = std::fs::read_dir(root.join(shared::DIR)).ok()?.flatten().next()?.path();
    let text = std::fs::read_to_string(&path).unwrap();
    let mut keep_at_least = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        offset += line.len();
        let mut fields = line.split('\t');
        if fields.next() == Some("base") && fields.next().is_some_and(|id| rewritten.contains(id)) {
            keep_at_least = offset;
        }
    }
    if keep_at_least == text.len() {
        return None;
    }
    let keep = keep_at_least + ((text.len() - keep_at_least) as f64 * at) as usize;
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(keep as u64).unwrap();
    Some(format!("usage file cut at byte {keep} of {}", text.len()))
}

fn has_access(bytes: &[u8]) -> bool {
    mem::Memory::parse_bytes(bytes).is_ok_and(|m| m.access().is_some())
}

/// After a complete sync: no `access:` line is left in a memory file, the usage files hold
/// every event of the log once and every moved `access:` line as it was, and each memory's
/// usage state is the one its old `access:` line and the log's events give.
fn check_usage(root: &Path, before: &BTreeMap<String, Vec<u8>>, context: &str) {
    let usage = usage_files(root, context);
    let logged = logged_events(root);
    let mut written: BTreeMap<String, Vec<Reinforcement>> =
        usage.events.clone().into_iter().collect();
    written.values_mut().for_each(|events| events.sort_by_key(order));
    assert_eq!(written, logged, "{context}: the usage files and the log differ");
    let old: BTreeMap<String, mem::format::Access> = before
        .values()
        .filter_map(|bytes| {
            let memory = mem::Memory::parse_bytes(bytes).unwrap();
            memory.access().map(|a| (memory.id().to_string(), a))
        })
        .collect();
    let mut engine = mem::Engine::open(root).unwrap();
    let decay = engine.files.config().decay.clone();
    let view = engine.usage.view(&engine.files).unwrap();
    for (path, bytes) in memory_files(root) {
        let memory = mem::Memory::parse_bytes(&bytes).unwrap();
        let id = memory.id().to_string();
        if path.starts_with("archive/") {
            continue;
        }
        assert!(memory.access().is_none(), "{context}: {path} keeps its access: line");
        assert_eq!(usage.bases.get(&id), old.get(&id), "{context}: moved access: line of {id}");
        let initial = decay.initial_strength(memory.kind(), memory.importance());
        let mut expected = State::from_memory(initial, memory.created(), old.get(&id).copied());
        expected.consolidated = memory.consolidated_into().is_some();
        let expected = logged.get(&id).into_iter().flatten().copied().fold(expected, State::fold);
        assert_eq!(view.state(&memory, &decay), expected, "{context}: usage state of {id}");
    }
}

/// What an uninterrupted run leaves in the files `case` edits in place, and how long it takes
/// (the kills are spread over that time; nothing is asserted on it).
#[allow(clippy::disallowed_methods)]
fn uninterrupted(case: &Case) -> (BTreeMap<String, Vec<u8>>, Duration) {
    let dir = fresh();
    let stdin = stdin_of(case, dir.path());
    let started = Instant::now();
    let out = run_mem(dir.path(), case.args, stdin.as_deref());
    let took = started.elapsed();
    assert!(out.status.success(), "{}: {}", case.name, String::from_utf8_lossy(&out.stderr));
    let files = memory_files(dir.path());
    let edited = case.edits.iter().map(|p| (p.to_string(), files[*p].clone())).collect();
    (edited, took)
}

/// Starts `case`, kills it after `delay`, cuts the usage file at `cut` (a share of its length)
/// when that is a state a power cut can leave, and checks the invariants. Returns whether the
/// kill landed before the command ended, and whether the usage file was cut.
fn kill_and_check(
    case: &Case,
    delay: Duration,
    cut: Option<f64>,
    after: &BTreeMap<String, Vec<u8>>,
) -> (bool, bool) {
    let dir = fresh();
    let root = dir.path();
    let before = memory_files(root);
    let ids_before = ids(&before, "before");
    let stdin = stdin_of(case, root);
    let mut cmd = command(root, case.args);
    cmd.stdin(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(bytes) = &stdin {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    } else {
        drop(child.stdin.take());
    }
    std::thread::sleep(delay);
    let killed = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    let mut context = format!("{} killed after {delay:?}", case.name);
    let how = cut.and_then(|at| cut_usage_file(root, &before, at));
    if let Some(how) = &how {
        context = format!("{context}, {how}");
    }

    // Files: each parses, none is lost, edited ones are old or new.
    let files = memory_files(root);
    let ids_after = ids(&files, &context);
    for id in ids_before.keys() {
        assert!(ids_after.contains_key(id), "{context}: memory {id} is lost");
    }
    for path in case.edits {
        let now = &files[*path];
        assert!(
            now == &before[*path] || now == &after[*path],
            "{context}: {path} is neither old nor new:\n{}",
            String::from_utf8_lossy(now)
        );
    }
    usage_files(root, &context);

    // The next commands work without repair.
    let run = |args: &[&str], stdin: Option<&[u8]>| {
        let out = run_mem(root, args, stdin);
        assert!(
            out.status.success(),
            "{context}: then `mem {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&["index"], None);
    if case.repeatable || case.again_if.is_some_and(|rel| root.join(rel).exists()) {
        run(case.args, stdin.as_deref());
    }
    run(&["sync"], None);
    run(&["recall", "--no-record", "login cookie"], None);

    // And leave a sound root.
    let files = memory_files(root);
    for (id, paths) in ids(&files, &context) {
        assert_eq!(paths.len(), 1, "{context}: {id} is in {paths:?}");
    }
    let health = command(root, &["health"]).stdout(Stdio::piped()).output().unwrap();
    assert!(
        health.status.success(),
        "{context}: health:\n{}",
        String::from_utf8_lossy(&health.stdout)
    );
    check_usage(root, &before, &context);
    (killed, how.is_some())
}

/// Kills per command: [`CI_KILLS`], or `MEM_CRASH_SOAK`.
fn kills() -> usize {
    std::env::var("MEM_CRASH_SOAK").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_KILLS)
}

#[test]
fn every_writing_command_survives_a_kill_at_any_moment() {
    let seed = std::env::var("MEM_CRASH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut summary = Vec::new();
    for case in CASES {
        let (after, took) = uninterrupted(case);
        let (mut landed, mut cuts) = (0, 0);
        for _ in 0..kills() {
            // Anywhere in the run, start-up included, and a little past its usual end.
            let delay = took.mul_f64(rng.f64() * 1.1);
            let cut = rng.bool().then(|| rng.f64());
            let (killed, was_cut) = kill_and_check(case, delay, cut, &after);
            landed += usize::from(killed);
            cuts += usize::from(was_cut);
        }
        summary.push(format!(
            "{}: {landed}/{} kills landed, {cuts} usage files cut (run {took:?})",
            case.name,
            kills()
        ));
    }
    eprintln!("crash harness (seed {seed}):\n  {}", summary.join("\n  "));
}

/// The kill found by the probe: during an index update, right after tantivy wrote a `.del`
/// file. A watcher kills `mem recall` the moment one appears.
#[test]
fn a_kill_right_after_a_del_file_appears() {
    let dir = fresh();
    let root = dir.path();
    let index = root.join(".mem/index");
    let dels = |index: &Path| -> BTreeSet<PathBuf> {
        std::fs::read_dir(index)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "del"))
            .collect()
    };
    for attempt in 0..5 {
        let before = dels(&index);
        let path = root.join(format!("s{attempt}.md"));
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("One more line about ports.\n");
        std::fs::write(&path, text).unwrap();
        let mut child = command(root, &["recall", "--no-record", "port"]).spawn().unwrap();
        while child.try_wait().unwrap().is_none() {
            if dels(&index).difference(&before).next().is_some() {
                let _ = child.kill();
                break;
            }
        }
        child.wait().unwrap();
        let out = run_mem(root, &["recall", "--no-record", "port"], None);
        assert!(
            out.status.success(),
            "attempt {attempt}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
