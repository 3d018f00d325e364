//! Who started a command an agent runs (a hook or `mem mcp`): the registration its flags name,
//! and the gate that registration puts on the root found (held back when this machine never
//! chose it). Shared by the command line's hooks, the MCP server and `mem setup`.

use mem::agent::{Agent, Homes};
use mem::store::RootSource;

/// The values of an argument that names an agent (`--hook`, `mem setup`): each agent's name,
/// in alphabetical order.
pub fn agent_parser() -> impl clap::builder::TypedValueParser<Value = Agent> {
    let mut names = Agent::ALL.map(Agent::name);
    names.sort();
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names)
        .map(|name| Agent::from_name(&name).expect("a name clap checked"))
}

/// The help of `--project-only`, which every hook command takes.
pub const PROJECT_ONLY_HELP: &str = "With --hook: do nothing unless the payload's working \
directory is in a project with a memory root (a hook in the user's own agent configuration, set \
up by `mem setup --scope project` so that sessions started in a project's subfolders are \
captured, never captures elsewhere)";

/// The help of `--user-scope`, which every hook command takes.
pub const USER_SCOPE_HELP: &str = "With --hook: started by the user's own agent configuration, \
which runs it in every folder (`mem setup --scope user` writes it): a memory root found above the \
working directory that was not made, set up or allowed on this machine (a cloned repository's \
.memory/) is held back, nothing of it reaches the session and nothing is captured into it, until \
`mem allow` there";

/// Which registration of mem in an agent's configuration started a command, as its flags say:
/// a hook command or `mem mcp` cannot tell by itself which settings file it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Started {
    /// A project's own files (no flag; the agent asked the user to trust the folder), or the
    /// user by hand: the root found is used as it is.
    Own,
    /// The user's own file, for the sake of the projects set up on this machine
    /// (`--project-only`): only a project's root, and only one in the record.
    ProjectOnly,
    /// The user's own file, for every folder (`--user-scope`): a root found above the working
    /// directory only when it is in the record; `--dir`/`MEM_DIR` and the per-user root as
    /// they are.
    UserScope,
}

/// The flags by which a hook command says which registration started it (see [`Started`]).
#[derive(Clone, Copy, Debug, Default, clap::Args)]
pub struct Registration {
    /// See [`PROJECT_ONLY_HELP`].
    #[arg(long, requires = "hook", help = PROJECT_ONLY_HELP)]
    project_only: bool,
    /// See [`USER_SCOPE_HELP`].
    #[arg(long, requires = "hook", conflicts_with = "project_only", help = USER_SCOPE_HELP)]
    user_scope: bool,
}

impl Registration {
    /// The registration these flags name.
    pub fn started(self) -> Started {
        match (self.project_only, self.user_scope) {
            (true, _) => Started::ProjectOnly,
            (_, true) => Started::UserScope,
            _ => Started::Own,
        }
    }
}

/// The user's home folder and every agent's, read from the environment (each agent's
/// variable, named by its spec).
pub fn homes() -> Homes {
    Homes::new(dirs::home_dir(), |var| std::env::var_os(var))
}

/// What a command started by a user-level registration ([`Started::ProjectOnly`],
/// [`Started::UserScope`]: the agent runs it in every folder) does at the root it finds.
pub enum Gate {
    /// Act: the root is the user's choice (made, set up or allowed on this machine, given with
    /// `--dir`/`MEM_DIR`, the per-user root), or the project's own files started the command.
    Act,
    /// Nothing: no project with a memory root there (`--project-only` only).
    Outside,
    /// Leave the root alone and say this line: it was not made, set up or allowed on this
    /// machine (a cloned repository's `.memory/`), so its memories may not reach the session,
    /// nor the session's digest its folder.
    HeldBack(String),
}

impl Gate {
    /// The gate for the root `root`, found as `source`, of a command `started` so.
    pub fn at(root: &std::path::Path, source: RootSource, started: Started) -> Gate {
        match (started, source) {
            (Started::Own, _) => return Gate::Act,
            (Started::ProjectOnly, RootSource::Default) => return Gate::Outside,
            (Started::UserScope, RootSource::Default | RootSource::Explicit) => return Gate::Act,
            _ => {}
        }
        if super::machine::is_known(root) {
            return Gate::Act;
        }
        Gate::HeldBack(format!(
            "mem: {}: its memories are held back and nothing is captured into it; if you trust \
             it, run {}",
            super::machine::not_chosen(root),
            super::machine::allow_command(root)
        ))
    }
}
