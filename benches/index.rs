//! Indexing: a full build of 1,000 and 10,000 generated memories, the incremental refresh of a
//! 10,000-memory index after 1 and after 100 files changed, and the freshness check of a recall
//! after another tool added one file, at 10,000 and at 100,000 memories.

mod corpus;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use mem::Engine;

fn now() -> jiff::Timestamp {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

fn full_build(c: &mut Criterion) {
    let hidden = mem::progress::Silent;
    let mut group = c.benchmark_group("index_full");
    group.sample_size(10);
    for n in [1_000, 10_000] {
        let dir = tempfile::tempdir().unwrap();
        corpus::write(dir.path(), &corpus::generate(n, 42)).unwrap();
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_batched(
                || {
                    let _ = std::fs::remove_dir_all(dir.path().join(".mem"));
                },
                |()| {
                    let mut engine = Engine::open(dir.path()).unwrap();
                    let report = engine.refresh(now(), &hidden).unwrap();
                    assert_eq!(report.added, n);
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

fn incremental(c: &mut Criterion) {
    let hidden = mem::progress::Silent;
    let dir = tempfile::tempdir().unwrap();
    let memories = corpus::generate(10_000, 42);
    corpus::write(dir.path(), &memories).unwrap();
    let mut engine = Engine::open(dir.path()).unwrap();
    engine.refresh(now(), &hidden).unwrap();
    let mut group = c.benchmark_group("index_incremental_10k");
    group.sample_size(20);
    let mut round = 0u64;
    for changed in [1usize, 100] {
        group.bench_function(BenchmarkId::new("changed", changed), |b| {
            b.iter_batched(
                || {
                    round += 1;
                    for m in memories.iter().step_by(memories.len() / changed).take(changed) {
                        let text = format!("{}\nEdit {round}.\n", m.text);
                        std::fs::write(dir.path().join(&m.rel), text).unwrap();
                    }
                },
                |()| {
                    let report = engine.refresh(now(), &hidden).unwrap();
                    assert_eq!(report.updated, changed);
                },
                BatchSize::PerIteration,
            );
        });
    }
    one_file_added(&mut group, &mut engine, dir.path(), &memories, &mut round);
    group.finish();
}

/// What a recall pays after another tool added one file: its folder is walked again, the
/// file read and committed (the manifest's change appended to its log).
fn one_file_added(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
    engine: &mut Engine,
    root: &std::path::Path,
    memories: &[corpus::Generated],
    round: &mut u64,
) {
    let hidden = mem::progress::Silent;
    group.bench_function("freshness_one_file_added", |b| {
        b.iter_batched(
            || {
                *round += 1;
                let m = &memories[*round as usize % memories.len()];
                let rel = m.rel.replace(".md", &format!("-copy{round}.md"));
                let text = m.text.replace(&format!("id: {}", m.id), &format!("id: c{round}"));
                std::fs::write(root.join(rel), text).unwrap();
            },
            |()| {
                let report = engine.refresh_for_recall(now(), &hidden).unwrap();
                assert_eq!(report.added, 1);
            },
            BatchSize::PerIteration,
        );
    });
}

/// The one-change refresh at 100,000 memories (16 folders of about 6,000 files).
fn one_change_100k(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let memories = corpus::generate(100_000, 42);
    corpus::write(dir.path(), &memories).unwrap();
    let mut engine = Engine::open(dir.path()).unwrap();
    engine.refresh(now(), &mem::progress::Silent).unwrap();
    let mut group = c.benchmark_group("index_incremental_100k");
    group.sample_size(20);
    let mut round = 0u64;
    one_file_added(&mut group, &mut engine, dir.path(), &memories, &mut round);
    group.finish();
}

criterion_group!(benches, full_build, incremental, one_change_100k);
criterion_main!(benches);
