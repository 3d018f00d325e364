//! A memory retired on one machine and edited on another (issue #56, item 4): archived,
//! forgotten, superseded or removed with `git rm` in one clone, its text edited in the other,
//! then `git pull`. Each combination ends in the one state docs/teams.md states.

use crate::conflicts::{Machine, origin, try_git};

/// Two clones of one origin: A, which pushed the memory `port`, and B, set up too.
fn two_clones() -> (crate::util::Dir, Machine, Machine) {
    let (origin, a) = origin();
    let b = Machine::of(origin.path());
    b.mem(&["init", "--project"]).ok();
    (origin, a, b)
}

/// B edits `port`'s text (later than A's retiring), commits, and pulls A's push: what git said.
fn b_edits_then_pulls(a: &Machine, b: &Machine) -> (bool, String) {
    a.git(&["add", "-A"]);
    a.git(&["commit", "-qm", "A retires port"]);
    a.git(&["push", "-q", "origin", "main"]);
    b.edit("net", "2026-12-01T00:00:00Z", "The API listens on 9090 now.");
    b.git(&["commit", "-qam", "B edits port"]);
    try_git(&b.dir, &["pull", "--no-rebase", "origin", "main"])
}

/// The ids `mem recall` gives for the port, with invalid ones or not.
fn recalled(b: &Machine, invalid: bool) -> Vec<String> {
    let mut args = vec!["recall", "--json", "API listens"];
    if invalid {
        args.push("--include-invalid");
    }
    crate::util::ids(&b.mem(&args).json_found())
}

/// Forgotten in A, edited in B: it stays forgotten (out of recall), with B's text.
#[test]
fn forgotten_on_one_side_and_edited_on_the_other_stays_forgotten_with_the_edit() {
    let (_origin, a, b) = two_clones();
    a.mem(&["forget", "port", "--reason", "moved to the gateway"]).ok();
    let (ok, said) = b_edits_then_pulls(&a, &b);
    assert!(ok, "{said}");
    assert!(b.marked().is_empty());
    let port = b.read("port.md");
    assert!(port.contains("invalid_at:") && port.contains("9090 now"), "{port}");
    assert!(recalled(&b, false).is_empty());
    assert_eq!(recalled(&b, true), ["port"]);
}

/// Superseded in A, edited in B: it stays superseded by A's new memory, with B's text.
#[test]
fn superseded_on_one_side_and_edited_on_the_other_stays_superseded_with_the_edit() {
    let (_origin, a, b) = two_clones();
    let added = a.mem(&["add", "--json", "The API listens behind the gateway on 443."]).json();
    let new = added["id"].as_str().unwrap().to_string();
    a.mem(&["supersede", "port", "--by", &new]).ok();
    let (ok, said) = b_edits_then_pulls(&a, &b);
    assert!(ok, "{said}");
    let port = b.read("port.md");
    assert!(port.contains(&format!("superseded_by: {new}")) && port.contains("9090 now"), "{port}");
    assert_eq!(recalled(&b, false), [new]);
}

/// Archived in A (forgotten, then pruned into `archive/`), edited in B: git sees a delete and
/// an edit (the archived copy differs too much to be taken for a move), stops with a
/// modify/delete conflict, and leaves B's edited file beside A's archived copy. `mem health`
/// names the unmerged file and the two ways out; `git rm` retires it again.
#[test]
fn archived_on_one_side_and_edited_on_the_other_is_a_conflict_health_names() {
    let (_origin, a, b) = two_clones();
    a.mem(&["forget", "port", "--reason", "moved to the gateway"]).ok();
    a.mem(&["prune"]).ok();
    assert!(a.dir.path().join(".memory/archive/port.md").exists());
    let (ok, said) = b_edits_then_pulls(&a, &b);
    assert!(!ok && said.contains("CONFLICT (modify/delete)"), "{said}");
    assert!(b.read("archive/port.md").contains("archived_at:"));
    assert_eq!(recalled(&b, false), ["port"], "the edit is read meanwhile");
    let health = b.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("port.md is unmerged in git"), "{}", health.stdout);
    assert!(health.stdout.contains("`git rm port.md` retires it"), "{}", health.stdout);
    b.git(&["rm", "-q", ".memory/port.md"]);
    b.git(&["commit", "-qm", "retired"]);
    assert!(recalled(&b, false).is_empty());
    let health = b.mem(&["health"]);
    assert_eq!(health.code, 0, "{}", health.stdout);
}

/// Removed with `git rm` in A, edited in B: git stops with a modify/delete conflict and leaves
/// B's edited file; mem reads it as a live memory, and `mem health` names the unmerged file
/// and the two ways out; `git add` keeps the edit.
#[test]
fn removed_on_one_side_and_edited_on_the_other_is_a_conflict_health_names() {
    let (_origin, a, b) = two_clones();
    a.git(&["rm", "-q", ".memory/port.md"]);
    let (ok, said) = b_edits_then_pulls(&a, &b);
    assert!(!ok && said.contains("CONFLICT (modify/delete)"), "{said}");
    assert!(b.read("port.md").contains("9090 now"));
    assert_eq!(recalled(&b, false), ["port"]);
    let health = b.mem(&["health"]);
    assert_eq!(health.code, 1, "{}", health.stdout);
    assert!(health.stdout.contains("`git add port.md` keeps it"), "{}", health.stdout);
    b.git(&["add", ".memory/port.md"]);
    b.git(&["commit", "-qm", "kept"]);
    assert_eq!(recalled(&b, false), ["port"]);
    assert_eq!(b.mem(&["health"]).code, 0);
}
