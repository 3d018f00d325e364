//! What the front ends share, and nothing that is one of them: the process's settings and the
//! root they find (`globals`), the registration and gate of agent-started commands, the machine's
//! record of roots, the git merge driver's registration, the user's configuration and the user
//! layer's remote, printing, the served hooks' protocol and client, and the sentences more than
//! one front end says.

pub mod bar;
pub mod coverage;
pub mod gate;
pub mod globals;
pub mod injected;
pub mod machine;
pub mod merge;
pub mod native;
pub mod open;
pub mod output;
pub mod remote;
pub mod served;
pub mod team;
pub mod team_push;
pub mod usage;
pub mod user;
pub mod words;

use jiff::Timestamp;

pub use self::globals::Globals;

/// "Now": `fixed` (from `--now` or `MEM_NOW`) when given, else the clock. The one place the
/// binary reads the clock: once per command, or once per request for `mem mcp`.
#[allow(clippy::disallowed_methods)]
pub fn now(fixed: Option<Timestamp>) -> Timestamp {
    fixed.unwrap_or_else(Timestamp::now)
}
