//! Recall in process over generated corpora of 1,000, 10,000 and 100,000 memories: the refresh
//! that runs before every query (walk, stat, compare with the manifest), the whole recall, and
//! the scoring function alone. Figures and whole-process numbers: docs/benchmarks.md.

mod corpus;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use mem::config::Ranking;
use mem::score::{self, Components};
use mem::{Engine, RecallOptions};

const QUERY: &str = "why does the login session cookie expire";

/// A corpus of `n` memories in a temporary folder, indexed, with its engine.
fn indexed(n: usize) -> (tempfile::TempDir, Engine) {
    let dir = tempfile::tempdir().unwrap();
    corpus::write(dir.path(), &corpus::generate(n, 42)).unwrap();
    let mut engine = Engine::open(dir.path()).unwrap();
    let report = engine.refresh(now(), &mem::progress::Silent).unwrap();
    assert_eq!(report.added, n, "every generated memory is indexed");
    assert!(report.bad.is_empty());
    (dir, engine)
}

fn now() -> jiff::Timestamp {
    "2026-11-30T12:00:00Z".parse().unwrap()
}

fn recall(c: &mut Criterion) {
    let hidden = mem::progress::Silent;
    let options = RecallOptions { limit: 20, ..Default::default() };
    let mut group = c.benchmark_group("recall");
    group.sample_size(20);
    for n in [1_000, 10_000, 100_000] {
        let (_dir, mut engine) = indexed(n);
        let recall = engine.recall(QUERY, &options, now(), &hidden).unwrap();
        assert_eq!(recall.hits.len(), 20);
        group.bench_function(BenchmarkId::new("refresh_unchanged", n), |b| {
            b.iter(|| engine.refresh(now(), &hidden).unwrap());
        });
        group.bench_function(BenchmarkId::new("freshness_unchanged", n), |b| {
            b.iter(|| engine.refresh_for_recall(now(), &hidden).unwrap());
        });
        group.bench_function(BenchmarkId::new("recall", n), |b| {
            b.iter(|| engine.recall(QUERY, &options, now(), &hidden).unwrap());
        });
        group.bench_function(BenchmarkId::new("recall_identifier", n), |b| {
            b.iter(|| engine.recall("StorePort migration", &options, now(), &hidden).unwrap());
        });
    }
    group.finish();
}

fn scoring(c: &mut Criterion) {
    let ranking = Ranking::default();
    let now = now().as_second();
    let memories: Vec<(f32, i64, u8)> = (0..10_000)
        .map(|i| ((i % 97) as f32 / 7.0, now - i64::from(i) * 6_000, (i % 10) as u8 + 1))
        .collect();
    c.bench_function("score/10k", |b| {
        b.iter(|| {
            let mut best = 0.0f64;
            for &(bm25, last, importance) in &memories {
                let c = Components {
                    relevance: f64::from(bm25),
                    coverage: 1.0,
                    episode: 0.0,
                    recency: score::recency(score::age_days(now, last), &ranking),
                    importance: score::importance(importance),
                    date: 1.0,
                    time: 1.0,
                    name: 1.0,
                    code: 1.0,
                    work: 1.0,
                };
                best = best.max(score::combine(&c, &ranking));
            }
            black_box(best)
        });
    });
}

fn usage_write(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(mem::usage::FILE);
    let ids: Vec<String> = (0..20).map(|i| format!("m{i:06}")).collect();
    let ranked: Vec<&str> = ids.iter().map(String::as_str).collect();
    let hash = mem::usage::query_hash(QUERY);
    c.bench_function("usage/open_and_record_20_retrieved", |b| {
        b.iter(|| {
            // What one recall pays: open the log, then one transaction of 20 events.
            let mut log =
                mem::usage::UsageLog::open(&path, std::time::Duration::from_secs(5)).unwrap();
            log.record_retrieved(&ranked, &hash, now()).unwrap();
        });
    });
}

criterion_group!(benches, recall, scoring, usage_write);
criterion_main!(benches);
