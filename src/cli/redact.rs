//! `mem redact`: replaces the secrets already in the memory files' bodies, which `mem health`
//! reports (every write redacts; a file written by hand or by an older mem may hold some).

use anyhow::Result;

use crate::shared::Globals;

/// Arguments of `mem redact`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// List the files and their secrets without writing anything.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    let files = engine.files.redact_files(args.dry_run, ctx.now)?;
    if !args.dry_run && !files.is_empty() {
        // The index learns of the rewritten files now.
        engine.refresh(ctx.now, &mem::progress::Silent)?;
    }
    let verb = if args.dry_run { "would redact" } else { "redacted" };
    let mut text = String::new();
    for file in &files {
        let plural = if file.secrets == 1 { "" } else { "s" };
        text.push_str(&format!("{verb}\t{} secret{plural}\t{}\n", file.secrets, file.path));
    }
    if files.is_empty() {
        text.push_str("no secret in the memory files\n");
    }
    crate::shared::output::print_text(&text)
}
