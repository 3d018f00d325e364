//! Opening the memory for a folder, in one call ([`open`]): the root found from the folder (or
//! named outright), how it was found, and its layers: the project's, the user's and the
//! agents' own (docs/agents.md). Everything it depends on outside the library comes in as
//! values ([`Surroundings`]): a front end reads the environment and the user's files once and
//! passes them; the library reads no environment variable and prints nothing (what it would
//! say is in [`Opened::warnings`]).

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::agent::{Agent, Homes, NativeRead, Sources};
use crate::embed::ModelOverrides;
use crate::engine::{Layers, index_native, native_folder};
use crate::store::{self, Layer, PROJECT_DIR, RootSource};
use crate::{Engine, Error, Result};

/// What opening the memory for a folder depends on outside the library, as values.
#[derive(Clone, Debug, Default)]
pub struct Surroundings {
    /// The folder: the working directory, or an agent's from a hook's payload.
    pub cwd: PathBuf,
    /// A root named outright (`--dir`, `MEM_DIR`), relative to `cwd`: searched alone.
    pub dir: Option<PathBuf>,
    /// The per-user root, taken where no root is found above the folder (`None`: the
    /// platform has no data folder).
    pub per_user: Option<PathBuf>,
    /// The user's own memory root, searched beside every project's (`[layers] user` of the
    /// user configuration; its default folder when only `user_remote` is set).
    pub user_layer: Option<PathBuf>,
    /// The git remote the user layer is a clone of (`[layers] user_remote`): a missing folder
    /// is then not made a root here (`mem sync` clones it; [`crate::remote`]).
    pub user_remote: Option<String>,
    /// The user configuration file, named when its user layer cannot be used.
    pub user_config_file: Option<PathBuf>,
    /// Whether the agents' own memories are read as layers (`[agents] read_own_memories` of
    /// the user configuration; a root's `mem.toml` may still turn it off).
    pub agents_memories: bool,
    /// The roots this user made, set up or allowed on this machine, canonical: a root above
    /// the folder that someone else owns is used only if it is one of them.
    pub allowed: Vec<PathBuf>,
    /// The user's home folder and the agents'.
    pub homes: Homes,
    /// The model folder and ONNX Runtime library, as the environment or the user
    /// configuration name them.
    pub model: ModelOverrides,
}

/// A memory root and how it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    /// The root's folder.
    pub root: PathBuf,
    /// How it was found.
    pub source: RootSource,
}

impl Found {
    /// Whether the root exists as a root (holds its `mem.toml`): the per-user root does not
    /// until [`open`] makes it.
    pub fn is_made(&self) -> bool {
        self.source != RootSource::Default || self.root.join(crate::config::CONFIG_FILE).exists()
    }
}

/// The memory for a folder, open.
pub struct Opened {
    /// Its root and how it was found.
    pub found: Found,
    /// Its layers: the project's, the user's, the agents' own.
    pub layers: Layers,
    /// What went wrong without stopping it (a layer left out, a file an agent's reader could
    /// not read, a setting of the root's configuration), one line each, for the front end to
    /// say.
    pub warnings: Vec<String>,
    /// The roots it made (the per-user root on first use, the user layer's folder): a front
    /// end records them as the user's own.
    pub made: Vec<PathBuf>,
}

/// Where the memory root for `s` is, without making the per-user one: `--dir` when given,
/// else the nearest root above the folder, else the per-user root. A root above the folder
/// that someone else owns is refused unless it is [`Surroundings::allowed`] (as git refuses a
/// repository another user owns since CVE-2022-24765). In a linked git worktree, the main
/// worktree's root is taken only when it passes the same check; else the worktree's own.
pub fn locate(s: &Surroundings) -> Result<Found> {
    let trusted = |root: &Path| foreign_owner(root).is_none() || is_allowed(s, root);
    let (root, source) =
        store::find_root_with(s.dir.as_deref(), &s.cwd, s.per_user.clone(), &trusted)?;
    if source == RootSource::Ancestor
        && let Some(owner) = foreign_owner(&root)
        && !is_allowed(s, &root)
    {
        return Err(Error::ForeignRoot { root, owner });
    }
    Ok(Found { root, source })
}

/// The memory for the folder of `s`, in one call: [`locate`], then [`open_found`].
pub fn open(s: &Surroundings, now: Timestamp) -> Result<Opened> {
    open_found(s, locate(s)?, now)
}

/// The memory of the root `found` (from [`locate`]): the per-user root made on first use; the
/// project's engine (its citations checked against the code unless the root was named
/// outright); the user layer beside it, unless the root was named outright or is the user's
/// own (a user layer that cannot be used is left out, with a warning, never failing the
/// project); the agents' own memories, when read (see [`join_natives`]).
pub fn open_found(s: &Surroundings, found: Found, now: Timestamp) -> Result<Opened> {
    let mut made = Vec::new();
    let mut warnings = Vec::new();
    if !found.is_made() {
        make_root(&found.root, now)?;
        made.push(found.root.clone());
    }
    let mut project = engine_at(&found.root, &s.model, &mut warnings)?;
    project.code.set_checks(found.source != RootSource::Explicit);
    let user_dir = match (&found.source, &s.user_layer) {
        (RootSource::Explicit, _) | (_, None) => None,
        (_, Some(dir)) if same_folder(dir, &found.root) => None,
        (_, Some(dir)) => Some(dir.clone()),
    };
    let mut layers = match user_dir {
        None => Layers::new(project, None),
        Some(dir) => match user_engine(s, &dir, now, &mut made, &mut warnings) {
            Ok(user) => Layers::new(project, Some(user)),
            Err(e) => {
                let file = s.user_config_file.as_ref().map_or_else(
                    || "the user configuration file".to_string(),
                    |p| p.display().to_string(),
                );
                let problem = match (&e, &s.user_remote) {
                    (Error::Remote(_), Some(url)) => format!(
                        "the user layer {} is not cloned yet from {url} ([layers] user_remote in \
                         {file}): `mem sync` clones it",
                        dir.display()
                    ),
                    _ => format!(
                        "the user layer {} ([layers] user in {file}) cannot be used: {e}; fix \
                         the folder or the setting",
                        dir.display()
                    ),
                };
                warnings.push(format!("{problem}; searching the project alone"));
                Layers::new(project, None).without_user(problem)
            }
        },
    };
    warnings.extend(join_natives(s, &mut layers, found.source, now));
    Ok(Opened { found, layers, warnings, made })
}

/// The user layer's engine, its folder made a root on first use; a layer that is a clone of a
/// remote is made by `mem sync` alone ([`Error::Remote`] until then).
fn user_engine(
    s: &Surroundings,
    dir: &Path,
    now: Timestamp,
    made: &mut Vec<PathBuf>,
    warnings: &mut Vec<String>,
) -> Result<Engine> {
    if !dir.join(crate::config::CONFIG_FILE).exists() {
        if s.user_remote.is_some() {
            return Err(Error::Remote("not cloned yet".into()));
        }
        make_root(dir, now)?;
        made.push(dir.to_path_buf());
    }
    let mut user = engine_at(dir, &s.model, warnings)?;
    user.code.set_checks(false);
    Ok(user)
}

/// The model a recall at `root` will use, loading from now on a thread of its own (see
/// [`crate::embed::Loading`]): `None` when `overrides` name none or the root's recall is BM25
/// only. For a process that knows its root before it opens it (a hook): the model loads while
/// the rest is read, and [`Vectors::give_model`](crate::engine::Vectors::give_model) hands it to the engine.
pub fn start_model(root: &Path, overrides: &ModelOverrides) -> Option<crate::embed::Loading> {
    let source = crate::embed::ModelSource::configured(overrides)?;
    let config = crate::Config::load(root).ok()?;
    if config.embed.mode == crate::config::RecallMode::Bm25 {
        return None;
    }
    crate::embed::Loading::start(source)
}

/// Makes `dir` a memory root ([`store::init`]) and starts observing its usage now, unless it
/// already does: time before that is not time without use (docs/decay.md).
pub fn make_root(dir: &Path, now: Timestamp) -> Result<store::InitReport> {
    let report = store::init(dir)?;
    let mut engine = Engine::open(dir)?;
    engine.usage.start_observing(&engine.files, now)?;
    Ok(report)
}

/// The engine of the root `root` with the model `model` names; its configuration's warnings
/// added to `warnings`.
pub fn engine_at(
    root: &Path,
    model: &ModelOverrides,
    warnings: &mut Vec<String>,
) -> Result<Engine> {
    let engine = Engine::open_with(root, model)?;
    warnings.extend(engine.files.warnings().iter().cloned());
    Ok(engine)
}

/// Whether the agents' own memories are read for a root found as `source` with the
/// configuration `config`: never for a root named outright (evals, benches and tests never
/// read a developer's agent folders), else as the user configuration says unless the root's
/// `mem.toml` turns them off.
pub fn natives_enabled(s: &Surroundings, source: RootSource, config: &crate::Config) -> bool {
    source != RootSource::Explicit
        && config.agents.read_own_memories != Some(false)
        && s.agents_memories
}

/// The project folder whose agents' memories go with `root`: the folder holding a project's
/// `.memory/`, a root found above the folder, else the folder.
pub fn project_of(root: &Path, source: RootSource, cwd: &Path) -> PathBuf {
    if root.file_name().is_some_and(|n| n == PROJECT_DIR)
        && let Some(parent) = root.parent()
    {
        return parent.to_path_buf();
    }
    if source == RootSource::Ancestor { root.to_path_buf() } else { cwd.to_path_buf() }
}

/// What each agent that keeps memories of its own has for `project`, with its reader's
/// warnings (a file not read).
pub fn read_natives(homes: &Homes, project: Option<&Path>) -> Vec<(Agent, NativeRead)> {
    Agent::ALL
        .into_iter()
        .filter_map(|agent| {
            let spec = agent.spec().memory?;
            let home = homes.of(agent)?;
            let sources = Sources { home, user: homes.user(), project };
            Some((agent, (spec.read)(&sources)))
        })
        .collect()
}

/// The agents' own memories of `layers`' root joined in place, when [`natives_enabled`]: each
/// agent's memories indexed, one with none (and no layer indexed before) left out; the layers
/// `layers` had are replaced by those read now (an engine already open for an agent is kept,
/// its files written again, so that a long-running server reopens no index). Returns the
/// warnings: each reader's, and a layer that cannot be indexed or opened.
pub fn join_natives(
    s: &Surroundings,
    layers: &mut Layers,
    source: RootSource,
    now: Timestamp,
) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut open = layers.take_natives();
    let root = layers.project().files.root().to_path_buf();
    if !natives_enabled(s, source, layers.project().files.config()) {
        return warnings;
    }
    let project = project_of(&root, source, &s.cwd);
    let mut natives = Vec::new();
    for (agent, read) in read_natives(&s.homes, Some(&project)) {
        warnings.extend(read.warnings.iter().cloned());
        let folder = native_folder(&root, agent);
        if read.memories.is_empty() && !folder.is_dir() {
            continue;
        }
        let kept = open.iter().position(|(a, _)| *a == agent).map(|i| open.swap_remove(i).1);
        let opened = (|| -> Result<Engine> {
            let folder = index_native(&root, agent, &read, now)?;
            if let Some(engine) = kept {
                return Ok(engine);
            }
            let mut engine = engine_at(&folder, &s.model, &mut warnings)?;
            engine.code.set_checks(false);
            Ok(engine)
        })();
        match opened {
            Ok(engine) => natives.push((agent, engine)),
            Err(e) => warnings
                .push(format!("the {} layer is not searched: {e}", Layer::Native(agent).as_str())),
        }
    }
    layers.set_natives(natives);
    warnings
}

/// Whether `root` is one of the roots the user allowed.
fn is_allowed(s: &Surroundings, root: &Path) -> bool {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    s.allowed.contains(&root)
}

/// Who owns `root` (its folder or its `mem.toml`) when it is not this user: their name and
/// number (`alice (uid 1001)`), or the number alone.
pub fn foreign_owner(root: &Path) -> Option<String> {
    let me = rustix::process::geteuid().as_raw();
    let owner = [root.to_path_buf(), root.join(crate::config::CONFIG_FILE)]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.uid())
        .find(|uid| *uid != me)?;
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let name = passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.get(2) == Some(&owner.to_string().as_str())).then(|| fields[0].to_string())
    });
    Some(match name {
        Some(name) => format!("{name} (uid {owner})"),
        None => format!("uid {owner}"),
    })
}

/// Whether two paths name the same folder (both canonicalized when they exist).
pub fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
