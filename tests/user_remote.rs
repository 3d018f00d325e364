//! The user layer on a git remote of the user's own (issue #56, items 6 and 7): two machines,
//! each with its own home and user configuration naming one bare repository as
//! `[layers] user_remote`, sync their personal memories through it with `mem sync`; two edits
//! of one memory merge without a marker; a remote out of reach fails the sync, shows in `mem
//! health` and is caught up later; no session data reaches the remote; a remote that is a
//! project's, or a folder that is no clone of it, is refused.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{Dir, Out, bin, git_at, memory, run_with_stdin};

/// A machine: its own home (user configuration, data folder) and a project folder to work in.
struct Machine {
    home: Dir,
    work: Dir,
}

impl Machine {
    /// A machine whose user configuration holds `config` (the `[layers]` table's lines).
    fn with(config: &str) -> Machine {
        let machine = Machine { home: Dir::new(), work: Dir::new() };
        machine.home.write("mem/config.toml", format!("[layers]\n{config}\n"));
        machine
    }

    /// A machine whose user layer is a clone of `origin` (at its default folder).
    fn of(origin: &Path) -> Machine {
        Machine::with(&format!("user_remote = {:?}", origin.to_str().unwrap()))
    }

    /// `mem ARGS` in the work folder, `stdin` fed to it, with this machine's home, data folder
    /// and configuration, and no system git configuration.
    fn mem_stdin(&self, args: &[&str], stdin: &str) -> Out {
        let home = self.home.path();
        let mut cmd = Command::new(bin());
        cmd.args(args)
            .current_dir(self.work.path())
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("GIT_CONFIG_NOSYSTEM", "1");
        run_with_stdin(&mut cmd, stdin)
    }

    fn mem(&self, args: &[&str]) -> Out {
        self.mem_stdin(args, "")
    }

    /// The user layer's folder: the default one, beside the per-user root.
    fn layer(&self) -> PathBuf {
        self.home.path().join(".local/share/mem-user")
    }

    /// The context block the prompt hook sends for `prompt`.
    fn prompt_context(&self, prompt: &str) -> String {
        let payload = serde_json::json!({ "session_id": "s-prompt", "cwd": self.work.path(),
            "hook_event_name": "UserPromptSubmit", "prompt": prompt });
        let out = self.mem_stdin(&["context", "--hook", "claude"], &payload.to_string());
        assert_eq!(out.code, 0, "{out:?}");
        out.stdout
    }

    /// Writes the memory `pref` into the user layer: `text`, edited at `updated`.
    fn edit(&self, updated: &str, text: &str) {
        let created = "created: 2026-01-01T00:00:00Z\n";
        let file = memory("pref", "semantic", 6, "2026-01-01T00:00:00Z", &format!("{text}\n"))
            .replacen(created, &format!("{created}updated: {updated}\n"), 1);
        std::fs::write(self.layer().join("pref.md"), file).unwrap();
    }

    /// The files of the user layer's root that hold a conflict marker.
    fn marked(&self) -> Vec<String> {
        std::fs::read_dir(self.layer())
            .unwrap()
            .filter_map(|e| {
                let path = e.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let marked =
                    text.lines().any(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>"));
                marked.then(|| path.display().to_string())
            })
            .collect()
    }
}

/// git in `dir`, as a machine with the home `home`; its output, asserting it succeeded.
fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = git_at(dir, home, args);
    assert_eq!(out.code, 0, "git {args:?}: {out:?}");
    out.stdout
}

/// A bare repository: the user's personal remote.
fn bare() -> Dir {
    let origin = Dir::new();
    git(origin.path(), origin.home(), &["init", "-q", "--bare"]);
    origin
}

/// Every path that any commit of `origin` holds, and all their text.
fn history(origin: &Dir) -> (String, String) {
    let home = origin.home();
    let names = git(origin.path(), home, &["log", "--all", "--name-only", "--format="]);
    let text = git(origin.path(), home, &["log", "--all", "-p", "--format=%H"]);
    (names, text)
}

/// Issue #56, item 6: a personal fact added on A is in B's context once both synced; both edit
/// it, and after the syncs neither layer holds a marker: the later edit is current, the
/// earlier a superseded memory beside it, on both machines.
#[test]
fn a_personal_fact_travels_between_two_machines_and_two_edits_merge_without_markers() {
    let origin = bare();
    let (a, b) = (Machine::of(origin.path()), Machine::of(origin.path()));
    let first = a.mem(&["sync"]).ok().to_string();
    assert!(first.contains("cloned") && first.contains("pushed"), "{first}");
    assert!(a.layer().join(".git").is_dir() && a.layer().join("mem.toml").is_file());

    a.mem(&["add", "--layer", "user", "In Go code I indent with tabs, never spaces"]).ok();
    a.mem(&["sync"]).ok();
    assert!(!b.prompt_context("how do I indent Go code?").contains("tabs"));
    let cloned = b.mem(&["sync"]).ok().to_string();
    assert!(cloned.contains("cloned"), "{cloned}");
    let context = b.prompt_context("how do I indent Go code?");
    assert!(context.contains("In Go code I indent with tabs, never spaces"), "{context}");
    assert!(context.contains("user root"), "{context}");

    // Both edit one memory: B's edit is the later one.
    a.edit("2026-01-02T00:00:00Z", "Go: tabs, shown 4 wide.");
    a.mem(&["sync"]).ok();
    b.mem(&["sync"]).ok();
    b.edit("2026-01-03T00:00:00Z", "Go: tabs, shown 8 wide.");
    a.edit("2026-01-02T12:00:00Z", "Go: tabs, shown 2 wide.");
    a.mem(&["sync"]).ok();
    let merged = b.mem(&["sync"]).ok().to_string();
    assert!(merged.contains("merged"), "{merged}");
    a.mem(&["sync"]).ok();
    for machine in [&a, &b] {
        assert!(machine.marked().is_empty(), "{:?}", machine.marked());
        let current = std::fs::read_to_string(machine.layer().join("pref.md")).unwrap();
        assert!(current.contains("shown 8 wide") && !current.contains("<<<"), "{current}");
        let earlier: Vec<_> = std::fs::read_dir(machine.layer())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("pref-"))
            .collect();
        assert_eq!(earlier.len(), 1, "{earlier:?}");
        let kept = std::fs::read_to_string(machine.layer().join(&earlier[0])).unwrap();
        assert!(kept.contains("shown 2 wide") && kept.contains("superseded_by: pref"), "{kept}");
        let context = machine.prompt_context("how wide are tabs shown in Go?");
        assert!(context.contains("shown 8 wide") && !context.contains("shown 2 wide"), "{context}");
        let health = machine.mem(&["health"]);
        assert!(health.stdout.contains("✓ remote"), "{health:?}");
        let status = git(&machine.layer(), machine.home.path(), &["status", "--porcelain"]);
        assert!(status.is_empty(), "the sync left nothing uncommitted: {status}");
    }
}

/// Issue #56, item 6: with the remote out of reach the sync fails and says so, health says the
/// layer is offline (a warning), the hooks answer as before, and the next sync catches up.
#[test]
fn an_unreachable_remote_fails_the_sync_shows_in_health_and_is_caught_up() {
    let origin = bare();
    let a = Machine::of(origin.path());
    a.mem(&["sync"]).ok();
    let away = origin.path().with_extension("away");
    std::fs::rename(origin.path(), &away).unwrap();

    a.mem(&["add", "--layer", "user", "My deploy key lives in the hardware token"]).ok();
    let failed = a.mem(&["sync"]);
    assert_eq!(failed.code, 2, "{failed:?}");
    assert!(
        failed.stderr.contains("could not sync with")
            && failed.stderr.contains("(fetch failed)")
            && failed.stderr.contains("does not appear to be a git repository")
            && failed.stderr.contains("catches up"),
        "{failed:?}"
    );
    let health = a.mem(&["health"]);
    assert!(
        health.stdout.contains("! remote")
            && health.stdout.contains("failed at")
            && health.stdout.contains("offline or out of reach")
            && health.stdout.contains("the next sync catches up"),
        "{health:?}"
    );
    assert!(!health.stdout.contains("✗ remote"), "out of reach is a warning: {health:?}");
    let json = a.mem(&["health", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(value["user_remote"]["state"]["failure"]["step"], "fetch", "{value}");
    // The hooks answer, the memory written while offline included.
    let context = a.prompt_context("where is my deploy key?");
    assert!(context.contains("hardware token"), "{context}");

    std::fs::rename(&away, origin.path()).unwrap();
    let caught_up = a.mem(&["sync"]).ok().to_string();
    assert!(caught_up.contains("pushed"), "{caught_up}");
    assert!(a.mem(&["health"]).stdout.contains("✓ remote"));
    let (_, text) = history(&origin);
    assert!(text.contains("My deploy key lives in the hardware token"), "{text}");
}

/// Issue #56, item 7: a session captured into the user layer (a session whose folder is the
/// layer's) starts a sync by itself; what reaches the remote is memory files only, never the
/// session log, its ledger, the capture log or transcript copies.
#[test]
fn a_session_captured_into_the_user_layer_is_pushed_without_session_data() {
    let origin = bare();
    let a = Machine::of(origin.path());
    a.mem(&["sync"]).ok();
    let layer = a.layer();
    let transcript = a.work.path().join("session.jsonl");
    let line = serde_json::json!({ "type": "user", "sessionId": "s-private", "cwd": layer,
        "timestamp": "2026-11-30T11:00:00Z",
        "message": { "role": "user", "content": "remember that I always review diffs before I commit" } });
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let stop = serde_json::json!({ "session_id": "s-private", "hook_event_name": "Stop",
        "transcript_path": transcript, "cwd": layer });
    let captured = a.mem_stdin(&["capture", "--hook", "claude"], &stop.to_string());
    assert_eq!(captured.code, 0, "{captured:?}");
    assert!(layer.join(".mem").join(mem::session::FILE).exists());

    // The capture's own sync, in the background: the session's memory reaches the remote.
    let mut pushed = false;
    for _ in 0..300 {
        if history(&origin).0.lines().any(|p| p.starts_with("sessions/")) {
            pushed = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(pushed, "no sync after the capture: {}", history(&origin).0);
    a.mem(&["sync"]).ok();
    let (names, text) = history(&origin);
    assert!(!names.lines().any(|p| p.contains(".mem/") || p.starts_with(".mem")), "{names}");
    for private in [mem::session::FILE, "capture.log", "transcripts/", "usage.db", "hook-calls"] {
        assert!(!names.contains(private), "{private} in {names}");
    }
    // Nor is any of their bytes in a commit: no SQLite file, no copy of the transcript.
    assert!(!text.contains("SQLite format") && !text.contains("\"sessionId\""), "{text}");
}

/// Issue #56, item 7: a user remote that is the project's own remote is refused (nothing is
/// cloned or pushed), and so are a layer inside a project's work tree and a folder that is not
/// a clone of the remote (left as it is).
#[test]
fn a_project_remote_a_folder_in_a_work_tree_and_a_folder_not_cloned_are_refused() {
    let origin = bare();
    let project = Machine::of(origin.path());
    let home = project.home.path();
    git(project.work.path(), home, &["clone", "-q", origin.path().to_str().unwrap(), "."]);
    let refused = project.mem(&["sync"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("is a remote of the project")
            && refused.stderr.contains("never pushes into a project's remote"),
        "{refused:?}"
    );
    assert!(!project.layer().exists(), "nothing cloned");
    assert!(history(&origin).0.is_empty(), "nothing pushed");
    assert!(project.mem(&["health"]).stdout.contains("✗ remote"));

    let mine = bare();
    let url = mine.path().to_str().unwrap();
    let inside = project.work.path().join("personal");
    let nested =
        Machine::with(&format!("user = {:?}\nuser_remote = {url:?}", inside.to_str().unwrap()));
    let out = nested.mem(&["sync"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("is inside the git work tree of"), "{out:?}");
    assert!(!inside.exists());

    let folder = Dir::new();
    folder.write("notes.md", memory("notes", "semantic", 5, "2026-01-01T00:00:00Z", "Mine.\n"));
    let config = format!("user = {:?}\nuser_remote = {url:?}", folder.path().to_str().unwrap());
    let other = Machine::with(&config);
    let out = other.mem(&["sync"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("is not a clone of") && out.stderr.contains("remote add origin"),
        "{out:?}"
    );
    assert!(!folder.path().join(".git").exists() && folder.read("notes.md").contains("Mine."));
}

/// A hostile remote: a commit pushed by hand that tracks files under `.mem/` would have git
/// write them over this machine's own (the usage log, the session log). The merge is refused,
/// naming them, and the files here are kept; a fresh machine refuses to clone it.
#[test]
fn a_remote_that_tracks_dot_mem_files_is_refused_and_this_machines_own_are_kept() {
    let origin = bare();
    let a = Machine::of(origin.path());
    a.mem(&["sync"]).ok();
    let usage_db = a.layer().join(".mem/usage.db");
    let ours = std::fs::read(&usage_db).unwrap();

    let other = Dir::new();
    git(other.path(), other.home(), &["clone", "-q", origin.path().to_str().unwrap(), "."]);
    other.write(".mem/usage.db", "not this machine's usage log");
    git(other.path(), other.home(), &["add", "-f", ".mem/usage.db"]);
    git(other.path(), other.home(), &["commit", "-qm", "a planted usage log"]);
    git(other.path(), other.home(), &["push", "-q", "origin", "HEAD"]);

    let refused = a.mem(&["sync"]);
    assert_eq!(refused.code, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("(merge failed)")
            && refused.stderr.contains("holds .mem/usage.db")
            && refused.stderr.contains("never travels"),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(&usage_db).unwrap(), ours, "this machine's usage log is kept");
    let health = a.mem(&["health"]);
    assert!(health.stdout.contains("✗ remote") && health.stdout.contains("merge"), "{health:?}");

    let b = Machine::of(origin.path());
    let out = b.mem(&["sync"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("cannot clone") && out.stderr.contains(".mem/usage.db"), "{out:?}");
    assert!(!b.layer().exists());
}
