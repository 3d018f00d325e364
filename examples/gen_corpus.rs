//! Writes a deterministic corpus of generated memories for benchmarks, and a labelled query
//! file for `mem eval`:
//! `cargo run --release --example gen_corpus -- --n 10000 --seed 42 --out DIR [--queries FILE]`
//! (the queries go to `DIR/queries.jsonl` unless `--queries` says otherwise; 50 of them).

#[path = "../benches/corpus.rs"]
mod corpus;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut n = 10_000usize;
    let mut seed = 42u64;
    let mut out: Option<PathBuf> = None;
    let mut queries: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--n" => n = value()?.parse()?,
            "--seed" => seed = value()?.parse()?,
            "--out" => out = Some(PathBuf::from(value()?)),
            "--queries" => queries = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: --n N --seed S --out DIR [--queries FILE]"
                )
                .into());
            }
        }
    }
    let out = out.ok_or("usage: gen_corpus --n N --seed S --out DIR")?;
    let memories = corpus::generate(n, seed);
    corpus::write(&out, &memories)?;
    let queries_path = queries.unwrap_or_else(|| out.join("queries.jsonl"));
    let mut lines = String::new();
    for q in corpus::queries(&memories, 50, seed) {
        lines.push_str(&serde_json::to_string(&q)?);
        lines.push('\n');
    }
    std::fs::write(&queries_path, lines)?;
    println!(
        "wrote {} memories to {} and 50 labelled queries to {}",
        memories.len(),
        out.display(),
        queries_path.display()
    );
    Ok(())
}
