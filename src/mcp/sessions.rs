//! The session-log tools of `mem mcp`: `session_list`, `session_search` and `session_resume`
//! over the project root's `.mem/sessions.db` (see [`mem::session`]).

use anyhow::{Result, bail};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::{MemServer, check_count, to_json};

/// Arguments of the `session_list` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ListArgs {
    #[serde(default = "default_n")]
    #[schemars(range(min = 1, max = 100), description = "How many sessions at most, 1 to 100.")]
    n: u16,
}

fn default_n() -> u16 {
    10
}

/// Arguments of the `session_search` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct SearchArgs {
    #[schemars(description = "Words to find in past sessions' prompts, answers, commands and \
        tool output (all of them; any of them when no event has all).")]
    query: String,
    #[serde(default = "default_k")]
    #[schemars(range(min = 1, max = 100), description = "How many events at most, 1 to 100.")]
    k: u16,
}

fn default_k() -> u16 {
    20
}

/// Arguments of the `session_resume` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ResumeArgs {
    #[serde(default)]
    #[schemars(description = "The session id (or a unique start of it), as session_list or \
        session_search return it. Default: the most recent session.")]
    id: Option<String>,
    #[serde(default = "default_budget")]
    #[schemars(
        range(min = 200, max = u32::MAX),
        description = "Most characters of the state, 200 to 4294967295."
    )]
    budget: u32,
    #[serde(default)]
    #[schemars(description = "The state as it was at the end of this turn.")]
    turn: Option<i64>,
}

fn default_budget() -> u32 {
    4000
}

#[tool_router(router = session_router, vis = "pub(super)")]
impl MemServer {
    /// Session list: the latest sessions.
    #[tool(
        description = "List the agent sessions in this project's session log, most recent first, \
        as {sessions}: each with id, agent, project, started_at, last_at, turns, events, first_prompt, memory (the id of \
        the session's digest memory).",
        annotations(
            title = "List sessions",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn session_list(&self, Parameters(args): Parameters<ListArgs>) -> CallToolResult {
        self.listing("sessions", false, |layers, _| {
            let n = check_count("n", args.n)?;
            let sessions = match layers.project().sessions.existing()? {
                Some(log) => log.list(None, n)?,
                None => Vec::new(),
            };
            to_json(&json!({ "sessions": sessions }))
        })
    }

    /// Session search: full-text search over past sessions.
    #[tool(
        description = "Search past agent sessions (prompts, answers, tool calls and their output) \
        with full-text search: {hits}, the best k events, each with session, project, turn, kind, at and \
        a snippet with the matches in [brackets]. Use it to find how something was done or \
        decided before; session_resume gives a session's state.",
        annotations(
            title = "Search sessions",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn session_search(&self, Parameters(args): Parameters<SearchArgs>) -> CallToolResult {
        self.listing("hits", false, |layers, _| {
            let k = check_count("k", args.k)?;
            let hits = match layers.project().sessions.existing()? {
                Some(log) => log.search(&args.query, None, k)?,
                None => Vec::new(),
            };
            to_json(&json!({ "hits": hits }))
        })
    }

    /// Session resume: the state of a session to continue from.
    #[tool(
        description = "The state of a past session to continue from, as Markdown within a budget: \
        goal, last prompts (with the checkpoint before each, for `mem rewind`), files touched, \
        commands run and how they ended, open problems, last answer. Returns {session, text}.",
        annotations(
            title = "Resume a session",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn session_resume(&self, Parameters(args): Parameters<ResumeArgs>) -> CallToolResult {
        self.call(false, |layers, _| resume(layers, args))
    }
}

fn resume(layers: &mut mem::engine::Layers, args: ResumeArgs) -> Result<String> {
    if args.budget < 200 {
        bail!("budget must be at least 200, got {}", args.budget);
    }
    let root = layers.project().files.root().to_path_buf();
    let Some(log) = layers.project().sessions.existing()? else {
        bail!("{}", crate::shared::words::no_log_yet(&root));
    };
    let session = match &args.id {
        Some(id) => log.session(id)?,
        None => match log.list(None, 1)?.into_iter().next() {
            Some(session) => session,
            None => bail!("the session log has no session yet: `mem capture` adds them"),
        },
    };
    let events = log.events(&session.id, args.turn)?;
    let text = mem::session::resume::render(&session, &events, args.budget as usize);
    to_json(&json!({ "session": session.id, "text": text }))
}
