//! `mem show ID`: one memory, its fields and its body.

use anyhow::Result;
use serde_json::json;

use crate::shared::Globals;

/// Arguments of `mem show`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The memory's id.
    id: String,
    /// Print the fields, the whole front-matter and the body as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Globals) -> Result<()> {
    let (mut project, _) = ctx.refreshed_engine()?;
    let mut layers;
    // A memory of another layer (the user's, an agent's own) is looked up there.
    let (engine, layer) = match project.files.get(&args.id) {
        Ok(_) => (&mut project, None),
        Err(e) => {
            layers = ctx.layers_near(None)?;
            layers.refresh(ctx.now, &mem::progress::Silent)?;
            match layers.locate(&args.id) {
                Some(layer) => (layers.engine(layer).expect("located"), Some(layer)),
                None => return Err(e.into()),
            }
        }
    };
    let (path, memory) = engine.files.get(&args.id)?;
    let lives = layer.map(|l| crate::shared::words::lives_in(l, &memory));
    let decay = engine.files.config().decay.clone();
    // Like recall, show still answers when the usage log cannot be read: from the file alone.
    // The usage read once: the memory's state, and when observation began (for prune's figure).
    let (state, since) = match engine.usage.view(&engine.files) {
        Ok(view) => (view.state(&memory, &decay), view.since),
        Err(e) => {
            eprintln!("mem: warning: usage log not read, showing the file's own usage: {e}");
            (mem::decay::State::of(&memory, &decay), None)
        }
    };
    // A fact taken from a session: where it was stated (the project's session log).
    let stated = match layer {
        None => stated_in(engine.files.root(), memory.id().as_str()),
        Some(_) => Vec::new(),
    };
    let retention = state.retention(ctx.now);
    // The figure prune compares with its threshold (docs/decay.md): counted from when usage
    // observation began.
    let prune_retention = state.prune_retention(since, ctx.now);
    let age_days = state.age_days(ctx.now);
    if args.json {
        let mut value = crate::shared::output::memory_json(&path, &memory);
        let usage = json!({
            "last_access": state.last,
            "access_count": state.used,
            "retrieved": state.retrieved,
            "strength_days": state.effective_strength(),
            "retention": retention,
            "prune_retention": prune_retention,
            "observed_since": since,
            "invalid_at": memory.invalid_at(),
            "derived_from": memory.derived_from(),
            "consolidated_into": memory.consolidated_into(),
            "superseded_by": memory.superseded_by(),
        });
        if let (Some(all), Some(extra)) = (value.as_object_mut(), usage.as_object()) {
            all.extend(extra.clone());
            if !stated.is_empty() {
                all.insert("stated".into(), json!(stated));
            }
            if let Some(layer) = layer {
                all.insert("layer".into(), json!(layer));
                all.insert("lives_in".into(), json!(lives));
            }
        }
        return crate::shared::output::print_json(&value);
    }
    let mut text = String::new();
    text.push_str(&format!("id          {}\n", memory.id()));
    text.push_str(&format!("path        {path}\n"));
    if let Some(lives) = &lives {
        text.push_str(&format!("lives in    {lives}\n"));
    }
    text.push_str(&format!("title       {}\n", memory.title()));
    text.push_str(&format!("type        {}\n", memory.kind()));
    text.push_str(&format!("importance  {}\n", memory.importance()));
    text.push_str(&format!("created     {}\n", memory.created()));
    text.push_str(&format!(
        "last access {} ({} ago)\n",
        state.last,
        crate::shared::output::age(age_days)
    ));
    text.push_str(&format!(
        "usage       used {} times, retrieved {} times\n",
        state.used, state.retrieved
    ));
    text.push_str(&format!(
        "retention   R = {retention:.3} (strength S = {:.1} days, R = exp(-t/S))\n",
        state.effective_strength()
    ));
    text.push_str(&format!(
        "            {}\n",
        crate::shared::words::prune_figure(prune_retention, since)
    ));
    if let Some(at) = memory.invalid_at() {
        text.push_str(&format!("invalid     since {at}\n"));
    }
    if let Some(by) = memory.superseded_by() {
        text.push_str(&format!("replaced by {by}\n"));
    }
    if !memory.derived_from().is_empty() {
        let ids: Vec<&str> = memory.derived_from().iter().map(|id| id.as_str()).collect();
        text.push_str(&format!("derived from {}\n", ids.join(", ")));
    }
    if let Some(into) = memory.consolidated_into() {
        text.push_str(&format!("consolidated into {into}\n"));
    }
    if !memory.tags().is_empty() {
        text.push_str(&format!("tags        {}\n", memory.tags().join(", ")));
    }
    if let Some(source) = memory.source() {
        text.push_str(&format!("source      {source}\n"));
    }
    for origin in &stated {
        let turn = origin.turn.map_or(String::new(), |t| format!(", turn {t}"));
        let at = origin.at.map_or(String::new(), |at| format!(", {at}"));
        text.push_str(&format!(
            "stated      in session {}{turn}{at} ({})\n",
            origin.session, origin.outcome
        ));
    }
    text.push('\n');
    text.push_str(memory.body());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    crate::shared::output::print_text(&text)
}

/// Where the memory `id` of the root `root` was stated, by the session log; nothing when the
/// root has no log or it cannot be read (a warning then).
fn stated_in(root: &std::path::Path, id: &str) -> Vec<mem::session::FactOrigin> {
    let origins = mem::session::SessionLog::existing_in(root)
        .and_then(|log| log.map(|log| log.fact_origins(id)).transpose());
    match origins {
        Ok(found) => found.unwrap_or_default(),
        Err(e) => {
            eprintln!("mem: warning: the session log was not read: {e}");
            Vec::new()
        }
    }
}
