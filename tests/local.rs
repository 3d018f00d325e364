//! Inputs that local processes control (issue #51): the session's `mem mcp` that serves hooks
//! stopped with its listen backlog full, a server that dribbles its answer or sends a huge one,
//! clients whose request never ends, another user's folder where the sockets go, programs that
//! save the agents' settings while `mem setup` edits them, and Codex rollouts with only
//! `event_msg` lines. No prompt waits on any of them; setup loses none of their writes.
//!
//! Time limits here are guards, far above the budgets (1 s for a prompt's exchange with the
//! servers): what they catch is a hook that waits without limit, or for as long as the other
//! process pleases.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use wait_timeout::ChildExt as _;

use crate::served::{PROMPTS, Served};
use crate::util::{Dir, Out};

/// How long a hook may take here with a budget of 1 s for the servers, plus its in-process work
/// on a loaded machine: a guard, not a timing.
const GUARD: Duration = Duration::from_secs(30);

/// The per-prompt hook for `prompt` in session `session` with served hooks on; `None` when it
/// did not end within [`GUARD`] (it is killed).
fn hook_within_guard(served: &Served, prompt: &str, session: &str) -> Option<Out> {
    let payload = json!({ "session_id": session, "hook_event_name": "UserPromptSubmit",
                          "prompt": prompt, "cwd": served.dir.path() });
    let mut cmd = served.command(&["context", "--hook", "claude"], false);
    crate::util::clean_env(&mut cmd);
    cmd.env("MEM_NO_SERVER", "0");
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    // Read as the hook writes (a huge answer must not fill the pipe and stop it).
    let drain = |mut from: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = from.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let done = child.wait_timeout(GUARD).unwrap();
    if done.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    done.map(|status| Out { code: status.code().unwrap_or(-1), stdout, stderr })
}

/// The one socket of the served root and its server's process id (from its name).
fn socket(served: &Served) -> (PathBuf, i32) {
    let sockets = served.sockets();
    assert_eq!(sockets.len(), 1, "{sockets:?}");
    let name = sockets[0].file_stem().unwrap().to_str().unwrap().to_string();
    let pid = name.rsplit_once('-').unwrap().1.parse().unwrap();
    (sockets[0].clone(), pid)
}

/// Sends `signal` (`STOP`, `CONT`) to the process `pid`.
fn signal(pid: i32, signal: &str) {
    let status = Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status();
    assert!(status.unwrap().success());
}

/// A root served by a `mem mcp` that is then stopped (as Ctrl-Z of its session stops it): its
/// process lives, its socket stays, nothing answers. The server is continued (and killed) when
/// the guard is dropped.
struct Stopped {
    served: Served,
    server: crate::mcp::Server,
    path: PathBuf,
    pid: i32,
}

impl Stopped {
    fn new() -> Stopped {
        let served = Served::new(Dir::example());
        let server = served.server("2026-11-30T12:00:00Z");
        let (path, pid) = socket(&served);
        // Stopped between calls, not holding the root's lock (a hook in-process would wait for
        // it, as for any stopped `mem` that holds it: docs/reliability.md).
        let lock =
            std::fs::File::options().write(true).open(served.dir.path().join(".mem/lock")).unwrap();
        loop {
            signal(pid, "STOP");
            use rustix::fs::{FlockOperation, flock};
            if flock(&lock, FlockOperation::NonBlockingLockExclusive).is_ok() {
                flock(&lock, FlockOperation::Unlock).unwrap();
                break;
            }
            signal(pid, "CONT");
            std::thread::sleep(Duration::from_millis(20));
        }
        Stopped { served, server, path, pid }
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        signal(self.pid, "CONT");
        self.server.kill();
    }
}

/// Item 1 of issue #51: a stopped server whose listen backlog is full (every earlier hook's
/// connection stays queued) made a hook's connect wait for ever.
#[test]
fn a_hook_against_a_stopped_server_with_a_full_backlog_answers_in_process() {
    let stopped = Stopped::new();
    let expected = stopped.served.hook(PROMPTS[0], "plain", true).stdout;
    assert!(!expected.is_empty());
    // Connections closed at once stay queued: fill the backlog until a connect waits.
    let queued = Arc::new(AtomicUsize::new(0));
    let filler = {
        let (path, queued) = (stopped.path.clone(), Arc::clone(&queued));
        std::thread::spawn(move || {
            while UnixStream::connect(&path).is_ok() && queued.load(Ordering::Relaxed) < 100_000 {
                queued.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let mut last = usize::MAX;
    while queued.load(Ordering::Relaxed) != last {
        last = queued.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(last > 0 && last < 100_000 && !filler.is_finished(), "the backlog never filled");
    let out = hook_within_guard(&stopped.served, PROMPTS[0], "served");
    let out = out.expect("the hook waited on the stopped server");
    assert_eq!(out.stdout, expected, "{}", out.stderr);
    drop(stopped);
    filler.join().unwrap();
}

/// Stops a fake server when dropped.
struct Ends(Arc<AtomicBool>, PathBuf);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
        let _ = UnixStream::connect(&self.1);
    }
}

/// A fake server at the socket of a stopped `mem mcp` (its process alive, so its socket is
/// taken for a live server's): each connection's request is read, then `reply` answers it.
/// Stops when the guard it returns is dropped.
fn fake_server(stopped: &Stopped, reply: impl Fn(UnixStream) + Send + Sync + 'static) -> Ends {
    std::fs::remove_file(&stopped.path).unwrap();
    let listener = UnixListener::bind(&stopped.path).unwrap();
    let end = Arc::new(AtomicBool::new(false));
    let (ends, reply) = (Arc::clone(&end), Arc::new(reply));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            if ends.load(Ordering::Relaxed) {
                return;
            }
            let Ok(stream) = stream else { continue };
            let reply = Arc::clone(&reply);
            std::thread::spawn(move || {
                let mut line = String::new();
                let _ = BufReader::new(&stream).read_line(&mut line);
                reply(stream);
            });
        }
    });
    Ends(end, stopped.path.clone())
}

/// A context answer holding `text`, as a server sends it.
fn answer_line(text: &str) -> Vec<u8> {
    let answer = json!({ "Answer": { "text": text, "memories": 1, "sent": [], "warnings": [] } });
    format!("{answer}\n").into_bytes()
}

/// Item 2: a server that takes the request, then sends its answer a byte a second, held a
/// prompt as long as it pleased (the answer's limit applied to each read).
#[test]
fn a_hook_against_a_dribbling_server_answers_in_process() {
    let stopped = Stopped::new();
    let expected = stopped.served.hook(PROMPTS[0], "plain", true).stdout;
    let _fake = fake_server(&stopped, |mut stream| {
        let _ = stream.write_all(b"\"Accepted\"\n");
        for byte in answer_line("DRIBBLED") {
            std::thread::sleep(Duration::from_secs(1));
            if stream.write_all(&[byte]).is_err() {
                return;
            }
        }
    });
    let out = hook_within_guard(&stopped.served, PROMPTS[0], "served");
    let out = out.expect("the hook waited on the dribbling server");
    assert!(!out.stdout.contains("DRIBBLED"), "{}", out.stdout);
    assert_eq!(out.stdout, expected, "{}", out.stderr);
}

/// Item 2: a served answer was printed whatever its size (15 MB went out as the context).
#[test]
fn a_huge_served_answer_is_dropped_and_the_hook_answers_in_process() {
    let stopped = Stopped::new();
    let expected = stopped.served.hook(PROMPTS[0], "plain", true).stdout;
    let huge = format!("HUGE{}", "x".repeat(15 << 20));
    let _fake = fake_server(&stopped, move |mut stream| {
        let _ = stream.write_all(b"\"Accepted\"\n");
        let _ = stream.write_all(&answer_line(&huge));
    });
    let out = hook_within_guard(&stopped.served, PROMPTS[0], "served");
    let out = out.expect("the hook waited on the server of the huge answer");
    assert!(!out.stdout.contains("HUGE"), "{} bytes out", out.stdout.len());
    assert_eq!(out.stdout, expected, "{}", out.stderr);
}

/// The resident memory of the process `pid`, in MiB.
fn resident_mib(pid: i32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() / 1024
}

/// Item 2: clients whose request never ends (no line break, ever) grew the server by 700 MB,
/// which it kept. Now a request is bounded in size and time, few are read at once, and the
/// server still answers after them.
#[test]
fn endless_requests_leave_the_server_small_and_answering() {
    let served = Served::new(Dir::example());
    let _server = served.server("2026-11-30T12:00:00Z");
    let (path, pid) = socket(&served);
    // A hook first, so that what a hook loads is counted before.
    assert!(!served.hook(PROMPTS[0], "first", false).stdout.is_empty());
    let before = resident_mib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..32)
        .map(|_| {
            let (path, stop) = (path.clone(), Arc::clone(&stop));
            std::thread::spawn(move || {
                let chunk = vec![b'x'; 64 << 10];
                while !stop.load(Ordering::Relaxed) {
                    let Ok(mut stream) = UnixStream::connect(&path) else { return };
                    stream.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
                    while !stop.load(Ordering::Relaxed) && stream.write_all(&chunk).is_ok() {}
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(8));
    let during = resident_mib(pid);
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.join().unwrap();
    }
    std::thread::sleep(Duration::from_secs(3));
    let after = resident_mib(pid);
    assert!(during < before + 150, "{before} MiB before, {during} MiB while asked endlessly");
    assert!(after < before + 150, "{before} MiB before, {after} MiB after");
    let servers = served.servers();
    assert!(servers.iter().any(|s| s["differs"].as_array().unwrap().is_empty()), "{servers:?}");
}

/// The files a writer re-saves by rename while setup runs, as the agents do.
const SAVED: [&str; 2] = [".gemini/settings.json", ".claude.json"];

/// `mem <args>` with `home` as HOME (and the agents' folders in it).
fn mem_at_home(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(crate::util::bin());
    crate::seams::at_home(cmd.args(args).current_dir(home), home);
    crate::util::clean_env(&mut cmd);
    cmd.stdin(Stdio::null()).output().unwrap()
}

/// Re-saves each of [`SAVED`] `writes` times, 1 to 5 ms apart, each time with one more key of
/// its own (read, edit, write beside, rename over the file); returns the writes acknowledged.
fn writer(home: &std::path::Path, writes: usize) -> usize {
    let mut acknowledged = 0;
    for i in 0..writes {
        for rel in SAVED {
            let path = home.join(rel);
            let text = std::fs::read_to_string(&path).unwrap();
            let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
            value["writer"][format!("w{i}")] = json!(i);
            let tmp = path.with_extension("writer");
            std::fs::write(&tmp, serde_json::to_string_pretty(&value).unwrap()).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
            acknowledged += 1;
        }
        std::thread::sleep(Duration::from_micros(fastrand::u64(1_000..=5_000)));
    }
    acknowledged
}

/// Item 4 of issue #51 (74 of 800 writes were lost): in 5 runs of a writer that re-saves
/// Gemini CLI's settings and `~/.claude.json` by rename every 1–5 ms, 200 writes each, beside
/// setups and removes run over and over, no acknowledged write is lost. A setup may stop
/// (the file kept changing), with the error that says so.
#[test]
fn setup_beside_a_writer_that_saves_by_rename_loses_no_write() {
    let setups: [&[&str]; 4] = [
        &["setup", "claude", "--scope", "user"],
        &["setup", "gemini", "--scope", "user"],
        &["setup", "claude", "--scope", "user", "--remove"],
        &["setup", "gemini", "--scope", "user", "--remove"],
    ];
    let (mut lost, mut ran) = (0, 0);
    for _ in 0..5 {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".gemini")).unwrap();
        for rel in SAVED {
            std::fs::write(home.path().join(rel), "{\n  \"theirs\": true\n}\n").unwrap();
        }
        let at = home.path().to_path_buf();
        let writing = std::thread::spawn(move || writer(&at, 200));
        while !writing.is_finished() {
            let out = mem_at_home(home.path(), setups[ran % setups.len()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success() || stderr.contains("changed while mem setup edited it"),
                "{stderr}"
            );
            ran += 1;
        }
        assert_eq!(writing.join().unwrap(), 400);
        for rel in SAVED {
            let text = std::fs::read_to_string(home.path().join(rel)).unwrap();
            let value: serde_json::Value = serde_json::from_str(&text).unwrap();
            lost += (0..200).filter(|i| value["writer"][format!("w{i}")].is_null()).count();
        }
    }
    assert!(ran >= 10, "only {ran} setups ran");
    assert_eq!(lost, 0, "{lost} of 2000 acknowledged writes lost beside {ran} setups");
}

/// mem's temporary files in the folders of [`SAVED`].
fn temporary_files(home: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in [home.to_path_buf(), home.join(".gemini"), home.join(".claude")] {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(".mem-tmp-") {
                found.push(entry.path());
            }
        }
    }
    found
}

/// Item 4: a setup killed while it writes left its temporary files beside the agents'
/// settings, and the next setup left them there too (for five minutes). Now the next setup
/// removes them.
#[test]
fn the_temporary_files_of_a_killed_setup_are_gone_after_the_next_one() {
    let home = tempfile::tempdir().unwrap();
    let mut caught = 0;
    for attempt in 0..200 {
        // Set up and taken out in turn, so that each run writes.
        let mut cmd = Command::new(crate::util::bin());
        cmd.args(["setup", "claude", "--scope", "user"])
            .args((attempt % 2 == 1).then_some("--remove"));
        crate::seams::at_home(cmd.current_dir(home.path()), home.path());
        crate::util::clean_env(&mut cmd);
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        // Killed the moment a temporary file of its shows.
        while child.try_wait().unwrap().is_none() {
            if !temporary_files(home.path()).is_empty() {
                let _ = child.kill();
                break;
            }
        }
        let _ = child.wait();
        if !temporary_files(home.path()).is_empty() {
            caught += 1;
            let out = mem_at_home(home.path(), &["setup", "claude", "--scope", "user"]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let left = temporary_files(home.path());
            assert!(left.is_empty(), "left by the killed setup, after the next: {left:?}");
            if caught == 3 {
                return;
            }
        }
    }
    panic!("no setup was killed while it wrote ({caught} in 200 tries)");
}

/// A Codex rollout line of `kind` with `payload`.
fn rollout_line(kind: &str, at: &str, payload: serde_json::Value) -> String {
    format!("{}\n", json!({ "timestamp": at, "type": kind, "payload": payload }))
}

/// A Codex rollout of two turns: its `session_meta`, then each prompt and answer as
/// `event_msg` lines, and as `response_item` lines too when `items`.
fn rollout(items: bool) -> String {
    let meta = json!({ "id": "0199a213-81c0-7800-8aa1-bbab2a035a53", "cwd": "/home/ana/shop",
                       "timestamp": "2026-11-29T10:00:00Z" });
    let mut text = rollout_line("session_meta", "2026-11-29T10:00:00Z", meta);
    let turns = [("Fix the failing login test", "Fixed."), ("Now the signup test", "Done too.")];
    for (i, (prompt, answer)) in turns.iter().enumerate() {
        let at = format!("2026-11-29T10:0{i}:10Z");
        if items {
            let content = json!([{ "type": "input_text", "text": prompt }]);
            let item = json!({ "type": "message", "role": "user", "content": content });
            text.push_str(&rollout_line("response_item", &at, item));
        }
        let said = json!({ "type": "user_message", "message": prompt });
        text.push_str(&rollout_line("event_msg", &at, said));
        let said = json!({ "type": "agent_message", "message": answer });
        text.push_str(&rollout_line("event_msg", &at, said));
        if items {
            let content = json!([{ "type": "output_text", "text": answer }]);
            let item = json!({ "type": "message", "role": "assistant", "content": content });
            text.push_str(&rollout_line("response_item", &at, item));
        }
    }
    text
}

/// Item 5 of issue #51: a Codex rollout of `event_msg` lines only gave the session log no turn;
/// now its prompts and answers are the log's, and a rollout with both kinds of lines logs each
/// once.
#[test]
fn a_codex_rollout_of_event_msg_lines_only_is_logged() {
    for (items, session) in [(false, "echoes"), (true, "both")] {
        let root = Dir::new();
        root.mem(&["init", "."]).ok();
        let files = tempfile::tempdir().unwrap();
        let transcript = files.path().join("rollout.jsonl");
        std::fs::write(&transcript, rollout(items)).unwrap();
        let payload = json!({ "session_id": session, "transcript_path": transcript,
                              "cwd": "/home/ana/shop", "hook_event_name": "Stop" });
        root.mem_stdin(&["capture", "--json"], payload.to_string()).json();
        let events = root.mem(&["session", "show", session, "--json"]).json();
        let said: Vec<(String, String)> = events
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] != "meta")
            .map(|e| (e["kind"].as_str().unwrap().into(), e["text"].as_str().unwrap().into()))
            .collect();
        let expected = [
            ("prompt", "Fix the failing login test"),
            ("assistant", "Fixed."),
            ("prompt", "Now the signup test"),
            ("assistant", "Done too."),
        ]
        .map(|(k, t)| (k.to_string(), t.to_string()));
        assert_eq!(said, expected, "{session}");
        let list = root.mem(&["session", "list"]).ok().to_string();
        assert!(list.contains(&format!("{session}\tcodex\t")), "{list}");
        assert!(list.contains("\t2 turns\t"), "{list}");
    }
}

/// Item 3 of issue #51: another user who made `mem-<uid>` in the temporary folder first (or left
/// it open to others) turned served hooks off for good. Now the server listens in a folder of
/// its own, of a random name, recorded in the user's cache folder, and hooks find it there.
#[test]
fn a_folder_another_user_took_first_does_not_turn_served_hooks_off() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let served = Served::new(Dir::example());
    let tmp = tempfile::tempdir().unwrap();
    let uid = rustix::process::getuid();
    let taken = tmp.path().join(format!("mem-{}", uid.as_raw()));
    std::fs::create_dir(&taken).unwrap();
    std::fs::set_permissions(&taken, std::fs::Permissions::from_mode(0o777)).unwrap();
    if uid.is_root() {
        // Another user's indeed (nobody's).
        let nobody = Some(rustix::fs::Uid::from_raw(65534));
        rustix::fs::chown(&taken, nobody, None).unwrap();
    }
    // No runtime folder, as an agent that passes few variables starts its servers.
    let command = |args: &[&str], off: bool| {
        let mut cmd = served.command(args, off);
        cmd.env_remove("XDG_RUNTIME_DIR").env("TMPDIR", tmp.path());
        crate::util::clean_env(&mut cmd);
        cmd.env("MEM_NO_SERVER", if off { "1" } else { "0" });
        cmd
    };
    let mut cmd = command(&["--now", "2026-11-30T12:00:00Z", "mcp"], false);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut server = crate::mcp::Server::of(cmd.spawn().unwrap());
    server.initialize();
    let listening = || {
        let out = crate::util::run(&mut command(&["health", "--json"], false));
        let health: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        let servers = health["served_hooks"]["servers"].as_array().unwrap().clone();
        servers.iter().any(|s| s["differs"].as_array().unwrap().is_empty())
    };
    let mut tries = 0;
    while !listening() {
        tries += 1;
        assert!(tries < 600, "the server never listened: {}", server.log());
        std::thread::sleep(Duration::from_millis(100));
    }
    let hook = |off: bool| {
        let payload = json!({ "session_id": format!("s-{off}"), "cwd": served.dir.path(),
                              "hook_event_name": "UserPromptSubmit", "prompt": PROMPTS[0] });
        let out = crate::util::run_with_stdin(
            &mut command(&["context", "--hook", "claude"], off),
            payload.to_string(),
        );
        out.stdout
    };
    assert_eq!(hook(false), hook(true));
    // Not in the folder taken, but in one of this user's, private, named in the cache folder.
    assert_eq!(std::fs::read_dir(&taken).unwrap().count(), 0);
    let record = served.dir.home().join(".cache/mem/served-folder");
    let own = PathBuf::from(std::fs::read_to_string(record).unwrap().trim());
    assert!(own.starts_with(tmp.path()) && own != taken, "{}", own.display());
    let meta = std::fs::symlink_metadata(&own).unwrap();
    assert_eq!((meta.uid(), meta.mode() & 0o777), (uid.as_raw(), 0o700));
    let sockets: Vec<_> = std::fs::read_dir(&own).unwrap().flatten().collect();
    assert_eq!(sockets.len(), 1, "{sockets:?}");
    let mode = sockets[0].metadata().unwrap().mode() & 0o777;
    assert_eq!(mode, 0o600);
    drop(server);
}
