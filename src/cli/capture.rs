//! `mem capture`: read a hook payload on stdin and capture the session it names (see
//! `docs/capture.md`). Every attempt is logged in `.mem/capture.log`, failures included.

use std::io::{IsTerminal, Read};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use anyhow::{Result, anyhow};
use mem::Engine;
use mem::capture::{self, LogEntry, Written};

use super::Context;

/// How long stdin may stay silent before the payload is given up on. Some hook runners do not
/// close stdin, so reading stops as soon as a whole payload has arrived.
const STDIN_IDLE: Duration = Duration::from_secs(10);

/// Arguments of `mem capture`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print what was captured as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args, ctx: &Context) -> Result<()> {
    let root = ctx.root().map_err(|e| anyhow!("{e:#} (not logged: no memory root)"))?;
    let payload = read_payload();
    let logged_failure = |payload: &[u8], message: String| {
        let entry = LogEntry::failure(payload, &message, ctx.now);
        match capture::append_log(&root, &entry) {
            Ok(()) => anyhow!("{message}"),
            Err(e) => anyhow!("{message} (and could not log it: {e})"),
        }
    };
    let payload = match payload {
        Ok(payload) => payload,
        Err((partial, message)) => return Err(logged_failure(&partial, message)),
    };
    // Capture writes and indexes text; it never needs the embedding model.
    let mut engine = match Engine::open(&root) {
        Ok(engine) => engine,
        Err(e) => {
            let message = format!("cannot open memory root {}: {e}", root.display());
            return Err(logged_failure(&payload, message));
        }
    };
    let captured = engine.capture(&payload, ctx.now)?;
    // The index learns of the session now, not at the next recall (`mem health` compares them).
    let report = engine.refresh(ctx.now, &mem::progress::Silent)?;
    super::print_problems(&report);
    if captured.skipped_lines > 0 {
        eprintln!(
            "mem: notice: skipped {} {} of {} ({} not JSON even after cleaning, {} over {} MiB)",
            captured.skipped_lines,
            if captured.skipped_lines == 1 { "line" } else { "lines" },
            captured.transcript,
            captured.skipped_lines - captured.oversized_lines,
            captured.oversized_lines,
            capture::MAX_LINE_BYTES >> 20
        );
    }
    if args.json {
        return super::print_json(&captured);
    }
    match &captured.path {
        None => {
            eprintln!(
                "mem: nothing to capture yet: {} has no request, message or tool call",
                captured.transcript
            );
            Ok(())
        }
        Some(path) => {
            let verb = match captured.written {
                Written::Created => "created",
                Written::Updated => "updated",
                Written::Unchanged | Written::Nothing => "unchanged",
            };
            let redacted = match captured.redacted {
                0 => String::new(),
                1 => " (1 secret redacted)".to_string(),
                n => format!(" ({n} secrets redacted)"),
            };
            let path = engine.root().join(path);
            super::print_text(&format!("{verb}\t{}\t{}{redacted}\n", captured.id, path.display()))
        }
    }
}

/// The payload on stdin, up to [`capture::MAX_PAYLOAD_BYTES`]; on failure, what was read and
/// why. Reading stops at the end of stdin or as soon as a whole JSON payload has arrived, and
/// fails after [`STDIN_IDLE`] without either.
fn read_payload() -> std::result::Result<Vec<u8>, (Vec<u8>, String)> {
    if std::io::stdin().is_terminal() {
        return Err((
            Vec::new(),
            "mem capture reads a hook payload (JSON) on stdin, and stdin is a terminal".into(),
        ));
    }
    let (tx, rx) = mpsc::channel();
    // The reader thread may stay blocked on a stdin that is never closed; the process does
    // not wait for it.
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let read = match stdin.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) => Err(e),
            };
            let last = !matches!(&read, Ok(chunk) if !chunk.is_empty());
            if tx.send(read).is_err() || last {
                return;
            }
        }
    });
    let mut data = Vec::new();
    loop {
        match rx.recv_timeout(STDIN_IDLE) {
            Ok(Ok(chunk)) if chunk.is_empty() => return Ok(data),
            Ok(Ok(chunk)) => {
                data.extend_from_slice(&chunk);
                if data.len() > capture::MAX_PAYLOAD_BYTES {
                    let message = format!(
                        "the hook payload on stdin is over {} MiB",
                        capture::MAX_PAYLOAD_BYTES >> 20
                    );
                    return Err((data, message));
                }
                if capture::payload_complete(&data) {
                    return Ok(data);
                }
            }
            Ok(Err(e)) => {
                return Err((data, format!("cannot read the hook payload on stdin: {e}")));
            }
            Err(RecvTimeoutError::Timeout) => {
                let message = if data.is_empty() {
                    format!("no hook payload on stdin after {} s", STDIN_IDLE.as_secs())
                } else {
                    format!(
                        "the hook payload on stdin stopped after {} bytes, incomplete, and stdin \
                         stayed open for {} s",
                        data.len(),
                        STDIN_IDLE.as_secs()
                    )
                };
                return Err((data, message));
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(data),
        }
    }
}
