//! The command-line front end: one module per subcommand, each printing its own report.
//! It shares with the other front ends only what `crate::shared` holds.

pub mod add;
pub mod adopt;
pub mod allow;
pub mod capture;
pub mod checkpoint;
pub mod completions;
pub mod context;
pub mod eval;
pub mod forget;
pub mod health;
pub mod hook;
pub mod index;
pub mod init;
pub mod list;
pub mod man;
pub mod merge;
pub mod parse;
pub mod prune;
pub mod recall;
pub mod redact;
pub mod reflect;
pub mod session;
pub mod show;
pub mod stats;
pub mod sync;
pub mod team;
pub mod used;
pub mod verify;
