//! The team push a capture starts (`[team] push = "capture"` in the user configuration;
//! docs/teams.md): a detached `mem team push --background` that the hook never waits for, one
//! at a time per root (the root's `.mem/team-push.lock`, [`mem::turns`]: a capture while one
//! runs leaves word and that one pushes again), and each push's outcome in the root's
//! `.mem/team-push.json`, which `mem health` shows.

use std::path::Path;

use anyhow::{Context as _, Result};
use serde::{Deserialize, Serialize};

/// The turns of a root's pushes: `.mem/team-push.lock`, `.mem/team-push.again`.
const TURNS: &str = "team-push";

/// The file in a root's `.mem/` that keeps the last push's outcome.
const STATE_FILE: &str = "team-push.json";

/// The most bytes of the outcome file read.
const MAX_STATE_BYTES: u64 = 64 << 10;

/// A push's outcome, as `.mem/team-push.json` keeps it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// When it ran.
    pub at: Option<jiff::Timestamp>,
    /// Whether a capture started it.
    pub background: bool,
    /// The project the root was pushed as.
    pub project: Option<String>,
    /// Rows sent.
    pub sent: usize,
    /// Rows the store held as they are.
    pub unchanged: usize,
    /// Rows withdrawn as marked `publish: false`.
    pub withdrawn: u64,
    /// Rows withdrawn because their files were deleted.
    pub deleted: u64,
    /// Why it failed, if it did.
    pub error: Option<String>,
}

/// The turns of the root `root`'s pushes.
pub fn turns(root: &Path) -> Result<mem::turns::Turns> {
    mem::turns::Turns::new(root, TURNS).context("cannot open the team push's lock")
}

/// Keeps `outcome` as the root `root`'s last push.
pub fn keep(root: &Path, outcome: &Outcome) -> Result<()> {
    let path = mem::store::state_dir(root)?.join(STATE_FILE);
    let text = serde_json::to_string_pretty(outcome)?;
    mem::store::write_atomic(&path, text.as_bytes(), mem::store::Overwrite::Yes)?;
    Ok(())
}

/// The root `root`'s last push, when one was kept (and reads as one).
pub fn last(root: &Path) -> Option<Outcome> {
    let path = root.join(mem::store::STATE_DIR).join(STATE_FILE);
    let links = mem::untrusted::Links::InFolder;
    let text = mem::untrusted::read_text(&path, MAX_STATE_BYTES, links).ok()??;
    serde_json::from_str(&text).ok()
}

/// After a capture wrote memories into the root `root`: when the user configuration names a
/// team store and `[team] push = "capture"`, and `root` is not the user layer (published only
/// with `mem team push --user`), leaves word for the push that runs, if one does, else starts
/// `mem team push --background` detached (its own process group, no standard streams) and
/// returns at once. The hook never connects to the store itself.
pub fn after_capture(root: &Path) {
    let Ok(config) = super::user::load() else { return };
    if config.team.url.is_none() || config.team.push != super::user::TeamPush::Capture {
        return;
    }
    if config.layers.folder().is_some_and(|layer| mem::open::same_folder(root, &layer)) {
        return;
    }
    let Ok(turns) = turns(root) else { return };
    if turns.leave_word_if_running() {
        return;
    }
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let Ok(exe) = std::env::current_exe() else { return };
    let mut cmd = Command::new(exe);
    cmd.arg("--dir").arg(root).args(["team", "push", "--background"]).current_dir(root);
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    if let Ok(mut child) = cmd.spawn() {
        // Reaped when it ends, for a process that outlives it (`mem mcp`).
        std::thread::spawn(move || child.wait());
    }
}

/// What a push did, in words: `N sent, N unchanged, …`.
pub fn counts(outcome: &Outcome) -> String {
    format!(
        "{} sent, {} unchanged, {} withdrawn as deleted, {} withdrawn as publish: false",
        outcome.sent, outcome.unchanged, outcome.deleted, outcome.withdrawn
    )
}

/// `mem health`'s line on the root `root`'s last push, when one was kept: `✓` with what it
/// did, or `!` with why it failed (a warning: the files are fine, the next push catches up).
pub fn health_line(root: &Path) -> Option<(String, Outcome)> {
    let outcome = last(root)?;
    let at = outcome.at.map(|t| t.to_string()).unwrap_or_default();
    let how = if outcome.background { " (after a capture)" } else { "" };
    let project = outcome.project.as_deref().map(|p| format!(" as {p}")).unwrap_or_default();
    let line = match &outcome.error {
        None => super::words::status(
            true,
            "team push",
            &format!("at {at}{how}{project}: {}", counts(&outcome)),
        ),
        Some(error) => format!(
            "! {:<9} failed at {at}{how}{project}: {error}; the next push (a capture, or `mem \
             team push`) tries again\n",
            "team push"
        ),
    };
    Some((line, outcome))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_file_mem_did_not_write_shows_nothing() {
        let root = tempfile::tempdir().unwrap();
        let file = mem::store::state_dir(root.path()).unwrap().join(STATE_FILE);
        assert!(last(root.path()).is_none(), "no push yet");
        let outcome = Outcome { sent: 2, project: Some("acme/api".into()), ..Outcome::default() };
        keep(root.path(), &outcome).unwrap();
        assert_eq!(last(root.path()).unwrap().sent, 2);
        for text in ["{not json", "[]", &"x".repeat(MAX_STATE_BYTES as usize + 1)] {
            std::fs::write(&file, text).unwrap();
            assert!(last(root.path()).is_none(), "{:.20}", text);
        }
        // A link out of `.mem/` is not followed.
        let outside = root.path().join("elsewhere.json");
        std::fs::write(&outside, serde_json::to_string(&outcome).unwrap()).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&outside, &file).unwrap();
        assert!(last(root.path()).is_none());
    }
}
