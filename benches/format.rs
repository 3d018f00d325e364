//! Parsing memory files: a typical generated memory, and every file of memories.example.

mod corpus;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mem::Memory;

fn parse(c: &mut Criterion) {
    let generated = corpus::generate(200, 7);
    let example: Vec<String> =
        walk(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("memories.example"));
    assert!(example.len() >= 40, "memories.example has its memories");
    c.bench_function("parse/generated_200", |b| {
        b.iter(|| {
            for m in &generated {
                black_box(Memory::parse(&m.text).unwrap());
            }
        });
    });
    c.bench_function("parse/example_all", |b| {
        b.iter(|| {
            for text in &example {
                black_box(Memory::parse(text).unwrap());
            }
        });
    });
    c.bench_function("parse_and_title/example_all", |b| {
        b.iter(|| {
            for text in &example {
                black_box(Memory::parse(text).unwrap().title());
            }
        });
    });
}

fn walk(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.file_name().unwrap().to_string_lossy().starts_with('.') {
                out.extend(walk(&path));
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(std::fs::read_to_string(path).unwrap());
        }
    }
    out
}

criterion_group!(benches, parse);
criterion_main!(benches);
