//! This machine's record of memory roots, `<data folder>/mem/roots.toml` (`~/.local/share/mem`):
//! the roots made (`mem init`, `mem setup`), set up for an agent (`mem setup AGENT`, project
//! scope) or allowed (`mem allow`) here. A root in it is the user's own choice; one that is not
//! (a cloned repository's `.memory/`, reached only through a user-level registration: the
//! `--project-only` and `--user-scope` hooks, `mem mcp --user-scope`) is held back from
//! sessions and `mem ui`, and a root someone else owns is refused (docs/security.md). The
//! record lists which projects rely on the user-level hooks, so that `--remove` in one project
//! keeps them for the others.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use mem::store;
use serde::{Deserialize, Serialize};

/// The file's name, in the per-user data folder of mem.
const FILE: &str = "roots.toml";

/// The most bytes the record is read to (it holds a line or two per root).
const MAX_BYTES: u64 = 4 << 20;

/// The record.
#[derive(Debug, Default, Deserialize, Serialize)]
struct Record {
    /// The roots, in the order they were first recorded.
    #[serde(default, rename = "root")]
    roots: Vec<Root>,
}

/// One root of the record.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Root {
    /// The root's folder, canonical.
    pub path: PathBuf,
    /// The agents set up for it at project scope (`claude`, `codex`, `gemini`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
}

/// Where the record is, when the platform has a data folder.
pub fn file() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("mem").join(FILE))
}

/// The record; none (or no data folder) is empty. A record that cannot be read is an error
/// naming the file: it is never replaced silently.
fn load(path: &Path) -> Result<Record> {
    // Bounded, and only a regular file (see `mem::untrusted`).
    let text = mem::untrusted::read_text(path, MAX_BYTES, mem::untrusted::Links::Follow)
        .with_context(|| {
            format!("cannot read {}; move it away (mem writes it again)", path.display())
        })?;
    let Some(text) = text else { return Ok(Record::default()) };
    toml::from_str(&text).with_context(|| {
        format!("{} is not valid; fix it or move it away (mem writes it again)", path.display())
    })
}

/// The roots of the record (empty when there is none or it cannot be read).
pub fn roots() -> Vec<Root> {
    file().and_then(|f| load(&f).ok()).map(|r| r.roots).unwrap_or_default()
}

/// `root` as the record keeps it: canonical when it exists.
fn key(root: &Path) -> PathBuf {
    root.canonicalize().unwrap_or_else(|_| root.to_path_buf())
}

/// Whether `root` is in the record: made, set up or allowed on this machine.
pub fn is_known(root: &Path) -> bool {
    let root = key(root);
    roots().iter().any(|r| r.path == root)
}

/// What is said of a root held back because it is not in the record: it was not made, set up
/// or allowed here.
pub fn not_chosen(root: &Path) -> String {
    format!(
        "the memory root {} was not made, set up or allowed on this machine (a cloned \
         repository's?)",
        root.display()
    )
}

/// The command that puts `root` in the record, as the user would type it: `` `mem allow
/// /path/to/root` `` (quoted for a shell when it needs to be).
pub fn allow_command(root: &Path) -> String {
    let path =
        crate::setup::command::shell_word(root).unwrap_or_else(|_| format!("'{}'", root.display()));
    format!("`mem allow {path}`")
}

/// Changes the record with `edit` and writes it (atomically), creating it as needed.
fn change(edit: impl FnOnce(&mut Vec<Root>)) -> Result<()> {
    let path = file().context("cannot tell the user's data folder, where mem records its roots")?;
    let mut record = load(&path)?;
    // Roots that are gone (a deleted clone, a temporary folder) leave the record.
    record.roots.retain(|r| r.path.join(mem::config::CONFIG_FILE).exists());
    edit(&mut record.roots);
    let text = format!(
        "# The memory roots made, set up or allowed on this machine (written by mem; see \
         docs/security.md).\n\n{}",
        toml::to_string(&record).context("cannot write the record of roots")?
    );
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    store::write_atomic(&path, text.as_bytes(), store::Overwrite::Yes)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Records `root` as the user's (made or allowed here), and `agent` as set up for it.
pub fn remember(root: &Path, agent: Option<&str>) -> Result<()> {
    let root = key(root);
    change(|roots| {
        let at = match roots.iter().position(|r| r.path == root) {
            Some(at) => at,
            None => {
                roots.push(Root { path: root.clone(), agents: Vec::new() });
                roots.len() - 1
            }
        };
        if let Some(agent) = agent
            && !roots[at].agents.iter().any(|a| a == agent)
        {
            roots[at].agents.push(agent.to_string());
        }
    })
}

/// Takes `agent` out of `root`'s set-up agents (the root stays allowed).
pub fn forget_agent(root: &Path, agent: &str) -> Result<()> {
    let root = key(root);
    if !roots().iter().any(|r| r.path == root && r.agents.iter().any(|a| a == agent)) {
        return Ok(());
    }
    change(|roots| {
        for r in roots.iter_mut().filter(|r| r.path == root) {
            r.agents.retain(|a| a != agent);
        }
    })
}

/// Takes `root` out of the record.
pub fn revoke(root: &Path) -> Result<bool> {
    let root = key(root);
    if !roots().iter().any(|r| r.path == root) {
        return Ok(false);
    }
    change(|roots| roots.retain(|r| r.path != root))?;
    Ok(true)
}

/// The other roots set up for `agent` at project scope that still exist: they rely on the
/// user-level `--project-only` hooks of that agent.
pub fn others_set_up(root: &Path, agent: &str) -> Vec<PathBuf> {
    let root = key(root);
    roots()
        .into_iter()
        .filter(|r| r.path != root && r.agents.iter().any(|a| a == agent))
        .filter(|r| r.path.join(mem::config::CONFIG_FILE).is_file())
        .map(|r| r.path)
        .collect()
}
