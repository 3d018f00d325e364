//! What the first hybrid call of a process spends loading the model, phase by phase (the
//! measurement behind docs/benchmarks.md, "Loading the model"): ONNX Runtime's library and
//! environment, the tokenizer files, the session from the optimised graph `mem` keeps in the
//! model folder, and the first query. Run it in a fresh process each time:
//! `cargo run --release --example load_phases -- MODEL_DIR [threads]`.
//! Prints one line of milliseconds per phase.

// A measurement tool: the clock rule of AGENTS.md is for the library and the CLI.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::time::Instant;

use fastembed::{
    InitOptionsUserDefined, Pooling, TextEmbedding, TokenizerFiles, UserDefinedEmbeddingModel,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: load_phases MODEL_DIR [threads]")?;
    let threads: Option<usize> = std::env::args().nth(2).map(|t| t.parse()).transpose()?;
    let dir = Path::new(&dir);
    let cache = std::fs::read_dir(dir.join(mem::embed::CACHE_DIR))?
        .next()
        .ok_or("no optimised graph: run `mem index` with the model once")??
        .path();
    let mut phases = Vec::new();
    let mut clock = Instant::now();
    let mut lap = |name: &'static str, phases: &mut Vec<(&'static str, f64)>| {
        phases.push((name, clock.elapsed().as_secs_f64() * 1000.0));
        clock = Instant::now();
    };
    ort::init_from(dir.join(mem::embed::ORT_LIB_FILE))?;
    lap("runtime library", &mut phases);
    let environment = ort::init().build()?;
    lap("environment", &mut phases);
    let read = |name: &str| std::fs::read(dir.join(name));
    let [tokenizer, config, special, tokenizer_config] = mem::embed::TOKENIZER_FILES.map(read);
    let files = TokenizerFiles {
        tokenizer_file: tokenizer?,
        config_file: config?,
        special_tokens_map_file: special?,
        tokenizer_config_file: tokenizer_config?,
    };
    let graph = std::fs::read(cache.join("graph.onnx"))?;
    lap("read files", &mut phases);
    if let Ok(level) = std::env::var("LOAD_PHASES_RAW") {
        // The session alone, built as fastembed builds it but with the optimisation level given
        // (`3` as fastembed, `0` none: the cached graph is optimised already).
        use ort::session::builder::GraphOptimizationLevel as Level;
        let level = if level == "0" { Level::Disable } else { Level::Level3 };
        let text = |e: ort::Error<ort::session::builder::SessionBuilder>| e.to_string();
        let session = ort::session::Session::builder(&environment)?
            .with_optimization_level(level)
            .map_err(text)?
            .with_config_entry("session.intra_op.allow_spinning", "0")
            .map_err(text)?
            .with_config_entry("session.disable_prepacking", "1")
            .map_err(text)?
            .with_config_entry(
                "session.model_external_initializers_file_folder_path",
                cache.to_string_lossy(),
            )
            .map_err(text)?
            .commit_from_memory(&graph)?;
        lap("raw session", &mut phases);
        drop(session);
    }
    let model = UserDefinedEmbeddingModel::new(graph, files).with_pooling(Pooling::Mean);
    let mut options = InitOptionsUserDefined::new()
        .with_environment(environment)
        .with_max_length(mem::embed::MAX_TOKENS)
        .with_session_config("session.intra_op.allow_spinning", "0")
        .with_session_config("session.inter_op.allow_spinning", "0")
        .with_session_config("session.disable_prepacking", "1")
        .with_session_config(
            "session.model_external_initializers_file_folder_path",
            cache.to_string_lossy(),
        );
    if let Some(threads) = threads {
        options = options.with_intra_threads(threads);
    }
    let mut embedding = TextEmbedding::try_new_from_user_defined(model, options)?;
    lap("session and tokenizer", &mut phases);
    embedding.embed(["why does the login test fail on staging"], None)?;
    lap("first query", &mut phases);
    embedding.embed(["which package manager do we use"], None)?;
    lap("second query", &mut phases);
    let line: Vec<String> = phases.iter().map(|(name, ms)| format!("{name} {ms:.1}")).collect();
    println!("{}", line.join(" | "));
    Ok(())
}
