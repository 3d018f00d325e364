//! Writes a deterministic set of generated Claude Code transcripts for the session-log
//! benchmarks (`scripts/bench_sessions.sh`):
//! `cargo run --release --example gen_transcripts -- --n 1000 --seed 42 --out DIR`
//! writes `DIR/projects/<project>/<session id>.jsonl`, laid out as Claude Code lays them out
//! under `~/.claude/projects/`, and `DIR/sessions.tsv`: one line per session with its id, its
//! working directory, its transcript's path and its number of turns.

#[path = "../benches/transcripts.rs"]
mod transcripts;

use std::io::Write;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut n = 1_000usize;
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
    let out = out.ok_or("--out DIR is required")?;
    let out = std::path::absolute(out)?;
    let mut manifest =
        std::io::BufWriter::new(std::fs::File::create(out.join("sessions.tsv")).or_else(|_| {
            std::fs::create_dir_all(&out)?;
            std::fs::File::create(out.join("sessions.tsv"))
        })?);
    let (mut turns, mut bytes) = (0usize, 0usize);
    for i in 0..n {
        let session = transcripts::session(seed, i);
        let folder = out.join("projects").join(session.cwd.replace('/', "-"));
        std::fs::create_dir_all(&folder)?;
        let path = folder.join(format!("{}.jsonl", session.id));
        std::fs::write(&path, &session.text)?;
        writeln!(
            manifest,
            "{}\t{}\t{}\t{}",
            session.id,
            session.cwd,
            path.display(),
            session.turns
        )?;
        turns += session.turns;
        bytes += session.text.len();
    }
    manifest.flush()?;
    println!(
        "{n} sessions, {turns} turns, {} MiB of transcripts in {}",
        bytes >> 20,
        out.display()
    );
    Ok(())
}
