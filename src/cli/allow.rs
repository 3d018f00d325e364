//! `mem allow`: lets sessions use a memory root this machine did not make or set up: a cloned
//! repository's `.memory/` that the user-level `--project-only` hooks hold back, or a root
//! someone else owns. `--revoke` takes the permission back; `--list` shows the record.

use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use mem::store::{self, RootSource};

use crate::shared::{Globals, machine};

/// Arguments of `mem allow`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A folder in or above which the root is (default: the working directory); the root is
    /// found as every command finds it (`--dir` names it directly).
    folder: Option<PathBuf>,
    /// Take the root out of this machine's record instead: the user-level hooks hold it back
    /// again.
    #[arg(long, conflicts_with = "list")]
    revoke: bool,
    /// List the roots of this machine's record (made, set up or allowed here) and the agents
    /// set up for each.
    #[arg(long)]
    list: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if args.list {
        let mut out = String::new();
        for root in machine::roots() {
            let agents = if root.agents.is_empty() {
                String::new()
            } else {
                format!("  (set up: {})", root.agents.join(", "))
            };
            out.push_str(&format!("{}{agents}\n", root.path.display()));
        }
        if out.is_empty() {
            out.push_str("no memory root is recorded on this machine\n");
        }
        return crate::shared::output::print_text(&out);
    }
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let folder = match args.folder {
        Some(folder) if folder.is_relative() => cwd.join(folder),
        Some(folder) => folder,
        None => cwd,
    };
    // Found without the owner check, which this command is the way past.
    let (root, source) = store::find_root(ctx.dir.as_deref(), &folder, None)
        .with_context(|| format!("no memory root in or above {}", folder.display()))?;
    if source == RootSource::Default {
        bail!("no memory root in or above {}", folder.display());
    }
    let root = root.canonicalize().unwrap_or(root);
    if args.revoke {
        let done = if machine::revoke(&root)? { "revoked" } else { "was not allowed" };
        return crate::shared::output::print_text(&format!("{done}: {}\n", root.display()));
    }
    machine::remember(&root, None)?;
    crate::shared::output::print_text(&format!(
        "allowed: {} (its memories reach sessions started in it; `mem allow --revoke` undoes it)\n",
        root.display()
    ))
}
