//! The held-back rule in `mem mcp --user-scope` (a server of the user's own agent
//! configuration, started in every folder): a memory root found above the working directory
//! that was not made, set up or allowed on this machine (a cloned repository's `.memory/`) is
//! never opened. The tools that list (`recall`, `recent`, `session_list`, `session_search`)
//! answer an empty list and `held_back`, the reason; the others fail with it; both name `mem
//! allow`. The record is read again at each call until the root is opened, so a `mem allow`
//! during the session lets the next call use it (docs/security.md).

use anyhow::Result;
use jiff::Timestamp;
use mem::engine::Layers;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use super::{MemServer, lock};
use crate::shared::gate::{Gate, Started};

impl MemServer {
    /// Why the root is held back now, when it is: a `--user-scope` server whose root is not
    /// open yet and is not the user's choice (see [`Gate`]).
    pub(super) fn held_back(&self) -> Option<String> {
        if !self.user_scope {
            return None;
        }
        // A root that cannot be found is said by the call that opens it.
        let (root, source) = self.globals.locate_root(None).ok()?;
        match Gate::at(&root, source, Started::UserScope) {
            Gate::Act | Gate::Outside => None,
            Gate::HeldBack(_) => Some(format!(
                "{}: this mem server, of the user's own agent configuration (--user-scope), \
                 holds it back: nothing of it is read or written; if you trust it, run {}, then \
                 call again",
                crate::shared::machine::not_chosen(&root),
                crate::shared::machine::allow_command(&root)
            )),
        }
    }

    /// A tool call that lists (its list under `key`): [`MemServer::call`], or, while the root is
    /// held back, an empty list and `held_back`, the reason.
    pub(super) fn listing(
        &self,
        key: &str,
        refresh: bool,
        f: impl FnOnce(&mut Layers, Timestamp) -> Result<String>,
    ) -> CallToolResult {
        let open = lock(&self.layers).is_some();
        match (!open).then(|| self.held_back()).flatten() {
            Some(why) => {
                let answer = json!({ key: [], "held_back": why });
                CallToolResult::success(vec![ContentBlock::text(answer.to_string())])
            }
            None => self.call(refresh, f),
        }
    }
}
