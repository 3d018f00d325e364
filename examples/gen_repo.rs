//! Writes a deterministic git repository with a history and a project root of memories citing
//! its code, for measuring `mem verify` and the hooks in a repository:
//! `cargo run --release --example gen_repo -- --files 5000 --commits 2000 --memories 10000
//! --seed 42 --out DIR` (DIR must not exist or be empty; `DIR/.memory` is the project root).

#[path = "../benches/repo.rs"]
mod repo;

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut files, mut commits, mut memories, mut seed) =
        (5_000usize, 2_000usize, 10_000usize, 42);
    let mut out: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--files" => files = value()?.parse()?,
            "--commits" => commits = value()?.parse()?,
            "--memories" => memories = value()?.parse()?,
            "--seed" => seed = value()?.parse()?,
            "--out" => out = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown argument {other}; usage: --files N --commits N --memories N --seed S \
                     --out DIR"
                )
                .into());
            }
        }
    }
    let out = out.ok_or("--out DIR is required")?;
    std::fs::create_dir_all(&out)?;
    if std::fs::read_dir(&out)?.next().is_some() {
        return Err(format!("{} is not empty", out.display()).into());
    }
    let generated = repo::write(&out, files, commits, memories, seed);
    println!(
        "{}: {} files, {commits} commits, {} memories in .memory/",
        out.display(),
        generated.first.len(),
        generated.memories
    );
    Ok(())
}
