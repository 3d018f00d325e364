//! The session log in process: full-text search over 100 generated Claude Code sessions
//! (`benches/transcripts.rs`, seed 42, imported with [`SessionLog::import`] as `mem capture`
//! does) for a rare word, a common word and two words, and opening the log, which every
//! `mem session` command does first. Whole-process figures over 1,000 sessions
//! (`scripts/bench_sessions.sh`): docs/benchmarks.md.

mod transcripts;

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::session::SessionLog;

const SESSIONS: usize = 100;

/// A log of `SESSIONS` generated sessions in a temporary folder.
fn log() -> (tempfile::TempDir, SessionLog) {
    let dir = tempfile::tempdir().unwrap();
    let mut log =
        SessionLog::open(&dir.path().join("sessions.db"), Duration::from_secs(5)).unwrap();
    let mut events = 0;
    for i in 0..SESSIONS {
        let session = transcripts::session(42, i);
        let path = dir.path().join(format!("{}.jsonl", session.id));
        std::fs::write(&path, &session.text).unwrap();
        let imported = log.import(&path, &session.id, None).unwrap();
        assert_eq!(imported.skipped, 0, "every generated line is JSON");
        events += imported.events;
    }
    assert_eq!(log.health().unwrap().events, events as i64);
    (dir, log)
}

fn search(c: &mut Criterion) {
    let (dir, log) = log();
    // (name, query, events it finds at most 20 of): the counts pin the generated corpus.
    let queries =
        [("rare", "wireguard", 4), ("common", "test", 20), ("two_words", "cookie expiry", 20)];
    let mut group = c.benchmark_group("session_search");
    for (name, query, hits) in queries {
        assert_eq!(log.search(query, None, 20).unwrap().len(), hits, "{query}");
        group.bench_function(name, |b| b.iter(|| log.search(query, None, 20).unwrap()));
    }
    group.finish();
    let path = log.path().to_path_buf();
    drop(log);
    c.bench_function("session_log/open", |b| {
        b.iter(|| SessionLog::open(&path, Duration::from_secs(5)).unwrap());
    });
    drop(dir);
}

criterion_group!(benches, search);
criterion_main!(benches);
