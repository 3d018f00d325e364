//! The user layer's git remote (`[layers] user_remote`) as the binary runs it: the
//! [`mem::remote::Remote`] the user configuration and the environment describe, the sync `mem
//! sync` runs, the one a write into the user layer starts in the background (a detached `mem
//! sync --background`, which never delays the command or hook that wrote), and what `mem
//! health` says of it (docs/teams.md, "The personal layer on its own remote").

use std::path::{Path, PathBuf};

use anyhow::Result;
use mem::remote::{Folder, Remote, Ssh, SyncReport};
use mem::turns::Mode;

use super::Globals;

/// The user layer's remote, when the user configuration names one (and the platform has a
/// data folder for its default place): its URL and folder, the user's ssh from the environment
/// (`GIT_SSH_COMMAND`, `GIT_SSH`), and this `mem` as the merge driver.
pub fn configured() -> Result<Option<Remote>> {
    let config = super::user::load()?;
    let (Some(url), Some(dir)) = (config.layers.user_remote.clone(), config.layers.folder()) else {
        return Ok(None);
    };
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let ssh = Ssh { command: var("GIT_SSH_COMMAND"), program: var("GIT_SSH") };
    Ok(Some(Remote { url, dir, ssh, driver: super::merge::command()? }))
}

/// The folders whose projects' remotes the user layer must not push to: the working folder
/// and the memory root found from it (none is made).
fn projects(ctx: &Globals) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
    if let Ok((root, _)) = ctx.locate_root(None) {
        folders.push(root);
    }
    folders
}

/// Syncs the user layer with its remote, waiting for a sync that runs (`mem sync`); `None`
/// when no remote is configured.
pub fn sync(ctx: &Globals) -> Result<Option<SyncReport>> {
    let Some(remote) = configured()? else { return Ok(None) };
    Ok(mem::remote::sync(&remote, &projects(ctx), Mode::Wait, ctx.now)?)
}

/// `mem sync --background`: the user layer's sync a write started, or nothing when another
/// sync runs (it syncs once more). Its outcome is kept in the layer's `.mem/remote.json`, for
/// `mem health`; nothing is printed.
pub fn sync_in_background(ctx: &Globals) {
    let Ok(Some(remote)) = configured() else { return };
    let _ = mem::remote::sync(&remote, &projects(ctx), Mode::Background, ctx.now);
}

/// After a write into the memory root `root`: when it is the user layer and the layer has a
/// remote, leaves word for the sync that runs, if one does, else starts `mem sync --background`, detached (its own process group, no standard
/// streams: an agent waiting for the hook's output never waits for it), and returns at once.
/// Nothing happens for any other root, or when the process cannot be started.
pub fn after_write(root: &Path) {
    let Ok(config) = super::user::load() else { return };
    let (Some(_), Some(layer)) = (&config.layers.user_remote, config.layers.folder()) else {
        return;
    };
    // A sync that runs (waiting on the network, say) is told to go once more: no process.
    if !mem::open::same_folder(root, &layer) || mem::remote::leave_word_if_running(&layer) {
        return;
    }
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = Command::new(exe);
    cmd.args(["sync", "--background"]);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    if let Ok(mut child) = cmd.spawn() {
        // Reaped when it ends, for a process that outlives it (`mem mcp`).
        std::thread::spawn(move || child.wait());
    }
}

/// What `mem health` says of the user layer's remote: its lines and whether it is well (a
/// remote out of reach is a warning, the next sync catches up; a folder refused or a merge
/// that needs the user fails), and the same as JSON; `None` without a remote.
pub fn health(ctx: &Globals) -> Option<(String, bool, serde_json::Value)> {
    let remote = configured().ok()??;
    let (url, dir) = (&remote.url, remote.dir.display());
    let warn = |detail: String| format!("! {:<9} {detail}\n", "remote");
    let checked = mem::remote::refuse_project_remote(url, &remote.dir, &projects(ctx))
        .and_then(|()| mem::remote::folder(url, &remote.dir));
    let state = mem::remote::state(&remote.dir);
    let mut json = serde_json::json!({ "url": url, "dir": remote.dir, "state": state });
    let (text, ok) = match checked {
        Err(e) => {
            json["problem"] = e.to_string().into();
            (super::words::status(false, "remote", &e.to_string()), false)
        }
        Ok(Folder::Missing) => (
            warn(format!(
                "the user layer {dir} is not cloned yet from {url}: `mem sync` clones it"
            )),
            true,
        ),
        Ok(Folder::Clone) => match &state {
            None => (
                warn(format!("the user layer {dir} has not synced with {url} yet: `mem sync`")),
                true,
            ),
            Some(state) => match &state.failure {
                None => {
                    let at = state.last_sync.map(|t| t.to_string()).unwrap_or_default();
                    (
                        super::words::status(
                            true,
                            "remote",
                            &format!("the user layer {dir} synced with {url} at {at}"),
                        ),
                        true,
                    )
                }
                Some(failed) => {
                    let last = state
                        .last_sync
                        .map_or("never synced yet".to_string(), |t| format!("last synced at {t}"));
                    let detail = format!(
                        "the user layer's sync with {url} failed at {} ({}: {}); {last}",
                        failed.at,
                        failed.step.as_str(),
                        failed.message
                    );
                    if failed.step.reaches_the_remote() {
                        (
                            warn(format!(
                                "{detail}: offline or out of reach; what is here is committed in {dir}, \
                             and the next sync catches up (`mem sync`, or the next capture into the \
                             layer)"
                            )),
                            true,
                        )
                    } else {
                        (super::words::status(false, "remote", &detail), false)
                    }
                }
            },
        },
    };
    json["ok"] = ok.into();
    Some((text, ok, json))
}
