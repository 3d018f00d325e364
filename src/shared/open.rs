//! Opening a memory root's engine as every command does: with the model the environment or the
//! user configuration names, its configuration's warnings on stderr.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use mem::Engine;

use super::user;

/// Opens the memory root `root`, printing its configuration warnings on stderr.
pub fn engine_at(root: &Path) -> Result<Engine> {
    let engine = Engine::open_with(root, &model_overrides(false)?)
        .with_context(|| format!("cannot open memory root {}", root.display()))?;
    for warning in engine.files.warnings() {
        eprintln!("mem: warning: {warning}");
    }
    Ok(engine)
}

/// The model folder and ONNX Runtime library: the environment's, else the user
/// configuration's (an empty variable counts as unset); the model left to the exit when the
/// process `ends_soon`.
pub fn model_overrides(ends_soon: bool) -> Result<mem::embed::ModelOverrides> {
    let env = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let user = user::load()?;
    Ok(mem::embed::ModelOverrides {
        model_dir: env(mem::embed::MODEL_DIR_ENV).or(user.embed.model_dir),
        runtime: env(mem::embed::ORT_LIB_ENV).or(user.embed.ort_library),
        leave_at_exit: ends_soon,
    })
}

/// Makes `dir` a memory root (see [`store::init`]) and starts observing its usage now, unless
/// it already does: time before that is not time without use (docs/decay.md).
pub fn init_root(dir: &std::path::Path, now: jiff::Timestamp) -> Result<mem::store::InitReport> {
    let report = mem::store::init(dir)?;
    mem::Engine::open(dir)
        .and_then(|mut engine| engine.usage.start_observing(&engine.files, now))
        .with_context(|| format!("cannot start usage observation in {}", dir.display()))?;
    // Made here: the user's own (see `machine`).
    if let Err(e) = super::machine::remember(dir, None) {
        eprintln!("mem: warning: {}", super::output::describe(&e));
    }
    Ok(report)
}
