//! The verdicts on a repository whose history renames a file, deletes another, removes a
//! function, moves a function to another file and rewrites a third, with unchanged files
//! beside them (the same history the integration tests build through the binary).

use std::path::Path;
use std::process::Command;

use super::*;

/// When the memories were written: after the first commit, before the others.
fn written() -> i64 {
    "2026-10-05T00:00:00Z".parse::<jiff::Timestamp>().unwrap().as_second()
}

fn git(top: &Path, args: &[&str], day: u32) {
    let date = format!("2026-10-{day:02}T12:00:00Z");
    let out = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.org")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.org")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn write(top: &Path, rel: &str, text: &str) {
    let path = top.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The repository and its project root.
fn history() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    git(top, &["init", "-q"], 1);
    write(top, "backend/app/auth.py", "def issue_session(user):\n    return user\n");
    write(top, "backend/app/routes/login.py", "def login():\n    pass\n");
    let retry = "export function retry(job) {\n  return job.run();\n}\n".repeat(3);
    write(top, "worker/retry.ts", &retry);
    write(top, "src/billing.py", "def charge(x):\n    return x\n\ndef refund(x):\n    return -x\n");
    write(top, "src/util.py", "def helper():\n    return 1\n\ndef other():\n    return 2\n");
    write(top, "src/config.py", "PORT = 80\nHOST = 'a'\n");
    write(top, "src/settings.py", "DATABASE_URL = os.environ[\"DATABASE_URL\"]\n");
    write(top, ".memory/mem.toml", "");
    git(top, &["add", "."], 1);
    git(top, &["commit", "-qm", "first"], 1);
    std::fs::create_dir_all(top.join("worker/backoff")).unwrap();
    git(top, &["mv", "worker/retry.ts", "worker/backoff/retry.ts"], 10);
    git(top, &["commit", "-qm", "rename"], 10);
    git(top, &["rm", "-q", "backend/app/auth.py"], 12);
    git(top, &["commit", "-qm", "delete auth"], 12);
    write(top, "src/billing.py", "def charge(x):\n    return x\n");
    git(top, &["commit", "-qam", "drop refund"], 14);
    write(top, "src/util.py", "def other():\n    return 2\n");
    write(top, "src/helpers.py", "def helper():\n    return 1\n");
    git(top, &["add", "."], 15);
    git(top, &["commit", "-qm", "move helper"], 15);
    write(top, "src/config.py", "PORT = 8080\nHOST = 'b'\nDEBUG = False\n");
    git(top, &["commit", "-qam", "rewrite config"], 16);
    dir
}

fn verdict(repo: &Repo, text: &str) -> Verdict {
    repo.check(&[Subject { text, since: written() }]).remove(0).verdict
}

fn statuses(v: &Verdict) -> Vec<(String, Option<String>, Status, Option<String>)> {
    v.cites.iter().map(|c| (c.path.clone(), c.symbol.clone(), c.status, c.to.clone())).collect()
}

#[test]
fn every_verdict_of_a_history() {
    let dir = history();
    let repo = Repo::of_root(&dir.path().join(PROJECT_FOLDER)).unwrap();
    let gone =
        verdict(&repo, "The session cookie is set in backend/app/auth.py by issue_session()");
    assert_eq!(gone.code_status, Some(Status::Gone));
    assert_eq!(gone.cites[0].path, "backend/app/auth.py");
    assert_eq!(gone.cites[0].date.as_deref(), Some("2026-10-12"));
    assert!(gone.note().unwrap().contains("backend/app/auth.py was deleted in "), "{gone:?}");
    assert!(gone.all_gone());

    let moved = verdict(&repo, "The retry logic lives in `worker/retry.ts`.");
    let to = Some("worker/backoff/retry.ts".to_string());
    assert_eq!(statuses(&moved), [("worker/retry.ts".into(), None, Status::Moved, to)]);

    let removed = verdict(&repo, "Refunds go through `refund()` in src/billing.py");
    assert_eq!(removed.code_status, Some(Status::Gone));
    let refund = removed.cites.iter().find(|c| c.symbol.is_some()).unwrap();
    assert_eq!((refund.status, refund.date.as_deref()), (Status::Gone, Some("2026-10-14")));
    assert_eq!(removed.cites[0].status, Status::Changed);

    let helper = verdict(&repo, "Use `helper()` from src/util.py for ids.");
    let h = helper.cites.iter().find(|c| c.symbol.is_some()).unwrap();
    assert_eq!((h.status, h.to.as_deref()), (Status::Moved, Some("src/helpers.py")));

    let changed = verdict(&repo, "Settings are read in src/config.py at start.");
    assert_eq!(changed.code_status, Some(Status::Changed));
    assert_eq!(changed.cites[0].lines, Some(5));

    let current = verdict(&repo, "Login is handled in routes/login.py by login().");
    assert_eq!(current.code_status, Some(Status::Current), "{current:?}");
    assert_eq!(current.cites[0].path, "backend/app/routes/login.py");

    let none = verdict(
        &repo,
        "Run `cargo test --all` with `RUST_LOG=debug`; docs at https://example.org/x/y.py; \
         install `serde_json` or `@types/node`; set `DATABASE_URL`; `npm run build`; e.g. this",
    );
    assert_eq!(none, Verdict::default());
}

#[test]
fn the_work_tree_counts_before_a_commit() {
    let dir = history();
    let top = dir.path();
    std::fs::remove_file(top.join("src/helpers.py")).unwrap();
    let repo = Repo::of_root(&top.join(PROJECT_FOLDER)).unwrap();
    let v = verdict(&repo, "The ids come from src/helpers.py");
    assert_eq!(statuses(&v), [("src/helpers.py".into(), None, Status::Gone, None)]);
    assert!(v.note().unwrap().contains("not committed"));
}

#[test]
fn roots_that_are_no_project_root_have_no_repository() {
    let dir = history();
    assert!(Repo::of_root(dir.path()).is_none());
    let other = tempfile::tempdir().unwrap();
    std::fs::create_dir(other.path().join(PROJECT_FOLDER)).unwrap();
    assert!(Repo::of_root(&other.path().join(PROJECT_FOLDER)).is_none());
}
