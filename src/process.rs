//! Running a child process whose stdin is fed while its stdout is read (the git runners of
//! checkpoints and citations).

use std::io::Write as _;
use std::process::{Child, Output};

/// Writes `input` to the stdin of `child` (spawned with a piped stdin) from another thread, and
/// waits for its output: a child may fill its stdout before it has read all of its stdin.
pub fn feed_and_wait(mut child: Child, input: &[u8]) -> std::io::Result<Output> {
    let stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input);
        }
    });
    let out = child.wait_with_output();
    let _ = writer.join();
    out
}
