//! The per-user configuration file, `$XDG_CONFIG_HOME/mem/config.toml` (else
//! `~/.config/mem/config.toml`): what only the user may decide because it runs code, the
//! embedding model folder, the ONNX Runtime library and the summariser command (which a memory
//! root's `mem.toml`, travelling with the memories in a cloned repository, may not name), and
//! the user's own memory layer and the git remote it is a clone of.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context as _, Result};
use serde::Deserialize;

/// The file's name under the `mem` folder of the user's configuration folder.
const FILE: &str = "config.toml";

/// The user's settings; every key is optional, and a key this version does not know is
/// warned about and ignored (a newer version's setting must not stop an older one's hooks).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct UserConfig {
    /// `[embed]`.
    pub embed: Embed,
    /// `[reflect]`.
    pub reflect: Reflect,
    /// `[layers]`.
    pub layers: Layers,
    /// `[checkpoint]`.
    pub checkpoint: Checkpoint,
    /// `[agents]`.
    pub agents: Agents,
    /// `[redact]`.
    pub redact: Redact,
    /// `[team]`.
    pub team: Team,
}

/// `[team]` of the user configuration: the team store (docs/teams.md). Only this file names a
/// server; a root's `mem.toml` may only name its project.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Team {
    /// `postgres://user@host:port/database`; the password comes from `PGPASSWORD` or
    /// `~/.pgpass` (`PGPASSFILE`).
    pub url: Option<String>,
    /// The name the memories this user publishes go by (default: the login name).
    pub author: Option<String>,
    /// This machine's name in the store (default: the host name).
    pub machine: Option<String>,
    /// How long a hook or a recall waits for the team store, connecting and asking (default
    /// 500 ms): past it, they answer from the local layers.
    pub recall_timeout_ms: Option<u64>,
    /// When a root's memories go to the store: `"manual"` (default, `mem team push`) or
    /// `"capture"` (also after each capture, in the background).
    pub push: TeamPush,
}

/// When a root's memories go to the team store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TeamPush {
    /// Only with `mem team push`.
    #[default]
    Manual,
    /// Also after each capture that wrote memories, in the background.
    Capture,
}

/// `[redact]` of the user configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Redact {
    /// The user's own secrets (a national id, a customer's name), as regular expressions:
    /// redacted wherever mem redacts, as `[REDACTED:user]` (a group named `secret` narrows what
    /// is replaced).
    pub patterns: Vec<String>,
}

/// `[agents]` of the user configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(default)]
pub struct Agents {
    /// Whether the agents' own memories are read as read-only layers (a root's `mem.toml`
    /// may turn it off for its project).
    pub read_own_memories: bool,
}

impl Default for Agents {
    fn default() -> Agents {
        Agents { read_own_memories: true }
    }
}

/// `[checkpoint]` of the user configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Checkpoint {
    /// Files larger than this are left out of workspace checkpoints (a root's `mem.toml` may
    /// lower it).
    pub max_file_bytes: Option<u64>,
}

/// `[layers]` of the user configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Layers {
    /// The user's memory root, searched beside every project's (relative paths start at the
    /// configuration file's folder; `~/` is the home folder).
    pub user: Option<PathBuf>,
    /// A git remote of the user's own that the user layer is a clone of (`mem sync` clones,
    /// pulls and pushes it; docs/teams.md, "The personal layer on its own remote"); `~/` is
    /// the home folder. Without `user`, the layer is [`DEFAULT_LAYER`] in the data folder.
    pub user_remote: Option<String>,
}

/// The user layer's folder, in the user's data folder (`~/.local/share/mem-user`), when
/// `user_remote` is set and `user` is not: beside the per-user root (`~/.local/share/mem`, which
/// also holds this machine's record of roots), never inside it.
pub const DEFAULT_LAYER: &str = "mem-user";

impl Layers {
    /// The user layer's folder: `user`, else [`DEFAULT_LAYER`] in the data folder when
    /// `user_remote` is set; `None` without either (no user layer).
    pub fn folder(&self) -> Option<PathBuf> {
        match (&self.user, &self.user_remote) {
            (Some(dir), _) => Some(dir.clone()),
            (None, Some(_)) => dirs::data_dir().map(|d| d.join(DEFAULT_LAYER)),
            (None, None) => None,
        }
    }
}

/// `[embed]` of the user configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Embed {
    /// The model folder (relative paths start at the configuration file's folder).
    pub model_dir: Option<PathBuf>,
    /// The ONNX Runtime library, instead of the one in the model folder.
    pub ort_library: Option<PathBuf>,
}

/// `[reflect]` of the user configuration.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
pub struct Reflect {
    /// The command `mem reflect` runs to write a cluster's summary.
    pub summarizer: Option<String>,
    /// Seconds before it is stopped.
    pub summarizer_timeout_secs: Option<u64>,
}

/// Where the user configuration file is, if the platform has a configuration folder.
pub fn path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("mem").join(FILE))
}

/// Whether a user configuration file that cannot be used is set aside with a warning instead
/// of failing the command: so in an agent's hooks, where a typo in the one file would otherwise
/// stop the context and checkpoints of every project.
static SET_ASIDE_WHEN_BROKEN: AtomicBool = AtomicBool::new(false);

/// From now on, a user configuration file that cannot be used is warned about (once) and set
/// aside (see [`load`]): for hooks.
pub fn set_aside_when_broken() {
    SET_ASIDE_WHEN_BROKEN.store(true, Ordering::Relaxed);
}

/// Reads the user configuration (once per process: the model overrides and the layers both
/// need it); no file is the defaults. A file that cannot be used is an error, or, after
/// [`set_aside_when_broken`], a warning on stderr and the defaults.
pub fn load() -> Result<UserConfig> {
    static LOADED: std::sync::OnceLock<UserConfig> = std::sync::OnceLock::new();
    if let Some(config) = LOADED.get() {
        return Ok(config.clone());
    }
    let config = match path().map(|path| load_from(&path)) {
        Some(Ok(config)) => config,
        Some(Err(e)) if SET_ASIDE_WHEN_BROKEN.load(Ordering::Relaxed) => {
            eprintln!(
                "mem: warning: {}; going on without the user configuration",
                super::output::describe(&e)
            );
            UserConfig::default()
        }
        Some(Err(e)) => return Err(e),
        None => UserConfig::default(),
    };
    Ok(LOADED.get_or_init(|| config).clone())
}

/// Reads the user configuration at `path`, with relative paths made absolute against its
/// folder; no file is the defaults.
fn load_from(path: &Path) -> Result<UserConfig> {
    use mem::untrusted::{self, Links};
    let limit = mem::config::MAX_CONFIG_BYTES;
    let text = match untrusted::read_text(path, limit, Links::Follow) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(UserConfig::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let invalid = || format!("{} is not valid", path.display());
    let mut unknown = Vec::new();
    let parsed = toml::de::Deserializer::parse(&text).with_context(invalid)?;
    let mut config: UserConfig =
        serde_ignored::deserialize(parsed, |key| unknown.push(key.to_string()))
            .with_context(invalid)?;
    for key in unknown {
        eprintln!(
            "mem: warning: {}: unknown key {key} ignored (a setting of another version of mem?)",
            path.display()
        );
    }
    // Compiled once, here: a file whose patterns do not compile is not used.
    mem::capture::set_user_patterns(&config.redact.patterns)
        .map_err(|e| anyhow::anyhow!("{} is not valid: [redact] {e}", path.display()))?;
    let folder = path.parent().unwrap_or(Path::new("."));
    let paths =
        [&mut config.embed.model_dir, &mut config.embed.ort_library, &mut config.layers.user];
    for p in paths.into_iter().flatten() {
        if let (Ok(rest), Some(home)) = (p.strip_prefix("~"), dirs::home_dir()) {
            *p = home.join(rest);
        }
        if p.is_relative() {
            *p = folder.join(&*p);
        }
    }
    if let Some(url) = &mut config.layers.user_remote {
        if let (Some(rest), Some(home)) = (url.strip_prefix("~/"), dirs::home_dir()) {
            *url = home.join(rest).display().to_string();
        }
        if url.trim().is_empty() {
            config.layers.user_remote = None;
        }
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_start_at_the_file_and_unknown_keys_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE);
        assert!(load_from(&file).unwrap().embed.model_dir.is_none());
        let text = "[embed]\nmodel_dir = \"model\"\n[reflect]\nsummarizer = \"cat\"\n[layers]\nuser = \"~/mem\"\n";
        std::fs::write(&file, text).unwrap();
        let config = load_from(&file).unwrap();
        assert_eq!(config.embed.model_dir, Some(dir.path().join("model")));
        assert_eq!(config.layers.user, dirs::home_dir().map(|h| h.join("mem")));
        assert_eq!(config.reflect.summarizer.as_deref(), Some("cat"));
        // An unknown key is ignored (and warned about); a known key of the wrong type is not.
        std::fs::write(
            &file,
            "[embed]\nmodel = \"x\"\nmodel_dir = \"m\"\n[layers]\nuser_remote_url = \"u\"\n",
        )
        .unwrap();
        assert_eq!(load_from(&file).unwrap().embed.model_dir, Some(dir.path().join("m")));
        // A remote alone puts the user layer in the data folder, beside the per-user root.
        std::fs::write(&file, "[layers]\nuser_remote = \"~/notes.git\"\n").unwrap();
        let layers = load_from(&file).unwrap().layers;
        let home = dirs::home_dir().unwrap();
        assert_eq!(layers.user_remote, Some(home.join("notes.git").display().to_string()));
        assert_eq!(layers.folder(), dirs::data_dir().map(|d| d.join(DEFAULT_LAYER)));
        std::fs::write(&file, "[layers]\nuser = \"me\"\nuser_remote = \"git@h:ana/m\"\n").unwrap();
        let layers = load_from(&file).unwrap().layers;
        assert_eq!(
            (layers.folder(), layers.user_remote.as_deref()),
            (Some(dir.path().join("me")), Some("git@h:ana/m"))
        );
        std::fs::write(&file, "[embed]\nmodel_dir = 5\n").unwrap();
        let e = format!("{:#}", load_from(&file).unwrap_err());
        assert!(e.contains("config.toml is not valid") && e.contains("invalid type"), "{e}");
    }
}
