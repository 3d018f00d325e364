//! Two clones edit the same memory (issue #56): `updated` records each edit, the merge driver
//! keeps both texts without a conflict marker, and a file that still holds markers never
//! reaches the model until `mem resolve` splits it.

use std::path::Path;

use crate::util::{Dir, NOW, memory};

const T0: &str = "2026-01-01T00:00:00Z";

/// Issue #56, item 1: every edit of a body or a field records `updated`; moving an `access:`
/// line into the usage file (machine bookkeeping) does not.
#[test]
fn edits_record_updated_and_bookkeeping_does_not() {
    let dir = Dir::new();
    dir.mem(&["init", "."]).ok();
    let old = memory("old", "semantic", 5, T0, "# Old\nThe build uses make.\n")
        .replace("---\n#", "access: { count: 2, last: 2026-02-01T00:00:00Z }\n---\n#");
    dir.write("old.md", old);
    dir.write("new.md", memory("new", "semantic", 5, T0, "# New\nThe build uses just.\n"));
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ987654";
    dir.write("key.md", memory("key", "semantic", 5, T0, &format!("# Key\nToken {token}\n")));
    dir.write("gone.md", memory("gone", "semantic", 5, T0, "# Gone\nWe deploy on Fridays.\n"));

    dir.mem(&["sync"]).ok();
    let synced = dir.read("old.md");
    assert!(!synced.contains("access:") && !synced.contains("updated:"), "{synced}");

    let stamp = format!("updated: {NOW}\n---\n");
    dir.mem(&["supersede", "old", "--by", "new"]).ok();
    assert!(dir.read("old.md").contains(&stamp), "{}", dir.read("old.md"));
    dir.mem(&["forget", "gone"]).ok();
    assert!(dir.read("gone.md").contains(&stamp), "{}", dir.read("gone.md"));
    dir.mem(&["redact"]).ok();
    let redacted = dir.read("key.md");
    assert!(!redacted.contains(token) && redacted.contains(&stamp), "{redacted}");
    assert!(!dir.read("new.md").contains("updated:"), "an untouched memory has none");
}

/// A clone of the bare repository `origin` into `dir`, as a machine with its own home.
pub(crate) struct Machine {
    pub(crate) dir: Dir,
}

impl Machine {
    pub(crate) fn of(origin: &Path) -> Machine {
        let dir = Dir::new();
        git(&dir, &["clone", "-q", origin.to_str().unwrap(), "."]);
        Machine { dir }
    }

    pub(crate) fn git(&self, args: &[&str]) -> String {
        git(&self.dir, args)
    }

    /// `mem ARGS` run in the clone, the project root found from there.
    pub(crate) fn mem(&self, args: &[&str]) -> crate::util::Out {
        self.dir.mem_in("", args, "")
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        self.dir.read(&format!(".memory/{rel}"))
    }

    /// Writes the memory `port` with these tags, this time in `updated` and this text.
    pub(crate) fn edit(&self, tags: &str, updated: &str, text: &str) {
        let extra = format!("tags: [{tags}]\nupdated: {updated}\n---\n#");
        let file = memory("port", "semantic", 5, T0, &format!("# Port\n{text}\n"))
            .replace("---\n#", &extra);
        self.dir.write(".memory/port.md", file);
    }

    /// The files of the root that hold a conflict marker.
    pub(crate) fn marked(&self) -> Vec<String> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(self.dir.path().join(".memory")).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if text.lines().any(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>")) {
                found.push(path.display().to_string());
            }
        }
        found
    }
}

/// git in `dir`, with that machine's home and no identity but the one given here; the merge
/// driver git starts gets the fixed "now".
fn git(dir: &Dir, args: &[&str]) -> String {
    let (ok, text) = try_git(dir, args);
    assert!(ok, "git {args:?}: {text}");
    text
}

/// git in `dir` as [`git`] runs it; whether it succeeded, and what it said.
pub(crate) fn try_git(dir: &Dir, args: &[&str]) -> (bool, String) {
    let out = crate::util::git_at(dir.path(), dir.home(), args);
    (out.code == 0, out.stdout + &out.stderr)
}

/// A bare repository whose project root holds the memory `port`, committed by a first clone
/// that ran `mem init --project`; the bare repository and that clone.
pub(crate) fn origin() -> (Dir, Machine) {
    let origin = Dir::new();
    git(&origin, &["init", "-q", "--bare"]);
    let first = Machine::of(origin.path());
    first.mem(&["init", "--project"]).ok();
    first.edit("net", T0, "The API listens on 8080.");
    first.dir.write(
        ".memory/port.md",
        first.read("port.md").replace("updated: 2026-01-01T00:00:00Z\n", ""),
    );
    first.git(&["add", "-A"]);
    first.git(&["commit", "-qm", "port"]);
    first.git(&["push", "-q", "origin", "main"]);
    (origin, first)
}

/// Issue #56, items 1 and 2: two clones edit the text and the tags of one memory; the later
/// edit (A's) is current, the earlier (B's) a superseded memory beside it, the tags merged, and
/// no marker reaches a file.
#[test]
fn two_clones_edit_one_memory_and_both_texts_are_kept() {
    let (origin, a) = origin();
    let b = Machine::of(origin.path());
    let out = b.mem(&["init", "--project"]).ok().to_string();
    assert!(out.contains("registered mem's git merge driver: `merge.mem.driver`"), "{out}");

    a.edit("net, api", "2026-03-01T00:00:00Z", "The API listens on 9090.");
    a.git(&["commit", "-qam", "A"]);
    a.git(&["push", "-q", "origin", "main"]);
    b.edit("net, prod", "2026-02-01T00:00:00Z", "The API listens on 7070.");
    b.git(&["commit", "-qam", "B"]);
    let pulled = b.git(&["pull", "--no-rebase", "origin", "main"]);
    assert!(pulled.contains("the earlier is kept as .memory/port-"), "{pulled}");
    assert!(b.marked().is_empty(), "{:?}", b.marked());

    let port = b.read("port.md");
    assert!(port.contains("The API listens on 9090.") && !port.contains("7070"), "{port}");
    assert!(port.contains("tags:\n- net\n- prod\n- api\n"), "ours' order, then theirs': {port}");
    assert!(port.contains("updated: 2026-03-01T00:00:00Z\n"), "{port}");
    let status = b.git(&["status", "--porcelain"]);
    let earlier = status.trim().strip_prefix("?? .memory/").expect(&status).to_string();
    let kept = b.read(&earlier);
    assert!(kept.contains("The API listens on 7070."), "{kept}");
    assert!(kept.contains("superseded_by: port\ninvalid_at: 2026-03-01T00:00:00Z\n"), "{kept}");

    let current = b.mem(&["recall", "--json", "API listens"]).json();
    assert_eq!(crate::util::ids(&current), ["port"]);
    let all = b.mem(&["recall", "--json", "--include-invalid", "API listens"]).json();
    let id = earlier.trim_end_matches(".md");
    assert_eq!(crate::util::ids(&all).len(), 2, "{all}");
    assert!(crate::util::ids(&all).contains(&id.to_string()), "{all}");
    let health = b.mem(&["health"]);
    assert_eq!(health.code, 0, "{}", health.stdout);
}

/// Issue #56, item 2: when only fields changed, they merge one by one (a field only one side
/// changed keeps that change, one both changed takes the later edit's) and no memory is added.
#[test]
fn fields_alone_merge_one_by_one() {
    let (origin, a) = origin();
    let b = Machine::of(origin.path());
    b.mem(&["init", "--project"]).ok();
    let base = a.read("port.md");
    let with = |lines: &str| base.replace("---\n#", &format!("{lines}---\n#"));
    a.dir.write(
        ".memory/port.md",
        with("owner: bo\nupdated: 2026-04-01T00:00:00Z\n")
            .replace("importance: 5", "importance: 9"),
    );
    a.git(&["commit", "-qam", "A"]);
    a.git(&["push", "-q", "origin", "main"]);
    let b_file = with("reviewer: cy\nupdated: 2026-03-01T00:00:00Z\n")
        .replace("importance: 5", "importance: 3")
        .replace("tags: [net]", "tags: [net, prod]");
    b.dir.write(".memory/port.md", b_file);
    b.git(&["commit", "-qam", "B"]);
    b.git(&["pull", "-q", "--no-rebase", "origin", "main"]);
    assert!(b.git(&["status", "--porcelain"]).trim().is_empty(), "no memory added");
    let shown = b.mem(&["show", "--json", "port"]).json();
    assert_eq!(shown["importance"], 9, "both changed it: the later edit's");
    let front = &shown["front_matter"];
    assert_eq!(front["owner"], "bo");
    assert_eq!(front["reviewer"], "cy", "only the earlier edit set it");
    assert_eq!(front["updated"], "2026-04-01T00:00:00Z");
    assert_eq!(shown["tags"], serde_json::json!(["net", "prod"]));
}

/// Issue #56, item 3: a clone without the driver gets git's markers; the file is out of recall
/// and of the context block, `mem health` fails naming it and `mem resolve`, which fixes it.
#[test]
fn markers_left_by_a_merge_without_the_driver_never_reach_the_model() {
    let (origin, a) = origin();
    let b = Machine::of(origin.path());
    a.edit("net", "2026-03-01T00:00:00Z", "The API listens on 9090.");
    a.git(&["commit", "-qam", "A"]);
    a.git(&["push", "-q", "origin", "main"]);
    b.edit("net", "2026-04-01T00:00:00Z", "The API listens on 7070.");
    b.git(&["commit", "-qam", "B"]);
    let health = b.mem(&["health"]);
    assert!(health.stdout.contains("! merge     "), "{}", health.stdout);
    assert!(health.stdout.contains("`mem init --project` registers it"), "{}", health.stdout);
    let (pulled, _) = try_git(&b.dir, &["pull", "--no-rebase", "origin", "main"]);
    assert!(!pulled, "git leaves a conflict");
    assert_eq!(b.marked().len(), 1);

    let recall = b.mem(&["recall", "--json", "API listens"]);
    assert_eq!(recall.code, 1, "nothing recalled: {}", recall.stdout);
    assert!(recall.stderr.contains("port.md:"), "{}", recall.stderr);
    assert!(recall.stderr.contains("git conflict markers"), "{}", recall.stderr);
    let context = b.mem(&["context", "--task", "which port does the API listen on"]);
    assert!(!context.ok().contains("listens on"), "{}", context.stdout);
    let health = b.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(
        health.stdout.contains("port.md holds git conflict markers: `mem resolve port.md` keeps"),
        "{}",
        health.stdout
    );

    let resolved = b.mem(&["resolve", "port.md"]).ok().to_string();
    assert!(resolved.contains("resolved port.md: port holds the later edit"), "{resolved}");
    assert!(b.marked().is_empty());
    assert!(b.read("port.md").contains("The API listens on 7070."), "B's edit is the later");
    let all = b.mem(&["recall", "--json", "--include-invalid", "API listens"]).json();
    assert_eq!(crate::util::ids(&all).len(), 2, "{all}");
    // Git still holds the merge open until the resolved file is added.
    let health = b.mem(&["health"]);
    assert!(health.stdout.contains("port.md is unmerged in git"), "{}", health.stdout);
    b.git(&["add", ".memory/port.md"]);
    assert_eq!(b.mem(&["health"]).code, 0);
    let again = b.mem(&["resolve", "port.md"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("port.md holds no whole git conflict"), "{}", again.stderr);
}

/// Issue #56, item 2: `mem init --project` run twice (and in a clone that has the root)
/// writes the attribute and the git configuration once.
#[test]
fn init_registers_the_driver_once() {
    let (_origin, a) = origin();
    let again = a.mem(&["init", "--project"]).ok().to_string();
    assert!(!again.contains("registered"), "{again}");
    assert_eq!(a.read(".gitattributes"), "*.md merge=mem\n");
    let drivers = a.git(&["config", "--get-all", "merge.mem.driver"]);
    assert_eq!(drivers.lines().count(), 1, "{drivers}");
    assert!(drivers.trim_end().ends_with(" merge-driver %O %A %B %P"), "{drivers}");
    assert!(a.git(&["status", "--porcelain"]).trim().is_empty(), "nothing new to commit");
}

/// Bad inputs of the driver and of `mem resolve`: a side that is not a memory fails (git then
/// writes its markers) and changes nothing; a path outside the root, or a conflict whose sides
/// are two memories, is refused and the file left as it is.
#[test]
fn what_cannot_be_merged_is_left_as_it_is() {
    let dir = Dir::new();
    dir.mem(&["init", "."]).ok();
    let good = memory("m", "semantic", 5, T0, "# M\ntext\n");
    dir.write("o", &good);
    dir.write("a", &good);
    dir.write("b", "not a memory\n");
    let out = dir.mem(&["merge-driver", "o", "a", "b", "notes/m.md"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("notes/m.md: git leaves its conflict markers; `mem resolve` it then: theirs is not a memory file (line 1: no front-matter"),
        "{}",
        out.stderr
    );
    assert_eq!(dir.read("a"), good, "ours untouched");

    let two = "---\n<<<<<<< HEAD\nid: m\n=======\nid: n\n>>>>>>> b\ntype: semantic\ncreated: 2026-01-01\n---\nx\n";
    dir.write("two.md", two);
    let out = dir.mem(&["resolve", "two.md"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("two.md: ours is the memory \"m\" and theirs \"n\": two memories, not two versions of one; the file is left as it is"), "{}", out.stderr);
    assert_eq!(dir.read("two.md"), two);
    let out = dir.mem(&["resolve", "/etc/hostname"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is not in the memory root"), "{}", out.stderr);
}

/// Issue #56, item 2: `mem setup AGENT` in a clone that has the project root already registers
/// the driver, once; set up again, it says nothing of it.
#[test]
fn setup_registers_the_driver_in_a_clone() {
    let (origin, _a) = origin();
    let b = Machine::of(origin.path());
    let out = b.mem(&["setup", "claude", "--scope", "project"]).ok().to_string();
    assert!(out.contains("registered mem's git merge driver: `merge.mem.driver`"), "{out}");
    assert_eq!(b.git(&["config", "--get-all", "merge.mem.driver"]).lines().count(), 1);
    let again = b.mem(&["setup", "claude", "--scope", "project"]).ok().to_string();
    assert!(again.contains("already set up") && !again.contains("registered"), "{again}");
}

/// Issue #56, item 7: what a clone pushes holds the memories and their usage files, and
/// nothing of the session log, the injection ledger, the transcripts mem keeps or the index:
/// after a captured session, `git add -A` and a push, the remote's tree has no `.mem/`.
#[test]
fn a_push_after_a_captured_session_holds_no_session_data() {
    let (origin, a) = origin();
    let transcript = a.dir.path().join("session.jsonl");
    let line = serde_json::json!({ "type": "user", "sessionId": "s-private", "cwd": a.dir.path(),
        "timestamp": "2026-11-30T11:00:00Z",
        "message": { "role": "user", "content": "my private prompt about the port" } });
    std::fs::write(&transcript, format!("{line}\n")).unwrap();
    let stop = serde_json::json!({ "session_id": "s-private", "hook_event_name": "Stop",
        "transcript_path": transcript, "cwd": a.dir.path() });
    let captured = a.dir.mem_in("", &["capture", "--hook", "claude"], stop.to_string());
    assert_eq!(captured.code, 0, "{captured:?}");
    assert!(a.dir.path().join(".memory/.mem").join(mem::session::FILE).exists());
    std::fs::remove_file(&transcript).unwrap();
    a.git(&["add", "-A"]);
    a.git(&["commit", "-qm", "after a session"]);
    a.git(&["push", "-q", "origin", "main"]);
    let bare = Dir::new();
    git(&bare, &["clone", "-q", origin.path().to_str().unwrap(), "."]);
    let tree = git(&bare, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tree.lines().any(|p| p.starts_with(".memory/")), "{tree}");
    assert!(!tree.lines().any(|p| p.contains(".mem/")), "{tree}");
    let all = git(&bare, &["log", "--all", "-p", "--format=%H"]);
    assert!(!all.contains(mem::session::FILE), "the session log was never committed");
}
