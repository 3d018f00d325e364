//! The `mem` command: parse the arguments, run, map the outcome to an exit status
//! (0 ok, 1 `mem health` found a problem or `mem recall` matched nothing, 2 error; a closed
//! stdout pipe counts as ok).

use std::process::ExitCode;

use clap::Parser;

mod cli;

/// mimalloc: indexing allocates and frees millions of small strings from two threads at once,
/// where it costs about a quarter of glibc's malloc time (docs/benchmarks.md, "Indexing").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) if cli::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mem: error: {}", cli::describe(&e));
            ExitCode::from(2)
        }
    }
}
