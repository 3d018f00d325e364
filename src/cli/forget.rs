//! `mem forget ID` and `mem supersede OLD --by NEW`: invalidate, never delete.

use anyhow::Result;

use crate::shared::Globals;

/// Arguments of `mem forget`.
#[derive(Debug, clap::Args)]
pub struct ForgetArgs {
    /// The memory that is no longer true.
    id: String,
    /// Why (kept in the file as `invalid_reason`).
    #[arg(long)]
    reason: Option<String>,
}

/// Arguments of `mem supersede`.
#[derive(Debug, clap::Args)]
pub struct SupersedeArgs {
    /// The memory being replaced.
    old: String,
    /// The memory that replaces it.
    #[arg(long)]
    by: String,
}

pub fn forget(args: ForgetArgs, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let forgotten = engine.files.forget(&args.id, args.reason.as_deref(), ctx.now)?;
    crate::shared::output::print_text(&format!(
        "invalid from {}\t{}\t{}\n",
        forgotten.invalid_at, forgotten.id, forgotten.path
    ))
}

pub fn supersede(args: SupersedeArgs, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let path = engine.files.supersede(&args.old, &args.by, ctx.now)?;
    crate::shared::output::print_text(&format!("superseded by {}\t{}\t{path}\n", args.by, args.old))
}
