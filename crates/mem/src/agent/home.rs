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
    /// The folder's name in the variable's folder (`.gemini` in `GEMINI_CLI_HOME`, `opencode`
    /// in `XDG_DATA_HOME`); `None` when the variable names the home folder itself.
    pub under_var: Option<&'static str>,
    /// The folder in the user's home when the variable is unset (`.codex`).
    pub default: &'static str,
}

impl Home {
    /// The home folder given the variable's value (an empty one counts as unset) and the user's
    /// home folder.
    pub fn resolve(&self, var: Option<OsString>, user: Option<&Path>) -> Option<PathBuf> {
        match var.filter(|v| !v.is_empty()).map(PathBuf::from) {
            Some(var) => Some(match self.under_var {
                Some(name) => var.join(name),
                None => var,
            }),
            None => user.map(|u| u.join(self.default)),
        }
    }
}

/// The user's home folder and every agent's, as the environment gave them.
#[derive(Clone, Debug, Default)]
pub struct Homes {
    user: Option<PathBuf>,
    agents: Vec<(Agent, Option<PathBuf>)>,
    /// The configuration folders of the agents whose spec names one apart from the home.
    configs: Vec<(Agent, Option<PathBuf>)>,
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
        let configs = Agent::ALL
            .into_iter()
            .filter_map(|agent| Some((agent, agent.spec().config?)))
            .map(|(agent, rule)| (agent, rule.resolve(var(rule.var), user.as_deref())))
            .collect();
        Homes { user, agents, configs, relative }
    }

    /// The user's home folder.
    pub fn user(&self) -> Option<&Path> {
        self.user.as_deref()
    }

    /// The home folder of `agent` (its variable's folder, else the one in the user's home).
    pub fn of(&self, agent: Agent) -> Option<&Path> {
        self.agents.iter().find(|(a, _)| *a == agent).and_then(|(_, home)| home.as_deref())
    }

    /// The folder of `agent`'s user configuration (its home folder, unless its spec names
    /// another: [`crate::agent::Spec::config`]).
    pub fn config_of(&self, agent: Agent) -> Option<&Path> {
        match self.configs.iter().find(|(a, _)| *a == agent) {
            Some((_, config)) => config.as_deref(),
            None => self.of(agent),
        }
    }

    /// The agent's home variable when it is set to a relative folder, which the agent takes
    /// from whatever folder it starts in.
    pub fn relative(&self, agent: Agent) -> Option<&Path> {
        self.relative.iter().find(|(a, _)| *a == agent).map(|(_, v)| v.as_path())
    }
}
