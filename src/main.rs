//! The `mem` command: parse the arguments, run, map the outcome to an exit status
//! (0 ok, 1 `mem health` found a problem or `mem recall` matched nothing, 2 error; a closed
//! stdout pipe counts as ok; with `--hook`, 0 whatever happens, the error on stderr).

use std::process::ExitCode;

use clap::Parser;

mod cli;
mod commands;
mod mcp;
mod served;
mod setup;
mod shared;
mod ui;

/// mimalloc: indexing allocates and frees millions of small strings from two threads at once,
/// where it costs about a quarter of glibc's malloc time (docs/benchmarks.md, "Indexing"). Its
/// `override` feature makes it the `malloc` of ONNX Runtime and SQLite too: the model's start
/// and the process's exit allocate and free thousands of small objects (docs/benchmarks.md,
/// "Issue #43 finished").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // An agent's hook never gets a failure status from mem, whatever fails (arguments this
    // version does not know included): agents read some statuses as "block the prompt".
    let hook =
        std::env::args_os().any(|a| a == "--hook" || a.to_string_lossy().starts_with("--hook="));
    let failed = if hook { ExitCode::SUCCESS } else { ExitCode::from(2) };
    if hook {
        commands::hook_mode();
    }
    let args = match commands::Cli::try_parse() {
        Ok(args) => args,
        Err(e) if hook && e.use_stderr() => {
            let _ = e.print();
            return failed;
        }
        Err(e) => e.exit(),
    };
    match commands::run(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) if shared::output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mem: error: {}", shared::output::describe(&e));
            failed
        }
    }
}
