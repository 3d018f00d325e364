//! `mem setup claude|codex`: writes the hooks and the MCP registration into the agent's own
//! configuration files, merged with what is there (parsed and edited structurally, never
//! dropping a user's other hooks or servers), shows each change as a diff before making it,
//! and undoes exactly its own entries with `--remove`. Running it twice changes nothing.

mod check;
mod claude;
mod codex;
mod diff;
mod gemini;
mod json;
mod write;

pub use check::{Configured, codex_hooks_trusted, configured};
pub use codex::has_mem_notify;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use mem::agent::Agent;
use mem::store;

use super::Globals;

/// Arguments of `mem setup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent to wire `mem` into: `claude` (Claude Code: `.claude/settings.json` and
    /// `.mcp.json` in the project, or `~/.claude/settings.json` and `~/.claude.json`), `codex`
    /// (`.codex/config.toml` and `.codex/hooks.json` in the project, or in `$CODEX_HOME`) or
    /// `gemini` (Gemini CLI: `.gemini/settings.json` in the project, or in `~/.gemini`).
    #[arg(value_parser = super::hook::agent_parser())]
    agent: Agent,
    /// Where: `project` (the repository's own agent configuration, and its `.memory/` root) or
    /// `user` (every project of this user; each uses its `.memory/` root when it has one,
    /// else the per-user root).
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
    let home = dirs::home_dir().context("cannot tell the home folder")?;
    let this = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .context("cannot tell where the mem executable is")?;
    let project = store::project_top(&cwd);
    let root = project.join(store::PROJECT_DIR);
    let others = match (args.remove, args.scope) {
        (true, Scope::Project) => super::machine::others_set_up(&root, args.agent.name()),
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
    if args.agent == Agent::Gemini
        && let Some(home) = std::env::var_os("GEMINI_CLI_HOME").filter(|h| !h.is_empty())
        && Path::new(&home).is_relative()
    {
        // Gemini CLI takes it as it is, relative to whatever folder it starts in.
        bail!(
            "GEMINI_CLI_HOME is relative ({}): Gemini CLI would read its settings from another \
             folder in each folder it starts in; set it to an absolute folder",
            Path::new(&home).display()
        );
    }
    if target.scope == Scope::Project {
        // Checked before anything is read: a cloned repository may link them anywhere.
        let files: &[&str] = match args.agent {
            Agent::Claude => &[".claude/settings.json", ".mcp.json"],
            Agent::Codex => &[".codex/config.toml", ".codex/hooks.json"],
            Agent::Gemini => &[".gemini/settings.json"],
        };
        let root = format!("{}/{}", store::PROJECT_DIR, mem::config::CONFIG_FILE);
        for rel in files.iter().copied().chain([root.as_str()]) {
            confined(&target.project, rel)?;
        }
    }
    if !target.remove {
        one_set_of_hooks(args.agent, &target)?;
    }
    let changes = match args.agent {
        Agent::Claude => claude::changes(&target)?,
        Agent::Codex => codex::changes(&target, &super::hook::codex_home())?,
        Agent::Gemini => {
            let home = super::hook::gemini_home().context("cannot tell Gemini CLI's folder")?;
            gemini::changes(&target, &home)?
        }
    };
    let create_root = target.scope == Scope::Project
        && !target.remove
        && !root.join(mem::config::CONFIG_FILE).exists();
    if !args.dry_run {
        // A setup killed between writing and renaming left its temporary files beside them.
        let mut folders = write::folders(&changes);
        if target.scope == Scope::Project && root.is_dir() {
            folders.extend([root.clone(), root.join(store::STATE_DIR)]);
        }
        folders.extend(super::machine::file().and_then(|f| Some(f.parent()?.to_path_buf())));
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
    if changed.is_empty() && !create_root {
        let state = if args.remove { "has no mem entries" } else { "is already set up" };
        out.push_str(&format!("{agent} {state}; nothing to change\n"));
        return super::print_text(&out);
    }
    if args.dry_run {
        out.push_str("dry run: nothing written\n");
        return super::print_text(&out);
    }
    // Every target checked and written beside its file before any is replaced.
    let prepared = write::prepare(&changed)?;
    super::print_text(&out)?;
    if target.scope == Scope::Project
        && !target.remove
        && let Some(warning) = path_warning(which::which(BARE).ok().as_deref(), &this)
    {
        eprintln!("mem: warning: {warning}");
    }
    if create_root {
        super::init_root(&root, ctx.now)?;
    }
    write::commit(prepared)?;
    if target.scope == Scope::Project {
        let agent = args.agent.name();
        let recorded = if args.remove {
            super::machine::forget_agent(&root, agent)
        } else {
            super::machine::remember(&root, Some(agent))
        };
        if let Err(e) = recorded {
            eprintln!("mem: warning: {}", super::describe(&e));
        }
    }
    let done = if args.remove { "removed mem from" } else { "set up mem in" };
    let scope = match args.scope {
        Scope::Project => format!("project {}", target.project.display()),
        Scope::User => "user configuration".to_string(),
    };
    let mut text = format!("{done} {agent} ({scope})\n");
    if args.remove && !target.others.is_empty() && args.agent != Agent::Codex {
        let list: Vec<String> = target.others.iter().map(|p| p.display().to_string()).collect();
        text.push_str(&format!(
            "kept {agent}'s user-level --project-only hooks (sessions started in a subfolder): \
             {} other project(s) set up on this machine rely on them: {}\n",
            list.len(),
            list.join(", ")
        ));
    }
    if !args.remove {
        // Whether Codex's `notify` runs mem's capture (setup writes it only where the user has
        // no `notify` of their own).
        let mem_notify = changes.iter().any(|c| {
            c.path.ends_with("config.toml") && c.after.as_deref().is_some_and(codex::has_mem_notify)
        });
        for note in notes(args.agent, args.scope, mem_notify) {
            text.push_str(&format!("note: {note}\n"));
        }
    }
    // An agent reads its configuration when it starts: a running one goes on as it was.
    let what = if args.remove { "stop running" } else { "load" };
    text.push_str(&format!(
        "Restart {agent} (and any open session of it) to {what} the hooks and the mem server.\n"
    ));
    super::print_text(&text)
}

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

/// What the user still has to do in the agent itself.
fn notes(agent: Agent, scope: Scope, mem_notify: bool) -> Vec<&'static str> {
    match (agent, scope) {
        (Agent::Claude, Scope::Project) => {
            vec!["Claude Code asks once before it starts a server of .mcp.json: answer yes for mem"]
        }
        (Agent::Claude, Scope::User) => vec![],
        (Agent::Codex, Scope::User) if mem_notify => vec![
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then the notify program (in the same config.toml) captures each turn, \
             but no memory reaches the model; once they are trusted, the hooks capture and \
             notify leaves it to them",
        ],
        (Agent::Codex, Scope::User) => vec![
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then nothing is captured and no memory reaches the model (your own \
             notify program stays as it is; `mem capture --missed` captures the sessions missed)",
        ],
        (Agent::Codex, Scope::Project) => vec![
            "Codex reads a project's .codex/ folder only when the project is trusted (Codex asks \
             on first start)",
            "Codex runs new hooks only once you trust them: run /hooks in Codex and trust the mem \
             hooks; until then nothing of this project's sessions is captured and no memory \
             reaches the model (Codex ignores a project's notify), and `mem health --transcripts` \
             counts those sessions as not captured",
        ],
        (Agent::Gemini, Scope::Project) => vec![
            "Gemini CLI runs a project's hooks only in a folder the user trusts (it asks on \
             first start) and lists them as it starts",
        ],
        (Agent::Gemini, Scope::User) => vec![],
    }
}

/// Refuses to set up hooks at one scope when mem's hooks are at the other: the agent would run
/// both sets (Codex runs every hook of each file, so each memory would reach the model twice).
fn one_set_of_hooks(agent: Agent, target: &Target) -> Result<()> {
    let (other, flag) = match target.scope {
        Scope::Project => (Scope::User, "user"),
        Scope::User => (Scope::Project, "project"),
    };
    let file = match (agent, other) {
        (Agent::Claude, Scope::Project) => target.project.join(".claude/settings.json"),
        (Agent::Claude, Scope::User) => target.home.join(".claude/settings.json"),
        (Agent::Codex, Scope::Project) => target.project.join(".codex/hooks.json"),
        (Agent::Codex, Scope::User) => match super::hook::codex_home() {
            Some(home) => home.join("hooks.json"),
            None => return Ok(()),
        },
        (Agent::Gemini, Scope::Project) => target.project.join(".gemini/settings.json"),
        (Agent::Gemini, Scope::User) => match super::hook::gemini_home() {
            Some(home) => home.join("settings.json"),
            None => return Ok(()),
        },
    };
    let Ok(Some(text)) = read_settings(&file) else { return Ok(()) };
    // A project's own hooks in the user's file (Claude Code's, for subfolders) are no second
    // set: they act only where the project's would not run, or once with them.
    let full_set = claude::mem_hooks(&text).iter().any(|h| !is_project_only(&h.command));
    if full_set {
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

/// A path as a shell word: quoted when it holds anything a shell would split or expand.
pub fn shell_word(path: &Path) -> Result<String> {
    let Some(text) = path.to_str() else {
        bail!("{} is not valid UTF-8, which a hook command cannot hold", path.display());
    };
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return Ok(text.to_string());
    }
    Ok(format!("'{}'", text.replace('\'', r"'\''")))
}

/// The argument lists of the hook commands `mem setup` writes (any agent, any version of it),
/// after the agent's name has been put in place of `AGENT`.
const HOOK_ARGS: &[&[&str]] = &[
    &["context", "--hook", "AGENT"],
    &["context", "--hook", "AGENT", "--budget", "2000"],
    &["capture", "--hook", "AGENT"],
    &["checkpoint", "--hook", "AGENT"],
];

/// The last word of mem's arguments in the hooks a project's setup puts in the user's own file.
pub const PROJECT_ONLY: &str = "--project-only";

/// What ends every hook command setup writes: whatever `mem` is or is not (missing from the
/// agent's `PATH`, too old for the arguments, broken), the hook exits 0, and no agent reads its
/// failure as "block this prompt" (Gemini CLI denies the prompt on any exit status but 0 and 1,
/// Claude Code on 2). Commands an older setup wrote end without it, and are still mem's.
pub const NEVER_BLOCKS: &str = " || true";

/// A hook command's mem part: the command without [`NEVER_BLOCKS`].
fn unguarded(command: &str) -> &str {
    let command = command.trim_end();
    command.strip_suffix(NEVER_BLOCKS).unwrap_or(command)
}

/// Whether a hook command is one that a project's setup puts in the user's own file (it acts
/// only in projects with a memory root).
pub fn is_project_only(command: &str) -> bool {
    is_mem_hook(command) && unguarded(command).split_whitespace().last() == Some(PROJECT_ONLY)
}

/// Whether a hook command is one `mem setup` writes (this version or an older one): mem's
/// executable (see [`is_mem_exe`]; bare, or by a path, quoted or not) with exactly one of
/// setup's argument lists, or one of them and [`PROJECT_ONLY`], then [`NEVER_BLOCKS`] or
/// nothing. A command that runs mem with other arguments, or does more
/// (`&& notify-send done`), is the user's.
pub fn is_mem_hook(command: &str) -> bool {
    let Some((program, rest)) = check::program_of(unguarded(command)) else { return false };
    let words: Vec<&str> = rest.split_whitespace().collect();
    let words = words.strip_suffix(&[PROJECT_ONLY]).unwrap_or(&words);
    is_mem_exe(program)
        && Agent::ALL.iter().map(|a| a.name()).any(|agent| {
            HOOK_ARGS.iter().any(|args| {
                args.len() == words.len()
                    && args
                        .iter()
                        .zip(words)
                        .all(|(a, w)| if *a == "AGENT" { *w == agent } else { a == w })
            })
        })
}

/// Whether a program word is mem's: an executable named `mem`, or one that resolves (a path,
/// or a bare name on `PATH`) to the running executable, whatever its name (`mem.real`). Never
/// any program run with `mcp`: a server of the user's own named `mem` stays the user's.
pub fn is_mem_exe(program: &str) -> bool {
    Path::new(program).file_name().is_some_and(|n| n == "mem") || is_this_exe(program)
}

/// Whether a program word starts the running executable.
fn is_this_exe(program: &str) -> bool {
    static THIS: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let this = THIS.get_or_init(|| std::env::current_exe().and_then(|p| p.canonicalize()).ok());
    let Some(this) = this else { return false };
    check::resolve(program).and_then(|p| p.canonicalize().ok()).as_ref() == Some(this)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_quote_what_a_shell_would_split() {
        assert_eq!(shell_word(Path::new("/usr/bin/mem")).unwrap(), "/usr/bin/mem");
        assert_eq!(shell_word(Path::new("/home/a b/mem")).unwrap(), "'/home/a b/mem'");
        assert_eq!(shell_word(Path::new("/it's/mem")).unwrap(), r"'/it'\''s/mem'");
    }

    /// Defect 10 of the second probe: setup dropped hook commands the user wrote around mem.
    #[test]
    fn only_the_hooks_setup_writes_are_recognised() {
        assert!(is_mem_hook("/usr/bin/mem context --hook claude"));
        assert!(is_mem_hook("mem context --hook codex --budget 2000"));
        assert!(is_mem_hook("'/home/a b/mem' capture --hook codex"));
        assert!(is_mem_hook("/opt/mem checkpoint --hook claude"));
        assert!(is_mem_hook("/opt/mem capture --hook claude --project-only"));
        assert!(is_project_only("/opt/mem capture --hook claude --project-only"));
        assert!(!is_project_only("/opt/mem capture --hook claude"));
        assert!(!is_mem_hook("mem --project-only"));
        assert!(!is_mem_hook("/usr/bin/mem capture"));
        assert!(!is_mem_hook("memo --hook x"));
        assert!(!is_mem_hook("./notify.sh --hook mem"));
        assert!(!is_mem_hook("mem session resume --hook claude --budget 3000"));
        assert!(!is_mem_hook("mem capture --hook claude && notify-send done"));
        assert!(!is_mem_hook("mem context --hook claude --budget 4000"));
        assert!(is_mem_hook("mem context --hook gemini"));
        assert!(!is_mem_hook("mem context --hook cursor"));
    }

    /// Item 1 of the third probe: the commands end with a guard, and the old shape is mem's too.
    #[test]
    fn guarded_and_unguarded_hooks_are_both_mem_s() {
        assert!(is_mem_hook("mem context --hook gemini || true"));
        assert!(is_mem_hook("'/a b/mem' capture --hook codex || true"));
        assert!(is_project_only("mem capture --hook claude --project-only || true"));
        assert!(is_project_only("mem capture --hook claude --project-only"));
        assert!(!is_project_only("mem capture --hook claude || true"));
        assert!(!is_mem_hook("mem capture --hook claude || notify-send failed"));
        assert!(!is_mem_hook("mem capture --hook claude || true || true"));
    }

    /// Item 3 of the third probe: an executable not named `mem` is mem's when it is this one.
    #[test]
    fn the_running_executable_is_mem_s_whatever_its_name() {
        let this = std::env::current_exe().unwrap();
        assert!(is_mem_exe(this.to_str().unwrap()));
        assert!(!is_mem_exe("/bin/sh"));
        let hook = format!("{} context --hook codex || true", this.display());
        assert!(is_mem_hook(&hook));
    }
}
