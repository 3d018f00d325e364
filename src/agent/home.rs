//! Where each agent keeps its own files (its home folder), told from the values of the
//! environment the front end read once: the library never reads the environment itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::Agent;

/// How an agent's home folder is found: a folder an environment variable names, else a folder
/// of the user's home.
#[derive(Clone, Copy, Debug)]
pub struct Home {
    /// The environment variable that moves it (`CODEX_HOME`).
    pub var: &'static str,
    /// Whether the variable names the home folder itself (`true`), or the folder that holds it
    /// under [`Home::folder`]'s name (`false`: Gemini CLI's `GEMINI_CLI_HOME` holds `.gemini`).
    pub var_is_home: bool,
    /// Its name in the user's home folder (`.codex`).
    pub folder: &'static str,
}

impl Home {
    /// The home folder given the variable's value (an empty one counts as unset) and the user's
    /// home folder.
    pub fn resolve(&self, var: Option<OsString>, user: Option<&Path>) -> Option<PathBuf> {
        let var = var.filter(|v| !v.is_empty()).map(PathBuf::from);
        match (var, self.var_is_home) {
            (Some(home), true) => Some(home),
            (Some(parent), false) => Some(parent.join(self.folder)),
            (None, _) => user.map(|u| u.join(self.folder)),
        }
    }
}

/// The user's home folder and every agent's, as the environment gave them.
#[derive(Clone, Debug, Default)]
pub struct Homes {
    user: Option<PathBuf>,
    agents: Vec<(Agent, Option<PathBuf>)>,
    relative: Vec<(Agent, PathBuf)>,
}

impl Homes {
    /// The homes given the user's home folder and a reader of environment variables (the
    /// front end passes `std::env::var_os`).
    pub fn new(user: Option<PathBuf>, var: impl Fn(&str) -> Option<OsString>) -> Homes {
        let mut relative = Vec::new();
        let agents = Agent::ALL
            .into_iter()
            .map(|agent| {
                let rule = agent.spec().home;
                let value = var(rule.var);
                if let Some(v) = value.as_ref().filter(|v| !v.is_empty())
                    && Path::new(v).is_relative()
                {
                    relative.push((agent, PathBuf::from(v)));
                }
                (agent, rule.resolve(value, user.as_deref()))
            })
            .collect();
        Homes { user, agents, relative }
    }

    /// The user's home folder.
    pub fn user(&self) -> Option<&Path> {
        self.user.as_deref()
    }

    /// The home folder of `agent` (its variable's folder, else the one in the user's home).
    pub fn of(&self, agent: Agent) -> Option<&Path> {
        self.agents.iter().find(|(a, _)| *a == agent).and_then(|(_, home)| home.as_deref())
    }

    /// The agent's home variable when it is set to a relative folder, which the agent takes
    /// from whatever folder it starts in.
    pub fn relative(&self, agent: Agent) -> Option<&Path> {
        self.relative.iter().find(|(a, _)| *a == agent).map(|(_, v)| v.as_path())
    }
}
