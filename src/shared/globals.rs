//! The global options every subcommand shares (`--dir`, `--now`) and what they find: the memory
//! root, how it was found, and the engines of its layers.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use jiff::Timestamp;
use mem::engine::Layers;
use mem::open::{Found, Surroundings};
use mem::store::RootSource;
use mem::{Engine, RefreshReport};

use super::bar::progress_bar;
use super::output::{describe, print_problems};
use super::{machine, user};

/// What every subcommand needs from the global options.
#[derive(Clone)]
pub struct Globals {
    pub dir: Option<PathBuf>,
    /// "Now" for this command, read once.
    pub now: Timestamp,
    /// The `--now` value, if any; `mem mcp` reads the clock per request without it.
    pub fixed_now: Option<Timestamp>,
    /// The process ends with its command (one recall, a hook's context): a loaded model is left
    /// to the exit ([`mem::embed::ModelOverrides::leave_at_exit`]).
    pub ends_soon: bool,
}

impl Globals {
    /// These globals for a hook `started` so: for a `--project-only` hook, the root is found
    /// from the payload's working directory alone, whatever `--dir`/`MEM_DIR` says (a shell's
    /// `MEM_DIR` must not draw every unrelated repository's sessions into one root).
    pub fn for_hook(&self, started: super::gate::Started) -> Globals {
        let project_only = started == super::gate::Started::ProjectOnly;
        let dir = if project_only { None } else { self.dir.clone() };
        Globals { dir, ..self.clone() }
    }

    /// What opening the memory for the folder `cwd` (a hook payload's, else the working
    /// directory) depends on outside the library ([`mem::open::Surroundings`]): `--dir`, the
    /// data folder, the user configuration, this machine's record of roots, the agents'
    /// folders and the model, read here once.
    pub fn surroundings(&self, cwd: Option<&str>) -> Result<Surroundings> {
        let cwd = match cwd {
            // A relative `--dir` is the user's, relative to where they ran the command.
            Some(dir) if self.dir.is_none() && Path::new(dir).is_absolute() => PathBuf::from(dir),
            _ => std::env::current_dir().context("cannot read the working directory")?,
        };
        let config = user::load()?;
        Ok(Surroundings {
            cwd,
            dir: self.dir.clone(),
            per_user: dirs::data_dir().map(|d| d.join("mem")),
            user_layer: config.layers.folder(),
            user_remote: config.layers.user_remote.clone(),
            user_config_file: user::path(),
            agents_memories: config.agents.read_own_memories,
            allowed: machine::roots().into_iter().map(|r| r.path).collect(),
            homes: super::gate::homes(),
            model: super::open::model_overrides(self.ends_soon)?,
        })
    }

    /// Finds the memory root, creating the per-user default on first use.
    pub fn root(&self) -> Result<PathBuf> {
        self.root_near(None)
    }

    /// Like [`Globals::root`], looking up from `cwd` (an agent's working directory, from a
    /// hook payload) instead of the process's when given.
    pub fn root_near(&self, cwd: Option<&str>) -> Result<PathBuf> {
        Ok(self.find_root(cwd)?.0)
    }

    /// The memory root and how it was found (see [`Globals::root_near`]), the per-user root
    /// made on first use.
    pub fn find_root(&self, cwd: Option<&str>) -> Result<(PathBuf, RootSource)> {
        let found = self.made(mem::open::locate(&self.surroundings(cwd)?)?)?;
        Ok((found.root, found.source))
    }

    /// `found`, the per-user root made if it was not yet.
    pub fn made(&self, found: Found) -> Result<Found> {
        if !found.is_made() {
            super::open::init_root(&found.root, self.now)?;
            eprintln!("mem: created the default memory root {}", found.root.display());
        }
        Ok(found)
    }

    /// The memory root found from `cwd` (see [`Globals::root_near`]) when it exists: `None`
    /// for the per-user root not made yet, which a hook's side work (a turn recorded, a
    /// failure logged) never makes.
    pub fn existing_root_near(&self, cwd: Option<&str>) -> Result<Option<PathBuf>> {
        let found = mem::open::locate(&self.surroundings(cwd)?)?;
        Ok(found.is_made().then_some(found.root))
    }

    /// Where the memory root is (see [`Globals::root_near`]), without creating the per-user
    /// one.
    pub fn locate_root(&self, cwd: Option<&str>) -> Result<(PathBuf, RootSource)> {
        let found = mem::open::locate(&self.surroundings(cwd)?)?;
        Ok((found.root, found.source))
    }

    /// The memory for the folder `cwd` (see [`Globals::root_near`]), in one library call
    /// ([`mem::open::open`]): the root as the project layer, the user layer named in the user
    /// configuration (`[layers] user`) beside it unless the root was given with
    /// `--dir`/`MEM_DIR` or is the user's root, and the agents' own memories.
    pub fn layers_near(&self, cwd: Option<&str>) -> Result<Layers> {
        let s = self.surroundings(cwd)?;
        let found = mem::open::locate(&s)?;
        self.layers_at(&s, found)
    }

    /// [`Globals::layers_near`] for a root already found (a hook locates it once, for its gate
    /// and its answer).
    pub fn layers_at(&self, s: &Surroundings, found: Found) -> Result<Layers> {
        let root = found.root.clone();
        let opened = mem::open::open_found(s, found, self.now)
            .with_context(|| format!("cannot open memory root {}", root.display()))?;
        Ok(self.said(opened))
    }

    /// The layers of `opened`, once its warnings are said on stderr and the roots it made are
    /// recorded as the user's own (see `machine`).
    fn said(&self, opened: mem::open::Opened) -> Layers {
        for made in &opened.made {
            let which = if *made == opened.found.root { "default" } else { "user" };
            eprintln!("mem: created the {which} memory root {}", made.display());
            if let Err(e) = machine::remember(made, None) {
                eprintln!("mem: warning: {}", describe(&e));
            }
        }
        for warning in &opened.warnings {
            eprintln!("mem: warning: {warning}");
        }
        opened.layers
    }

    /// Finds the memory root (creating the per-user default on first use) and opens it.
    pub fn engine(&self) -> Result<Engine> {
        Ok(self.engine_found()?.0)
    }

    /// [`Globals::engine`] and how its root was found.
    pub fn engine_found(&self) -> Result<(Engine, RootSource)> {
        let (root, source) = self.find_root(None)?;
        let mut engine = super::open::engine_at(&root)?;
        engine.code.set_checks(source != RootSource::Explicit);
        Ok((engine, source))
    }

    /// Opens the root and brings its index up to date, printing what went wrong on stderr.
    pub fn refreshed_engine(&self) -> Result<(Engine, RefreshReport)> {
        let mut engine = self.engine()?;
        let report = engine.refresh(self.now, &progress_bar())?;
        print_problems(&report);
        Ok((engine, report))
    }
}
