//! The embedding model in process: one short query (what every hybrid recall pays), and a batch
//! of 16 generated memories (what `mem index` pays per batch). Needs the model: set
//! `MEM_EMBED_MODEL_DIR`, or fetch it into `target/embed-model` with
//! `scripts/fetch-model.sh target/embed-model`.

mod corpus;

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::embed::{Embedder, ModelSource};

fn embedder() -> Embedder {
    let dir = std::env::var_os("MEM_EMBED_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/embed-model"));
    let source = ModelSource { runtime: dir.join(mem::embed::ORT_LIB_FILE), dir };
    Embedder::load(&source).unwrap_or_else(|e| panic!("this bench needs the model: {e}"))
}

fn embed(c: &mut Criterion) {
    let mut model = embedder();
    let mut group = c.benchmark_group("embed");
    group.bench_function("query_short", |b| {
        b.iter(|| model.embed(&["why does the login session cookie expire"], 1).unwrap())
    });
    let memories = corpus::generate(16, 3);
    let texts: Vec<&str> = memories.iter().map(|m| m.text.as_str()).collect();
    group.sample_size(10);
    group.bench_function("batch_16_generated", |b| b.iter(|| model.embed(&texts, 16).unwrap()));
    group.finish();
}

criterion_group!(benches, embed);
criterion_main!(benches);
