//! `mem sync`: write this machine's usage log to its usage file in `usage/`, and sync the user
//! layer with its git remote when the user configuration names one (`[layers] user_remote`).

use anyhow::{Result, bail};

use crate::shared::Globals;

/// Arguments of `mem sync`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
    /// Sync the user layer with its remote only, quietly (the outcome goes to the layer's
    /// `.mem/remote.json`), or leave word for a sync that runs: what a write into the user
    /// layer starts, detached.
    #[arg(long, hide = true, conflicts_with = "json")]
    background: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    if args.background {
        crate::shared::remote::sync_in_background(ctx);
        return Ok(());
    }
    let remote = crate::shared::remote::configured()?;
    let (mut engine, _) = ctx.refreshed_engine()?;
    let usage_on = engine.files.config().usage.sync;
    if !usage_on && remote.is_none() {
        bail!(
            "[usage] sync = false in mem.toml: usage stays in .mem/usage.db and no file is written"
        );
    }
    let report = if usage_on { Some(engine.sync(ctx.now)?) } else { None };
    if report.as_ref().is_some_and(|r| r.files > 0) {
        // The index learns of the new `access:` lines now (`mem health` compares).
        engine.refresh(ctx.now, &mem::progress::Silent)?;
    }
    drop(engine);
    let failed = report.as_ref().map_or(0, |r| r.failed.len());
    for failure in report.iter().flat_map(|r| &r.failed) {
        eprintln!("{failure}  [its access: line stays; it is still read]");
    }
    // The user layer's sync: its failure is said after what the usage sync did.
    let layer = match remote {
        None => Ok(None),
        Some(_) => crate::shared::remote::sync(ctx),
    };
    if args.json {
        let mut value = serde_json::to_value(&report)?;
        if let Ok(Some(done)) = &layer {
            match &mut value {
                serde_json::Value::Object(map) => {
                    map.insert("user_layer".into(), serde_json::to_value(done)?);
                }
                _ => value = serde_json::json!({ "user_layer": done }),
            }
        }
        crate::shared::output::print_json(&value)?;
    } else {
        let mut text = match &report {
            Some(report) => usage_text(report),
            None => "[usage] sync = false in mem.toml: no usage file written\n".to_string(),
        };
        if let Ok(Some(done)) = &layer {
            text.push_str(&layer_text(done));
        }
        crate::shared::output::print_text(&text)?;
    }
    layer?;
    if failed > 0 {
        bail!("{failed} files could not be migrated (listed above)");
    }
    Ok(())
}

/// What the usage sync did, in lines.
fn usage_text(report: &mem::engine::SyncReport) -> String {
    let recovered = if report.recovered > 0 {
        format!(" ({} interrupted syncs settled)", report.recovered)
    } else {
        String::new()
    };
    let mut text = if report.events == 0 && report.files == 0 {
        format!("no new usage to write{recovered}\n")
    } else {
        format!(
            "wrote {} usage {} to {}{recovered}\n",
            report.events,
            if report.events == 1 { "event" } else { "events" },
            report.usage_file
        )
    };
    if report.files > 0 {
        let (line, files) =
            if report.files == 1 { ("line", "memory file") } else { ("lines", "memory files") };
        text.push_str(&format!(
            "moved the access: {line} (usage counts an older mem wrote) of {} {files} to {}\n",
            report.files, report.usage_file
        ));
    }
    text
}

/// What the user layer's sync did, in lines.
fn layer_text(done: &mem::remote::SyncReport) -> String {
    let dir = done.dir.display();
    let mut text = String::new();
    if done.cloned {
        text.push_str(&format!("cloned {} into the user layer {dir}\n", done.url));
    }
    if done.made_root {
        text.push_str(&format!("made {dir} a memory root (the remote held none yet)\n"));
    }
    let mut did = Vec::new();
    if done.usage_events > 0 {
        did.push(format!("wrote {} usage events", done.usage_events));
    }
    if done.committed > 0 {
        let files = if done.committed == 1 { "file" } else { "files" };
        did.push(format!("committed {} {files}", done.committed));
    }
    if let Some(branch) = &done.merged {
        did.push(format!("merged the remote's {branch}"));
    }
    if let Some(branch) = &done.pushed {
        did.push(format!("pushed to {branch}"));
    }
    if did.is_empty() {
        text.push_str(&format!("user layer {dir}: up to date with {}\n", done.url));
    } else {
        text.push_str(&format!("user layer {dir}: {} ({})\n", did.join(", "), done.url));
    }
    text
}
