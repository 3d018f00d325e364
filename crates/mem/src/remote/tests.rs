//! Unit tests of the user layer's remote: addresses compared, the files committed, the ssh
//! command in batch mode.

use super::{same_remote, shared};
use crate::git::batch_ssh;

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
