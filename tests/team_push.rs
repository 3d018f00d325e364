//! `mem team push` beyond one push (issue #58, item 2): a memory whose file was deleted leaves
//! the store at the next push (only what this root pushed, as its `.mem/team-pushed` records),
//! and `[team] push = "capture"` pushes after a capture in a detached process that the hook
//! never waits for, its outcome in `mem health`.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::capture::{assistant, user};
use crate::postgres::Server;
use crate::team::{Machine, T0, root};
use crate::util::{Out, memory};

/// `mem capture --hook claude` of session `session` in the machine's root: a transcript of one
/// turn, written beside the root.
fn capture(machine: &Machine, session: &str) -> Out {
    let (u, a) = (user("Where do the deploy logs go?"), assistant("To the blue bucket."));
    let transcript = machine.dir.home().join(format!("{session}.jsonl"));
    std::fs::write(&transcript, format!("{u}\n{a}\n")).unwrap();
    let payload = serde_json::json!({ "session_id": session, "transcript_path": transcript,
        "cwd": machine.dir.path(), "hook_event_name": "Stop" });
    let mut cmd = Command::new(crate::util::bin());
    cmd.arg("--dir").arg(machine.dir.path()).args(["capture", "--hook", "claude"]);
    machine.env(&mut cmd);
    crate::util::run_with_stdin(&mut cmd, payload.to_string())
}

/// Polls `check` every 100 ms for up to 60 s (a detached process, beside other tests on two
/// cores); panics with `what` when it never holds.
#[allow(clippy::disallowed_methods)] // a test's own timer
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("never within 60 s: {what}");
}

/// The ids the store holds, one per line, sorted.
fn ids(server: &Server) -> String {
    server.psql("team", "SELECT project || ':' || id FROM mem_memories ORDER BY project, id")
}

#[test]
fn a_deleted_file_leaves_the_store_and_a_teammates_memory_stays() {
    let Some(server) = Server::start() else { return };
    let (ana, bo) = (Machine::new(&server, "ana", ""), Machine::new(&server, "bo", ""));
    let cache = memory("cache", "semantic", 5, T0, "# Cache\nWarmed at start.\n");
    root(
        &ana,
        "demo",
        &[
            ("deploy.md", memory("deploy", "procedural", 6, T0, "# Deploy\nBlue pipeline.\n")),
            ("cache.md", cache.clone()),
        ],
    );
    // Bo's clone has not pulled yet: it holds cache, and a memory of its own.
    let mine = memory("bo-notes", "semantic", 5, T0, "# Notes\nBo's own.\n");
    root(&bo, "demo", &[("cache.md", cache), ("bo-notes.md", mine)]);
    ana.mem(&["team", "init"]).ok();
    assert!(ana.mem(&["team", "push"]).ok().contains("pushed 2 memories"));
    // The same memory, pushed as bo's: the row is bo's now.
    assert!(bo.mem(&["team", "push"]).ok().contains("pushed 2 memories"));
    assert_eq!(ids(&server), "demo:bo-notes\ndemo:cache\ndemo:deploy\n");
    // Forgotten: published with its state, never withdrawn as deleted.
    ana.mem(&["forget", "deploy"]).ok();
    assert!(!ana.mem(&["team", "push"]).ok().contains("deleted"));
    std::fs::remove_file(ana.dir.path().join("cache.md")).unwrap();
    let out = ana.mem(&["team", "push"]);
    assert!(
        out.ok().contains("withdrew 1 memories whose files were deleted from the team store"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("publish: false"), "{}", out.stdout);
    // Bo's memory, which ana's clone never had, is untouched.
    assert_eq!(ids(&server), "demo:bo-notes\ndemo:deploy\n");
    assert!(ana.mem(&["team", "push"]).ok().contains("pushed 0 memories"));
    // A clone that has not pulled the deletion republishes what its files hold.
    assert!(bo.mem(&["team", "push"]).ok().contains("pushed 1 memories"));
    assert_eq!(ids(&server), "demo:bo-notes\ndemo:cache\ndemo:deploy\n");
    // The record: this store's key, the project, the ids pushed.
    let record: serde_json::Value =
        serde_json::from_str(&ana.dir.read(".mem/team-pushed")).unwrap();
    let stores = record["stores"].as_object().unwrap();
    assert_eq!(stores.len(), 1, "{record}");
    let (key, pushed) = stores.iter().next().unwrap();
    assert!(key.ends_with("/team"), "{key}");
    assert_eq!(pushed["project"], "demo");
    assert_eq!(pushed["ids"], serde_json::json!(["deploy"]));
}

#[test]
fn a_record_naming_another_project_or_not_mem_s_withdraws_nothing_else() {
    let Some(server) = Server::start() else { return };
    let (ana, bo) = (Machine::new(&server, "ana", ""), Machine::new(&server, "bo", ""));
    let plan = memory("plan", "semantic", 5, T0, "# Plan\nThe other team's plan.\n");
    root(&bo, "other", &[("plan.md", plan)]);
    let deploy = memory("deploy", "procedural", 6, T0, "# Deploy\nBlue pipeline.\n");
    root(&ana, "demo", &[("deploy.md", deploy)]);
    ana.mem(&["team", "init"]).ok();
    bo.mem(&["team", "push"]).ok();
    ana.mem(&["team", "push"]).ok();
    // A record that says this root pushed `other`'s plan (and one of its own gone) to this store.
    let mut record: serde_json::Value =
        serde_json::from_str(&ana.dir.read(".mem/team-pushed")).unwrap();
    for pushed in record["stores"].as_object_mut().unwrap().values_mut() {
        *pushed = serde_json::json!({ "project": "other", "ids": ["plan", "deploy"] });
    }
    ana.dir.write(".mem/team-pushed", record.to_string());
    let out = ana.mem(&["team", "push"]);
    assert!(!out.ok().contains("deleted"), "{}", out.stdout);
    assert_eq!(ids(&server), "demo:deploy\nother:plan\n");
    // A record mem did not write: refused with a warning, nothing withdrawn, written anew.
    for text in ["{\"version\":1,\"stores\":", "{\"version\":7,\"stores\":{}}"] {
        ana.dir.write(".mem/team-pushed", text);
        let out = ana.mem(&["team", "push"]);
        assert!(out.stderr.contains("is not a record mem wrote"), "{}", out.stderr);
        assert!(out.ok().contains("pushed 0 memories"), "{}", out.stdout);
        assert_eq!(ids(&server), "demo:deploy\nother:plan\n");
        let back: serde_json::Value =
            serde_json::from_str(&ana.dir.read(".mem/team-pushed")).unwrap();
        assert_eq!(back["version"], 1, "{back}");
    }
}

#[test]
fn a_capture_pushes_in_the_background_when_asked_and_never_otherwise() {
    let Some(server) = Server::start() else { return };
    let ana = Machine::new(&server, "ana", "push = \"capture\"\n");
    let bo = Machine::new(&server, "bo", "");
    root(&ana, "demo", &[]);
    root(&bo, "quiet", &[]);
    ana.mem(&["team", "init"]).ok();
    // Bo's configuration does not ask: its capture pushes nothing.
    let out = capture(&bo, "s-bo");
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (0, "", ""), "{out:?}");
    assert!(bo.dir.path().join("sessions/session-s-bo.md").exists());
    let out = capture(&ana, "s-ana");
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (0, "", ""), "{out:?}");
    eventually("ana's session in the store", || ids(&server) == "demo:session-s-ana\n");
    eventually("health's line on the push", || {
        let health = ana.mem(&["health"]).stdout;
        health.contains("✓ team push") && health.contains("(after a capture) as demo: 1 sent")
    });
    // Bo's capture ran first, and ana's push is done: none of bo's ever went.
    assert_eq!(ids(&server), "demo:session-s-ana\n");
    assert!(!bo.dir.path().join(".mem/team-push.json").exists());
    assert!(!bo.mem(&["health"]).stdout.contains("team push"));
}

#[test]
#[allow(clippy::disallowed_methods)] // a test's own timer
fn a_capture_never_waits_for_a_store_that_does_not_answer_and_health_says_why() {
    // A store that takes connections and never answers: a push to it waits.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("postgres://ana@127.0.0.1:{}/team", listener.local_addr().unwrap().port());
    let ana = Machine::at_url(&url, "ana", "push = \"capture\"\n");
    root(&ana, "demo", &[]);
    let start = Instant::now();
    let out = capture(&ana, "s-1");
    assert_eq!((out.code, out.stdout.as_str(), out.stderr.as_str()), (0, "", ""), "{out:?}");
    assert!(start.elapsed() < Duration::from_secs(30), "the hook waited: {:?}", start.elapsed());
    // The detached push connects, and waits for an answer (holding the root's turn).
    listener.set_nonblocking(true).unwrap();
    let mut waiting = None;
    eventually("the push connects", || {
        waiting = listener.accept().ok();
        waiting.is_some()
    });
    // A second capture meanwhile starts no second push: it leaves word for the one that runs.
    let out = capture(&ana, "s-2");
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{out:?}");
    assert!(ana.dir.path().join(".mem/team-push.again").exists());
    // The store goes away: the push fails, and health says so (a warning).
    drop((listener, waiting));
    eventually("health's line on the failed push", || {
        let health = ana.mem(&["health"]).stdout;
        health.contains("! team push failed at") && health.contains("cannot connect")
    });
    assert!(!ana.dir.path().join(".mem/team-pushed").exists(), "nothing committed, no record");
}
