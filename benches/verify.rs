//! Memories checked against the code they cite (`mem verify`), in process, on a generated
//! repository of 5,000 files and 2,000 commits with 10,000 memories (`benches/repo.rs`): every
//! verdict computed (cold: the cache removed before each run) and read from the cache (warm).
//! Whole-process figures, and the hook and recall against the base commit: docs/benchmarks.md.

mod repo;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::Engine;

fn now() -> jiff::Timestamp {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

fn verify(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    repo::write(dir.path(), 5_000, 2_000, 10_000, 42);
    let root = dir.path().join(".memory");
    let mut engine = Engine::open(&root).unwrap();
    engine.refresh(now(), &mem::progress::Silent).unwrap();
    let verified = engine.code.verify(&engine.files).unwrap();
    assert!(verified.len() > 8_000, "most memories cite code: {}", verified.len());
    let cache = root.join(".mem").join(mem::cites::CACHE_FILE);
    let mut group = c.benchmark_group("verify");
    group.sample_size(10);
    group.bench_function("cold/10000", |b| {
        b.iter(|| {
            let _ = std::fs::remove_file(&cache);
            engine.code.verify(&engine.files).unwrap()
        });
    });
    engine.code.verify(&engine.files).unwrap();
    group.bench_function("warm/10000", |b| b.iter(|| engine.code.verify(&engine.files).unwrap()));
    group.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
