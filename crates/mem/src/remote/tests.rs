//! Unit tests of the user layer's remote: addresses compared, the files committed, the ssh
//! command in batch mode, a write while a sync runs.

use super::{TURNS, leave_word_if_running, same_remote, shared};
use crate::git::batch_ssh;
use crate::turns::{Mode, Turns};

#[test]
fn one_repository_at_several_addresses_is_one_remote() {
    let same = [
        ("https://github.com/ana/notes.git", "git@github.com:ana/notes"),
        ("ssh://git@GitHub.com:22/ana/notes.git/", "https://github.com/ana/notes"),
        ("git@github.com:ana/notes.git", "github.com:ana/notes/"),
        ("ssh://[::1]:2222/srv/notes.git", "ssh://git@[::1]/srv/notes"),
    ];
    for (a, b) in same {
        assert!(same_remote(a, b), "{a} = {b}");
    }
    let other = [
        ("https://github.com/ana/notes.git", "https://github.com/ana/notes-work.git"),
        ("https://github.com/ana/notes.git", "https://gitlab.com/ana/notes.git"),
        ("/srv/git/notes", "/srv/git/other"),
    ];
    for (a, b) in other {
        assert!(!same_remote(a, b), "{a} ≠ {b}");
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    assert!(same_remote(path, &format!("file://{path}/")));
    assert!(same_remote(path, &format!("{path}/./")));
}

#[test]
fn only_memories_and_their_settings_are_committed() {
    for path in
        ["a.md", "sessions/s.md", "mem.toml", "usage/ana.tsv", ".gitignore", ".gitattributes"]
    {
        assert!(shared(path), "{path}");
    }
    for path in [
        ".mem/sessions.db",
        ".mem/transcripts/s.md",
        ".mem/capture.log",
        "notes/.mem/x.md",
        "roots.toml",
        "usage/old/a.tsv",
        "secrets.env",
        ".git/config",
    ] {
        assert!(!shared(path), "{path}");
    }
}

#[test]
fn the_users_ssh_command_is_kept_and_made_batch() {
    assert_eq!(batch_ssh(None, None), "ssh -o BatchMode=yes");
    assert_eq!(
        batch_ssh(Some("ssh -i ~/.ssh/notes -p 2222"), None),
        "ssh -i ~/.ssh/notes -p 2222 -o BatchMode=yes"
    );
    assert_eq!(batch_ssh(Some("'C:/PuTTY/plink.exe'"), None), "'C:/PuTTY/plink.exe' -batch");
    assert_eq!(batch_ssh(Some("my-ssh"), Some("putty")), "my-ssh -batch");
    assert_eq!(batch_ssh(Some("  "), None), "ssh -o BatchMode=yes");
}

#[test]
fn a_write_while_a_sync_runs_leaves_word_instead_of_starting_one() {
    let dir = tempfile::tempdir().unwrap();
    let again = crate::store::state_dir(dir.path()).unwrap().join("remote.again");
    assert!(!leave_word_if_running(dir.path()), "no sync runs: start one");
    assert!(std::fs::symlink_metadata(&again).is_err(), "no word left when none runs");
    let turns = Turns::new(dir.path(), TURNS).unwrap();
    let held = turns.take(Mode::Wait).unwrap().expect("the lock is free");
    assert!(leave_word_if_running(dir.path()), "a sync holds the lock");
    assert!(std::fs::symlink_metadata(&again).is_ok(), "its holder is asked to sync again");
    drop(held);
    assert!(!leave_word_if_running(dir.path()), "released: the next write starts one");
}
