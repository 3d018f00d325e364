//! A team's shared memory on PostgreSQL with pgvector (docs/teams.md): a derived, optional index
//! of many roots' memories that every machine of a team publishes to and recalls from; the
//! files stay the truth.
//!
//! - [`Settings`]: `[team]` of the user configuration, the password from the environment or
//!   `~/.pgpass` ([`pgpass`]), and what TLS a host gets ([`settings::is_local`]).
//! - [`Team::connect`]: a connection within the settings' timeouts; [`Team::init`] creates or
//!   migrates the schema ([`schema`]).
//! - [`publish`]: a root's memories as rows ([`Row`]), redacted; [`Team::push`] sends the rows
//!   that changed, one transaction per batch, and withdraws what a root's [`record`] says it
//!   pushed and no longer holds.
//! - [`access`]: row-level security, a role seeing only the projects granted to it
//!   ([`Team::grant`], [`Team::revoke`]).
//! - [`Team::recall`]: full-text and vector search over what the team published, fused as
//!   local hybrid recall is ([`TeamHit`]).
//! - [`Team::get`] and [`Team::recent`] ([`read`]): a live memory by its project and id, and
//!   the ones pushed last ([`TeamMemory`]).
//!
//! Like the engine library, it never reads the environment and never prints: the binary
//! passes the settings in and prints the reports.

pub mod access;
mod connect;
pub mod error;
pub mod pgpass;
pub mod publish;
mod push;
pub mod read;
pub mod recall;
pub mod record;
pub mod schema;
pub mod settings;

pub use connect::Team;
pub use error::{Error, Result};
pub use publish::{Row, State};
pub use push::Pushed;
pub use read::TeamMemory;
pub use recall::{TeamHit, TeamQuery};
pub use settings::Settings;
