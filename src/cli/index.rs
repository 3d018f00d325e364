//! `mem index`: bring the index up to date, or rebuild it.

use anyhow::Result;
use serde_json::json;

use crate::shared::Globals;

/// Arguments of `mem index`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Throw the index away and build it again from the files.
    #[arg(long)]
    rebuild: bool,
    /// Print the counts as JSON.
    #[arg(long)]
    json: bool,
    /// With --rebuild: do not write the usage log into the files first.
    #[arg(long)]
    no_sync: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let started = crate::shared::bar::stopwatch();
    let mut engine = ctx.engine()?;
    let progress = crate::shared::bar::progress_bar();
    // Usage reaches the files before the derived state is thrown away.
    crate::shared::usage::sync_first(&mut engine, ctx.now, !args.rebuild || args.no_sync)?;
    let mut report = if args.rebuild {
        engine.rebuild(ctx.now, &progress)?
    } else {
        engine.refresh(ctx.now, &progress)?
    };
    if !report.changed() {
        report.duplicates = engine.files.duplicates();
    }
    // Vectors for new and changed memories, when a model is configured; a model that cannot
    // be used leaves the keyword index as it is, with a warning.
    let vectors = if engine.vectors.model().source().is_some() {
        let bar = crate::shared::bar::progress_bar_for("embedding", "memories");
        match engine.vectors.sync(&engine.files, None, &bar) {
            Ok(vectors) => {
                report.notices.extend(vectors.discarded.clone());
                Some(vectors)
            }
            Err(e) => {
                report.warnings.push(format!("{e}; no vectors computed, recall uses BM25 only"));
                None
            }
        }
    } else {
        None
    };
    crate::shared::output::print_problems(&report);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let total = report.added + report.updated + report.unchanged + report.touched;
    if args.json {
        return crate::shared::output::print_json(&json!({
            "memories": total,
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": report.unchanged + report.touched,
            "bad": report.bad.len() + report.scan_issues.len(),
            "duplicate_ids": report.duplicates.len(),
            "vectors": vectors,
            "elapsed_ms": elapsed_ms,
        }));
    }
    let vectors = vectors.map_or(String::new(), |v| {
        format!("; vectors: {} embedded, {} kept, {} removed", v.embedded, v.reused, v.removed)
    });
    crate::shared::output::print_text(&format!(
        "{total} memories indexed: {} added, {} updated, {} removed, {} unchanged; {} bad{vectors} ({elapsed_ms:.0} ms)\n",
        report.added,
        report.updated,
        report.removed,
        report.unchanged + report.touched,
        report.bad.len() + report.scan_issues.len(),
    ))
}
