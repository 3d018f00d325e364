//! The git steps of a sync of the user layer ([`super::sync`]): clone, commit, fetch, merge and
//! push, each through [`Runner::own`] with the user's ssh in batch mode.

use std::path::Path;

use jiff::Timestamp;

use super::{Remote, Step, SyncReport, shared};
use crate::git::{Runner, batch_ssh};
use crate::{Engine, Error, Result};

/// How many times a push that another machine's push got ahead of is tried (each after a fetch
/// and a merge).
const PUSH_TRIES: usize = 3;

/// The identity of mem's commits when the user's git configuration names none.
const IDENTITY: &[(&str, &str)] = &[
    ("GIT_AUTHOR_NAME", "mem"),
    ("GIT_AUTHOR_EMAIL", "mem@localhost"),
    ("GIT_COMMITTER_NAME", "mem"),
    ("GIT_COMMITTER_EMAIL", "mem@localhost"),
];

/// A failed step, with git's word or mem's.
type Failed = (Step, String);

/// `git args` in `git`'s folder: its stdout without the final newline, or what went wrong.
pub(super) fn text(git: &Runner, args: &[&str]) -> std::result::Result<String, String> {
    bytes(git, args, &[], b"").map(|out| String::from_utf8_lossy(&out).trim_end().to_string())
}

/// `git args` with `env` added and `input` on stdin: its stdout, or what went wrong.
fn bytes(
    git: &Runner,
    args: &[&str],
    env: &[(&str, &str)],
    input: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    let name = args.first().copied().unwrap_or("git");
    match git.run(args, env, input, None) {
        Ok(done) if done.status.success() => Ok(done.stdout),
        Ok(done) => Err(said(&done)),
        Err(e) => Err(format!("git {name}: {e}")),
    }
}

/// What a failed git process said: its first `fatal:` or `error:` line (a push says where it
/// goes first), else its first line.
fn said(done: &crate::git::Finished) -> String {
    let stderr = String::from_utf8_lossy(&done.stderr);
    let line =
        stderr.lines().map(str::trim).find(|l| l.starts_with("fatal:") || l.starts_with("error:"));
    match line {
        Some(line) => crate::format::without_controls(
            line.trim_start_matches("fatal: ").trim_start_matches("error: "),
        ),
        None => done.first_error(),
    }
}

/// A runner for `dir` (the user layer, or the folder it is cloned in) with the user's ssh in
/// batch mode: `GIT_SSH_COMMAND`, else `core.sshCommand`, else `GIT_SSH`, else `ssh`.
fn runner(remote: &Remote, dir: &Path) -> Runner {
    let probe = Runner::own(dir, "ssh");
    let configured = || text(&probe, &["config", "--get", "core.sshCommand"]).ok();
    let program = || remote.ssh.program.as_deref().map(quoted);
    let command = remote.ssh.command.clone().or_else(configured).or_else(program);
    let variant = text(&probe, &["config", "--get", "ssh.variant"]).ok();
    Runner::own(dir, &batch_ssh(command.as_deref(), variant.as_deref()))
}

/// `word` quoted for the shell.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Clones the remote into the user layer's folder (absent, or empty): into a temporary folder
/// beside it, then moved there, so that a clone cut short leaves nothing in its place.
pub(super) fn clone(remote: &Remote) -> Result<()> {
    let dir = &remote.dir;
    let failed = |why: String| {
        Error::Remote(format!("cannot clone {} into {}: {why}", remote.url, dir.display()))
    };
    let parent = dir.parent().ok_or_else(|| failed("it has no parent folder".into()))?;
    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    let tmp = tempfile::Builder::new()
        .prefix(".mem-clone-")
        .tempdir_in(parent)
        .map_err(|e| Error::io(parent, e))?;
    let target = tmp.path().join("layer");
    let target_text = target.to_str().ok_or_else(|| failed("its path is not UTF-8".into()))?;
    let git = runner(remote, parent);
    text(&git, &["clone", "--quiet", "--no-checkout", "--", &remote.url, target_text])
        .map_err(failed)?;
    let layer = runner(remote, &target);
    if exists(&layer, "HEAD") {
        refuse_private(&layer, "HEAD").map_err(failed)?;
        text(&layer, &["checkout", "--quiet"]).map_err(failed)?;
    }
    // An empty folder there is replaced; one a sync cloned meanwhile is taken as it is.
    let _ = std::fs::remove_dir(dir);
    if let Err(e) = std::fs::rename(&target, dir) {
        return match super::folder(&remote.url, dir) {
            Ok(super::Folder::Clone) => Ok(()),
            _ => Err(Error::io(dir, e)),
        };
    }
    Ok(())
}

/// One sync of the cloned layer (see [`super::sync`]); the failed step, if one fails.
pub(super) fn run(
    remote: &Remote,
    now: Timestamp,
    report: &mut SyncReport,
) -> std::result::Result<(), Failed> {
    let dir = &remote.dir;
    let git = runner(remote, dir);
    let commit_failed = |e: Error| (Step::Commit, e.to_string());
    if dir.join(crate::config::CONFIG_FILE).exists() {
        // Keeps `.mem/` in `.gitignore`, whoever made the root.
        crate::store::init(dir).map_err(commit_failed)?;
    } else {
        crate::open::make_root(dir, now).map_err(commit_failed)?;
        report.made_root = true;
    }
    crate::merge::driver::register(dir, &remote.driver).map_err(commit_failed)?;
    let mut engine = Engine::open(dir).map_err(commit_failed)?;
    if engine.files.config().usage.sync {
        report.usage_events += engine.sync(now).map_err(commit_failed)?.events;
    }
    drop(engine);
    report.committed += commit(&git, dir, "mem sync: the user layer's memories")?;
    for attempt in 1..=PUSH_TRIES {
        text(&git, &["fetch", "--quiet", "--prune", "origin"]).map_err(|e| (Step::Fetch, e))?;
        let up = upstream(&git, dir).map_err(|e| (Step::Merge, e))?;
        if merge(&git, dir, &up)? {
            report.merged = Some(up.clone());
        }
        report.committed += commit(&git, dir, "mem sync: the earlier edits a merge kept")?;
        match push(&git, &up) {
            Ok(pushed) => {
                if pushed {
                    report.pushed = Some(up);
                }
                return Ok(());
            }
            Err(Push::Behind(_)) if attempt < PUSH_TRIES => continue,
            Err(Push::Behind(why) | Push::Failed(why)) => return Err((Step::Push, why)),
        }
    }
    Ok(())
}

/// Stages and commits the layer's changed shared files ([`shared`]); how many. Anything else
/// staged (by hand) stops it: mem commits only memories and their settings.
fn commit(git: &Runner, dir: &Path, message: &str) -> std::result::Result<usize, Failed> {
    let failed = |e: String| (Step::Commit, e);
    let listing = ["ls-files", "-z", "--others", "--modified", "--deleted", "--exclude-standard"];
    let listed = bytes(git, &listing, &[], b"").map_err(failed)?;
    let mut paths: Vec<&[u8]> = listed.split(|b| *b == 0).filter(|p| !p.is_empty()).collect();
    paths.sort_unstable();
    paths.dedup();
    paths.retain(|p| std::str::from_utf8(p).is_ok_and(shared));
    if !paths.is_empty() {
        let input = paths.join(&0u8);
        let add = ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"];
        bytes(git, &add, &[], &input).map_err(failed)?;
    }
    let staged =
        bytes(git, &["diff", "--cached", "--name-only", "-z"], &[], b"").map_err(failed)?;
    let staged: Vec<String> = staged
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let foreign: Vec<&str> = staged.iter().map(String::as_str).filter(|p| !shared(p)).collect();
    if !foreign.is_empty() {
        return Err(failed(format!(
            "{} is staged in {}, and mem commits only memories and their settings from the user \
             layer: `git -C {} reset -- {}` unstages it",
            foreign.join(", "),
            dir.display(),
            dir.display(),
            foreign.join(" ")
        )));
    }
    if staged.is_empty() {
        return Ok(0);
    }
    let args = ["commit", "--quiet", "--no-verify", "-m", message];
    bytes(git, &args, identity(git), b"").map_err(failed)?;
    Ok(staged.len())
}

/// The environment that gives mem's commits an identity: none when the user's git
/// configuration names one, else [`IDENTITY`].
fn identity(git: &Runner) -> &'static [(&'static str, &'static str)] {
    let known = |key: &str| text(git, &["config", "--get", key]).is_ok_and(|v| !v.is_empty());
    if known("user.name") && known("user.email") { &[] } else { IDENTITY }
}

/// Whether `reference` names a commit.
fn exists(git: &Runner, reference: &str) -> bool {
    let spec = format!("{reference}^{{commit}}");
    text(git, &["rev-parse", "--verify", "--quiet", &spec]).is_ok()
}

/// The remote's branch the layer's branch goes with: the one of the same name, else the
/// remote's default (`origin/HEAD`), else its only branch, else the same name (a new branch).
fn upstream(git: &Runner, dir: &Path) -> std::result::Result<String, String> {
    let current = text(git, &["symbolic-ref", "--quiet", "--short", "HEAD"]).map_err(|_| {
        format!(
            "the user layer {} is not on a branch: `git -C {} switch BRANCH`, then `mem sync`",
            dir.display(),
            dir.display()
        )
    })?;
    if exists(git, &format!("refs/remotes/origin/{current}")) {
        return Ok(current);
    }
    let default = text(git, &["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"]);
    if let Some(branch) = default.ok().as_deref().and_then(|d| d.strip_prefix("origin/")) {
        return Ok(branch.to_string());
    }
    let listing = ["for-each-ref", "--format=%(refname:lstrip=3)", "refs/remotes/origin/"];
    let all = text(git, &listing).unwrap_or_default();
    let branches: Vec<&str> = all.lines().filter(|b| !b.is_empty() && *b != "HEAD").collect();
    match branches[..] {
        [only] => Ok(only.to_string()),
        _ => Ok(current),
    }
}

/// Merges the remote's branch `up` into the layer's, with mem's driver for memory files;
/// whether it brought anything. A merge git cannot finish is undone, and named.
fn merge(git: &Runner, dir: &Path, up: &str) -> std::result::Result<bool, Failed> {
    let theirs = format!("refs/remotes/origin/{up}");
    if !exists(git, &theirs) {
        return Ok(false);
    }
    if exists(git, "HEAD") && text(git, &["merge-base", "--is-ancestor", &theirs, "HEAD"]).is_ok() {
        return Ok(false);
    }
    refuse_private(git, &theirs).map_err(|e| (Step::Merge, e))?;
    let message = format!("mem sync: merge {up} of the user layer's remote");
    let args = ["merge", "--quiet", "--no-edit", "--allow-unrelated-histories", "-m", &message];
    let args = [&args[..], &[theirs.as_str()]].concat();
    let merged = bytes(git, &args, identity(git), b"");
    let Err(why) = merged else { return Ok(true) };
    let unmerged = text(git, &["diff", "--name-only", "--diff-filter=U"]).unwrap_or_default();
    let _ = text(git, &["merge", "--abort"]);
    let what = if unmerged.is_empty() {
        format!(": {why}")
    } else {
        format!(" on a conflict in {}", unmerged.lines().collect::<Vec<_>>().join(", "))
    };
    Err((
        Step::Merge,
        format!(
            "merging the remote's {up} stopped{what} (undone); merge it by hand: `git -C {} merge \
             origin/{up}`, resolve, commit, then `mem sync`",
            dir.display()
        ),
    ))
}

/// Refuses a commit of the remote (`reference`) whose tree holds a path under `.mem/` (or a
/// `.mem` of any kind, at any depth): mem never commits one, and git would write it over this
/// machine's own (the session log, the usage log), which `.gitignore` leaves to it.
fn refuse_private(git: &Runner, reference: &str) -> std::result::Result<(), String> {
    let listed = bytes(git, &["ls-tree", "-r", "-z", "--name-only", reference], &[], b"")?;
    let private: Vec<String> = listed
        .split(|b| *b == 0)
        .map(String::from_utf8_lossy)
        .filter(|p| p.split('/').any(|c| c == crate::store::STATE_DIR))
        .map(|p| crate::format::without_controls(&p))
        .take(5)
        .collect();
    if private.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the remote's {reference} holds {}, under .mem/, which is each machine's own (session \
         log, usage log, index) and never travels: remove it from the remote (`git rm -r \
         --cached` in a clone, commit, push), then `mem sync`",
        private.join(", ")
    ))
}

/// Why a push failed.
enum Push {
    /// Another machine pushed first: fetch, merge and push again.
    Behind(String),
    /// Anything else (the remote out of reach, refused).
    Failed(String),
}

/// Pushes the layer's branch to the remote's `up` when it has commits the remote lacks;
/// whether it pushed.
fn push(git: &Runner, up: &str) -> std::result::Result<bool, Push> {
    let theirs = format!("refs/remotes/origin/{up}");
    if !exists(git, "HEAD") {
        return Ok(false);
    }
    if exists(git, &theirs) {
        let ahead = text(git, &["rev-list", "--count", &format!("{theirs}..HEAD")]);
        if ahead.as_deref() == Ok("0") {
            return Ok(false);
        }
    }
    let target = format!("HEAD:refs/heads/{up}");
    match git.run(&["push", "--quiet", "origin", &target], &[], b"", None) {
        Ok(done) if done.status.success() => Ok(true),
        Ok(done) => {
            let all = String::from_utf8_lossy(&done.stderr);
            let behind = ["[rejected]", "non-fast-forward", "fetch first"];
            let why = said(&done);
            if behind.iter().any(|b| all.contains(b)) {
                Err(Push::Behind(why))
            } else {
                Err(Push::Failed(why))
            }
        }
        Err(e) => Err(Push::Failed(format!("git push: {e}"))),
    }
}
