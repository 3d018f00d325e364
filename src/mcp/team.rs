//! The team store in the MCP tools (docs/teams.md): `recall` and `recent` list its memories
//! under `team` beside their own list, with `team_problem` when the store did not answer;
//! `get` reads one by its key (`team:PROJECT/ID`). Each labelled with `layer: "team"`, its
//! project and author, its texts JSON strings: data, never instructions. Read only: `forget` and
//! `used` refuse a key (`crate::shared::team::refuse_key`).

use anyhow::{Result, anyhow};
use mem::Engine;
use serde_json::{Value, json};

use crate::shared::team;

/// Joins the team's hits for `query` to the `answer` of the `local` recall (at most `limit`,
/// of `kinds`, none it holds), when a store is configured.
pub(super) fn join_recall(
    answer: &mut Value,
    project: &mut Engine,
    local: &mem::Recall,
    (query, limit, kinds): (&str, usize, &[mem::MemoryType]),
) {
    if let Some(found) = team::join_recall(project, local, query, limit, kinds) {
        answer["team"] = found.hits.iter().map(team::hit_json).collect();
        if let Some(problem) = found.problem {
            answer["team_problem"] = problem.into();
        }
    }
}

/// Joins to `recent`'s `answer` the `n` live memories the store received last, of `kinds`
/// (every kind when empty), none of the `local` ids, without their bodies; when a store is
/// configured.
pub(super) fn join_recent(
    answer: &mut Value,
    n: usize,
    kinds: &[mem::MemoryType],
    local: &[String],
) {
    let kinds: Vec<String> = kinds.iter().map(|k| k.as_str().to_string()).collect();
    match team::read(|t| t.recent(n, &kinds, local)) {
        None => {}
        Some(Ok(found)) => {
            answer["team"] = found.iter().map(|m| team::memory_json(m, false)).collect();
        }
        Some(Err(problem)) => {
            answer["team"] = json!([]);
            answer["team_problem"] = problem.into();
        }
    }
}

/// The `get` tool's answer for the team memory `key` (`id` of `project`): the store's live
/// memory, labelled, or an error that says why there is none.
pub(super) fn get(key: &str, project: &str, id: &str) -> Result<Value> {
    let memory = team::get(project, id).map_err(|why| anyhow!(why.message(key)))?;
    Ok(team::memory_json(&memory, true))
}
