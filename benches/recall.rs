//! Recall over a generated corpus of 10,000 memories, in process: the refresh that runs before
//! every query (walk, stat, compare with the manifest) alone, and the whole recall. Figures and
//! the whole-process numbers are in docs/benchmarks.md.

mod corpus;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::{Engine, RecallOptions};

const N: usize = 10_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let memories = corpus::generate(N, 42);
    corpus::write(dir.path(), &memories).unwrap();
    let now: jiff::Timestamp = "2026-11-30T12:00:00Z".parse().unwrap();
    let hidden = indicatif::ProgressBar::hidden();
    let mut engine = Engine::open(dir.path()).unwrap();
    let report = engine.refresh(now, &hidden).unwrap();
    assert_eq!(report.added, N, "every generated memory is indexed");
    assert!(report.bad.is_empty());

    let options = RecallOptions { limit: 20, ..Default::default() };
    let (hits, _) =
        engine.recall("why does the login session cookie expire", &options, now, &hidden).unwrap();
    assert_eq!(hits.len(), 20);

    let mut group = c.benchmark_group("10k");
    group.bench_function("refresh_unchanged", |b| {
        b.iter(|| engine.refresh(now, &hidden).unwrap());
    });
    group.bench_function("recall", |b| {
        b.iter(|| {
            engine
                .recall("why does the login session cookie expire", &options, now, &hidden)
                .unwrap()
        });
    });
    group.bench_function("recall_identifier", |b| {
        b.iter(|| engine.recall("StorePort migration", &options, now, &hidden).unwrap());
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = bench
}
criterion_main!(benches);
