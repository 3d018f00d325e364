//! Reflection planning over 10,000 generated memories: load, TF-IDF, neighbours, clusters,
//! summaries (what `mem reflect --dry-run` does after the refresh).

mod corpus;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::Engine;
use mem::MemoryType;
use mem::engine::ReflectOptions;

fn reflect(c: &mut Criterion) {
    let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    corpus::write(dir.path(), &corpus::generate(10_000, 42)).unwrap();
    let mut engine = Engine::open(dir.path()).unwrap();
    engine.refresh(now, &mem::progress::Silent).unwrap();
    let options = ReflectOptions {
        embedding_threshold: None,
        kinds: vec![MemoryType::Episodic],
        since: None,
        threshold: 0.15,
        min_cluster: 3,
    };
    let plan = engine.reflect_plan(&options, now).unwrap();
    assert!(!plan.is_empty(), "the generated topics form clusters");
    let mut group = c.benchmark_group("reflect");
    group.sample_size(10);
    group.bench_function("plan_10k", |b| b.iter(|| engine.reflect_plan(&options, now).unwrap()));
    group.finish();
}

criterion_group!(benches, reflect);
criterion_main!(benches);
