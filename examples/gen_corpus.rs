//! Writes a deterministic corpus of generated memories for benchmarks:
//! `cargo run --release --example gen_corpus -- --n 10000 --seed 42 --out DIR`.

#[path = "../benches/corpus.rs"]
mod corpus;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut n = 10_000usize;
    let mut seed = 42u64;
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--n" => n = value()?.parse()?,
            "--seed" => seed = value()?.parse()?,
            "--out" => out = Some(PathBuf::from(value()?)),
            other => {
                return Err(
                    format!("unknown argument {other}; usage: --n N --seed S --out DIR").into()
                );
            }
        }
    }
    let out = out.ok_or("usage: gen_corpus --n N --seed S --out DIR")?;
    let memories = corpus::generate(n, seed);
    corpus::write(&out, &memories)?;
    println!("wrote {} memories to {}", memories.len(), out.display());
    Ok(())
}
