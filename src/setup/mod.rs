//! `mem setup AGENT`: writes the hooks and the MCP registration into the agent's own
//! configuration files, merged with what is there (parsed and edited structurally, never
//! dropping a user's other hooks or servers), shows each change as a diff before making it,
//! and undoes exactly its own entries with `--remove`. Running it twice changes nothing.
//!
//! Each agent's file here declares its [`Entry`] (its files, its changes, what `mem health`
//! reads of them); [`entry`] registers them. The shared parts are `hooks.rs` (mem's hook
//! commands), `json.rs` (the hooks' JSON editing), `servers.rs` (the MCP server in JSON),
//! `check.rs` (health's reading), `diff.rs` and `write.rs`.

mod check;
mod claude;
mod codex;
pub(super) mod command;
mod copilot;
mod diff;
mod gemini;
pub(super) mod hooks;
mod json;
mod opencode;
mod pi;
mod servers;
mod write;

pub use check::{Configured, configured};

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use mem::agent::{Agent, Homes};
use mem::store;

use crate::shared::Globals;
use crate::shared::gate::Started;

/// What `mem setup` knows of one agent's configuration: the files it writes and the commands
/// `mem health` finds in them. Each agent's file under `src/setup/` declares one. "The agent's
/// folder" below is the folder of its user configuration (`Homes::config_of`).
pub struct Entry {
    /// The files of a project's setup, relative to the project (checked for symbolic links
    /// that lead out of the repository before anything is read).
    pub project_files: &'static [&'static str],
    /// The changes of a setup at a target, given the agent's folder.
    pub changes: fn(&Target, Option<&Path>) -> Result<Vec<Change>>,
    /// The file that holds mem's hooks at a scope, given the target and the agent's
    /// folder (mem's hooks at both scopes would run twice).
    pub hooks_file: fn(Scope, &Target, Option<&Path>) -> Option<PathBuf>,
    /// Whether the text of that file holds a set of mem's hooks that acts wherever the agent
    /// reads it (not only the `--project-only` ones a project's setup puts in the user's file).
    pub full_set: fn(&str) -> bool,
    /// The user's file that a project's setup puts `--project-only` hooks in (for sessions
    /// started in a subfolder), given the user's home folder and the agent's; `None` when it
    /// puts none.
    pub project_only_hooks: fn(&Path, Option<&Path>) -> Option<PathBuf>,
    /// What the user still has to do in the agent after a setup at a scope that made these
    /// changes.
    pub notes: fn(Scope, &[Change]) -> Vec<&'static str>,
    /// The commands that run mem in the agent's files that apply to a project, given the
    /// project, the user's home folder and the agent's.
    pub commands: fn(&Path, &Path, Option<&Path>) -> Vec<check::Found>,
    /// Whether a capture's payload comes from a program the agent runs beside its hooks, and
    /// the hooks, trusted in the project (given the agent's folder), capture that turn.
    pub defers_to_hooks: fn(&[u8], &Path, Option<&Path>) -> bool,
}

/// The setup entry of `agent`: the one place the front end names the agents.
pub fn entry(agent: Agent) -> &'static Entry {
    match agent {
        Agent::Claude => &claude::ENTRY,
        Agent::Codex => &codex::ENTRY,
        Agent::Gemini => &gemini::ENTRY,
        Agent::OpenCode => &opencode::ENTRY,
        Agent::Copilot => &copilot::ENTRY,
        Agent::Pi => &pi::ENTRY,
    }
}

/// Whether `mem capture`'s payload of `agent` should be left to the agent's hooks (see
/// [`Entry::defers_to_hooks`]).
pub fn defers_to_hooks(agent: Agent, payload: &[u8], project: &Path, homes: &Homes) -> bool {
    (entry(agent).defers_to_hooks)(payload, project, homes.config_of(agent))
}

/// Arguments of `mem setup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent to wire `mem` into: `claude` (Claude Code: `.claude/settings.json` and
    /// `.mcp.json` in the project, or `~/.claude/settings.json` and `~/.claude.json`), `codex`
    /// (`.codex/config.toml` and `.codex/hooks.json` in the project, or in `$CODEX_HOME`) or
    /// `gemini` (Gemini CLI: `.gemini/settings.json` in the project, or in `~/.gemini`) or
    /// `opencode` (`opencode.json` and `.opencode/plugins/mem.js` in the project, or in
    /// `~/.config/opencode`) or `copilot` (GitHub Copilot CLI: `.github/hooks/mem.json` and
    /// `.github/mcp.json` in the project, or `hooks/mem.json` and `mcp-config.json` in
    /// `~/.copilot`) or `pi` (an extension: `.pi/extensions/mem.ts` in the project, or
    /// `extensions/mem.ts` in `~/.pi/agent`).
    #[arg(value_parser = crate::shared::gate::agent_parser())]
    agent: Agent,
    /// Where: `project` (the repository's own agent configuration, and its `.memory/` root) or
    /// `user` (every project of this user; each uses its `.memory/` root when it has one,
    /// else the per-user root; the commands end with --user-scope, so a root this machine did
    /// not make, set up or allow, such as a cloned repository's, is held back until `mem
    /// allow`).
    #[arg(long, value_enum, default_value = "project")]
    scope: Scope,
    /// Show the changes without making them.
    #[arg(long)]
    dry_run: bool,
    /// Take out what `mem setup` added (hooks and the `mem` MCP server), nothing else.
    #[arg(long)]
    remove: bool,
    /// Also checkpoint the repository before each prompt (`mem checkpoint --hook`), recorded
    /// in the session log against the prompt's turn: `mem rewind` undoes an agent's turn.
    #[arg(long, conflicts_with = "remove")]
    checkpoints: bool,
}

/// Where the configuration goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// This repository only (files inside it, shared with the team if committed).
    Project,
    /// Every project of the current user.
    User,
}

/// What a setup needs to know to write its entries.
#[derive(Clone)]
pub struct Target {
    /// `project` or `user`.
    pub scope: Scope,
    /// The top of the project (the git repository's top, else the working directory).
    pub project: PathBuf,
    /// The user's home folder.
    pub home: PathBuf,
    /// The `mem` executable, absolute (the user's own files name it so; see [`Target::mem`]).
    pub exe: PathBuf,
    /// Undo instead of add.
    pub remove: bool,
    /// Add the checkpoint hook on each prompt.
    pub checkpoints: bool,
    /// When removing a project's setup: the other projects set up for the agent on this
    /// machine, which rely on the user-level `--project-only` hooks (kept while there are any).
    pub others: Vec<PathBuf>,
}

impl Target {
    /// Whether this setup edits the user-level `--project-only` hooks: a project's setup does,
    /// unless it is removed while other projects rely on them.
    pub fn edits_user_hooks(&self) -> bool {
        self.scope == Scope::Project && (!self.remove || self.others.is_empty())
    }
}

impl Target {
    /// The `mem` that the hook commands and MCP registrations of this scope run: bare `mem`
    /// (found on `PATH`) in a project's files, which are committed and used on other machines
    /// and checkouts; the absolute executable in the user's own files.
    pub fn mem(&self) -> &Path {
        match self.scope {
            Scope::Project => Path::new(BARE),
            Scope::User => &self.exe,
        }
    }

    /// The registration that this scope's hooks and MCP server are (see [`Started`]): the
    /// project's own, or the user's, whose commands end with `--user-scope`.
    pub fn started(&self) -> Started {
        match self.scope {
            Scope::Project => Started::Own,
            Scope::User => Started::UserScope,
        }
    }

    /// The arguments of the `mem` MCP server of this scope: `mcp`, and `--user-scope` in the
    /// user's own files.
    pub fn server_args(&self) -> Vec<&'static str> {
        std::iter::once("mcp").chain(hooks::flag(self.started())).collect()
    }
}

/// How a setup edits a file: its text now (`None`: it does not exist) to its text after the
/// setup (`None`: delete it). Made again on a version another program saves meanwhile.
pub type Edit = Box<dyn Fn(Option<&str>) -> Result<Option<String>>>;

/// One file a setup changes.
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// Its text now (`None`: it does not exist).
    pub before: Option<String>,
    /// Its text after the setup (`None`: delete it).
    pub after: Option<String>,
    /// The edit that made `after` of `before`.
    pub edit: Edit,
}

impl Change {
    /// The change that `edit` makes to the file at `path`, as it is now.
    pub fn new(
        path: PathBuf,
        edit: impl Fn(Option<&str>) -> Result<Option<String>> + 'static,
    ) -> Result<Change> {
        let before = read(&path)?;
        let after = edit(before.as_deref())?;
        Ok(Change { path, before, after, edit: Box::new(edit) })
    }

    /// Whether the setup changes this file at all.
    fn changes(&self) -> bool {
        self.before != self.after
    }
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let homes = crate::shared::gate::homes();
    let home = homes.user().context("cannot tell the home folder")?.to_path_buf();
    let setup = entry(args.agent);
    let this = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("cannot tell where the mem executable is")?;
    let project = store::project_top(&cwd);
    let root = project.join(store::PROJECT_DIR);
    let others = match (args.remove, args.scope) {
        (true, Scope::Project) => crate::shared::machine::others_set_up(&root, args.agent.name()),
        _ => Vec::new(),
    };
    let target = Target {
        scope: args.scope,
        project,
        home,
        exe: this.clone(),
        remove: args.remove,
        checkpoints: args.checkpoints,
        others,
    };
    if target.scope == Scope::Project
        && !target.remove
        && !store::is_repository_top(&target.project)
    {
        // In `~`, the project's file would be the user's own, and `~/.memory` would catch every
        // repository under it.
        bail!(
            "{} is not in a git repository: a project's setup goes into the repository's own \
             files and its .memory/ root; run `git init` at the top of the project first, or set \
             mem up for every project with --scope user",
            cwd.display()
        );
    }
    if let Some(dir) = std::env::var_os("MEM_DIR").filter(|d| !d.is_empty()) {
        eprintln!(
            "mem: warning: MEM_DIR is set ({}): an agent started from this shell runs the \
             hooks and the mem server on that root, not on the project's; unset it before \
             starting the agent (the user-level --project-only hooks ignore it)",
            Path::new(&dir).display()
        );
    }
    let agent_home = homes.config_of(args.agent);
    if let Some(relative) = homes.relative(args.agent) {
        // The agent takes it as it is, relative to whatever folder it starts in.
        bail!(
            "{} is relative ({}): {} would read its settings from another folder in each folder \
             it starts in; set it to an absolute folder",
            args.agent.spec().home.var,
            relative.display(),
            args.agent.title()
        );
    }
    if target.scope == Scope::Project {
        // Checked before anything is read: a cloned repository may link them anywhere.
        let root = format!("{}/{}", store::PROJECT_DIR, mem::config::CONFIG_FILE);
        for rel in setup.project_files.iter().copied().chain([root.as_str()]) {
            confined(&target.project, rel)?;
        }
    }
    if !target.remove {
        one_set_of_hooks(args.agent, &target, agent_home)?;
    }
    let changes = (setup.changes)(&target, agent_home)?;
    let create_root = target.scope == Scope::Project
        && !target.remove
        && !root.join(mem::config::CONFIG_FILE).exists();
    if !args.dry_run {
        // A setup killed between writing and renaming left its temporary files beside them.
        let mut folders = write::folders(&changes);
        if target.scope == Scope::Project && root.is_dir() {
            folders.extend([root.clone(), root.join(store::STATE_DIR)]);
        }
        folders
            .extend(crate::shared::machine::file().and_then(|f| Some(f.parent()?.to_path_buf())));
        let removed = write::remove_stale(&folders, ctx.now);
        if !removed.is_empty() {
            let list: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
            eprintln!(
                "mem: removed {} temporary file(s) left by an interrupted mem: {}",
                list.len(),
                list.join(", ")
            );
        }
    }
    let mut out = String::new();
    let changed: Vec<&Change> = changes.iter().filter(|c| c.changes()).collect();
    for change in &changed {
        out.push_str(&diff::diff(change));
    }
    if create_root {
        // Not a diff line: said apart, after the diffs.
        out.push_str(&format!(
            "\nand a new project memory root: {} (mem.toml, .gitignore)\n",
            root.display()
        ));
    }
    let agent = args.agent.title();
    // A clone set up before (or by a mem without it) may still lack the git merge driver.
    let registers = target.scope == Scope::Project && !target.remove && !args.dry_run;
    if changed.is_empty() && !create_root {
        let state = if args.remove { "has no mem entries" } else { "is already set up" };
        out.push_str(&format!("{agent} {state}; nothing to change\n"));
        if registers && root.is_dir() {
            out.push_str(&merge_driver(&root));
        }
        return crate::shared::output::print_text(&out);
    }
    if args.dry_run {
        out.push_str("dry run: nothing written\n");
        return crate::shared::output::print_text(&out);
    }
    // Every target checked and written beside its file before any is replaced.
    let prepared = write::prepare(&changed)?;
    crate::shared::output::print_text(&out)?;
    if target.scope == Scope::Project
        && !target.remove
        && let Some(warning) = path_warning(which::which(BARE).ok().as_deref(), &this)
    {
        eprintln!("mem: warning: {warning}");
    }
    if create_root {
        crate::shared::open::init_root(&root, ctx.now)?;
    }
    write::commit(prepared)?;
    if target.scope == Scope::Project {
        let agent = args.agent.name();
        let recorded = if args.remove {
            crate::shared::machine::forget_agent(&root, agent)
        } else {
            crate::shared::machine::remember(&root, Some(agent))
        };
        if let Err(e) = recorded {
            eprintln!("mem: warning: {}", crate::shared::output::describe(&e));
        }
    }
    let done = if args.remove { "removed mem from" } else { "set up mem in" };
    let scope = match args.scope {
        Scope::Project => format!("project {}", target.project.display()),
        Scope::User => "user configuration".to_string(),
    };
    let mut text = format!("{done} {agent} ({scope})\n");
    if registers {
        text.push_str(&merge_driver(&root));
    }
    let project_only = (setup.project_only_hooks)(&target.home, agent_home).is_some();
    if args.remove && !target.others.is_empty() && project_only {
        let list: Vec<String> = target.others.iter().map(|p| p.display().to_string()).collect();
        text.push_str(&format!(
            "kept {agent}'s user-level --project-only hooks (sessions started in a subfolder): \
             {} other project(s) set up on this machine rely on them: {}\n",
            list.len(),
            list.join(", ")
        ));
    }
    if !args.remove {
        for note in (setup.notes)(args.scope, &changes) {
            text.push_str(&format!("note: {note}\n"));
        }
        if args.scope == Scope::User {
            text.push_str(&format!("note: {HELD_BACK_NOTE}\n"));
        }
        text.push_str(&crate::shared::native::setup_note(args.agent, &target.project));
    }
    // An agent reads its configuration when it starts: a running one goes on as it was.
    let what = if args.remove { "stop running" } else { "load" };
    text.push_str(&format!(
        "Restart {agent} (and any open session of it) to {what} the hooks and the mem server.\n"
    ));
    crate::shared::output::print_text(&text)
}

/// Registers mem's git merge driver for the project root `root` (docs/teams.md,
/// "Conflicts"): the line saying what was written, if anything; a failure is a warning, the
/// setup itself is done.
fn merge_driver(root: &Path) -> String {
    match crate::shared::merge::register(root) {
        Ok(line) => line.unwrap_or_default(),
        Err(e) => {
            eprintln!("mem: warning: {}", crate::shared::output::describe(&e));
            String::new()
        }
    }
}

/// What a setup at user scope says of the roots its commands hold back.
const HELD_BACK_NOTE: &str = "these hooks and this mem server run in every folder, so they end \
with --user-scope: a memory root they find above the folder that was not made, set up or allowed \
on this machine (a cloned repository's .memory/) is held back; `mem allow` there lets them use it";

/// The name a project's configuration runs mem by, looked up on `PATH` by the agent.
pub const BARE: &str = "mem";

/// What is wrong with the `mem` that `PATH` gives (`on_path`, `None` when there is none) for a
/// project's hooks, set up by the executable `this`; `None` when it is this one.
fn path_warning(on_path: Option<&Path>, this: &Path) -> Option<String> {
    let folder = this.parent().unwrap_or(this).display();
    match on_path {
        None => Some(format!(
            "`mem` is not on PATH, and the project's hooks and MCP server run `mem`: until it \
             is, the agent cannot run them; put {folder} on PATH (or install mem where PATH \
             looks, e.g. `cargo install --path .` from mem's source), then `mem health` checks it"
        )),
        Some(found) if found.canonicalize().ok().as_deref() != Some(this) => Some(format!(
            "`mem` on PATH is {}, not this mem ({}): the agent will run that one",
            found.display(),
            this.display()
        )),
        Some(_) => None,
    }
}

/// Refuses to set up hooks at one scope when mem's hooks are at the other: the agent would run
/// both sets (Codex runs every hook of each file, so each memory would reach the model twice).
fn one_set_of_hooks(agent: Agent, target: &Target, agent_home: Option<&Path>) -> Result<()> {
    let (other, flag) = match target.scope {
        Scope::Project => (Scope::User, "user"),
        Scope::User => (Scope::Project, "project"),
    };
    let Some(file) = (entry(agent).hooks_file)(other, target, agent_home) else { return Ok(()) };
    // In the home folder, a project's file is the user's own: it is this scope's file.
    let this = (entry(agent).hooks_file)(target.scope, target, agent_home);
    let same = |a: &Path, b: &Path| {
        a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
    };
    if this.is_some_and(|this| same(&this, &file)) {
        return Ok(());
    }
    let Ok(Some(text)) = read_settings(&file) else { return Ok(()) };
    if (entry(agent).full_set)(&text) {
        bail!(
            "mem's hooks are already set up at {flag} scope, in {}: the agent would run both \
             sets and get every memory twice; keep that one, or take it out first with `mem \
             setup {agent} --scope {flag} --remove`",
            file.display()
        );
    }
    Ok(())
}

/// Refuses a file of the repository that a symbolic link on its way takes out of it.
fn confined(project: &Path, rel: &str) -> Result<()> {
    if store::inside_root(project, rel).is_ok() {
        return Ok(());
    }
    let path = project.join(rel);
    let real = store::real_path(&path).unwrap_or_else(|_| path.clone());
    bail!(
        "{} leads out of the repository, to {}, through a symbolic link; mem setup never \
         writes through a link that leaves the repository: replace the link by a file or folder \
         of the repository, or use --scope user",
        path.display(),
        real.display()
    )
}

/// A file that holds only mem's hooks (an agent's plugin or extension module), with `wanted` in place of
/// what is there (`None`: taken out). A file is mem's when its first line is `first_line`; one
/// that is not is the user's: adding stops with an error that names it, removing leaves it.
pub fn own_file(
    text: Option<&str>,
    path: &Path,
    wanted: Option<&str>,
    first_line: &str,
) -> Result<Option<String>> {
    let ours = |t: &str| t.lines().next() == Some(first_line);
    match (text, wanted) {
        (Some(text), None) if !ours(text) => Ok(Some(text.to_string())),
        (Some(text), Some(_)) if !ours(text) => bail!(
            "{} exists and mem setup did not write it; mem setup stops rather than replace it: \
             rename or remove it, then run mem setup again",
            path.display()
        ),
        (_, wanted) => Ok(wanted.map(str::to_string)),
    }
}

/// The file's text, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>> {
    read_settings(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The largest settings file of an agent read (`~/.claude.json` keeps a history per project).
pub const MAX_SETTINGS_BYTES: u64 = 64 << 20;

/// An agent's settings file, `None` when there is none: only a regular file of at most
/// [`MAX_SETTINGS_BYTES`] (see `mem::untrusted`: a FIFO would hang setup, a link to
/// `/dev/zero` take all the memory); a link is followed (dotfiles).
pub fn read_settings(
    path: &Path,
) -> std::result::Result<Option<String>, mem::untrusted::Unreadable> {
    mem::untrusted::read_text(path, MAX_SETTINGS_BYTES, mem::untrusted::Links::Follow)
}

#[cfg(test)]
mod tests;
