//! The usage log written into the memory files before a command that reads or moves them all.

use anyhow::Result;

/// Writes the usage log into the files before a command that reads or moves them all, unless
/// `skip` or `[usage] sync = false`. Files that cannot be synced are reported on stderr; their
/// events wait in the log.
pub fn sync_first(engine: &mut mem::Engine, now: jiff::Timestamp, skip: bool) -> Result<()> {
    if skip || !engine.files.config().usage.sync {
        return Ok(());
    }
    let hidden = mem::progress::Silent;
    engine.refresh(now, &hidden)?;
    let report = engine.sync(now)?;
    for failure in &report.failed {
        eprintln!("{failure}  [its access: line stays; it is still read]");
    }
    if report.files > 0 {
        engine.refresh(now, &hidden)?;
    }
    Ok(())
}
