//! `mem verify`: the project root's memories checked against the code they cite, worst first;
//! `--confirm ID` records that a flagged memory was checked and is right; `--fix [--dry-run]`
//! rewrites the paths of pure renames.

use anyhow::Result;
use mem::cites::Status;

use crate::shared::Globals;

/// Arguments of `mem verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print a JSON list of {id, title, type, code_status, cites}.
    #[arg(long)]
    json: bool,
    /// Rewrite the old path to the new one in memories whose only problems are renamed files.
    #[arg(long, conflicts_with = "confirm")]
    fix: bool,
    /// With --fix: print the diffs, change nothing.
    #[arg(long, requires = "fix")]
    dry_run: bool,
    /// Record that the memory ID was checked and is right: its citations count from now on
    /// (a usage event in usage/<machine>.tsv).
    #[arg(long, value_name = "ID")]
    confirm: Option<String>,
}

/// Exit status when something cited is gone or moved.
const FLAGGED: u8 = 1;

pub fn run(args: Args, ctx: &Globals) -> Result<u8> {
    let (mut engine, _) = ctx.refreshed_engine()?;
    if let Some(id) = &args.confirm {
        engine.confirm(id, ctx.now)?;
        crate::shared::output::print_text(&format!("confirmed\t{id}\n"))?;
        return Ok(0);
    }
    if args.fix {
        let fixed = engine.code.fix_renames(&mut engine.files, args.dry_run, ctx.now)?;
        if args.json {
            crate::shared::output::print_json(&fixed)?;
            return Ok(0);
        }
        let mut text = String::new();
        for f in &fixed {
            match &f.refused {
                Some(why) => eprintln!("mem: {}: {why}", f.id),
                None => text.push_str(&f.diff),
            }
        }
        let verb = if args.dry_run { "would rewrite" } else { "rewrote" };
        let done = fixed.iter().filter(|f| f.refused.is_none()).count();
        eprintln!("mem: {verb} {done} memories (renamed paths only)");
        crate::shared::output::print_text(&text)?;
        return Ok(0);
    }
    let verified = engine.code.verify(&engine.files)?;
    let flagged = verified.iter().any(|v| v.code_status.is_some_and(Status::is_flagged));
    if args.json {
        crate::shared::output::print_json(&verified)?;
    } else {
        let mut text = String::new();
        for v in &verified {
            let status = v.code_status.map_or("-", Status::name);
            text.push_str(&format!("{status}\t{}\t{}\n", v.id, v.title));
            for cite in &v.cites {
                text.push_str(&format!("  {}\n", cite.line()));
            }
            for path in &v.outside {
                let path = mem::cites::shown(path);
                text.push_str(&format!("  {path}: outside the repository, not checked\n"));
            }
            if let Some(why) = &v.unchecked {
                text.push_str(&format!("  ({why})\n"));
            }
        }
        if verified.is_empty() {
            eprintln!("mem: no memory cites code of this repository");
        }
        crate::shared::output::print_text(&text)?;
    }
    Ok(if flagged { FLAGGED } else { 0 })
}
