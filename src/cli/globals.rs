//! The global options every subcommand shares (`--dir`, `--now`) and what they find: the memory
//! root, how it was found, and the engines of its layers.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use jiff::Timestamp;
use mem::engine::Layers;
use mem::store::{self, RootSource};
use mem::{Engine, RefreshReport};

use super::bar::progress_bar;
use super::init::init_root;
use super::output::{describe, print_problems};
use super::{machine, user};

/// What every subcommand needs from the global options.
#[derive(Clone)]
pub(crate) struct Globals {
    pub(super) dir: Option<PathBuf>,
    /// "Now" for this command, read once.
    pub(super) now: Timestamp,
    /// The `--now` value, if any; `mem mcp` reads the clock per request without it.
    pub(super) fixed_now: Option<Timestamp>,
}

impl Globals {
    /// These globals for a hook `started` so: for a `--project-only` hook, the root is found
    /// from the payload's working directory alone, whatever `--dir`/`MEM_DIR` says (a shell's
    /// `MEM_DIR` must not draw every unrelated repository's sessions into one root).
    pub(super) fn for_hook(&self, started: super::hook::Started) -> Globals {
        let project_only = started == super::hook::Started::ProjectOnly;
        let dir = if project_only { None } else { self.dir.clone() };
        Globals { dir, now: self.now, fixed_now: self.fixed_now }
    }

    /// Finds the memory root, creating the per-user default on first use.
    pub(super) fn root(&self) -> Result<PathBuf> {
        self.root_near(None)
    }

    /// Like [`Globals::root`], looking up from `cwd` (an agent's working directory, from a
    /// hook payload) instead of the process's when given.
    pub(super) fn root_near(&self, cwd: Option<&str>) -> Result<PathBuf> {
        Ok(self.find_root(cwd)?.0)
    }

    /// The memory root and how it was found (see [`Globals::root_near`]).
    pub(super) fn find_root(&self, cwd: Option<&str>) -> Result<(PathBuf, RootSource)> {
        let (root, source) = self.locate_root(cwd)?;
        if source == RootSource::Default && !root.join(mem::config::CONFIG_FILE).exists() {
            init_root(&root, self.now)?;
            eprintln!("mem: created the default memory root {}", root.display());
        }
        Ok((root, source))
    }

    /// The memory root found from `cwd` (see [`Globals::root_near`]) when it exists: `None`
    /// for the per-user root not made yet, which a hook's side work (a turn recorded, a
    /// failure logged) never makes.
    pub(super) fn existing_root_near(&self, cwd: Option<&str>) -> Result<Option<PathBuf>> {
        let (root, source) = self.locate_root(cwd)?;
        let made = source != RootSource::Default || root.join(mem::config::CONFIG_FILE).exists();
        Ok(made.then_some(root))
    }

    /// Where the memory root is (see [`Globals::root_near`]), without creating the per-user
    /// one.
    pub(super) fn locate_root(&self, cwd: Option<&str>) -> Result<(PathBuf, RootSource)> {
        let cwd = match cwd {
            // A relative `--dir` is the user's, relative to where they ran the command.
            Some(dir) if self.dir.is_none() && Path::new(dir).is_absolute() => PathBuf::from(dir),
            _ => std::env::current_dir().context("cannot read the working directory")?,
        };
        let default = dirs::data_dir().map(|d| d.join("mem"));
        let (root, source) = store::find_root(self.dir.as_deref(), &cwd, default)?;
        // A root found above the working directory that someone else owns (a shared /tmp) is
        // not used unless allowed, as git does since CVE-2022-24765.
        if source == RootSource::Ancestor
            && let Some(why) = machine::foreign_owner(&root)
        {
            anyhow::bail!(why);
        }
        Ok((root, source))
    }

    /// The root found from `cwd` (see [`Globals::root_near`]) as the project layer, and the
    /// user layer named in the user configuration (`[layers] user`) beside it, unless the root
    /// was given with `--dir`/`MEM_DIR` (then it is searched alone) or is the user's root.
    pub(super) fn layers_near(&self, cwd: Option<&str>) -> Result<Layers> {
        let (layers, source) = self.mem_layers_near(cwd)?;
        super::native::join(self.now, layers, source, cwd)
    }

    /// [`Globals::layers_near`] without the agents' own memories, and how the root was found.
    fn mem_layers_near(&self, cwd: Option<&str>) -> Result<(Layers, RootSource)> {
        let (root, source) = self.find_root(cwd)?;
        let mut project = super::open::engine_at(&root)?;
        // A root given with --dir or MEM_DIR is not checked against the code (docs/format.md).
        project.set_code_checks(source != RootSource::Explicit);
        let dir = match (source, user::load()?.layers.user) {
            (RootSource::Explicit, _) | (_, None) => {
                return Ok((Layers::new(project, None), source));
            }
            (_, Some(dir)) if same_folder(&dir, &root) => {
                return Ok((Layers::new(project, None), source));
            }
            (_, Some(dir)) => dir,
        };
        let user = (|| -> Result<Engine> {
            if !dir.join(mem::config::CONFIG_FILE).exists() {
                init_root(&dir, self.now)?;
                eprintln!("mem: created the user memory root {}", dir.display());
            }
            let mut user = super::open::engine_at(&dir)?;
            user.set_code_checks(false);
            Ok(user)
        })();
        match user {
            Ok(user) => Ok((Layers::new(project, Some(user)), source)),
            // A broken user layer must not break every project: the project is served alone.
            Err(e) => {
                let file = user::path()
                    .map_or("the user configuration file".into(), |p| p.display().to_string());
                let problem = format!(
                    "the user layer {} ([layers] user in {file}) cannot be used: {}; fix the \
                     folder or the setting",
                    dir.display(),
                    describe(&e)
                );
                eprintln!("mem: warning: {problem}; searching the project alone");
                Ok((Layers::new(project, None).without_user(problem), source))
            }
        }
    }

    /// Finds the memory root (creating the per-user default on first use) and opens it.
    pub(super) fn engine(&self) -> Result<Engine> {
        Ok(self.engine_found()?.0)
    }

    /// [`Globals::engine`] and how its root was found.
    pub(super) fn engine_found(&self) -> Result<(Engine, RootSource)> {
        let (root, source) = self.find_root(None)?;
        let mut engine = super::open::engine_at(&root)?;
        engine.set_code_checks(source != RootSource::Explicit);
        Ok((engine, source))
    }

    /// Opens the root and brings its index up to date, printing what went wrong on stderr.
    pub(super) fn refreshed_engine(&self) -> Result<(Engine, RefreshReport)> {
        let mut engine = self.engine()?;
        let report = engine.refresh(self.now, &progress_bar())?;
        print_problems(&report);
        Ok((engine, report))
    }
}

/// Whether two paths name the same folder (both canonicalized when they exist).
fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}
